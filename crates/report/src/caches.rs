//! Figures of caches under a memory limit (`--max-memory`): the hit ratio
//! and the reads' p99 against the limit, one line per system and eviction
//! policy, one figure per workload; the caption says which policy keeps
//! more hits at each limit.

use crate::cells::Source;
use crate::figure::{Axis, Figure, FigureKind, Panel, Point, Series, Ticks};
use crate::format::slug;
use kvbench_model::{OpKind, RunStatus};
use std::collections::BTreeMap;

/// One run's point: its limit, hit ratio and reads' histograms.
struct Run<'a> {
    x: f64,
    hit_ratio: f64,
    histograms: Vec<&'a str>,
}

/// A cache figure per workload that has memory-limited runs.
pub fn figures(sources: &[Source]) -> Vec<Figure> {
    // workload -> (system label, system, policy) -> runs
    type Lines<'a> = BTreeMap<(String, String, String), Vec<Run<'a>>>;
    let mut by: BTreeMap<String, Lines> = BTreeMap::new();
    let all_shares = sources
        .iter()
        .filter_map(|s| s.record.config.max_memory.as_deref())
        .all(|m| m.ends_with('%'));
    for s in sources {
        let r = &s.record;
        let (Some(run), Some(limit), RunStatus::Ok) =
            (&r.run, r.config.max_memory.as_deref(), r.status)
        else {
            continue;
        };
        let Some(hit_ratio) = run.cache.as_ref().and_then(|c| c.hit_ratio) else {
            continue;
        };
        let x = if all_shares {
            limit.trim_end_matches('%').parse().unwrap_or(0.0)
        } else {
            r.config.max_memory_mb.unwrap_or(0) as f64
        };
        // Cache-aside: what the application waited (a miss with its
        // backend's penalty); else every read, hits and misses merged.
        let histograms = run
            .ops
            .iter()
            .filter(|o| o.op == OpKind::Read && !o.with)
            .flat_map(|o| match &o.app_histogram {
                Some(app) => [Some(app.as_str()), None],
                None => [Some(o.histogram.as_str()), o.miss_histogram.as_deref()],
            })
            .flatten()
            .filter(|h| !h.is_empty())
            .collect();
        let label = crate::format::server_label(r.config.system, &r.environment);
        let policy = r
            .config
            .eviction
            .clone()
            .unwrap_or_else(|| "default".into());
        by.entry(r.config.workload.clone())
            .or_default()
            .entry((label, r.config.system.to_string(), policy))
            .or_default()
            .push(Run {
                x,
                hit_ratio,
                histograms,
            });
    }
    let x_label = if all_shares {
        "Memory limit (% of each server's raw data)"
    } else {
        "Memory limit (MB per server)"
    };
    by.into_iter()
        .map(|(workload, lines)| figure(&workload, x_label, &lines))
        .collect()
}

fn figure(
    workload: &str,
    x_label: &str,
    lines: &BTreeMap<(String, String, String), Vec<Run>>,
) -> Figure {
    let mut ratio = Vec::new();
    let mut p99 = Vec::new();
    // (system, x) -> (policy, mean hit ratio), for the caption's
    // comparisons: a share of the data holds more records on one server
    // than another, so policies are compared within a system.
    let mut at: BTreeMap<(String, u64), Vec<(String, f64)>> = BTreeMap::new();
    let policies: std::collections::BTreeSet<&str> =
        lines.keys().map(|(_, _, p)| p.as_str()).collect();
    for ((label, system, policy), runs) in lines {
        let mut xs: Vec<f64> = runs.iter().map(|r| r.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut rp = Vec::new();
        let mut lp = Vec::new();
        for x in xs {
            let here: Vec<&Run> = runs.iter().filter(|r| r.x == x).collect();
            let mean = here.iter().map(|r| r.hit_ratio).sum::<f64>() / here.len() as f64 * 100.0;
            rp.push(point(x, mean));
            at.entry((label.clone(), (x * 1000.0) as u64))
                .or_default()
                .push((policy.clone(), mean));
            let merged = kvbench_stats::hist::merge_encoded(
                here.iter().flat_map(|r| r.histograms.iter().copied()),
            );
            if let Ok(Some(h)) = merged {
                lp.push(point(x, h.value_at_quantile(0.99) as f64 / 1000.0));
            }
        }
        // One dashing per policy, so two policies of a system differ.
        let dashed = policies.iter().position(|p| p == policy).unwrap_or(0) % 2 == 1;
        let name = format!("{label} {policy}");
        ratio.push(Series {
            name: name.clone(),
            colour_key: system.clone(),
            dashed,
            points: rp,
        });
        p99.push(Series {
            name,
            colour_key: system.clone(),
            dashed,
            points: lp,
        });
    }
    let unit = if x_label.contains('%') { "%" } else { " MB" };
    let mut best = Vec::new();
    for ((label, x), mut v) in at {
        if v.len() < 2 {
            continue;
        }
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        best.push(format!(
            "{label} at {}{unit}: {} keeps {:.1} points more hits than {}",
            crate::format::axis_value(x as f64 / 1000.0, Ticks::Count),
            v[0].0,
            v[0].1 - v[v.len() - 1].1,
            v[v.len() - 1].0
        ));
    }
    Figure {
        id: slug(&["cache", workload]),
        title: format!("Cache under a memory limit: {workload}"),
        caption: format!(
            "Reads that hit (%) and the p99 of every read, hit or miss (µs; in cache-aside runs the application's, a miss with its backend's penalty), against each server's memory limit; one line per system and eviction policy, the mean over runs. {}",
            if best.is_empty() {
                "One policy per system and limit: nothing to compare.".to_string()
            } else {
                format!("{}.", best.join("; "))
            }
        ),
        x: Axis::linear(x_label),
        panels: vec![
            Panel {
                y: Axis::linear("Hit ratio (%)"),
                series: ratio,
            },
            Panel {
                y: Axis::linear("Read p99 (µs)"),
                series: p99,
            },
        ],
        kind: FigureKind::Cache,
        bars: false,
        categories: Vec::new(),
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
