//! Memcached pools in the engine: N servers, every key placed where the
//! client library's ketama ring puts it (libmemcached's and spymemcached's
//! rings), each node's share of a run reported and adding up.

use crate::load::{phase_on, spec};
use kvbench_engine::route::ketama::Variant;
use kvbench_engine::route::{pool_ring, Topology};
use kvbench_engine::{run_phase, PhaseConfig, PhaseKind, Silent, Window};
use kvbench_model::SystemKind;
use kvbench_proto::memcache_text as mc;
use kvbench_servers::{Pool, ServerSpec};
use kvbench_workload::keys::KeyNamer;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

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
            keys: keys.clone(),
            threads: 2,
            seed: 5,
            ..phase_on(
                Topology::Pool(pool.addrs(), variant),
                SystemKind::Memcached,
                &spec,
                PhaseKind::Load,
                3,
                16,
            )
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
            // Not vacuous: every node holds a fair part of the keys. The
            // ring's points follow the servers' free ports, so a node's share
            // moves from run to run (a third is 1,333; 900 was seen missed).
            assert!(
                want.len() > 400,
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
