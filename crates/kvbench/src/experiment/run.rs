//! `kvbench experiment run` (and the pass `compare` and `reproduce` run):
//! flags into a pass of `kvbench_experiment::pass`, shown on the live view,
//! then its tables and report. The pass runs the cells not stored yet, so a
//! stop at any point keeps every finished cell and the next start runs only
//! the rest.

use crate::args::ExperimentRunArgs;
use crate::config::RunFlags;
use crate::db::open_store;
use crate::exit::{status_verdict, Verdict};
use crate::live::Live;
use crate::output::{print, print_comparison};
use anyhow::Result;
use kvbench_experiment::{pass, plan, Experiment};
use kvbench_model::{RunRecord, RunStatus};
use kvbench_store::Location;
use kvbench_store::Store;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How to run an experiment, whichever command declared it.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    pub db: &'a Location,
    pub restart: bool,
    pub quiet: bool,
    pub json: bool,
    pub labels: &'a [String],
    pub metrics_listen: Option<&'a str>,
    /// `--skip-memory-check`.
    pub skip_memory_check: bool,
}

pub fn run(a: ExperimentRunArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    let exp = kvbench_experiment::expand(&a.file, &RunFlags)?;
    let opts = Options {
        db: &a.db,
        restart: a.restart,
        quiet: a.quiet,
        json: a.json,
        labels: &a.labels,
        metrics_listen: a.metrics_listen.as_deref(),
        skip_memory_check: a.skip_memory_check,
    };
    // The report's place is checked before any cell runs.
    let report_dir = match (a.no_report, &a.report_dir) {
        (true, _) => None,
        (false, Some(d)) => Some(d.clone()),
        (false, None) => Some(Path::new("reports").join(&exp.name)),
    };
    if let Some(d) = &report_dir {
        kvbench_pages::prepare(d)?;
    }
    let (verdict, records) = execute(&exp, &opts, stop)?;
    // The report shows finished runs: with none, there is nothing to draw,
    // and the cells' own lines have said why (exit 1, not a usage error).
    let finished = records.iter().any(|r| r.status != RunStatus::Failed);
    if let (Some(_), false, false) = (&report_dir, finished, records.is_empty()) {
        eprintln!(
            "no report: no run of this pass finished (kvbench runs --status failed lists them)"
        );
    }
    if let (Some(dir), true) = (report_dir, finished) {
        let store = open_store(&a.db)?;
        // Read again for the report (standard input is not there twice).
        let file = (a.file.as_os_str() != kvbench_workload::input::STDIN)
            .then(|| {
                kvbench_workload::input::read_utf8(
                    &a.file,
                    kvbench_workload::input::EXPERIMENT_FILE_LIMIT,
                )
                .ok()
            })
            .flatten();
        let selection = kvbench_pages::Selection::Experiment(exp.name.clone());
        let framing = kvbench_pages::Framing {
            experiment_file: file,
            ..Default::default()
        };
        let w = kvbench_pages::write(&store, &a.db, &selection, &dir, framing)?;
        crate::output::warn_if_no_font(w.no_font);
        if !a.json {
            eprintln!(
                "report ({} figures): {}",
                w.summary.figures.len(),
                dir.join("index.html").display()
            );
        }
    }
    Ok(verdict)
}

/// Runs the cells of the current pass not stored yet, prints the
/// comparison of the whole pass (and the iterations' statistics when there
/// are several), and returns the worst verdict with every run of the pass.
pub fn execute(
    exp: &Experiment,
    a: &Options<'_>,
    stop: &Arc<AtomicBool>,
) -> Result<(Verdict, Vec<RunRecord>)> {
    let (verdict, records, generation) = execute_quietly(exp, a, stop)?;
    print_pass(exp, a, generation, &records)?;
    Ok((verdict, records))
}

/// The tables at the end of a pass: every run, the iterations' statistics
/// when there are several, and the verdicts between systems.
pub fn print_pass(
    exp: &Experiment,
    a: &Options<'_>,
    generation: i64,
    records: &[RunRecord],
) -> Result<()> {
    print_comparison(records, a.json)?;
    if a.json {
        return Ok(());
    }
    let store = open_store(a.db)?;
    // A sequential pass may hold more blocks than it started with.
    let blocks = store
        .finished_cells(&exp.name, generation)?
        .iter()
        .map(|c| c.iteration)
        .max()
        .unwrap_or(0);
    let whole;
    let exp = if exp.sequential.is_some() && blocks > exp.iterations {
        whole = kvbench_experiment::sequential::whole(exp, blocks);
        &whole
    } else {
        exp
    };
    if exp.iterations > 1 {
        let rows = plan::plan(
            exp,
            Some(&store),
            generation,
            &crate::signals::leave_if_stopped,
        )?;
        let cells = kvbench_experiment::iterations::summarise(&rows, |id| Ok(store.get_run(id)?))?;
        print(&format!("\n{}", super::iterations::text(&cells)))?;
    }
    let (verdicts, rule) = pass::verdicts(&store, &exp.name, generation)?;
    if !verdicts.is_empty() {
        print(&format!(
            "\n{}",
            kvbench_report::text::verdicts(&verdicts, &rule)
        ))?;
    }
    Ok(())
}

/// [`execute`] without printing the tables at the end; also returns the
/// pass (generation) it ran.
pub fn execute_quietly(
    exp: &Experiment,
    a: &Options<'_>,
    stop: &Arc<AtomicBool>,
) -> Result<(Verdict, Vec<RunRecord>, i64)> {
    let labels = crate::labels::parse_all("--label", a.labels)?;
    let mut store = open_store(a.db)?;
    let metrics = Live::listen(a.metrics_listen)?;
    let live = Live::new(a.quiet, metrics);
    let o = pass::Options {
        restart: a.restart,
        labels: &labels,
        skip_memory_check: a.skip_memory_check,
        quiet: a.quiet || a.json,
        checkpoint: &crate::signals::leave_if_stopped,
    };
    let pass = pass::run(exp, &o, &mut store, &live, stop)?;
    Ok((
        status_verdict(pass.worst, stop),
        pass.records,
        pass.generation,
    ))
}

/// Opens the store for `plan` only if it exists: a plan never creates one.
pub fn existing_store(db: &Location) -> Result<Option<Store>> {
    if db.sqlite_path().is_none_or(std::path::Path::exists) {
        Ok(Some(open_store(db)?))
    } else {
        Ok(None)
    }
}
