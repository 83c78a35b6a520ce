//! A pass over an experiment's cells: the cells of the current pass that
//! are not stored yet run in plan order, each saved with its cell in one
//! transaction by `run_cell`, so a stop at any point keeps every finished
//! cell and the next start runs only the rest. Loaded deployments are kept
//! between cells that can share them (`kvbench_run::reuse`).

use crate::plan::{self, Planned};
use crate::Experiment;
use anyhow::Result;
use kvbench_model::{RunRecord, RunStatus};
use kvbench_report::takeaways::{self, Rule};
use kvbench_run::orchestrate::run_cell;
use kvbench_run::reuse::{self, Sharing};
use kvbench_run::settings::RunSettings;
use kvbench_run::view::View;
use kvbench_run::UsageError;
use kvbench_store::{CellTag, Labels, Store};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How to run a pass, whichever command declared it.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// Start a new pass instead of resuming the newest.
    pub restart: bool,
    /// Stored with every run, never part of a cell.
    pub labels: &'a Labels,
    /// `--skip-memory-check`.
    pub skip_memory_check: bool,
    /// No progress lines beside the view's own (`--quiet`, `--json`).
    pub quiet: bool,
    /// Called where nothing runs yet (planning), so a stop can leave there.
    pub checkpoint: &'a dyn Fn(&str),
}

/// A pass that ran: its runs, in plan order, and which pass it was.
pub struct Pass {
    /// Every run of the cells this call ran or found finished.
    pub records: Vec<RunRecord>,
    /// The pass (the store's experiment generation).
    pub generation: i64,
    /// The worst status among the runs of this call and of any round before
    /// it (a failure outranks an invalid run, which outranks an ok one).
    pub worst: RunStatus,
}

/// The worse of two statuses.
pub fn worse(a: RunStatus, b: RunStatus) -> RunStatus {
    let rank = |s: RunStatus| match s {
        RunStatus::Ok => 0,
        RunStatus::Invalid => 1,
        RunStatus::Failed => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// Runs the pass: all of it, or, for a sequential experiment, its first
/// blocks and then blocks where a verdict is still open
/// ([`crate::sequential`]).
///
/// # Errors
/// A cell that will not fit or whose target is not ready (a
/// [`UsageError`], before any cell runs), or a store that fails.
pub fn run(
    exp: &Experiment,
    o: &Options<'_>,
    store: &mut Store,
    view: &dyn View,
    stop: &Arc<AtomicBool>,
) -> Result<Pass> {
    match &exp.sequential {
        Some(limits) => crate::sequential::run(exp, o, store, view, stop, limits),
        None => pooled(
            exp,
            o,
            store,
            view,
            stop,
            &mut reuse::Pool::default(),
            false,
        ),
    }
}

/// [`run`] with deployments kept in `pool`, which outlives the call;
/// `keep_for_later` keeps every reusable deployment in it (for cells a
/// caller will run next), not only those a later cell here needs.
///
/// # Errors
/// As [`run`].
pub fn pooled(
    exp: &Experiment,
    o: &Options<'_>,
    store: &mut Store,
    view: &dyn View,
    stop: &Arc<AtomicBool>,
    pool: &mut reuse::Pool,
    keep_for_later: bool,
) -> Result<Pass> {
    let generation = plan::generation(Some(store), &exp.name, o.restart)?;
    let rows = plan::plan(exp, Some(store), generation, o.checkpoint)?;
    let todo: Vec<&Planned<'_>> = rows.iter().filter(|p| p.finished.is_none()).collect();
    preflight(&todo, o.skip_memory_check)?;
    if !o.quiet {
        for why in &exp.absent {
            view.println(&format!("experiment {}: {why}", exp.name));
        }
    }
    let done = rows.len() - todo.len();
    if done > 0 {
        view.println(&format!(
            "experiment {}: {done} of {} cells already finished in {} (skipped; --restart redoes them); {} to run",
            exp.name,
            rows.len(),
            store.location(),
            todo.len()
        ));
    }
    let estimates: Vec<f64> = todo.iter().map(|p| p.estimate_s).collect();
    view.plan(&estimates, done, rows.len());
    let mut records = Vec::with_capacity(rows.len());
    let mut worst = RunStatus::Ok;
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
            worst = worse(worst, rec.status);
            records.push(rec);
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        ran += 1;
        view.begin_cell(
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
            labels: o.labels.clone(),
            ..p.cell.settings.clone()
        };
        let key = keys[ran - 1].clone();
        let mut slot = pool.take(key.as_ref());
        if slot.is_none() && settings.target.is_none() && !pool.is_empty() {
            let need = kvbench_run::memory::estimate(&settings).total();
            let stopped = pool.make_room(need, kvbench_run::memory::available);
            if stopped > 0 {
                view.println(&format!(
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
        let rec = run_cell(&settings, store, view, stop, Some(&tag), Some(sharing));
        pool.put(slot);
        let rec = rec?;
        view.end_cell();
        worst = worse(worst, rec.status);
        // Even when quiet: a failed or invalid run's exit code needs its
        // reason on one line.
        if rec.status != RunStatus::Ok {
            view.println(&format!("warning: {}", kvbench_report::text::problem(&rec)));
        }
        records.push(rec);
    }
    view.finish();
    Ok(Pass {
        records,
        generation,
        worst,
    })
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

/// The newest pass of experiment `name`; a usage error naming the
/// experiment and database when none is stored.
///
/// # Errors
/// No pass of `name` in `db`; a store that fails.
pub fn newest(store: &Store, name: &str, db: &kvbench_store::Location) -> Result<i64> {
    store.experiment_generation(name)?.ok_or_else(|| {
        UsageError(format!(
            "--experiment '{name}': no run of such an experiment in {db}"
        ))
        .into()
    })
}

/// The runs of pass `generation` of experiment `name` that did not fail,
/// with their cells (numbered in plan order), one per cell and iteration:
/// what the report and the verdicts read.
///
/// # Errors
/// A store that fails.
pub fn sources(
    store: &Store,
    name: &str,
    generation: i64,
) -> Result<Vec<kvbench_report::cells::Source>> {
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut out = Vec::new();
    for c in store.finished_cells(name, generation)? {
        let next = index.len() as u32;
        let i = *index.entry(c.cell_key.clone()).or_insert(next);
        out.push(kvbench_report::cells::Source {
            record: store.get_run(c.run_id)?,
            cell_key: Some(c.cell_key),
            cell_index: Some(i),
            block: Some(c.iteration),
        });
    }
    Ok(out)
}

/// The takeaways' verdicts over pass `generation` of experiment `name`,
/// with the rule its runs recorded.
///
/// # Errors
/// A store that fails, or runs the report cannot group.
pub fn verdicts(
    store: &Store,
    name: &str,
    generation: i64,
) -> Result<(Vec<takeaways::Verdict>, Rule)> {
    let sources = sources(store, name, generation)?;
    let rule = Rule::recorded(sources.iter().find_map(|s| s.record.config.verdict));
    let cells = kvbench_report::cells::group(&sources).map_err(anyhow::Error::msg)?;
    Ok((takeaways::matrix(&cells, &rule), rule))
}
