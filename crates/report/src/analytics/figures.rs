//! The analytics report's figures as plain data (drawn by `plot`): per
//! PageRank record, the time of each iteration per implementation and the
//! mean map and reduce step; the loaded graph's memory per system beside
//! the paper's figures; per lookup record, the latency percentiles per
//! system and, after a set/get window, where each store's CPU went per
//! operation.

use crate::figure::{Axis, Figure, FigureKind, Panel, Point, Series, Ticks};
use crate::paper::{Kind, Paper};
use kvbench_model::analytics::{AnalyticsKind, AnalyticsRecord};

fn axis(label: &str, log: bool, ticks: Ticks) -> Axis {
    Axis {
        label: label.into(),
        log,
        ticks,
    }
}

fn point(x: f64, y: f64) -> Point {
    Point {
        x,
        y,
        interval: None,
        flags: Vec::new(),
    }
}

/// Ids differ per record when a report holds several of one kind.
fn suffix(r: &AnalyticsRecord) -> String {
    r.id.map_or(String::new(), |i| format!("-{i}"))
}

/// The figures of `records`, in page order.
pub fn build(records: &[AnalyticsRecord], paper: Option<&Paper>) -> Vec<Figure> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.kind == AnalyticsKind::Pagerank) {
        if r.pagerank.is_empty() {
            continue;
        }
        out.push(iterations(r));
        out.push(steps(r));
    }
    for r in records.iter().filter(|r| r.kind == AnalyticsKind::Pagerank) {
        if let Some(f) = memory(r, paper) {
            out.push(f);
        }
    }
    for r in records.iter().filter(|r| r.kind == AnalyticsKind::Lookup) {
        if !r.lookups.is_empty() {
            out.push(lookups(r));
        }
        if let Some(f) = setget(r) {
            out.push(f);
        }
    }
    out
}

fn iterations(r: &AnalyticsRecord) -> Figure {
    let series = r
        .pagerank
        .iter()
        .map(|p| Series {
            name: p.implementation.clone(),
            colour_key: p.system().to_string(),
            dashed: p.implementation.ends_with("-lua"),
            points: p
                .map_s
                .iter()
                .zip(&p.reduce_s)
                .enumerate()
                .map(|(i, (m, red))| point(i as f64 + 1.0, m + red))
                .collect(),
        })
        .collect();
    Figure {
        id: format!("pagerank-iterations{}", suffix(r)),
        title: format!("PageRank: time of each iteration, {}", r.graph.description),
        caption: format!(
            "Map and reduce of each iteration, per implementation (dashed: Lua inside the server), log scale; {} nodes, {} edges, damping {}.",
            crate::format::count(u64::from(r.graph.nodes)),
            crate::format::count(r.graph.edges),
            r.settings.damping.unwrap_or(0.85)
        ),
        x: axis("Iteration", false, Ticks::Count),
        panels: vec![Panel {
            y: axis("Time (s)", true, Ticks::Count),
            series,
        }],
        kind: FigureKind::Pagerank,
        bars: false,
        categories: Vec::new(),
    }
}

fn steps(r: &AnalyticsRecord) -> Figure {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let step =
        |name: &str, pick: fn(&kvbench_model::analytics::PagerankResult) -> &Vec<f64>| Series {
            name: format!("{name} (mean per iteration)"),
            colour_key: name.to_string(),
            dashed: false,
            points: r
                .pagerank
                .iter()
                .enumerate()
                .map(|(i, p)| point(i as f64, mean(pick(p))))
                .filter(|p| p.y > 0.0)
                .collect(),
        };
    Figure {
        id: format!("pagerank-steps{}", suffix(r)),
        title: format!("PageRank: map and reduce per iteration, {}", r.graph.description),
        caption: "Mean time of one map and one reduce step per implementation, log scale (the reference's whole iteration counts as its map; Spark's steps are its contribution and reduceByKey stages).".into(),
        x: axis("Implementation", false, Ticks::Category),
        panels: vec![Panel {
            y: axis("Time (s)", true, Ticks::Count),
            series: vec![step("map", |p| &p.map_s), step("reduce", |p| &p.reduce_s)],
        }],
        kind: FigureKind::Pagerank,
        bars: true,
        categories: r.pagerank.iter().map(|p| p.implementation.clone()).collect(),
    }
}

/// Memory per system (the first implementation of each), in MB as the
/// paper gives them, with the paper's figure beside where it has one.
fn memory(r: &AnalyticsRecord, paper: Option<&Paper>) -> Option<Figure> {
    let mut systems: Vec<(String, f64)> = Vec::new();
    for p in &r.pagerank {
        let name = if p.implementation == "reference" {
            "reference (arrays)"
        } else {
            p.system()
        };
        if let Some(b) = p.memory_bytes {
            if !systems.iter().any(|(s, _)| s == name) {
                systems.push((name.to_string(), b as f64 / 1e6));
            }
        }
    }
    if systems.is_empty() {
        return None;
    }
    // The paper's figures go beside a run of its own graph only.
    let paper = paper.filter(|p| p.measures(&r.graph));
    let k = paper
        .and_then(|p| p.graph.as_ref())
        .map_or(1.0, |g| f64::from(r.graph.nodes) / f64::from(g.nodes));
    let theirs = |system: &str| {
        paper?
            .findings
            .iter()
            .find(|f| f.kind == Kind::GraphMemory && f.system == system)
            .and_then(|f| f.paper_mb)
            .map(|mb| mb * k)
    };
    let ours = Series {
        name: "kvbench, this machine".into(),
        colour_key: "kvbench".into(),
        dashed: false,
        points: systems
            .iter()
            .enumerate()
            .map(|(i, (_, mb))| point(i as f64, *mb))
            .collect(),
    };
    let reported: Vec<Point> = systems
        .iter()
        .enumerate()
        .filter_map(|(i, (s, _))| theirs(s).map(|mb| point(i as f64, mb)))
        .collect();
    let mut series = vec![ours];
    let mut caption = "The loaded graph's memory in each system (the server's own figure after the load less before it; Spark: its cached RDDs), MB of 10^6 bytes, log scale.".to_string();
    if !reported.is_empty() {
        let graph = paper
            .and_then(|p| p.graph.as_ref())
            .map_or("its graph".to_string(), |g| g.name.clone());
        series.push(Series {
            name: "the paper (2014)".into(),
            colour_key: "paper".into(),
            dashed: false,
            points: reported,
        });
        caption.push_str(&if (k - 1.0).abs() < 1e-9 {
            format!(" Beside it the paper's figures for the {graph}.")
        } else {
            format!(
                " Beside it the paper's figures for the {graph}, scaled to this graph's nodes (x{k:.3})."
            )
        });
    }
    Some(Figure {
        id: format!("graph-memory{}", suffix(r)),
        title: format!("Memory of the loaded graph, {}", r.graph.description),
        caption,
        x: axis("System", false, Ticks::Category),
        panels: vec![Panel {
            y: axis("Memory (MB)", true, Ticks::Count),
            series,
        }],
        kind: FigureKind::GraphMemory,
        bars: true,
        categories: systems.into_iter().map(|(s, _)| s).collect(),
    })
}

fn lookups(r: &AnalyticsRecord) -> Figure {
    let series = r
        .lookups
        .iter()
        .map(|l| Series {
            name: l.implementation.clone(),
            colour_key: l.implementation.clone(),
            dashed: false,
            points: vec![
                point(0.0, l.p50_us),
                point(1.0, l.p99_us),
                point(2.0, l.max_us),
            ],
        })
        .collect();
    Figure {
        id: format!("lookup-latency{}", suffix(r)),
        title: format!("Random gets: one key at a time, {}", r.graph.description),
        caption: format!(
            "Latency of {} single-key lookups per system, each waited for before the next (Spark: a lookup job on a cached RDD), microseconds, log scale.",
            r.settings.count.unwrap_or(0)
        ),
        x: axis("Percentile", false, Ticks::Category),
        panels: vec![Panel {
            y: axis("Latency (us)", true, Ticks::Count),
            series,
        }],
        kind: FigureKind::Lookup,
        bars: true,
        categories: vec!["p50".into(), "p99".into(), "max".into()],
    }
}

/// Per store of a set/get window: CPU microseconds per operation in the
/// server's own code, in the kernel on its behalf, and in kvbench. Per
/// operation rather than per second, so stores that served different rates
/// compare; `None` when no store ran one.
fn setget(r: &AnalyticsRecord) -> Option<Figure> {
    let series: Vec<Series> = r
        .lookups
        .iter()
        .filter_map(|l| {
            let sg = l.setget.as_ref()?;
            let ops = sg.ops() as f64;
            if ops == 0.0 {
                return None;
            }
            let per_op = |s: f64| s * 1e6 / ops;
            Some(Series {
                name: l.implementation.clone(),
                colour_key: l.implementation.clone(),
                dashed: false,
                points: vec![
                    point(0.0, per_op(sg.server_user_s?)),
                    point(1.0, per_op(sg.server_system_s?)),
                    point(2.0, per_op(sg.client_cpu_s)),
                ],
            })
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(Figure {
        id: format!("setget-cpu{}", suffix(r)),
        title: format!("Set/get: where the CPU goes, {}", r.graph.description),
        caption: format!(
            "CPU time per operation over each store's {} s set/get window (the paper's drivers, half gets and half sets of one 8-byte rank): the server's user time (its own code), its system time (the kernel, mostly the TCP stack) and kvbench's drivers, microseconds.",
            r.settings.setget_s.unwrap_or(0.0)
        ),
        x: axis("Where the time goes", false, Ticks::Category),
        panels: vec![Panel {
            y: axis("CPU per operation (us)", false, Ticks::Count),
            series,
        }],
        kind: FigureKind::Cpu,
        bars: true,
        categories: vec![
            "server, own code".into(),
            "server, kernel".into(),
            "kvbench".into(),
        ],
    })
}
