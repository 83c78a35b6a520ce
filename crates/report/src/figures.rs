//! Which figures a set of cells supports, built as data (`figure`). Each
//! kind is drawn only when the data for it exists: throughput and latency
//! against clients need closed-loop cells, latency against throughput needs
//! open-loop ones, memory needs probes, and so on.

use crate::cells::{main_op, op_kinds, Cell, Flag, Source};
use crate::figure::{Axis, Figure, FigureKind, Panel, Point, Series, Ticks};
use crate::format::{capital, slug};
use kvbench_model::MarkKind;
use std::collections::BTreeMap;

/// Time series drawn at most, so a report over hundreds of runs stays
/// readable and quick to write.
const MAX_TIME_SERIES: usize = 12;

/// Cells that belong in one figure: same workload, topology, shape,
/// pipeline and loop.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct GroupKey {
    workload: String,
    topology: String,
    shape: String,
    pipeline: u32,
    open_loop: bool,
}

fn key(c: &Cell) -> GroupKey {
    GroupKey {
        workload: c.workload.clone(),
        topology: c.place.clone(),
        shape: c.shape.clone(),
        pipeline: c.pipeline,
        open_loop: c.rate.is_some(),
    }
}

/// What varies between groups, so titles say only that.
struct Naming {
    topology: bool,
    shape: bool,
    pipeline: bool,
}

impl Naming {
    fn of(cells: &[Cell]) -> Naming {
        let varies = |f: &dyn Fn(&Cell) -> String| {
            let mut v: Vec<String> = cells.iter().map(f).collect();
            v.sort();
            v.dedup();
            v.len() > 1
        };
        Naming {
            topology: varies(&|c| c.place.clone()),
            shape: varies(&|c| c.shape.clone()),
            pipeline: varies(&|c| c.pipeline.to_string()),
        }
    }

    fn title(&self, k: &GroupKey, topology: bool) -> String {
        let mut parts = vec![k.workload.clone()];
        if self.topology && topology {
            parts.push(k.topology.clone());
        }
        if self.pipeline {
            parts.push(format!("pipeline {}", k.pipeline));
        }
        if self.shape {
            parts.push(k.shape.clone());
        }
        parts.join(", ")
    }
}

/// Every figure the cells support, in the report's order.
pub fn build(cells: &[Cell], sources: &[Source]) -> Vec<Figure> {
    let naming = Naming::of(cells);
    let mut groups: BTreeMap<GroupKey, Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        groups.entry(key(c)).or_default().push(c);
    }
    let mut out = Vec::new();
    for (k, g) in &groups {
        let name = naming.title(k, true);
        if k.open_loop {
            out.extend(latency_throughput(k, &name, g));
            continue;
        }
        out.push(throughput(k, &name, g));
        out.extend(latency(k, &name, g));
        out.extend(spectra(k, &name, g));
        out.extend(cpu(k, &name, g));
    }
    out.extend(topologies(&naming, cells));
    out.extend(memory(cells));
    out.extend(crate::caches::figures(sources));
    out.extend(crate::split::figure(sources));
    out.extend(time_series(&groups, &naming, sources));
    out.extend(crate::noise::figure(sources));
    // Ids are unique: a figure repeated for a second group gets a suffix.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for f in &mut out {
        let n = seen.entry(f.id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            f.id = format!("{}-{}", f.id, n);
        }
    }
    out.sort_by_key(|f| f.kind);
    out
}

/// Client counts are categories, evenly spaced and labelled with the
/// counts measured (as the papers draw them), whatever their spacing.
fn clients_axis() -> Axis {
    Axis {
        label: "Clients (connections)".into(),
        log: false,
        ticks: Ticks::Category,
    }
}

/// The distinct client counts of `cells`, ascending: the categories.
fn client_counts(cells: &[&Cell]) -> Vec<u32> {
    let mut v: Vec<u32> = cells.iter().map(|c| c.clients).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Where `clients` sits on the categorical axis of `counts`.
fn at(counts: &[u32], clients: u32) -> f64 {
    counts.iter().position(|&c| c == clients).unwrap_or(0) as f64
}

fn labels(counts: &[u32]) -> Vec<String> {
    counts.iter().map(|c| c.to_string()).collect()
}

fn axis(label: &str, log: bool) -> Axis {
    Axis {
        label: label.into(),
        log,
        ticks: Ticks::Count,
    }
}

/// Cells by series label, in first-seen order, each sorted by clients.
fn by_label<'a>(cells: &[&'a Cell]) -> Vec<(String, String, Vec<&'a Cell>)> {
    let mut out: Vec<(String, String, Vec<&Cell>)> = Vec::new();
    for c in cells {
        match out.iter_mut().find(|(l, _, _)| *l == c.series) {
            Some((_, _, v)) => v.push(c),
            None => out.push((c.series.clone(), c.system.clone(), vec![c])),
        }
    }
    for (_, _, v) in &mut out {
        v.sort_by(|a, b| {
            a.clients
                .cmp(&b.clients)
                .then(a.rate.unwrap_or(0.0).total_cmp(&b.rate.unwrap_or(0.0)))
        });
    }
    out
}

fn throughput(k: &GroupKey, name: &str, cells: &[&Cell]) -> Figure {
    let counts = client_counts(cells);
    // A combined run's groups are drawn apart (their sum would mean
    // nothing): the main group solid, the second dashed.
    let combined = cells.iter().find(|c| c.companion.is_some());
    let companion = combined.and_then(|c| c.companion.clone());
    let groups: &[Option<bool>] = if companion.is_some() {
        &[Some(false), Some(true)]
    } else {
        &[None]
    };
    let mut series = Vec::new();
    for (label, system, v) in by_label(cells) {
        for &group in groups {
            let name = match (group, &companion) {
                (Some(true), Some(w)) => format!("{label}: {} (second group)", w.workload),
                (Some(false), Some(_)) => {
                    let main = combined.map_or(k.workload.as_str(), |c| c.main_workload());
                    format!("{label}: {main}")
                }
                _ => label.clone(),
            };
            series.push(Series {
                name,
                colour_key: system.clone(),
                dashed: group == Some(true),
                points: v
                    .iter()
                    .map(|c| {
                        let (y, interval) = match group {
                            None => (c.throughput.mean, c.throughput.interval()),
                            Some(with) => {
                                let ops = c.ops.iter().filter(|o| o.with == with);
                                (ops.map(|o| o.throughput.mean).sum(), None)
                            }
                        };
                        Point {
                            x: at(&counts, c.clients),
                            y,
                            interval,
                            flags: c.flag_names(),
                        }
                    })
                    .collect(),
            });
        }
    }
    let n = cells.iter().map(|c| c.throughput.n).max().unwrap_or(1);
    let caption = match &companion {
        Some(w) => format!(
            "Clients of the main group; the second group ({}) ran beside it at {} x pipeline {}, dashed. Each group's own throughput, mean of {n} run{}.",
            w.workload,
            crate::takeaways::clients(w.clients),
            w.pipeline,
            if n == 1 { "" } else { "s" }
        ),
        None => caption_iterations(n),
    };
    Figure {
        id: slug(&["throughput", &k.workload, &k.topology]),
        title: format!("Throughput against clients: {name}"),
        caption,
        x: clients_axis(),
        panels: vec![Panel {
            y: axis("Throughput (ops/s)", companion.is_some()),
            series,
        }],
        kind: FigureKind::Throughput,
        bars: false,
        categories: labels(&counts),
    }
}

fn caption_iterations(n: usize) -> String {
    if n > 1 {
        format!("Mean of {n} iterations; bars are 95% confidence intervals (Student's t). Hollow markers carry flags, listed below.")
    } else {
        "One run per point (no interval). Hollow markers carry flags, listed below.".into()
    }
}

fn latency(k: &GroupKey, name: &str, cells: &[&Cell]) -> Vec<Figure> {
    let counts = client_counts(cells);
    let mut out = Vec::new();
    for op in op_kinds(cells.iter().flat_map(|c| c.ops.iter().map(|o| o.op))) {
        let mut series = Vec::new();
        for (label, system, v) in by_label(cells) {
            for (pct, dashed) in [("p50", false), ("p99", true)] {
                let points: Vec<Point> = v
                    .iter()
                    .filter_map(|c| {
                        let o = c.ops.iter().find(|o| o.op == op)?;
                        let (y, s) = if dashed {
                            (o.merged.p99_us, &o.p99_us)
                        } else {
                            (o.merged.p50_us, &o.p50_us)
                        };
                        Some(Point {
                            x: at(&counts, c.clients),
                            y,
                            interval: s.interval(),
                            flags: c.flag_names(),
                        })
                    })
                    .collect();
                if !points.is_empty() {
                    series.push(Series {
                        name: format!("{label} {pct}"),
                        colour_key: system.clone(),
                        dashed,
                        points,
                    });
                }
            }
        }
        out.push(Figure {
            id: slug(&["latency", op.as_str(), &k.workload, &k.topology]),
            title: format!("{} latency against clients: {name}", capital(op.as_str())),
            caption: "p50 solid, p99 dashed: percentiles of every request of every iteration together; bars are the 95% interval of the iterations' own percentiles.".into(),
            x: clients_axis(),
            panels: vec![Panel {
                y: axis("Latency (us)", true),
                series,
            }],
            kind: FigureKind::Latency,
            bars: false,
            categories: labels(&counts),
        });
    }
    out
}

fn spectra(k: &GroupKey, name: &str, cells: &[&Cell]) -> Vec<Figure> {
    let Some(op) = main_op(cells) else {
        return Vec::new();
    };
    let mut counts: Vec<u32> = cells.iter().map(|c| c.clients).collect();
    counts.sort_unstable();
    counts.dedup();
    // The fewest and the most clients: the two ends of the sweep.
    let ends: Vec<u32> = match (counts.first(), counts.last()) {
        (Some(&a), Some(&b)) if a != b => vec![a, b],
        (Some(&a), _) => vec![a],
        _ => Vec::new(),
    };
    ends.into_iter()
        .map(|clients| {
            let series = by_label(cells)
                .into_iter()
                .filter_map(|(label, system, v)| {
                    let c = v.iter().find(|c| c.clients == clients)?;
                    let o = c.ops.iter().find(|o| o.op == op)?;
                    Some(Series {
                        name: label,
                        colour_key: system,
                        dashed: false,
                        points: o
                            .spectrum
                            .iter()
                            .map(|&(nines, _, us)| Point {
                                x: nines,
                                y: us,
                                interval: None,
                                flags: Vec::new(),
                            })
                            .collect(),
                    })
                })
                .collect();
            Figure {
                id: slug(&["spectrum", &k.workload, &k.topology, &format!("c{clients}")]),
                title: format!(
                    "{} latency at every percentile: {name}, {clients} clients",
                    capital(op.as_str())
                ),
                caption: "Every request of every iteration together; the x axis gives each nine the same room, so the tail is as visible as the median. A line ends where its request count can no longer resolve the percentile.".into(),
                x: Axis {
                    label: "Percentile (%)".into(),
                    log: false,
                    ticks: Ticks::Nines,
                },
                panels: vec![Panel {
                    y: axis("Latency (us)", true),
                    series,
                }],
                kind: FigureKind::Spectrum,
                bars: false,
                categories: Vec::new(),
            }
        })
        .collect()
}

fn latency_throughput(k: &GroupKey, name: &str, cells: &[&Cell]) -> Vec<Figure> {
    let Some(op) = main_op(cells) else {
        return Vec::new();
    };
    let mut series = Vec::new();
    for (label, system, mut v) in by_label(cells) {
        v.sort_by(|a, b| a.throughput.mean.total_cmp(&b.throughput.mean));
        for (pct, dashed) in [("p50", false), ("p99", true)] {
            series.push(Series {
                name: format!("{label} {pct}"),
                colour_key: system.clone(),
                dashed,
                points: v
                    .iter()
                    .filter_map(|c| {
                        let o = c.ops.iter().find(|o| o.op == op)?;
                        Some(Point {
                            x: c.throughput.mean,
                            y: if dashed {
                                o.merged.p99_us
                            } else {
                                o.merged.p50_us
                            },
                            interval: None,
                            flags: c.flag_names(),
                        })
                    })
                    .collect(),
            });
        }
    }
    vec![Figure {
        id: slug(&["latency-throughput", &k.workload, &k.topology]),
        title: format!("{} latency against achieved throughput: {name}", capital(op.as_str())),
        caption: "Open loop: one point per offered rate (rate sweeps and findmax probes), at the throughput achieved; latency from each request's intended send. p50 solid, p99 dashed; hollow markers are overloaded or otherwise flagged.".into(),
        x: axis("Achieved throughput (ops/s)", false),
        panels: vec![Panel {
            y: axis("Latency (us)", true),
            series,
        }],
        kind: FigureKind::LatencyThroughput,
        bars: false,
        categories: Vec::new(),
    }]
}

fn cpu(k: &GroupKey, name: &str, cells: &[&Cell]) -> Vec<Figure> {
    let counts = client_counts(cells);
    let mut series = Vec::new();
    for (label, system, v) in by_label(cells) {
        let server: Vec<Point> = v
            .iter()
            .filter_map(|c| {
                let s = c.server_cpu_us?;
                Some(Point {
                    x: at(&counts, c.clients),
                    y: s.mean,
                    interval: s.interval(),
                    flags: Vec::new(),
                })
            })
            .collect();
        let client: Vec<Point> = v
            .iter()
            .filter_map(|c| {
                let s = c.client_cpu_us?;
                Some(Point {
                    x: at(&counts, c.clients),
                    y: s.mean,
                    interval: s.interval(),
                    flags: c
                        .flags
                        .iter()
                        .filter(|f| **f == Flag::Mark(MarkKind::ClientBound))
                        .map(|f| f.name().to_string())
                        .collect(),
                })
            })
            .collect();
        if !server.is_empty() {
            series.push(Series {
                name: format!("{label} server"),
                colour_key: system.clone(),
                dashed: false,
                points: server,
            });
        }
        if !client.is_empty() {
            series.push(Series {
                name: format!("{label} kvbench"),
                colour_key: system.clone(),
                dashed: true,
                points: client,
            });
        }
    }
    if series.is_empty() {
        return Vec::new();
    }
    vec![Figure {
        id: slug(&["cpu", &k.workload, &k.topology]),
        title: format!("CPU time per operation: {name}"),
        caption: "Server CPU (solid, local servers only) and kvbench's own (dashed) per completed operation, in microseconds; a hollow marker is a run where a kvbench worker was busy enough to be the limit (client-bound).".into(),
        x: clients_axis(),
        panels: vec![Panel {
            y: axis("CPU per operation (us)", false),
            series,
        }],
        kind: FigureKind::Cpu,
        bars: false,
        categories: labels(&counts),
    }]
}

/// Single node beside cluster: throughput against clients, one line per
/// system and topology, for workloads measured on more than one topology.
fn topologies(naming: &Naming, cells: &[Cell]) -> Vec<Figure> {
    let mut by: BTreeMap<(String, String, u32), Vec<&Cell>> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.rate.is_none()) {
        by.entry((c.workload.clone(), c.shape.clone(), c.pipeline))
            .or_default()
            .push(c);
    }
    let mut out = Vec::new();
    for ((workload, shape, pipeline), g) in by {
        let mut tops: Vec<&str> = g.iter().map(|c| c.topology.as_str()).collect();
        tops.sort_unstable();
        tops.dedup();
        if tops.len() < 2 {
            continue;
        }
        let counts = client_counts(&g);
        let mut series = Vec::new();
        let mut servers: Vec<(&str, &str)> = Vec::new();
        for c in &g {
            if !servers.iter().any(|(l, _)| *l == c.label) {
                servers.push((c.label.as_str(), c.system.as_str()));
            }
        }
        for (label, system) in servers {
            let v: Vec<&Cell> = g.iter().copied().filter(|c| c.label == label).collect();
            for t in &tops {
                let points: Vec<Point> = v
                    .iter()
                    .filter(|c| c.topology == *t)
                    .map(|c| Point {
                        x: at(&counts, c.clients),
                        y: c.throughput.mean,
                        interval: c.throughput.interval(),
                        flags: c.flag_names(),
                    })
                    .collect();
                if !points.is_empty() {
                    series.push(Series {
                        name: format!("{label}, {t}"),
                        colour_key: system.to_string(),
                        dashed: *t != "single",
                        points,
                    });
                }
            }
        }
        let k = GroupKey {
            workload: workload.clone(),
            topology: String::new(),
            shape,
            pipeline,
            open_loop: false,
        };
        out.push(Figure {
            id: slug(&["topologies", &workload]),
            title: format!("Single node and cluster: {}", naming.title(&k, false)),
            caption: "Throughput against clients; solid lines one server, dashed lines the multi-node topologies.".into(),
            x: clients_axis(),
            panels: vec![Panel {
                y: axis("Throughput (ops/s)", false),
                series,
            }],
            kind: FigureKind::Topologies,
            bars: false,
            categories: labels(&counts),
        });
    }
    out
}

/// The probe stages a memory figure shows, with their names.
pub const MEMORY_STAGES: [(&str, &str); 3] = [
    ("before_load", "before load"),
    ("after_load", "after load"),
    ("after_run", "after run"),
];

/// Server memory per stage, one bar per system, per topology and dataset
/// shape (the first cell of each system that probed the load stages).
fn memory(cells: &[Cell]) -> Vec<Figure> {
    let mut by: BTreeMap<(String, String), Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        if c.memory.at("after_load").is_some() {
            by.entry((c.place.clone(), c.shape.clone()))
                .or_default()
                .push(c);
        }
    }
    let mut out = Vec::new();
    for ((topology, shape), g) in by {
        let mut series = Vec::new();
        let mut overheads = Vec::new();
        for (label, system, v) in by_label(&g) {
            let c = v[0];
            let points = MEMORY_STAGES
                .iter()
                .enumerate()
                .filter_map(|(i, (stage, _))| {
                    Some(Point {
                        x: i as f64,
                        y: c.memory.at(stage)? / (1024.0 * 1024.0),
                        interval: None,
                        flags: Vec::new(),
                    })
                })
                .collect();
            if let Some(o) = crate::takeaways::overhead(c) {
                overheads.push(format!("{label} {:+.1}%", o * 100.0));
            }
            series.push(Series {
                name: label,
                colour_key: system,
                dashed: false,
                points,
            });
        }
        let raw = g[0].dataset_bytes as f64 / (1024.0 * 1024.0);
        out.push(Figure {
            id: slug(&["memory", &topology, &shape]),
            title: format!("Server memory: {topology}, {shape}"),
            caption: format!(
                "Resident memory of the server processes (summed over nodes; what the server reports when it is remote), in MiB. Raw dataset {raw:.1} MiB; what the loaded data costs beyond it: {}.",
                if overheads.is_empty() { "not known".to_string() } else { overheads.join(", ") }
            ),
            x: Axis {
                label: "Probe stage".into(),
                log: false,
                ticks: Ticks::Category,
            },
            panels: vec![Panel {
                y: axis("Memory (MiB)", false),
                series,
            }],
            kind: FigureKind::Memory,
            bars: true,
            categories: MEMORY_STAGES.iter().map(|(_, n)| n.to_string()).collect(),
        });
    }
    out
}

/// Per-second throughput and p99 of the first run of each system at the
/// most clients of each group, and of every run marked unstable or with a
/// stalled second; the outage of every run with one (up to
/// [`MAX_TIME_SERIES`] figures in all).
fn time_series(
    groups: &BTreeMap<GroupKey, Vec<&Cell>>,
    naming: &Naming,
    sources: &[Source],
) -> Vec<Figure> {
    let mut out = Vec::new();
    for (k, g) in groups {
        if out.len() >= MAX_TIME_SERIES {
            break;
        }
        let Some(max) = g.iter().map(|c| c.clients).max() else {
            continue;
        };
        let runs: Vec<(&Cell, &Source)> = by_label(g)
            .into_iter()
            .filter_map(|(_, _, v)| {
                let c = *v.iter().rev().find(|c| c.clients == max)?;
                Some((c, &sources[*c.runs.first()?]))
            })
            .filter(|(_, s)| long_enough(s))
            .collect();
        if runs.is_empty() {
            continue;
        }
        let title = format!(
            "Each second of the run: {}, {max} clients",
            naming.title(k, true)
        );
        out.push(series_figure(
            &slug(&["seconds", &k.workload, &k.topology]),
            &title,
            &runs,
        ));
    }
    for s in sources {
        if out.len() >= MAX_TIME_SERIES {
            break;
        }
        let outage = s.record.run.as_ref().and_then(|r| r.outage.as_ref());
        if let (Some(id), Some(o)) = (s.record.id, outage) {
            out.push(outage_figure(id, s, o));
            continue;
        }
        let unstable = s
            .record
            .marks
            .iter()
            .any(|m| m.kind() == MarkKind::Unstable);
        if !unstable || !long_enough(s) {
            continue;
        }
        let Some(id) = s.record.id else { continue };
        let label = crate::format::server_label(s.record.config.system, &s.record.environment);
        let cell = Cell {
            system: s.record.config.system.as_str().into(),
            series: label.clone(),
            label,
            ..placeholder()
        };
        out.push(series_figure(
            &format!("seconds-run-{id}"),
            &format!(
                "Each second of run {id} (marked unstable): {}, {} clients",
                s.record.config.workload, s.record.config.clients
            ),
            &[(&cell, s)],
        ));
    }
    out
}

/// A run whose requests failed without a reply (a restart, a failover, a
/// dropped connection): its throughput and failures in each 100-ms step,
/// the first failure marked, so the outage is seen, not only summed up
/// (docs/metrics.md, "Reconnects and the outage").
fn outage_figure(id: i64, s: &Source, o: &kvbench_model::Outage) -> Figure {
    let label = crate::format::server_label(s.record.config.system, &s.record.environment);
    let system = s.record.config.system.as_str().to_string();
    let step_s = 0.1;
    let point = |i: usize, y: f64| Point {
        x: i as f64 * step_s,
        y,
        interval: None,
        flags: Vec::new(),
    };
    let rates: Vec<Point> = (o.steps.iter().enumerate())
        .map(|(i, st)| point(i, st[0] as f64 / step_s))
        .collect();
    let top = rates.iter().map(|p| p.y).fold(0.0, f64::max);
    let marker = |y: f64| Point {
        x: o.first_failure_s,
        y,
        interval: None,
        flags: Vec::new(),
    };
    let first_failure = Series {
        name: "first failure".into(),
        colour_key: "first failure".into(),
        dashed: true,
        points: vec![marker(0.0), marker(top)],
    };
    // The faults kvbench caused (`--fault`), each where it happened.
    let faults = (s.record.run.iter().flat_map(|r| &r.faults))
        .filter(|f| f.error.is_none())
        .map(|f| {
            let at = |y: f64| Point {
                x: f.at_s,
                y,
                interval: None,
                flags: Vec::new(),
            };
            Series {
                name: format!("fault {}", f.spec),
                colour_key: "fault".into(),
                dashed: true,
                points: vec![at(0.0), at(top)],
            }
        });
    let failed: Vec<Point> = (o.steps.iter().enumerate())
        .map(|(i, st)| point(i, st[1] as f64))
        .collect();
    let secs = |v: Option<f64>| v.map_or("-".to_string(), crate::format::secs);
    Figure {
        id: format!("outage-run-{id}"),
        title: format!(
            "The outage of run {id}: {label}, {}, {} clients",
            s.record.config.workload, s.record.config.clients
        ),
        caption: format!(
            "Throughput and requests failed without a reply in each 100 ms of the window; dashed lines: the first failure, and each fault kvbench caused (--fault). Unavailable {} s, back to 90% of the rate before after {} s, {} requests failed.",
            secs(o.unavailable_s),
            secs(o.recovery_s),
            o.failed
        ),
        x: axis("Time in the window (s)", false),
        panels: vec![
            Panel {
                y: axis("Throughput (ops/s)", false),
                series: vec![
                    Series {
                        name: format!("{label} (run {id})"),
                        colour_key: system.clone(),
                        dashed: false,
                        points: rates,
                    },
                    first_failure,
                ]
                .into_iter()
                .chain(faults)
                .collect(),
            },
            Panel {
                y: axis("Failed per 100 ms", false),
                series: vec![Series {
                    name: format!("{label} (run {id})"),
                    colour_key: system,
                    dashed: false,
                    points: failed,
                }],
            },
        ],
        kind: FigureKind::TimeSeries,
        bars: false,
        categories: Vec::new(),
    }
}

fn placeholder() -> Cell {
    Cell {
        system: String::new(),
        label: String::new(),
        topology: String::new(),
        place: String::new(),
        series: String::new(),
        workload: String::new(),
        companion: None,
        clients: 0,
        pipeline: 0,
        rate: None,
        shape: String::new(),
        runs: Vec::new(),
        run_ids: Vec::new(),
        samples: Vec::new(),
        throughput: kvbench_stats::Summary {
            n: 0,
            mean: 0.0,
            sd: 0.0,
            ci95: None,
        },
        ops: Vec::new(),
        flags: Vec::new(),
        memory: Default::default(),
        dataset_bytes: 0,
        server_cpu_us: None,
        client_cpu_us: None,
        order: (0, 0),
    }
}

/// Fewest whole seconds worth a time series.
const MIN_SECONDS: f64 = 3.0;

fn long_enough(s: &Source) -> bool {
    s.record
        .run
        .as_ref()
        .is_some_and(|p| p.duration_s + 1e-6 >= MIN_SECONDS)
}

fn series_figure(id: &str, title: &str, runs: &[(&Cell, &Source)]) -> Figure {
    let mut tput = Vec::new();
    let mut p99 = Vec::new();
    for (c, s) in runs {
        let Some(phase) = &s.record.run else { continue };
        let whole = (phase.duration_s + 1e-6).floor() as u32;
        let mut per: BTreeMap<u32, (u64, f64)> = BTreeMap::new();
        for p in &phase.series {
            if p.second >= whole {
                continue;
            }
            let e = per.entry(p.second).or_insert((0, 0.0));
            e.0 += p.completed;
            if p.completed > 0 {
                e.1 = e.1.max(p.p99_us);
            }
        }
        // Seconds with nothing completed are drawn at zero: a stall shows.
        let points = |f: &dyn Fn(u64, f64) -> Option<f64>| -> Vec<Point> {
            (0..whole)
                .filter_map(|sec| {
                    let (n, l) = per.get(&sec).copied().unwrap_or((0, 0.0));
                    Some(Point {
                        x: sec as f64 + 1.0,
                        y: f(n, l)?,
                        interval: None,
                        flags: Vec::new(),
                    })
                })
                .collect()
        };
        let name = match s.record.id {
            Some(id) => format!("{} (run {id})", c.series),
            None => c.series.clone(),
        };
        tput.push(Series {
            name: name.clone(),
            colour_key: c.system.clone(),
            dashed: false,
            points: points(&|n, _| Some(n as f64)),
        });
        p99.push(Series {
            name,
            colour_key: c.system.clone(),
            dashed: false,
            points: points(&|n, l| (n > 0 && l > 0.0).then_some(l)),
        });
    }
    Figure {
        id: id.to_string(),
        title: title.to_string(),
        caption: "Throughput in each whole second of the measured window (a stall drops to zero), and the highest per-operation p99 of that second.".into(),
        x: axis("Second of the window (s)", false),
        panels: vec![
            Panel {
                y: axis("Throughput (ops/s)", false),
                series: tput,
            },
            Panel {
                y: axis("p99 latency (us)", true),
                series: p99,
            },
        ],
        kind: FigureKind::TimeSeries,
        bars: false,
        categories: Vec::new(),
    }
}
