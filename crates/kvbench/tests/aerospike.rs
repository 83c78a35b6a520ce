//! Aerospike through the command line, on the user's asd
//! (`KVBENCH_AEROSPIKE_BIN`): paper A's three workloads, memory probes, a
//! node killed mid-run, a remote target. The server's own transaction
//! counters against the engine's counts are the engine's test
//! (crates/engine/tests/aerospike.rs). Without the variable each test says
//! it was skipped and why, and passes.
//!
//! Run: `KVBENCH_AEROSPIKE_BIN=/path/to/asd cargo test -p kvbench --test tests aerospike:: -- --nocapture`

use crate::util::{alive, children_of, timing_sensitive, Sandbox};
use kvbench_servers::aerospike::{Aerospike, Config};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The asd to run, or `None` after saying why the test is skipped.
pub(crate) fn binary(test: &str) -> Option<PathBuf> {
    crate::load::aerospike_binary(&format!("aerospike::{test}"))
}

/// paper A's three workloads through the CLI on one node: each run stored
/// with the server's version, settings and memory, nothing failed.
#[test]
fn paper_as_three_workloads_run_through_the_cli() {
    let Some(_) = binary("paper_as_three_workloads_run_through_the_cli") else {
        return;
    };
    let _t = timing_sensitive();
    let sb = Sandbox::new();
    let db = sb.db();
    for workload in ["read-heavy", "balanced", "write-heavy"] {
        let rec = sb.json(&[
            "run",
            "--system",
            "aerospike",
            "--workload",
            workload,
            "--records",
            "2000",
            "--field-count",
            "4",
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--clients",
            "4",
            "--json",
            "--quiet",
            "--db",
            db.to_str().expect("UTF-8 path"),
        ]);
        assert_eq!(rec["status"], "ok", "{workload}: {rec}");
        assert_eq!(rec["environment"]["server_name"], "aerospike");
        assert!(rec["environment"]["server_version"]
            .as_str()
            .is_some_and(|v| v.starts_with(char::is_numeric)));
        assert_eq!(rec["load"]["completed"], 2000, "{workload}");
        assert_eq!(rec["run"]["errors"], 0, "{workload}: {rec}");
        assert!(
            rec["run"]["completed"].as_u64() > Some(500),
            "{workload}: {rec}"
        );
        let after_load = &rec["probes"][1];
        assert_eq!(after_load["stage"], "after_load");
        assert_eq!(after_load["items"], 2000);
        assert!(after_load["server_memory_bytes"].as_u64() > Some(400_000));
        let settings = rec["config"]["server_settings"].to_string();
        assert!(settings.contains("replication-factor"), "{settings}");
    }
}

/// One node of three killed in the measured window: the run ends on time,
/// keeps what it measured, names the node, and stops the other two.
#[test]
fn a_node_killed_mid_run_is_named_and_the_run_kept() {
    let Some(bin) = binary("a_node_killed_mid_run_is_named_and_the_run_kept") else {
        return;
    };
    let _t = timing_sensitive();
    let sb = Sandbox::new();
    let mut child = sb.spawn(&[
        "run",
        "--system",
        "aerospike",
        "--server-bin",
        bin.to_str().expect("UTF-8 path"),
        "--topology",
        "cluster",
        "--nodes",
        "3",
        "--workload",
        "balanced",
        "--records",
        "3000",
        "--field-count",
        "4",
        "--duration",
        "4s",
        "--warmup",
        "200ms",
        "--clients",
        "4",
        "--timeout",
        "1s",
        "--json",
        "--db",
        sb.db().to_str().expect("UTF-8 path"),
    ]);
    let pid = child.id();
    let nodes = crate::util::wait_for_children(pid, 3, |_| true);
    // Into the window: the live view's first second is printed.
    let stderr = child.stderr.take().expect("stderr");
    let (seen, in_window) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
            if line.trim_start().starts_with("run 1s") {
                let _ = seen.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    in_window
        .recv_timeout(Duration::from_secs(60))
        .expect("the run reaches its window");
    // SAFETY: kill has no memory preconditions; the pid is our grandchild.
    assert_eq!(unsafe { libc::kill(nodes[1] as i32, libc::SIGKILL) }, 0);
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("kvbench hung after an Aerospike node died");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().expect("output");
    let stderr = reader.join().expect("stderr reader");
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(status.code(), Some(3), "marked invalid: {stderr}");
    let marks = rec["marks"].to_string();
    assert!(marks.contains("node-down"), "{marks}");
    assert!(rec["run"]["completed"].as_u64() > Some(500), "{rec}");
    // The dead node's partitions: failed calls until the client saw it go,
    // then misses and refused updates on the nodes that took them over.
    let failed = rec["run"]["errors"].as_u64().unwrap_or(0);
    let misses: u64 = rec["run"]["ops"]
        .as_array()
        .map(|ops| ops.iter().filter_map(|o| o["misses"].as_u64()).sum())
        .unwrap_or(0);
    assert!(failed + misses > 0, "{rec}");
    for n in nodes {
        assert!(!alive(n), "asd {n} outlived kvbench");
    }
    assert!(children_of(pid).is_empty());
}

/// A server kvbench did not start, as `--target aerospike://HOST:PORT[/ns]`:
/// run, stored with its URL; a second load into the same namespace refused
/// (exit 2) unless allowed; a password never printed or stored.
#[test]
fn a_remote_aerospike_is_run_refused_when_full_and_its_password_kept_out() {
    let Some(bin) = binary("a_remote_aerospike_is_run_refused_when_full_and_its_password_kept_out")
    else {
        return;
    };
    let _t = timing_sensitive();
    let server = Aerospike::start(&bin, Config::default(), 1).expect("asd starts");
    let addr = server.addrs()[0];
    let sb = Sandbox::new();
    let db = sb.db();
    let db = db.to_str().expect("UTF-8 path");
    let target = format!("aerospike://{addr}");
    let args = |target: &str| -> Vec<String> {
        [
            "run",
            "--system",
            "aerospike",
            "--target",
            target,
            "--workload",
            "balanced",
            "--records",
            "1000",
            "--field-count",
            "4",
            "--duration",
            "1s",
            "--warmup",
            "100ms",
            "--clients",
            "2",
            "--json",
            "--quiet",
            "--db",
            db,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let a = args(&target);
    let rec = sb.json(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(rec["status"], "ok", "{rec}");
    assert_eq!(rec["config"]["target"], format!("aerospike://{addr}/ycsb"));
    assert_eq!(rec["load"]["completed"], 1000);
    assert_eq!(
        rec["probes"][1]["items"], 1000,
        "the target's namespace probed"
    );

    // The namespace now holds the records: refused before anything runs.
    let out = sb.kvbench().args(&a).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already holds 1000 keys"), "{err}");

    // A namespace the server does not have: one line naming it.
    let out = sb
        .kvbench()
        .args(args(&format!("aerospike://{addr}/nosuch")))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no namespace 'nosuch'"), "{err}");

    // Community Edition has no users: the login fails; the password is
    // nowhere in what kvbench printed or stored.
    let secret = "hunter2-not-printed";
    let mut a = args(&format!("aerospike://bench:{secret}@{addr}/ycsb"));
    a.push("--allow-existing".into());
    let out = sb.kvbench().args(&a).output().expect("runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!printed.contains(secret), "{printed}");
    assert!(printed.contains("bench:***@"), "{printed}");
    let stored = std::fs::read(sb.db()).expect("database");
    assert!(!stored.windows(secret.len()).any(|w| w == secret.as_bytes()));
    server.stop().expect("clean stop");
}
