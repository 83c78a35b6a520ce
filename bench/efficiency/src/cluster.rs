//! `kvbench-efficiency cluster`: what cluster routing costs the client.
//!
//! kvbench starts a 3-master Redis Cluster and runs 50 clients, each with a
//! connection to every master (50 connections per node), and then, in the
//! same repetition, one Redis with 50 clients. The single-node clients keep
//! 16 requests in flight on their one connection; the cluster clients keep
//! 48 in flight over their three, so each connection carries 16 on average
//! in both: the same batching per system call, and what differs is the
//! routing (CRC16 slot per key, a slot-table lookup, per-lane buffers).
//! The reference is kvbench's own single-node figure: no package registry
//! reachable here has memtier_benchmark. With one (`--memtier PATH` or
//! `MEMTIER`), a second part runs it beside kvbench on a cluster and on one
//! Redis the bench starts, both tools measured as in the other cases
//! (server-counted operations, whole-process CPU), and ends with
//! `case cluster redis memtier ratio R`, R = kvbench / memtier on the
//! cluster, and memtier's own cluster / single-node ratio.
//!
//! The figure compared is kvbench's own in-window client CPU per operation
//! (`cpu.client_us_per_op`, getrusage over the measured window): cluster
//! formation, loading and start-up stay out of it, as they are not routing.
//! Repetitions alternate which topology runs first; the ratio is the median
//! of the repetitions' ratios. Three servers and the client share the
//! machine's cores here, so one repetition's ratio moves by 0.1-0.2 with
//! scheduling: the goal is judged on the 95% interval of the ratio over
//! the repetitions (each a pair, so `kvbench_stats::paired`, the interval
//! the verdicts use), met only when the whole interval is at or below it.
//! The last lines are `case cluster redis ratio R`, R = cluster / single
//! node, and `case cluster redis interval LO HI`.

use crate::case::Tool;
use anyhow::{anyhow, bail, Context, Result};
use kvbench_servers::{Cluster, Server, ServerSpec, SystemKind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Connections per node and requests in flight per connection.
const CONNS: u32 = 50;
const PER_CONN: u32 = 16;
const MASTERS: u32 = 3;
/// Issue 9's goal: cluster / single node at most this.
const GOAL: f64 = 1.15;

pub(crate) struct Args {
    pub kvbench: PathBuf,
    pub ops: u64,
    pub repeat: u32,
    pub memtier: Option<PathBuf>,
}

const USAGE: &str = "\
kvbench-efficiency cluster: kvbench's client CPU per operation on a 3-master
Redis Cluster (50 connections per node, 16 requests in flight per connection
on average) over the same on one Redis (50 connections, pipeline 16).
Prints each repetition, the median ratio, and the geometric mean with its
95% interval judged against the goal of 1.15 (met only when the whole
interval is at or below it); ends with `case cluster redis ratio R` and
`case cluster redis interval LO HI`.

Example:
  kvbench-efficiency cluster --repeat 15

Options:
  --kvbench PATH   kvbench binary (default: `kvbench` next to this binary)
  --ops N          measured operations per run (default 2000000)
  --repeat N       repetitions, alternating which topology runs first (default 11;
                   at least 2 for an interval)
  --memtier PATH   then run memtier_benchmark --cluster-mode beside kvbench on a
                   cluster and a single Redis the bench starts (default: $MEMTIER
                   when set); adds `case cluster redis memtier ratio R`";

pub(crate) fn parse(args: &[String]) -> Result<Option<Args>> {
    let mut a = Args {
        kvbench: crate::sibling("kvbench")?,
        ops: 2_000_000,
        repeat: 11,
        memtier: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| anyhow!("{name} needs a value"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--kvbench" => a.kvbench = PathBuf::from(value("--kvbench")?),
            "--ops" => {
                a.ops = value("--ops")?
                    .parse()
                    .context("--ops must be a whole number")?
            }
            "--repeat" => {
                a.repeat = value("--repeat")?
                    .parse()
                    .context("--repeat must be a whole number")?
            }
            "--memtier" => a.memtier = Some(PathBuf::from(value("--memtier")?)),
            other => bail!("unknown argument `{other}`"),
        }
    }
    a.memtier = crate::memtier::locate(a.memtier.take());
    if a.ops < 1000 || a.repeat == 0 {
        bail!("--ops must be at least 1000 and --repeat at least 1");
    }
    Ok(Some(a))
}

pub(crate) fn usage() -> &'static str {
    USAGE
}

/// kvbench's in-window client CPU per operation, and its throughput.
fn measure(kvbench: &Path, ops: u64, cluster: bool, db: &Path) -> Result<(f64, f64)> {
    let (topology, pipeline) = if cluster {
        ("cluster", PER_CONN * MASTERS)
    } else {
        ("single", PER_CONN)
    };
    let out = Command::new(kvbench)
        .args(["run", "--system", "redis", "--topology", topology])
        .args(["--nodes", &MASTERS.to_string()])
        .args(["--workload", "getset", "--records", "100000"])
        .args(["--field-count", "1", "--field-length", "100"])
        .args(["--operations", &ops.to_string(), "--warmup", "500ms"])
        .args([
            "--clients",
            &CONNS.to_string(),
            "--pipeline",
            &pipeline.to_string(),
        ])
        .args(["--threads", "1", "--seed", "7", "--quiet", "--json"])
        .arg("--db")
        .arg(db)
        .output()
        .with_context(|| format!("run {}", kvbench.display()))?;
    if !out.status.success() {
        bail!(
            "kvbench ({topology}) failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("kvbench's --json output")?;
    if v["status"] != "ok" {
        bail!(
            "kvbench ({topology}) run is {}: {}",
            v["status"],
            v["marks"]
        );
    }
    let us = v["cpu"]["client_us_per_op"]
        .as_f64()
        .ok_or_else(|| anyhow!("no cpu.client_us_per_op in kvbench's output"))?;
    let tput = v["run"]["throughput"].as_f64().unwrap_or(0.0);
    Ok((us, tput))
}

pub(crate) fn run(a: &Args) -> Result<f64> {
    let dir = tempfile::tempdir().context("temporary directory")?;
    let db = dir.path().join("cluster-bench.db");
    println!(
        "cluster case: {MASTERS} masters x {CONNS} connections per node, {PER_CONN} in flight per connection; {} ops per run, {} repetitions",
        a.ops, a.repeat
    );
    let mut ratios = Vec::new();
    for rep in 1..=a.repeat {
        let order = if rep % 2 == 1 {
            [true, false]
        } else {
            [false, true]
        };
        let mut got = [(0.0, 0.0); 2];
        for cluster in order {
            got[usize::from(cluster)] = measure(&a.kvbench, a.ops, cluster, &db)?;
        }
        let ((single, st), (clustered, ct)) = (got[0], got[1]);
        let r = clustered / single;
        println!(
            "rep {rep}: single {single:.3} us/op ({st:.0} ops/s), cluster {clustered:.3} us/op ({ct:.0} ops/s), ratio {r:.3}"
        );
        ratios.push(r);
    }
    let mut sorted = ratios.clone();
    let m = crate::median(&mut sorted);
    let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
    println!(
        "== cluster / single-node client CPU per op: median {m:.3} (min {lo:.3}, max {hi:.3})"
    );
    let judged = judge(&ratios);
    if let Some(j) = &judged {
        println!(
            "== {:.3} [{:.3}, {:.3}] (geometric mean, 95% {} over {} repetitions): goal {GOAL}: {}",
            j.ratio, j.lo, j.hi, j.method, j.n, j.call
        );
    }
    println!("case cluster redis ratio {m:.2}");
    if let Some(j) = &judged {
        println!("case cluster redis interval {:.3} {:.3}", j.lo, j.hi);
    }
    if let Some(memtier) = &a.memtier {
        beside_memtier(a, memtier)?;
    }
    Ok(m)
}

/// The repetitions' ratios judged against [`GOAL`].
#[derive(Debug)]
struct Judged {
    n: usize,
    ratio: f64,
    lo: f64,
    hi: f64,
    method: &'static str,
    call: &'static str,
}

/// The interval of the ratio over the repetitions, and what it says of the
/// goal; `None` below two repetitions or for a ratio that is not finite.
fn judge(ratios: &[f64]) -> Option<Judged> {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let iv = kvbench_stats::paired::paired(&logs, kvbench_stats::paired::LEVEL)?;
    let (lo, hi) = (iv.lo_log.exp(), iv.hi_log.exp());
    let call = if hi <= GOAL {
        "met"
    } else if lo > GOAL {
        "not met"
    } else {
        "undecided (the interval spans it)"
    };
    Some(Judged {
        n: iv.n,
        ratio: iv.mean_log.exp(),
        lo,
        hi,
        method: iv.method.as_str(),
        call,
    })
}

/// kvbench and memtier_benchmark on a 3-master cluster, then on one Redis,
/// measured as the main cases are (see the module's doc).
fn beside_memtier(a: &Args, memtier: &Path) -> Result<()> {
    let described = crate::memtier::describe(memtier)?;
    let dir = tempfile::tempdir().context("temporary directory")?;
    let spec = ServerSpec {
        system: SystemKind::Redis,
        binary: None,
        memory_limit_mb: None,
        eviction: None,
        extra_args: Vec::new(),
    };
    let cluster = Cluster::start(&spec, MASTERS as usize, 0).context("start a Redis Cluster")?;
    let single = Server::start(&spec).context("start one Redis")?;
    let opts = crate::Opts {
        kvbench: a.kvbench.clone(),
        redis_benchmark: PathBuf::from("redis-benchmark"),
        memaslap: None,
        systems: vec![SystemKind::Redis],
        cases: Vec::new(),
        workload: crate::KVBENCH_WORKLOAD.to_string(),
        repeat: a.repeat,
        bare: Vec::new(),
        memtier: Some(memtier.to_path_buf()),
    };
    let case = crate::Case {
        name: 'c',
        conns: CONNS,
        pipeline: PER_CONN,
        default_ops: a.ops,
    };
    println!();
    println!(
        "memtier_benchmark beside kvbench: {described}; {CONNS} clients, {PER_CONN} in flight per connection; operations counted by the servers, whole-process CPU"
    );
    let mut cpu = Vec::new();
    for (name, servers, clustered) in [
        (
            "cluster",
            cluster.masters().iter().collect::<Vec<_>>(),
            true,
        ),
        ("single", vec![&single], false),
    ] {
        let ctx = crate::Ctx {
            opts: &opts,
            servers,
            cluster: clustered,
            dir: dir.path(),
            memaslap: None,
        };
        ctx.load()?;
        ctx.fill_memtier()?;
        println!("== {name}: kvbench and memtier_benchmark, alternating ==");
        crate::table_header();
        let f = crate::case::run(&ctx, &case, &[Tool::Kvbench, Tool::Memtier], a.repeat);
        match (f.memtier, f.memtier_cpu) {
            (Some(r), Some(m)) => {
                println!("case {name} redis memtier ratio {r:.2}");
                cpu.push(m);
            }
            _ => bail!(
                "{name}: no repetition measured: {}",
                f.failure.unwrap_or_default()
            ),
        }
    }
    if let [clustered, one] = cpu[..] {
        println!(
            "memtier_benchmark's own cluster / single-node CPU per operation: {:.3}",
            clustered / one
        );
    }
    single.stop().context("stop the single Redis")?;
    cluster.stop().context("stop the cluster")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_goal_is_met_only_when_the_whole_interval_is_at_or_below_it() {
        let low = judge(&[1.08, 1.10, 1.09, 1.11, 1.10]).expect("five ratios");
        assert_eq!(low.call, "met");
        assert!(low.lo < 1.10 && low.hi < GOAL, "{low:?}");
        let high = judge(&[1.22, 1.25, 1.24, 1.23, 1.26]).expect("five ratios");
        assert_eq!(high.call, "not met");
        // The median of these is under the goal; their spread is not.
        let spread = judge(&[1.00, 1.30, 1.10, 1.25, 1.05, 1.14]).expect("six ratios");
        assert!(spread.call.starts_with("undecided"), "{spread:?}");
        assert!(spread.lo < GOAL && spread.hi > GOAL, "{spread:?}");
    }

    #[test]
    fn the_interval_is_the_paired_one_over_enough_repetitions() {
        let few = judge(&[1.1, 1.2, 1.15]).expect("three ratios");
        assert_eq!(few.method, "paired t");
        let many: Vec<f64> = (0..11).map(|i| 1.1 + 0.01 * f64::from(i)).collect();
        let j = judge(&many).expect("eleven ratios");
        assert_eq!(j.method, "paired BCa bootstrap");
        assert_eq!(j.n, 11);
        // Ratios spread evenly around 1.15: their geometric mean is next to it.
        assert!((j.ratio - 1.15).abs() < 0.001, "{j:?}");
        assert!(judge(&[1.1]).is_none(), "one repetition has no interval");
    }
}
