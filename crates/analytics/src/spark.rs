//! PageRank on Spark: kvbench's PySpark package (`python/kvbench_spark`)
//! run as a child process, in local mode unless `--spark-master` names a
//! cluster. The graph goes to it as an edge list; it answers with its
//! timings as JSON (`--json-out`) and its ranks as little-endian f64s in
//! node order (`--ranks-out`), the channel docs/analytics-spark.md defines.

use crate::{snap, Graph};
use anyhow::{bail, Context, Result};
use kvbench_servers::ProcessGuard;
use serde::Deserialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One iteration's map and reduce times as Spark reports them.
#[derive(Debug, Clone, Deserialize)]
pub struct StepTimes {
    /// Contributions computed and materialised.
    pub map_s: f64,
    /// Summed per node and the new ranks materialised.
    pub reduce_s: f64,
}

/// What the package writes to `--json-out`.
#[derive(Debug, Clone, Deserialize)]
pub struct SparkResult {
    /// Spark's version.
    pub spark_version: String,
    /// Where it ran (`local[2]`, a cluster URL).
    pub master: String,
    /// Reading and caching the edges.
    pub load_s: f64,
    /// Per iteration.
    pub iterations_s: Vec<StepTimes>,
    /// Everything, load included.
    pub total_s: f64,
    /// Memory of the cached RDDs, from Spark's status API.
    pub storage_bytes: Option<u64>,
    /// Spark jobs it ran.
    #[serde(default)]
    pub jobs: Option<u64>,
}

/// What the package's `lookup` writes to `--json-out`.
#[derive(Debug, Clone, Deserialize)]
pub struct LookupReport {
    /// Building and caching the RDD.
    pub cache_s: f64,
    /// Each lookup's latency.
    pub lookup_us: Vec<f64>,
    /// Spark's version.
    pub spark_version: String,
}

/// The Python interpreter with PySpark: `KVBENCH_PYTHON`, else the
/// project's `.venv/bin/python` (from the working directory), else `python3`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("KVBENCH_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(".venv/bin/python");
    if venv.exists() {
        return venv.to_path_buf();
    }
    PathBuf::from("python3")
}

/// What Spark needs and this machine lacks, in one line naming the option
/// that needs it and how to install it: the user's to fix (kvbench exits
/// 2), not a failure of a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Missing(pub String);

/// Refuses, with how to install them, when PySpark, the package or Java
/// is missing; `flag` is the option that needs them (`--impl spark`,
/// `--workers`), which the message names.
///
/// # Errors
/// [`Missing`] naming what is missing and the command that installs it.
pub fn check(flag: &str) -> Result<(), Missing> {
    let py = python();
    let probe = Command::new(&py)
        .args(["-c", "import pyspark, kvbench_spark"])
        .output();
    let how = "install them with `scripts/setup --analytics` (Java, PySpark and kvbench_spark into .venv), or name an interpreter that has them with KVBENCH_PYTHON";
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr);
            let last = why.lines().last().unwrap_or_default();
            return Err(Missing(format!(
                "{flag}: {} cannot import PySpark and kvbench_spark ({last}); {how}",
                py.display()
            )));
        }
        Err(e) => {
            return Err(Missing(format!(
                "{flag}: cannot run {} ({e}); {how}",
                py.display()
            )))
        }
    }
    if Command::new("java").arg("-version").output().is_err() {
        return Err(Missing(format!("{flag}: no `java` on PATH; {how}")));
    }
    Ok(())
}

/// Runs the package's `command` over `g` (written to `work` as an edge
/// list) with `extra` arguments, and reads the JSON it writes.
///
/// # Errors
/// When the child fails (its last lines quoted) or its JSON is not a `T`.
fn package<T: serde::de::DeserializeOwned>(
    command: &str,
    g: &Graph,
    master: &str,
    work: &Path,
    extra: &[OsString],
) -> Result<T> {
    let edges = work.join("edges.txt");
    let json_out = work.join(format!("{command}.json"));
    snap::write(g, &edges)?;
    let log = work.join(format!("{command}.log"));
    let err = std::fs::File::create(&log).with_context(|| format!("{}", log.display()))?;
    let mut child = Command::new(python());
    child
        .args(["-m", "kvbench_spark", command, "--edges"])
        .arg(&edges)
        .args(["--nodes", &g.nodes().to_string(), "--master", master])
        .args(extra)
        .arg("--json-out")
        .arg(&json_out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err);
    // In its own process group and dying with kvbench: an interrupted or
    // killed kvbench leaves no Spark job computing on.
    let job =
        ProcessGuard::start(child).with_context(|| format!("cannot start the Spark {command}"))?;
    let status = job.wait();
    job.shutdown();
    let status = status.with_context(|| format!("the Spark {command}"))?;
    if !status.success() {
        let err = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        bail!(
            "Spark {command} failed ({status}): {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        );
    }
    serde_json::from_slice(
        &std::fs::read(&json_out).with_context(|| format!("{}", json_out.display()))?,
    )
    .with_context(|| format!("{} is not the Spark {command} report", json_out.display()))
}

/// Runs PageRank on Spark over `g`; returns its report and its ranks.
///
/// # Errors
/// When the child fails (its last lines quoted) or its answer is not the
/// channel's.
pub fn run(
    g: &Graph,
    iterations: u32,
    damping: f64,
    master: &str,
    work: &Path,
) -> Result<(SparkResult, Vec<f64>)> {
    let ranks_out = work.join("ranks.bin");
    let result: SparkResult = package(
        "pagerank",
        g,
        master,
        work,
        &[
            "--iterations".into(),
            iterations.to_string().into(),
            "--damping".into(),
            damping.to_string().into(),
            "--ranks-out".into(),
            ranks_out.clone().into(),
        ],
    )?;
    let bytes = std::fs::read(&ranks_out).with_context(|| format!("{}", ranks_out.display()))?;
    if bytes.len() != 8 * g.nodes() as usize {
        bail!(
            "{}: {} bytes, not 8 for each of {} nodes",
            ranks_out.display(),
            bytes.len(),
            g.nodes()
        );
    }
    let ranks = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    Ok((result, ranks))
}

/// `count` seeded single-key lookups on a cached RDD of `g`'s records.
///
/// # Errors
/// As [`run`].
pub fn lookup(g: &Graph, count: u32, seed: u64, master: &str, work: &Path) -> Result<LookupReport> {
    package(
        "lookup",
        g,
        master,
        work,
        &[
            "--count".into(),
            count.to_string().into(),
            "--seed".into(),
            seed.to_string().into(),
        ],
    )
}
