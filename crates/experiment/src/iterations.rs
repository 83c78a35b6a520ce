//! Statistics over the iterations of each cell: per metric the mean,
//! standard deviation and Student's-t 95% interval (kvbench_stats), a cell
//! marked noisy when throughput varies by more than 5%, and latency
//! percentiles from the iterations' histograms merged, so they are exact
//! over every request of every iteration, never averages of percentiles.
//!
//! It computes from stored runs and renders nothing: the binary's
//! `experiment summary` prints it as a table or JSON.

use crate::plan::Planned;
use kvbench_model::{LatencySummary, OpKind, RunRecord, RunStatus};
use kvbench_report::cells::Source;
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

impl From<Summary> for Spread {
    fn from(s: Summary) -> Spread {
        let (lo, hi) = s.interval().unzip();
        Spread {
            n: s.n,
            mean: s.mean,
            sd: s.sd,
            ci95_low: lo,
            ci95_high: hi,
            cv: s.cv(),
        }
    }
}

impl Spread {
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
    // The report's grouping does the arithmetic, so `experiment summary`
    // and the HTML report cannot disagree.
    let sources: Vec<Source> = records
        .iter()
        .map(|r| Source {
            record: r.clone(),
            cell_key: Some(p.cell.key.clone()),
            cell_index: Some(index),
            block: None,
        })
        .collect();
    let Some(c) = kvbench_report::cells::group(&sources)
        .map_err(anyhow::Error::msg)?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    let s = &p.cell.settings;
    let runs: Vec<&RunRecord> = c.runs.iter().map(|&i| &records[i]).collect();
    Ok(Some(CellIterations {
        cell_index: index,
        system: p.cell.system.clone(),
        deployment: p.cell.deployment.clone(),
        workload: p.cell.workload.clone(),
        clients: s.clients,
        pipeline: s.pipeline,
        rate: s.rate.map(|r| r.ops_per_s),
        runs: c.run_ids.clone(),
        noisy: c.throughput.noisy(),
        throughput: Spread::from(c.throughput),
        ops: c
            .ops
            .iter()
            .map(|o| OpIterations {
                op: o.op,
                throughput: Spread::from(o.throughput),
                p50_us: Spread::from(o.p50_us),
                p99_us: Spread::from(o.p99_us),
                merged: o.merged.clone(),
            })
            .collect(),
        invalid_runs: runs
            .iter()
            .filter(|r| r.status == RunStatus::Invalid)
            .filter_map(|r| r.id)
            .collect(),
    }))
}
