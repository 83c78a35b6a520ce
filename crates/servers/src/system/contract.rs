//! What every system implements ([`System`]) and the types and helpers its
//! implementations share (a launch, a probe snapshot, a one-shot query), so
//! that each system's file depends on this contract and never on the list
//! of systems in `mod.rs`.

use crate::ServerError;
use kvbench_connect::Access;
use kvbench_model::{Probe, Setting};
use kvbench_proto::DecodeError;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

/// Replies larger than this are refused: no probe answer comes close, and a
/// runaway buffer would be worse than an error.
pub(crate) const MAX_REPLY: usize = 16 * 1024 * 1024;

/// A server's command line and the settings it deviates in.
pub(crate) struct Launch {
    pub args: Vec<String>,
    pub settings: Vec<Setting>,
}

/// What one probe query tells, with `None` for anything the server did not say.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// The pid the server reports for itself.
    pub pid: Option<u32>,
    pub memory_bytes: Option<u64>,
    pub items: Option<u64>,
    pub evictions: Option<u64>,
    /// What the server calls itself (`redis`, `valkey`, `memcached`).
    pub name: Option<String>,
    pub version: Option<String>,
    pub allocator: Option<String>,
    /// The process's resident memory as the server reports it (Redis
    /// `used_memory_rss`): what a remote server's probe records instead of `/proc`.
    pub reported_rss: Option<u64>,
    /// The process's CPU seconds (user + system) as the server reports them.
    pub reported_cpu: Option<f64>,
}

impl Snapshot {
    /// A probe at `stage` from the server's own figures, with the process
    /// figures read from `/proc` (`None` for a process that is not ours).
    pub(crate) fn probe(
        self,
        stage: &str,
        rss_bytes: Option<u64>,
        cpu_seconds: Option<f64>,
    ) -> Probe {
        Probe {
            stage: stage.to_string(),
            rss_bytes,
            server_memory_bytes: self.memory_bytes,
            cpu_seconds,
            items: self.items,
            evictions: self.evictions,
            nodes: Vec::new(),
        }
    }
}

/// Per-command call counts, by command (or counter) name.
pub(crate) type Counts = Vec<(String, u64)>;

/// Everything kvbench knows about one kind of server: how to find and start
/// it, which of its options kvbench must own, and what its cold-path
/// queries say. One implementation per module; [`of`] is the only place
/// that maps a [`SystemKind`] to one, so a new system is a new module and
/// one line there.
pub(crate) trait System: Sync {
    /// The executable searched on `PATH` when no binary is given.
    fn binary(&self) -> &'static str;
    /// The environment variable that names the binary when no
    /// `--server-bin` is given (before `PATH` is searched).
    fn binary_env(&self) -> Option<&'static str> {
        None
    }
    /// How to get the binary, for the "not found" message.
    fn install_hint(&self) -> &'static str;
    /// The command line for a private server bound to `addr` in `dir`,
    /// before the caller's extra arguments.
    fn launch(
        &self,
        addr: SocketAddr,
        dir: &Path,
        memory_limit_mb: Option<u64>,
        as_root: bool,
    ) -> Result<Launch, ServerError>;
    /// Every command's calls, execution time and latency histogram since the
    /// server started; `None` when the system keeps no such counters.
    fn command_times(
        &self,
        _at: Peer<'_>,
        _timeout: Duration,
    ) -> Result<Option<kvbench_model::CommandTimes>, String> {
        Ok(None)
    }
    /// What sets eviction policy `policy` on its command line; `None` when
    /// the system has no such policy.
    fn eviction(&self, _policy: crate::Eviction) -> Option<Launch> {
        None
    }
    /// The memory limit (MB) a private server is started with to hold
    /// `data` when the user sets none; `None` when the server grows as it
    /// needs (its default).
    fn memory_for(&self, _data: &crate::DataSize) -> Option<u64> {
        None
    }
    /// What one copy of `data` is expected to keep resident over the
    /// servers that share it, erring high, given the limit (MB) each server
    /// was started with; without the servers' idle processes
    /// ([`System::idle_bytes`]).
    fn data_bytes(&self, data: &crate::DataSize, limit_mb: Option<u64>) -> u64;
    /// An idle server process: binary, allocator arenas, buffers.
    fn idle_bytes(&self) -> u64 {
        16 << 20
    }
    /// Why kvbench gives the server no memory limit of the user's
    /// (`--max-memory`), when it gives none (`None`: it does).
    fn no_memory_limit(&self) -> Option<&'static str> {
        None
    }
    /// Why kvbench does not restart, pause or fail over the server's nodes
    /// (`--fault`), when it does not (`None`: it does).
    fn no_faults(&self) -> Option<&'static str> {
        None
    }
    /// The smallest memory limit (MB) the server starts with, and why
    /// (`None`: any).
    fn min_limit_mb(&self) -> Option<(u64, &'static str)> {
        None
    }
    /// The policy the server evicts by at a memory limit when none is
    /// given (its own default).
    fn default_eviction(&self) -> crate::Eviction {
        crate::Eviction::NoEviction
    }
    /// Why kvbench must own this option (`None`: the caller may set it).
    fn forbidden(&self, arg: &str) -> Option<&'static str>;
    /// The option's name as kvbench records it, and any value attached to it.
    fn split_option(&self, arg: &str) -> (String, Option<String>);
    /// The pid the server reports, from the cheapest query that has it.
    fn identify(&self, at: Peer<'_>, timeout: Duration) -> Result<Option<u32>, String>;
    /// Memory, items, evictions, identity and pid in one query.
    fn snapshot(&self, at: Peer<'_>, timeout: Duration) -> Result<Snapshot, String>;
    /// Everything the server says about itself, as key/value pairs.
    fn info(&self, at: Peer<'_>, timeout: Duration) -> Result<BTreeMap<String, String>, String>;
    /// The key of [`System::info`] that holds the server's pid.
    fn pid_key(&self) -> &'static str;
    /// Per-command call counts and the pid that reported them.
    fn command_stats(
        &self,
        at: Peer<'_>,
        timeout: Duration,
    ) -> Result<(Option<u32>, Counts), String>;
    /// Deletes every key the connection sees (Redis `FLUSHDB`: the
    /// selected database only; Memcached `flush_all`). Only ever called for
    /// `--flush` on a server kvbench did not start.
    fn flush(&self, at: Peer<'_>, timeout: Duration) -> Result<(), String>;
    /// The option that limits the connections a private server accepts at
    /// once (named as [`System::split_option`] records it), its default, and
    /// how many of them the server keeps for itself.
    fn connection_limit(&self) -> ConnectionLimit;
    /// The namespace a private server's records go to, for a system that
    /// has namespaces (`None`: it has none).
    fn namespace(&self) -> Option<String> {
        None
    }
    /// The deployments kvbench can start for this system (`single` first):
    /// what `--topology` accepts for it, and what a refusal names.
    fn topologies(&self) -> &'static [kvbench_model::TopologyKind];
    /// The cheapest request a connection can send to learn that the server
    /// serves it, and how its refusal reads (Redis's `max number of clients
    /// reached` comes as the reply); `None` for a system whose client
    /// library keeps its own connections.
    fn liveness(&self) -> Option<Liveness> {
        None
    }
    /// What a node of a server-side cluster bound to `addr` adds to its
    /// command line; `None` when the system has no such cluster.
    fn cluster_node(&self, _addr: SocketAddr) -> Option<Launch> {
        None
    }
    /// Asks the server at `at` to save its data and exit (a restart's
    /// first half); false when the system has no such command (it is then
    /// sent SIGTERM).
    fn stop_saving(&self, _at: Peer<'_>, _timeout: Duration) -> bool {
        false
    }
    /// What a replica of the master at `master` adds to its command line;
    /// `None` when the system has no replication.
    fn replica_of(&self, _master: SocketAddr) -> Option<Launch> {
        None
    }
    /// The command line's start for a sentinel watching `master` as
    /// `group` (its configuration file written in `dir`, which the
    /// sentinel rewrites); `None` when the system has no Sentinel.
    ///
    /// # Errors
    /// When the configuration file cannot be written.
    fn sentinel(
        &self,
        _dir: &Path,
        _master: SocketAddr,
        _group: &str,
    ) -> Result<Option<Launch>, std::io::Error> {
        Ok(None)
    }
}

/// See [`System::liveness`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Liveness {
    /// The request.
    pub request: &'static [u8],
    /// The text of a reply that refuses; `None` for any other reply.
    pub refusal: fn(&[u8]) -> Option<&[u8]>,
}

/// See [`System::connection_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionLimit {
    /// The option, as [`System::split_option`] names it.
    pub option: &'static str,
    /// Its value when nobody sets it.
    pub default: u64,
    /// Connections (descriptors) the server counts against the limit
    /// before any client: listening sockets, its own pipes.
    pub reserved: u64,
}

/// What a started server is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A server on its own.
    Single,
    /// A node of a server-side cluster.
    ClusterNode,
    /// A replica of the master at this address.
    Replica(SocketAddr),
    /// A sentinel watching the master at this address.
    Sentinel(SocketAddr),
}

/// Why a server binds `ip`, recorded with its bind-address setting.
pub(crate) fn bind_reason(ip: IpAddr) -> &'static str {
    if ip.is_loopback() {
        "loopback only: the server is private to this run and must not be reachable from the network"
    } else {
        "its own network namespace's address (--netns): reachable only inside this run's private network"
    }
}

/// Where a cold-path query goes: a node, and how to open a connection to
/// it (TLS, AUTH) when kvbench did not start it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer<'a> {
    pub addr: SocketAddr,
    pub access: &'a Access,
}

impl Peer<'static> {
    /// A server kvbench started: plain TCP, no AUTH.
    pub(crate) fn plain(addr: SocketAddr) -> Peer<'static> {
        Peer {
            addr,
            access: &kvbench_connect::PLAIN,
        }
    }
}

/// One request, one complete reply, on a fresh connection. Errors are plain
/// messages; the caller knows which server they concern.
pub(crate) fn exchange<T>(
    at: Peer<'_>,
    timeout: Duration,
    request: &[u8],
    parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, DecodeError>,
) -> Result<T, String> {
    kvbench_connect::exchange(at.addr, at.access, timeout, request, MAX_REPLY, parse)
}

pub(crate) fn parse_u64(value: Option<&String>) -> Option<u64> {
    value?.trim().parse().ok()
}

/// The sum of two reported CPU-seconds figures (user and system).
pub(crate) fn cpu_sum(a: Option<&String>, b: Option<&String>) -> Option<f64> {
    let f = |v: Option<&String>| v?.trim().parse::<f64>().ok();
    Some(f(a)? + f(b)?)
}

pub(crate) fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a String> {
    pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}
