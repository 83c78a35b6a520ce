//! Where the latency goes (`run.server_time`): for each system and
//! operation kind, the server's mean execution time and the rest of the
//! mean latency (kvbench, kernels, network), as bars; one figure for the
//! report, from the first run of each system, workload and topology.

use crate::cells::Source;
use crate::figure::{Axis, Figure, FigureKind, Panel, Point, Series, Ticks};
use kvbench_model::RunStatus;
use std::collections::BTreeMap;

/// Category (workload and operation) -> each run's (server, rest) means, µs.
type Categories = BTreeMap<String, Vec<(f64, f64)>>;

/// The split figure, when any run has one.
pub fn figure(sources: &[Source]) -> Vec<Figure> {
    // (system label, system) -> its categories.
    let mut by: BTreeMap<(String, String), Categories> = BTreeMap::new();
    let mut floors = Vec::new();
    for s in sources {
        let r = &s.record;
        let (Some(t), RunStatus::Ok) = (
            r.run.as_ref().and_then(|p| p.server_time.as_ref()),
            r.status,
        ) else {
            continue;
        };
        floors.extend(t.base_rtt_us);
        let label = crate::format::server_label(r.config.system, &r.environment);
        for x in &t.splits {
            by.entry((label.clone(), r.config.system.to_string()))
                .or_default()
                .entry(format!("{} {}", r.config.workload, x.op))
                .or_default()
                .push((x.server_mean_us, x.client_network_mean_us));
        }
    }
    if by.is_empty() {
        return Vec::new();
    }
    let mut categories: Vec<String> = by.values().flat_map(|c| c.keys().cloned()).collect();
    categories.sort();
    categories.dedup();
    let mut server = Vec::new();
    let mut rest = Vec::new();
    for ((label, system), cats) in &by {
        let mean = |f: fn(&(f64, f64)) -> f64, v: &[(f64, f64)]| {
            v.iter().map(f).sum::<f64>() / v.len() as f64
        };
        let points = |f: fn(&(f64, f64)) -> f64| -> Vec<Point> {
            cats.iter()
                .filter_map(|(c, v)| {
                    Some(Point {
                        x: categories.iter().position(|k| k == c)? as f64,
                        y: mean(f, v),
                        interval: None,
                        flags: Vec::new(),
                    })
                })
                .collect()
        };
        server.push(Series {
            name: label.clone(),
            colour_key: system.clone(),
            dashed: false,
            points: points(|p| p.0),
        });
        rest.push(Series {
            name: label.clone(),
            colour_key: system.clone(),
            dashed: false,
            points: points(|p| p.1),
        });
    }
    floors.sort_by(f64::total_cmp);
    let floor = floors
        .get(floors.len() / 2)
        .map_or("not measured".to_string(), |f| format!("{f:.1} µs"));
    vec![Figure {
        id: "latency-split".into(),
        title: "Where the latency goes: the server's time and the rest".into(),
        caption: format!(
            "Mean latency of each operation, taken apart: above, the server executing its commands (INFO commandstats over the window); below, everything else: kvbench, both kernels, the network, the server reading and writing. Means over the runs of each system; the bare loopback round trip measured before the windows (median): {floor}."
        ),
        x: crate::figure::Axis {
            label: "Workload and operation".into(),
            log: false,
            ticks: Ticks::Category,
        },
        panels: vec![
            Panel {
                y: Axis::linear("Server time (µs)"),
                series: server,
            },
            Panel {
                y: Axis::linear("Client and network (µs)"),
                series: rest,
            },
        ],
        kind: FigureKind::LatencySplit,
        bars: true,
        categories,
    }]
}
