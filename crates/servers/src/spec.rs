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
