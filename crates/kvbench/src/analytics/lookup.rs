//! `kvbench analytics lookup` (paper D's random get): one node's record at
//! a time, by key, on a loaded Memcached, Redis or Valkey (one GET on one
//! connection, waited for before the next) and on Spark (a `lookup` job on
//! a cached RDD of the same records), so each answer's latency shows what
//! one get costs in each: a round trip, or a Spark job's start-up.

use crate::args::LookupArgs;
use crate::exit::{UsageError, Verdict};
use anyhow::{bail, Context, Result};
use kvbench_analytics::kv::{Kv, Wire};
use kvbench_analytics::Graph;
use kvbench_analytics::{mapreduce, spark};
use kvbench_model::analytics::{AnalyticsKind, AnalyticsRecord, AnalyticsSettings, LookupResult};
use rand_core::{RngCore, SeedableRng};
use std::time::Instant;

const IMPLS: &[&str] = &["redis", "valkey", "memcached", "spark"];

/// Runs the lookups on every system of `a`.
///
/// # Errors
/// Bad input (exit 2), a system that fails, or a wrong answer.
pub fn run(a: &LookupArgs) -> Result<Verdict> {
    measure(a, true).map(|_| Verdict::Ok)
}

/// Runs the lookups and returns what was stored; prints the table (or
/// JSON) when `show`.
pub(crate) fn measure(a: &LookupArgs, show: bool) -> Result<AnalyticsRecord> {
    super::check_names(&a.impls, IMPLS)?;
    if a.count == 0 || a.count > 1_000_000 {
        return Err(UsageError(format!(
            "--count must be between 1 and 1000000, got {}",
            a.count
        ))
        .into());
    }
    if a.impls.iter().any(|i| i == "spark") {
        spark::check("--impl spark").map_err(|m| UsageError(m.0))?;
    }
    let mut store = crate::db::open_store(&a.common.db)?;
    let (g, name) = super::graph(&a.common)?;
    if !a.common.quiet {
        eprintln!("graph {name}: {} nodes, {} edges", g.nodes(), g.edges());
    }
    let mut record = super::record::begin(
        AnalyticsKind::Lookup,
        &a.common,
        &g,
        name,
        AnalyticsSettings {
            implementations: a.impls.clone(),
            iterations: None,
            damping: None,
            drivers: None,
            count: Some(a.count),
            spark_master: a.common.spark_master.clone(),
            tolerance: None,
        },
    );
    for imp in &a.impls {
        if !a.common.quiet {
            eprintln!("{imp}: {} lookups", a.count);
        }
        let r = match imp.as_str() {
            "spark" => on_spark(&g, a),
            other => on_kv(other, &g, a),
        };
        match r {
            Ok(r) => record.lookups.push(r),
            Err(e) => {
                super::record::save(&mut store, record, Some(&e), a.common.quiet)?;
                return Err(e);
            }
        }
    }
    let saved = super::record::save(&mut store, record.clone(), None, a.common.quiet);
    let shown = saved.as_ref().unwrap_or(&record);
    if show && a.common.json {
        crate::output::print(&serde_json::to_string_pretty(shown)?)?;
    } else if show {
        let mut out = format!(
            "{:<10} {:>7} {:>9} {:>12} {:>12} {:>12}  {}\n",
            "system", "lookups", "setup s", "p50 us", "p99 us", "max us", "ran on"
        );
        for r in &shown.lookups {
            out.push_str(&format!(
                "{:<10} {:>7} {:>9.2} {:>12.1} {:>12.1} {:>12.1}  {}\n",
                r.implementation, r.count, r.setup_s, r.p50_us, r.p99_us, r.max_us, r.detail
            ));
        }
        crate::output::print(&out)?;
    }
    saved
}

/// The nodes to look up: seeded, the same for every system.
fn keys(g: &Graph, a: &LookupArgs) -> Vec<u32> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(a.common.seed ^ 0x6c6f_6f6b_7570);
    (0..a.count)
        .map(|_| (rng.next_u64() % u64::from(g.nodes())) as u32)
        .collect()
}

fn percentiles(mut us: Vec<f64>) -> (f64, f64, f64) {
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((q * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1];
    (at(0.5), at(0.99), us[us.len() - 1])
}

fn on_kv(imp: &str, g: &Graph, a: &LookupArgs) -> Result<LookupResult> {
    let (system, wire) =
        Wire::store(imp).ok_or_else(|| anyhow::anyhow!("--impl {imp}: not a key-value store"))?;
    let (server, version) = super::start_server(imp, system, wire, g)?;
    let measured = (|| -> Result<(f64, Vec<f64>)> {
        let mut loaders: Vec<Kv> = (0..4)
            .map(|_| Kv::connect(server.addr(), wire))
            .collect::<Result<_>>()?;
        let t = Instant::now();
        mapreduce::on_each(&mut loaders, |p, kv| mapreduce::load(kv, g, p, 4))?;
        let setup_s = t.elapsed().as_secs_f64();
        let kv = &mut loaders[0];
        let mut vals = Vec::new();
        let mut us = Vec::with_capacity(a.count as usize);
        for v in keys(g, a) {
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
        Ok((setup_s, us))
    })();
    let stopped = server.stop();
    let (setup_s, us) = measured?;
    stopped.with_context(|| format!("{imp} did not stop cleanly"))?;
    let (p50_us, p99_us, max_us) = percentiles(us);
    Ok(LookupResult {
        implementation: imp.into(),
        count: a.count,
        setup_s,
        p50_us,
        p99_us,
        max_us,
        detail: format!("{version}, GET on one connection"),
    })
}

fn on_spark(g: &Graph, a: &LookupArgs) -> Result<LookupResult> {
    let work = tempfile::tempdir().context("a directory for Spark's files")?;
    let r = spark::lookup(
        g,
        a.count,
        a.common.seed,
        &a.common.spark_master,
        work.path(),
    )?;
    if r.lookup_us.len() != a.count as usize {
        bail!(
            "spark: {} lookups reported, {} asked",
            r.lookup_us.len(),
            a.count
        );
    }
    let (p50_us, p99_us, max_us) = percentiles(r.lookup_us);
    Ok(LookupResult {
        implementation: "spark".into(),
        count: a.count,
        setup_s: r.cache_s,
        p50_us,
        p99_us,
        max_us,
        detail: format!(
            "Spark {} on {}, rdd.lookup on a cached RDD",
            r.spark_version, a.common.spark_master
        ),
    })
}
