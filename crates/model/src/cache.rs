//! A cache under memory pressure (`--max-memory`): how many reads hit, what
//! the server evicted to make room and how full it was, over the window and
//! second by second (derived in `kvbench_stats::cache`). docs/metrics.md,
//! "Caches under a memory limit", defines each figure.

use serde::{Deserialize, Serialize};

/// The servers' own counters at one instant of the window, read once a
/// second while a memory-limited run measures (summed over the nodes that
/// hold data).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSecond {
    /// Seconds since the window opened (0: at its start).
    pub at_s: u32,
    /// The servers' own memory figure (Redis `used_memory`, Memcached `bytes`).
    pub server_memory_bytes: Option<u64>,
    /// Items held.
    pub items: Option<u64>,
    /// Evictions since the server started.
    pub evictions: Option<u64>,
}

/// One second of a memory-limited window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheSecond {
    /// Seconds since the window opened (0 = its first second).
    pub second: u32,
    /// Reads that hit over reads answered in this second (`None`: none answered).
    pub hit_ratio: Option<f64>,
    /// Items the servers evicted in this second (`None`: not read).
    pub evictions: Option<u64>,
    /// The servers' own memory at the second's end.
    pub server_memory_bytes: Option<u64>,
}

/// A memory-limited window's cache figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheFigures {
    /// Reads that found their record.
    pub hits: u64,
    /// Reads that found none.
    pub misses: u64,
    /// `hits / (hits + misses)` over the window (`None`: no read).
    pub hit_ratio: Option<f64>,
    /// Items the servers evicted within the window (`None`: not read).
    pub evictions: Option<u64>,
    /// Those evictions per second of the window.
    pub evictions_per_s: Option<f64>,
    /// The limit over every server that holds data, in bytes.
    pub limit_bytes: u64,
    /// The servers' own memory at the window's end.
    pub server_memory_bytes: Option<u64>,
    /// That memory over the limit (1.0: full).
    pub memory_of_limit: Option<f64>,
    /// Second by second.
    pub seconds: Vec<CacheSecond>,
}
