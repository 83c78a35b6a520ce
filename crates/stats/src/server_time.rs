//! Where a request's time goes: the window's server time per command
//! from the counters read at its edges, and each operation kind's mean
//! latency split into the server's share and the rest. docs/metrics.md,
//! "Latency split", defines each figure.

use kvbench_model::server_time::{CommandTime, LatencySplit};
use kvbench_model::{CommandTimes, OpKind, PhaseResult, ServerTime};
use std::collections::BTreeMap;

/// The window's server time from the counters at its start (`before`)
/// and end (`after`), split for each operation kind of `run` whose
/// commands (`commands_of`) are its own.
pub fn split(
    before: &CommandTimes,
    after: &CommandTimes,
    run: &PhaseResult,
    commands_of: &dyn Fn(OpKind) -> Vec<String>,
    base_rtt_us: Option<f64>,
) -> ServerTime {
    let mut commands = Vec::new();
    let mut window: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut histograms = false;
    for (name, a) in after {
        let b = before.get(name).cloned().unwrap_or_default();
        let calls = a.calls.saturating_sub(b.calls);
        if calls == 0 {
            continue;
        }
        let usec = a.usec.saturating_sub(b.usec);
        let cum: Vec<u64> = a
            .cumulative
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                // A shorter list holds its last count on (cumulative).
                let was = b.cumulative.get(i).or(b.cumulative.last());
                n.saturating_sub(was.copied().unwrap_or(0))
            })
            .collect();
        histograms |= !cum.is_empty();
        let q = |q: f64| percentile(&cum, q);
        window.insert(name, (calls, usec));
        commands.push(CommandTime {
            name: name.clone(),
            calls,
            mean_us: usec as f64 / calls as f64,
            p50_us: q(0.5),
            p99_us: q(0.99),
            p999_us: q(0.999),
        });
    }
    let main: Vec<_> = run.ops.iter().filter(|o| !o.with).collect();
    let sets: Vec<(OpKind, Vec<String>)> = main.iter().map(|o| (o.op, commands_of(o.op))).collect();
    let mut splits = Vec::new();
    for o in &main {
        let Some((_, own)) = sets.iter().find(|(k, _)| *k == o.op) else {
            continue;
        };
        let shared = sets
            .iter()
            .any(|(k, c)| *k != o.op && c.iter().any(|n| own.contains(n)));
        let (calls, usec) = own
            .iter()
            .filter_map(|n| window.get(n.as_str()))
            .fold((0, 0), |(c, u), (dc, du)| (c + dc, u + du));
        let requests = o.completed + o.misses + o.errors;
        // About one server call per request, or the commands' time is
        // not this kind's requests' (several per request, or other
        // clients running them).
        let per_request = calls as f64 / requests.max(1) as f64;
        if own.is_empty() || shared || o.latency.count == 0 || !(0.9..=1.1).contains(&per_request) {
            continue;
        }
        // Open loop: the response time includes the wait for the
        // schedule; the service time is what the request took.
        let client = o.service.as_ref().map_or(o.latency.mean_us, |s| s.mean_us);
        let server = usec as f64 / calls as f64;
        splits.push(LatencySplit {
            op: o.op,
            commands: own.clone(),
            client_mean_us: client,
            server_mean_us: server,
            client_network_mean_us: client - server,
            lag_mean_us: o.lag.as_ref().map(|l| l.mean_us),
            calls_per_request: per_request,
        });
    }
    ServerTime {
        method: if histograms {
            "LATENCY HISTOGRAM and INFO commandstats".into()
        } else {
            "INFO commandstats (means only)".into()
        },
        commands,
        splits,
        base_rtt_us,
    }
}

/// The upper bound, µs, of the bucket holding quantile `q` of a cumulative
/// power-of-two histogram (`None` when empty).
fn percentile(cumulative: &[u64], q: f64) -> Option<f64> {
    let total = *cumulative.last()?;
    if total == 0 {
        return None;
    }
    let want = (q * total as f64).ceil() as u64;
    cumulative
        .iter()
        .position(|&n| n >= want.max(1))
        .map(|i| (1u64 << i) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvbench_model::server_time::CommandCounters;
    use kvbench_model::{LatencySummary, OpResult};

    fn counters(calls: u64, usec: u64, cumulative: &[u64]) -> CommandCounters {
        CommandCounters::new(calls, usec, cumulative.to_vec())
    }

    fn op(kind: OpKind, completed: u64, mean_us: f64) -> OpResult {
        OpResult {
            completed,
            latency: LatencySummary {
                count: completed,
                mean_us,
                ..LatencySummary::default()
            },
            ..OpResult::empty(kind)
        }
    }

    #[test]
    fn the_window_is_the_difference_and_each_kind_gets_its_own_commands() {
        let before = CommandTimes::from([
            ("hgetall".to_string(), counters(10, 100, &[0, 5, 10])),
            ("info".to_string(), counters(3, 30, &[])),
        ]);
        let after = CommandTimes::from([
            (
                "hgetall".to_string(),
                counters(110, 400, &[0, 55, 100, 110]),
            ),
            ("hmset".to_string(), counters(50, 500, &[0, 0, 0, 50])),
            ("info".to_string(), counters(3, 30, &[])),
        ]);
        let run = PhaseResult {
            ops: vec![op(OpKind::Read, 100, 40.0), op(OpKind::Update, 50, 50.0)],
            ..PhaseResult::default()
        };
        let of = |k: OpKind| match k {
            OpKind::Read => vec!["hgetall".to_string(), "hmget".to_string()],
            _ => vec!["hmset".to_string()],
        };
        let t = split(&before, &after, &run, &of, Some(20.0));
        let names: Vec<_> = t
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.calls))
            .collect();
        assert_eq!(names, [("hgetall", 100), ("hmset", 50)], "info ran no more");
        let read = &t.commands[0];
        assert_eq!(read.mean_us, 3.0);
        // 50 of 100 within 2 us, 90 within 4, all within 8.
        assert_eq!((read.p50_us, read.p99_us), (Some(2.0), Some(8.0)));
        assert_eq!(t.splits.len(), 2);
        let s = &t.splits[0];
        assert_eq!(
            (s.op, s.server_mean_us, s.client_network_mean_us),
            (OpKind::Read, 3.0, 37.0)
        );
        assert_eq!(s.calls_per_request, 1.0);
        assert_eq!(t.splits[1].server_mean_us, 10.0);
        assert_eq!(t.method, "LATENCY HISTOGRAM and INFO commandstats");
    }

    #[test]
    fn kinds_that_share_a_command_are_not_split() {
        let after = CommandTimes::from([("hmset".to_string(), counters(20, 200, &[]))]);
        let run = PhaseResult {
            ops: vec![op(OpKind::Update, 10, 50.0), op(OpKind::Insert, 10, 50.0)],
            ..PhaseResult::default()
        };
        let t = split(
            &CommandTimes::new(),
            &after,
            &run,
            &|_| vec!["hmset".into()],
            None,
        );
        assert!(t.splits.is_empty());
        assert_eq!(t.commands[0].p50_us, None);
        assert_eq!(t.method, "INFO commandstats (means only)");
    }
}
