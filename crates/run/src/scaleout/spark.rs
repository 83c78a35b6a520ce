//! Starts a scaled-out phase through kvbench's PySpark package
//! (`python -m kvbench_spark scale-out`) and follows it: Spark gang-schedules
//! the workers as barrier tasks; this side marks the window's edges for the
//! server probes from the start instant the workers agreed on, and merges
//! their results when the job ends. The child runs in a process group of
//! its own, so an interrupt or a failure stops Spark and every worker, and
//! it dies with kvbench.

use super::merge::{self, Asked, Delivered, Job};
use super::part::WorkerPartResult;
use super::task::{WorkerTask, PASSWORD_ENV, TLS_KEY_ENV};
use super::ScaleOut;
use anyhow::{anyhow, bail, Context, Result};
use kvbench_analytics::spark::python;
use kvbench_connect::TlsMaterial;
use kvbench_engine::{
    EngineError, Observer, PhaseConfig, PhaseKind, PhaseOutput, Progress, Window,
};
use kvbench_servers::ProcessGuard;
use serde::Deserialize;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often progress is redrawn while the job runs.
const TICK: Duration = Duration::from_millis(200);

/// One line of the package's stdout.
#[derive(Debug, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
enum Event {
    Spark {
        master: String,
        spark_version: String,
        startup_s: f64,
    },
    Start {
        at_ns: u64,
    },
    Done {
        workers: Vec<Record>,
    },
}

/// One worker's record as its task returned it.
#[derive(Debug, Deserialize)]
struct Record {
    worker: u32,
    #[serde(default)]
    host: String,
    #[serde(default)]
    offset_ns: i64,
    #[serde(default)]
    rtt_ns: u64,
    #[serde(default)]
    part: Option<WorkerPartResult>,
    #[serde(default)]
    error: Option<String>,
    /// Stopped because another worker failed.
    #[serde(default)]
    aborted: bool,
}

/// Stops the child's whole process group when dropped: Spark's JVM, its
/// Python workers and the kvbench workers under them. If kvbench itself is
/// killed outright, the child dies with it (parent-death signal), its JVM
/// when its stdin closes, and each worker when its task's stdin closes.
struct Running(ProcessGuard);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.shutdown();
    }
}

/// What a phase's Spark job needs besides the phase.
pub struct JobInputs<'a> {
    /// The workload's effective properties, as the task carries them.
    pub properties: &'a [(String, String)],
    /// A TLS target's settings with their files read.
    pub tls: Option<&'a TlsMaterial>,
    /// Told the workers' common start instant as soon as it is agreed, so
    /// a group run here (`--with`) starts with them.
    pub on_start: Option<&'a mpsc::Sender<SystemTime>>,
}

/// Runs the phase `cfg` as `so.workers` Spark barrier tasks (a load: at
/// most one per load client) and merges what they measured. `observer` sees the start, the window's edges and
/// the elapsed time (the workers' per-second view comes with the result).
///
/// # Errors
/// When Spark cannot run the job, a worker fails (named), or the results
/// cannot be merged; [`EngineError::Interrupted`] when `stop` was set.
pub fn run_phase(
    cfg: &PhaseConfig,
    inputs: &JobInputs<'_>,
    so: &ScaleOut,
    observer: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<PhaseOutput> {
    let (warmup, time_bound, closed_loop) = match cfg.kind {
        PhaseKind::Load => (Duration::ZERO, None, false),
        PhaseKind::Run {
            warmup,
            window,
            rate,
        } => (
            warmup,
            match window {
                Window::Duration(d) => Some(d),
                Window::Operations(_) => None,
            },
            rate.is_none(),
        ),
    };
    // A load has its own (usually smaller) number of connections: it is
    // spread over at most that many workers.
    let workers = match cfg.kind {
        PhaseKind::Load => so.workers.min(cfg.clients),
        PhaseKind::Run { .. } => so.workers,
    };
    let job = Launched::start(cfg, inputs, so, workers)?;
    let (records, spark) = job.follow(inputs, observer, stop, warmup, time_bound)?;
    let status = job.group.0.wait().context("the Spark job")?;
    if !status.success() {
        bail!("the Spark job failed ({status}): {}", tail(&job.err_path));
    }
    let delivered = delivered(records)?;
    let job = spark.ok_or_else(|| anyhow!("the Spark job did not say which Spark ran it"))?;
    // Each worker's inserts went to a block of its own: every block is
    // what `--cleanup` must delete.
    for d in &delivered {
        for &(start, end) in &d.part.inserted {
            observer.inserts_issued(start..end);
        }
    }
    merge::merge(
        Asked {
            workers,
            window: time_bound,
            pipeline: cfg.pipeline,
            closed_loop,
        },
        &job,
        delivered,
    )
}

/// The Spark job of one phase, started: its process group, its stdout's
/// lines, and the directory with its task and log (kept while it runs).
struct Launched {
    group: Running,
    lines: mpsc::Receiver<std::io::Result<String>>,
    err_path: std::path::PathBuf,
    _work: tempfile::TempDir,
}

/// What [`Launched::follow`] learnt: the workers' records and which Spark
/// ran them.
type Followed = (Vec<Record>, Option<Job>);

impl Launched {
    /// Writes the task, starts `python -m kvbench_spark scale-out` for
    /// `workers` workers (secrets in its environment, never its arguments)
    /// and reads its stdout on a thread of its own.
    fn start(
        cfg: &PhaseConfig,
        inputs: &JobInputs<'_>,
        so: &ScaleOut,
        workers: u32,
    ) -> Result<Launched> {
        let task = WorkerTask::of(cfg, inputs.properties, inputs.tls)?;
        let work = tempfile::Builder::new()
            .prefix("kvbench-scale-out-")
            .tempdir()
            .context("cannot make a directory for the worker task")?;
        let task_path = work.path().join("task.json");
        std::fs::write(&task_path, serde_json::to_vec(&task)?)
            .with_context(|| format!("cannot write {}", task_path.display()))?;
        let binary = std::env::current_exe().context("cannot find the kvbench binary to ship")?;
        let err_path = work.path().join("spark.log");
        let err = std::fs::File::create(&err_path)
            .with_context(|| format!("cannot write {}", err_path.display()))?;

        let mut command = Command::new(python());
        command
            .args(["-m", "kvbench_spark", "scale-out", "--binary"])
            .arg(&binary)
            .arg("--task")
            .arg(&task_path)
            .args([
                "--workers",
                &workers.to_string(),
                "--master",
                &so.spark_master,
            ]);
        for c in &so.spark_conf {
            command.arg("--conf").arg(c);
        }
        if let Some(p) = &cfg.access.password {
            command.env(PASSWORD_ENV, p.expose());
        }
        if let Some(k) = inputs.tls.and_then(|t| t.key_pem.as_ref()) {
            command.env(TLS_KEY_ENV, k.expose());
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(err);
        let group =
            Running(ProcessGuard::start(command).with_context(|| {
                format!("cannot start {} -m kvbench_spark", python().display())
            })?);
        let stdout = group
            .0
            .take_stdout()
            .context("no stdout from the Spark job")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Launched {
            group,
            lines: rx,
            err_path,
            _work: work,
        })
    }

    /// Follows the job's events until its workers' results arrive, telling
    /// `observer` the start and the window's edges as they pass (its end
    /// when the results came before the deadline).
    fn follow(
        &self,
        inputs: &JobInputs<'_>,
        observer: &dyn Observer,
        stop: &Arc<AtomicBool>,
        warmup: Duration,
        time_bound: Option<Duration>,
    ) -> Result<Followed> {
        let spark_log = || tail(&self.err_path);
        let mut job = None;
        let mut start: Option<Instant> = None;
        let (mut in_window, mut ended) = (false, false);
        let records = loop {
            if stop.load(Ordering::Relaxed) {
                // Dropping the job (the caller's) stops Spark and its workers.
                return Err(EngineError::Interrupted.into());
            }
            let now = Instant::now();
            if let Some(s) = start {
                if !in_window && now >= s + warmup {
                    in_window = true;
                    observer.window_started();
                }
                if !ended && time_bound.is_some_and(|d| now >= s + warmup + d) {
                    ended = true;
                    observer.finished();
                }
                observer.progress(&Progress {
                    completed: 0,
                    total: None,
                    elapsed: now.saturating_duration_since(s),
                    warmup,
                    window: time_bound,
                });
            }
            // Wake at the next window edge, not up to a tick late.
            let mut wait = TICK;
            if let Some(s) = start {
                for edge in [Some(s + warmup), time_bound.map(|d| s + warmup + d)]
                    .into_iter()
                    .flatten()
                {
                    if edge > now {
                        wait = wait.min(edge - now);
                    }
                }
            }
            match self.lines.recv_timeout(wait) {
                Ok(Ok(line)) => match serde_json::from_str::<Event>(&line) {
                    Ok(Event::Spark {
                        master,
                        spark_version,
                        startup_s,
                    }) => {
                        job = Some(Job {
                            master,
                            version: spark_version,
                            startup_s,
                        })
                    }
                    Ok(Event::Start { at_ns }) => {
                        let at = UNIX_EPOCH + Duration::from_nanos(at_ns);
                        let ahead = at.duration_since(SystemTime::now()).unwrap_or_default();
                        start = Some(Instant::now() + ahead);
                        if let Some(tx) = inputs.on_start {
                            // Nobody listening (the --with group failed) is its own error.
                            let _ = tx.send(at);
                        }
                        observer.started();
                    }
                    Ok(Event::Done { workers }) => break workers,
                    Err(e) => {
                        bail!("the Spark job printed a line kvbench cannot read ({e}): {line}")
                    }
                },
                Ok(Err(e)) => bail!("cannot read the Spark job's output: {e}"),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.group.0.wait().context("the Spark job")?;
                    bail!(
                        "the Spark job ended ({status}) without the workers' results: {}",
                        spark_log()
                    );
                }
            }
        };
        if in_window && !ended {
            observer.finished();
        }
        Ok((records, job))
    }
}

/// Each worker's part, or why there is none: the workers that failed by
/// themselves are named; the ones stopped because of them are counted.
fn delivered(records: Vec<Record>) -> Result<Vec<Delivered>> {
    let failed: Vec<String> = records
        .iter()
        .filter(|r| !r.aborted)
        .filter_map(|r| {
            r.error
                .as_ref()
                .map(|e| format!("worker {}: {e}", r.worker))
        })
        .collect();
    let stopped = records.iter().filter(|r| r.aborted).count();
    if !failed.is_empty() || stopped > 0 {
        let also = match stopped {
            0 => String::new(),
            n => format!(" (the other {n} were stopped; nothing was merged)"),
        };
        bail!("{}{also}", failed.join("; "));
    }
    records
        .into_iter()
        .map(|r| {
            let part = r
                .part
                .ok_or_else(|| anyhow!("worker {} on {} returned no result", r.worker, r.host))?;
            Ok(Delivered {
                offset_ns: r.offset_ns,
                rtt_ns: r.rtt_ns,
                part,
            })
        })
        .collect()
}

/// The last lines of the Spark job's stderr, for a message.
fn tail(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let start = lines.len().saturating_sub(3);
    if lines.is_empty() {
        "(it printed nothing)".into()
    } else {
        lines[start..].join(" | ")
    }
}
