//! `kvbench reproduce zhang2014` (paper D): its flags checked, the live
//! view and the paper-vs-kvbench table printed; `kvbench_papers::analytics`
//! runs the two graphs and writes the report.

use crate::args::ReproduceArgs;
use crate::exit::{UsageError, Verdict};
use crate::live::Live;
use anyhow::Result;
use kvbench_papers::analytics::{self, LOOKUP, LOOKUPS, PAGERANK, POKEC};
use kvbench_report::paper::Paper;
use std::path::Path;

/// Runs paper D at `--scale` (default 1: the Google web graph's and the
/// Pokec graph's sizes) and writes its report.
///
/// # Errors
/// Flags that do not apply (exit 2), a system that fails, ranks that
/// disagree.
pub fn run(a: &ReproduceArgs, mut paper: Paper) -> Result<Verdict> {
    for (given, flag) in [
        (a.duration.is_some(), "--duration"),
        (a.warmup.is_some(), "--warmup"),
        (a.iterations.is_some(), "--iterations"),
        (a.clients.is_some(), "--clients"),
    ] {
        if given {
            return Err(UsageError(format!(
                "reproduce zhang2014: {flag} does not apply (PageRank runs the paper's 10 iterations over one graph; only --scale, --out and --db do)"
            ))
            .into());
        }
    }
    let scale = kvbench_papers::check_scale(a.scale, 1.0)?;
    paper.at_scale(scale >= 1.0);
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join("zhang2014"));
    analytics::check(&out)?;
    let mut store = crate::db::open_store(&a.db)?;
    let quiet = a.quiet || a.json;
    if !quiet {
        eprintln!(
            "reproduce zhang2014 at scale {scale} of the paper's graphs: on the Google web graph's size PageRank ({}), then {LOOKUPS} random gets each ({}) and {} s of set/get on each store; on the Pokec graph's size PageRank ({}); {} substitutions listed in the report",
            PAGERANK.join(","),
            LOOKUP.join(","),
            analytics::setget_seconds(scale),
            POKEC.join(","),
            paper.substitutions.len()
        );
    }
    let live = Live::new(quiet, None);
    let done = analytics::run(paper, scale, &out, &mut store, &a.db, &live)?;
    let w = done.written;
    if a.json {
        crate::output::print(&serde_json::to_string_pretty(&serde_json::json!({
            "paper": "zhang2014",
            "analytics_runs": done.analytics_runs,
            "index": out.join("index.html"),
            "findings": w.summary.paper,
            "report": w.summary,
        }))?)?;
    } else {
        crate::output::print(&crate::papers::table(&w.summary.paper))?;
        eprintln!("report: {}", out.join("index.html").display());
    }
    Ok(Verdict::Ok)
}
