//! `kvbench findmax`: the highest open-loop rate at which a latency
//! percentile stays under an objective (`--slo p99=1ms`). Each step is an
//! open-loop run at one rate on one loaded server (kept between steps, as
//! an experiment with `reload = "once-per-system"` keeps it), judged by the
//! engine's overload detection, its errors and the percentile over all its
//! operations; `search` picks the rates. Every step is stored as a run of
//! an experiment named after the search, so the rate -> latency curve it
//! walked can be listed, exported and drawn like any other.

mod search;

use crate::args::FindmaxArgs;
use crate::config;
use crate::db::open_store;
use crate::exit::{UsageError, Verdict};
use crate::live::Live;
use crate::output::print;
use anyhow::Result;
use kvbench_engine::recorder::{merge_encoded, summarize};
use kvbench_model::{MarkKind, RunRecord, RunStatus};
use kvbench_run::orchestrate::run_cell;
use kvbench_run::reuse::{self, Reload, Sharing};
use kvbench_run::RunSettings;
use kvbench_store::CellTag;
use search::{Bounds, Stop};
use serde::Serialize;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A step's window when `--duration` is not given: long enough for a p99
/// from thousands of requests at modest rates, short enough for a search
/// of a dozen steps to take about a minute.
const DEFAULT_STEP: Duration = Duration::from_secs(3);

/// A latency objective: percentile `percentile` at most `limit_us`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Slo {
    pub percentile: f64,
    pub limit_us: f64,
}

impl FromStr for Slo {
    type Err = String;
    /// `p99=1ms`, `p99.9<500us`, `p50:2ms`.
    fn from_str(text: &str) -> Result<Slo, String> {
        let form = "write it as pNN=DURATION, e.g. p99=1ms or p99.9=500us";
        let (p, limit) = text
            .split_once(['=', '<', ':'])
            .ok_or_else(|| format!("no limit given; {form}"))?;
        let percentile: f64 = p
            .trim()
            .strip_prefix('p')
            .and_then(|n| n.parse().ok())
            .filter(|n: &f64| *n > 0.0 && *n < 100.0)
            .ok_or_else(|| {
                format!("'{p}' is not a percentile between p0 and p100 (exclusive); {form}")
            })?;
        let limit = humantime::parse_duration(limit.trim())
            .map_err(|e| format!("'{}' is not a duration ({e}); {form}", limit.trim()))?;
        if limit.is_zero() {
            return Err("the limit must be longer than 0".into());
        }
        Ok(Slo {
            percentile,
            limit_us: limit.as_nanos() as f64 / 1e3,
        })
    }
}

impl std::fmt::Display for Slo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "p{} <= {} us", self.percentile, self.limit_us)
    }
}

/// One probed rate.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// None for the closed-loop run that measured the starting point.
    pub rate: Option<f64>,
    pub run_id: i64,
    pub achieved: f64,
    pub p50_us: f64,
    /// The objective's percentile over every operation of the window.
    pub slo_us: f64,
    pub passed: bool,
    /// Why it failed, or why it needs a second look (client-bound).
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    experiment: String,
    slo: Slo,
    /// The highest rate that met the objective (twice when converged).
    max_rate: Option<f64>,
    max_rate_run: Option<i64>,
    lowest_failing_rate: Option<f64>,
    stop: String,
    steps: Vec<Step>,
}

pub fn findmax(a: FindmaxArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    let slo: Slo = a
        .slo
        .parse()
        .map_err(|e| UsageError(format!("--slo '{}': {e}", a.slo)))?;
    if !(a.precision > 0.0 && a.precision < 1.0) {
        return Err(UsageError(format!(
            "--precision must be between 0 and 1 (0.05 is 5%), got {}",
            a.precision
        ))
        .into());
    }
    if a.run.bench.rate.is_some() {
        return Err(UsageError(
            "--rate: findmax chooses the rates; give --start-rate, --min-rate or --max-rate".into(),
        )
        .into());
    }
    let (min, max) = (a.min_rate, a.max_rate);
    if !(min > 0.0 && min.is_finite() && max.is_finite() && min < max) {
        return Err(UsageError(format!(
            "--min-rate {min} and --max-rate {max}: need 0 < min < max"
        ))
        .into());
    }
    if a.max_steps < 3 {
        return Err(UsageError("--max-steps must be at least 3".into()).into());
    }
    let mut run = a.run.clone();
    let (seed, seed_source) = config::seed(run.bench.seed);
    run.bench.seed = Some(seed);
    run.bench.duration.get_or_insert(DEFAULT_STEP);
    let settings = |rate: Option<f64>| -> Result<RunSettings, UsageError> {
        let mut r = run.clone();
        r.bench.rate = rate;
        let mut s = config::run_settings(&r)?;
        s.seed_source = seed_source;
        Ok(s)
    };
    let base = settings(None)?;
    if let Some(r) = a.start_rate {
        if !(r >= min && r <= max) {
            return Err(UsageError(format!(
                "--start-rate {r} is outside --min-rate {min} .. --max-rate {max}"
            ))
            .into());
        }
    }
    settings(Some(min))?;
    for n in &base.notes {
        eprintln!("note: {n}");
    }
    for w in &base.warnings {
        eprintln!("warning: {w}");
    }
    let mut store = open_store(&run.bench.db)?;
    let metrics = Live::listen(run.bench.metrics_listen.as_deref())?;
    kvbench_run::memory::check(&base, run.bench.skip_memory_check)?;
    kvbench_run::deploy::ready(&base)?;
    let name = a.name.clone().unwrap_or_else(|| {
        format!(
            "findmax {} {} {} p{}<={}us",
            base.system, base.topology, base.spec.name, slo.percentile, slo.limit_us
        )
    });
    let generation = store.experiment_generation(&name)?.map_or(1, |g| g + 1);
    let quiet = run.bench.quiet;
    let live = Live::new(quiet, metrics);
    let mut kept = None;
    let mut steps: Vec<Step> = Vec::new();
    let mut take = |rate: Option<f64>, steps: &mut Vec<Step>| -> Result<Step> {
        let s = settings(rate)?;
        let tag = CellTag {
            experiment: name.clone(),
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
        if !quiet {
            match rate {
                Some(r) => eprintln!("findmax: step {} at {r:.0} ops/s", steps.len() + 1),
                None => eprintln!("findmax: closed loop to find a starting rate"),
            }
        }
        live.begin_cell(steps.len(), "");
        let rec = run_cell(&s, &mut store, &live, stop, Some(&tag), Some(sharing))?;
        live.end_cell();
        let step = judge(&rec, rate, slo, stop)?;
        if !quiet {
            eprintln!(
                "findmax:   achieved {:.0} ops/s, p{} {:.1} us: {}",
                step.achieved,
                slo.percentile,
                step.slo_us,
                if step.passed {
                    "meets".to_string()
                } else {
                    step.notes.join("; ")
                }
            );
        }
        steps.push(step.clone());
        Ok(step)
    };
    let start = match a.start_rate {
        Some(r) => r,
        // Half the closed loop's throughput: usually below the knee, and
        // the doubling or halving from there is short either way.
        None => (take(None, &mut steps)?.achieved / 2.0).clamp(min, max),
    };
    let bounds = Bounds {
        start,
        min,
        max,
        precision: a.precision,
        max_steps: a.max_steps,
    };
    let outcome = search::search(bounds, |r| take(Some(r), &mut steps).map(|s| s.passed));
    reuse::release(kept.take());
    live.finish();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) if stop.load(Ordering::Relaxed) => {
            eprintln!("findmax: {e:#}; the steps taken are stored in experiment '{name}'");
            return Ok(Verdict::Interrupted);
        }
        Err(e) => return Err(e),
    };
    let best_run = outcome.best.and_then(|b| {
        steps
            .iter()
            .rev()
            .find(|s| s.rate == Some(b) && s.passed)
            .map(|s| s.run_id)
    });
    let report = Report {
        experiment: name,
        slo,
        max_rate: outcome.best,
        max_rate_run: best_run,
        lowest_failing_rate: outcome.lowest_failure,
        stop: outcome.stop.explain().to_string(),
        steps,
    };
    if run.bench.json {
        print(&serde_json::to_string_pretty(&report)?)?;
    } else {
        print(&text(&report))?;
    }
    Ok(match (outcome.stop, outcome.best) {
        (_, None) | (Stop::MinRate, _) => Verdict::Invalid,
        _ => Verdict::Ok,
    })
}

/// Whether a step met the objective, and the figures that say so.
fn judge(rec: &RunRecord, rate: Option<f64>, slo: Slo, stop: &AtomicBool) -> Result<Step> {
    let id = rec.id.unwrap_or_default();
    if rec.status == RunStatus::Failed {
        if stop.load(Ordering::Relaxed) {
            anyhow::bail!("interrupted by the user at run {id}");
        }
        anyhow::bail!(
            "step run {id} failed: {}",
            rec.failure.as_deref().unwrap_or("unknown")
        );
    }
    let run = rec
        .run
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("step run {id} has no run phase"))?;
    let all =
        merge_encoded(run.ops.iter().map(|o| o.histogram.as_str())).map_err(anyhow::Error::msg)?;
    let all = all.ok_or_else(|| anyhow::anyhow!("step run {id} completed no operation"))?;
    let slo_us = all.value_at_quantile(slo.percentile / 100.0) as f64 / 1e3;
    let mut notes = Vec::new();
    for m in &rec.marks {
        if matches!(m.kind(), MarkKind::Overloaded | MarkKind::Errors) {
            notes.push(m.to_string());
        }
    }
    if slo_us > slo.limit_us {
        notes.push(format!(
            "p{} {slo_us:.1} us is above {} us",
            slo.percentile, slo.limit_us
        ));
    }
    let passed = rate.is_none() || notes.is_empty();
    if rec
        .warnings
        .iter()
        .any(|w| w.kind() == MarkKind::ClientBound)
    {
        notes.push("client-bound: kvbench's own thread was the limit at this rate".to_string());
    }
    Ok(Step {
        rate,
        run_id: id,
        achieved: run.throughput,
        p50_us: summarize(&all).p50_us,
        slo_us,
        passed,
        notes,
    })
}

fn text(r: &Report) -> String {
    let pct = format!(">p{} us", r.slo.percentile);
    let mut t = kvbench_report::table::Table::new(&[
        ">step",
        ">offered ops/s",
        ">achieved ops/s",
        ">p50 us",
        &pct,
        "verdict",
        ">run",
    ]);
    for (i, s) in r.steps.iter().enumerate() {
        t.row(vec![
            (i + 1).to_string(),
            s.rate
                .map_or("closed loop".into(), kvbench_report::format::rate),
            kvbench_report::format::rate(s.achieved),
            kvbench_report::format::micros(s.p50_us),
            kvbench_report::format::micros(s.slo_us),
            match (s.rate, s.passed) {
                (None, _) => "start point".to_string(),
                (Some(_), true) if s.notes.is_empty() => "meets".to_string(),
                (Some(_), true) => format!("meets ({})", s.notes.join("; ")),
                (Some(_), false) => format!("fails: {}", s.notes.join("; ")),
            },
            s.run_id.to_string(),
        ]);
    }
    let result = match (r.max_rate, r.max_rate_run) {
        (Some(rate), Some(run)) => format!(
            "highest rate meeting {}: {} ops/s (run {run})",
            r.slo,
            kvbench_report::format::rate(rate)
        ),
        _ => format!("no rate tried met {}", r.slo),
    };
    let failing = r.lowest_failing_rate.map_or(String::new(), |f| {
        format!(
            "; lowest failing: {} ops/s",
            kvbench_report::format::rate(f)
        )
    });
    format!(
        "findmax '{}' (stored as experiment runs; kvbench export --experiment '{}'):\n{}\n{result}{failing}\n{}",
        r.experiment,
        r.experiment,
        t.to_text(),
        r.stop
    )
}
