//! Memcached pools through the command line: a server that dies mid-run
//! costs errors on its share only, and the run finishes, marked; twemproxy
//! spreads a pool behind one address. That every key lands where the
//! client library's ketama ring puts it is the engine's own test
//! (crates/engine/tests/pool.rs; the ring against libmemcached key by key
//! in ketama_libmemcached.rs).

use crate::util::{alive, wait_for_children, Sandbox};
use std::time::{Duration, Instant};

#[test]
fn a_pool_server_killed_mid_run_costs_its_share_and_the_run_is_marked() {
    let sb = Sandbox::new();
    let mut child = sb.spawn(&[
        "run",
        "--system",
        "memcached",
        "--topology",
        "pool",
        "--nodes",
        "3",
        "--workload",
        "read-heavy",
        "--records",
        "2000",
        "--field-count",
        "2",
        "--duration",
        "4s",
        "--warmup",
        "200ms",
        "--clients",
        "6",
        "--quiet",
        "--json",
    ]);
    let pid = child.id();
    let servers = wait_for_children(pid, 3, |_| true);
    // Into the measured window, then one server dies.
    std::thread::sleep(Duration::from_millis(1500));
    let victim = servers[1];
    // SAFETY: kill has no memory preconditions; the pid is our grandchild.
    assert_eq!(unsafe { libc::kill(victim as i32, libc::SIGKILL) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("kvbench hung after a pool server died");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(3), "marked invalid: {stderr}");
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(rec["status"], "invalid");
    let marks = rec["marks"].to_string();
    assert!(marks.contains("node-down"), "{marks}");
    assert!(marks.contains("errors"), "{marks}");
    let nodes = rec["run"]["nodes"].as_array().expect("per-node counts");
    let failing: Vec<&serde_json::Value> = nodes
        .iter()
        .filter(|n| n["errors"].as_u64() > Some(0))
        .collect();
    assert_eq!(
        failing.len(),
        1,
        "errors on the dead server only: {nodes:?}"
    );
    assert!(
        nodes.iter().all(|n| n["replies"].as_u64() > Some(0)),
        "{nodes:?}"
    );
    assert!(rec["run"]["completed"].as_u64() > Some(1000), "{rec}");
    // Nothing left running.
    for s in servers {
        assert!(!alive(s), "server {s} outlived kvbench");
    }
}

#[test]
fn twemproxy_spreads_a_pool_behind_one_address() {
    let sb = Sandbox::new();
    for system in ["memcached", "redis"] {
        let out = sb
            .kvbench()
            .args([
                "run",
                "--system",
                system,
                "--topology",
                "twemproxy",
                "--nodes",
                "3",
            ])
            .args([
                "--workload",
                "balanced",
                "--records",
                "3000",
                "--operations",
                "6000",
            ])
            .args([
                "--field-count",
                "2",
                "--warmup",
                "100ms",
                "--quiet",
                "--json",
            ])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{system}: {stderr}");
        let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(rec["status"], "ok", "{system}: {rec}");
        assert_eq!(rec["config"]["topology"], "twemproxy");
        assert_eq!(rec["run"]["completed"], 6000);
        let after = &rec["probes"][2];
        assert_eq!(after["items"], 3000, "{system}: {after}");
        let nodes = after["nodes"].as_array().expect("nodes");
        let roles: Vec<&str> = nodes.iter().filter_map(|n| n["role"].as_str()).collect();
        assert_eq!(roles, ["node", "node", "node", "proxy"], "{system}");
        // The proxy hashed the keys over every server.
        for n in &nodes[..3] {
            assert!(n["items"].as_u64() > Some(500), "{system}: {n}");
        }
        assert!(
            nodes[3]["rss_bytes"].as_u64() > Some(0),
            "{system}: proxy RSS"
        );
        let settings = rec["config"]["server_settings"].to_string();
        assert!(settings.contains("twemproxy.distribution"), "{settings}");
    }
}
