//! `--max-memory` and `--eviction` for one cell: the limit each server
//! kvbench starts gets, in MB, and the policy it evicts by.

use crate::config::RunSettings;

/// `--max-memory` in MB for each server: a share is of the raw data one
/// server holds (its keys and values, the data set split over the shards).
pub fn mb(s: &RunSettings) -> Option<u64> {
    let limit = s.max_memory?;
    Some(limit.mb(raw_per_server(s, crate::config::records_at_most(s))))
}

/// The raw bytes (keys and values) `records` records put on each server
/// that holds a share of the data set.
pub fn raw_per_server(s: &RunSettings, records: u64) -> u64 {
    records.saturating_mul(s.spec.record_bytes() + s.spec.key_namer().max_len() as u64)
        / u64::from(s.topology.shards(s.nodes))
}

/// The policy a memory-limited run's servers evict by: `--eviction`, else
/// the server's own default (Redis's and Valkey's is noeviction,
/// Memcached's its segmented LRU). `None` without `--max-memory`.
pub fn eviction(s: &RunSettings) -> Option<kvbench_servers::Eviction> {
    s.max_memory?;
    Some(s.eviction.unwrap_or(match s.system.protocol() {
        kvbench_model::Protocol::Memcache => kvbench_servers::Eviction::Lru,
        _ => kvbench_servers::Eviction::NoEviction,
    }))
}

/// Why a memory-limited cell cannot measure a cache: a server already uses
/// nine tenths of its limit before any record (its own baseline: a cluster
/// node's bus and slot tables take a few MB), so nothing, or next to
/// nothing, would be cached and every write would be refused. `None` when
/// there is room, or nothing to judge.
pub fn no_room(s: &RunSettings, before: &kvbench_model::Probe) -> Option<String> {
    let mb = mb(s)?;
    let limit = mb << 20;
    let used = if before.nodes.is_empty() {
        before.server_memory_bytes
    } else {
        before
            .nodes
            .iter()
            .filter_map(|n| n.server_memory_bytes)
            .max()
    }?;
    (used.saturating_mul(10) >= limit.saturating_mul(9)).then(|| {
        format!(
            "--max-memory {}: a server uses {:.1} MB before any record, and its limit is {mb} MB, so nothing would be cached; give a larger limit (or more records, for a share)",
            s.max_memory.map(|m| m.to_string()).unwrap_or_default(),
            used as f64 / f64::from(1 << 20)
        )
    })
}
