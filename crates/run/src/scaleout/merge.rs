//! The driver's merge of its workers' parts into one phase: histograms
//! added (never percentiles averaged), counts summed, seconds aligned by
//! index (every worker's seconds count from the one common start), and the
//! rate taken over the common window. Nothing is merged unless every worker
//! delivered: a missing or failed worker fails the phase, named.

use super::part::{cut_short, WorkerPartResult};
use anyhow::{bail, Result};
use kvbench_engine::recorder::Recorder;
use kvbench_engine::series::SeriesRecorder;
use kvbench_engine::{CutShort, PhaseOutput};
use kvbench_model::{Finding, NodeCount, ScaleOutResult, WorkerPart};
use std::time::{Duration, UNIX_EPOCH};

/// One worker as its Spark task returned it.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// Its clock minus the driver's, in ns.
    pub offset_ns: i64,
    /// Its best round trip to the driver's clock, in ns.
    pub rtt_ns: u64,
    /// What it measured.
    pub part: WorkerPartResult,
}

/// The Spark job that carried the workers.
#[derive(Debug, Clone)]
pub struct Job {
    /// `local[4]`, `spark://...`.
    pub master: String,
    /// Spark's version.
    pub version: String,
    /// Session start-up, in seconds.
    pub startup_s: f64,
}

/// What the phase was asked for, to merge against.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    /// Workers started.
    pub workers: u32,
    /// A time-bound window's length.
    pub window: Option<Duration>,
    /// Requests in flight per connection (closed loop divides latency by it).
    pub pipeline: u32,
    /// Closed loop (no `--rate`).
    pub closed_loop: bool,
}

/// Merges every worker's part into the phase one process would report.
///
/// # Errors
/// When a worker is missing or reported twice, or a histogram cannot be
/// decoded: nothing is merged then.
pub fn merge(asked: Asked, job: &Job, mut delivered: Vec<Delivered>) -> Result<PhaseOutput> {
    delivered.sort_by_key(|d| d.part.worker);
    for (i, d) in delivered.iter().enumerate() {
        if d.part.worker as usize != i || d.part.workers != asked.workers {
            bail!(
                "worker {i} of {} did not report (got worker {}/{})",
                asked.workers,
                d.part.worker,
                d.part.workers
            );
        }
    }
    if delivered.len() != asked.workers as usize {
        bail!(
            "worker {} of {} did not report",
            delivered.len(),
            asked.workers
        );
    }
    // Start instants on the driver's clock.
    let starts: Vec<i128> = delivered
        .iter()
        .map(|d| i128::from(d.part.started_unix_ns) - i128::from(d.offset_ns))
        .collect();
    let first = starts.iter().copied().min().unwrap_or_default();
    let last = starts.iter().copied().max().unwrap_or_default();

    let mut recorder = Recorder::default();
    let mut cpu = 0.0;
    let mut busy = Vec::new();
    let mut overloaded = None;
    let mut cut = None;
    let mut nodes: Vec<NodeCount> = Vec::new();
    let mut offered = None;
    // The common window: from the earliest worker's window start to the
    // latest worker's window end.
    let mut window_end_ns = 0i128;
    for (d, start) in delivered.iter().zip(&starts) {
        let p = &d.part;
        recorder
            .absorb(&p.result)
            .map_err(|e| anyhow::anyhow!("worker {}: {e}", p.worker))?;
        recorder.stalls += p.stalls;
        recorder.longest_stall_ns = recorder.longest_stall_ns.max(p.longest_stall_ns);
        recorder.clamped += p.clamped;
        recorder.failed_connections += p.failed_connections;
        recorder.connections += p.connections;
        recorder.lost_connections += p.lost_connections;
        recorder.timeline.add_steps(&p.steps, p.first_failure_ns);
        cpu += p.client_cpu_seconds;
        busy.extend(&p.worker_busy);
        if overloaded.is_none() {
            overloaded = p.overloaded.clone().map(|why| match why {
                Finding::Overloaded { cause, .. } => Finding::Overloaded {
                    cause,
                    worker: Some(p.worker),
                },
                other => other,
            });
        }
        match p.cut_short.as_deref().and_then(cut_short) {
            Some(CutShort::Interrupted) => cut = Some(CutShort::Interrupted),
            Some(c) => {
                cut.get_or_insert(c);
            }
            None => {}
        }
        for n in &p.result.nodes {
            match nodes.iter_mut().find(|m| m.addr == n.addr) {
                Some(m) => {
                    m.replies += n.replies;
                    m.errors += n.errors;
                    m.reconnects += n.reconnects;
                }
                None => nodes.push(n.clone()),
            }
        }
        if let Some(r) = p.result.offered_rate {
            offered = Some(offered.unwrap_or(0.0) + r);
        }
        window_end_ns = window_end_ns.max(start + (p.result.duration_s * 1e9) as i128);
    }
    let window_s = match (asked.window, cut) {
        (Some(d), None) => d.as_secs_f64(),
        _ => (window_end_ns - first) as f64 / 1e9,
    };
    let mut result = recorder.to_phase_result(window_s);
    let series: Vec<&[kvbench_model::SeriesPoint]> = delivered
        .iter()
        .map(|d| d.part.result.series.as_slice())
        .collect();
    result.series = SeriesRecorder::merge_points(&series).map_err(anyhow::Error::msg)?;
    result.offered_rate = offered;
    if asked.pipeline > 1 && asked.closed_loop {
        for op in &mut result.ops {
            op.per_pipeline = Some(op.latency.divided_by(asked.pipeline));
        }
    }
    result.nodes = nodes;
    let ms = |ns: i128| ns as f64 / 1e6;
    result.scale_out = Some(ScaleOutResult {
        spark_master: job.master.clone(),
        spark_version: job.version.clone(),
        spark_startup_s: job.startup_s,
        start_spread_ms: ms(last - first),
        clock_uncertainty_ms: delivered
            .iter()
            .map(|d| d.rtt_ns as f64 / 2e6)
            .fold(0.0, f64::max),
        workers: delivered
            .iter()
            .zip(&starts)
            .map(|(d, start)| WorkerPart {
                worker: d.part.worker,
                host: d.part.host.clone(),
                clients: d.part.clients,
                completed: d.part.result.completed,
                errors: d.part.result.errors,
                client_cpu_seconds: d.part.client_cpu_seconds,
                clock_offset_ms: d.offset_ns as f64 / 1e6,
                clock_rtt_ms: d.rtt_ns as f64 / 1e6,
                start_offset_ms: ms(start - first),
            })
            .collect(),
    });
    let started_wall = UNIX_EPOCH + Duration::from_nanos(first.max(0) as u64);
    Ok(PhaseOutput {
        result,
        recorder,
        client_cpu_seconds: cpu,
        worker_busy: busy,
        overloaded,
        cut_short: cut,
        started_wall,
    })
}
