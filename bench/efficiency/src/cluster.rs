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
//!
//! The two topologies must meet the same machine for the ratio to be the
//! client's: each run's CPUs busy (client and servers, CPU seconds per
//! wall second, from kvbench's in-window figures) are printed, and when
//! the cluster's runs saturate the machine's CPUs while the single node's
//! do not, the goal is not judged. On two vCPUs three masters and the
//! client keep 1.96 of 2 busy and one Redis and its client 1.33, and the
//! ratio moves with that alone: with a thread burning CPU beside both
//! topologies (`--contend 1`) the same build read 1.04 where it read
//! 1.14-1.20 without (docs/performance.md, "Cluster routing").
//! `--server-cpus` and `--client-cpus` place the servers and the client
//! apart, on a core each on a machine with four CPUs or more.
//!
//! In-window CPU is one figure; `--split` (and `--memtier`) also time
//! kvbench's whole process with `wait4`, on servers the bench starts and
//! with the load left out, because the kernel splits it into user time
//! (kvbench's own work: generation, routing, parsing, recording) and
//! system time (the I/O any client would ask for). Which of the two
//! carries the cluster's extra cost says whether routing or scheduling
//! is what to cut (docs/performance.md, "Cluster routing", 2026-12-08, later).

use crate::case::Tool;
use anyhow::{anyhow, bail, Context, Result};
use kvbench_servers::{Cluster, Server, ServerSpec, SystemKind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Connections per node and requests in flight per connection.
const CONNS: u32 = 50;
const PER_CONN: u32 = 16;
const MASTERS: u32 = 3;
/// Issue 9's goal: cluster / single node at most this.
const GOAL: f64 = 1.15;
/// A run whose client and servers keep at least this share of the
/// machine's CPUs busy has no CPU to spare: its threads wait for one
/// another's CPU, and its client's CPU per operation carries that.
const SATURATED: f64 = 0.9;

pub(crate) struct Args {
    pub kvbench: PathBuf,
    pub ops: u64,
    pub repeat: u32,
    pub memtier: Option<PathBuf>,
    /// kvbench's `--server-cpus` and `--client-cpus`, passed through.
    pub server_cpus: Option<String>,
    pub client_cpus: Option<String>,
    /// Threads that only burn CPU beside every run, so both topologies meet
    /// a machine with no CPU to spare: what contention alone does to the
    /// ratio, measured rather than argued.
    pub contend: u32,
    /// Then kvbench's whole process on servers the bench starts, with its
    /// user and system time apart (`--split`).
    pub split: bool,
}

const USAGE: &str = "\
kvbench-efficiency cluster: kvbench's client CPU per operation on a 3-master
Redis Cluster (50 connections per node, 16 requests in flight per connection
on average) over the same on one Redis (50 connections, pipeline 16).
Prints each repetition, the median ratio, and the geometric mean with its
95% interval judged against the goal of 1.15 (met only when the whole
interval is at or below it); ends with `case cluster redis ratio R` and
`case cluster redis interval LO HI`. Each run's CPUs busy (client and
servers) is printed: when the cluster's runs saturate the machine and the
single node's do not, the goal is not judged (the ratio then holds the
contention only the cluster met).

Examples:
  kvbench-efficiency cluster --repeat 15
  kvbench-efficiency cluster --repeat 7 --split
  kvbench-efficiency cluster --server-cpus 1-3 --client-cpus 0   (4+ CPUs)

Options:
  --kvbench PATH   kvbench binary (default: `kvbench` next to this binary)
  --ops N          measured operations per run (default 2000000)
  --repeat N       repetitions, alternating which topology runs first (default 11;
                   at least 2 for an interval)
  --split          then run kvbench alone on a cluster and a single Redis the
                   bench starts, its whole process timed by wait4: its user time
                   (its own work) and system time (the kernel's I/O) per
                   operation, cluster over single node (alternating which
                   goes first); ends with `case cluster redis whole ratio R
                   user U system S`
  --memtier PATH   then run memtier_benchmark --cluster-mode beside kvbench on a
                   cluster and a single Redis the bench starts (default: $MEMTIER
                   when set); adds `case cluster redis memtier ratio R` and the
                   --split lines
  --server-cpus LIST, --client-cpus LIST
                   passed to kvbench: the servers it starts and its client
                   threads on these CPUs (e.g. 1-3 and 0); --split places its
                   servers and tools the same way
  --contend N      N threads of this process burn CPU beside every run (default
                   0), so both topologies meet a saturated machine: shows what
                   contention alone does to the ratio; the goal is not judged
                   then";

pub(crate) fn parse(args: &[String]) -> Result<Option<Args>> {
    let mut a = Args {
        kvbench: crate::sibling("kvbench")?,
        ops: 2_000_000,
        repeat: 11,
        memtier: None,
        server_cpus: None,
        client_cpus: None,
        contend: 0,
        split: false,
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
            "--split" => a.split = true,
            "--server-cpus" => a.server_cpus = Some(value("--server-cpus")?),
            "--client-cpus" => a.client_cpus = Some(value("--client-cpus")?),
            "--contend" => {
                a.contend = value("--contend")?
                    .parse()
                    .context("--contend must be a whole number")?
            }
            other => bail!("unknown argument `{other}`"),
        }
    }
    a.memtier = crate::memtier::locate(a.memtier.take());
    if a.ops < 1000 || a.repeat == 0 {
        bail!("--ops must be at least 1000 and --repeat at least 1");
    }
    if a.contend > 64 {
        bail!("--contend must be at most 64");
    }
    Ok(Some(a))
}

pub(crate) fn usage() -> &'static str {
    USAGE
}

/// One kvbench run's in-window figures.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    /// Client CPU per operation, microseconds.
    us: f64,
    /// Operations per second.
    tput: f64,
    /// The servers' CPU per operation, microseconds, when kvbench could
    /// read it.
    server_us: Option<f64>,
}

/// CPUs kept busy (CPU seconds per wall second) by the client, the
/// servers, and both.
impl Sample {
    fn client_busy(&self) -> f64 {
        self.us * self.tput / 1e6
    }

    fn server_busy(&self) -> Option<f64> {
        self.server_us.map(|s| s * self.tput / 1e6)
    }

    fn busy(&self) -> Option<f64> {
        self.server_busy().map(|s| s + self.client_busy())
    }
}

/// kvbench's in-window client CPU per operation, its throughput, and the
/// CPUs its client and servers kept busy.
fn measure(a: &Args, cluster: bool, db: &Path) -> Result<Sample> {
    let _burning = Burn::start(a.contend);
    let (kvbench, ops) = (&a.kvbench, a.ops);
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
        .args(
            a.server_cpus
                .iter()
                .flat_map(|c| ["--server-cpus", c.as_str()]),
        )
        .args(
            a.client_cpus
                .iter()
                .flat_map(|c| ["--client-cpus", c.as_str()]),
        )
        .arg("--db")
        .arg(db)
        .output()
        .with_context(|| format!("run {}", kvbench.display()))?;
    // As in the other cases: a window whose throughput drifted or held two
    // levels (exit 3, `unstable` marks only) still measured CPU per
    // operation, so the run counts and its marks are printed.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stability_only = (out.status.code() == Some(3))
        .then(|| crate::stability_marks(&stdout))
        .flatten();
    if !out.status.success() && stability_only.is_none() {
        bail!(
            "kvbench ({topology}) failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for m in stability_only.iter().flatten() {
        println!("      kvbench ({topology}): kept (CPU per operation stands): {m}");
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("kvbench's --json output")?;
    if v["status"] != "ok" && stability_only.is_none() {
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
    Ok(Sample {
        us,
        tput,
        server_us: v["cpu"]["server_us_per_op"].as_f64(),
    })
}

/// Threads that spin until dropped (`--contend`).
struct Burn {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Burn {
    fn start(n: u32) -> Burn {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Burn { stop, threads }
    }
}

impl Drop for Burn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Whether the two topologies met the same machine: `Some(why)` when the
/// cluster's runs saturated its `cpus` (median CPUs busy at least
/// [`SATURATED`] of them) and the single node's did not, so the cluster's
/// client CPU per operation carries contention the single node's lacks.
fn confounded(cluster_busy: f64, single_busy: f64, cpus: f64) -> Option<String> {
    let full = |b: f64| b >= SATURATED * cpus;
    (full(cluster_busy) && !full(single_busy)).then(|| {
        format!(
            "the cluster's runs kept {cluster_busy:.2} of {cpus} CPUs busy and the single node's {single_busy:.2}: only the cluster's client waited for CPU, so the ratio is not its routing's cost alone"
        )
    })
}

pub(crate) fn run(a: &Args) -> Result<f64> {
    let dir = tempfile::tempdir().context("temporary directory")?;
    let db = dir.path().join("cluster-bench.db");
    println!(
        "cluster case: {MASTERS} masters x {CONNS} connections per node, {PER_CONN} in flight per connection; {} ops per run, {} repetitions{}",
        a.ops,
        a.repeat,
        if a.contend > 0 {
            format!("; {} threads burning CPU beside every run", a.contend)
        } else {
            String::new()
        }
    );
    let mut ratios = Vec::new();
    let mut samples = Vec::new();
    for rep in 1..=a.repeat {
        let order = if rep % 2 == 1 {
            [true, false]
        } else {
            [false, true]
        };
        let mut got = [Sample::default(); 2];
        for cluster in order {
            got[usize::from(cluster)] = measure(a, cluster, &db)?;
        }
        let [single, clustered] = got;
        let r = clustered.us / single.us;
        let busy = |s: &Sample| {
            s.busy()
                .map_or(String::new(), |b| format!(", {b:.2} CPUs busy"))
        };
        println!(
            "rep {rep}: single {:.3} us/op ({:.0} ops/s{}), cluster {:.3} us/op ({:.0} ops/s{}), ratio {r:.3}",
            single.us,
            single.tput,
            busy(&single),
            clustered.us,
            clustered.tput,
            busy(&clustered)
        );
        ratios.push(r);
        samples.push(got);
    }
    let mut sorted = ratios.clone();
    let m = crate::median(&mut sorted);
    let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
    println!(
        "== cluster / single-node client CPU per op: median {m:.3} (min {lo:.3}, max {hi:.3})"
    );
    let machine = machine(&samples);
    if let Some(m) = &machine {
        println!("== {}", m.line);
    }
    let judged = judge(&ratios);
    if let Some(j) = &judged {
        let call = match machine.as_ref().and_then(|m| m.confounded.as_deref()) {
            _ if a.contend > 0 => format!(
                "not judged: {} threads burned CPU beside every run (--contend), which the case does not",
                a.contend
            ),
            Some(why) => format!("not judged: {why}"),
            None => j.call.to_string(),
        };
        println!(
            "== {:.3} [{:.3}, {:.3}] (geometric mean, 95% {} over {} repetitions): goal {GOAL}: {call}",
            j.ratio, j.lo, j.hi, j.method, j.n
        );
    }
    println!("case cluster redis ratio {m:.2}");
    if let Some(j) = &judged {
        println!("case cluster redis interval {:.3} {:.3}", j.lo, j.hi);
    }
    if a.split || a.memtier.is_some() {
        whole_process(a, a.memtier.as_deref())?;
    }
    Ok(m)
}

/// What the runs asked of the machine.
struct Machine {
    line: String,
    confounded: Option<String>,
}

/// The median CPUs busy of each topology's runs against the CPUs this
/// process may use; `None` when kvbench could not read the servers' CPU.
fn machine(samples: &[[Sample; 2]]) -> Option<Machine> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let med = |i: usize, f: &dyn Fn(&Sample) -> Option<f64>| {
        let mut xs: Vec<f64> = samples.iter().filter_map(|s| f(&s[i])).collect();
        (xs.len() == samples.len() && !xs.is_empty()).then(|| crate::median(&mut xs))
    };
    let (single, cluster) = (med(0, &Sample::busy)?, med(1, &Sample::busy)?);
    let (cc, cs) = (
        med(1, &|s| Some(s.client_busy()))?,
        med(1, &Sample::server_busy)?,
    );
    Some(Machine {
        line: format!(
            "CPUs busy (CPU seconds per wall second, median): cluster {cluster:.2} (client {cc:.2}, servers {cs:.2}), single node {single:.2}, of {cpus} this process may use"
        ),
        confounded: confounded(cluster, single, cpus),
    })
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

/// kvbench (and memtier_benchmark, with one) on a 3-master cluster, then
/// on one Redis, measured as the main cases are (see the module's doc):
/// whole-process CPU of each run with the kernel's user and system split.
fn whole_process(a: &Args, memtier: Option<&Path>) -> Result<()> {
    let described = memtier.map(crate::memtier::describe).transpose()?;
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
    // Placed as the in-window part's are; the tools inherit this thread's
    // placement, so kvbench and memtier_benchmark meet the same CPUs.
    if let Some(cpus) = &a.server_cpus {
        for s in cluster.masters().iter().chain([&single]) {
            place(cpus, s.pid(), true).context("--server-cpus")?;
        }
    }
    if let Some(cpus) = &a.client_cpus {
        place(cpus, std::process::id(), false).context("--client-cpus")?;
    }
    let opts = crate::Opts {
        kvbench: a.kvbench.clone(),
        redis_benchmark: PathBuf::from("redis-benchmark"),
        memaslap: None,
        systems: vec![SystemKind::Redis],
        cases: Vec::new(),
        workload: crate::KVBENCH_WORKLOAD.to_string(),
        repeat: a.repeat,
        bare: Vec::new(),
        memtier: memtier.map(Path::to_path_buf),
    };
    let case = crate::Case {
        name: 'c',
        conns: CONNS,
        pipeline: PER_CONN,
        default_ops: a.ops,
    };
    let tools: &[Tool] = if memtier.is_some() {
        &[Tool::Kvbench, Tool::Memtier]
    } else {
        &[Tool::Kvbench]
    };
    println!();
    match &described {
        Some(d) => println!(
            "memtier_benchmark beside kvbench: {d}; {CONNS} clients, {PER_CONN} in flight per connection; operations counted by the servers, whole-process CPU"
        ),
        None => println!(
            "kvbench's whole process on a cluster and on one Redis the bench starts: {CONNS} clients, {PER_CONN} in flight per connection; operations counted by the servers, CPU from wait4 (user: kvbench's own work; system: the kernel's I/O for it)"
        ),
    }
    let topologies = [
        (
            "cluster",
            cluster.masters().iter().collect::<Vec<_>>(),
            true,
        ),
        ("single", vec![&single], false),
    ];
    let ctxs: Vec<(&str, crate::Ctx<'_>)> = topologies
        .into_iter()
        .map(|(name, servers, clustered)| {
            let ctx = crate::Ctx {
                opts: &opts,
                servers,
                cluster: clustered,
                dir: dir.path(),
                memaslap: None,
            };
            ctx.load()?;
            if memtier.is_some() {
                ctx.fill_memtier()?;
            }
            Ok((name, ctx))
        })
        .collect::<Result<_>>()?;
    // Each topology's repetitions, in turn: the cluster first in odd
    // repetitions, the single node in even ones, so a drift of the
    // machine favours neither.
    let mut got: [Topology; 2] = Default::default();
    for rep in 1..=a.repeat {
        let order: [usize; 2] = if rep % 2 == 1 { [0, 1] } else { [1, 0] };
        for i in order {
            let (name, ctx) = &ctxs[i];
            println!("-- repetition {rep}: {name} --");
            crate::table_header();
            let f = crate::case::run_reps(ctx, &case, tools, rep..=rep);
            got[i].add(&f);
        }
    }
    let [clustered, one] = &got;
    for (name, t) in [("cluster", clustered), ("single", one)] {
        if t.split.is_empty() {
            bail!(
                "{name}: no repetition measured: {}",
                t.failure.as_deref().unwrap_or_default()
            );
        }
        if memtier.is_some() {
            let Some(r) = crate::median_of(t.memtier.clone()) else {
                bail!("{name}: no repetition of memtier_benchmark measured");
            };
            println!("case {name} redis memtier ratio {r:.2}");
        }
    }
    if let (Some(c), Some(o)) = (
        crate::median_of(clustered.memtier_cpu.clone()),
        crate::median_of(one.memtier_cpu.clone()),
    ) {
        println!(
            "memtier_benchmark's own cluster / single-node CPU per operation: {:.3}",
            c / o
        );
    }
    let (c, o) = (clustered.split_medians(), one.split_medians());
    let s = Split::of(c, o);
    println!(
        "kvbench's whole process, CPU s per 1M ops (medians of {} and {} repetitions): cluster user {:.3} system {:.3}, single node user {:.3} system {:.3}",
        clustered.split.len(),
        one.split.len(),
        c.0,
        c.1,
        o.0,
        o.1
    );
    println!("== {}", s.line());
    println!(
        "case cluster redis whole ratio {:.3} user {:.3} system {:.3}",
        s.all, s.user, s.system
    );
    single.stop().context("stop the single Redis")?;
    cluster.stop().context("stop the cluster")?;
    Ok(())
}

/// One topology's figures over the whole-process part's repetitions.
#[derive(Default)]
struct Topology {
    /// kvbench's user and system CPU s per 1M operations, a pair each.
    split: Vec<(f64, f64)>,
    /// kvbench / memtier_benchmark, and memtier's CPU s per 1M operations.
    memtier: Vec<f64>,
    memtier_cpu: Vec<f64>,
    failure: Option<String>,
}

impl Topology {
    fn add(&mut self, f: &crate::case::Figures) {
        self.split.extend(f.kvbench_split);
        self.memtier.extend(f.memtier);
        self.memtier_cpu.extend(f.memtier_cpu);
        if f.failure.is_some() {
            self.failure.clone_from(&f.failure);
        }
    }

    /// The medians of user and of system time, each of its own column.
    fn split_medians(&self) -> (f64, f64) {
        let col = |f: fn(&(f64, f64)) -> f64| {
            crate::median_of(self.split.iter().map(f).collect()).unwrap_or(f64::NAN)
        };
        (col(|s| s.0), col(|s| s.1))
    }
}

/// Places process `pid` on `cpus` with taskset: every thread (`all`), or
/// the one that spawns the tools (this process's main thread).
fn place(cpus: &str, pid: u32, all: bool) -> Result<()> {
    let out = Command::new("taskset")
        .args(all.then_some("-a"))
        .args(["-p", "-c", cpus, &pid.to_string()])
        .output()
        .context("run taskset (util-linux)")?;
    if !out.status.success() {
        bail!(
            "taskset {cpus} {pid}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The cluster's whole-process CPU per operation over the single node's,
/// in all and split into user and system time, and the share of the
/// cluster's extra CPU that is user time.
#[derive(Debug)]
struct Split {
    all: f64,
    user: f64,
    system: f64,
    /// Of the cluster's extra CPU per operation, the part that is user
    /// time; `None` when the cluster costs no more.
    user_share: Option<f64>,
}

impl Split {
    fn of(cluster: (f64, f64), single: (f64, f64)) -> Split {
        let extra = (cluster.0 + cluster.1) - (single.0 + single.1);
        Split {
            all: (cluster.0 + cluster.1) / (single.0 + single.1),
            user: cluster.0 / single.0,
            system: cluster.1 / single.1,
            user_share: (extra > 0.0).then(|| (cluster.0 - single.0) / extra),
        }
    }

    fn line(&self) -> String {
        let mut line = format!(
            "cluster / single node, whole process: {:.3} (user {:.3}, system {:.3})",
            self.all, self.user, self.system
        );
        if let Some(u) = self.user_share {
            line.push_str(&format!(
                "; user time is {:.0}% of the cluster's extra CPU",
                100.0 * u
            ));
            if self.system < 1.0 {
                line.push_str(" (its system time is lower)");
            }
        }
        line
    }
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
    fn only_a_cluster_that_saturated_the_machine_alone_goes_unjudged() {
        // The figures of 2026-11-30 on two vCPUs.
        let why = confounded(1.96, 1.33, 2.0).expect("only the cluster saturated");
        assert!(why.contains("1.96 of 2 CPUs"), "{why}");
        // Neither saturated (servers and client on their own cores), or
        // both did: the two met the same machine.
        assert!(confounded(1.5, 1.3, 4.0).is_none());
        assert!(confounded(1.95, 1.9, 2.0).is_none());
        assert!(confounded(1.79, 1.33, 2.0).is_none(), "under 90% busy");
    }

    #[test]
    fn cpus_busy_are_the_medians_of_client_and_servers() {
        let s = |us: f64, tput: f64, server_us: Option<f64>| Sample {
            us,
            tput,
            server_us,
        };
        let runs = [
            [
                s(0.4, 750_000.0, Some(1.33)),
                s(0.48, 1_000_000.0, Some(1.48)),
            ],
            [
                s(0.42, 760_000.0, Some(1.30)),
                s(0.50, 980_000.0, Some(1.50)),
            ],
            [
                s(0.41, 740_000.0, Some(1.35)),
                s(0.47, 1_020_000.0, Some(1.46)),
            ],
        ];
        let m = machine(&runs).expect("every run has its servers' CPU");
        // The median run: 0.48 + 1.48 CPUs for the cluster.
        assert!(
            m.line.contains("cluster 1.96 (client 0.48, servers 1.48)"),
            "{}",
            m.line
        );
        let mut gap = runs;
        gap[1][0].server_us = None;
        assert!(machine(&gap).is_none(), "a run without the servers' CPU");
    }

    #[test]
    fn the_split_says_which_time_carries_the_clusters_extra_cost() {
        // 2026-12-08, servers and client apart (`--server-cpus 0
        // --client-cpus 1`): CPU s per 1M operations, user and system.
        let s = Split::of((0.448, 0.439), (0.164, 0.376));
        assert!((s.all - 0.887 / 0.540).abs() < 1e-9, "{s:?}");
        assert!((s.user - 0.448 / 0.164).abs() < 1e-9, "{s:?}");
        assert!((s.system - 0.439 / 0.376).abs() < 1e-9, "{s:?}");
        let share = s.user_share.expect("the cluster costs more");
        assert!((share - 0.284 / 0.347).abs() < 1e-9, "{s:?}");
        assert!(s
            .line()
            .contains("user time is 82% of the cluster's extra CPU"));
        // Unplaced, the cluster's system time was the lower: user time is
        // more than all of the extra, and the line says why.
        let shared = Split::of((0.424, 0.388), (0.198, 0.406));
        assert!(shared
            .line()
            .contains("109% of the cluster's extra CPU (its system time is lower)"));
        // A cluster no dearer than the single node has no extra to share out.
        let free = Split::of((0.2, 0.3), (0.2, 0.35));
        assert!(free.user_share.is_none() && !free.line().contains('%'));
    }

    #[test]
    fn burners_burn_until_dropped() {
        let t0 = std::time::Instant::now();
        let burn = Burn::start(2);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(burn.threads.iter().all(|t| !t.is_finished()), "they spin");
        drop(burn);
        assert!(t0.elapsed() < std::time::Duration::from_secs(5), "and stop");
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
