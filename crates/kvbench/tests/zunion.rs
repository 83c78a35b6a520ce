//! The complex workload (paper C) through the command line: on a target,
//! the run reads its destinations back and `--cleanup` removes them too;
//! beside the simple group, both groups are reported. That each union is
//! checked against the sets the server holds is the engine's own test
//! (crates/engine/tests/zunion.rs).

use crate::load::{exchange, start};
use crate::util::Sandbox;
use kvbench_model::SystemKind;
use kvbench_proto::resp::{self, Value};
use std::net::TcpStream;

/// Through the CLI on a server kvbench did not start: the run reads its
/// destinations back, and `--cleanup` leaves the database as it found it.
#[test]
fn a_zunionstore_run_is_checked_and_cleaned_up_on_a_remote_target() {
    let server = start(SystemKind::Redis, None);
    let sb = Sandbox::new();
    let url = format!("redis://{}", server.addr());
    let out = sb
        .kvbench()
        .args([
            "run",
            "--system",
            "redis",
            "--workload",
            "zunionstore",
            "-p",
            "kvbench.zset.members=300",
            "-p",
            "recordcount=8",
            "--clients",
            "3",
            "--operations",
            "30",
            "--warmup",
            "0s",
            "--target",
            &url,
            "--cleanup",
            "--json",
        ])
        .output()
        .expect("kvbench runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("destinations read back, each the expected union"),
        "{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["run"]["ops"][0]["op"], "zunionstore");
    assert_eq!(v["run"]["ops"][0]["completed"], 30);
    let mut sock = TcpStream::connect(server.addr()).expect("connect");
    let mut req = Vec::new();
    resp::encode_command(&mut req, &[b"DBSIZE"]);
    let size = exchange(&mut sock, &req, |b| resp::parse_value(b).ok().flatten());
    assert_eq!(size, Value::Integer(0));
}

fn ops_per_s(v: &serde_json::Value, name: &str) -> f64 {
    crate::util::op(v, name)["throughput"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: no throughput"))
}

/// Paper C's combined workload: the simple SET:GET group alone, then with a
/// ZUNIONSTORE group on the same server at the same time. Both groups'
/// results are in the run, and the simple group's throughput falls under
/// the complex load (Redis runs one command at a time).
#[test]
fn a_complex_group_beside_the_simple_one_slows_it_and_both_are_reported() {
    let sb = Sandbox::new();
    let simple = [
        "run",
        "--system",
        "redis",
        "--workload",
        "altoros/simple",
        "--key-maximum",
        "9999",
        "--clients",
        "2",
        "--pipeline",
        "4",
        "--duration",
        "2s",
        "--warmup",
        "500ms",
        "--quiet",
        "--json",
    ];
    let alone = sb.json(&simple);
    let mut args = simple.to_vec();
    args.extend([
        "--with",
        "zunionstore",
        "--with-clients",
        "2",
        "--with-property",
        "kvbench.zset.members=5000",
    ]);
    let both = sb.json(&args);
    assert_eq!(both["status"], "ok", "{both}");
    assert_eq!(both["config"]["companion"]["workload"], "zunionstore");
    assert_eq!(both["config"]["companion"]["clients"], 2);
    let unions = ops_per_s(&both, "zunionstore");
    assert!(unions > 0.0, "{}", both["run"]);
    let (before, after) = (ops_per_s(&alone, "update"), ops_per_s(&both, "update"));
    assert!(
        after < before / 2.0,
        "SETs: {before:.0}/s alone, {after:.0}/s beside {unions:.0} unions/s"
    );
    // What cannot be combined is refused up front, with one line and exit 2.
    for (extra, mentions) in [
        (&["--with", "memtier"][..], "both groups would run"),
        (
            &["--with", "zunionstore", "--operations", "100"],
            "--with needs --duration",
        ),
    ] {
        let mut args: Vec<&str> = simple
            .iter()
            .copied()
            .filter(|a| !["--duration", "2s"].contains(a))
            .collect();
        if !extra.contains(&"--operations") {
            args.extend(["--duration", "1s"]);
        }
        args.extend(extra);
        let out = sb.kvbench().args(&args).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(mentions), "{extra:?}: {stderr}");
    }
}
