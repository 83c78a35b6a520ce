//! A run's marks and status, from what it measured: a window cut short
//! (and why, in the server's words), a load left undone, errors, misses,
//! evictions, an empty or unstable window, scaled-out workers out of step.
//! A run is `ok` only when nothing here suggests its numbers are wrong;
//! [`judge`] decides, after everything else has been recorded.

use crate::settings::RunSettings;
use kvbench_engine::CutShort;
use kvbench_model::mark::{self, Instability, LoadShortfall, Measure, MissCause, ServerSaid};
use kvbench_model::{Finding, Mark, OpKind, PhaseResult, RunRecord, RunStatus};
use kvbench_stats::Stability;

/// Scale-out: workers whose starts (or clocks) differ by more than this
/// did not measure the same window.
const START_BOUND_MS: f64 = 5.0;

/// Marks a scaled-out run whose workers were not in step: their start
/// instants spread, or their clocks known too loosely to tell.
fn scale_out_marks(so: &kvbench_model::ScaleOutResult, window_s: f64, rec: &mut RunRecord) {
    if so.clock_uncertainty_ms > START_BOUND_MS {
        rec.marks.push(
            Finding::Clock {
                uncertainty_ms: so.clock_uncertainty_ms,
                bound_ms: START_BOUND_MS,
            }
            .into(),
        );
    }
    // Spread is measured, never hidden: above the bound it is a warning;
    // above a hundredth of the window the workers' windows differ enough to
    // change the throughput, and the run is marked.
    let window_ms = window_s * 1000.0;
    let spread = |window_ms| {
        Mark::from(Finding::StartSpread {
            spread_ms: so.start_spread_ms,
            bound_ms: START_BOUND_MS,
            window_ms,
        })
    };
    if so.start_spread_ms > START_BOUND_MS.max(window_ms / 100.0) {
        rec.marks.push(spread(Some(window_ms)));
    } else if so.start_spread_ms > START_BOUND_MS {
        rec.warnings.push(spread(None));
    }
}

/// A worker thread busy this share of the window means kvbench itself may
/// have limited throughput.
const CLIENT_BOUND_SHARE: f64 = 0.9;

/// The marks and warnings of what happened in the window, and the failure
/// of one cut short: faults caused, nodes lost, a window cut short, stalls,
/// a busy client, an overloaded schedule, clamped latencies, reconnects,
/// failed connections, scaled-out workers out of step. What the numbers
/// themselves show (errors, misses, instability) is [`judge`]'s.
pub fn window(
    s: &RunSettings,
    run: &kvbench_engine::PhaseOutput,
    lost: &[String],
    rec: &mut RunRecord,
) {
    let result = &run.result;
    if !result.faults.is_empty() {
        let faults = result.faults.clone();
        rec.marks.push(Finding::Fault { faults }.into());
    }
    if !lost.is_empty() {
        let nodes = lost.to_vec();
        rec.marks.push(Finding::NodeDown { nodes }.into());
    }
    if let Some(why) = run.cut_short {
        let (text, mark) = cut_short(why, run, s, lost);
        rec.failure = Some(text);
        rec.marks.push(mark);
    }
    let r = &run.recorder;
    if r.stalls > 0 {
        rec.marks.push(
            Finding::Stall {
                stalls: r.stalls,
                bound_s: s.stall.as_secs_f64(),
                longest_s: r.longest_stall_ns as f64 / 1e9,
            }
            .into(),
        );
    }
    // A worker thread that was busy nearly all the window may have been the
    // bottleneck; the numbers are still what was measured, so this is a
    // warning in the record, not a reason to call the run invalid.
    let busiest = run
        .worker_busy
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1));
    if let Some((worker, &busy)) = busiest.filter(|(_, b)| **b >= CLIENT_BOUND_SHARE) {
        rec.warnings
            .push(Finding::ClientBound { worker, busy }.into());
    }
    if let Some(why) = &run.overloaded {
        rec.marks.push(why.clone().into());
    }
    if r.clamped > 0 {
        rec.warnings.push(
            Finding::Clamped {
                latencies: r.clamped,
                limit_s: kvbench_engine::recorder::MAX_LATENCY_NS as f64 / 1e9,
            }
            .into(),
        );
    }
    if result.reconnects > 0 {
        let reconnects = result.reconnects;
        rec.marks.push(Finding::Reconnects { reconnects }.into());
    }
    if r.failed_connections > 0 {
        rec.marks.push(
            Finding::ConnectionFailures {
                failed: r.failed_connections,
                of: r.connections,
                server_said: server_said(result),
            }
            .into(),
        );
    }
    if let Some(so) = &result.scale_out {
        scale_out_marks(so, result.duration_s, rec);
    }
}

/// The failure text and the `partial` mark of a window that ended early.
fn cut_short(
    why: CutShort,
    run: &kvbench_engine::PhaseOutput,
    s: &RunSettings,
    lost: &[String],
) -> (String, Mark) {
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
    let said = server_said(result)
        .map(|s| s.to_string())
        .unwrap_or_default();
    let text = format!(
        "{cause} {:.2} s into the {planned}{said}",
        result.duration_s
    );
    let mark = Finding::Partial {
        why: text.clone(),
        completed: result.completed,
    };
    (text, mark.into())
}

/// How many connections failed, of how many: "every connection" only when
/// every one did.
fn connections_failed(r: &kvbench_engine::recorder::Recorder) -> String {
    mark::connections_failed(r.failed_connections, r.connections)
}

/// What the server answered when it refused, as it said it: the most
/// frequent error reply's text and count.
fn server_said(result: &PhaseResult) -> Option<ServerSaid> {
    result
        .error_replies
        .iter()
        .max_by_key(|e| e.count)
        .map(|e| ServerSaid {
            reply: e.first.clone(),
            count: e.count,
        })
}

/// What a load left undone (`None` for a complete load): records inserted
/// of those planned, inserts that failed, and what the server said.
pub fn load_shortfall(s: &RunSettings, load: &PhaseResult) -> Option<LoadShortfall> {
    let range = s.spec.load_range();
    let expected = range.end - range.start;
    if load.errors == 0 && load.completed == expected {
        return None;
    }
    Some(LoadShortfall {
        inserted: load.completed,
        planned: expected,
        failed: load.errors,
        server_said: server_said(load),
    })
}

/// Marks and status from what was measured: a run is valid only if nothing
/// suggests its numbers are wrong.
pub fn judge(s: &RunSettings, rec: &mut RunRecord) {
    let shortfall = rec.load.as_ref().and_then(|l| load_shortfall(s, l));
    if let Some(why) = &shortfall {
        rec.marks.push(Finding::IncompleteLoad(why.clone()).into());
    }
    if let Some(run) = &rec.run {
        let all_misses: u64 = run.ops.iter().map(|o| o.misses).sum();
        if run.completed + all_misses + run.errors == 0 {
            rec.marks.push(Finding::Empty.into());
        }
        if run.errors > 0 {
            let errors = Finding::Errors {
                failed: run.errors,
                by_kind: run.errors_by_kind.clone(),
                allowed: s.allow_errors,
            };
            if s.allow_errors {
                rec.warnings.push(errors.into());
            } else {
                rec.marks.push(errors.into());
            }
        }
        if let Some(mark) = instability(run) {
            rec.marks.push(mark.into());
        }
        let scan_misses: u64 = run
            .ops
            .iter()
            .filter(|o| o.op == OpKind::Scan)
            .map(|o| o.misses)
            .sum();
        if scan_misses > 0 {
            rec.marks.push(
                Finding::Misses {
                    misses: scan_misses,
                    cause: MissCause::ScanIndex,
                }
                .into(),
            );
        }
        let misses = all_misses - scan_misses;
        // Under `--max-memory` misses and evictions are what is measured.
        if misses > 0 && s.max_memory.is_none() {
            let cause = if shortfall.is_some() {
                MissCause::NotLoaded
            } else if s.no_load || rec.environment.reused_server.is_some() {
                MissCause::SaidThere
            } else {
                MissCause::Loaded
            };
            rec.marks.push(Finding::Misses { misses, cause }.into());
        }
    }
    if let Some(ev) = rec.probes.iter().filter_map(|p| p.evictions).max() {
        if ev > 0 && s.max_memory.is_none() {
            rec.marks.push(Finding::Evictions { evicted: ev }.into());
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
fn instability(run: &PhaseResult) -> Option<Finding> {
    let whole = (run.duration_s + 1e-6).floor() as usize;
    let mut tput = vec![0.0; whole];
    for p in &run.series {
        if let Some(t) = tput.get_mut(p.second as usize) {
            *t += p.completed as f64;
        }
    }
    let describe = |measure: Measure, st: Stability| {
        let shape = match st {
            Stability::TwoLevels {
                low,
                high,
                low_seconds,
                high_seconds,
            } => Instability::TwoLevels {
                low,
                high,
                low_seconds: low_seconds as u64,
                high_seconds: high_seconds as u64,
            },
            Stability::Drifting { from, to } => Instability::Drifting { from, to },
            Stability::TooShort | Stability::Stable => return None,
        };
        Some(Finding::Unstable { measure, shape })
    };
    if let Some(m) = describe(Measure::Throughput, kvbench_stats::assess(&tput)) {
        return Some(m);
    }
    let main = run.ops.iter().max_by_key(|o| o.completed)?.op;
    let p50: Vec<f64> = run
        .series
        .iter()
        .filter(|p| p.op == main && (p.second as usize) < whole && p.completed > 0)
        .map(|p| p.p50_us)
        .collect();
    describe(Measure::MedianLatency, kvbench_stats::assess(&p50))
}
