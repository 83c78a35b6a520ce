//! `kvbench experiment plan`: the cells in order, what each will cost and
//! which are already stored. It reads the store but never writes it, and
//! never starts a server.

use kvbench_engine::Window;
use kvbench_experiment::{Cell, Experiment};
use kvbench_run::settings::RunSettings;
use kvbench_store::Store;
use std::collections::HashMap;

/// Guesses for a cell never run before with this configuration. They are
/// rough on purpose (a loopback server on a small machine) and marked as
/// guesses wherever they are shown; a cell's first run replaces them.
const GUESS_START_STOP_S: f64 = 1.0;
/// Between two cells on a kept server (bench/cells measures about 0.1 s).
const GUESS_BETWEEN_S: f64 = 0.2;
const GUESS_LOAD_RECORDS_PER_S: f64 = 50_000.0;
const GUESS_CLOSED_LOOP_OPS_PER_S: f64 = 20_000.0;

/// Where a cell's estimate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The mean of stored runs with the same cell key.
    Stored,
    /// The guesses above.
    Guess,
}

/// A cell with what the store knows about it.
pub struct Planned<'a> {
    pub cell: &'a Cell,
    pub estimate_s: f64,
    pub source: Source,
    /// The stored run that finished this cell in the current pass.
    pub finished: Option<i64>,
}

/// The current pass over the experiment: the newest stored one, or a new
/// one with `restart` (1 when nothing is stored).
pub fn generation(store: Option<&Store>, name: &str, restart: bool) -> anyhow::Result<i64> {
    let newest = match store {
        Some(s) => s.experiment_generation(name)?,
        None => None,
    };
    Ok(match (newest, restart) {
        (None, _) => 1,
        (Some(g), false) => g,
        (Some(g), true) => g + 1,
    })
}

/// Each cell with its estimate and, in pass `generation`, its finished run.
pub fn plan<'a>(
    exp: &'a Experiment,
    store: Option<&Store>,
    generation: i64,
) -> anyhow::Result<Vec<Planned<'a>>> {
    let mut finished: HashMap<(String, u32), i64> = HashMap::new();
    let mut seconds: HashMap<&str, Option<f64>> = HashMap::new();
    if let Some(store) = store {
        for f in store.finished_cells(&exp.name, generation)? {
            finished.insert((f.cell_key, f.iteration), f.run_id);
        }
        for c in &exp.cells {
            if !seconds.contains_key(c.key.as_str()) {
                seconds.insert(&c.key, store.cell_seconds(&c.key)?);
            }
        }
    }
    // Whether each cell finds the previous cell's server kept for it (a
    // guess then leaves out the start and the load).
    let share: Vec<Option<String>> = exp
        .cells
        .iter()
        .map(|c| kvbench_run::reuse::key(&c.settings, exp.reload))
        .collect();
    Ok(exp
        .cells
        .iter()
        .enumerate()
        .map(|(i, cell)| {
            crate::signals::leave_if_stopped("planning the experiment");
            // An earlier cell left a server for this one (blocks
            // interleave systems, so not only the previous cell).
            let kept = share[i].is_some()
                && (0..i)
                    .rev()
                    .find(|&j| share[j] == share[i])
                    .is_some_and(|j| {
                        kvbench_run::reuse::leaves_dataset_intact(&exp.cells[j].settings)
                    });
            let (estimate_s, source) = match seconds.get(cell.key.as_str()).copied().flatten() {
                Some(s) => (s, Source::Stored),
                None => (guess_seconds(&cell.settings, kept), Source::Guess),
            };
            Planned {
                cell,
                estimate_s,
                source,
                finished: finished.get(&(cell.key.clone(), cell.iteration)).copied(),
            }
        })
        .collect())
}

/// Start and stop, load, warm-up and the window, at the guessed speeds;
/// on a kept server (`kept`) only what passes between cells, the warm-up
/// and the window.
pub fn guess_seconds(s: &RunSettings, kept: bool) -> f64 {
    let load = if s.no_load || kept {
        0.0
    } else {
        s.spec.record_count as f64 / GUESS_LOAD_RECORDS_PER_S
    };
    let window = match s.window {
        Window::Duration(d) => d.as_secs_f64(),
        Window::Operations(n) => {
            let speed = s.rate.map_or(GUESS_CLOSED_LOOP_OPS_PER_S, |r| r.ops_per_s);
            n as f64 / speed
        }
    };
    let start = if kept {
        GUESS_BETWEEN_S
    } else {
        GUESS_START_STOP_S
    };
    start + load + s.warmup.as_secs_f64() + window
}

/// The plan as a table and a closing line of totals.
pub fn text(exp: &Experiment, rows: &[Planned<'_>]) -> String {
    // An eviction study's cells differ by limit and policy: a column then.
    let limited = rows.iter().any(|p| p.cell.settings.max_memory.is_some());
    let mut columns = vec![
        ">#",
        ">iter",
        "system",
        "deployment",
        "workload",
        ">clients",
        ">pipeline",
        ">field bytes",
        ">rate",
        ">threads",
    ];
    if limited {
        columns.push("memory limit");
    }
    columns.extend([">estimate", "state"]);
    let mut t = kvbench_report::table::Table::new(&columns);
    for p in rows {
        let s = &p.cell.settings;
        let guess = if p.source == Source::Guess { "~" } else { "" };
        let mut row = vec![
            p.cell.index.to_string(),
            p.cell.iteration.to_string(),
            p.cell.system.clone(),
            p.cell.deployment.clone(),
            p.cell.workload.clone(),
            s.clients.to_string(),
            s.pipeline.to_string(),
            s.spec.field_length.to_string(),
            s.rate.map_or("-".into(), |r| r.ops_per_s.to_string()),
            s.threads.to_string(),
        ];
        if limited {
            row.push(match (s.max_memory, kvbench_run::max_memory::eviction(s)) {
                (Some(m), Some(e)) => format!("{m} {e}"),
                _ => "-".into(),
            });
        }
        row.extend([
            format!("{guess}{}", crate::live::duration_text(p.estimate_s)),
            match p.finished {
                Some(id) => format!("done (run {id})"),
                None => "to run".into(),
            },
        ]);
        t.row(row);
    }
    let total: f64 = rows.iter().map(|p| p.estimate_s).sum();
    let left: Vec<&Planned<'_>> = rows.iter().filter(|p| p.finished.is_none()).collect();
    let remaining: f64 = left.iter().map(|p| p.estimate_s).sum();
    format!(
        "experiment {}: {} cells ({} iteration{}), {} finished\n{}estimated {} to run the {} left ({} for all); ~ marks a guess, the others are means of stored runs of the same configuration",
        exp.name,
        rows.len(),
        exp.iterations,
        if exp.iterations == 1 { "" } else { "s" },
        rows.len() - left.len(),
        t.to_text(),
        crate::live::duration_text(remaining),
        left.len(),
        crate::live::duration_text(total),
    ) + &exp
        .absent
        .iter()
        .map(|why| format!("\n{why}"))
        .collect::<String>()
}

/// The plan as JSON: each cell with its key, estimate and the `kvbench run`
/// flags it stands for.
pub fn json(exp: &Experiment, rows: &[Planned<'_>]) -> serde_json::Value {
    let cells: Vec<serde_json::Value> = rows
        .iter()
        .map(|p| {
            let s = &p.cell.settings;
            serde_json::json!({
                "index": p.cell.index,
                "iteration": p.cell.iteration,
                "system": p.cell.system,
                "deployment": p.cell.deployment,
                "workload": p.cell.workload,
                "clients": s.clients,
                "pipeline": s.pipeline,
                "max_memory": s.max_memory.map(|m| m.to_string()),
                "eviction": kvbench_run::max_memory::eviction(s).map(|e| e.to_string()),
                "field_length": s.spec.field_length,
                "rate": s.rate.map(|r| r.ops_per_s),
                "threads": s.threads,
                "key": p.cell.key,
                "estimate_s": p.estimate_s,
                "estimate_from": match p.source { Source::Stored => "stored", Source::Guess => "guess" },
                "finished_run": p.finished,
                "run_args": p.cell.args,
            })
        })
        .collect();
    serde_json::json!({
        "experiment": exp.name,
        "iterations": exp.iterations,
        "estimate_s": rows.iter().map(|p| p.estimate_s).sum::<f64>(),
        "cells": cells,
        "absent": exp.absent,
    })
}
