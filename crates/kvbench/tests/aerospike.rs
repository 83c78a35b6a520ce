//! Aerospike under load, on the user's asd (`KVBENCH_AEROSPIKE_BIN`): the
//! load and paper A's three workloads on one node and on a 3-node mesh
//! cluster, the server's own transaction counters against kvbench's
//! counts, memory probes, and a node killed mid-run. Without the variable
//! each test says it was skipped and why, and passes.
//!
//! Run: `KVBENCH_AEROSPIKE_BIN=/path/to/asd cargo test -p kvbench --test tests aerospike:: -- --nocapture`

use crate::util::{alive, children_of, timing_sensitive, Sandbox};
use kvbench_connect::Access;
use kvbench_engine::route::Topology;
use kvbench_engine::{run_phase, Io, PhaseConfig, PhaseKind, Silent, Window};
use kvbench_model::SystemKind;
use kvbench_proto::aerospike_info;
use kvbench_servers::aerospike::{self as asd, Aerospike, Config};
use kvbench_workload::{Properties, WorkloadSpec};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The asd to run, or `None` after saying why the test is skipped.
pub(crate) fn binary(test: &str) -> Option<PathBuf> {
    match std::env::var_os(asd::BIN_ENV).filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            eprintln!(
                "aerospike::{test} skipped: {} is not set (build asd as docs/aerospike.md says and name it there)",
                asd::BIN_ENV
            );
            None
        }
    }
}

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
    let Some(bin) = binary("the_servers_counters_match_what_kvbench_counted_on_one_node_and_three")
    else {
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
