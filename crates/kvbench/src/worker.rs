//! `kvbench worker`: one worker's share of a scaled-out phase. It prints
//! nothing but its protocol on stdout (`ready`, then one JSON line); what
//! goes wrong goes to stderr, which the Spark task hands to the driver.

use crate::args::WorkerArgs;
use crate::exit::{UsageError, Verdict};
use anyhow::{Context, Result};
use kvbench_engine::{run_share, Observer, Share, StartAt};
use kvbench_run::scaleout::part::WorkerPartResult;
use kvbench_run::scaleout::task::{WorkerSecrets, WorkerTask};
use std::io::{BufRead, Read, Write};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Runs the worker.
///
/// # Errors
/// [`UsageError`] for an unreadable task or a bad `--start-at`; the
/// phase's own error otherwise.
pub fn run(a: WorkerArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    let text = read_task(&a.task)?;
    let task: WorkerTask = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("--task {}: {e}", a.task.display())))?;
    let cfg = task
        .phase(WorkerSecrets::from_env())
        .map_err(|e| UsageError(format!("--task {}: {e:#}", a.task.display())))?;
    let share = Share {
        slice: a.slice,
        start: start_at(&a.start_at, stop)?,
    };
    let inserts = Inserts::default();
    let out =
        run_share(&cfg, &share, &inserts, stop).with_context(|| format!("worker {}", a.slice))?;
    let inserted = inserts.0.into_inner().unwrap_or_else(|p| p.into_inner());
    let part = WorkerPartResult::new(a.slice, cfg.clients, out, inserted);
    let line = serde_json::to_string(&part).context("cannot write the result")?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    Ok(Verdict::Ok)
}

/// Hears which records the phase's inserts were handed (the driver's
/// `--cleanup` deletes them); nothing else of the phase is shown here.
#[derive(Default)]
struct Inserts(Mutex<Vec<Range<u64>>>);

impl Observer for Inserts {
    fn inserts_issued(&self, keys: Range<u64>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(keys);
    }
}

/// The task, from a regular file or standard input (`-`), to
/// [`TASK_LIMIT`] bytes: what any other file kvbench reads gets.
fn read_task(path: &Path) -> Result<String> {
    Ok(kvbench_workload::input::read_utf8(path, TASK_LIMIT)
        .map_err(|e| UsageError(format!("--task {e}")))?)
}

/// A task carries settings and the workload's properties (their files at
/// most 1 MiB each), never data: 16 MiB is far above any real one.
const TASK_LIMIT: u64 = 16 << 20;

/// `now`, `stdin`, or ns since the Unix epoch.
fn start_at(text: &str, stop: &Arc<AtomicBool>) -> Result<StartAt, UsageError> {
    match text {
        "now" => Ok(StartAt::Now),
        "stdin" => {
            let stop = stop.clone();
            Ok(StartAt::Signalled(Arc::new(move || signalled(&stop))))
        }
        ns => ns
            .parse::<u64>()
            .map(|ns| StartAt::At(UNIX_EPOCH + Duration::from_nanos(ns)))
            .map_err(|_| {
                UsageError(format!(
                    "--start-at: \"{ns}\" is not now, stdin, or ns since the Unix epoch"
                ))
            }),
    }
}

/// Says `ready` and reads the start instant: the Spark task gathers every
/// worker's `ready` before it names the instant. From then on stdin is the
/// task's leash: when it closes (the task stops this worker because another
/// failed, or the task itself died) the phase stops as if interrupted, so no
/// worker outlives its job.
fn signalled(stop: &Arc<AtomicBool>) -> Result<SystemTime, String> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "ready")
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot say ready: {e}"))?;
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the start instant: {e}"))?;
    if line.is_empty() {
        return Err("stdin closed before the start instant came".into());
    }
    let ns: u64 = line.trim().parse().map_err(|_| {
        format!(
            "the start instant \"{}\" is not ns since the Unix epoch",
            line.trim()
        )
    })?;
    let stop = stop.clone();
    std::thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = std::io::stdin().lock().read_to_end(&mut rest);
        stop.store(true, Ordering::Relaxed);
    });
    Ok(UNIX_EPOCH + Duration::from_nanos(ns))
}
