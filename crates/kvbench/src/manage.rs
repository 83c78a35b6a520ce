//! Managing stored runs: `kvbench label` and `kvbench delete`. Both name
//! their runs the same ways (ids and ranges, an experiment, a label),
//! resolve them before changing anything, and change them in one store
//! transaction, so a bad id or an empty selection leaves every run as it was.

use crate::args::{DeleteArgs, LabelArgs};
use crate::db::{not_found, open_existing_store};
use crate::exit::{UsageError, Verdict};
use crate::labels;
use crate::output::print;
use anyhow::Result;
use kvbench_store::Location;
use kvbench_store::{RunFilter, RunSelection, RunSummary, Store};
use std::io::{BufRead, IsTerminal, Write};

/// The runs the user named, in exactly one of three ways (clap makes sure).
fn selection(
    ids: &[String],
    experiment: Option<&str>,
    label: Option<&str>,
) -> Result<RunSelection, UsageError> {
    if let Some(name) = experiment {
        return Ok(RunSelection::Experiment(name.to_string()));
    }
    if let Some(text) = label {
        let (key, value) = labels::parse_filter("--label", text)?;
        return Ok(RunSelection::Label(key, value));
    }
    let mut ranges = Vec::new();
    for text in ids {
        let parsed = crate::select::parse_ids(text)
            .map_err(|e| UsageError(format!("run ids '{text}': {e}")))?;
        ranges.extend(parsed);
    }
    Ok(RunSelection::Ids(ranges))
}

/// The ids of `selection`; an id that is not stored, or a selection that
/// matches no run, is bad input.
fn resolve(store: &Store, selection: &RunSelection, db: &Location) -> Result<Vec<i64>> {
    let ids = store.select_runs(selection).map_err(|e| not_found(e, db))?;
    if ids.is_empty() {
        let what = match selection {
            RunSelection::Experiment(name) => format!("no run of experiment '{name}'"),
            RunSelection::Label(key, Some(value)) => format!("no run labelled {key}={value}"),
            RunSelection::Label(key, None) => format!("no run labelled {key}"),
            RunSelection::All | RunSelection::Ids(_) => "no runs".to_string(),
        };
        return Err(UsageError(format!("{what} in {}", db)).into());
    }
    Ok(ids)
}

fn summaries(store: &Store, ids: &[i64]) -> Result<Vec<RunSummary>> {
    Ok(store.list_runs(&RunFilter {
        ids: Some(ids.to_vec()),
        ..RunFilter::default()
    })?)
}

pub fn label(a: LabelArgs) -> Result<Verdict> {
    let add = labels::parse_all("--add", &a.add)?;
    for key in &a.remove {
        labels::check_key("--remove", key)?;
        if add.contains_key(key) {
            return Err(UsageError(format!("--add and --remove both name key '{key}'")).into());
        }
    }
    let selection = selection(&a.ids, a.experiment.as_deref(), None)?;
    let mut store = open_existing_store(&a.db)?;
    let ids = resolve(&store, &selection, &a.db)?;
    store
        .relabel(&ids, &add, &a.remove)
        .map_err(|e| not_found(e, &a.db))?;
    let rows = summaries(&store, &ids)?;
    if a.json {
        print(&serde_json::to_string_pretty(&rows)?)?;
    } else {
        print(&kvbench_report::text::runs_list(&rows))?;
        eprintln!("labels changed on {} run(s)", ids.len());
    }
    Ok(Verdict::Ok)
}

pub fn delete(a: DeleteArgs) -> Result<Verdict> {
    let selection = selection(&a.ids, a.experiment.as_deref(), a.label.as_deref())?;
    let mut store = open_existing_store(&a.db)?;
    let ids = resolve(&store, &selection, &a.db)?;
    let rows = summaries(&store, &ids)?;
    let n = ids.len();
    let asking = !a.yes && std::io::stdin().is_terminal();
    if !a.json {
        print(&format!(
            "{n} run(s) {} from {}:\n{}",
            if a.yes {
                "to delete"
            } else {
                "would be deleted"
            },
            a.db,
            kvbench_report::text::runs_list(&rows)
        ))?;
    }
    let go = a.yes || (asking && confirm(n)?);
    if !go {
        if a.json {
            print(&serde_json::to_string_pretty(
                &serde_json::json!({ "deleted": false, "runs": rows }),
            )?)?;
        }
        if asking {
            eprintln!("nothing deleted");
            return Ok(Verdict::Ok);
        }
        return Err(UsageError(format!(
            "nothing deleted: stdin is not a terminal to confirm on; add --yes to delete these {n} run(s)"
        ))
        .into());
    }
    let deleted = store.delete_runs(&ids).map_err(|e| not_found(e, &a.db))?;
    if a.json {
        print(&serde_json::to_string_pretty(
            &serde_json::json!({ "deleted": true, "runs": rows }),
        )?)?;
    } else {
        print(&format!("deleted {deleted} run(s) from {}", a.db))?;
    }
    Ok(Verdict::Ok)
}

/// Asks on the terminal; only `y` or `yes` deletes.
fn confirm(n: usize) -> Result<bool> {
    let mut err = std::io::stderr().lock();
    write!(err, "delete these {n} run(s)? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
}
