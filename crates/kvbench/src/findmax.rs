//! `kvbench findmax`: its flags checked and turned into a search
//! (`kvbench_findmax`), its steps shown as they go, and its table or JSON.

use crate::args::FindmaxArgs;
use crate::config;
use crate::db::open_store;
use crate::exit::{UsageError, Verdict};
use crate::live::Live;
use crate::output::print;
use anyhow::Result;
use kvbench_findmax::{find, Found, Plan, Slo, Step, Watch};
use kvbench_run::RunSettings;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A step's window when `--duration` is not given: long enough for a p99
/// from thousands of requests at modest rates, short enough for a search
/// of a dozen steps to take about a minute.
const DEFAULT_STEP: Duration = Duration::from_secs(3);

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
    let plan = Plan {
        name: a.name.clone().unwrap_or_else(|| {
            format!(
                "findmax {} {} {} p{}<={}us",
                base.system, base.topology, base.spec.name, slo.percentile, slo.limit_us
            )
        }),
        slo,
        start_rate: a.start_rate,
        min_rate: min,
        max_rate: max,
        precision: a.precision,
        max_steps: a.max_steps,
    };
    let live = Live::new(run.bench.quiet, metrics);
    let found = find(&plan, &settings, &mut store, &live, &Steps(&live), stop);
    live.finish();
    let found = match found {
        Ok(f) => f,
        Err(e) if stop.load(Ordering::Relaxed) => {
            eprintln!(
                "findmax: {e:#}; the steps taken are stored in experiment '{}'",
                plan.name
            );
            return Ok(Verdict::Interrupted);
        }
        Err(e) => return Err(e),
    };
    if run.bench.json {
        print(&serde_json::to_string_pretty(&found)?)?;
    } else {
        print(&text(&found))?;
    }
    Ok(if found.found() {
        Verdict::Ok
    } else {
        Verdict::Invalid
    })
}

/// The steps on the live view: a line as each starts and is judged.
struct Steps<'a>(&'a Live);

impl Watch for Steps<'_> {
    fn starts(&self, index: usize, rate: Option<f64>) {
        if !self.0.quiet() {
            match rate {
                Some(r) => eprintln!("findmax: step {} at {r:.0} ops/s", index + 1),
                None => eprintln!("findmax: closed loop to find a starting rate"),
            }
        }
        self.0.begin_cell(index, "");
    }

    fn judged(&self, step: &Step, slo: Slo) {
        self.0.end_cell();
        if !self.0.quiet() {
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
    }
}

fn text(r: &Found) -> String {
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
        r.stopped.explain()
    )
}
