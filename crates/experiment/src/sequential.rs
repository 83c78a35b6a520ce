//! `compare --until-decided`: blocks are added only where a verdict is
//! still open. After the first blocks (at least three), each look reads the
//! takeaways' verdicts over everything stored in the pass, and the next
//! round runs the blocks up to the next look (kvbench_stats::paired::
//! look_points: 3, 5, 8, 10 for at most 10) for every place still
//! undecided, until every place is decided, `--max-blocks` is reached, or
//! no further block fits in `--budget` (then a round runs the blocks that
//! fit and the last look is made there).
//!
//! Looking repeatedly and stopping when sure would call differences that
//! are not there more often than 5%; the runs record the looks the sequence
//! may take (`config.verdict.looks`), and every interval of the comparison
//! is taken at the Bonferroni-corrected level for them (kvbench_stats::
//! paired::level_for_looks), in the printed table and in any later report
//! alike. Bonferroni holds for any looks up to that number, wherever they
//! fall, so a look moved earlier by the budget keeps the guarantee.

use crate::blocks;
use crate::pass::{pooled, verdicts, worse, Options, Pass};
use crate::plan;
use crate::verdict_plan::Limits;
use crate::{Cell, Experiment};
use anyhow::Result;
use kvbench_model::RunRecord;
use kvbench_report::format::duration_text;
use kvbench_report::takeaways;
use kvbench_run::view::View;
use kvbench_stats::paired::{look_points, MIN_BLOCKS};
use kvbench_store::Store;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Runs `exp` (its first blocks), then adds blocks for undecided places
/// within `limits`; returns every run of the pass.
///
/// # Errors
/// As [`crate::pass::run`].
pub fn run(
    exp: &Experiment,
    o: &Options<'_>,
    store: &mut Store,
    view: &dyn View,
    stop: &Arc<AtomicBool>,
    limits: &Limits,
) -> Result<Pass> {
    let started = Instant::now();
    let say = |line: String| {
        if !o.quiet {
            view.println(&line);
        }
    };
    // The first blocks' cost is planned only to be said.
    if let (Some(budget), false) = (limits.budget, o.quiet) {
        let generation = plan::generation(Some(store), &exp.name, o.restart)?;
        let first: f64 = plan::plan(exp, Some(store), generation, o.checkpoint)?
            .iter()
            .filter(|p| p.finished.is_none())
            .map(|p| p.estimate_s)
            .sum();
        if first > budget.as_secs_f64() {
            say(format!(
                "until-decided: the first {} blocks are estimated at {}, more than the budget of {}; they run whole, and no block is added after them",
                exp.iterations,
                duration_text(first),
                duration_text(budget.as_secs_f64())
            ));
        }
    }
    // Servers stay up from round to round (the pool stops them at the end).
    let mut pool = kvbench_run::reuse::Pool::default();
    let pass = pooled(exp, o, store, view, stop, &mut pool, true)?;
    let (mut worst, generation) = (pass.worst, pass.generation);
    let resume = Options {
        restart: false,
        ..*o
    };
    let first: Vec<&Cell> = exp.cells.iter().filter(|c| c.iteration == 1).collect();
    let seed = first.first().map_or(0, |c| c.settings.seed);
    let mut done_blocks = exp.iterations;
    while !stop.load(Ordering::Relaxed) {
        let (vs, _) = verdicts(store, &exp.name, generation)?;
        let open: Vec<&takeaways::Verdict> = vs.iter().filter(|v| !v.call().decided()).collect();
        let left = limits.budget.map(|b| b.saturating_sub(started.elapsed()));
        say(format!(
            "until-decided: {done_blocks} blocks: {} of {} places decided{}",
            vs.len() - open.len(),
            vs.len(),
            left.map_or(String::new(), |l| format!(
                ", {} of the budget left",
                duration_text(l.as_secs_f64())
            ))
        ));
        if open.is_empty() || done_blocks >= limits.max_blocks {
            break;
        }
        // The cells of the open places: their runs' cells in this pass.
        let open_runs: HashSet<i64> = open.iter().flat_map(|v| v.runs.iter().copied()).collect();
        let open_keys: HashSet<String> = store
            .finished_cells(&exp.name, generation)?
            .into_iter()
            .filter(|c| open_runs.contains(&c.run_id))
            .map(|c| c.cell_key)
            .collect();
        let open_cells: Vec<&Cell> = first
            .iter()
            .copied()
            .filter(|c| open_keys.contains(&c.key))
            .collect();
        if open_cells.is_empty() {
            break;
        }
        let next_look = look_points(MIN_BLOCKS as u32, limits.max_blocks)
            .into_iter()
            .find(|&k| k > done_blocks)
            .unwrap_or(limits.max_blocks);
        // The blocks up to the next look, fewer if the budget ends first.
        let mut upto = next_look;
        let round = loop {
            let round = round(exp, &open_cells, done_blocks, upto, seed);
            let Some(left) = left else { break Some(round) };
            let cost: f64 = plan::plan(&round, Some(store), generation, o.checkpoint)?
                .iter()
                .filter(|p| p.finished.is_none())
                .map(|p| p.estimate_s)
                .sum();
            if cost <= left.as_secs_f64() {
                break Some(round);
            }
            if upto == done_blocks + 1 {
                say(format!(
                    "until-decided: the next block (about {}) would pass the budget; {} place{} left undecided",
                    duration_text(cost),
                    open.len(),
                    if open.len() == 1 { "" } else { "s" }
                ));
                break None;
            }
            upto -= 1;
        };
        let Some(round) = round else { break };
        let r = pooled(&round, &resume, store, view, stop, &mut pool, true)?;
        worst = worse(worst, r.worst);
        done_blocks = upto;
    }
    drop(pool);
    let records = store
        .finished_cells(&exp.name, generation)?
        .iter()
        .map(|c| Ok(store.get_run(c.run_id)?))
        .collect::<Result<Vec<RunRecord>>>()?;
    Ok(Pass {
        records,
        generation,
        worst,
    })
}

/// `exp` with every block up to `blocks` (the first pass's cells again
/// with later iterations), so the iterations' table covers them all.
pub fn whole(exp: &Experiment, blocks: u32) -> Experiment {
    let first: Vec<&Cell> = exp.cells.iter().filter(|c| c.iteration == 1).collect();
    Experiment {
        name: exp.name.clone(),
        iterations: blocks,
        reload: exp.reload,
        cells: again(&first, 1..=blocks),
        absent: Vec::new(),
        sequential: exp.sequential,
    }
}

/// Blocks `after + 1 ..= upto` of the places of `cells` (each block in
/// its own random order).
fn round(exp: &Experiment, cells: &[&Cell], after: u32, upto: u32, seed: u64) -> Experiment {
    Experiment {
        name: exp.name.clone(),
        iterations: upto,
        reload: exp.reload,
        cells: blocks::arrange(again(cells, after + 1..=upto), seed),
        absent: Vec::new(),
        sequential: None,
    }
}

/// `cells` once for each iteration of `iterations`.
fn again(cells: &[&Cell], iterations: std::ops::RangeInclusive<u32>) -> Vec<Cell> {
    iterations
        .flat_map(|it| {
            cells.iter().map(move |&c| Cell {
                iteration: it,
                ..c.clone()
            })
        })
        .collect()
}
