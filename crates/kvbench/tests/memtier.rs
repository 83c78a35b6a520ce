//! The simple workload in memtier_benchmark's terms (`--ratio`,
//! `--data-size`, `--key-pattern`, `--key-minimum/maximum`, pipelining):
//! what it sends, checked through a real Redis, and what it measures under
//! pipelining, checked against a server that delays each reply.

use crate::fake_server::{within_attempts, SlowServer};
use crate::load::phase_config;
use crate::util::{op, Sandbox};
use kvbench_engine::{run_phase, PhaseKind, Silent, Window};
use kvbench_model::{OpKind, SystemKind};
use kvbench_workload::{presets, WorkloadSpec};
use serde_json::Value;
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
    let _serial = crate::util::timing_sensitive();
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

fn items_after_run(v: &Value) -> u64 {
    v["probes"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["stage"] == "after_run"))
        .and_then(|p| p["items"].as_u64())
        .expect("an after-run probe with items")
}

/// `--ratio` cycles exactly, at pipeline 4 and 50, and both latencies are
/// reported; the key patterns write the keys memtier's would, counted by
/// the server itself.
#[test]
fn memtier_flags_drive_a_real_redis_as_memtier_would() {
    let sb = Sandbox::new();
    let base = [
        "run",
        "--system",
        "redis",
        "--workload",
        "memtier",
        "--clients",
        "2",
        "--warmup",
        "0s",
        "--quiet",
        "--json",
    ];
    for pipeline in ["4", "50"] {
        let mut args = base.to_vec();
        args.extend([
            "--ratio",
            "1:3",
            "--data-size",
            "100",
            "--key-pattern",
            "R:R",
            "--key-maximum",
            "999",
            "--pipeline",
            pipeline,
            "--operations",
            "8000",
        ]);
        let v = sb.json(&args);
        assert_eq!(v["status"], "ok", "{v}");
        // 4,000 per client, cycled 1 SET then 3 GETs: exactly 1,000 + 3,000.
        let (set, get) = (op(&v, "update"), op(&v, "read"));
        assert_eq!(set["completed"], 2000, "{set}");
        assert_eq!(get["completed"], 6000, "{get}");
        assert_eq!(get["misses"], 0, "every key 0..=999 was loaded: {get}");
        for o in [set, get] {
            let per = o["per_pipeline"]["mean_us"].as_f64().expect("per_pipeline");
            let mean = o["latency"]["mean_us"].as_f64().expect("latency");
            let depth: f64 = pipeline.parse().expect("number");
            assert!((per * depth - mean).abs() < 1e-6 * mean, "{o}");
        }
        assert_eq!(items_after_run(&v), 1000, "keys memtier-0..=memtier-999");
    }
    // Without a load, SETs alone show where each pattern puts keys. S: both
    // clients walk 0..; P: each walks its own half; 500 SETs per client.
    for (pattern, keys) in [("S:S", 500), ("P:P", 1000)] {
        let mut args = base.to_vec();
        args.extend([
            "--ratio",
            "1:0",
            "--key-pattern",
            pattern,
            "--key-maximum",
            "9999",
            "--no-load",
            "--operations",
            "1000",
        ]);
        let v = sb.json(&args);
        assert_eq!(op(&v, "update")["completed"], 1000, "{pattern}");
        assert_eq!(items_after_run(&v), keys, "{pattern}");
    }
}

/// Command templates are split into arguments as redis-cli splits a line
/// (its `sdssplitargs`, which memtier copies): each line goes to a real
/// Redis through redis-cli as `RPUSH`, and the list Redis holds must be the
/// arguments kvbench's parser gives.
#[test]
fn command_templates_split_as_redis_cli_splits_them() {
    use kvbench_proto::resp::{self, Value};
    use kvbench_workload::command::{Arg, CommandTemplate};
    use std::io::Write;
    let server = crate::load::start(SystemKind::Redis, None);
    let lines = [
        r#"RPUSH t1 "a b" 'it\'s' "\x41\n" x"y z""#,
        r#"RPUSH t2 '\x41' "\\" "q\"q"   "tab\there"	last"#,
        r#"RPUSH t3 a"b c" "" '' "\xzz" "\e""#,
    ];
    let mut cli = std::process::Command::new("redis-cli")
        .args(["-p", &server.addr().port().to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-cli");
    let mut stdin = cli.stdin.take().expect("stdin");
    for l in lines {
        writeln!(stdin, "{l}").expect("write");
    }
    drop(stdin);
    assert!(cli.wait().expect("redis-cli").success());
    let mut sock = std::net::TcpStream::connect(server.addr()).expect("connect");
    for (i, l) in lines.iter().enumerate() {
        let t = CommandTemplate::parse(l).expect("parses");
        let ours: Vec<Vec<u8>> = t.args[2..]
            .iter()
            .map(|a| match a {
                Arg::Literal(b) => b.clone(),
                other => panic!("no placeholders here: {other:?}"),
            })
            .collect();
        let mut req = Vec::new();
        let key = format!("t{}", i + 1);
        resp::encode_command(&mut req, &[b"LRANGE", key.as_bytes(), b"0", b"-1"]);
        let held = crate::load::exchange(&mut sock, &req, |b| resp::parse_value(b).ok().flatten());
        let Value::Array(items) = held else {
            panic!("{l}: {held:?}")
        };
        let theirs: Vec<Vec<u8>> = items
            .iter()
            .map(|v| v.as_bytes().expect("bulk").to_vec())
            .collect();
        assert_eq!(ours, theirs, "{l}");
    }
}
