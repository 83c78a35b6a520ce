//! What to start: the system, its binary, its memory limit and the
//! user's extra arguments, apart from the guard that starts it.

use kvbench_model::SystemKind;
use std::path::PathBuf;

/// What to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// Which server.
    pub system: SystemKind,
    /// The binary to run; `None` searches `PATH` for `redis-server` / `memcached`.
    pub binary: Option<PathBuf>,
    /// Memory limit in MB: Memcached `-m` (`None`: its default, 64), Redis
    /// `--maxmemory <N>mb` (`None`: no limit, Redis's default).
    pub memory_limit_mb: Option<u64>,
    /// What the server does at that limit (`None`: its default; see
    /// [`check_eviction`](crate::check_eviction) for which it has).
    pub eviction: Option<crate::Eviction>,
    /// Extra server arguments, appended after kvbench's own (so they win) and
    /// recorded as settings with reason `user`. Port, bind address and
    /// daemon mode are refused.
    pub extra_args: Vec<String>,
}

impl ServerSpec {
    /// A spec for `system` with every default.
    pub fn new(system: SystemKind) -> Self {
        ServerSpec {
            system,
            binary: None,
            memory_limit_mb: None,
            eviction: None,
            extra_args: Vec::new(),
        }
    }
}

/// What the servers are to hold: the figures a system sizes its memory
/// limit from ([`memory_limit_mb`](crate::memory_limit_mb)) and estimates
/// its resident memory from ([`data_bytes`](crate::data_bytes)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataSize {
    /// Records at most: those loaded and every insert the window may add.
    pub records: u64,
    /// The longest key, bytes.
    pub key_bytes: u64,
    /// A record's field data, bytes (what a record store keeps as bins).
    pub record_bytes: u64,
    /// A record as one value, bytes, as kvbench encodes it for a plain
    /// key-value store (its fields with their names, as Memcached keeps
    /// them).
    pub value_bytes: u64,
    /// A record's field names, bytes, as a hash keeps them beside the
    /// values.
    pub names_bytes: u64,
    /// The records are sorted sets' members (16 raw bytes each, a
    /// skiplist node and a dict entry apiece on the server).
    pub sorted_sets: bool,
}

impl DataSize {
    /// Keys and field data: what the records are worth before any server
    /// stores them.
    pub fn raw_bytes(&self) -> u64 {
        self.records
            .saturating_mul(self.record_bytes.saturating_add(self.key_bytes))
    }
}
