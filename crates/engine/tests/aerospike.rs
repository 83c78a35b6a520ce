//! Aerospike in the engine, on the user's asd (`KVBENCH_AEROSPIKE_BIN`):
//! the load and a 50/50 mix on one node and on a 3-node mesh cluster, the
//! server's own transaction counters against the engine's counts, and the
//! namespace's memory. Without the variable the test says it was skipped
//! and why, and passes.
//!
//! Run: `KVBENCH_AEROSPIKE_BIN=/path/to/asd cargo test -p kvbench-engine --test phases aerospike:: -- --nocapture`

use crate::load::aerospike_binary;
use crate::serial::timing_sensitive;
use kvbench_connect::Access;
use kvbench_engine::route::Topology;
use kvbench_engine::{run_phase, Io, PhaseConfig, PhaseKind, Silent, Window};
use kvbench_model::SystemKind;
use kvbench_proto::aerospike_info;
use kvbench_servers::aerospike::{self as asd, Aerospike, Config};
use kvbench_workload::{Properties, WorkloadSpec};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn spec(extra: &str) -> WorkloadSpec {
    let text = format!(
        "recordcount=3000\nfieldcount=4\nfieldlength=50\ninsertorder=ordered\nrequestdistribution=uniform\n{extra}"
    );
    let props = Properties::parse(&text, "test").expect("properties");
    WorkloadSpec::from_properties(&props).expect("spec").0
}

fn config(server: &Aerospike, spec: &WorkloadSpec, kind: PhaseKind) -> PhaseConfig {
    let addrs = server.addrs();
    PhaseConfig {
        topology: if addrs.len() > 1 {
            Topology::Cluster(addrs)
        } else {
            Topology::Single(addrs[0])
        },
        system: SystemKind::Aerospike,
        spec: spec.clone(),
        keys: spec.key_namer(),
        kind,
        clients: 4,
        pipeline: 2,
        threads: 2,
        seed: 11,
        timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(5),
        reconnect: None,
        retry: kvbench_engine::Retry::default(),
        stall: Duration::from_secs(1),
        access: Arc::new(Access {
            namespace: Some(server.namespace().to_string()),
            ..Access::plain()
        }),
        io: Io::Tokio,
    }
}

/// The namespace's client transaction counters, summed over the nodes.
fn counters(server: &Aerospike) -> (u64, u64, u64) {
    let ns = format!("namespace/{}", server.namespace());
    let (mut reads, mut misses, mut writes) = (0, 0, 0);
    for addr in server.addrs() {
        let m = asd::info(addr, &[&ns], Duration::from_secs(2)).expect("info");
        let p = aerospike_info::parse_pairs(m.get(&ns).map_or("", String::as_str));
        let n = |k: &str| p.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        reads += n("client_read_success");
        misses += n("client_read_not_found");
        writes += n("client_write_success");
    }
    (reads, misses, writes)
}

#[test]
fn the_servers_counters_match_what_kvbench_counted_on_one_node_and_three() {
    let Some(bin) = aerospike_binary(
        "aerospike::the_servers_counters_match_what_kvbench_counted_on_one_node_and_three",
    ) else {
        return;
    };
    let _t = timing_sensitive();
    let stop = Arc::new(AtomicBool::new(false));
    for nodes in [1, 3] {
        let server = Aerospike::start(&bin, Config::default(), nodes).expect("asd starts");
        let spec = spec("readproportion=0.5\nupdateproportion=0.5\n");
        let load =
            run_phase(&config(&server, &spec, PhaseKind::Load), &Silent, &stop).expect("load");
        assert_eq!(
            load.result.completed, 3000,
            "{nodes} nodes: {:?}",
            load.result.error_samples
        );
        assert_eq!(load.result.errors, 0);
        assert_eq!(
            counters(&server),
            (0, 0, 3000),
            "the server wrote each record once"
        );
        let probe = server.probe("after_load").expect("probe");
        assert_eq!(probe.items, Some(3000));
        let memory = probe.server_memory_bytes.expect("namespace memory");
        // 3,000 records of 4 x 50 B bins: at least the values, at most 4x.
        assert!((600_000..2_400_000).contains(&memory), "{memory} B");
        if nodes == 3 {
            // replication-factor 1: every record on exactly one node, each node some.
            assert_eq!(probe.nodes.len(), 3);
            assert!(
                probe.nodes.iter().all(|n| n.items > Some(300)),
                "{:?}",
                probe.nodes
            );
        }

        let kind = PhaseKind::Run {
            warmup: Duration::ZERO,
            window: Window::Operations(6000),
            rate: None,
        };
        let run = run_phase(&config(&server, &spec, kind), &Silent, &stop).expect("run");
        let (reads, misses, writes) = counters(&server);
        let read = run
            .result
            .ops
            .iter()
            .find(|o| o.op == kvbench_model::OpKind::Read);
        let read = read.map_or(0, |o| o.completed);
        assert_eq!(run.result.errors, 0);
        assert_eq!(run.result.completed, 6000, "{nodes} nodes");
        assert_eq!((reads, misses), (read, 0), "every read found its record");
        assert_eq!(writes, 3000 + (6000 - read), "every update written once");
        assert!(read > 2500 && read < 3500, "a 50/50 mix: {read} reads");
        eprintln!(
            "aerospike {nodes} node(s): load 3,000 in {:.2} s, run {:.0} ops/s, memory {:.2} MiB",
            load.result.duration_s,
            run.result.throughput,
            memory as f64 / 1048576.0
        );
        server.stop().expect("clean stop");
    }
}
