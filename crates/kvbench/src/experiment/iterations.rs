//! Statistics over the iterations of each cell: per metric the mean,
//! standard deviation and Student's-t 95% interval (kvbench_stats), a cell
//! marked noisy when throughput varies by more than 5%, and latency
//! percentiles from the iterations' histograms merged, so they are exact
//! over every request of every iteration, never averages of percentiles.
//!
//! It computes from stored runs and renders nothing; `text` and the JSON
//! form are below, apart from the arithmetic.

use super::plan::Planned;
use kvbench_engine::recorder::{merge_encoded, summarize};
use kvbench_model::{LatencySummary, OpKind, OpResult, RunRecord, RunStatus};
use kvbench_stats::Summary;
use serde::Serialize;
use std::collections::BTreeMap;

/// A metric over a cell's iterations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub sd: f64,
    /// The 95% confidence interval of the mean; absent for one iteration.
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// Standard deviation over the mean.
    pub cv: f64,
}

impl Spread {
    fn of(values: &[f64]) -> Option<Spread> {
        let s = Summary::of(values)?;
        let (lo, hi) = s.interval().unzip();
        Some(Spread {
            n: s.n,
            mean: s.mean,
            sd: s.sd,
            ci95_low: lo,
            ci95_high: hi,
            cv: s.cv(),
        })
    }

    /// Half the interval's width, when there is one.
    pub fn half_width(&self) -> Option<f64> {
        self.ci95_high.map(|h| h - self.mean)
    }
}

/// One operation kind over a cell's iterations.
#[derive(Debug, Clone, Serialize)]
pub struct OpIterations {
    pub op: OpKind,
    pub throughput: Spread,
    /// Each iteration's own percentiles, summarised.
    pub p50_us: Spread,
    pub p99_us: Spread,
    /// Percentiles of every iteration's requests together (histograms added).
    pub merged: LatencySummary,
}

/// One cell over its iterations.
#[derive(Debug, Clone, Serialize)]
pub struct CellIterations {
    pub cell_index: u32,
    pub system: String,
    pub deployment: String,
    pub workload: String,
    pub clients: u32,
    pub pipeline: u32,
    pub rate: Option<f64>,
    /// The runs summarised, in iteration order: those that did not fail.
    pub runs: Vec<i64>,
    pub throughput: Spread,
    pub ops: Vec<OpIterations>,
    /// Throughput varied by more than kvbench_stats::summary::NOISY_CV.
    pub noisy: bool,
    /// Runs of the cell marked invalid (unstable, errors, ...): their
    /// numbers are in the summary, and this says to look at them.
    pub invalid_runs: Vec<i64>,
}

/// The cells of a plan with their finished iterations' runs; cells with no
/// finished run are left out. `get` reads a stored run.
///
/// # Errors
/// When a run cannot be read or a stored histogram cannot be decoded.
pub fn summarise(
    rows: &[Planned<'_>],
    mut get: impl FnMut(i64) -> anyhow::Result<RunRecord>,
) -> anyhow::Result<Vec<CellIterations>> {
    // Iterations of one cell share its key; the first iteration's row
    // names the cell.
    let mut by_key: BTreeMap<u32, (&Planned<'_>, Vec<i64>)> = BTreeMap::new();
    let mut first: BTreeMap<&str, u32> = BTreeMap::new();
    for p in rows {
        let index = *first.entry(p.cell.key.as_str()).or_insert(p.cell.index);
        let entry = by_key.entry(index).or_insert((p, Vec::new()));
        entry.1.extend(p.finished);
    }
    let mut out = Vec::new();
    for (index, (p, ids)) in by_key {
        let records = ids
            .iter()
            .map(|&id| get(id))
            .collect::<anyhow::Result<Vec<RunRecord>>>()?;
        if let Some(c) = cell(index, p, &records)? {
            out.push(c);
        }
    }
    Ok(out)
}

fn cell(
    index: u32,
    p: &Planned<'_>,
    records: &[RunRecord],
) -> anyhow::Result<Option<CellIterations>> {
    let runs: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.status != RunStatus::Failed && r.run.is_some())
        .collect();
    let phases: Vec<_> = runs.iter().filter_map(|r| r.run.as_ref()).collect();
    let Some(throughput) = Spread::of(&phases.iter().map(|r| r.throughput).collect::<Vec<_>>())
    else {
        return Ok(None);
    };
    let mut kinds: Vec<OpKind> = phases
        .iter()
        .flat_map(|r| r.ops.iter().map(|o| o.op))
        .collect();
    kinds.sort_by_key(|k| *k as u8);
    kinds.dedup();
    let mut ops = Vec::new();
    for op in kinds {
        let results: Vec<_> = phases
            .iter()
            .filter_map(|r| r.ops.iter().find(|o| o.op == op))
            .collect();
        // Every iteration's throughput of this kind, 0 where it had none.
        let tput: Vec<f64> = phases
            .iter()
            .map(|r| {
                r.ops
                    .iter()
                    .find(|o| o.op == op)
                    .map_or(0.0, |o| o.throughput)
            })
            .collect();
        ops.extend(op_iterations(op, &results, &tput)?);
    }
    let s = &p.cell.settings;
    Ok(Some(CellIterations {
        cell_index: index,
        system: p.cell.system.clone(),
        deployment: p.cell.deployment.clone(),
        workload: p.cell.workload.clone(),
        clients: s.clients,
        pipeline: s.pipeline,
        rate: s.rate.map(|r| r.ops_per_s),
        runs: runs.iter().filter_map(|r| r.id).collect(),
        noisy: throughput.cv > kvbench_stats::summary::NOISY_CV,
        throughput,
        ops,
        invalid_runs: runs
            .iter()
            .filter(|r| r.status == RunStatus::Invalid)
            .filter_map(|r| r.id)
            .collect(),
    }))
}

/// One operation kind over the iterations that had it (`results`), with
/// every iteration's throughput of it (`tput`, 0 where it had none).
fn op_iterations(
    op: OpKind,
    results: &[&OpResult],
    tput: &[f64],
) -> anyhow::Result<Option<OpIterations>> {
    let merged =
        merge_encoded(results.iter().map(|o| o.histogram.as_str())).map_err(anyhow::Error::msg)?;
    let spread =
        |f: fn(&OpResult) -> f64| Spread::of(&results.iter().map(|o| f(o)).collect::<Vec<_>>());
    let (Some(throughput), Some(p50_us), Some(p99_us), Some(m)) = (
        Spread::of(tput),
        spread(|o| o.latency.p50_us),
        spread(|o| o.latency.p99_us),
        merged,
    ) else {
        return Ok(None);
    };
    Ok(Some(OpIterations {
        op,
        throughput,
        p50_us,
        p99_us,
        merged: summarize(&m),
    }))
}

/// The summary as a table: throughput with its interval and spread, and the
/// commonest operation's merged p50 and p99.
pub fn text(cells: &[CellIterations]) -> String {
    let mut t = kvbench_report::table::Table::new(&[
        "system",
        "deployment",
        "workload",
        ">clients",
        ">pipeline",
        ">n",
        ">ops/s mean",
        ">95% CI +-",
        ">CV",
        "op",
        ">p50 us (all)",
        ">p99 us (all)",
        "flags",
    ]);
    for c in cells {
        let main = c
            .ops
            .iter()
            .max_by(|a, b| a.throughput.mean.total_cmp(&b.throughput.mean));
        let mut flags = Vec::new();
        if c.noisy {
            flags.push("noisy".to_string());
        }
        if !c.invalid_runs.is_empty() {
            let ids: Vec<String> = c.invalid_runs.iter().map(i64::to_string).collect();
            flags.push(format!("invalid runs {}", ids.join(",")));
        }
        t.row(vec![
            c.system.clone(),
            c.deployment.clone(),
            c.workload.clone(),
            c.clients.to_string(),
            c.pipeline.to_string(),
            c.throughput.n.to_string(),
            format!("{:.0}", c.throughput.mean),
            c.throughput
                .half_width()
                .map_or("-".into(), |h| format!("{h:.0}")),
            format!("{:.1}%", c.throughput.cv * 100.0),
            main.map_or("-".into(), |o| o.op.to_string()),
            main.map_or("-".into(), |o| format!("{:.1}", o.merged.p50_us)),
            main.map_or("-".into(), |o| format!("{:.1}", o.merged.p99_us)),
            flags.join("; "),
        ]);
    }
    format!(
        "over iterations (mean, 95% confidence interval of the mean by Student's t, coefficient of variation; noisy above {:.0}%; percentiles over every iteration's requests):\n{}",
        kvbench_stats::summary::NOISY_CV * 100.0,
        t.to_text()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::Histogram;
    use kvbench_engine::recorder::encode_histogram;

    fn result(latencies_ns: &[u64]) -> OpResult {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
        for &v in latencies_ns {
            h.record(v).expect("in range");
        }
        OpResult {
            op: OpKind::Read,
            completed: h.len(),
            misses: 0,
            errors: 0,
            throughput: h.len() as f64,
            latency: summarize(&h),
            histogram: encode_histogram(&h),
            service: None,
            service_histogram: None,
            lag: None,
            lag_histogram: None,
        }
    }

    #[test]
    fn merged_percentiles_are_those_of_every_request_not_averages() {
        // A fast iteration (100 us) and a slow one (10 ms).
        let fast = vec![100_000; 100];
        let slow = vec![10_000_000; 100];
        let (a, b) = (result(&fast), result(&slow));
        let it = op_iterations(OpKind::Read, &[&a, &b], &[100.0, 100.0])
            .expect("decodes")
            .expect("summarised");
        assert_eq!(it.merged.count, 200);
        let all: Vec<u64> = fast.iter().chain(&slow).copied().collect();
        let direct = result(&all).latency;
        assert_eq!(it.merged, direct, "as if recorded in one histogram");
        // The median of all requests is the fast ones' 100 us, not the
        // mean of the two medians (about 5 ms).
        assert!(
            (it.merged.p50_us - 100.0).abs() < 1.0,
            "{}",
            it.merged.p50_us
        );
        assert!((it.p50_us.mean - 5050.0).abs() < 10.0, "{}", it.p50_us.mean);
        assert_eq!(it.throughput.n, 2);
        assert_eq!(it.throughput.sd, 0.0);
    }
}
