//! Experiments: a TOML file declaring a matrix of runs (`file`), expanded
//! into cells that are `kvbench run` flag sets (`cells`), listed with
//! estimates (`plan`) and run resumably (`run`). See docs/experiments.md.

pub(crate) mod blocks;
mod cells;
mod compare;
mod file;
mod iterations;
mod plan;
mod run;
pub(crate) mod sequential;
mod verdict_plan;

pub(crate) use cells::expand;
pub(crate) use cells::key as cell_key;
pub(crate) use compare::experiment as compare_experiment;
pub(crate) use file::property_text;
pub(crate) use run::{execute, execute_quietly, Options};

use crate::args::{ExperimentArgs, ExperimentCommand, ExperimentPlanArgs};
use crate::exit::Verdict;
use crate::output::print;
use anyhow::Result;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs one `experiment` subcommand.
pub fn dispatch(a: ExperimentArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    match a.command {
        ExperimentCommand::Plan(p) => show_plan(p),
        ExperimentCommand::Run(r) => run::run(r, stop),
        ExperimentCommand::Summary(p) => summary(p),
    }
}

fn summary(a: ExperimentPlanArgs) -> Result<Verdict> {
    let exp = cells::expand(&a.file)?;
    let store = crate::db::open_for_reading(&a.db)?;
    let generation = plan::generation(Some(&store), &exp.name, false)?;
    let rows = plan::plan(&exp, Some(&store), generation)?;
    let cells = iterations::summarise(&rows, |id| Ok(store.get_run(id)?))?;
    if a.json {
        print(&serde_json::to_string_pretty(&cells)?)?;
    } else if cells.is_empty() {
        print(&format!(
            "experiment {}: no finished cell in {} yet",
            exp.name, a.db
        ))?;
    } else {
        print(&iterations::text(&cells))?;
    }
    Ok(Verdict::Ok)
}

fn show_plan(a: ExperimentPlanArgs) -> Result<Verdict> {
    let exp = cells::expand(&a.file)?;
    let store = run::existing_store(&a.db)?;
    let generation = plan::generation(store.as_ref(), &exp.name, false)?;
    let rows = plan::plan(&exp, store.as_ref(), generation)?;
    if a.json {
        print(&serde_json::to_string_pretty(&plan::json(&exp, &rows))?)?;
    } else {
        print(&plan::text(&exp, &rows))?;
    }
    Ok(Verdict::Ok)
}
