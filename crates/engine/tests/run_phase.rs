//! The measured window: the operation mix matches the workload, histograms
//! hold exactly the completed operations, and the server's own command
//! counters agree with kvbench's counts.

use crate::load::{load, spec, start};
use kvbench_engine::route::Topology;
use kvbench_engine::{run_phase, Io, PhaseConfig, PhaseKind, PhaseOutput, Silent, Window};
use kvbench_model::{OpKind, SystemKind};
use kvbench_servers::Server;
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::WorkloadSpec;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn run(
    server: &Server,
    spec: &WorkloadSpec,
    ops: u64,
    clients: u32,
    pipeline: u32,
    seed: u64,
    io: Io,
) -> PhaseOutput {
    let cfg = PhaseConfig {
        topology: Topology::Single(server.addr()),
        system: server.system(),
        spec: spec.clone(),
        keys: KeyNamer::default(),
        // No warm-up, so the server's counters must match ours exactly.
        kind: PhaseKind::Run {
            warmup: Duration::ZERO,
            window: Window::Operations(ops),
            rate: None,
        },
        clients,
        pipeline,
        threads: 2,
        seed,
        // A lost reply still ends as an error, but a slow machine (tests
        // in parallel, a debug build moving 80-KB values) is not one.
        timeout: Duration::from_secs(60),
        connect_timeout: Duration::from_secs(5),
        reconnect: None,
        retry: kvbench_engine::Retry::default(),
        stall: kvbench_engine::phase::DEFAULT_STALL,
        access: Default::default(),
        io,
    };
    run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("run phase")
}

fn counts(out: &PhaseOutput) -> (u64, u64) {
    let get = |k: OpKind| {
        out.result
            .ops
            .iter()
            .find(|o| o.op == k)
            .map_or(0, |o| o.completed)
    };
    (get(OpKind::Read), get(OpKind::Update))
}

fn stat(stats: &[(String, u64)], name: &str) -> u64 {
    stats.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v)
}

fn check_mix_and_histograms(out: &PhaseOutput, spec: &WorkloadSpec, ops: u64) {
    let (reads, updates) = counts(out);
    assert_eq!(reads + updates, ops, "every operation completed");
    assert_eq!(out.result.errors, 0);
    let share = reads as f64 / ops as f64;
    assert!(
        (share - spec.read_proportion).abs() < 0.01,
        "read share {share} vs {}",
        spec.read_proportion
    );
    for o in &out.result.ops {
        assert_eq!(o.latency.count, o.completed, "{} histogram count", o.op);
        assert_eq!(
            out.recorder.histogram(o.op).len(),
            o.completed,
            "{} raw histogram",
            o.op
        );
        assert!(
            o.latency.p50_us > 0.0
                && o.latency.p50_us <= o.latency.p99_us
                && o.latency.p99_us <= o.latency.max_us
        );
    }
    assert!(out.result.duration_s > 0.0);
    let expect = ops as f64 / out.result.duration_s;
    assert!((out.result.throughput - expect).abs() / expect < 1e-9);
}

/// Both I/O loops must measure the same things the same way.
const BACKENDS: [Io; 2] = [Io::Tokio, Io::Uring];

#[test]
fn redis_mix_histograms_and_server_counters_agree() {
    for io in BACKENDS {
        let server = start(SystemKind::Redis, None);
        let spec = spec(5_000, 4, 20, 0.9);
        load(&server, &spec, 5);
        let ops = 100_000;
        let out = run(&server, &spec, ops, 8, 4, 5, io);
        check_mix_and_histograms(&out, &spec, ops);
        let (reads, updates) = counts(&out);
        let stats = server.command_stats().expect("commandstats");
        assert_eq!(
            stat(&stats, "hgetall"),
            reads,
            "{io:?}: server-side HGETALL calls"
        );
        assert_eq!(
            stat(&stats, "hmset"),
            spec.record_count + updates,
            "{io:?}: server-side HMSET calls"
        );
    }
}

#[test]
fn memcached_mix_histograms_and_server_counters_agree() {
    for io in BACKENDS {
        let server = start(SystemKind::Memcached, Some(64));
        let spec = spec(5_000, 4, 20, 0.5);
        load(&server, &spec, 5);
        let ops = 100_000;
        let out = run(&server, &spec, ops, 8, 1, 5, io);
        check_mix_and_histograms(&out, &spec, ops);
        let (reads, updates) = counts(&out);
        let stats = server.command_stats().expect("stats");
        assert_eq!(stat(&stats, "cmd_get"), reads, "{io:?}");
        assert_eq!(stat(&stats, "get_hits"), reads, "{io:?}");
        assert_eq!(
            stat(&stats, "cmd_set"),
            spec.record_count + updates,
            "{io:?}"
        );
    }
}

#[test]
fn same_seed_same_operations_on_the_server() {
    let spec = spec(1_000, 2, 10, 0.5);
    let mut seen = Vec::new();
    for io in BACKENDS {
        for _ in 0..2 {
            let server = start(SystemKind::Redis, None);
            load(&server, &spec, 77);
            let out = run(&server, &spec, 20_000, 4, 2, 77, io);
            seen.push(counts(&out));
        }
    }
    assert!(
        seen.windows(2).all(|w| w[0] == w[1]),
        "same seed, same read/update counts, on either I/O loop: {seen:?}"
    );
}

/// The io_uring loop receives into a small ring of 4 KiB provided buffers:
/// here every read reply spans about twenty of them and far more bytes are in
/// flight than the ring holds, so receives run out of buffers and are armed
/// again. With `dataintegrity` every value is compared byte for byte (Redis
/// reads are then HMGET, as YCSB sends them), so a
/// reply stitched together in the wrong order, or a lost piece, is an error.
#[test]
fn uring_reassembles_replies_larger_than_its_receive_buffers() {
    // Hundreds of MB through a debug build: alone, or replies queue for
    // seconds behind other heavy tests.
    let _heavy = crate::serial::timing_sensitive();
    for system in [SystemKind::Redis, SystemKind::Memcached] {
        let server = start(system, Some(256));
        let mut spec = spec(200, 4, 20_000, 0.9);
        spec.data_integrity = true;
        load(&server, &spec, 9);
        let ops = 4_000;
        let out = run(&server, &spec, ops, 64, 8, 9, Io::Uring);
        assert_eq!(
            out.result.errors, 0,
            "{system}: {:?}",
            out.result.error_samples
        );
        let (reads, updates) = counts(&out);
        assert_eq!(reads + updates, ops, "{system}: every operation completed");
        assert!(reads > ops / 2, "{system}: mostly reads ({reads})");
        let stats = server.command_stats().expect("server counters");
        let (read_cmd, write_cmd) = match system {
            SystemKind::Redis => ("hmget", "hmset"),
            _ => ("get_hits", "cmd_set"),
        };
        assert_eq!(stat(&stats, read_cmd), reads, "{system}: server-side reads");
        assert_eq!(
            stat(&stats, write_cmd),
            spec.record_count + updates,
            "{system}: server-side writes"
        );
    }
}
