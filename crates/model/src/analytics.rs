//! What an analytics command (paper D: `kvbench analytics pagerank` and
//! `lookup`) measured, as stored: one [`AnalyticsRecord`] per command, with a
//! row per implementation. Kept apart from [`crate::RunRecord`] because it
//! has no workload, phases or histograms: PageRank is timed per step, a
//! lookup run is a hundred single requests whose percentiles are exact, and
//! its set/get window is counted, not timed per request.

use crate::{Environment, RunStatus};
use serde::{Deserialize, Serialize};

/// Which analytics command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnalyticsKind {
    /// `kvbench analytics pagerank`.
    Pagerank,
    /// `kvbench analytics lookup`.
    Lookup,
}

impl AnalyticsKind {
    /// The name stored in the database and shown in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            AnalyticsKind::Pagerank => "pagerank",
            AnalyticsKind::Lookup => "lookup",
        }
    }
}

/// The graph a command ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphInfo {
    /// What `--graph` said (`synthetic:google`, `rmat:N:M`, a file path).
    pub source: String,
    /// In words, with scale and seed (`synthetic:google x1 (R-MAT, seed 1)`).
    pub description: String,
    /// `--scale` (1 for a file).
    pub scale: f64,
    /// `--seed` of a synthetic graph and of the keys `lookup` asks for.
    pub seed: u64,
    /// Nodes.
    pub nodes: u32,
    /// Distinct directed edges.
    pub edges: u64,
    /// Nodes without an outgoing edge.
    pub dangling: u32,
}

/// What the command was asked beyond the graph; fields of the other
/// command are `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyticsSettings {
    /// `--impl`, in the order given.
    pub implementations: Vec<String>,
    /// PageRank iterations.
    pub iterations: Option<u32>,
    /// PageRank damping factor.
    pub damping: Option<f64>,
    /// `--drivers` when given (else the paper's 5 for Memcached, 6 for Redis).
    pub drivers: Option<u32>,
    /// Lookups per system.
    pub count: Option<u32>,
    /// Seconds of set/get throughput per key-value store after its
    /// lookups (`--setget`; `None`: not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setget_s: Option<f64>,
    /// Where Spark ran.
    pub spark_master: String,
    /// The relative error per node every implementation had to stay within.
    pub tolerance: Option<f64>,
}

/// One PageRank implementation's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PagerankResult {
    /// `reference`, `redis`, `redis-lua`, `valkey`, `valkey-lua`,
    /// `memcached`, `spark`.
    pub implementation: String,
    /// Loading the graph into the system (for Spark: reading and caching
    /// the edges).
    pub load_s: f64,
    /// Each iteration's map time (for the reference the whole iteration).
    pub map_s: Vec<f64>,
    /// Each iteration's reduce time.
    pub reduce_s: Vec<f64>,
    /// The iterations' total.
    pub iterations_s: f64,
    /// Memory the loaded graph took in the system: the server's own memory
    /// figure after the load less before it; for Spark the cached RDDs; for
    /// the reference its arrays.
    pub memory_bytes: Option<u64>,
    /// The server's CPU seconds over the iterations.
    pub server_cpu_s: Option<f64>,
    /// kvbench's own CPU seconds over the iterations (its drivers).
    pub client_cpu_s: Option<f64>,
    /// Commands sent over the iterations (Spark: jobs).
    pub requests: Option<u64>,
    /// The largest relative difference from the reference over all nodes.
    pub max_relative_error: f64,
    /// What ran it (server version, drivers or script calls, Spark version
    /// and master).
    pub detail: String,
}

impl PagerankResult {
    /// The system behind the implementation: `redis-lua` runs on `redis`.
    pub fn system(&self) -> &str {
        self.implementation.trim_end_matches("-lua")
    }
}

/// One system's lookups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupResult {
    /// `redis`, `valkey`, `memcached`, `spark`.
    pub implementation: String,
    /// Lookups made (each answer checked against the graph).
    pub count: u32,
    /// Loading the records (Spark: building and caching the RDD).
    pub setup_s: f64,
    /// Median lookup latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// Largest, microseconds.
    pub max_us: f64,
    /// What ran it.
    pub detail: String,
    /// The set/get throughput test on the same loaded server, after the
    /// lookups (key-value stores only: an RDD takes no set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setget: Option<SetGetResult>,
}

/// Paper D's fine-grained set/get: the paper's drivers, each on its own
/// connection, setting and getting single small objects (a node's rank) as
/// fast as the server answers, and where the server's CPU time went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetGetResult {
    /// Driver threads, one connection each, one request in flight each.
    pub drivers: u32,
    /// The measured window, wall-clock seconds (monotonic clock).
    pub seconds: f64,
    /// Gets answered with the object (a miss is an error, not counted).
    pub gets: u64,
    /// Sets acknowledged.
    pub sets: u64,
    /// The server's user CPU seconds over the window (`utime`).
    pub server_user_s: Option<f64>,
    /// The server's system CPU seconds over the window (`stime`): the
    /// kernel's work for it, mostly the TCP stack's.
    pub server_system_s: Option<f64>,
    /// The resolution of the two server figures (one clock tick).
    pub tick_s: f64,
    /// kvbench's own CPU seconds over the window (its drivers).
    pub client_cpu_s: f64,
}

impl SetGetResult {
    /// Operations answered in the window: gets and sets.
    pub fn ops(&self) -> u64 {
        self.gets + self.sets
    }
    /// Operations per second over the window.
    pub fn ops_per_s(&self) -> f64 {
        self.ops() as f64 / self.seconds.max(1e-9)
    }
    /// The server's CPU over the window as a share of one core.
    pub fn server_busy(&self) -> Option<f64> {
        Some((self.server_user_s? + self.server_system_s?) / self.seconds.max(1e-9))
    }
    /// The kernel's share of the server's CPU time.
    pub fn kernel_share(&self) -> Option<f64> {
        let (user, system) = (self.server_user_s?, self.server_system_s?);
        Some(system / (user + system).max(1e-9))
    }
    /// kvbench's CPU over the window as a share of one core.
    pub fn client_busy(&self) -> f64 {
        self.client_cpu_s / self.seconds.max(1e-9)
    }
}

/// One analytics command, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyticsRecord {
    /// Store id, once saved (numbered apart from runs).
    pub id: Option<i64>,
    /// Which command.
    pub kind: AnalyticsKind,
    /// Wall-clock start (RFC 3339, UTC).
    pub started_at: String,
    /// Wall-clock end (RFC 3339, UTC).
    pub finished_at: String,
    /// `ok`, or `failed` with [`AnalyticsRecord::failure`]; the
    /// implementations that finished before the failure are kept.
    pub status: RunStatus,
    /// Why it failed.
    pub failure: Option<String>,
    /// The graph.
    pub graph: GraphInfo,
    /// The rest of what was asked.
    pub settings: AnalyticsSettings,
    /// The machine (server fields empty: each result names its server).
    pub environment: Environment,
    /// PageRank results, in `--impl` order.
    #[serde(default)]
    pub pagerank: Vec<PagerankResult>,
    /// Lookup results, in `--impl` order.
    #[serde(default)]
    pub lookups: Vec<LookupResult>,
}
