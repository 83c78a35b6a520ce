//! The per-cell sequence driven as a library, without the command line:
//! settings built as data, a real server started and stopped by the
//! sequence, the run saved in a store, nothing shown ([`Silent`]).

use kvbench_engine::Window;
use kvbench_model::{RunStatus, SystemKind};
use kvbench_run::view::Silent;
use kvbench_run::{run_cell, RunSettings};
use kvbench_store::Store;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

const RECORDS: u64 = 1_000;
const OPERATIONS: u64 = 3_000;

/// YCSB's workload A on a small data set, against `system` started by
/// kvbench on a free loopback port: what `kvbench run --system NAME
/// --workload ycsb/a --records 1000 --operations 3000` resolves to, minus
/// the machine-dependent defaults.
fn settings(system: &str) -> RunSettings {
    let system: SystemKind = system.parse().expect("a system name");
    let (records, operations) = (RECORDS.to_string(), OPERATIONS.to_string());
    let base = RunSettings::of_preset(
        system,
        "ycsb/a",
        &[("recordcount", &records), ("operationcount", &operations)],
        Window::Operations(OPERATIONS),
    )
    .expect("the preset with these properties");
    RunSettings {
        clients: 2,
        warmup: Duration::ZERO,
        seed: 7,
        load_clients: 2,
        load_pipeline: 16,
        timeout: Duration::from_secs(5),
        stall: Duration::ZERO,
        reconnect: None,
        ..base
    }
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Store::open(&dir.path().join("runs.db")).expect("a new store");
    (dir, store)
}

/// Live (not zombie) children of this process running `name`.
fn children_named(name: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // pid (comm) state ppid ...
            let Some((comm, rest)) = stat.split_once(") ") else {
                return false;
            };
            let mut fields = rest.split(' ');
            let state = fields.next();
            let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
            comm.ends_with(&format!("({name}")) && state != Some("Z") && ppid == Some(me)
        })
        .collect()
}

#[test]
fn a_cell_runs_and_is_stored_without_the_command_line() {
    let (_dir, mut store) = store();
    let stop = Arc::new(AtomicBool::new(false));
    let s = settings("redis");
    let rec = run_cell(&s, &mut store, &Silent, &stop, None, None).expect("the run is saved");
    assert_eq!(
        rec.status,
        RunStatus::Ok,
        "{:?} {:?}",
        rec.failure,
        rec.marks
    );
    let load = rec.load.as_ref().expect("a load phase");
    assert_eq!(load.completed, RECORDS);
    let run = rec.run.as_ref().expect("a run phase");
    assert_eq!(run.completed, OPERATIONS);
    assert_eq!(run.errors, 0);
    // Workload A: reads and updates, each counted apart and adding up.
    let by_kind: u64 = run.ops.iter().map(|o| o.completed).sum();
    assert_eq!(by_kind, OPERATIONS);
    assert_eq!(rec.config.system, s.system);
    // What was saved is what was returned.
    let id = rec.id.expect("an id from the store");
    let stored = store.get_run(id).expect("the stored run");
    assert_eq!(stored.run.map(|r| r.completed), Some(OPERATIONS));
    // The server the sequence started (a child of this process: the other
    // test starts none) is stopped. The search finds a child that runs:
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("sleep starts");
    assert_eq!(children_named("sleep"), vec![sleeper.id()]);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let left = children_named("redis-server");
    assert!(left.is_empty(), "redis-server {left:?} still running");
}

#[test]
fn a_server_that_cannot_start_is_saved_as_a_failed_run_with_its_reason() {
    let (_dir, mut store) = store();
    let stop = Arc::new(AtomicBool::new(false));
    let mut s = settings("redis");
    s.server_binary = Some(PathBuf::from("/nonexistent/redis-server"));
    let rec = run_cell(&s, &mut store, &Silent, &stop, None, None)
        .expect("only the store's failures are errors");
    assert_eq!(rec.status, RunStatus::Failed);
    let reason = rec.failure.as_deref().expect("a reason");
    assert!(reason.contains("/nonexistent/redis-server"), "{reason}");
    assert!(rec.run.is_none());
    let stored = store
        .get_run(rec.id.expect("an id"))
        .expect("the stored run");
    assert_eq!(stored.status, RunStatus::Failed);
}
