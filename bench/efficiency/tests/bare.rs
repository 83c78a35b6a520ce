//! The bare client against real servers: it must do exactly the operations
//! it was asked for, as the server counts them, including replies larger
//! than its receive buffers and pipelined requests, and fail on errors.

use kvbench_servers::{Protocol, Server, ServerSpec, SystemKind};
use std::process::Command;

fn start(system: SystemKind) -> Server {
    let spec = ServerSpec {
        system,
        binary: None,
        memory_limit_mb: None,
        eviction: None,
        extra_args: Vec::new(),
    };
    Server::start(&spec).expect("start a private server (redis-server / memcached on PATH)")
}

/// Data operations the server has counted so far.
fn counted(server: &Server) -> u64 {
    let info = server.info().expect("INFO / stats");
    let n = |k: &str| -> u64 {
        info.get(k)
            .and_then(|v| v.split(',').next())
            .and_then(|v| v.trim().trim_start_matches("calls=").parse().ok())
            .unwrap_or(0)
    };
    match server.system().protocol() {
        Protocol::Resp => n("cmdstat_get") + n("cmdstat_set"),
        Protocol::Memcache => n("cmd_get") + n("cmd_set"),
        Protocol::Aerospike => unreachable!("the bare client speaks RESP and memcache only"),
    }
}

fn bare(server: &Server, proto: &str, ops: u64, conns: u32, pipeline: u32, value: u32) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kvbench-efficiency"))
        .args(["bare", "--proto", proto, "--target"])
        .arg(server.addr().to_string())
        .args(["--ops", &ops.to_string(), "--conns", &conns.to_string()])
        .args(["--pipeline", &pipeline.to_string(), "--records", "1000"])
        .args(["--value-bytes", &value.to_string()])
        .output()
        .expect("run the bare client");
    assert!(
        out.status.success(),
        "bare client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn does_exactly_what_it_is_asked(system: SystemKind, proto: &str) {
    let server = start(system);
    // SETs first fill the keys, so later GETs return values; 6,000-byte
    // values span two of the client's 4 KiB receive buffers.
    for (ops, conns, pipeline, value) in [(3_000u64, 7u32, 1u32, 100u32), (4_000, 5, 16, 6_000)] {
        let before = counted(&server);
        let said = bare(&server, proto, ops, conns, pipeline, value);
        assert_eq!(said, format!("bare client: {ops} replies"));
        assert_eq!(
            counted(&server) - before,
            ops,
            "server count for {conns} conns, pipeline {pipeline}"
        );
    }
    server.stop().expect("stop the server");
}

#[test]
fn bare_client_on_redis() {
    does_exactly_what_it_is_asked(SystemKind::Redis, "redis");
}

#[test]
fn bare_client_on_memcached() {
    does_exactly_what_it_is_asked(SystemKind::Memcached, "memcached");
}

#[test]
fn bare_client_fails_on_an_error_reply() {
    // Memcached refuses a value over its item size limit (1 MB by default).
    let server = start(SystemKind::Memcached);
    let out = Command::new(env!("CARGO_BIN_EXE_kvbench-efficiency"))
        .args(["bare", "--proto", "memcached", "--target"])
        .arg(server.addr().to_string())
        .args([
            "--ops",
            "10",
            "--conns",
            "1",
            "--pipeline",
            "1",
            "--records",
            "10",
        ])
        .args(["--value-bytes", "1100000"])
        .output()
        .expect("run the bare client");
    server.stop().expect("stop the server");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("server replied"), "{err}");
}
