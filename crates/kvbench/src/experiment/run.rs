//! `kvbench experiment run`: runs the cells of the current pass that are not
//! stored yet, each saved with its cell in one transaction by
//! `orchestrate::run_cell`, so a stop at any point keeps every finished cell
//! and the next start runs only the rest.

use super::plan::{self, Planned};
use crate::args::ExperimentRunArgs;
use crate::config::RunFlags;
use crate::db::open_store;
use crate::exit::{verdict_of, UsageError, Verdict};
use crate::live::Live;
use crate::output::{print, print_comparison, warn_unless_ok};
use anyhow::Result;
use kvbench_experiment::Experiment;
use kvbench_model::{RunRecord, RunStatus};
use kvbench_report::takeaways::Rule;
use kvbench_run::orchestrate::run_cell;
use kvbench_run::reuse::{self, Sharing};
use kvbench_run::settings::RunSettings;
use kvbench_store::Location;
use kvbench_store::{CellTag, Store};
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
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
        crate::pages::prepare(d)?;
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
        let selection = crate::pages::Selection::Experiment(exp.name.clone());
        let framing = crate::pages::Framing {
            experiment_file: file,
            ..Default::default()
        };
        let w = crate::pages::write(&store, &a.db, &selection, &dir, framing)?;
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
        whole = super::sequential::whole(exp, blocks);
        &whole
    } else {
        exp
    };
    if exp.iterations > 1 {
        let rows = plan::plan(exp, Some(&store), generation)?;
        let cells = super::iterations::summarise(&rows, |id| Ok(store.get_run(id)?))?;
        print(&format!("\n{}", super::iterations::text(&cells)))?;
    }
    let (verdicts, rule) = verdicts(&store, a.db, &exp.name)?;
    if !verdicts.is_empty() {
        print(&format!(
            "\n{}",
            kvbench_report::text::verdicts(&verdicts, &rule)
        ))?;
    }
    Ok(())
}

/// The takeaways' verdicts over the newest pass of experiment `name`, with
/// the rule its runs recorded.
pub fn verdicts(
    store: &Store,
    db: &Location,
    name: &str,
) -> Result<(Vec<kvbench_report::takeaways::Verdict>, Rule)> {
    let sources = crate::pages::experiment_sources(store, db, name)?;
    let rule = Rule::recorded(sources.iter().find_map(|s| s.record.config.verdict));
    let cells = kvbench_report::cells::group(&sources).map_err(anyhow::Error::msg)?;
    Ok((kvbench_report::takeaways::matrix(&cells, &rule), rule))
}

/// [`execute`] without printing the tables at the end; also returns the
/// pass (generation) it ran.
pub fn execute_quietly(
    exp: &Experiment,
    a: &Options<'_>,
    stop: &Arc<AtomicBool>,
) -> Result<(Verdict, Vec<RunRecord>, i64)> {
    match &exp.sequential {
        Some(limits) => super::sequential::run_quietly(exp, a, stop, limits),
        None => execute_pooled(exp, a, stop, &mut reuse::Pool::default(), false),
    }
}

/// [`execute_quietly`] with deployments kept in `pool`, which outlives
/// the call; `keep_for_later` keeps every reusable deployment in it (for
/// cells a caller will run next), not only those a later cell here needs.
pub fn execute_pooled(
    exp: &Experiment,
    a: &Options<'_>,
    stop: &Arc<AtomicBool>,
    pool: &mut reuse::Pool,
    keep_for_later: bool,
) -> Result<(Verdict, Vec<RunRecord>, i64)> {
    let labels = crate::labels::parse_all("--label", a.labels)?;
    let mut store = open_store(a.db)?;
    let generation = plan::generation(Some(&store), &exp.name, a.restart)?;
    let rows = plan::plan(exp, Some(&store), generation)?;
    let todo: Vec<&Planned<'_>> = rows.iter().filter(|p| p.finished.is_none()).collect();
    let metrics = Live::listen(a.metrics_listen)?;
    preflight(&todo, a.skip_memory_check)?;
    if !a.quiet {
        for why in &exp.absent {
            eprintln!("experiment {}: {why}", exp.name);
        }
    }
    let done = rows.len() - todo.len();
    if done > 0 {
        eprintln!(
            "experiment {}: {done} of {} cells already finished in {} (skipped; --restart redoes them); {} to run",
            exp.name,
            rows.len(),
            a.db,
            todo.len()
        );
    }
    let live = Live::new(a.quiet, metrics);
    let estimates: Vec<f64> = todo.iter().map(|p| p.estimate_s).collect();
    live.plan(&estimates, done, rows.len());
    let mut records = Vec::with_capacity(rows.len());
    let mut verdict = Verdict::Ok;
    let mut ran = 0;
    // Each cell to run with its sharing key; a cell keeps its deployment
    // when a later cell to run can use it. Blocks interleave systems, so
    // several deployments are kept at once, one per key, each stopped once
    // no later cell needs it.
    let keys: Vec<Option<String>> = todo
        .iter()
        .map(|p| reuse::key(&p.cell.settings, exp.reload))
        .collect();
    for p in &rows {
        if let Some(id) = p.finished {
            let rec = store.get_run(id)?;
            verdict = verdict.max(verdict_of(&rec, stop));
            records.push(rec);
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        ran += 1;
        live.begin_cell(
            ran - 1,
            &format!(
                "#{} {} {} {} x{}{}",
                p.cell.index,
                p.cell.system,
                p.cell.deployment,
                p.cell.workload,
                p.cell.settings.clients,
                if exp.iterations > 1 {
                    format!(" iteration {}", p.cell.iteration)
                } else {
                    String::new()
                }
            ),
        );
        let tag = tag(exp, p, generation);
        // Labels are not part of the cell: its key and settings stay as planned.
        let settings = RunSettings {
            labels: labels.clone(),
            ..p.cell.settings.clone()
        };
        let key = keys[ran - 1].clone();
        let mut slot = pool.take(key.as_ref());
        if slot.is_none() && settings.target.is_none() && !pool.is_empty() {
            let need = kvbench_run::memory::estimate(&settings).total();
            let stopped = pool.make_room(need, kvbench_run::memory::available);
            if stopped > 0 {
                live.println(&format!(
                    "note: stopped {stopped} kept deployment(s) so that cell #{}'s servers (about {} MiB) fit in memory; a later cell that needs one loads it again",
                    p.cell.index,
                    need >> 20
                ));
            }
        }
        let sharing = Sharing {
            slot: &mut slot,
            key: key.clone(),
            policy: exp.reload,
            keep_after: key.is_some() && (keep_for_later || keys[ran..].contains(&key)),
        };
        let rec = run_cell(
            &settings,
            &mut store,
            &live,
            stop,
            Some(&tag),
            Some(sharing),
        );
        pool.put(slot);
        let rec = rec?;
        live.end_cell();
        verdict = verdict.max(verdict_of(&rec, stop));
        // On stderr even with --json or --quiet: exit codes 1 and 3 need
        // their reason on one line.
        warn_unless_ok(&live, &rec);
        records.push(rec);
    }
    live.finish();
    Ok((verdict, records, generation))
}

fn tag(exp: &Experiment, p: &Planned<'_>, generation: i64) -> CellTag {
    CellTag {
        experiment: exp.name.clone(),
        generation,
        cell_key: p.cell.key.clone(),
        cell_index: p.cell.index,
        iteration: p.cell.iteration,
    }
}

/// Before any cell starts: every server binary exists, every cell fits in
/// memory, and every target answers and may be written (once per target:
/// later cells find the keys earlier ones wrote, which are kvbench's own).
fn preflight(todo: &[&Planned<'_>], skip_memory_check: bool) -> Result<(), UsageError> {
    let mut seen = HashSet::new();
    for p in todo {
        let s = &p.cell.settings;
        kvbench_run::memory::check(s, skip_memory_check).map_err(|e| {
            let c = p.cell;
            UsageError(format!(
                "cell #{} ({} {} {} x{}): {}",
                c.index, c.system, c.deployment, c.workload, s.clients, e.0
            ))
        })?;
        let new_target = match &s.target {
            Some(t) => seen.insert(t.redacted()),
            None => true,
        };
        if new_target {
            kvbench_run::deploy::ready(s)?;
        }
    }
    Ok(())
}

/// Opens the store for `plan` only if it exists: a plan never creates one.
pub fn existing_store(db: &Location) -> Result<Option<Store>> {
    if db.sqlite_path().is_none_or(std::path::Path::exists) {
        Ok(Some(open_store(db)?))
    } else {
        Ok(None)
    }
}
