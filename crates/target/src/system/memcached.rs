//! Memcached: start arguments, readiness, `stats`-based probes.

use crate::wire::exchange;
use crate::TargetError;
use kvbench_model::{Probe, Setting};
use kvbench_proto::memcache_text as mc;
use std::collections::HashMap;
use std::net::SocketAddr;

fn setting(name: &str, value: &str, reason: &str) -> Setting {
    Setting {
        name: name.into(),
        value: value.into(),
        reason: reason.into(),
    }
}

/// Arguments and the settings they change from Memcached's defaults.
pub(super) fn args(port: u16, memory_limit_mb: Option<u64>) -> (Vec<String>, Vec<Setting>) {
    let mut args: Vec<String> = ["-p", &port.to_string(), "-l", "127.0.0.1", "-U", "0"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut settings = vec![
        setting(
            "-l",
            "127.0.0.1",
            "loopback only: never reachable from other hosts",
        ),
        setting("-U", "0", "UDP off (kvbench uses TCP)"),
    ];
    if let Some(mb) = memory_limit_mb {
        args.extend(["-m".to_string(), mb.to_string()]);
        settings.push(setting("-m", &mb.to_string(), "memory limit large enough for the dataset, so the run measures serving, not eviction (default 64)"));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        args.extend(["-u".to_string(), "root".to_string()]);
        settings.push(setting(
            "-u",
            "root",
            "memcached refuses to run as root without it",
        ));
    }
    (args, settings)
}

fn stats(addr: SocketAddr, group: Option<&str>) -> Result<HashMap<String, String>, TargetError> {
    let mut req = Vec::new();
    mc::encode_stats(&mut req, group);
    let pairs = exchange(addr, &req, |b| Ok(mc::parse_stats(b)?.map(|(v, _)| v)))?;
    Ok(pairs.into_iter().collect())
}

pub(super) fn probe(addr: SocketAddr) -> Result<Probe, TargetError> {
    let s = stats(addr, None)?;
    let num = |k: &str| s.get(k).and_then(|v| v.parse::<u64>().ok());
    Ok(Probe {
        server_memory_bytes: num("bytes"),
        items: num("curr_items"),
        evictions: num("evictions"),
        ..Probe::default()
    })
}

pub(super) fn version(addr: SocketAddr) -> Result<crate::ServerVersion, TargetError> {
    let s = stats(addr, None)?;
    let version = s
        .get("version")
        .cloned()
        .ok_or_else(|| TargetError::Probe {
            addr: addr.to_string(),
            message: "stats has no version".into(),
        })?;
    Ok(crate::ServerVersion {
        version,
        allocator: None,
    })
}

pub(super) fn command_stats(addr: SocketAddr) -> Result<Vec<(String, u64)>, TargetError> {
    let s = stats(addr, None)?;
    let mut out: Vec<(String, u64)> = [
        "cmd_get",
        "cmd_set",
        "get_hits",
        "get_misses",
        "total_items",
    ]
    .iter()
    .filter_map(|k| Some((k.to_string(), s.get(*k)?.parse().ok()?)))
    .collect();
    out.sort();
    Ok(out)
}
