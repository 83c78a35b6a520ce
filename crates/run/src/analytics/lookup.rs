//! Paper D's random get: one node's record at a time, by key, on a loaded
//! Memcached, Redis or Valkey (one GET on one connection, waited for before
//! the next) and on Spark (a `lookup` job on a cached RDD of the same
//! records), so each answer's latency shows what one get costs in each: a
//! round trip, or a Spark job's start-up. On each store, the set/get
//! throughput test (`setget`) follows on the same loaded server when asked.

use super::{record, say, setget, start_server, Finished, GraphSpec};
use crate::view::View;
use anyhow::{bail, Context, Result};
use kvbench_analytics::kv::{Kv, Wire};
use kvbench_analytics::Graph;
use kvbench_analytics::{mapreduce, spark};
use kvbench_model::analytics::{AnalyticsKind, AnalyticsSettings, LookupResult, SetGetResult};
use kvbench_store::Store;
use rand_core::{RngCore, SeedableRng};
use std::time::Instant;

/// The systems, by the names `--impl` takes.
pub const IMPLS: &[&str] = &["redis", "valkey", "memcached", "spark"];

/// One lookup run's settings.
#[derive(Debug, Clone)]
pub struct LookupSettings {
    /// The graph; its seed also picks the keys.
    pub graph: GraphSpec,
    /// Systems, in the order they run (names from [`IMPLS`]).
    pub impls: Vec<String>,
    /// Lookups per system.
    pub count: u32,
    /// Where Spark runs (`local[2]` or a master URL).
    pub spark_master: String,
    /// Seconds of set/get throughput on each key-value store after its
    /// lookups (`None`: not run).
    pub setget_s: Option<f64>,
}

/// Runs the lookups on every system of `s` and stores the run in `store`.
///
/// # Errors
/// No lookups asked or a graph that cannot be built (a
/// [`crate::UsageError`]), a system that fails or answers wrongly (the run
/// is stored `failed` first, with what finished before).
pub fn run(s: &LookupSettings, store: &mut Store, view: &dyn View) -> Result<Finished> {
    if s.count == 0 {
        return Err(crate::UsageError("--count must be at least 1, got 0".into()).into());
    }
    if let Some(t) = s.setget_s {
        if !(t.is_finite() && t > 0.0 && t <= 3600.0) {
            return Err(crate::UsageError(format!(
                "--setget must be above 0 and at most 3600 seconds, got {t}"
            ))
            .into());
        }
    }
    let (g, name) = super::graph(&s.graph)?;
    say(
        view,
        &format!("graph {name}: {} nodes, {} edges", g.nodes(), g.edges()),
    );
    let record = record::begin(
        AnalyticsKind::Lookup,
        &s.graph,
        &g,
        name,
        AnalyticsSettings {
            implementations: s.impls.clone(),
            iterations: None,
            damping: None,
            drivers: None,
            count: Some(s.count),
            setget_s: s.setget_s,
            spark_master: s.spark_master.clone(),
            tolerance: None,
        },
    );
    record::run_all(
        store,
        record,
        &s.impls,
        view,
        |imp| {
            let then = match s.setget_s {
                Some(t) if imp != "spark" => format!(", then {t} s of set/get"),
                _ => String::new(),
            };
            say(view, &format!("{imp}: {} lookups{then}", s.count));
            match imp {
                "spark" => on_spark(&g, s),
                other => on_kv(other, &g, s),
            }
        },
        |r, l| r.lookups.push(l),
    )
}

/// The nodes to look up: seeded, the same for every system.
fn keys(g: &Graph, s: &LookupSettings) -> Vec<u32> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(s.graph.seed ^ 0x6c6f_6f6b_7570);
    (0..s.count)
        .map(|_| (rng.next_u64() % u64::from(g.nodes())) as u32)
        .collect()
}

/// The median, 99th percentile and maximum of `us`, each a measured value
/// (the nearest rank); `run` asks at least one lookup, so `us` is never
/// empty.
fn percentiles(mut us: Vec<f64>) -> (f64, f64, f64) {
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1];
    (at(0.5), at(0.99), us[us.len() - 1])
}

fn on_kv(imp: &str, g: &Graph, s: &LookupSettings) -> Result<LookupResult> {
    let (system, wire) =
        Wire::store(imp).ok_or_else(|| anyhow::anyhow!("--impl {imp}: not a key-value store"))?;
    let (server, version) = start_server(imp, system, wire, g)?;
    let measured = (|| -> Result<(f64, Vec<f64>, Option<SetGetResult>)> {
        let mut loaders: Vec<Kv> = (0..4)
            .map(|_| Kv::connect(server.addr(), wire))
            .collect::<Result<_>>()?;
        let t = Instant::now();
        mapreduce::on_each(&mut loaders, |p, kv| mapreduce::load(kv, g, p, 4))?;
        let setup_s = t.elapsed().as_secs_f64();
        let kv = &mut loaders[0];
        let mut vals = Vec::new();
        let mut us = Vec::with_capacity(s.count as usize);
        for v in keys(g, s) {
            let key = vec![format!("pr:n:{v}").into_bytes()];
            let t = Instant::now();
            kv.get_many(&key, &mut vals)?;
            us.push(t.elapsed().as_secs_f64() * 1e6);
            let got = vals.first().cloned().flatten().map(|b| b.len() / 4);
            if got != Some(g.neighbours(v).len()) {
                bail!(
                    "{imp}: node {v} has {} neighbours, the lookup answered {got:?}",
                    g.neighbours(v).len()
                );
            }
        }
        drop(loaders);
        let setget = match s.setget_s {
            Some(seconds) => Some(
                setget::measure(&server, wire, g.nodes(), seconds, s.graph.seed)
                    .with_context(|| format!("{imp} set/get"))?,
            ),
            None => None,
        };
        Ok((setup_s, us, setget))
    })();
    let stopped = server.stop();
    let (setup_s, us, setget) = measured?;
    stopped.with_context(|| format!("{imp} did not stop cleanly"))?;
    let (p50_us, p99_us, max_us) = percentiles(us);
    Ok(LookupResult {
        implementation: imp.into(),
        count: s.count,
        setup_s,
        p50_us,
        p99_us,
        max_us,
        detail: format!("{version}, GET on one connection"),
        setget,
    })
}

fn on_spark(g: &Graph, s: &LookupSettings) -> Result<LookupResult> {
    let work = tempfile::tempdir().context("a directory for Spark's files")?;
    let r = spark::lookup(g, s.count, s.graph.seed, &s.spark_master, work.path())?;
    if r.lookup_us.len() != s.count as usize {
        bail!(
            "spark: {} lookups reported, {} asked",
            r.lookup_us.len(),
            s.count
        );
    }
    let (p50_us, p99_us, max_us) = percentiles(r.lookup_us);
    Ok(LookupResult {
        implementation: "spark".into(),
        count: s.count,
        setup_s: r.cache_s,
        p50_us,
        p99_us,
        max_us,
        detail: format!(
            "Spark {} on {}, rdd.lookup on a cached RDD",
            r.spark_version, s.spark_master
        ),
        setget: None,
    })
}
