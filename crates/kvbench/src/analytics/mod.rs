//! `kvbench analytics pagerank` (paper D): PageRank map/reduce over
//! Memcached, Redis and Valkey (client-side drivers, [`mapreduce`]) and on
//! Spark ([`spark`]), each checked node by node against the in-process
//! reference (kvbench_analytics), whose time is reported as the floor.

pub(crate) mod lookup;
mod record;
pub mod reproduce;

use crate::args::{
    AnalyticsArgs, AnalyticsCommand, AnalyticsCommon, AnalyticsListArgs, PagerankArgs,
};
use crate::exit::{UsageError, Verdict};
use anyhow::{Context, Result};
use kvbench_analytics::{agree, kv, lua, mapreduce, pagerank, rmat, snap, spark, Graph};
use kvbench_model::analytics::{AnalyticsKind, AnalyticsSettings, PagerankResult};
use kvbench_model::SystemKind;
use kvbench_servers::{Server, ServerSpec};
use std::path::Path;
use std::time::Instant;

/// Every implementation must give each node's rank within this relative
/// error of the reference's. The implementations sum a node's
/// contributions in other orders than the reference (per driver, then
/// across drivers; Spark by partition), which moves the last bits only:
/// measured differences are below 1e-13.
pub const TOLERANCE: f64 = 1e-6;

/// The implementations `--impl` takes.
const IMPLS: &[&str] = &[
    "reference",
    "redis",
    "redis-lua",
    "valkey",
    "valkey-lua",
    "memcached",
    "spark",
];

/// Runs `kvbench analytics ...`.
///
/// # Errors
/// Bad input (exit 2), a system that fails, or ranks that disagree.
pub fn dispatch(a: AnalyticsArgs) -> Result<Verdict> {
    match a.command {
        AnalyticsCommand::Pagerank(p) => run_pagerank(&p),
        AnalyticsCommand::Lookup(l) => lookup::run(&l),
        AnalyticsCommand::List(l) => list(&l),
    }
}

/// The graph `--graph`, `--scale` and `--seed` name (`synthetic:NAME`,
/// `rmat:NODES:EDGES`, a file), with its description.
pub(super) fn graph(a: &AnalyticsCommon) -> Result<(Graph, String)> {
    if !(a.scale.is_finite() && a.scale > 0.0 && a.scale <= 100.0) {
        return Err(UsageError(format!(
            "--scale must be above 0 and at most 100, got {}",
            a.scale
        ))
        .into());
    }
    if let Some(size) = a.graph.strip_prefix("rmat:") {
        let bad = || {
            UsageError(format!(
                "--graph {}: expected rmat:NODES:EDGES (e.g. rmat:10000:50000)",
                a.graph
            ))
        };
        let (nodes, edges) = size.split_once(':').ok_or_else(bad)?;
        let nodes: u32 = nodes.parse().map_err(|_| bad())?;
        let edges: u64 = edges.parse().map_err(|_| bad())?;
        if nodes == 0 {
            return Err(bad().into());
        }
        let g = rmat::rmat(nodes, edges, a.seed)
            .map_err(|e| UsageError(format!("--graph {}: {e}", a.graph)))?;
        return Ok((g, format!("{} (R-MAT, seed {})", a.graph, a.seed)));
    }
    if let Some(name) = a.graph.strip_prefix("synthetic:") {
        let shape = rmat::shape(name).ok_or_else(|| {
            UsageError(format!(
                "--graph synthetic:{name}: unknown graph (expected synthetic:google, synthetic:pokec or a SNAP edge-list file)"
            ))
        })?;
        let (nodes, edges) = shape.scaled(a.scale);
        let g = rmat::rmat(nodes, edges, a.seed)
            .map_err(|e| UsageError(format!("--graph {}: {e}", a.graph)))?;
        return Ok((
            g,
            format!("synthetic:{name} x{} (R-MAT, seed {})", a.scale, a.seed),
        ));
    }
    let g = snap::read(Path::new(&a.graph)).map_err(|e| UsageError(format!("--graph {e}")))?;
    Ok((g, a.graph.clone()))
}

fn run_pagerank(a: &PagerankArgs) -> Result<Verdict> {
    pagerank_run(a, true).map(|_| Verdict::Ok)
}

/// Runs `kvbench analytics pagerank` and returns what it stored; prints the
/// table (or JSON) when `show`.
pub(crate) fn pagerank_run(
    a: &PagerankArgs,
    show: bool,
) -> Result<kvbench_model::analytics::AnalyticsRecord> {
    if a.iterations == 0 || a.iterations > 1000 {
        return Err(UsageError(format!(
            "--iterations must be between 1 and 1000, got {}",
            a.iterations
        ))
        .into());
    }
    if !(a.damping > 0.0 && a.damping < 1.0) {
        return Err(UsageError(format!(
            "--damping must be above 0 and below 1, got {}",
            a.damping
        ))
        .into());
    }
    check_names(&a.impls, IMPLS)?;
    if let Some(d) = a.drivers {
        kvbench_run::bounds::THREADS.check("--drivers", d.into())?;
    }
    if a.impls.iter().any(|i| i == "spark") {
        spark::check("--impl spark").map_err(|m| UsageError(m.0))?;
    }
    // Opened before anything starts: a bad --db costs nothing.
    let mut store = crate::db::open_store(&a.common.db)?;
    let say = |s: &str| {
        if !a.common.quiet {
            eprintln!("{s}");
        }
    };
    let started = Instant::now();
    let (g, name) = graph(&a.common)?;
    say(&format!(
        "graph {name}: {} nodes, {} edges, {} dangling, built in {:.1} s",
        g.nodes(),
        g.edges(),
        g.dangling(),
        started.elapsed().as_secs_f64()
    ));
    let t = Instant::now();
    let reference = pagerank(&g, a.iterations, a.damping);
    let reference_s = t.elapsed().as_secs_f64();
    let mut record = record::begin(
        AnalyticsKind::Pagerank,
        &a.common,
        &g,
        name,
        AnalyticsSettings {
            implementations: a.impls.clone(),
            iterations: Some(a.iterations),
            damping: Some(a.damping),
            drivers: a.drivers,
            count: None,
            spark_master: a.common.spark_master.clone(),
            tolerance: Some(TOLERANCE),
        },
    );
    for imp in &a.impls {
        say(&format!("{imp}: running"));
        match one(imp, &g, a, &reference, reference_s, &say) {
            Ok(r) => record.pagerank.push(r),
            Err(e) => {
                record::save(&mut store, record, Some(&e), a.common.quiet)?;
                return Err(e);
            }
        }
    }
    let saved = record::save(&mut store, record.clone(), None, a.common.quiet);
    let shown = saved.as_ref().unwrap_or(&record);
    if show && a.common.json {
        crate::output::print(&serde_json::to_string_pretty(shown)?)?;
    } else if show {
        crate::output::print(&table(&shown.pagerank, a.iterations))?;
    }
    saved
}

/// Runs implementation `imp` and checks its ranks against `reference`.
fn one(
    imp: &str,
    g: &Graph,
    a: &PagerankArgs,
    reference: &kvbench_analytics::PageRank,
    reference_s: f64,
    say: &dyn Fn(&str),
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
            let (sr, ranks) = spark::run(
                g,
                a.iterations,
                a.damping,
                &a.common.spark_master,
                work.path(),
            )?;
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
        kv_impl => on_kv(kv_impl, g, a, &reference.ranks, say)?,
    })
}

/// Starts a private `system` for `g` (Memcached with room for the lists,
/// ranks and contribution blobs, twice over); returns it and its version.
fn start_server(
    imp: &str,
    system: SystemKind,
    wire: kv::Wire,
    g: &Graph,
) -> Result<(Server, String)> {
    let need_mb = (g.edges() * 4 + u64::from(g.nodes()) * (16 + 2 * 80)) * 2 / (1 << 20) + 64;
    let server = Server::start(&ServerSpec {
        memory_limit_mb: (wire == kv::Wire::Memcache).then_some(need_mb),
        ..ServerSpec::new(system)
    })
    .with_context(|| format!("cannot start {imp}"))?;
    let version = server
        .version()
        .map(|v| format!("{} {}", v.name.unwrap_or_default(), v.version))
        .unwrap_or_default();
    Ok((server, version))
}

/// `--impl` names, each checked against `known`.
fn check_names(names: &[String], known: &[&str]) -> Result<()> {
    for i in names {
        if !known.contains(&i.as_str()) {
            return Err(UsageError(format!(
                "--impl {i}: unknown implementation (expected {})",
                known.join(", ")
            ))
            .into());
        }
    }
    Ok(())
}

/// The largest relative error, or the run fails naming the first node
/// beyond [`TOLERANCE`].
fn checked(imp: &str, reference: &[f64], got: &[f64]) -> Result<f64> {
    agree(reference, got, TOLERANCE).map_err(|d| {
        anyhow::anyhow!("{imp}: ranks differ from the reference beyond {TOLERANCE:e}: {d}")
    })?;
    Ok(reference
        .iter()
        .zip(got)
        .map(|(r, g)| ((g - r) / r).abs())
        .fold(0.0, f64::max))
}

fn on_kv(
    imp: &str,
    g: &Graph,
    a: &PagerankArgs,
    reference: &[f64],
    say: &dyn Fn(&str),
) -> Result<PagerankResult> {
    let scripts = imp.ends_with("-lua");
    let (system, wire) = kv::Wire::store(imp)
        .ok_or_else(|| anyhow::anyhow!("--impl {imp}: not a key-value store"))?;
    // The paper's drivers: five threads for Memcached, six for Redis.
    let drivers = a
        .drivers
        .unwrap_or(if wire == kv::Wire::Memcache { 5 } else { 6 });
    // Memcached: room for the lists, ranks and contribution blobs, twice.
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
        iterations: a.iterations,
        damping: a.damping,
    };
    let mut step = |step: &str| {
        say(&format!("{imp}: {step}"));
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
        lua::run(g, job.addr, drivers, a.iterations, a.damping, &mut step).map(|o| {
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

fn table(rs: &[PagerankResult], iterations: u32) -> String {
    let mut out = format!(
        "{:<10} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>10} {:>9}  {}\n",
        "impl",
        "load s",
        "map s/it",
        "red. s/it",
        "total s",
        "mem MiB",
        "srv cpu",
        "kvb cpu",
        "requests",
        "max err",
        "ran on"
    );
    let it = f64::from(iterations);
    for r in rs {
        let pct = |c: Option<f64>| {
            c.map_or("-".to_string(), |c| {
                format!("{:.0}%", 100.0 * c / r.iterations_s.max(1e-9))
            })
        };
        out.push_str(&format!(
            "{:<10} {:>7.2} {:>9.3} {:>9.3} {:>9.2} {:>9} {:>8} {:>8} {:>10} {:>9.1e}  {}\n",
            r.implementation,
            r.load_s,
            r.map_s.iter().sum::<f64>() / it,
            r.reduce_s.iter().sum::<f64>() / it,
            r.iterations_s,
            r.memory_bytes.map_or("-".into(), |b| format!(
                "{:.1}",
                b as f64 / (1 << 20) as f64
            )),
            pct(r.server_cpu_s),
            pct(r.client_cpu_s),
            r.requests.map_or("-".into(), |n| n.to_string()),
            r.max_relative_error,
            r.detail
        ));
    }
    out
}

/// `kvbench analytics list`: one line per stored analytics run.
fn list(a: &AnalyticsListArgs) -> Result<Verdict> {
    if a.limit == Some(0) {
        return Err(UsageError("--limit must be at least 1".into()).into());
    }
    let store = crate::db::open_for_reading(&a.db)?;
    let records = store.list_analytics(a.limit)?;
    if a.json {
        crate::output::print(&serde_json::to_string_pretty(&records)?)?;
        return Ok(Verdict::Ok);
    }
    if records.is_empty() {
        eprintln!("no analytics runs stored in {}", a.db);
        return Ok(Verdict::Ok);
    }
    let mut t =
        kvbench_report::table::Table::new(&["id", "kind", "started", "status", "graph", "results"]);
    for r in &records {
        let results: Vec<String> = r
            .pagerank
            .iter()
            .map(|p| format!("{} {:.2} s", p.implementation, p.iterations_s))
            .chain(r.lookups.iter().map(|l| {
                format!(
                    "{} p50 {} us",
                    l.implementation,
                    kvbench_report::format::micros(l.p50_us)
                )
            }))
            .collect();
        t.row(vec![
            r.id.map(|i| i.to_string()).unwrap_or_default(),
            r.kind.as_str().into(),
            r.started_at.clone(),
            r.status.as_str().into(),
            format!(
                "{} ({} nodes, {} edges)",
                r.graph.source, r.graph.nodes, r.graph.edges
            ),
            results.join(", "),
        ]);
    }
    crate::output::print(&t.to_text())?;
    Ok(Verdict::Ok)
}
