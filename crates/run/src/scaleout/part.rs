//! What a worker sends back: its share of the phase in the stored form
//! (histograms whole, so the driver adds them exactly) and the figures the
//! driver needs to judge the run as it judges one process's.

use kvbench_engine::{CutShort, PhaseOutput, Slice};
use kvbench_model::PhaseResult;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::time::{SystemTime, UNIX_EPOCH};

/// One worker's result (the last line of `kvbench worker`'s stdout).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerPartResult {
    /// Its slice index.
    pub worker: u32,
    /// Workers in all.
    pub workers: u32,
    /// Its clients.
    pub clients: u32,
    /// Its host name.
    pub host: String,
    /// Its process id (to find it in logs).
    pub pid: u32,
    /// What it measured, histograms included.
    pub result: PhaseResult,
    /// Its clock when its clients were released (warm-up start), in ns
    /// since the Unix epoch.
    pub started_unix_ns: u64,
    /// Its CPU seconds over the window.
    pub client_cpu_seconds: f64,
    /// Each of its threads' busy share of the window.
    pub worker_busy: Vec<f64>,
    /// Open loop: why its share of the schedule was not kept.
    pub overloaded: Option<kvbench_model::Finding>,
    /// `interrupted` or `connections_lost` when its window ended early.
    pub cut_short: Option<String>,
    /// Waits above the stall threshold, and the longest.
    pub stalls: u64,
    /// In ns.
    pub longest_stall_ns: u64,
    /// Latencies clamped to the histograms' top.
    pub clamped: u64,
    /// Connections that ended on an error.
    pub failed_connections: u64,
    /// Connections it opened (workers before this field: 0, unknown).
    #[serde(default)]
    pub connections: u64,
    /// Connections it lost and opened again or was opening at the end.
    #[serde(default)]
    pub lost_connections: u64,
    /// Its window in steps of 100 ms (completed, failed without a reply,
    /// highest latency in ns), whether or not anything failed: the
    /// driver adds every worker's steps to find the outage.
    #[serde(default)]
    pub steps: Vec<[u64; 3]>,
    /// Its first request failed without a reply, ns into its window.
    #[serde(default)]
    pub first_failure_ns: Option<u64>,
    /// The records its inserts were handed (`[start, end)`), for `--cleanup`.
    #[serde(default)]
    pub inserted: Vec<(u64, u64)>,
}

/// Nanoseconds since the Unix epoch (0 for a clock before it).
pub fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl WorkerPartResult {
    /// `out` as slice `slice` of a phase of `clients` clients measured it,
    /// having handed out the insert records `inserted`.
    pub fn new(
        slice: Slice,
        clients: u32,
        out: PhaseOutput,
        inserted: Vec<Range<u64>>,
    ) -> WorkerPartResult {
        WorkerPartResult {
            worker: slice.index,
            workers: slice.count,
            clients: slice.clients_of(clients),
            host: kvbench_servers::machine_environment().host,
            pid: std::process::id(),
            started_unix_ns: unix_ns(out.started_wall),
            client_cpu_seconds: out.client_cpu_seconds,
            worker_busy: out.worker_busy,
            overloaded: out.overloaded,
            cut_short: out.cut_short.map(|c| cut_name(c).to_string()),
            stalls: out.recorder.stalls,
            longest_stall_ns: out.recorder.longest_stall_ns,
            clamped: out.recorder.clamped,
            failed_connections: out.recorder.failed_connections,
            connections: out.recorder.connections,
            lost_connections: out.recorder.lost_connections,
            steps: out.recorder.timeline.steps().to_vec(),
            first_failure_ns: out.recorder.timeline.first_failure_ns(),
            inserted: inserted.into_iter().map(|r| (r.start, r.end)).collect(),
            result: out.result,
        }
    }
}

fn cut_name(c: CutShort) -> &'static str {
    match c {
        CutShort::Interrupted => "interrupted",
        CutShort::ConnectionsLost => "connections_lost",
    }
}

/// The inverse of the name a worker reports.
pub fn cut_short(name: &str) -> Option<CutShort> {
    [CutShort::Interrupted, CutShort::ConnectionsLost]
        .into_iter()
        .find(|c| cut_name(*c) == name)
}
