//! Phases against a real server, as the engine's tests (and kvbench's,
//! which include this file) set them up: a small workload, a phase's
//! configuration with the usual test timeouts, a started server, a load,
//! and one request and its reply over a plain socket.

// Each test binary that includes this file uses some of its helpers.
#![allow(dead_code)]

use kvbench_engine::route::Topology;
use kvbench_engine::{run_phase, PhaseConfig, PhaseKind, Silent};
use kvbench_model::SystemKind;
use kvbench_servers::{Server, ServerSpec};
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::spec::DataModel;
use kvbench_workload::WorkloadSpec;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub fn spec(records: u64, fields: u32, len: u32, read: f64) -> WorkloadSpec {
    WorkloadSpec {
        name: "test".into(),
        record_count: records,
        insert_count: records,
        field_count: fields,
        field_length: len,
        read_proportion: read,
        update_proportion: 1.0 - read,
        // YCSB's hash data model, without the scan index (no scans here).
        data_model: DataModel {
            redis_index: false,
            ..DataModel::default()
        },
        ..WorkloadSpec::default()
    }
}

/// A phase against one address with the usual test timeouts, keys named
/// as `spec` names them, one worker thread, seed 3.
pub fn phase_config(
    addr: std::net::SocketAddr,
    system: SystemKind,
    spec: &WorkloadSpec,
    kind: PhaseKind,
    clients: u32,
    pipeline: u32,
) -> PhaseConfig {
    phase_on(
        Topology::Single(addr),
        system,
        spec,
        kind,
        clients,
        pipeline,
    )
}

/// [`phase_config`] against any topology (a pool, a cluster).
pub fn phase_on(
    topology: Topology,
    system: SystemKind,
    spec: &WorkloadSpec,
    kind: PhaseKind,
    clients: u32,
    pipeline: u32,
) -> PhaseConfig {
    PhaseConfig {
        topology,
        system,
        spec: spec.clone(),
        keys: spec.key_namer(),
        kind,
        clients,
        pipeline,
        threads: 1,
        seed: 3,
        timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(5),
        reconnect: None,
        retry: kvbench_engine::Retry::default(),
        stall: kvbench_engine::phase::DEFAULT_STALL,
        access: Default::default(),
        io: kvbench_engine::Io::auto(),
    }
}

pub fn start(system: SystemKind, memory_limit_mb: Option<u64>) -> Server {
    Server::start(&ServerSpec {
        system,
        binary: None,
        memory_limit_mb,
        eviction: None,
        extra_args: Vec::new(),
    })
    .expect("server starts")
}

pub fn load(server: &Server, spec: &WorkloadSpec, seed: u64) -> kvbench_engine::PhaseOutput {
    let cfg = PhaseConfig {
        keys: KeyNamer::default(),
        threads: 2,
        seed,
        ..phase_config(server.addr(), server.system(), spec, PhaseKind::Load, 3, 32)
    };
    run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("load runs")
}

/// Sends `req` and reads until `parse` returns a value.
pub fn exchange<T>(
    sock: &mut TcpStream,
    req: &[u8],
    parse: impl Fn(&[u8]) -> Option<(T, usize)>,
) -> T {
    sock.write_all(req).expect("write");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        if let Some((v, _)) = parse(&buf) {
            return v;
        }
        let n = sock.read(&mut chunk).expect("read");
        assert!(n > 0, "server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The asd the Aerospike tests run (`KVBENCH_AEROSPIKE_BIN`), or `None`
/// after saying why `test` is skipped.
pub fn aerospike_binary(test: &str) -> Option<std::path::PathBuf> {
    let env = kvbench_servers::aerospike::BIN_ENV;
    match std::env::var_os(env).filter(|v| !v.is_empty()) {
        Some(p) => Some(std::path::PathBuf::from(p)),
        None => {
            eprintln!(
                "{test} skipped: {env} is not set (build asd as docs/aerospike.md says and name it there)"
            );
            None
        }
    }
}
