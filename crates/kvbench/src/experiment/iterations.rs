//! `kvbench experiment summary`'s table: each cell over its iterations
//! (`kvbench_experiment::iterations` does the arithmetic).

use kvbench_experiment::iterations::CellIterations;

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
