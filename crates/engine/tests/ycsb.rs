//! YCSB compatibility in the engine: scans, inserts and
//! read-modify-writes reach Redis as YCSB's binding sends them (checked with
//! the server's own counters), reads choose inserts once they are
//! acknowledged, and dataintegrity catches a value changed behind kvbench's
//! back.

use crate::load::{phase_config, start};
use kvbench_engine::{run_phase, PhaseKind, PhaseOutput, Silent, Window};
use kvbench_model::SystemKind;
use kvbench_model::{OpKind, OpResult};
use kvbench_proto::resp;
use kvbench_servers::Server;
use kvbench_workload::{Properties, WorkloadSpec};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn spec_from(text: &str) -> WorkloadSpec {
    let props = Properties::parse(text, "test").expect("parses");
    let (spec, warnings) = WorkloadSpec::from_properties(&props).expect("valid");
    assert!(warnings.is_empty(), "{warnings:?}");
    spec
}

/// Four connections, two requests in flight each.
fn phase(server: &Server, spec: &WorkloadSpec, kind: PhaseKind) -> PhaseOutput {
    let cfg = phase_config(server.addr(), server.system(), spec, kind, 4, 2);
    run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("phase runs")
}

fn run_kind(ops: u64) -> PhaseKind {
    PhaseKind::Run {
        warmup: Duration::ZERO,
        window: Window::Operations(ops),
        rate: None,
    }
}

fn op_result(out: &PhaseOutput, kind: OpKind) -> Option<&OpResult> {
    out.result.ops.iter().find(|o| o.op == kind)
}

fn count(out: &PhaseOutput, kind: OpKind) -> u64 {
    op_result(out, kind).map_or(0, |o| o.completed)
}

fn calls(server: &Server, command: &str) -> u64 {
    let stats = server.command_stats().expect("commandstats");
    stats
        .iter()
        .find(|(n, _)| n == command)
        .map_or(0, |(_, c)| *c)
}

#[test]
fn scans_and_inserts_reach_redis_as_ycsb_sends_them() {
    let server = start(SystemKind::Redis, None);
    let spec = spec_from(
        "recordcount=500\nfieldcount=4\nfieldlength=20\nreadproportion=0\nupdateproportion=0\n\
         scanproportion=0.5\ninsertproportion=0.5\nrequestdistribution=zipfian\nmaxscanlength=10\n",
    );
    phase(&server, &spec, PhaseKind::Load);
    let out = phase(&server, &spec, run_kind(2_000));
    assert_eq!(out.result.errors, 0, "{:?}", out.result.error_samples);
    let (scans, inserts) = (count(&out, OpKind::Scan), count(&out, OpKind::Insert));
    assert_eq!(scans + inserts, 2_000);
    // Every insert, load included, writes the hash and indexes the key in _indices.
    assert_eq!(calls(&server, "hmset"), 500 + inserts);
    assert_eq!(calls(&server, "zadd"), 500 + inserts);
    // A scan is one ZRANGEBYSCORE, then one read per key it returned.
    assert_eq!(calls(&server, "zrangebyscore"), scans);
    assert!(
        calls(&server, "hgetall") >= scans,
        "each scan reads at least its start key"
    );
    let stats = server.probe("check").expect("probe");
    // 500 records, the inserted ones, and the _indices sorted set.
    assert_eq!(stats.items, Some(500 + inserts + 1));
}

#[test]
fn read_modify_write_is_a_read_then_an_update_timed_as_one() {
    let server = start(SystemKind::Redis, None);
    let spec = spec_from(
        "recordcount=300\nfieldcount=3\nfieldlength=10\nreadproportion=0.5\nupdateproportion=0\n\
         readmodifywriteproportion=0.5\nrequestdistribution=uniform\nkvbench.redis.index=none\n",
    );
    phase(&server, &spec, PhaseKind::Load);
    let out = phase(&server, &spec, run_kind(3_000));
    assert_eq!(out.result.errors, 0, "{:?}", out.result.error_samples);
    let (reads, rmws) = (
        count(&out, OpKind::Read),
        count(&out, OpKind::ReadModifyWrite),
    );
    assert_eq!(reads + rmws, 3_000);
    assert_eq!(
        calls(&server, "hgetall") + calls(&server, "hmget"),
        reads + rmws
    );
    assert_eq!(calls(&server, "hmset"), 300 + rmws);
    // Timed as one operation: two round trips take longer than one.
    let lat = |k: OpKind| {
        out.result
            .ops
            .iter()
            .find(|o| o.op == k)
            .map(|o| o.latency.p50_us)
            .unwrap_or(0.0)
    };
    assert!(
        lat(OpKind::ReadModifyWrite) > lat(OpKind::Read),
        "rmw p50 {} vs read p50 {}",
        lat(OpKind::ReadModifyWrite),
        lat(OpKind::Read)
    );
}

#[test]
fn dataintegrity_detects_a_value_changed_behind_kvbenchs_back() {
    let server = start(SystemKind::Redis, None);
    let spec = spec_from(
        "recordcount=20\nfieldcount=3\nfieldlength=16\nreadproportion=1\nupdateproportion=0\n\
         requestdistribution=uniform\ndataintegrity=true\n",
    );
    phase(&server, &spec, PhaseKind::Load);
    // A clean run first: every value is the one written.
    let clean = phase(&server, &spec, run_kind(500));
    assert_eq!(clean.result.errors, 0, "{:?}", clean.result.error_samples);
    // Change one field of one record with a plain client.
    let key = spec.key_namer().key(7);
    let mut sock = TcpStream::connect(server.addr()).expect("connect");
    let mut req = Vec::new();
    resp::encode_command(
        &mut req,
        &[b"HSET", key.as_bytes(), b"field1", b"XXXXXXXXXXXXXXXX"],
    );
    sock.write_all(&req).expect("write");
    let mut reply = [0u8; 64];
    let n = sock.read(&mut reply).expect("read");
    assert!(
        reply[..n].starts_with(b":"),
        "{:?}",
        String::from_utf8_lossy(&reply[..n])
    );
    // 500 uniform reads over 20 records read record 7 about 25 times.
    let out = phase(&server, &spec, run_kind(500));
    assert!(out.result.errors > 0, "the changed value was not detected");
    assert!(out
        .result
        .errors_by_kind
        .iter()
        .any(|(k, n)| k == "integrity" && *n == out.result.errors));
    assert!(
        out.result
            .error_samples
            .iter()
            .any(|m| m.contains("integrity") && m.contains(&key)),
        "{:?}",
        out.result.error_samples
    );
}

/// Reads choose among inserts only once their replies are in (YCSB's
/// acknowledged counter), also where a plain record's operation is
/// recorded straight from its reply (the closed loop's success path in
/// `Client::process_replies`). Nothing is loaded first: until an insert is
/// acknowledged, reads can only choose the 100 records never written, and
/// miss; once acknowledged, `latest` makes nearly every read choose a
/// record just inserted, which is there.
#[test]
fn reads_of_the_latest_find_the_inserts_once_they_are_acknowledged() {
    let server = start(SystemKind::Redis, None);
    let spec = spec_from(
        "recordcount=100\nfieldcount=1\nfieldlength=20\nkvbench.datamodel=plain\n\
         readproportion=0.5\nupdateproportion=0\ninsertproportion=0.5\n\
         requestdistribution=latest\n",
    );
    let out = phase(&server, &spec, run_kind(4_000));
    let read = op_result(&out, OpKind::Read).expect("reads");
    assert_eq!(count(&out, OpKind::Insert), calls(&server, "set"));
    assert!(read.completed + read.misses > 1_500, "{read:?}");
    // Without acknowledgements every read would miss.
    assert!(
        read.completed > 4 * read.misses,
        "{} hits, {} misses",
        read.completed,
        read.misses
    );
}
