//! The complex workload (paper C) in the engine: `ZUNIONSTORE` over groups
//! of sorted sets, loaded by the engine, each result checked here against a
//! union the test computes itself from what the server holds; a wrong
//! result is an error, never a completed operation.

use crate::load::{exchange, phase_config, start};
use kvbench_engine::{run_phase, PhaseKind, PhaseOutput, Silent, Window};
use kvbench_model::{OpKind, SystemKind};
use kvbench_proto::resp::{self, Value};
use kvbench_servers::Server;
use kvbench_workload::{Properties, WorkloadSpec};
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Two groups of three sets of 500 members.
fn spec() -> WorkloadSpec {
    let text = "kvbench.datamodel=sortedsets\nkvbench.zset.sets=3\nkvbench.zset.members=500\n\
                recordcount=6\nreadproportion=0\nupdateproportion=0\n\
                kvbench.zunionstoreproportion=1\nkvbench.keyprefix=zs\n";
    WorkloadSpec::from_properties(&Properties::parse(text, "t").expect("parses"))
        .expect("valid")
        .0
}

fn phase(server: &Server, spec: &WorkloadSpec, kind: PhaseKind, clients: u32) -> PhaseOutput {
    let cfg = phase_config(server.addr(), server.system(), spec, kind, clients, 1);
    run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("phase runs")
}

fn run(n: u64) -> PhaseKind {
    PhaseKind::Run {
        warmup: Duration::ZERO,
        window: Window::Operations(n),
        rate: None,
    }
}

fn command(sock: &mut TcpStream, args: &[&[u8]]) -> Value {
    let mut req = Vec::new();
    resp::encode_command(&mut req, args);
    exchange(sock, &req, |b| resp::parse_value(b).ok().flatten())
}

/// Member -> score of a sorted set, as the server holds it.
fn zset(sock: &mut TcpStream, key: &str) -> BTreeMap<String, f64> {
    let Value::Array(items) = command(
        sock,
        &[b"ZRANGE", key.as_bytes(), b"0", b"-1", b"WITHSCORES"],
    ) else {
        panic!("{key}: not an array")
    };
    items
        .chunks(2)
        .map(|p| {
            let text =
                |v: &Value| String::from_utf8_lossy(v.as_bytes().expect("bulk")).into_owned();
            (text(&p[0]), text(&p[1]).parse().expect("score"))
        })
        .collect()
}

#[test]
fn every_union_is_the_union_of_its_sets_as_the_server_holds_them() {
    let server = start(SystemKind::Redis, None);
    let spec = spec();
    let load = phase(&server, &spec, PhaseKind::Load, 2);
    assert_eq!((load.result.completed, load.result.errors), (6, 0));
    let out = phase(&server, &spec, run(40), 2);
    let unions = out
        .result
        .ops
        .iter()
        .find(|o| o.op == OpKind::Union)
        .expect("unions");
    assert_eq!((unions.completed, unions.errors), (40, 0));

    let mut sock = TcpStream::connect(server.addr()).expect("connect");
    let mut checked = 0;
    for group in 0..2 {
        // Computed here from the sets the server holds, not from kvbench's formulas.
        let mut expected: BTreeMap<String, f64> = BTreeMap::new();
        for set in 0..3 {
            let members = zset(&mut sock, &format!("{{zs{group}}}:{set}"));
            assert_eq!(members.len(), 500, "set {set} of group {group}");
            for (m, s) in members {
                *expected.entry(m).or_default() += s;
            }
        }
        for client in 0..2 {
            let dest = format!("{{zs{group}}}:dest:{client}");
            let got = zset(&mut sock, &dest);
            if got.is_empty() {
                continue; // this client never drew this group
            }
            assert_eq!(got, expected, "{dest}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "each client wrote at least one destination");

    // A set changed behind kvbench's back: every union now has one member
    // too many, and none of them counts as completed.
    assert_eq!(
        command(&mut sock, &[b"ZADD", b"{zs0}:0", b"1", b"intruder"]),
        Value::Integer(1)
    );
    assert_eq!(
        command(&mut sock, &[b"ZADD", b"{zs1}:0", b"1", b"intruder"]),
        Value::Integer(1)
    );
    let out = phase(&server, &spec, run(10), 1);
    let unions = &out.result.ops[0];
    assert_eq!((unions.completed, unions.errors), (0, 10), "{unions:?}");
}
