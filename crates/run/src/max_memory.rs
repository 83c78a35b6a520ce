//! `--max-memory` and `--eviction` for one cell: the limit each server
//! kvbench starts gets, in MB, and the policy it evicts by.

use crate::settings::RunSettings;

/// `--max-memory` in MB for each server: a share is of the raw data one
/// server holds (its keys and values, the data set split over the shards).
pub fn mb(s: &RunSettings) -> Option<u64> {
    let limit = s.max_memory?;
    Some(limit.mb(raw_per_server(s, s.records_at_most())))
}

/// The raw bytes (keys and values) `records` records put on each server
/// that holds a share of the data set.
pub fn raw_per_server(s: &RunSettings, records: u64) -> u64 {
    let data = kvbench_servers::DataSize {
        records,
        ..crate::dataset::data_size(s)
    };
    data.raw_bytes() / u64::from(s.topology.shards(s.nodes))
}

/// The policy a memory-limited run's servers evict by: `--eviction`, else
/// the server's own default (Redis's and Valkey's is noeviction,
/// Memcached's its segmented LRU). `None` without `--max-memory`.
pub fn eviction(s: &RunSettings) -> Option<kvbench_servers::Eviction> {
    s.max_memory?;
    Some(
        s.eviction
            .unwrap_or_else(|| kvbench_servers::default_eviction(s.system)),
    )
}

/// Why a memory-limited cell cannot measure the cache it asks for: a
/// server already uses half its limit or more before any record (its own
/// baseline: about 0.9 MB for a lone Redis, a few MB for a cluster node's
/// bus and slot tables), so it would hold less than half the data the
/// limit was set for, and at a few percent over its baseline every write
/// is refused ("OOM command not allowed") even with an evicting policy.
/// `None` when there is room, or nothing to judge.
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
    (used.saturating_mul(2) >= limit).then(|| {
        format!(
            "--max-memory {}: a server uses {:.1} MB before any record, half or more of its {mb} MB limit, so it would cache less than half of what the limit is for; give a larger limit (or more records, for a share)",
            s.max_memory.map(|m| m.to_string()).unwrap_or_default(),
            used as f64 / f64::from(1 << 20)
        )
    })
}
