//! Aerospike: where its binary comes from, and what its info commands say.
//!
//! asd is not started from a command line (it reads a configuration file
//! kvbench writes: `crate::aerospike`), so `launch` refuses and every
//! server argument is refused. Memory, records and evictions are the
//! namespace's (`namespace/<ns>`: the `as.namespace` the target names);
//! per-command counts are the namespace's client transaction counters.

use super::{exchange, parse_u64, Counts, Launch, Peer, Snapshot, System};
use crate::ServerError;

/// The namespace the workload's records go to on a private asd: `ycsb`,
/// the default of YCSB's `as.namespace`, so YCSB's binding finds a data
/// set kvbench loaded (and the other way round).
pub(crate) const NAMESPACE: &str = "ycsb";
use kvbench_model::TopologyKind;
use kvbench_proto::aerospike_info;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// The environment variable naming the `asd` binary to start.
pub const BIN_ENV: &str = "KVBENCH_AEROSPIKE_BIN";

/// The server argument (`--server-args=--paper-preset`) that asks for
/// paper A's settings (`crate::aerospike::Config::paper_preset`).
pub const PAPER_PRESET: &str = "--paper-preset";

/// Aerospike Community or Enterprise Edition.
pub(crate) struct Aerospike;

pub(crate) static AEROSPIKE: Aerospike = Aerospike;

/// The namespace counters reported as per-command counts: what the server
/// says it served, to compare with what kvbench counted.
const COUNTERS: [&str; 8] = [
    "client_read_success",
    "client_read_not_found",
    "client_read_error",
    "client_read_timeout",
    "client_write_success",
    "client_write_error",
    "client_write_timeout",
    "client_tsvc_error",
];

/// The namespace's bytes in memory: data, primary index, set index and
/// secondary indexes (Aerospike 7's unified storage statistics).
const MEMORY_KEYS: [&str; 4] = [
    "data_used_bytes",
    "index_used_bytes",
    "set_index_used_bytes",
    "sindex_used_bytes",
];

impl System for Aerospike {
    /// The namespace's `data-size` per node: twice the raw data (the
    /// records' bins and overhead fit in it with room), at least 1 GiB (its
    /// stripes are allocated as they fill, so an idle node does not hold
    /// it); past `stop-writes-used-pct` the server refuses writes, so too
    /// small a size would fail the load, not slow it.
    fn memory_for(&self, data: &crate::DataSize) -> Option<u64> {
        let raw_mb = data.raw_bytes() >> 20;
        Some(raw_mb.saturating_mul(2).max(1024))
    }

    /// The namespace fills as records arrive: the raw data twice, as its
    /// size counts it, not the whole size.
    fn data_bytes(&self, data: &crate::DataSize, _limit_mb: Option<u64>) -> u64 {
        data.raw_bytes().saturating_mul(2)
    }

    /// 263 MiB resident on 8.1 (its index and thread stacks are allocated
    /// at start), measured by `crates/servers/tests/aerospike.rs`.
    fn idle_bytes(&self) -> u64 {
        280 << 20
    }

    /// The namespace kvbench configures (`ycsb`).
    fn namespace(&self) -> Option<String> {
        Some(NAMESPACE.to_string())
    }

    fn no_memory_limit(&self) -> Option<&'static str> {
        Some("evicts only records with a TTL and kvbench writes none; its namespace is sized from the data set")
    }

    fn no_faults(&self) -> Option<&'static str> {
        Some("nodes are not restarted or paused by kvbench")
    }

    fn binary(&self) -> &'static str {
        "asd"
    }

    fn binary_env(&self) -> Option<&'static str> {
        Some(BIN_ENV)
    }

    fn install_hint(&self) -> &'static str {
        "Aerospike's server is in no package registry kvbench can reach: build asd from the public \
         aerospike-server source (docs/aerospike.md) and name it with KVBENCH_AEROSPIKE_BIN"
    }

    fn launch(
        &self,
        _addr: SocketAddr,
        _dir: &Path,
        _memory_limit_mb: Option<u64>,
        _as_root: bool,
    ) -> Result<Launch, ServerError> {
        Err(ServerError::Aerospike {
            reason: "asd starts from the configuration file kvbench writes, not a command line"
                .into(),
            log_tail: String::new(),
        })
    }

    fn forbidden(&self, arg: &str) -> Option<&'static str> {
        (arg != PAPER_PRESET).then_some(
            "asd takes its settings from the configuration file kvbench writes (docs/aerospike.md); \
             the one server argument it takes is --paper-preset (paper A's service-threads 4)",
        )
    }

    fn split_option(&self, arg: &str) -> (String, Option<String>) {
        (arg.to_string(), None)
    }

    /// Aerospike reports no pid; a private node is identified by the
    /// `node-id` kvbench gave it (`crate::aerospike`).
    fn identify(&self, _at: Peer<'_>, _timeout: Duration) -> Result<Option<u32>, String> {
        Ok(None)
    }

    fn snapshot(&self, at: Peer<'_>, timeout: Duration) -> Result<Snapshot, String> {
        let ns = namespace_key(at)?;
        let m = query(at, &["release", "build", &ns], timeout)?;
        let (_, version) = release(&m);
        let raw = m.get(&ns).map_or("", String::as_str);
        let pairs = aerospike_info::parse_pairs(raw);
        if !pairs.contains_key("objects") {
            return Err(format!(
                "no namespace '{}' there (it answered {:?})",
                &ns["namespace/".len()..],
                raw.chars().take(80).collect::<String>()
            ));
        }
        Ok(Snapshot {
            memory_bytes: namespace_memory(&pairs),
            items: parse_u64(pairs.get("objects")),
            evictions: parse_u64(pairs.get("evicted_objects")),
            name: Some("aerospike".into()),
            version,
            ..Snapshot::default()
        })
    }

    /// `statistics` and the namespace's statistics (under `namespace.`).
    fn info(&self, at: Peer<'_>, timeout: Duration) -> Result<BTreeMap<String, String>, String> {
        let ns = namespace_key(at)?;
        let m = query(at, &["statistics", &ns], timeout)?;
        let mut out = aerospike_info::parse_pairs(m.get("statistics").map_or("", String::as_str));
        for (k, v) in aerospike_info::parse_pairs(m.get(&ns).map_or("", String::as_str)) {
            out.insert(format!("namespace.{k}"), v);
        }
        Ok(out)
    }

    fn pid_key(&self) -> &'static str {
        ""
    }

    fn command_stats(
        &self,
        at: Peer<'_>,
        timeout: Duration,
    ) -> Result<(Option<u32>, Counts), String> {
        let ns = namespace_key(at)?;
        let m = query(at, &[&ns], timeout)?;
        let pairs = aerospike_info::parse_pairs(m.get(&ns).map_or("", String::as_str));
        let counts = COUNTERS
            .iter()
            .filter_map(|k| parse_u64(pairs.get(*k)).map(|n| (k.to_string(), n)))
            .collect();
        Ok((None, counts))
    }

    fn flush(&self, _at: Peer<'_>, _timeout: Duration) -> Result<(), String> {
        Err(
            "kvbench does not truncate an Aerospike namespace it did not create; give an empty \
             namespace, or --allow-existing"
                .into(),
        )
    }

    /// Its nodes form their own cluster; twemproxy does not speak its
    /// protocol.
    fn topologies(&self) -> &'static [TopologyKind] {
        &[TopologyKind::Single, TopologyKind::Cluster]
    }

    /// `proto-fd-max`, as kvbench's configuration sets it (the server's
    /// own default is 15,000 too).
    fn connection_limit(&self) -> super::ConnectionLimit {
        super::ConnectionLimit {
            option: "proto-fd-max",
            default: 15_000,
            reserved: 0,
        }
    }
}

/// `namespace/<ns>` for the namespace the peer's access names.
fn namespace_key(at: Peer<'_>) -> Result<String, String> {
    at.access
        .namespace
        .as_deref()
        .map(|ns| format!("namespace/{ns}"))
        .ok_or_else(|| format!("{}: no Aerospike namespace given", at.addr))
}

/// The edition and version a `release` reply holds (8.1 deprecates the
/// `edition` and `version` commands), with `build` for older servers.
pub(crate) fn release(m: &aerospike_info::Info) -> (Option<String>, Option<String>) {
    let release = aerospike_info::parse_pairs(m.get("release").map_or("", String::as_str));
    (
        release.get("edition").cloned(),
        release.get("version").or_else(|| m.get("build")).cloned(),
    )
}

/// One info request on a fresh connection.
pub(crate) fn query(
    at: Peer<'_>,
    names: &[&str],
    timeout: Duration,
) -> Result<aerospike_info::Info, String> {
    let mut req = Vec::new();
    aerospike_info::encode_request(&mut req, names);
    exchange(at, timeout, &req, aerospike_info::parse_reply)
}

/// The namespace's memory: the sum of the figures it reports.
fn namespace_memory(pairs: &BTreeMap<String, String>) -> Option<u64> {
    MEMORY_KEYS
        .iter()
        .filter_map(|k| parse_u64(pairs.get(*k)))
        .reduce(|a, b| a + b)
}
