//! `kvbench findmax` apart from the command line: the highest open-loop
//! rate at which a latency percentile stays under an objective
//! (`p99=1ms`, [`Slo`]). Each step is an open-loop run at one rate on one
//! loaded server (kept between steps, as an experiment with
//! `reload = "once-per-system"` keeps it), judged by the engine's overload
//! detection, its errors and the percentile over all its operations
//! (`step`); [`search`] picks the rates. Every step is stored as a run of
//! an experiment named after the search, so the rate -> latency curve it
//! walked can be listed, exported and drawn like any other.
#![deny(missing_docs)]

pub mod search;
mod slo;
mod step;

pub use search::{Bounds, Outcome, Stop};
pub use slo::Slo;
pub use step::Step;

use anyhow::Result;
use kvbench_run::orchestrate::run_cell;
use kvbench_run::reuse::{self, Reload, Sharing};
use kvbench_run::view::View;
use kvbench_run::{RunSettings, UsageError};
use kvbench_store::{CellTag, Store};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What the search shows between its steps, beside the cells' own view.
pub trait Watch {
    /// Step `index` (from 0) starts at `rate` (`None`: the closed-loop run
    /// that finds a starting point).
    fn starts(&self, index: usize, rate: Option<f64>);
    /// The step just run, judged against `slo`.
    fn judged(&self, step: &Step, slo: Slo);
}

/// A search to run: its experiment's name, the objective and the rates.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The experiment the steps are stored under.
    pub name: String,
    /// The objective.
    pub slo: Slo,
    /// The first rate; `None`: half a closed-loop run's throughput.
    pub start_rate: Option<f64>,
    /// The lowest rate the search may try.
    pub min_rate: f64,
    /// The highest rate the search may try.
    pub max_rate: f64,
    /// Converged when the lowest failing rate is at most this much above
    /// the best (0.05 is 5%).
    pub precision: f64,
    /// The most steps the search takes.
    pub max_steps: usize,
}

/// A finished search, as `--json` prints it.
#[derive(Debug, Serialize)]
pub struct Found {
    /// The experiment its steps are stored under.
    pub experiment: String,
    /// The objective.
    pub slo: Slo,
    /// The highest rate that met the objective (twice when converged).
    pub max_rate: Option<f64>,
    /// The run that last met it at that rate.
    pub max_rate_run: Option<i64>,
    /// The lowest rate that failed.
    pub lowest_failing_rate: Option<f64>,
    /// Why the search ended (in `--json`, the sentence that explains it).
    #[serde(rename = "stop", serialize_with = "explained")]
    pub stopped: Stop,
    /// Every step, in order.
    pub steps: Vec<Step>,
}

/// A stop as its sentence.
fn explained<S: serde::Serializer>(stop: &Stop, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(stop.explain())
}

impl Found {
    /// Whether a rate was found: some rate met the objective and the search
    /// did not end at `--min-rate`.
    pub fn found(&self) -> bool {
        self.max_rate.is_some() && self.stopped != Stop::MinRate
    }
}

/// Runs the search `plan` with the cells `settings` gives for each rate
/// (`None`: the closed loop), storing every step in `store`.
///
/// # Errors
/// Settings refused for a rate, a step that fails or is interrupted (`stop`
/// set; the steps run so far stay stored), or a store that will not save.
pub fn find(
    plan: &Plan,
    settings: &dyn Fn(Option<f64>) -> Result<RunSettings, UsageError>,
    store: &mut Store,
    view: &dyn View,
    watch: &dyn Watch,
    stop: &Arc<AtomicBool>,
) -> Result<Found> {
    let generation = store
        .experiment_generation(&plan.name)?
        .map_or(1, |g| g + 1);
    let mut kept = None;
    let mut steps: Vec<Step> = Vec::new();
    let mut take = |rate: Option<f64>, steps: &mut Vec<Step>| -> Result<Step> {
        let s = settings(rate)?;
        let tag = CellTag {
            experiment: plan.name.clone(),
            generation,
            cell_key: kvbench_experiment::key(&s, Reload::OncePerSystem),
            cell_index: steps.len() as u32,
            // A rate probed again (the confirmation) is its next iteration.
            iteration: 1 + steps.iter().filter(|p| p.rate == rate).count() as u32,
        };
        let sharing = Sharing {
            slot: &mut kept,
            key: reuse::key(&s, Reload::OncePerSystem),
            policy: Reload::OncePerSystem,
            keep_after: true,
        };
        watch.starts(steps.len(), rate);
        let rec = run_cell(&s, store, view, stop, Some(&tag), Some(sharing))?;
        let step = step::judge(&rec, rate, plan.slo, stop)?;
        watch.judged(&step, plan.slo);
        steps.push(step.clone());
        Ok(step)
    };
    let searched = (|| {
        let start = match plan.start_rate {
            Some(r) => r,
            // Half the closed loop's throughput: usually below the knee,
            // and the doubling or halving from there is short either way.
            None => (take(None, &mut steps)?.achieved / 2.0).clamp(plan.min_rate, plan.max_rate),
        };
        let bounds = Bounds {
            start,
            min: plan.min_rate,
            max: plan.max_rate,
            precision: plan.precision,
            max_steps: plan.max_steps,
        };
        search::search(bounds, |r| take(Some(r), &mut steps).map(|s| s.passed))
    })();
    reuse::release(kept.take());
    let outcome = searched?;
    let max_rate_run = outcome.best.and_then(|b| {
        steps
            .iter()
            .rev()
            .find(|s| s.rate == Some(b) && s.passed)
            .map(|s| s.run_id)
    });
    Ok(Found {
        experiment: plan.name.clone(),
        slo: plan.slo,
        max_rate: outcome.best,
        max_rate_run,
        lowest_failing_rate: outcome.lowest_failure,
        stopped: outcome.stop,
        steps,
    })
}
