//! `kvbench diff A B`: loads both runs, and for a run made by an experiment
//! cell with several iterations the other iterations of that cell and pass
//! too, then prints what kvbench_report::diff makes of them.

use crate::args::DiffArgs;
use crate::db::{not_found, open_for_reading};
use crate::exit::Verdict;
use crate::output::print;
use anyhow::Result;
use kvbench_model::RunRecord;
use kvbench_report::diff::{diff as compare, Side};
use kvbench_store::Location;
use kvbench_store::{CellRuns, Store};

/// One side as loaded: the run, its cell, and the runs standing for it.
struct Loaded {
    run: RunRecord,
    cell: Option<CellRuns>,
    iterations: Vec<RunRecord>,
}

pub fn diff(a: DiffArgs) -> Result<Verdict> {
    let store = open_for_reading(&a.db)?;
    let (mut left, mut right) = (load(&store, a.a, &a.db)?, load(&store, a.b, &a.db)?);
    let mut notes = Vec::new();
    let same_cell = matches!((&left.cell, &right.cell), (Some(x), Some(y))
        if (&x.experiment, x.generation, &x.cell_key) == (&y.experiment, y.generation, &y.cell_key));
    if same_cell && a.a != a.b {
        // Both sides would be the same set of runs: compare the two alone.
        notes.push(format!(
            "runs {} and {} are iterations of the same cell: compared as single runs",
            a.a, a.b
        ));
        left.iterations = vec![left.run.clone()];
        right.iterations = vec![right.run.clone()];
    }
    let mut d = compare(&left.side(), &right.side());
    d.notes.extend(notes);
    if a.json {
        print(&serde_json::to_string_pretty(&d)?)?;
    } else {
        print(&kvbench_report::text::diff(&d))?;
    }
    Ok(Verdict::Ok)
}

impl Loaded {
    fn side(&self) -> Side<'_> {
        Side {
            run: &self.run,
            cell: self.cell.as_ref(),
            iterations: &self.iterations,
        }
    }
}

/// Run `id`, with the other iterations of its cell when it has some and is
/// one of them (a failed run stands alone: it is not among the results).
fn load(store: &Store, id: i64, db: &Location) -> Result<Loaded> {
    let run = store.get_run(id).map_err(|e| not_found(e, db))?;
    let cell = store.cell_runs(id)?;
    let iterations = match &cell {
        Some(c) if c.run_ids.len() > 1 && c.run_ids.contains(&id) => c
            .run_ids
            .iter()
            .map(|&i| store.get_run(i).map_err(|e| not_found(e, db)))
            .collect::<Result<_>>()?,
        _ => vec![run.clone()],
    };
    Ok(Loaded {
        run,
        cell,
        iterations,
    })
}
