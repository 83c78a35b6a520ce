//! Pipelined requests in the engine: each timed from its own send to its
//! own reply, and also reported per pipeline as paper C does, checked
//! against a server that delays each reply.

use crate::fake_server::{within_attempts, SlowServer};
use crate::load::phase_config;
use kvbench_engine::{run_phase, PhaseKind, Silent, Window};
use kvbench_model::{OpKind, SystemKind};
use kvbench_workload::{presets, WorkloadSpec};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The `memtier` preset with `--ratio 1:0` (SETs only: the slow server
/// answers `+OK` to everything).
fn sets_only() -> WorkloadSpec {
    let mut props = presets::find("memtier").expect("preset");
    for (k, v) in [("updateproportion", "1"), ("readproportion", "0")] {
        props.apply_override(&format!("{k}={v}")).expect("override");
    }
    WorkloadSpec::from_properties(&props).expect("spec").0
}

/// One client, one pipeline's worth of SETs to a server that answers each
/// command `delay` after the previous one: request `i` (from 1) completes at
/// about `i * delay`, and that is its latency. Divided by the pipeline, as
/// paper C reports it, the mean is `(pipeline + 1) / 2 * delay / pipeline`.
#[test]
fn pipelined_sets_are_timed_per_request_and_reported_per_pipeline_too() {
    let _serial = crate::serial::timing_sensitive();
    // 10 ms steps at pipeline 50 (half a second): a thread descheduled
    // for 10 ms at a time must not move a reply past the allowance below.
    for (pipeline, delay_ms) in [(4u32, 20u64), (50, 10)] {
        let server = SlowServer::start(Duration::from_millis(delay_ms));
        let spec = sets_only();
        let kind = PhaseKind::Run {
            warmup: Duration::ZERO,
            window: Window::Operations(u64::from(pipeline)),
            rate: None,
        };
        let cfg = phase_config(server.addr, SystemKind::Redis, &spec, kind, 1, pipeline);
        within_attempts(3, || {
            let out = run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("runs");
            let h = out.recorder.histogram(OpKind::Update);
            assert_eq!(h.len(), u64::from(pipeline));
            let mut ms: Vec<f64> = Vec::new();
            for v in h.iter_recorded() {
                for _ in 0..v.count_at_value() {
                    ms.push(v.value_iterated_to() as f64 / 1e6);
                }
            }
            ms.sort_by(f64::total_cmp);
            // Timing the whole batch would give every request the last time.
            for (i, v) in ms.iter().enumerate() {
                let expect = (delay_ms * (i as u64 + 1)) as f64;
                if *v < expect - 0.5 || *v >= expect * 1.1 + 10.0 {
                    return Err(format!(
                        "pipeline {pipeline}, request {i}: {v} ms, expected about {expect} ms (all: {ms:?})"
                    ));
                }
            }
            let op = &out.result.ops[0];
            let per = op.per_pipeline.as_ref().expect("per-pipeline latency");
            let mean_ms = op.latency.mean_us / 1e3;
            let ideal = (f64::from(pipeline) + 1.0) / 2.0 * delay_ms as f64;
            if mean_ms < ideal - 0.5 || mean_ms >= ideal * 1.1 + 10.0 {
                return Err(format!(
                    "pipeline {pipeline}: mean {mean_ms} ms, expected about {ideal} ms"
                ));
            }
            // Exact relations, whatever the timing.
            assert!((per.mean_us * f64::from(pipeline) - op.latency.mean_us).abs() < 1e-6);
            assert!((per.p99_us * f64::from(pipeline) - op.latency.p99_us).abs() < 1e-6);
            assert_eq!(per.count, op.latency.count);
            Ok(())
        });
    }
}
