//! PageRank over each implementation (paper D's iterative job): the
//! reference in process, the map/reduce drivers and Lua scripts on a
//! private Memcached, Redis or Valkey started for it, and Spark; each
//! implementation's ranks checked against the reference's node by node.

use super::{checked, record, say, start_server, Finished, GraphSpec};
use crate::view::View;
use anyhow::{Context, Result};
use kvbench_analytics::{kv, lua, mapreduce, pagerank, spark, Graph, PageRank};
use kvbench_model::analytics::{AnalyticsKind, AnalyticsSettings, PagerankResult};
use kvbench_store::Store;
use std::time::Instant;

/// The implementations, by the names `--impl` takes.
pub const IMPLS: &[&str] = &[
    "reference",
    "redis",
    "redis-lua",
    "valkey",
    "valkey-lua",
    "memcached",
    "spark",
];

/// One PageRank run's settings.
#[derive(Debug, Clone)]
pub struct PagerankSettings {
    /// The graph.
    pub graph: GraphSpec,
    /// Implementations, in the order they run (names from [`IMPLS`]).
    pub impls: Vec<String>,
    /// PageRank iterations.
    pub iterations: u32,
    /// Damping factor.
    pub damping: f64,
    /// Driver threads per key-value system; `None`: the paper's five for
    /// Memcached, six for Redis and Valkey.
    pub drivers: Option<u32>,
    /// Where Spark runs (`local[2]` or a master URL).
    pub spark_master: String,
}

/// Runs every implementation of `s` and stores the run in `store`.
///
/// # Errors
/// A graph that cannot be built (a [`crate::UsageError`]), an
/// implementation that fails or whose ranks disagree (the run is stored
/// `failed` first, with what finished before).
pub fn run(s: &PagerankSettings, store: &mut Store, view: &dyn View) -> Result<Finished> {
    let started = Instant::now();
    let (g, name) = super::graph(&s.graph)?;
    say(
        view,
        &format!(
            "graph {name}: {} nodes, {} edges, {} dangling, built in {:.1} s",
            g.nodes(),
            g.edges(),
            g.dangling(),
            started.elapsed().as_secs_f64()
        ),
    );
    let t = Instant::now();
    let reference = pagerank(&g, s.iterations, s.damping);
    let reference_s = t.elapsed().as_secs_f64();
    let record = record::begin(
        AnalyticsKind::Pagerank,
        &s.graph,
        &g,
        name,
        AnalyticsSettings {
            implementations: s.impls.clone(),
            iterations: Some(s.iterations),
            damping: Some(s.damping),
            drivers: s.drivers,
            count: None,
            setget_s: None,
            spark_master: s.spark_master.clone(),
            tolerance: Some(super::TOLERANCE),
        },
    );
    record::run_all(
        store,
        record,
        &s.impls,
        view,
        |imp| {
            say(view, &format!("{imp}: running"));
            one(imp, &g, s, &reference, reference_s, view)
        },
        |r, p| r.pagerank.push(p),
    )
}

/// Runs implementation `imp` and checks its ranks against `reference`.
fn one(
    imp: &str,
    g: &Graph,
    s: &PagerankSettings,
    reference: &PageRank,
    reference_s: f64,
    view: &dyn View,
) -> Result<PagerankResult> {
    Ok(match imp {
        "reference" => PagerankResult {
            implementation: "reference".into(),
            load_s: 0.0,
            map_s: reference
                .iterations
                .iter()
                .map(|d| d.as_secs_f64())
                .collect(),
            reduce_s: vec![0.0; reference.iterations.len()],
            iterations_s: reference_s,
            memory_bytes: Some(g.edges() * 4 + u64::from(g.nodes()) * 16),
            server_cpu_s: None,
            client_cpu_s: None,
            requests: None,
            max_relative_error: 0.0,
            detail: "plain Rust over the graph's rows, one thread".into(),
        },
        "spark" => {
            let work = tempfile::tempdir().context("a directory for Spark's files")?;
            let (sr, ranks) = spark::run(g, s.iterations, s.damping, &s.spark_master, work.path())?;
            let err = checked("spark", &reference.ranks, &ranks)?;
            PagerankResult {
                implementation: "spark".into(),
                load_s: sr.load_s,
                map_s: sr.iterations_s.iter().map(|s| s.map_s).collect(),
                reduce_s: sr.iterations_s.iter().map(|s| s.reduce_s).collect(),
                iterations_s: sr.iterations_s.iter().map(|s| s.map_s + s.reduce_s).sum(),
                memory_bytes: sr.storage_bytes,
                server_cpu_s: None,
                client_cpu_s: None,
                requests: sr.jobs,
                max_relative_error: err,
                detail: format!(
                    "Spark {} on {}, total {:.2} s",
                    sr.spark_version, sr.master, sr.total_s
                ),
            }
        }
        kv_impl => on_kv(kv_impl, g, s, &reference.ranks, view)?,
    })
}

/// A map/reduce or Lua implementation on a private server: its load,
/// iterations, the server's memory after the load and both sides' CPU over
/// the iterations.
fn on_kv(
    imp: &str,
    g: &Graph,
    s: &PagerankSettings,
    reference: &[f64],
    view: &dyn View,
) -> Result<PagerankResult> {
    let scripts = imp.ends_with("-lua");
    let (system, wire) = kv::Wire::store(imp)
        .ok_or_else(|| anyhow::anyhow!("--impl {imp}: not a key-value store"))?;
    let drivers = s.drivers.unwrap_or_else(|| super::paper_drivers(wire));
    let (server, version) = start_server(imp, system, wire, g)?;
    let before = server.probe("before_load")?;
    let mut loaded = None;
    let mut window: Option<(f64, f64)> = None;
    let mut server_cpu = None;
    let mut client_cpu = None;
    let job = mapreduce::Job {
        graph: g,
        addr: server.addr(),
        wire,
        drivers,
        iterations: s.iterations,
        damping: s.damping,
    };
    let mut step = |step: &str| {
        say(view, &format!("{imp}: {step}"));
        if step == "iteration 1 map" {
            loaded = server.probe("after_load").ok();
            window = Some((
                server.cpu_seconds().unwrap_or(f64::NAN),
                kvbench_engine::cpu::process_cpu_seconds(),
            ));
        } else if step == "read ranks" {
            if let Some((s0, c0)) = window {
                server_cpu = server
                    .cpu_seconds()
                    .map(|s| s - s0)
                    .filter(|s| s.is_finite());
                client_cpu = Some(kvbench_engine::cpu::process_cpu_seconds() - c0);
            }
        }
    };
    let mut scripted = None;
    let outcome = if scripts {
        lua::run(g, job.addr, drivers, s.iterations, s.damping, &mut step).map(|o| {
            scripted = Some((o.longest_call, o.longest_at.clone(), o.p99_call, o.calls));
            o.outcome
        })
    } else {
        mapreduce::run(&job, &mut step)
    };
    let stopped = server.stop();
    let outcome = outcome.with_context(|| format!("{imp} PageRank"))?;
    stopped.with_context(|| format!("{imp} did not stop cleanly"))?;
    let err = checked(imp, reference, &outcome.ranks)?;
    let memory = match (
        loaded.as_ref().and_then(|p| p.server_memory_bytes),
        before.server_memory_bytes,
    ) {
        (Some(after), Some(b)) => Some(after.saturating_sub(b)),
        _ => None,
    };
    Ok(PagerankResult {
        implementation: imp.into(),
        load_s: outcome.load_s,
        map_s: outcome.steps.iter().map(|s| s.0).collect(),
        reduce_s: outcome.steps.iter().map(|s| s.1).collect(),
        iterations_s: outcome.steps.iter().map(|s| s.0 + s.1).sum(),
        memory_bytes: memory,
        server_cpu_s: server_cpu,
        client_cpu_s: client_cpu,
        requests: Some(outcome.requests),
        max_relative_error: err,
        detail: match scripted {
            Some((longest, at, p99, calls)) => format!(
                "{version}, Lua: {calls} script calls of about {} ms (p99 {:.1} ms), the longest {:.1} ms ({at})",
                lua::TARGET.as_millis(),
                p99.as_secs_f64() * 1e3,
                longest.as_secs_f64() * 1e3
            ),
            None => format!("{version}, {drivers} drivers"),
        },
    })
}
