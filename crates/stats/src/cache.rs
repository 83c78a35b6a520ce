//! A memory-limited window's cache figures (`--max-memory`): the hit
//! ratio from kvbench's counts, evictions and memory from the servers'
//! counters sampled through the window. The figures are defined in
//! docs/metrics.md, "Caches under a memory limit".

use kvbench_model::{
    CacheFigures, CacheSecond, NodeProbe, OpKind, PhaseResult, Probe, ServerSecond,
};

/// The figures of probe `p` at `at_s`: a multi-node probe's data
/// nodes only (a replica's memory and evictions mirror its master's).
pub fn server_second(at_s: u32, p: &Probe) -> ServerSecond {
    let data: Vec<_> = p.nodes.iter().filter(|n| n.role != "replica").collect();
    if data.is_empty() {
        return ServerSecond {
            at_s,
            server_memory_bytes: p.server_memory_bytes,
            items: p.items,
            evictions: p.evictions,
        };
    }
    let sum =
        |f: &dyn Fn(&NodeProbe) -> Option<u64>| -> Option<u64> { data.iter().map(|n| f(n)).sum() };
    ServerSecond {
        at_s,
        server_memory_bytes: sum(&|n| n.server_memory_bytes),
        items: sum(&|n| n.items),
        evictions: sum(&|n| n.evictions),
    }
}

/// The figures of window `run`, from its reads, the servers' counters
/// once a second (`samples`, the first at the window's start) and the
/// limit over every data-holding server.
pub fn figures(run: &PhaseResult, samples: &[ServerSecond], limit_bytes: u64) -> CacheFigures {
    let reads = run.ops.iter().filter(|o| o.op == OpKind::Read && !o.with);
    let (hits, misses) = reads.fold((0, 0), |(h, m), o| (h + o.completed, m + o.misses));
    let ratio = |h: u64, m: u64| (h + m > 0).then(|| h as f64 / (h + m) as f64);
    let evictions = match (samples.first(), samples.last()) {
        (Some(a), Some(b)) if samples.len() > 1 => b
            .evictions
            .zip(a.evictions)
            .map(|(b, a)| b.saturating_sub(a)),
        _ => None,
    };
    let last = samples.last();
    let server_memory_bytes = last.and_then(|s| s.server_memory_bytes);
    let mut seconds: Vec<CacheSecond> = run
        .series
        .iter()
        .filter(|p| p.op == OpKind::Read)
        .map(|p| CacheSecond {
            second: p.second,
            hit_ratio: ratio(p.completed, p.misses),
            evictions: None,
            server_memory_bytes: None,
        })
        .collect();
    // The last sample is read when the phase is over, a moment after
    // the window: it closes the window's last second, never one of its own.
    let seconds_in_window = run.duration_s.ceil() as u32;
    for pair in samples.windows(2) {
        let second = pair[0].at_s;
        if second >= seconds_in_window {
            continue;
        }
        let evicted = pair[1]
            .evictions
            .zip(pair[0].evictions)
            .map(|(b, a)| b.saturating_sub(a));
        match seconds.iter_mut().find(|s| s.second == second) {
            Some(s) => {
                s.evictions = evicted;
                s.server_memory_bytes = pair[1].server_memory_bytes;
            }
            None => seconds.push(CacheSecond {
                second,
                hit_ratio: None,
                evictions: evicted,
                server_memory_bytes: pair[1].server_memory_bytes,
            }),
        }
    }
    seconds.sort_by_key(|s| s.second);
    CacheFigures {
        hits,
        misses,
        hit_ratio: ratio(hits, misses),
        evictions,
        evictions_per_s: evictions
            .filter(|_| run.duration_s > 0.0)
            .map(|e| e as f64 / run.duration_s),
        limit_bytes,
        server_memory_bytes,
        memory_of_limit: server_memory_bytes
            .filter(|_| limit_bytes > 0)
            .map(|m| m as f64 / limit_bytes as f64),
        seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvbench_model::{OpResult, SeriesPoint};

    fn op(op: OpKind, completed: u64, misses: u64) -> OpResult {
        OpResult {
            completed,
            misses,
            ..OpResult::empty(op)
        }
    }

    fn point(second: u32, completed: u64, misses: u64) -> SeriesPoint {
        SeriesPoint {
            second,
            op: OpKind::Read,
            completed,
            misses,
            errors: 0,
            p50_us: 0.0,
            p99_us: 0.0,
            p999_us: 0.0,
            histogram: String::new(),
        }
    }

    fn sample(at_s: u32, evictions: u64, memory: u64) -> ServerSecond {
        ServerSecond {
            at_s,
            server_memory_bytes: Some(memory),
            items: None,
            evictions: Some(evictions),
        }
    }

    #[test]
    fn the_window_and_each_second_count_only_reads_and_evictions_inside_it() {
        let run = PhaseResult {
            duration_s: 2.0,
            ops: vec![op(OpKind::Read, 700, 300), op(OpKind::Update, 1000, 0)],
            series: vec![point(0, 300, 200), point(1, 400, 100)],
            ..PhaseResult::default()
        };
        // 50 evictions before the window (the load's) are not the window's.
        // The sampler's last read, just after the window, adds no second.
        let samples = [
            sample(0, 50, 90),
            sample(1, 80, 99),
            sample(2, 150, 100),
            sample(3, 150, 100),
        ];
        let c = figures(&run, &samples, 100);
        assert_eq!((c.hits, c.misses, c.hit_ratio), (700, 300, Some(0.7)));
        assert_eq!((c.evictions, c.evictions_per_s), (Some(100), Some(50.0)));
        assert_eq!(
            (c.server_memory_bytes, c.memory_of_limit),
            (Some(100), Some(1.0))
        );
        let per: Vec<_> = c
            .seconds
            .iter()
            .map(|s| (s.second, s.hit_ratio, s.evictions))
            .collect();
        assert_eq!(per, [(0, Some(0.6), Some(30)), (1, Some(0.8), Some(70))]);
    }

    #[test]
    fn without_samples_or_reads_the_figures_say_unknown_not_zero() {
        let run = PhaseResult {
            duration_s: 1.0,
            ops: vec![op(OpKind::Update, 10, 0)],
            ..PhaseResult::default()
        };
        let c = figures(&run, &[], 0);
        assert_eq!(
            (c.hit_ratio, c.evictions, c.memory_of_limit),
            (None, None, None)
        );
        assert!(c.seconds.is_empty());
    }

    #[test]
    fn replicas_are_left_out_of_the_data_nodes_sums() {
        let node = |role: &str, ev: u64| NodeProbe {
            addr: String::new(),
            role: role.into(),
            rss_bytes: None,
            server_memory_bytes: Some(10),
            cpu_seconds: None,
            items: Some(5),
            evictions: Some(ev),
        };
        let p = Probe::summed(
            "x",
            vec![node("master", 3), node("replica", 3), node("master", 4)],
        );
        let s = server_second(7, &p);
        assert_eq!(
            (s.at_s, s.evictions, s.items, s.server_memory_bytes),
            (7, Some(7), Some(10), Some(20))
        );
    }
}
