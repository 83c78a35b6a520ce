//! What differs between two runs (`kvbench diff A B`): the configuration,
//! environment and labels field by field, and the run phase's metrics per
//! operation with B's change relative to A.
//!
//! A side made by an experiment cell with several iterations stands for the
//! cell: each metric is the mean over the iterations with its 95% interval
//! (kvbench_stats). The change B / A gets Welch's 95% interval of the
//! ratio (kvbench_stats::paired; the two sides' runs are not paired) and a
//! call against ±5%: B higher or lower beyond it, equal within it, or
//! undecided. A side without iterations is a single run and has no
//! interval. This module only computes; `text::diff` renders.

use crate::fields::{changes, FieldChange};
use kvbench_model::{OpKind, OpResult, RunRecord, RunStatus};
use kvbench_stats::paired::{self, Call, RatioInterval};
use kvbench_stats::Summary;
use kvbench_store::CellRuns;
use serde::Serialize;
use serde_json::Value;

/// One side of a diff, as the caller loaded it.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The run named on the command line.
    pub run: &'a RunRecord,
    /// The experiment cell it was made for, when any.
    pub cell: Option<&'a CellRuns>,
    /// The runs whose metrics stand for this side: the cell's iterations
    /// (the run among them), or the run alone.
    pub iterations: &'a [RunRecord],
}

/// Everything `kvbench diff` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// Run A.
    pub a: SideInfo,
    /// Run B.
    pub b: SideInfo,
    /// Configuration fields that differ.
    pub config: Vec<FieldChange>,
    /// Environment fields that differ.
    pub environment: Vec<FieldChange>,
    /// Labels that differ.
    pub labels: Vec<FieldChange>,
    /// Run-phase metrics, per operation kind (`total` for the phase).
    pub metrics: Vec<MetricDelta>,
    /// Things to know when reading the numbers.
    pub notes: Vec<String>,
}

/// Who a side is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideInfo {
    /// The run's id.
    pub id: i64,
    /// `ok`, `invalid` or `failed`.
    pub status: String,
    /// Server kind.
    pub system: String,
    /// Workload name.
    pub workload: String,
    /// Wall-clock start.
    pub started_at: String,
    /// The experiment the run belongs to, when any.
    pub experiment: Option<String>,
    /// Its pass over the experiment file.
    pub generation: Option<i64>,
    /// The runs whose mean stands for this side (one: the run alone, no interval).
    pub runs: Vec<i64>,
}

/// One metric of one operation kind on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDelta {
    /// The operation kind, or `total` for the whole phase.
    pub op: String,
    /// `throughput` (ops/s) or `p50_us`, `p99_us`, `p999_us`, `mean_us`.
    pub metric: &'static str,
    /// A's value; `None` when A has no such figure.
    pub a: Option<Estimate>,
    /// B's value.
    pub b: Option<Estimate>,
    /// (B - A) / A of the means; `None` without both, or when A's is 0.
    pub change: Option<f64>,
    /// Welch's 95% interval of B / A (in logs); `None` unless both sides
    /// have two or more runs.
    pub interval: Option<RatioInterval>,
    /// What the interval says against ±5%: `ahead` (B higher), `behind`
    /// (B lower), `equal` or `undecided`; `None` without an interval.
    pub call: Option<Call>,
}

/// A metric over a side's runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// Runs with the figure.
    pub n: usize,
    /// Their mean (the value itself for one run).
    pub mean: f64,
    /// Sample standard deviation (0 for one run).
    pub sd: f64,
    /// The 95% confidence interval of the mean; `None` for one run.
    pub ci95: Option<(f64, f64)>,
}

/// Reads one metric of an operation kind's result, when it has it.
pub type Pick = fn(&OpResult) -> Option<f64>;

/// The metrics compared, in the order shown: field name and how to read it.
pub const METRICS: [(&str, Pick); 5] = [
    ("throughput", |o| Some(o.throughput)),
    ("p50_us", |o| latency(o).map(|l| l.p50_us)),
    ("p99_us", |o| latency(o).map(|l| l.p99_us)),
    ("p999_us", |o| latency(o).map(|l| l.p999_us)),
    ("mean_us", |o| latency(o).map(|l| l.mean_us)),
];

fn latency(o: &OpResult) -> Option<&kvbench_model::LatencySummary> {
    Some(&o.latency).filter(|l| l.count > 0)
}

/// Configuration fields that differ between any two runs by construction,
/// and why; they are left out of the differences with a note.
const PER_RUN: [(&str, &str); 1] = [(
    "server_settings[dir].value",
    "the server's private temporary directory, new in every run",
)];

/// Compares `a` with `b`.
pub fn diff(a: &Side<'_>, b: &Side<'_>) -> Diff {
    let json = |v: Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
    let (ra, rb) = (a.run, b.run);
    let mut notes = Vec::new();
    for (name, side) in [("A", a), ("B", b)] {
        let r = side.run;
        match r.status {
            RunStatus::Ok => {}
            RunStatus::Invalid => notes.push(format!(
                "{name} (run {}) is invalid: {}",
                id(r),
                r.marks
                    .iter()
                    .map(|m| m.text())
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            RunStatus::Failed => notes.push(format!(
                "{name} (run {}) failed ({}): its numbers are not results and are left out",
                id(r),
                r.failure.as_deref().unwrap_or("unknown")
            )),
        }
    }
    let mut config = changes(
        &json(serde_json::to_value(&ra.config)),
        &json(serde_json::to_value(&rb.config)),
    );
    for (field, why) in PER_RUN {
        if let Some(i) = config.iter().position(|c| c.field == field) {
            config.remove(i);
            notes.push(format!("{field} is not compared: {why}"));
        }
    }
    Diff {
        a: info(a),
        b: info(b),
        config,
        environment: changes(
            &json(serde_json::to_value(&ra.environment)),
            &json(serde_json::to_value(&rb.environment)),
        ),
        labels: changes(
            &json(serde_json::to_value(&ra.labels)),
            &json(serde_json::to_value(&rb.labels)),
        ),
        metrics: metrics(a.iterations, b.iterations),
        notes,
    }
}

fn id(r: &RunRecord) -> i64 {
    r.id.unwrap_or_default()
}

fn info(s: &Side<'_>) -> SideInfo {
    let r = s.run;
    SideInfo {
        id: id(r),
        status: r.status.as_str().to_string(),
        system: r.config.system.to_string(),
        workload: r.config.workload.clone(),
        started_at: r.started_at.clone(),
        experiment: s.cell.map(|c| c.experiment.clone()),
        generation: s.cell.map(|c| c.generation),
        runs: s.iterations.iter().map(id).collect(),
    }
}

/// The run phases of the runs that are results (a failed run is not).
fn results(runs: &[RunRecord]) -> impl Iterator<Item = &kvbench_model::PhaseResult> {
    runs.iter()
        .filter(|r| r.status != RunStatus::Failed)
        .filter_map(|r| r.run.as_ref())
}

fn metrics(a: &[RunRecord], b: &[RunRecord]) -> Vec<MetricDelta> {
    let mut out = vec![delta(
        "total".into(),
        "throughput",
        estimate(results(a).map(|p| Some(p.throughput))),
        estimate(results(b).map(|p| Some(p.throughput))),
    )];
    let present = |op: OpKind| {
        results(a)
            .chain(results(b))
            .any(|p| p.ops.iter().any(|o| o.op == op))
    };
    for op in OpKind::ALL.into_iter().filter(|&op| present(op)) {
        for (metric, pick) in METRICS {
            let side = |runs: &[RunRecord]| {
                estimate(results(runs).map(|p| p.ops.iter().find(|o| o.op == op).and_then(pick)))
            };
            out.push(delta(op.to_string(), metric, side(a), side(b)));
        }
    }
    out.retain(|m| m.a.is_some() || m.b.is_some());
    out
}

/// The summary of the figures that exist, with the figures.
fn estimate(values: impl Iterator<Item = Option<f64>>) -> (Option<Estimate>, Vec<f64>) {
    let values: Vec<f64> = values.flatten().collect();
    let e = Summary::of(&values).map(|s| Estimate {
        n: s.n,
        mean: s.mean,
        sd: s.sd,
        ci95: s.interval(),
    });
    (e, values)
}

fn logs(values: &[f64]) -> Vec<f64> {
    values
        .iter()
        .filter(|v| **v > 0.0)
        .map(|v| v.ln())
        .collect()
}

fn delta(
    op: String,
    metric: &'static str,
    (a, a_values): (Option<Estimate>, Vec<f64>),
    (b, b_values): (Option<Estimate>, Vec<f64>),
) -> MetricDelta {
    let change = match (a, b) {
        (Some(a), Some(b)) if a.mean != 0.0 => Some((b.mean - a.mean) / a.mean),
        _ => None,
    };
    let interval = paired::unpaired(&logs(&b_values), &logs(&a_values), paired::LEVEL);
    MetricDelta {
        op,
        metric,
        a,
        b,
        change,
        call: interval.map(|iv| paired::decide(&iv, paired::DEFAULT_MARGIN).call),
        interval,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvbench_model::{LatencySummary, PhaseResult};

    fn op(kind: OpKind, throughput: f64, p99: f64) -> OpResult {
        OpResult {
            completed: 10,
            throughput,
            latency: LatencySummary {
                count: 10,
                p50_us: p99 / 2.0,
                p99_us: p99,
                p999_us: p99 * 2.0,
                mean_us: p99 / 3.0,
                ..LatencySummary::default()
            },
            ..OpResult::empty(kind)
        }
    }

    fn record(id: i64, clients: u32, reads: &[f64]) -> Vec<RunRecord> {
        reads
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let mut r: RunRecord = serde_json::from_value(serde_json::json!({
                    "id": id + i as i64, "started_at": "", "finished_at": "", "status": "ok",
                    "failure": null, "marks": [], "warnings": [],
                    "config": {
                        "system": "redis", "workload": "w", "records": 1, "operations": 1,
                        "duration_s": null, "field_count": 1, "field_length": 1,
                        "read_proportion": 1.0, "update_proportion": 0.0,
                        "insert_proportion": 0.0, "request_distribution": "uniform",
                        "clients": clients, "pipeline": 1, "threads": 1, "load_clients": 1,
                        "load_pipeline": 1, "warmup_s": 0.0, "seed": 1, "seed_source": "user",
                        "server_settings": [], "server_binary": ""
                    },
                    "environment": {
                        "host": "h", "kernel": "k", "cpu_model": "c", "cores": 2,
                        "memory_bytes": 1, "server_version": "7", "server_allocator": null,
                        "kvbench_version": "0", "git_revision": null
                    },
                    "load": null, "run": null, "probes": [], "cpu": null
                }))
                .expect("record");
                r.run = Some(PhaseResult {
                    duration_s: 1.0,
                    completed: 10,
                    errors: 0,
                    throughput: t,
                    ops: vec![op(OpKind::Read, t, 100.0)],
                    error_samples: vec![],
                    errors_by_kind: vec![],
                    error_replies: vec![],
                    series: vec![],
                    offered_rate: None,
                    redirects_moved: 0,
                    redirects_ask: 0,
                    retries: 0,
                    reconnects: 0,
                    outage: None,
                    faults: Vec::new(),
                    nodes: vec![],
                    fills: 0,
                    fill_errors: 0,
                    fill_lateness: None,
                    cache: None,
                    server_time: None,
                    scale_out: None,
                });
                r
            })
            .collect()
    }

    fn side(runs: &[RunRecord]) -> Side<'_> {
        Side {
            run: &runs[0],
            cell: None,
            iterations: runs,
        }
    }

    fn find<'a>(d: &'a Diff, op: &str, metric: &str) -> &'a MetricDelta {
        d.metrics
            .iter()
            .find(|m| m.op == op && m.metric == metric)
            .expect("metric")
    }

    #[test]
    fn single_runs_have_changes_but_no_intervals() {
        let (a, b) = (record(1, 1, &[1000.0]), record(2, 8, &[1500.0]));
        let d = diff(&side(&a), &side(&b));
        assert_eq!(d.config.len(), 1);
        assert_eq!(d.config[0].field, "clients");
        assert!(d.environment.is_empty() && d.labels.is_empty());
        let t = find(&d, "read", "throughput");
        assert_eq!(t.change, Some(0.5));
        assert_eq!((t.interval, t.call), (None, None));
        assert_eq!(t.a.unwrap().ci95, None);
        assert_eq!(find(&d, "read", "p99_us").change, Some(0.0));
        assert_eq!(find(&d, "total", "throughput").b.unwrap().mean, 1500.0);
    }

    #[test]
    fn iterations_give_intervals_and_a_call_on_the_ratio() {
        let a = record(1, 1, &[990.0, 1000.0, 1010.0]);
        let far = record(10, 8, &[1490.0, 1500.0, 1510.0]);
        let near = record(20, 8, &[900.0, 1000.0, 1200.0]);
        let d = diff(&side(&a), &side(&far));
        let t = find(&d, "read", "throughput");
        let est = t.a.unwrap();
        assert_eq!((est.n, est.mean, est.sd), (3, 1000.0, 10.0));
        let half = 4.3027 * 10.0 / 3f64.sqrt();
        let (lo, hi) = est.ci95.unwrap();
        assert!((lo - (1000.0 - half)).abs() < 1e-9 && (hi - (1000.0 + half)).abs() < 1e-9);
        // B / A = 1.5 with tiny spreads: B ahead beyond 5%.
        assert_eq!(t.call, Some(Call::Ahead));
        let (lo, hi) = t.interval.expect("an interval").change_bounds();
        assert!(lo > 0.4 && hi < 0.6, "{lo} {hi}");
        assert_eq!(d.b.runs, vec![10, 11, 12]);
        let d = diff(&side(&a), &side(&near));
        assert_eq!(find(&d, "read", "throughput").call, Some(Call::Undecided));
    }
}
