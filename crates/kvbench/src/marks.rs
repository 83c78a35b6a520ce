//! A run's marks and status, from what it measured: a window cut short
//! (and why, in the server's words), a load left undone, errors, misses,
//! evictions, an empty or unstable window, scaled-out workers out of step.
//! A run is `ok` only when nothing here suggests its numbers are wrong;
//! [`judge`] decides, after everything else has been recorded.

use crate::config::RunSettings;
use kvbench_engine::CutShort;
use kvbench_model::{OpKind, PhaseResult, RunRecord, RunStatus};
use kvbench_stats::Stability;

/// Scale-out: workers whose starts (or clocks) differ by more than this
/// did not measure the same window.
const START_BOUND_MS: f64 = 5.0;

/// Marks a scaled-out run whose workers were not in step: their start
/// instants spread, or their clocks known too loosely to tell.
pub fn scale_out_marks(so: &kvbench_model::ScaleOutResult, window_s: f64, rec: &mut RunRecord) {
    if so.clock_uncertainty_ms > START_BOUND_MS {
        rec.marks.push(format!(
            "clock: a worker's clock is known to within {:.1} ms only (half its best round trip to the driver), above the {START_BOUND_MS} ms bound; its start and seconds may be misaligned",
            so.clock_uncertainty_ms
        ));
    }
    // Spread is measured, never hidden: above the bound it is a warning;
    // above a hundredth of the window the workers' windows differ enough to
    // change the throughput, and the run is marked.
    let window_ms = window_s * 1000.0;
    let text = format!(
        "the workers started {:.1} ms apart (bound {START_BOUND_MS} ms)",
        so.start_spread_ms
    );
    if so.start_spread_ms > START_BOUND_MS.max(window_ms / 100.0) {
        rec.marks.push(format!(
            "start-spread: {text}, over 1% of the {:.0} ms window, so their windows cover different stretches of time",
            window_ms
        ));
    } else if so.start_spread_ms > START_BOUND_MS {
        rec.warnings.push(format!(
            "start-spread: {text}; a busy client machine wakes them late (docs/scale-out.md)"
        ));
    }
}

/// The failure text and the `partial` mark of a window that ended early.
pub fn cut_short(
    why: CutShort,
    run: &kvbench_engine::PhaseOutput,
    s: &RunSettings,
    lost: &[String],
) -> (String, String) {
    let result = &run.result;
    let planned = match s.window {
        kvbench_engine::Window::Duration(d) => format!("{} s window", d.as_secs_f64()),
        kvbench_engine::Window::Operations(n) => format!("window of {n} operations"),
    };
    let cause = match why {
        CutShort::Interrupted => "interrupted by the user".to_string(),
        CutShort::ConnectionsLost if !lost.is_empty() => {
            format!("the server at {} exited", lost.join(", "))
        }
        CutShort::ConnectionsLost if run.recorder.failed_connections == 0 => {
            "the workers stopped early, no connection failed,".to_string()
        }
        CutShort::ConnectionsLost => format!("{} failed", connections_failed(&run.recorder)),
    };
    let text = format!(
        "{cause} {:.2} s into the {planned}{}",
        result.duration_s,
        server_said(result)
    );
    let mark = format!(
        "partial: {text}; the {} operations measured until then are kept, not a result",
        result.completed
    );
    (text, mark)
}

/// How many connections failed, of how many: "every connection" only when
/// every one did.
pub fn connections_failed(r: &kvbench_engine::recorder::Recorder) -> String {
    match (r.failed_connections, r.connections) {
        (f, all) if f > 0 && f < all => format!("{f} of {all} connections"),
        (_, all) if all > 1 => format!("all {all} connections"),
        _ => "every connection".to_string(),
    }
}

/// What the server answered when it refused, as it said it: the most
/// frequent error reply's text and count.
pub fn server_said(result: &PhaseResult) -> String {
    result
        .error_replies
        .iter()
        .max_by_key(|e| e.count)
        .map(|e| match e.count {
            0 => format!(" (the server said \"{}\" before the window)", e.first),
            n => format!(" (the server said \"{}\" {n} times)", e.first),
        })
        .unwrap_or_default()
}

/// What a load left undone, in one line that matches its counts (`None`
/// for a complete load): records inserted of those planned, inserts that
/// failed, and what the server said.
pub fn load_shortfall(s: &RunSettings, load: &PhaseResult) -> Option<String> {
    let range = s.spec.load_range();
    let expected = range.end - range.start;
    if load.errors == 0 && load.completed == expected {
        return None;
    }
    let failed = match load.errors {
        0 => String::new(),
        n => format!(", {n} inserts failed"),
    };
    Some(format!(
        "{} of {expected} records inserted{failed}{}",
        load.completed,
        server_said(load)
    ))
}

/// Marks and status from what was measured: a run is valid only if nothing
/// suggests its numbers are wrong.
pub fn judge(s: &RunSettings, rec: &mut RunRecord) {
    let shortfall = rec.load.as_ref().and_then(|l| load_shortfall(s, l));
    if let Some(why) = &shortfall {
        rec.marks.push(format!("incomplete-load: {why}"));
    }
    if let Some(run) = &rec.run {
        let all_misses: u64 = run.ops.iter().map(|o| o.misses).sum();
        if run.completed + all_misses + run.errors == 0 {
            rec.marks.push(
                "empty: no operation was answered in the measured window, so it measured nothing \
                 (each took longer than the window, or the window was too short for any); give a \
                 longer --duration"
                    .into(),
            );
        }
        if run.errors > 0 {
            let kinds: Vec<String> = run
                .errors_by_kind
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect();
            let text = format!(
                "errors: {} operations failed ({})",
                run.errors,
                kinds.join(", ")
            );
            if s.allow_errors {
                rec.warnings
                    .push(format!("{text}; kept valid by --allow-errors"));
            } else {
                rec.marks.push(text);
            }
        }
        if let Some(mark) = instability(run) {
            rec.marks.push(mark);
        }
        let scan_misses: u64 = run
            .ops
            .iter()
            .filter(|o| o.op == OpKind::Scan)
            .map(|o| o.misses)
            .sum();
        if scan_misses > 0 {
            rec.marks.push(format!(
                "misses: {scan_misses} scans found no record: on Redis a scan reads YCSB's index of keys, which only a load with kvbench.redis.index=ycsb writes (the default when the loading workload scans)"
            ));
        }
        let misses = all_misses - scan_misses;
        // Under `--max-memory` misses and evictions are what is measured.
        if misses > 0 && s.max_memory.is_none() {
            let why = if shortfall.is_some() {
                "of the records the load did not insert"
            } else if s.no_load || rec.environment.reused_server.is_some() {
                "although the records were said to be there"
            } else {
                "although every record was loaded"
            };
            rec.marks
                .push(format!("misses: {misses} reads found no record {why}"));
        }
    }
    if let Some(ev) = rec.probes.iter().filter_map(|p| p.evictions).max() {
        if ev > 0 && s.max_memory.is_none() {
            rec.marks.push(format!(
                "evictions: the server evicted {ev} items, so some reads could not hit"
            ));
        }
    }
    rec.status = if rec.marks.is_empty() {
        RunStatus::Ok
    } else {
        RunStatus::Invalid
    };
}

/// A mark when the window's per-second throughput, or the median latency
/// of its commonest operation, held two levels or drifted: its totals then
/// describe no state the system was really in (kvbench_stats::stability).
/// Only whole seconds count (an operation-bounded window ends inside one).
fn instability(run: &PhaseResult) -> Option<String> {
    let whole = (run.duration_s + 1e-6).floor() as usize;
    let mut tput = vec![0.0; whole];
    for p in &run.series {
        if let Some(t) = tput.get_mut(p.second as usize) {
            *t += p.completed as f64;
        }
    }
    let describe = |what: &str, unit: &str, st: Stability| {
        match st {
        Stability::TwoLevels {
            low,
            high,
            low_seconds,
            high_seconds,
        } => Some(format!(
            "unstable: per-second {what} held two levels, {low:.0} {unit} for {low_seconds} s and {high:.0} {unit} for {high_seconds} s; the totals describe neither (see docs/metrics.md, \"Stability\")"
        )),
        Stability::Drifting { from, to } => Some(format!(
            "unstable: per-second {what} drifted from {from:.0} to {to:.0} {unit} over the window; the totals describe neither end (see docs/metrics.md, \"Stability\")"
        )),
        Stability::TooShort | Stability::Stable => None,
    }
    };
    if let Some(m) = describe("throughput", "ops/s", kvbench_stats::assess(&tput)) {
        return Some(m);
    }
    let main = run.ops.iter().max_by_key(|o| o.completed)?.op;
    let p50: Vec<f64> = run
        .series
        .iter()
        .filter(|p| p.op == main && (p.second as usize) < whole && p.completed > 0)
        .map(|p| p.p50_us)
        .collect();
    describe("median latency", "us", kvbench_stats::assess(&p50))
}

#[cfg(test)]
mod tests {
    use kvbench_engine::recorder::Recorder;

    #[test]
    fn a_failure_says_how_many_connections_failed() {
        let mut r = Recorder::default();
        (r.failed_connections, r.connections) = (15, 20);
        assert_eq!(super::connections_failed(&r), "15 of 20 connections");
        (r.failed_connections, r.connections) = (20, 20);
        assert_eq!(super::connections_failed(&r), "all 20 connections");
        (r.failed_connections, r.connections) = (1, 0);
        assert_eq!(super::connections_failed(&r), "every connection");
    }
}
