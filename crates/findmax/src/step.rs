//! One probed rate, judged: did its window meet the objective, and the
//! figures that say so.

use crate::Slo;
use anyhow::Result;
use kvbench_engine::recorder::{merge_encoded, summarize};
use kvbench_model::{MarkKind, RunRecord, RunStatus};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};

/// One probed rate.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// None for the closed-loop run that measured the starting point.
    pub rate: Option<f64>,
    /// The stored run.
    pub run_id: i64,
    /// Its throughput, ops/s.
    pub achieved: f64,
    /// Its median latency over every operation, us.
    pub p50_us: f64,
    /// The objective's percentile over every operation of the window.
    pub slo_us: f64,
    /// Whether it met the objective (the closed loop always does).
    pub passed: bool,
    /// Why it failed, or why it needs a second look (client-bound).
    pub notes: Vec<String>,
}

/// Whether the step stored as `rec` met the objective: no overload or
/// errors marked, and the percentile over all its operations (every kind
/// merged, never an average of percentiles) within the limit.
///
/// # Errors
/// A failed or interrupted run, or one with no operation to judge.
pub(crate) fn judge(
    rec: &RunRecord,
    rate: Option<f64>,
    slo: Slo,
    stop: &AtomicBool,
) -> Result<Step> {
    let id = rec.id.unwrap_or_default();
    if rec.status == RunStatus::Failed {
        if stop.load(Ordering::Relaxed) {
            anyhow::bail!("interrupted by the user at run {id}");
        }
        anyhow::bail!(
            "step run {id} failed: {}",
            rec.failure.as_deref().unwrap_or("unknown")
        );
    }
    let run = rec
        .run
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("step run {id} has no run phase"))?;
    let all =
        merge_encoded(run.ops.iter().map(|o| o.histogram.as_str())).map_err(anyhow::Error::msg)?;
    let all = all.ok_or_else(|| anyhow::anyhow!("step run {id} completed no operation"))?;
    let slo_us = all.value_at_quantile(slo.percentile / 100.0) as f64 / 1e3;
    let mut notes = Vec::new();
    for m in &rec.marks {
        if matches!(m.kind(), MarkKind::Overloaded | MarkKind::Errors) {
            notes.push(m.to_string());
        }
    }
    if slo_us > slo.limit_us {
        notes.push(format!(
            "p{} {slo_us:.1} us is above {} us",
            slo.percentile, slo.limit_us
        ));
    }
    let passed = rate.is_none() || notes.is_empty();
    if rec
        .warnings
        .iter()
        .any(|w| w.kind() == MarkKind::ClientBound)
    {
        notes.push("client-bound: kvbench's own thread was the limit at this rate".to_string());
    }
    Ok(Step {
        rate,
        run_id: id,
        achieved: run.throughput,
        p50_us: summarize(&all).p50_us,
        slo_us,
        passed,
        notes,
    })
}
