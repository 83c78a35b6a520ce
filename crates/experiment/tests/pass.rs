//! A pass driven as a library on real servers that kvbench starts: cells
//! built as data, run in order and stored with their cells; a second call
//! finds them finished and runs nothing; `restart` starts a new pass; a
//! stop before the first cell runs none.

use kvbench_engine::Window;
use kvbench_experiment::pass::{self, Options};
use kvbench_experiment::{key, Cell, Experiment};
use kvbench_model::{RunStatus, SystemKind};
use kvbench_run::reuse::Reload;
use kvbench_run::view::Silent;
use kvbench_run::RunSettings;
use kvbench_store::{Labels, RunSelection, Store};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// YCSB C, 200 records and 1,000 reads, on `system`.
fn cell(index: u32, system: SystemKind) -> Cell {
    let settings = RunSettings {
        warmup: Duration::ZERO,
        ..RunSettings::of_preset(
            system,
            "ycsb/c",
            &[("recordcount", "200")],
            Window::Operations(1_000),
        )
        .expect("the preset with a record count")
    };
    Cell {
        index,
        iteration: 1,
        system: system.to_string(),
        deployment: "single".into(),
        workload: "ycsb/c".into(),
        args: Vec::new(),
        key: key(&settings, Reload::OncePerSystem),
        settings,
    }
}

fn experiment() -> Experiment {
    Experiment {
        name: "library pass".into(),
        iterations: 1,
        reload: Reload::OncePerSystem,
        cells: vec![cell(0, SystemKind::Redis), cell(1, SystemKind::Memcached)],
        absent: Vec::new(),
        sequential: None,
    }
}

fn options(labels: &Labels, restart: bool) -> Options<'_> {
    Options {
        restart,
        labels,
        skip_memory_check: false,
        quiet: true,
        checkpoint: &|_| {},
    }
}

fn stored(store: &Store) -> usize {
    store.select_runs(&RunSelection::All).expect("listed").len()
}

#[test]
fn a_pass_runs_its_cells_once_and_resumes_or_restarts_as_asked() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut store = Store::open(&dir.path().join("p.db")).expect("a store");
    let stop = Arc::new(AtomicBool::new(false));
    let labels = Labels::new();
    let exp = experiment();

    let first = pass::run(&exp, &options(&labels, false), &mut store, &Silent, &stop)
        .expect("the pass runs");
    assert_eq!(first.generation, 1);
    assert_eq!(first.worst, RunStatus::Ok);
    let systems: Vec<SystemKind> = first.records.iter().map(|r| r.config.system).collect();
    assert_eq!(systems, [SystemKind::Redis, SystemKind::Memcached]);
    assert!(first
        .records
        .iter()
        .all(|r| r.run.as_ref().map(|p| p.completed) == Some(1_000)));
    assert_eq!(stored(&store), 2);

    // Its runs are the pass's sources, numbered in plan order.
    let sources = pass::sources(&store, &exp.name, 1).expect("read back");
    let cells: Vec<Option<u32>> = sources.iter().map(|s| s.cell_index).collect();
    assert_eq!(cells, [Some(0), Some(1)]);

    // Run again: both cells are found finished, nothing new is stored.
    let again = pass::run(&exp, &options(&labels, false), &mut store, &Silent, &stop)
        .expect("the pass resumes");
    assert_eq!(again.generation, 1);
    let ids = |p: &pass::Pass| p.records.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(&again), ids(&first));
    assert_eq!(stored(&store), 2);

    // Restart: a second pass with runs of its own.
    let second = pass::run(&exp, &options(&labels, true), &mut store, &Silent, &stop)
        .expect("a new pass runs");
    assert_eq!(second.generation, 2);
    assert_eq!(stored(&store), 4);
    assert!(ids(&second).iter().all(|id| !ids(&first).contains(id)));
}

#[test]
fn a_stop_before_the_first_cell_runs_none() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut store = Store::open(&dir.path().join("p.db")).expect("a store");
    let stop = Arc::new(AtomicBool::new(true));
    let labels = Labels::new();
    let pass = pass::run(
        &experiment(),
        &options(&labels, false),
        &mut store,
        &Silent,
        &stop,
    )
    .expect("returns");
    assert!(pass.records.is_empty());
    assert_eq!(stored(&store), 0);
}
