//! Redis Cluster, started by kvbench: the client routes every request to
//! its key's slot (hash tags included), follows `MOVED` and `ASK` while
//! slots migrate, and counts redirects apart from completed operations.
//! The servers' own per-node counters cross-check kvbench's counts.

use crate::load::{phase_config, spec};
use kvbench_engine::route::slots::slot_of;
use kvbench_engine::route::Topology;
use kvbench_engine::{run_phase, Io, PhaseConfig, PhaseKind, PhaseOutput, Silent, Window};
use kvbench_model::{OpKind, SystemKind};
use kvbench_proto::resp::{self, Value};
use kvbench_servers::{Cluster, ServerSpec};
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::WorkloadSpec;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn start(masters: usize) -> Cluster {
    Cluster::start(&ServerSpec::new(SystemKind::Redis), masters, 0).expect("cluster forms")
}

/// One command, one reply.
fn cmd(addr: SocketAddr, args: &[&[u8]]) -> Value {
    let mut req = Vec::new();
    resp::encode_command(&mut req, args);
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(&req).expect("send");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        if let Some((v, _)) = resp::parse_value(&buf).expect("RESP") {
            return v;
        }
        let n = s.read(&mut chunk).expect("receive");
        assert!(n > 0, "closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn text(v: Value) -> String {
    match v {
        Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        Value::Status(s) => s,
        other => panic!("unexpected reply {other:?}"),
    }
}

fn phase(
    c: &Cluster,
    spec: &WorkloadSpec,
    keys: &KeyNamer,
    kind: PhaseKind,
    clients: u32,
    pipeline: u32,
    io: Io,
) -> PhaseOutput {
    let cfg = config(c, spec, keys, kind, clients, pipeline, io);
    run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("phase runs")
}

fn config(
    c: &Cluster,
    spec: &WorkloadSpec,
    keys: &KeyNamer,
    kind: PhaseKind,
    clients: u32,
    pipeline: u32,
    io: Io,
) -> PhaseConfig {
    let seed = c.seeds()[0];
    PhaseConfig {
        topology: Topology::Cluster(c.seeds()),
        keys: keys.clone(),
        threads: 2,
        seed: 11,
        io,
        ..phase_config(seed, SystemKind::Redis, spec, kind, clients, pipeline)
    }
}

fn ops(n: u64) -> PhaseKind {
    PhaseKind::Run {
        warmup: Duration::ZERO,
        window: Window::Operations(n),
        rate: None,
    }
}

fn calls(stats: &[(String, u64)], name: &str) -> u64 {
    stats.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v)
}

fn completed(out: &PhaseOutput, kind: OpKind) -> u64 {
    out.result
        .ops
        .iter()
        .find(|o| o.op == kind)
        .map_or(0, |o| o.completed)
}

#[test]
fn a_three_node_cluster_loads_and_runs_with_zero_errors_and_the_nodes_agree() {
    for io in [Io::Uring, Io::Tokio] {
        if io == Io::Uring && !kvbench_engine::uring::available() {
            continue;
        }
        let c = start(3);
        let spec = spec(3000, 4, 50, 0.5);
        let keys = KeyNamer::default();
        let load = phase(&c, &spec, &keys, PhaseKind::Load, 4, 32, io);
        assert_eq!((load.result.completed, load.result.errors), (3000, 0));
        let run = phase(&c, &spec, &keys, ops(8000), 6, 4, io);
        let r = &run.result;
        assert_eq!(
            (r.completed, r.errors),
            (8000, 0),
            "{io:?}: {:?}",
            r.error_samples
        );
        // A fresh cluster's slot map is what CLUSTER SLOTS said: no redirects.
        assert_eq!((r.redirects_moved, r.redirects_ask), (0, 0));

        // Every node holds a share of the records, and together all of them.
        let probe = c.probe("after_run").expect("probe");
        assert_eq!(probe.nodes.len(), 3);
        assert_eq!(probe.items, Some(3000));
        for n in &probe.nodes {
            let items = n.items.expect("items");
            assert!((700..1300).contains(&items), "{}: {items} of 3000", n.addr);
        }
        // The servers' own counters, summed over the nodes, are kvbench's.
        let stats = c.command_stats().expect("stats");
        let sum = |name: &str| stats.iter().map(|(_, s)| calls(s, name)).sum::<u64>();
        assert_eq!(
            sum("hmset"),
            3000 + completed(&run, OpKind::Update),
            "{io:?}"
        );
        assert_eq!(sum("hgetall"), completed(&run, OpKind::Read), "{io:?}");
        for (addr, s) in &stats {
            assert!(calls(s, "hgetall") > 0, "{addr} served no reads");
        }
        c.stop().expect("clean stop");
    }
}

#[test]
fn hash_tags_put_every_key_on_its_tags_slot() {
    let c = start(3);
    // The client's slot function is the server's, tags and edge cases included.
    let probes = [
        "user1",
        "{user}1",
        "a{b}c",
        "{}x",
        "x{}{y}",
        "{{a}}",
        "}{",
        "{a",
        "user{1000}.f",
    ];
    let node = c.seeds()[0];
    for key in probes
        .iter()
        .map(|k| k.to_string())
        .chain((0..300).map(|i| format!("user{}", i * 7919)))
        // YCSB's names (23 bytes) and keys of 16 to 32 bytes, with a tag
        // at each place and without: the client's quick look for a `{`
        // covers these lengths.
        .chain((0..60u64).map(|i| format!("user{}", 6_284_781_860_667_377_211 - i * 104_729)))
        .chain((16..=32).flat_map(|len: usize| {
            (0..len - 2).map(move |at| {
                let mut k = vec![b'k'; len];
                k[at] = b'{';
                k[at + 2] = b'}';
                String::from_utf8(k).expect("ASCII")
            })
        }))
    {
        let server = cmd(node, &[b"CLUSTER", b"KEYSLOT", key.as_bytes()]);
        assert_eq!(
            Value::Integer(i64::from(slot_of(key.as_bytes()))),
            server,
            "{key}"
        );
    }
    // A workload whose keys share a tag lives on the tag's node alone.
    let keys = KeyNamer::default().with_prefix("{user}");
    let spec = spec(1000, 2, 20, 0.5);
    let load = phase(&c, &spec, &keys, PhaseKind::Load, 2, 16, Io::auto());
    assert_eq!((load.result.completed, load.result.errors), (1000, 0));
    let run = phase(&c, &spec, &keys, ops(2000), 4, 2, Io::auto());
    assert_eq!((run.result.completed, run.result.errors), (2000, 0));
    let tag_slot = slot_of(b"user").to_string();
    let in_tag_slot: i64 = c
        .seeds()
        .iter()
        .map(
            |&m| match cmd(m, &[b"CLUSTER", b"COUNTKEYSINSLOT", tag_slot.as_bytes()]) {
                Value::Integer(n) => n,
                other => panic!("{other:?}"),
            },
        )
        .sum();
    assert_eq!(in_tag_slot, 1000);
    let probe = c.probe("after").expect("probe");
    let holding: Vec<(String, u64)> = probe
        .nodes
        .iter()
        .map(|n| (n.addr.clone(), n.items.unwrap_or(0)))
        .filter(|(_, items)| *items > 0)
        .collect();
    assert_eq!(holding.len(), 1, "{holding:?}");
    assert_eq!(holding[0].1, 1000);
    c.stop().expect("clean stop");
}

#[test]
fn slots_migrated_during_a_run_give_zero_failed_operations() {
    // The slots move by SETSLOT on each master in turn; beside a heavy test
    // the gap between masters stretches and requests bounce between two
    // nodes that disagree for longer than the redirect limit allows.
    let _serial = crate::serial::timing_sensitive();
    let c = start(3);
    let spec = spec(3000, 4, 50, 0.5);
    let keys = KeyNamer::default();
    let load = phase(&c, &spec, &keys, PhaseKind::Load, 4, 32, Io::auto());
    assert_eq!(load.result.errors, 0);
    let masters = c.seeds();
    let (src, dst) = (masters[0], masters[1]);
    // The first master serves slots 0..=5460; move the first 1,500 to the
    // second, the way `redis-cli --cluster reshard` does, while a run goes on.
    let moving: Vec<String> = (0..1500).map(|s: u32| s.to_string()).collect();
    let run = std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            let kind = PhaseKind::Run {
                warmup: Duration::ZERO,
                window: Window::Duration(Duration::from_secs(6)),
                rate: None,
            };
            phase(&c, &spec, &keys, kind, 6, 2, Io::auto())
        });
        std::thread::sleep(Duration::from_millis(500));
        move_slots(src, dst, &moving, &masters);
        running.join().expect("run thread")
    });
    let r = &run.result;
    assert!(r.completed > 1000, "{r:?}");
    assert_eq!(r.errors, 0, "{:?}", r.error_samples);
    assert!(r.redirects_ask > 0, "no ASK counted: {r:?}");
    assert!(r.redirects_moved > 0, "no MOVED counted: {r:?}");
    // Redirects are not completions: every completion is one operation.
    let by_op: u64 = r.ops.iter().map(|o| o.completed).sum();
    assert_eq!(by_op, r.completed);
    let probe = c.probe("after").expect("probe");
    assert_eq!(probe.items, Some(3000));
    c.stop().expect("clean stop");
}

/// Moves `slots` from `src` to `dst` the way `redis-cli --cluster reshard`
/// does (IMPORTING, MIGRATING, MIGRATE of their keys, then SETSLOT NODE on
/// every node in `all`), while a run goes on.
fn move_slots(src: SocketAddr, dst: SocketAddr, slots: &[String], all: &[SocketAddr]) {
    let id = |a: SocketAddr| text(cmd(a, &[b"CLUSTER", b"MYID"]));
    let (src_id, dst_id) = (id(src), id(dst));
    let dst_port = dst.port().to_string();
    let ok = Value::Status("OK".into());
    for slot in slots {
        let s = slot.as_bytes();
        let set = |at: SocketAddr, state: &[u8], node: &str| {
            let r = cmd(at, &[b"CLUSTER", b"SETSLOT", s, state, node.as_bytes()]);
            assert_eq!(r, ok, "SETSLOT {slot} on {at}");
        };
        set(dst, b"IMPORTING", &src_id);
        set(src, b"MIGRATING", &dst_id);
        let Value::Array(found) = cmd(src, &[b"CLUSTER", b"GETKEYSINSLOT", s, b"1000"]) else {
            panic!("GETKEYSINSLOT");
        };
        if found.is_empty() {
            continue;
        }
        let names: Vec<Vec<u8>> = found
            .iter()
            .filter_map(|k| k.as_bytes().map(<[u8]>::to_vec))
            .collect();
        let mut args: Vec<&[u8]> = vec![
            b"MIGRATE",
            b"127.0.0.1",
            dst_port.as_bytes(),
            b"",
            b"0",
            b"5000",
            b"KEYS",
        ];
        args.extend(names.iter().map(Vec::as_slice));
        assert_eq!(cmd(src, &args), ok, "MIGRATE of slot {slot}");
    }
    // Keys moved, slots still migrating: requests for them get ASK.
    std::thread::sleep(Duration::from_millis(800));
    // The destination first, then the source, then the rest, as
    // `redis-cli --cluster` does: a source that names the destination
    // before the destination owns the slot would send a request back and
    // forth (`MOVED` each way) until the client gives it up.
    let mut order = vec![dst, src];
    order.extend(all.iter().copied().filter(|&a| a != dst && a != src));
    for slot in slots {
        for &m in &order {
            let r = cmd(
                m,
                &[
                    b"CLUSTER",
                    b"SETSLOT",
                    slot.as_bytes(),
                    b"NODE",
                    dst_id.as_bytes(),
                ],
            );
            assert_eq!(r, ok, "SETSLOT NODE on {m}");
        }
    }
}

/// Issue 33, item 3: a node added to a running cluster (`CLUSTER MEET`) and
/// given slots by a reshard while a phase runs gets connections and
/// traffic: each worker learns it from a `MOVED` (or a refresh), adds it
/// to the phase's node list, and its clients open a connection to it,
/// through each I/O loop. Before, a node that joined mid-phase got no
/// connection and its slots' requests failed.
#[test]
fn a_node_added_and_given_slots_mid_run_gets_traffic() {
    let _serial = crate::serial::timing_sensitive();
    for io in [Io::Uring, Io::Tokio] {
        if io == Io::Uring && !kvbench_engine::uring::available() {
            continue;
        }
        let c = start(3);
        let joiner = kvbench_servers::Server::start(&ServerSpec {
            extra_args: vec!["--cluster-enabled".into(), "yes".into()],
            ..ServerSpec::new(SystemKind::Redis)
        })
        .expect("a cluster-mode node starts");
        let new = joiner.addr();
        let masters = c.seeds();
        let spec = spec(3000, 4, 50, 0.5);
        let keys = KeyNamer::default();
        let load = phase(&c, &spec, &keys, PhaseKind::Load, 4, 32, io);
        assert_eq!(load.result.errors, 0);
        let port = new.port().to_string();
        let meet = cmd(
            masters[0],
            &[b"CLUSTER", b"MEET", b"127.0.0.1", port.as_bytes()],
        );
        assert_eq!(meet, Value::Status("OK".into()));
        // The new node knows the cluster, and says it is up, before slots
        // move to it (a MIGRATE to it is refused before).
        let known = std::time::Instant::now();
        // Every master must know it too: a SETSLOT naming a node it has
        // not heard of yet is refused.
        let knows = |a: SocketAddr| text(cmd(a, &[b"CLUSTER", b"NODES"])).lines().count() == 4;
        while !(masters.iter().chain([&new]).all(|&a| knows(a))
            && text(cmd(new, &[b"CLUSTER", b"INFO"])).contains("cluster_state:ok"))
        {
            assert!(
                known.elapsed() < Duration::from_secs(20),
                "the node never met the cluster"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // Few enough slots that the move ends well inside the window even on a
        // loaded machine: the slots' last SETSLOT NODE is what brings MOVED.
        let moving: Vec<String> = (0..300).map(|s: u32| s.to_string()).collect();
        let mut all = masters.clone();
        all.push(new);
        let run = std::thread::scope(|scope| {
            let running = scope.spawn(|| {
                let kind = PhaseKind::Run {
                    warmup: Duration::ZERO,
                    window: Window::Duration(Duration::from_secs(6)),
                    rate: None,
                };
                let cfg = PhaseConfig {
                    reconnect: Some(kvbench_engine::Backoff::DEFAULT),
                    ..config(&c, &spec, &keys, kind, 4, 2, io)
                };
                run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("phase runs")
            });
            std::thread::sleep(Duration::from_millis(800));
            let began = std::time::Instant::now();
            move_slots(masters[0], new, &moving, &all);
            let took = began.elapsed();
            assert!(
                took < Duration::from_secs(4),
                "{io:?}: moving the slots took {took:?}, past the window"
            );
            running.join().expect("run thread")
        });
        let r = &run.result;
        assert_eq!(r.errors, 0, "{io:?}: {:?}", r.error_samples);
        assert!(r.redirects_moved > 0, "{io:?}: no MOVED counted: {r:?}");
        let reads = calls(&joiner.command_stats().expect("stats"), "hgetall");
        assert!(reads > 0, "{io:?}: the node that joined served no read");
        let node = r
            .nodes
            .iter()
            .find(|n| n.addr == new.to_string())
            .unwrap_or_else(|| panic!("{io:?}: {new} is not among the nodes: {:?}", r.nodes));
        assert!(node.replies > 0, "{io:?}: {node:?}");
        assert_eq!(r.nodes.len(), 4, "{io:?}: {:?}", r.nodes);
        println!(
            "{io:?}: the node that joined answered {} requests ({reads} reads counted by it), {} MOVED",
            node.replies, r.redirects_moved
        );
        joiner.stop().expect("the joined node stops");
        let _ = c.stop();
    }
}

/// A run whose phase lasts `d`, started in a thread while `during` acts on
/// the cluster.
fn run_while(
    c: &Cluster,
    clients: u32,
    pipeline: u32,
    io: Io,
    d: Duration,
    during: impl FnOnce(),
) -> PhaseOutput {
    let spec = spec(3000, 4, 50, 0.5);
    let keys = KeyNamer::default();
    let load = phase(c, &spec, &keys, PhaseKind::Load, 4, 32, io);
    assert_eq!(load.result.errors, 0);
    std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            let kind = PhaseKind::Run {
                warmup: Duration::ZERO,
                window: Window::Duration(d),
                rate: None,
            };
            phase(c, &spec, &keys, kind, clients, pipeline, io)
        });
        during();
        running.join().expect("run thread")
    })
}

#[test]
fn clusterdown_is_waited_out_retried_and_counted_apart() {
    let c = start(3);
    let first = c.seeds()[0];
    let ok = Value::Status("OK".into());
    let run = run_while(&c, 6, 4, Io::Tokio, Duration::from_secs(4), || {
        std::thread::sleep(Duration::from_millis(800));
        // Slot 0 served by no node: with full coverage required (the
        // default), the first master answers CLUSTERDOWN for its keys.
        assert_eq!(cmd(first, &[b"CLUSTER", b"DELSLOTS", b"0"]), ok);
        std::thread::sleep(Duration::from_millis(700));
        assert_eq!(cmd(first, &[b"CLUSTER", b"ADDSLOTS", b"0"]), ok);
    });
    let r = &run.result;
    assert_eq!(r.errors, 0, "{:?}", r.error_samples);
    assert!(r.retries > 0, "no retry counted: {r:?}");
    // Retries are not completions: every completion is one operation.
    let by_op: u64 = r.ops.iter().map(|o| o.completed).sum();
    assert_eq!(by_op, r.completed);
    // The run went on after the cluster came back.
    let last: u64 = r
        .series
        .iter()
        .filter(|p| p.second == 3)
        .map(|p| p.completed)
        .sum();
    assert!(last > 100, "no progress after recovery: {:?}", r.series);
    c.stop().expect("clean stop");
}

#[test]
fn a_failover_moves_the_slots_to_the_promoted_replica_and_the_run_goes_on() {
    let c = Cluster::start(&ServerSpec::new(SystemKind::Redis), 3, 1).expect("cluster forms");
    // Fail over within seconds, not the default 15.
    for n in c.masters().iter().chain(c.replicas()) {
        let r = cmd(
            n.addr(),
            &[b"CONFIG", b"SET", b"cluster-node-timeout", b"1000"],
        );
        assert_eq!(r, Value::Status("OK".into()));
    }
    let victim = c.masters()[0].pid();
    let heir = c.replicas()[0].addr();
    let io = if kvbench_engine::uring::available() {
        Io::Uring
    } else {
        Io::Tokio
    };
    let (clients, pipeline) = (6u32, 4u32);
    let run = run_while(&c, clients, pipeline, io, Duration::from_secs(9), || {
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: kill has no memory preconditions; the pid is our child.
        assert_eq!(unsafe { libc::kill(victim as i32, libc::SIGKILL) }, 0);
    });
    let r = &run.result;
    // Only the requests in flight on the lost connections fail; the rest
    // wait for the failover and go to the promoted replica.
    assert!(
        r.errors <= u64::from(clients * pipeline),
        "{} errors: {:?}",
        r.errors,
        r.error_samples
    );
    let view = text(cmd(c.masters()[1].addr(), &[b"CLUSTER", b"NODES"]));
    let per_second: Vec<(u32, u64)> = r.series.iter().map(|p| (p.second, p.completed)).collect();
    assert!(
        r.retries > 0,
        "no retry counted: {per_second:?} {:?} {:?}\n{view}",
        r.error_samples,
        r.nodes
    );
    let served = calls(&c.replicas()[0].command_stats().expect("stats"), "hgetall");
    assert!(served > 0, "the promoted replica {heir} served no reads");
    let last: u64 = r
        .series
        .iter()
        .filter(|p| p.second >= 7)
        .map(|p| p.completed)
        .sum();
    assert!(last > 100, "no progress after the failover: {:?}", r.series);
    // The killed master makes the stop unclean; every node is stopped anyway.
    let _ = c.stop();
}
