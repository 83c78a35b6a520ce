//! What a figure shows, as plain data: titles, axes with units, series of
//! points with optional interval bars and flags. Built from stored runs by
//! `figures`, drawn by `plot`; nothing here knows how either is done, so a
//! figure can be checked (or exported as JSON) without rendering it.

use serde::Serialize;

/// One figure: one or more panels sharing the x axis, stacked vertically.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// File name stem, unique in a report: `throughput-workload-a-single`.
    pub id: String,
    /// What the figure shows, in words.
    pub title: String,
    /// One line under the title: what was held fixed, what the bars are.
    pub caption: String,
    /// The shared x axis.
    pub x: Axis,
    /// Top to bottom.
    pub panels: Vec<Panel>,
    /// Which kind of figure (the report groups by it).
    pub kind: FigureKind,
    /// Draw bars, one group per x category, instead of lines.
    pub bars: bool,
    /// Names of the x categories when the x axis has [`Ticks::Category`]:
    /// the x values are then the categories' indexes.
    pub categories: Vec<String>,
}

/// The kinds of figure a report draws, in the order it shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureKind {
    /// Throughput against clients.
    Throughput,
    /// Latency percentiles against clients.
    Latency,
    /// One node against a cluster.
    Topologies,
    /// Latency against achieved throughput (rate sweeps, findmax).
    LatencyThroughput,
    /// Latency at every percentile of one cell.
    Spectrum,
    /// Per-second throughput and p99 of runs.
    TimeSeries,
    /// Server memory at each stage.
    Memory,
    /// Hit ratio and read p99 against a memory limit.
    Cache,
    /// Each operation's mean latency: the server's time and the rest.
    LatencySplit,
    /// CPU time per operation, server and client.
    Cpu,
    /// PageRank's time per iteration and per step (analytics).
    Pagerank,
    /// Memory of a loaded graph per system (analytics).
    GraphMemory,
    /// Single-key lookup latency per system (analytics).
    Lookup,
    /// The noise canary of every run.
    Noise,
}

impl FigureKind {
    /// A heading for the figures of this kind.
    pub fn heading(self) -> &'static str {
        match self {
            FigureKind::Throughput => "Throughput",
            FigureKind::Latency => "Latency",
            FigureKind::Topologies => "Single node and cluster",
            FigureKind::LatencyThroughput => "Latency against throughput",
            FigureKind::Spectrum => "Latency percentile spectra",
            FigureKind::TimeSeries => "Per-second time series",
            FigureKind::Memory => "Server memory",
            FigureKind::Cache => "Caches under a memory limit",
            FigureKind::LatencySplit => "Where the latency goes",
            FigureKind::Cpu => "CPU per operation",
            FigureKind::Pagerank => "PageRank time",
            FigureKind::GraphMemory => "Graph memory",
            FigureKind::Lookup => "Random gets",
            FigureKind::Noise => "Machine noise",
        }
    }
}

/// An axis: its label with the unit, and its scale.
#[derive(Debug, Clone, Serialize)]
pub struct Axis {
    /// `Clients`, `Throughput (ops/s)`.
    pub label: String,
    /// Logarithmic (base 10) when the values span more than the linear
    /// scale can show.
    pub log: bool,
    /// How tick labels are written.
    pub ticks: Ticks,
}

impl Axis {
    /// A linear axis of counts labelled `label`.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.into(),
            log: false,
            ticks: Ticks::Count,
        }
    }
}

/// How an axis writes its tick labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ticks {
    /// 1,500 / 25k / 1.2M.
    Count,
    /// The spectrum's x: nines shown as percentiles (90, 99, 99.9, ...).
    Nines,
    /// Category names of a bar figure.
    Category,
}

/// One panel: a y axis and the series drawn against it.
#[derive(Debug, Clone, Serialize)]
pub struct Panel {
    /// The y axis.
    pub y: Axis,
    /// In legend order.
    pub series: Vec<Series>,
}

/// A line (or a set of bars) of one system or variant.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// The legend's text: `redis 7.0.15`, `memcached p99`.
    pub name: String,
    /// What picks the colour, so one system has one colour in every
    /// figure: the system's name (`redis`, `valkey`, `memcached`).
    pub colour_key: String,
    /// Dashed: the second line of the same system (p99 beside p50, a
    /// cluster beside a single node, client CPU beside server CPU).
    pub dashed: bool,
    /// In x order.
    pub points: Vec<Point>,
}

/// One measured value.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// The x value (a category index for bars).
    pub x: f64,
    /// The value; the mean over iterations when there are several.
    pub y: f64,
    /// The 95% interval of the mean, when there are iterations.
    pub interval: Option<(f64, f64)>,
    /// Marks that affect this value (client-bound, overloaded, unstable,
    /// noisy, errors, evictions, redirects): drawn as a hollow marker with
    /// a note, and listed beside the figure.
    pub flags: Vec<String>,
}

impl Figure {
    /// What the flagged points are, one line per series and flag with the
    /// x values it was on: `valkey 9.1.2: client-bound at clients 4, 8`.
    /// The report lists these beside the figure.
    pub fn flag_notes(&self) -> Vec<String> {
        let what = self.x.label.split(" (").next().unwrap_or("").to_lowercase();
        let mut notes: Vec<(String, String, Vec<String>)> = Vec::new();
        for s in self.panels.iter().flat_map(|p| &p.series) {
            for p in &s.points {
                let at = if self.x.ticks == Ticks::Category {
                    self.categories
                        .get(p.x as usize)
                        .cloned()
                        .unwrap_or_default()
                } else {
                    crate::format::axis_value(p.x, self.x.ticks)
                };
                for f in &p.flags {
                    match notes.iter_mut().find(|(n, g, _)| *n == s.name && g == f) {
                        Some((_, _, xs)) => {
                            if !xs.contains(&at) {
                                xs.push(at.clone());
                            }
                        }
                        None => notes.push((s.name.clone(), f.clone(), vec![at.clone()])),
                    }
                }
            }
        }
        notes
            .into_iter()
            .map(|(name, flag, xs)| format!("{name}: {flag} at {what} {}", xs.join(", ")))
            .collect()
    }

    /// Points in all panels.
    pub fn point_count(&self) -> usize {
        self.panels
            .iter()
            .flat_map(|p| &p.series)
            .map(|s| s.points.len())
            .sum()
    }
}
