//! Memcached pools: kvbench starts N servers and places every key where the
//! client library's ketama ring puts it (the ring itself is checked against
//! libmemcached key by key in kvbench-engine's tests); a server that dies
//! mid-run costs errors on its share only, and the run finishes, marked.

use crate::load::spec;
use crate::util::{alive, wait_for_children, Sandbox};
use kvbench_engine::route::ketama::Variant;
use kvbench_engine::route::{pool_ring, Topology};
use kvbench_engine::{run_phase, Io, PhaseConfig, PhaseKind, Silent, Window};
use kvbench_model::SystemKind;
use kvbench_proto::memcache_text as mc;
use kvbench_servers::{Pool, ServerSpec};
use kvbench_workload::keys::KeyNamer;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The keys of `wanted` that the server at `addr` holds (multi-gets).
fn held(addr: SocketAddr, wanted: &[String]) -> BTreeSet<String> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut found = BTreeSet::new();
    for chunk in wanted.chunks(100) {
        let line = format!("get {}\r\n", chunk.join(" "));
        s.write_all(line.as_bytes()).expect("send");
        let mut buf = Vec::new();
        let mut part = [0u8; 65536];
        let items = loop {
            if let Some((items, _)) = mc::parse_values(&buf).expect("memcache reply") {
                break items;
            }
            let n = s.read(&mut part).expect("receive");
            assert!(n > 0, "closed");
            buf.extend_from_slice(&part[..n]);
        };
        found.extend(
            items
                .into_iter()
                .map(|(k, _, _)| String::from_utf8_lossy(&k).into_owned()),
        );
    }
    found
}

#[test]
fn every_key_is_on_the_server_the_clients_ring_chooses() {
    for variant in [Variant::Libmemcached, Variant::Spymemcached] {
        let pool = Pool::start(&ServerSpec::new(SystemKind::Memcached), 3).expect("pool");
        let spec = spec(4000, 2, 20, 0.5);
        let keys = KeyNamer::default();
        let mut cfg = PhaseConfig {
            topology: Topology::Pool(pool.addrs(), variant),
            system: SystemKind::Memcached,
            spec: spec.clone(),
            keys: keys.clone(),
            kind: PhaseKind::Load,
            clients: 3,
            pipeline: 16,
            threads: 2,
            seed: 5,
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            reconnect: None,
            retry: kvbench_engine::Retry::default(),
            stall: kvbench_engine::phase::DEFAULT_STALL,
            access: Default::default(),
            io: Io::auto(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let load = run_phase(&cfg, &Silent, &stop).expect("load");
        assert_eq!((load.result.completed, load.result.errors), (4000, 0));

        // YCSB's memcached key: table, dash, record key; the ring hashes it.
        let ring = pool_ring(&pool.addrs(), variant).expect("ring");
        let mut expected: Vec<Vec<String>> = vec![Vec::new(); 3];
        for n in 0..4000 {
            let mut k = Vec::new();
            keys.write_key(n, &mut k);
            let wire = format!("usertable-{}", String::from_utf8_lossy(&k));
            expected[ring.server_for(wire.as_bytes())].push(wire);
        }
        let all: Vec<String> = expected.concat();
        for (i, addr) in pool.addrs().into_iter().enumerate() {
            let want: BTreeSet<String> = expected[i].iter().cloned().collect();
            assert!(
                want.len() > 900,
                "{variant:?}: node {i} got {} keys",
                want.len()
            );
            assert_eq!(
                held(addr, &all),
                want,
                "{variant:?}: node {i} holds exactly its keys"
            );
        }

        // The run reports each node's share, and the shares add up.
        cfg.kind = PhaseKind::Run {
            warmup: Duration::ZERO,
            window: Window::Operations(6000),
            rate: None,
        };
        let run = run_phase(&cfg, &Silent, &stop).expect("run");
        assert_eq!((run.result.completed, run.result.errors), (6000, 0));
        let nodes = &run.result.nodes;
        assert_eq!(nodes.len(), 3);
        assert_eq!(nodes.iter().map(|n| n.replies).sum::<u64>(), 6000);
        assert!(
            nodes.iter().all(|n| n.replies > 1000 && n.errors == 0),
            "{nodes:?}"
        );
        pool.stop().expect("clean stop");
    }
}

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
