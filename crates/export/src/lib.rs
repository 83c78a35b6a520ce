//! Exports of stored runs in formats other tools read: CSV and JSON for
//! spreadsheets and scripts, HdrHistogram interval logs (`.hlog`) and
//! percentile distributions (`.hgrm`) for the HdrHistogram tool chain, and a
//! memtier_benchmark JSON for memtier's plotting scripts.
//!
//! Every exporter is a pure function from [`RunRecord`]s to bytes, one module
//! per format, so each can be tested without a database or a file system.
//! It never reads the store, never writes files, and never talks to servers:
//! the CLI selects the runs, reads them, and writes what comes back here
//! (atomically). Histogram arithmetic shared by the formats lives in `hist`.
#![deny(missing_docs)]

pub mod csv;
pub mod hgrm;
mod hist;
pub mod hlog;
pub mod json;
pub mod memtier;

pub use kvbench_model::RunRecord;

/// Why an export could not be made. Variants name the run, so one line is
/// enough for the user to act on.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The run has neither a load phase nor a measured window (it failed
    /// before either finished), so there is nothing to export per phase.
    #[error("run {run} has no measured phase (status {status}); nothing to export")]
    NoPhases {
        /// The run id.
        run: i64,
        /// Its status, which usually explains why.
        status: &'static str,
    },
    /// The run was stored before kvbench kept per-second histograms (schema
    /// version 4), so no interval log can be made from it.
    #[error(
        "run {run} has no per-second histograms (it was stored by a kvbench older than \
         schema version 4); --format hlog needs them, the other formats do not"
    )]
    NoIntervalHistograms {
        /// The run id.
        run: i64,
    },
    /// The run has no measured window; memtier's JSON describes one.
    #[error("run {run} has no measured window (status {status}); memtier-json describes one")]
    NoWindow {
        /// The run id.
        run: i64,
        /// Its status.
        status: &'static str,
    },
    /// A stored histogram could not be decoded: the database holds data
    /// kvbench would not have written.
    #[error("run {run}: {what} histogram: {reason}")]
    BadHistogram {
        /// The run id.
        run: i64,
        /// Which histogram (`run/read`, `run/read second 3`).
        what: String,
        /// What the decoder said.
        reason: String,
    },
    /// Writing the CSV failed (into memory, so only on a serialisation fault).
    #[error("CSV: {0}")]
    Csv(#[from] ::csv::Error),
    /// Writing JSON failed (into memory, so only on a serialisation fault).
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A histogram could not be serialised into an interval log.
    #[error("interval log of run {run}: {reason}")]
    Hlog {
        /// The run id.
        run: i64,
        /// What the writer said.
        reason: String,
    },
}

/// One file of a multi-file export: its name (no directory) and contents.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportFile {
    /// File name, unique within one export: `run-3-run-read.hlog`.
    pub name: String,
    /// The file's contents.
    pub bytes: Vec<u8>,
}

/// The file name of run `run`'s `phase`/`op` export with extension `ext`;
/// one place, so .hlog and .hgrm files of the same histogram pair up.
pub(crate) fn file_name(run: i64, phase: &str, op: kvbench_model::OpKind, ext: &str) -> String {
    format!("run-{run}-{phase}-{op}.{ext}")
}

/// The phases a record holds, with their names, in the order they ran.
pub(crate) fn phases(
    r: &RunRecord,
) -> impl Iterator<Item = (&'static str, &kvbench_model::PhaseResult)> {
    [("load", r.load.as_ref()), ("run", r.run.as_ref())]
        .into_iter()
        .filter_map(|(name, p)| p.map(|p| (name, p)))
}

/// Refuses a run with no phase at all: the per-histogram formats would
/// write nothing, and an empty directory would look like success.
pub(crate) fn require_phases(r: &RunRecord) -> Result<(), ExportError> {
    if r.load.is_none() && r.run.is_none() {
        return Err(ExportError::NoPhases {
            run: run_id(r),
            status: r.status.as_str(),
        });
    }
    Ok(())
}

/// A stored record's id (records read from the store always have one).
pub(crate) fn run_id(r: &RunRecord) -> i64 {
    r.id.unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    //! A small run with real histograms, shared by the format tests.
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    use hdrhistogram::Histogram;
    use kvbench_model::*;

    /// V2 base64, as the engine stores histograms (`sigfig` digits, ns).
    pub(crate) fn encoded(values: &[(u64, u64)], sigfig: u8) -> String {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, sigfig).unwrap();
        for &(v, n) in values {
            h.record_n(v, n).unwrap();
        }
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(&h, &mut bytes).unwrap();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn op(op: OpKind, completed: u64, misses: u64, values: &[(u64, u64)]) -> OpResult {
        OpResult {
            completed,
            misses,
            throughput: completed as f64 / 2.5,
            latency: LatencySummary {
                count: completed,
                min_us: 10.0,
                mean_us: 20.5,
                p50_us: 20.0,
                p95_us: 30.0,
                p99_us: 40.0,
                p999_us: 50.0,
                max_us: 60.0,
            },
            histogram: encoded(values, 3),
            ..OpResult::empty(op)
        }
    }

    fn point(second: u32, op: OpKind, values: &[(u64, u64)]) -> SeriesPoint {
        SeriesPoint {
            second,
            op,
            completed: values.iter().map(|v| v.1).sum(),
            misses: 0,
            errors: 0,
            p50_us: 1.0,
            p99_us: 2.0,
            p999_us: 3.0,
            histogram: if values.is_empty() {
                String::new()
            } else {
                encoded(values, 2)
            },
        }
    }

    /// Run 7: a load phase of inserts, then 2.5 s of reads and updates, the
    /// second second of reads empty (a stall).
    pub(crate) fn sample_record() -> RunRecord {
        let reads = [(10_000, 60), (20_000, 30), (900_000, 10)];
        let updates = [(15_000, 40), (25_000, 10)];
        RunRecord {
            id: Some(7),
            started_at: "2026-03-01T12:00:00Z".into(),
            finished_at: "2026-03-01T12:00:09Z".into(),
            status: RunStatus::Ok,
            failure: None,
            marks: vec![],
            warnings: vec![],
            config: RunConfig {
                system: SystemKind::Redis,
                workload: "balanced".into(),
                records: 1000,
                operations: 150,
                duration_s: None,
                field_count: 4,
                field_length: 50,
                read_proportion: 0.5,
                update_proportion: 0.5,
                insert_proportion: 0.0,
                request_distribution: "zipfian".into(),
                clients: 4,
                pipeline: 1,
                threads: 2,
                load_clients: 4,
                load_pipeline: 64,
                warmup_s: 0.1,
                seed: 3,
                seed_source: "user".into(),
                server_settings: vec![],
                server_binary: "/usr/bin/redis-server".into(),
                target: None,
                rate: None,
                arrival: None,
                allow_errors: false,
                allow_incomplete_load: false,
                skip_load: false,
                workload_properties: vec![],
                io: Some("tokio".into()),
                topology: TopologyKind::Single,
                nodes: 1,
                replicas: 0,
                pool_hash: None,
                flush: false,
                allow_existing: false,
                cleanup: false,
                netns: None,
                server_cpus: None,
                client_cpus: None,
                scale_out: None,
                reload: None,
                verdict: None,
                server_args: Vec::new(),
                threads_reason: None,
                stall_s: None,
                reconnect: None,
                max_retries: None,
                retry_backoff: None,
                faults: Vec::new(),
                max_memory: None,
                max_memory_mb: None,
                eviction: None,
                companion: None,
            },
            environment: Environment {
                server_version: "7.0.15".into(),
                ..Environment::default()
            },
            load: Some(PhaseResult {
                duration_s: 0.5,
                completed: 1000,
                errors: 0,
                throughput: 2000.0,
                ops: vec![op(OpKind::Insert, 1000, 0, &[(5_000, 1000)])],
                error_samples: vec![],
                errors_by_kind: vec![],
                error_replies: vec![],
                series: vec![point(0, OpKind::Insert, &[(5_000, 1000)])],
                offered_rate: None,
                redirects_moved: 0,
                redirects_ask: 0,
                retries: 0,
                reconnects: 0,
                outage: None,
                faults: Vec::new(),
                nodes: vec![],
                fills: 0,
                fill_errors: 0,
                fill_lateness: None,
                cache: None,
                server_time: None,
                scale_out: None,
            }),
            run: Some(PhaseResult {
                duration_s: 2.5,
                completed: 150,
                errors: 0,
                throughput: 60.0,
                ops: vec![
                    op(OpKind::Read, 100, 5, &reads),
                    op(OpKind::Update, 50, 0, &updates),
                ],
                error_samples: vec![],
                errors_by_kind: vec![],
                error_replies: vec![],
                series: vec![
                    point(0, OpKind::Read, &reads[..2]),
                    point(0, OpKind::Update, &updates),
                    point(1, OpKind::Read, &[]),
                    point(1, OpKind::Update, &[]),
                    point(2, OpKind::Read, &reads[2..]),
                    point(2, OpKind::Update, &[]),
                ],
                offered_rate: None,
                redirects_moved: 0,
                redirects_ask: 0,
                retries: 0,
                reconnects: 0,
                outage: None,
                faults: Vec::new(),
                nodes: vec![],
                fills: 0,
                fill_errors: 0,
                fill_lateness: None,
                cache: None,
                server_time: None,
                scale_out: None,
            }),
            probes: vec![],
            cpu: None,
            labels: Default::default(),
        }
    }
}
