//! `kvbench experiment plan`'s table and JSON: the cells in order, what
//! each will cost and which are already stored (`kvbench_experiment::plan`).

use kvbench_experiment::plan::{Planned, Source};
use kvbench_experiment::Experiment;
use kvbench_report::format::duration_text;

/// The plan as a table and a closing line of totals.
pub fn text(exp: &Experiment, rows: &[Planned<'_>]) -> String {
    // An eviction study's cells differ by limit and policy: a column then.
    let limited = rows.iter().any(|p| p.cell.settings.max_memory.is_some());
    let mut columns = vec![
        ">#",
        ">iter",
        "system",
        "deployment",
        "workload",
        ">clients",
        ">pipeline",
        ">field bytes",
        ">rate",
        ">threads",
    ];
    if limited {
        columns.push("memory limit");
    }
    columns.extend([">estimate", "state"]);
    let mut t = kvbench_report::table::Table::new(&columns);
    for p in rows {
        let s = &p.cell.settings;
        let guess = if p.source == Source::Guess { "~" } else { "" };
        let mut row = vec![
            p.cell.index.to_string(),
            p.cell.iteration.to_string(),
            p.cell.system.clone(),
            p.cell.deployment.clone(),
            p.cell.workload.clone(),
            s.clients.to_string(),
            s.pipeline.to_string(),
            s.spec.field_length.to_string(),
            s.rate.map_or("-".into(), |r| r.ops_per_s.to_string()),
            s.threads.to_string(),
        ];
        if limited {
            row.push(match (s.max_memory, kvbench_run::max_memory::eviction(s)) {
                (Some(m), Some(e)) => format!("{m} {e}"),
                _ => "-".into(),
            });
        }
        row.extend([
            format!("{guess}{}", duration_text(p.estimate_s)),
            match p.finished {
                Some(id) => format!("done (run {id})"),
                None => "to run".into(),
            },
        ]);
        t.row(row);
    }
    let total: f64 = rows.iter().map(|p| p.estimate_s).sum();
    let left: Vec<&Planned<'_>> = rows.iter().filter(|p| p.finished.is_none()).collect();
    let remaining: f64 = left.iter().map(|p| p.estimate_s).sum();
    format!(
        "experiment {}: {} cells ({} iteration{}), {} finished\n{}estimated {} to run the {} left ({} for all); ~ marks a guess, the others are means of stored runs of the same configuration",
        exp.name,
        rows.len(),
        exp.iterations,
        if exp.iterations == 1 { "" } else { "s" },
        rows.len() - left.len(),
        t.to_text(),
        duration_text(remaining),
        left.len(),
        duration_text(total),
    ) + &exp
        .absent
        .iter()
        .map(|why| format!("\n{why}"))
        .collect::<String>()
}

/// The plan as JSON: each cell with its key, estimate and the `kvbench run`
/// flags it stands for.
pub fn json(exp: &Experiment, rows: &[Planned<'_>]) -> serde_json::Value {
    let cells: Vec<serde_json::Value> = rows
        .iter()
        .map(|p| {
            let s = &p.cell.settings;
            serde_json::json!({
                "index": p.cell.index,
                "iteration": p.cell.iteration,
                "system": p.cell.system,
                "deployment": p.cell.deployment,
                "workload": p.cell.workload,
                "clients": s.clients,
                "pipeline": s.pipeline,
                "max_memory": s.max_memory.map(|m| m.to_string()),
                "eviction": kvbench_run::max_memory::eviction(s).map(|e| e.to_string()),
                "field_length": s.spec.field_length,
                "rate": s.rate.map(|r| r.ops_per_s),
                "threads": s.threads,
                "key": p.cell.key,
                "estimate_s": p.estimate_s,
                "estimate_from": match p.source { Source::Stored => "stored", Source::Guess => "guess" },
                "finished_run": p.finished,
                "run_args": p.cell.args,
            })
        })
        .collect();
    serde_json::json!({
        "experiment": exp.name,
        "iterations": exp.iterations,
        "estimate_s": rows.iter().map(|p| p.estimate_s).sum::<f64>(),
        "cells": cells,
        "absent": exp.absent,
    })
}
