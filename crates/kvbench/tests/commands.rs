//! Command templates (`--command`, memtier's arbitrary commands) against a
//! real Redis the test starts and then reads back: each template is sent as
//! many times in a row as its ratio, in order; its `__key__` follows its own
//! key pattern (text around the key kept); `__data__` has the value size and
//! `__score__` is a number; an error reply is an error, never a completed
//! operation; Memcached is refused up front.

use crate::util::{op, Sandbox};
use kvbench_model::SystemKind;
use kvbench_proto::resp::{self, Value};
use serde_json::Value as Json;

fn call(sock: &mut std::net::TcpStream, args: &[&[u8]]) -> Value {
    let mut req = Vec::new();
    resp::encode_command(&mut req, args);
    crate::load::exchange(sock, &req, |b| resp::parse_value(b).ok().flatten())
}

fn items(v: Value) -> Vec<Vec<u8>> {
    let Value::Array(items) = v else {
        panic!("not an array: {v:?}")
    };
    items
        .iter()
        .map(|i| i.as_bytes().expect("bulk").to_vec())
        .collect()
}

#[test]
fn command_templates_drive_a_real_redis_as_memtier_would() {
    let server = crate::load::start(SystemKind::Redis, None);
    let sb = Sandbox::new();
    let target = format!("redis://{}", server.addr());
    let out = sb
        .kvbench()
        .args([
            "run",
            "--system",
            "redis",
            "--target",
            &target,
            "--workload",
            "memtier",
            "--key-maximum",
            "19",
            "--data-size",
            "33",
            "--clients",
            "1",
            "--warmup",
            "0s",
            "--operations",
            "80",
            "--allow-errors",
            "--quiet",
            "--json",
            "--command",
            "RPUSH log:{__key__} __data__",
            "--command-ratio",
            "2",
            "--command-key-pattern",
            "S",
            "--command",
            "ZADD scores __score__ __key__",
            "--command",
            // The loaded keys hold strings: a list command on them fails.
            "LPUSH __key__ x",
        ])
        .output()
        .expect("kvbench runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    // Cycled in order, each as many in a row as its ratio: 2, 1, 1 of 80.
    let (push, zadd, bad) = (op(&v, "command1"), op(&v, "command2"), op(&v, "command3"));
    assert_eq!(
        (push["completed"].as_u64(), push["errors"].as_u64()),
        (Some(40), Some(0)),
        "{push}"
    );
    assert_eq!(
        (zadd["completed"].as_u64(), zadd["errors"].as_u64()),
        (Some(20), Some(0)),
        "{zadd}"
    );
    assert_eq!(
        (bad["completed"].as_u64(), bad["errors"].as_u64()),
        (Some(0), Some(20)),
        "{bad}"
    );
    assert!(
        stdout.contains("kvbench.command.1") && stdout.contains("RPUSH log:{__key__} __data__"),
        "the templates are stored with the run"
    );

    let mut sock = std::net::TcpStream::connect(server.addr()).expect("connect");
    // S, one client: keys 0..=19 in order, twice; every value 33 bytes.
    for i in 0..20 {
        let key = format!("log:{{memtier-{i}}}");
        let list = items(call(&mut sock, &[b"LRANGE", key.as_bytes(), b"0", b"-1"]));
        assert_eq!(list.len(), 2, "{key}");
        assert!(list.iter().all(|v| v.len() == 33), "{key}: {list:?}");
    }
    // R: members are loaded keys, scores whole numbers below 1,000,000.
    let scored = items(call(
        &mut sock,
        &[b"ZRANGE", b"scores", b"0", b"-1", b"WITHSCORES"],
    ));
    assert!(!scored.is_empty());
    for pair in scored.chunks(2) {
        let member = String::from_utf8_lossy(&pair[0]);
        let n: u64 = member
            .strip_prefix("memtier-")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("member {member}"));
        assert!(n <= 19, "{member}");
        let score: u64 = String::from_utf8_lossy(&pair[1])
            .parse()
            .expect("a whole score");
        assert!(score < 1_000_000, "{score}");
    }
    // Nothing but the error replies touched the loaded strings.
    let kind = call(&mut sock, &[b"TYPE", b"memtier-3"]);
    assert_eq!(kind.as_bytes(), Some(&b"string"[..]), "{kind:?}");
}

#[test]
fn command_templates_are_refused_where_they_cannot_run() {
    let sb = Sandbox::new();
    for (args, want) in [
        (
            &["--system", "memcached", "--command", "GET __key__"][..],
            "RESP commands",
        ),
        (
            &["--system", "redis", "--command", "SET 'unbalanced __key__"],
            "--command:",
        ),
        (
            &["--system", "redis", "-p", "kvbench.command.2=PING"],
            "kvbench.command.2",
        ),
    ] {
        let mut all = vec!["run", "--workload", "memtier", "--operations", "10"];
        all.extend_from_slice(args);
        let out = sb.kvbench().args(&all).output().expect("kvbench runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    }
}

/// On a Redis Cluster a command goes to the node of its first key argument
/// as sent (`k:memtier-7`, whose slot is not `memtier-7`'s): no request
/// is redirected, none fails.
#[test]
fn command_templates_are_routed_by_the_key_argument_as_sent() {
    let sb = Sandbox::new();
    let v = sb.json(&[
        "run",
        "--system",
        "redis",
        "--topology",
        "cluster",
        "--nodes",
        "3",
        "--workload",
        "memtier",
        "--key-maximum",
        "199",
        "--clients",
        "2",
        "--warmup",
        "0s",
        "--operations",
        "2000",
        "--quiet",
        "--json",
        "--command",
        "SET k:__key__ __data__",
        "--command",
        "GET k:__key__",
    ]);
    assert_eq!(v["status"], "ok", "{v}");
    for name in ["command1", "command2"] {
        let o = op(&v, name);
        assert_eq!(o["completed"], 1000, "{o}");
        assert_eq!(o["errors"], 0, "{o}");
    }
    assert_eq!(v["run"]["redirects_moved"], 0, "{}", v["run"]);
}
