//! `kvbench reproduce PAPER`: its flags checked, the live view, and the
//! paper-vs-kvbench table printed; `kvbench_papers::reproduce` scales the
//! paper's matrix, runs it and writes the report (paper D:
//! `zhang2014.rs`).

mod zhang2014;

use crate::args::ReproduceArgs;
use crate::db::open_store;
use crate::exit::{status_verdict, UsageError, Verdict};
use crate::live::Live;
use crate::output::print;
use crate::papers::table;
use anyhow::Result;
use kvbench_experiment::pass;
use kvbench_papers::reproduce;
use kvbench_papers::scale::Overrides;
use kvbench_store::Labels;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn reproduce(a: ReproduceArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    if a.paper == "zhang2014" {
        return zhang2014::run(&a, kvbench_papers::zhang2014()?);
    }
    let Some(known) = kvbench_papers::find(&a.paper) else {
        return Err(UsageError(format!(
            "reproduce {}: no such paper; one of {}",
            a.paper,
            kvbench_papers::names().join(", ")
        ))
        .into());
    };
    let scale = kvbench_papers::check_scale(a.scale, known.default_scale)?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(known.name));
    let overrides = Overrides {
        duration: a.duration.clone(),
        warmup: a.warmup.clone(),
        iterations: a.iterations,
        clients: a.clients.clone(),
    };
    let prepared = reproduce::prepare(known, scale, &overrides, &out, &crate::config::RunFlags)?;
    let name = prepared.experiment.name.clone();
    if !a.quiet && !a.json {
        eprintln!(
            "reproduce {} at scale {scale} of the paper's data ({}), {} cells as experiment '{name}'; {} substitutions listed in the report",
            known.name,
            prepared.loads().join(", "),
            prepared.experiment.cells.len(),
            prepared.paper.substitutions.len()
        );
    }
    let mut store = open_store(&a.db)?;
    let live = Live::new(a.quiet, None);
    let options = pass::Options {
        restart: a.restart,
        labels: &Labels::default(),
        skip_memory_check: a.skip_memory_check,
        quiet: a.quiet || a.json,
        checkpoint: &crate::signals::leave_if_stopped,
    };
    // The comparison table is not printed here: the paper table is the point.
    let done = reproduce::run(prepared, &mut store, &a.db, &options, &live, stop)?;
    let verdict = status_verdict(done.pass.worst, stop);
    let Some(w) = done.written else {
        return Ok(verdict);
    };
    crate::output::warn_if_no_font(w.no_font);
    if a.json {
        print(&serde_json::to_string_pretty(&serde_json::json!({
            "paper": known.name,
            "experiment": name,
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
