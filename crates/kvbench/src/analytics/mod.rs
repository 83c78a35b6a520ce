//! `kvbench analytics pagerank` and `lookup` (paper D): flags checked and
//! turned into `kvbench_run::analytics`'s settings, which runs them on
//! private servers, checks and stores them; the results printed here.

pub(crate) mod lookup;

use crate::args::{
    AnalyticsArgs, AnalyticsCommand, AnalyticsCommon, AnalyticsListArgs, PagerankArgs,
};
use crate::exit::{UsageError, Verdict};
use crate::live::Live;
use anyhow::Result;
use kvbench_analytics::spark;
use kvbench_model::analytics::{AnalyticsRecord, PagerankResult};
use kvbench_run::analytics::pagerank::{PagerankSettings, IMPLS};
use kvbench_run::analytics::{check_names, GraphSpec};

/// Runs `kvbench analytics ...`.
///
/// # Errors
/// Bad input (exit 2), a system that fails, or ranks that disagree.
pub fn dispatch(a: AnalyticsArgs) -> Result<Verdict> {
    match a.command {
        AnalyticsCommand::Pagerank(p) => pagerank(&p).map(|_| Verdict::Ok),
        AnalyticsCommand::Lookup(l) => lookup::run(&l).map(|_| Verdict::Ok),
        AnalyticsCommand::List(l) => list(&l),
    }
}

/// The graph the common flags name.
fn graph_spec(a: &AnalyticsCommon) -> GraphSpec {
    GraphSpec {
        source: a.graph.clone(),
        scale: a.scale,
        seed: a.seed,
    }
}

/// Prints `record` as JSON or with `table`, as `--json` asks.
fn show(a: &AnalyticsCommon, record: &AnalyticsRecord, table: impl Fn() -> String) -> Result<()> {
    if a.json {
        crate::output::print(&serde_json::to_string_pretty(record)?)
    } else {
        crate::output::print(&table())
    }
}

/// Runs `kvbench analytics pagerank` and returns what it stored; prints the
/// table (or JSON), also when the database would not take it.
fn pagerank(a: &PagerankArgs) -> Result<AnalyticsRecord> {
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
    let settings = PagerankSettings {
        graph: graph_spec(&a.common),
        impls: a.impls.clone(),
        iterations: a.iterations,
        damping: a.damping,
        drivers: a.drivers,
        spark_master: a.common.spark_master.clone(),
    };
    let live = Live::new(a.common.quiet, None);
    let finished = kvbench_run::analytics::pagerank::run(&settings, &mut store, &live)?;
    show(&a.common, &finished.record, || {
        table(&finished.record.pagerank, a.iterations)
    })?;
    finished.saved()
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
