//! The cells of a pass in order, what each will cost and which are already
//! stored: what `kvbench experiment plan` lists, what a pass runs (the
//! rest) and what its progress estimates from. It reads the store but never
//! writes it, and never starts a server.

use crate::{Cell, Experiment};
use kvbench_engine::Window;
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
/// `checkpoint` is called once per cell with what is being done, so a
/// caller can leave a long plan at a stop.
pub fn plan<'a>(
    exp: &'a Experiment,
    store: Option<&Store>,
    generation: i64,
    checkpoint: &dyn Fn(&str),
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
            checkpoint("planning the experiment");
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
