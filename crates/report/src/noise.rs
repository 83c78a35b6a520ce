//! Runs that met an unusual machine, by the noise canary (kvbench_model::
//! Canary), and the "Machine noise" figure.
//!
//! A run is unusual when one of its canary figures lies far from the
//! median: more than three scaled median absolute deviations away *and*
//! more than a floor (half the median for the loopback round trip and the
//! involuntary switches, 5 points for steal and iowait), so a quiet
//! machine's tiny spread does not turn every wobble into a mark. The
//! machine-wide figures (round trip, steal, iowait) are set against every
//! run in the report; the servers' context switches depend on the cell
//! (8 clients on one CPU switch far more than 1), so they are set against
//! the other runs of the same cell (at least 4).
//! Verdicts show what they would be without the blocks holding such runs
//! (takeaways); nothing is dropped from any figure or table.

use crate::cells::Source;
use crate::figure::{Axis, Figure, FigureKind, Panel, Point, Series, Ticks};
use kvbench_model::Canary;

/// One canary figure: its name, how to read it, and its floor.
struct Gauge {
    name: &'static str,
    unit: &'static str,
    value: fn(&Canary) -> Option<f64>,
    /// The smallest distance from the median that can be unusual: a share
    /// of the median (relative) or an absolute amount.
    floor: Floor,
    /// Judged among the runs of the same cell, not of the whole report.
    per_cell: bool,
}

enum Floor {
    Relative(f64),
    Absolute(f64),
}

const GAUGES: [Gauge; 4] = [
    Gauge {
        name: "base RTT",
        unit: "us",
        value: |c| c.base_rtt_us,
        floor: Floor::Relative(0.5),
        per_cell: false,
    },
    Gauge {
        name: "steal",
        unit: "%",
        value: |c| Some(c.steal * 100.0),
        floor: Floor::Absolute(5.0),
        per_cell: false,
    },
    Gauge {
        name: "iowait",
        unit: "%",
        value: |c| Some(c.iowait * 100.0),
        floor: Floor::Absolute(5.0),
        per_cell: false,
    },
    Gauge {
        name: "server involuntary switches",
        unit: "/s",
        value: |c| c.server_involuntary_per_s,
        floor: Floor::Relative(0.5),
        per_cell: true,
    },
];

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// For each source (same order), why its run met an unusual machine (the
/// first gauge that was far from its median), or `None`. Needs at least 4
/// runs with a canary to judge anything.
pub fn unusual(sources: &[Source]) -> Vec<Option<String>> {
    by_gauge(sources)
        .into_iter()
        .map(|gauges| gauges.into_iter().flatten().next())
        .collect()
}

/// For each source, for each of [`GAUGES`], why that gauge was far from
/// its median in the run, or `None`: the figure marks a run in the panels
/// of the gauges that were unusual, not in every panel.
fn by_gauge(sources: &[Source]) -> Vec<[Option<String>; GAUGES.len()]> {
    let canaries: Vec<Option<&Canary>> = sources
        .iter()
        .map(|s| s.record.cpu.as_ref().and_then(|c| c.canary.as_ref()))
        .collect();
    let mut out: Vec<[Option<String>; GAUGES.len()]> = vec![Default::default(); sources.len()];
    let everyone: Vec<usize> = (0..sources.len()).collect();
    let mut by_cell: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (i, s) in sources.iter().enumerate() {
        let key = s
            .cell_key
            .clone()
            .unwrap_or_else(|| crate::cells::config_key(&s.record));
        by_cell.entry(key).or_default().push(i);
    }
    for (k, g) in GAUGES.iter().enumerate() {
        let groups: Vec<&Vec<usize>> = if g.per_cell {
            by_cell.values().collect()
        } else {
            vec![&everyone]
        };
        for group in groups {
            for (i, why) in judge(g, group, &canaries) {
                out[i][k] = Some(why);
            }
        }
    }
    out
}

/// The runs of `group` whose gauge `g` is far from the group's median,
/// with why.
fn judge(g: &Gauge, group: &[usize], canaries: &[Option<&Canary>]) -> Vec<(usize, String)> {
    let mut values: Vec<f64> = group
        .iter()
        .filter_map(|&i| canaries[i].and_then(|c| (g.value)(c)))
        .collect();
    if values.len() < 4 {
        return Vec::new();
    }
    let Some(m) = median(&mut values) else {
        return Vec::new();
    };
    let mut dev: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let mad = median(&mut dev).unwrap_or(0.0) * 1.4826;
    let floor = match g.floor {
        Floor::Relative(r) => r * m.abs(),
        Floor::Absolute(a) => a,
    };
    let limit = (3.0 * mad).max(floor);
    group
        .iter()
        .filter_map(|&i| {
            let v = canaries[i].and_then(|c| (g.value)(c))?;
            ((v - m).abs() > limit).then(|| {
                let cell = if g.per_cell { " in its cell" } else { "" };
                let (v, m, u) = (short(v), short(m), g.unit);
                (i, format!("{} {v} {u} (median {m} {u}{cell})", g.name))
            })
        })
        .collect()
}

fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The "Machine noise" figure: each canary figure per run, in the order
/// the runs were made, unusual runs marked; `None` without canaries.
pub fn figure(sources: &[Source]) -> Option<Figure> {
    let flags = by_gauge(sources);
    let mut order: Vec<usize> = (0..sources.len())
        .filter(|&i| {
            sources[i]
                .record
                .cpu
                .as_ref()
                .is_some_and(|c| c.canary.is_some())
        })
        .collect();
    if order.len() < 2 {
        return None;
    }
    order.sort_by_key(|&i| sources[i].record.id.unwrap_or(i as i64));
    let panels: Vec<Panel> = GAUGES
        .iter()
        .enumerate()
        .filter_map(|(gi, g)| {
            let points: Vec<Point> = order
                .iter()
                .enumerate()
                .filter_map(|(k, &i)| {
                    let c = sources[i].record.cpu.as_ref()?.canary.as_ref()?;
                    Some(Point {
                        x: (k + 1) as f64,
                        y: (g.value)(c)?,
                        interval: None,
                        flags: flags[i][gi]
                            .as_ref()
                            .map(|_| vec!["unusual".to_string()])
                            .unwrap_or_default(),
                    })
                })
                .collect();
            (!points.is_empty()).then(|| Panel {
                y: Axis {
                    label: format!("{} ({})", g.name, g.unit),
                    log: false,
                    ticks: Ticks::Count,
                },
                series: vec![Series {
                    name: g.name.to_string(),
                    colour_key: "machine".into(),
                    dashed: false,
                    points,
                }],
            })
        })
        .collect();
    Some(Figure {
        id: "machine-noise".into(),
        title: "Machine noise: the canary of each run, in the order they ran".into(),
        caption: "Loopback round trip before each cell, steal and iowait during its window, the servers' involuntary context switches per second; hollow markers: runs far from the median (docs/metrics.md, \"Machine noise\").".into(),
        x: Axis {
            label: "Run (in order)".into(),
            log: false,
            ticks: Ticks::Count,
        },
        panels,
        kind: FigureKind::Noise,
        bars: false,
        categories: Vec::new(),
    })
}
