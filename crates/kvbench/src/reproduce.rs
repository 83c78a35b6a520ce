//! `kvbench reproduce PAPER`: runs a paper's matrix (its experiment file,
//! scaled to this machine) and writes the report with a paper-vs-kvbench
//! table: every finding the paper reported (data in `papers/PAPER.toml`)
//! beside what was measured here. The experiment file actually run is
//! written into the report's directory, so the report says exactly what ran.

use crate::args::ReproduceArgs;
use crate::db::open_store;
use crate::exit::{UsageError, Verdict};
use crate::output::print;
use crate::papers::table;
use anyhow::Result;
use kvbench_papers::scale::{scaled, Overrides};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn reproduce(a: ReproduceArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    if a.paper == "zhang2014" {
        return crate::analytics::reproduce::run(&a, kvbench_papers::zhang2014()?);
    }
    let Some(known) = kvbench_papers::find(&a.paper) else {
        return Err(UsageError(format!(
            "reproduce {}: no such paper; one of {}",
            a.paper,
            kvbench_papers::names().join(", ")
        ))
        .into());
    };
    let mut paper = kvbench_papers::findings(known)?;
    let scale = kvbench_papers::check_scale(a.scale, known.default_scale)?;
    paper.at_scale(scale >= 1.0);
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(known.name));
    crate::pages::prepare(&out)?;
    let overrides = Overrides {
        duration: a.duration.clone(),
        warmup: a.warmup.clone(),
        iterations: a.iterations,
        clients: a.clients.clone(),
    };
    let file = scaled(known, scale, &overrides)?;
    let path = out.join("experiment.toml");
    kvbench_run::atomic::write_atomic(&path, file.as_bytes())?;
    let exp = kvbench_experiment::expand(&path, &crate::config::RunFlags)?;
    // An optional system left out (no asd here) is said in the report.
    paper.substitutions.extend(exp.absent.iter().cloned());
    if !a.quiet && !a.json {
        // Each workload's own count: a paper may give its workloads
        // different data sets (paper C: keys for SET:GET, sorted sets).
        let mut loads: Vec<String> = Vec::new();
        for c in &exp.cells {
            let load = format!(
                "{} {}",
                c.workload,
                kvbench_report::format::count(c.settings.spec.record_count)
            );
            if !loads.contains(&load) {
                loads.push(load);
            }
        }
        eprintln!(
            "reproduce {} at scale {scale} of the paper's data ({}), {} cells as experiment '{}'; {} substitutions listed in the report",
            known.name,
            loads.join(", "),
            exp.cells.len(),
            exp.name,
            paper.substitutions.len()
        );
    }
    let opts = crate::experiment::Options {
        db: &a.db,
        restart: a.restart,
        quiet: a.quiet,
        json: a.json,
        labels: &[],
        metrics_listen: None,
        skip_memory_check: a.skip_memory_check,
    };
    // The comparison table is not printed here: the paper table is the point.
    let (verdict, records, _) = crate::experiment::execute_quietly(&exp, &opts, stop)?;
    if records.is_empty() {
        return Ok(verdict);
    }
    let store = open_store(&a.db)?;
    let w = crate::pages::write(
        &store,
        &a.db,
        &crate::pages::Selection::Experiment(exp.name.clone()),
        &out,
        crate::pages::Framing {
            title: Some(format!("kvbench reproduces {}", paper.paper)),
            experiment_file: Some(file),
            paper: Some(paper),
            margin: None,
        },
    )?;
    if a.json {
        print(&serde_json::to_string_pretty(&serde_json::json!({
            "paper": known.name,
            "experiment": exp.name,
            "index": out.join("index.html"),
            "findings": w.summary.paper,
            "report": w.summary,
        }))?)?;
    } else {
        print(&table(&w.summary.paper))?;
        eprintln!("report: {}", out.join("index.html").display());
    }
    Ok(verdict)
}
