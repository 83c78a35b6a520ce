//! Redis (and Valkey): start arguments, readiness, `INFO`-based probes.

use crate::wire::exchange;
use crate::TargetError;
use kvbench_model::{Probe, Setting};
use kvbench_proto::resp::{self, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;

fn setting(name: &str, value: &str, reason: &str) -> Setting {
    Setting {
        name: name.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

/// Arguments and the settings they change from Redis's defaults. The port is
/// not listed: it is where the server is, not how it behaves.
pub(super) fn args(port: u16, dir: &Path) -> (Vec<String>, Vec<Setting>) {
    let dir = dir.display().to_string();
    let args = [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        &dir,
        "--daemonize",
        "no",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let settings = vec![
        setting(
            "bind",
            "127.0.0.1",
            "loopback only: never reachable from other hosts",
        ),
        setting(
            "save",
            "\"\"",
            "snapshots off: a background save would disturb the measurement",
        ),
        setting(
            "appendonly",
            "no",
            "persistence off (the default, stated explicitly)",
        ),
        setting(
            "dir",
            &dir,
            "a private temporary directory, removed after the run",
        ),
    ];
    (args, settings)
}

fn command(addr: SocketAddr, args: &[&[u8]]) -> Result<Value, TargetError> {
    let mut req = Vec::new();
    resp::encode_command(&mut req, args);
    let v = exchange(addr, &req, |b| Ok(resp::parse_value(b)?.map(|(v, _)| v)))?;
    if let Value::Error(e) = &v {
        return Err(TargetError::Probe {
            addr: addr.to_string(),
            message: format!("error reply: {e}"),
        });
    }
    Ok(v)
}

pub(super) fn ping(addr: SocketAddr) -> Result<(), TargetError> {
    match command(addr, &[b"PING"])? {
        Value::Status(s) if s == "PONG" => Ok(()),
        other => Err(TargetError::Probe {
            addr: addr.to_string(),
            message: format!("unexpected PING reply {other:?}"),
        }),
    }
}

/// `INFO [section]` as a map of `name → value`.
pub(super) fn info(
    addr: SocketAddr,
    section: Option<&str>,
) -> Result<HashMap<String, String>, TargetError> {
    let mut args: Vec<&[u8]> = vec![b"INFO"];
    if let Some(s) = section {
        args.push(s.as_bytes());
    }
    let text = match command(addr, &args)? {
        Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        Value::Verbatim { data, .. } => String::from_utf8_lossy(&data).into_owned(),
        other => {
            return Err(TargetError::Probe {
                addr: addr.to_string(),
                message: format!("unexpected INFO reply {other:?}"),
            })
        }
    };
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

pub(super) fn probe(addr: SocketAddr) -> Result<Probe, TargetError> {
    let info = info(addr, Some("all"))?;
    let num = |k: &str| info.get(k).and_then(|v| v.parse::<u64>().ok());
    // "db0:keys=20000,expires=0,avg_ttl=0"; no line at all means no keys.
    let items = info
        .get("db0")
        .and_then(|v| v.split(',').find_map(|kv| kv.strip_prefix("keys=")))
        .and_then(|n| n.parse().ok())
        .or(Some(0));
    Ok(Probe {
        server_memory_bytes: num("used_memory"),
        items,
        evictions: num("evicted_keys"),
        ..Probe::default()
    })
}

pub(super) fn version(addr: SocketAddr) -> Result<crate::ServerVersion, TargetError> {
    let info = info(addr, Some("server"))?;
    let memory = info_or_empty(addr);
    // Valkey reports valkey_version beside a compatibility redis_version.
    let version = info
        .get("valkey_version")
        .map(|v| format!("valkey {v}"))
        .or_else(|| info.get("redis_version").cloned())
        .unwrap_or_default();
    Ok(crate::ServerVersion {
        version,
        allocator: memory.get("mem_allocator").cloned(),
    })
}

fn info_or_empty(addr: SocketAddr) -> HashMap<String, String> {
    info(addr, Some("memory")).unwrap_or_default()
}

pub(super) fn command_stats(addr: SocketAddr) -> Result<Vec<(String, u64)>, TargetError> {
    let info = info(addr, Some("commandstats"))?;
    // "cmdstat_hgetall: calls=10,usec=..." → ("hgetall", 10)
    let mut out: Vec<(String, u64)> = info
        .iter()
        .filter_map(|(k, v)| {
            let name = k.strip_prefix("cmdstat_")?;
            let calls = v
                .split(',')
                .find_map(|kv| kv.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name.to_string(), calls))
        })
        .collect();
    out.sort();
    Ok(out)
}
