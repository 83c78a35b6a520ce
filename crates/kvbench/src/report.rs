//! `kvbench report`: which runs (`--experiment`, `--runs`, `--last`,
//! `--analytics`) go into the report `kvbench_pages` writes.

use crate::args::ReportArgs;
use crate::db::{not_found, open_for_reading};
use crate::exit::{UsageError, Verdict};
use anyhow::Result;
use kvbench_pages::{prepare, write, write_analytics, Framing, Selection};
use kvbench_store::Location;
use kvbench_store::{RunFilter, Store};

pub fn report(a: ReportArgs) -> Result<Verdict> {
    let store = open_for_reading(&a.db)?;
    if let Some(text) = &a.analytics {
        if a.file.is_some() {
            return Err(UsageError(
                "--file is an experiment file, shown with runs; analytics runs have none (drop --file or --analytics)".into(),
            )
            .into());
        }
        return analytics_report(&store, &a, text);
    }
    let selection = match (&a.experiment, &a.runs) {
        (Some(name), _) => Selection::Experiment(name.clone()),
        (None, Some(text)) => {
            let ids = store
                .select_runs(&crate::select::selection(Some(text))?)
                .map_err(|e| not_found(e, &a.db))?;
            Selection::Ids(ids)
        }
        (None, None) => last(&store, &a.db)?,
    };
    let file = match &a.file {
        Some(p) => Some(
            kvbench_workload::input::read_utf8(p, kvbench_workload::input::EXPERIMENT_FILE_LIMIT)
                .map_err(|e| UsageError(format!("--file {e}")))?,
        ),
        None => None,
    };
    let margin = a
        .margin
        .map(kvbench_run::bounds::margin_share)
        .transpose()
        .map_err(|e| UsageError(format!("--margin {e}")))?;
    prepare(&a.out)?;
    let written = write(
        &store,
        &a.db,
        &selection,
        &a.out,
        Framing {
            title: a.title.clone(),
            experiment_file: file,
            paper: None,
            margin,
        },
    )?;
    crate::output::warn_if_no_font(written.no_font);
    if a.json {
        crate::output::print(&serde_json::to_string_pretty(&serde_json::json!({
            "out": a.out,
            "index": a.out.join("index.html"),
            "files": written.files,
            "report": written.summary,
        }))?)?;
    } else {
        eprintln!(
            "wrote the report of {} runs ({} figures): {}",
            written.summary.runs,
            written.summary.figures.len(),
            a.out.join("index.html").display()
        );
    }
    Ok(Verdict::Ok)
}

/// `--last`: the newest run's experiment pass, or that run alone.
fn last(store: &Store, db: &Location) -> Result<Selection> {
    let newest = store
        .list_runs(&RunFilter {
            limit: Some(1),
            ..RunFilter::default()
        })?
        .into_iter()
        .next()
        .ok_or_else(|| UsageError(format!("no runs stored in {} to report", db)))?;
    Ok(match store.cell_runs(newest.id)? {
        Some(c) => Selection::Experiment(c.experiment),
        None => Selection::Ids(vec![newest.id]),
    })
}

/// `kvbench report --analytics IDS`.
fn analytics_report(store: &Store, a: &ReportArgs, text: &str) -> Result<Verdict> {
    let ranges = crate::select::parse_ids(text)
        .map_err(|e| UsageError(format!("--analytics '{text}': {e}")))?;
    let mut ids: Vec<i64> = ranges.into_iter().flatten().collect();
    ids.sort_unstable();
    ids.dedup();
    prepare(&a.out)?;
    let paper = kvbench_papers::zhang2014()?;
    let title = match (&a.title, a.judge) {
        (None, true) => Some(format!("kvbench reproduces {}", paper.paper)),
        (t, _) => t.clone(),
    };
    let w = write_analytics(store, &a.db, &ids, &a.out, title, Some(paper), a.judge)?;
    if a.json {
        crate::output::print(&serde_json::to_string_pretty(&serde_json::json!({
            "out": a.out,
            "index": a.out.join("index.html"),
            "files": w.files,
            "findings": w.summary.paper,
            "report": w.summary,
        }))?)?;
    } else {
        if a.judge {
            crate::output::print(&crate::papers::table(&w.summary.paper))?;
        }
        eprintln!(
            "wrote the report of {} analytics runs ({} figures): {}",
            w.summary.analytics_runs,
            w.summary.figures.len(),
            a.out.join("index.html").display()
        );
    }
    Ok(Verdict::Ok)
}
