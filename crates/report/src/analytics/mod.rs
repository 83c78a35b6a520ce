//! The report of analytics runs (`kvbench analytics`, paper D): its own
//! page, because a PageRank or lookup record has no workload cells. The
//! same files as the runs' report (`index.html` with inline SVG,
//! `report.md`, `figures/ID.svg|png`), drawn by the same `plot`; the
//! paper's findings, when given, are judged by [`findings`].

pub mod figures;
pub mod findings;

use crate::format;
use crate::page::Rendered;
use crate::paper::{Outcome, Paper};
use crate::plot::Palette;
use kvbench_model::analytics::{AnalyticsKind, AnalyticsRecord};
use minijinja::context;
use serde::Serialize;

/// What an analytics report is made from.
#[derive(Debug, Clone)]
pub struct Input {
    /// The page's heading.
    pub title: String,
    /// The records, in the order they should be listed.
    pub records: Vec<AnalyticsRecord>,
    /// Commands that measure again and redraw this report.
    pub commands: Vec<String>,
    /// When the report was generated (RFC 3339).
    pub generated_at: String,
    /// The paper whose figures the memory figure sets beside ours.
    pub paper: Option<Paper>,
    /// Judge the paper's findings (`kvbench reproduce`) in a table.
    pub judge: bool,
}

/// The report in numbers (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Analytics runs read.
    pub analytics_runs: usize,
    /// Figure ids, in page order.
    pub figures: Vec<String>,
    /// The paper's findings beside the measurements, when judged.
    pub paper: Vec<Outcome>,
}

#[derive(Serialize)]
struct PagerankRow {
    implementation: String,
    colour: String,
    load: String,
    map: String,
    reduce: String,
    total: String,
    memory: String,
    server_cpu: String,
    client_cpu: String,
    requests: String,
    error: String,
    detail: String,
}

#[derive(Serialize)]
struct LookupRow {
    system: String,
    colour: String,
    count: u32,
    setup: String,
    p50: String,
    p99: String,
    max: String,
    detail: String,
}

/// A store's set/get window: throughput, and where the server's CPU went.
#[derive(Serialize)]
struct SetGetRow {
    system: String,
    colour: String,
    drivers: u32,
    seconds: String,
    ops: String,
    ops_per_s: String,
    server_cpu: String,
    kernel_share: String,
    client_cpu: String,
}

#[derive(Serialize)]
struct RecordView {
    id: String,
    kind: &'static str,
    status: &'static str,
    failure: Option<String>,
    started_at: String,
    graph: String,
    settings: String,
    machine: String,
    command: String,
    pagerank: Vec<PagerankRow>,
    lookups: Vec<LookupRow>,
    setget: Vec<SetGetRow>,
}

/// The command that measures `r` again.
fn command(r: &AnalyticsRecord) -> String {
    let s = &r.settings;
    let mut c = format!(
        "kvbench analytics {} --graph {}",
        r.kind.as_str(),
        r.graph.source
    );
    if r.graph.scale != 1.0 {
        c.push_str(&format!(" --scale {}", r.graph.scale));
    }
    c.push_str(&format!(
        " --seed {} --impl {}",
        r.graph.seed,
        s.implementations.join(",")
    ));
    if let Some(i) = s.iterations {
        c.push_str(&format!(" --iterations {i}"));
    }
    if let Some(d) = s.damping {
        c.push_str(&format!(" --damping {d}"));
    }
    if let Some(d) = s.drivers {
        c.push_str(&format!(" --drivers {d}"));
    }
    if let Some(n) = s.count {
        c.push_str(&format!(" --count {n}"));
    }
    if let Some(t) = s.setget_s {
        c.push_str(&format!(" --setget {t}"));
    }
    if s.implementations.iter().any(|i| i == "spark") {
        c.push_str(&format!(" --spark-master '{}'", s.spark_master));
    }
    c
}

fn view(r: &AnalyticsRecord, palette: &Palette) -> RecordView {
    let s = &r.settings;
    let mut settings = Vec::new();
    if let (Some(i), Some(d)) = (s.iterations, s.damping) {
        settings.push(format!("{i} iterations, damping {d}"));
    }
    if let Some(t) = s.tolerance {
        settings.push(format!("ranks checked per node within {t:e} relative"));
    }
    if let Some(n) = s.count {
        settings.push(format!("{n} lookups per system"));
    }
    if let Some(t) = s.setget_s {
        settings.push(format!(
            "then {t} s of set/get on each store (the paper's drivers, half gets, half sets of one rank each)"
        ));
    }
    if s.iterations.is_some() {
        settings.push(match s.drivers {
            Some(d) => format!("{d} drivers"),
            None => "drivers as the paper's (5 for Memcached, 6 for Redis and Valkey)".into(),
        });
    }
    settings.push(format!("Spark master {}", s.spark_master));
    let e = &r.environment;
    let pct = |c: Option<f64>, wall: f64| {
        c.map_or("–".to_string(), |c| {
            format!("{:.0}%", 100.0 * c / wall.max(1e-9))
        })
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    RecordView {
        id: r.id.map(|i| i.to_string()).unwrap_or_default(),
        kind: r.kind.as_str(),
        status: r.status.as_str(),
        failure: r.failure.clone(),
        started_at: r.started_at.clone(),
        graph: format!(
            "{}: {} nodes, {} edges, {} dangling",
            r.graph.description,
            format::count(u64::from(r.graph.nodes)),
            format::count(r.graph.edges),
            format::count(u64::from(r.graph.dangling))
        ),
        settings: settings.join("; "),
        machine: format!(
            "{} ({}, {} cores, {:.1} GiB, kernel {}), kvbench {}",
            e.host,
            e.cpu_model,
            e.cores,
            e.memory_bytes as f64 / f64::from(1u32 << 30),
            e.kernel,
            e.kvbench_version
        ),
        command: command(r),
        pagerank: r
            .pagerank
            .iter()
            .map(|p| PagerankRow {
                implementation: p.implementation.clone(),
                colour: palette.hex(p.system()),
                load: format!("{:.2}", p.load_s),
                map: format!("{:.3}", mean(&p.map_s)),
                reduce: format!("{:.3}", mean(&p.reduce_s)),
                total: format!("{:.2}", p.iterations_s),
                memory: p.memory_bytes.map_or("–".into(), |b| {
                    format!("{:.1}", b as f64 / (1024.0 * 1024.0))
                }),
                server_cpu: pct(p.server_cpu_s, p.iterations_s),
                client_cpu: pct(p.client_cpu_s, p.iterations_s),
                requests: p.requests.map_or("–".into(), format::count),
                // The reference is what the others are checked against.
                error: if p.implementation == "reference" {
                    "–".into()
                } else {
                    format!("{:.1e}", p.max_relative_error)
                },
                detail: p.detail.clone(),
            })
            .collect(),
        lookups: r
            .lookups
            .iter()
            .map(|l| LookupRow {
                system: l.implementation.clone(),
                colour: palette.hex(&l.implementation),
                count: l.count,
                setup: format!("{:.2}", l.setup_s),
                p50: format::micros(l.p50_us),
                p99: format::micros(l.p99_us),
                max: format::micros(l.max_us),
                detail: l.detail.clone(),
            })
            .collect(),
        setget: r
            .lookups
            .iter()
            .filter_map(|l| {
                let sg = l.setget.as_ref()?;
                let share =
                    |x: Option<f64>| x.map_or("–".into(), |x| format!("{:.0}%", 100.0 * x));
                Some(SetGetRow {
                    system: l.implementation.clone(),
                    colour: palette.hex(&l.implementation),
                    drivers: sg.drivers,
                    seconds: format!("{:.1}", sg.seconds),
                    ops: format::count(sg.ops()),
                    ops_per_s: format::count(sg.ops_per_s().round() as u64),
                    server_cpu: share(sg.server_busy()),
                    kernel_share: share(sg.kernel_share()),
                    client_cpu: share(Some(sg.client_busy())),
                })
            })
            .collect(),
    }
}

/// Renders the report of `input`.
///
/// # Errors
/// A message when a figure cannot be drawn or a template fails.
pub fn render(input: &Input) -> Result<Rendered<Summary>, String> {
    let figures = figures::build(&input.records, input.paper.as_ref());
    let palette = Palette::for_figures(&figures);
    let mut files = Vec::new();
    let groups = crate::page::figure_groups(&figures, &palette, &mut files)?;
    let outcomes = match (&input.paper, input.judge) {
        (Some(p), true) => findings::evaluate(p, &input.records),
        _ => Vec::new(),
    };
    let paper_view = match (&input.paper, input.judge) {
        (Some(p), true) => Some(crate::page::paper_view(p, &outcomes)),
        _ => None,
    };
    let records: Vec<RecordView> = input.records.iter().map(|r| view(r, &palette)).collect();
    let ctx = context! {
        title => input.title,
        generated_at => input.generated_at,
        kvbench_version => env!("CARGO_PKG_VERSION"),
        paper => paper_view,
        pagerank => records.iter().filter(|r| r.kind == AnalyticsKind::Pagerank.as_str()).collect::<Vec<_>>(),
        lookups => records.iter().filter(|r| r.kind == AnalyticsKind::Lookup.as_str()).collect::<Vec<_>>(),
        records => records,
        figure_groups => groups,
        commands => input.commands,
    };
    files.extend(crate::page::pages(
        include_str!("../../templates/analytics.html.j2"),
        include_str!("../../templates/analytics.md.j2"),
        &ctx,
    )?);
    Ok(Rendered {
        files,
        summary: Summary {
            analytics_runs: input.records.len(),
            figures: figures.iter().map(|f| f.id.clone()).collect(),
            paper: outcomes,
        },
    })
}

#[cfg(test)]
mod tests;
