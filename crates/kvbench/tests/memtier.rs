//! The simple workload in memtier_benchmark's terms (`--ratio`,
//! `--data-size`, `--key-pattern`, `--key-minimum/maximum`, pipelining):
//! what it sends, checked through a real Redis. What it measures under
//! pipelining is the engine's own test (crates/engine/tests/pipelined.rs).

use crate::util::{op, Sandbox};
use kvbench_model::SystemKind;
use serde_json::Value;

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
