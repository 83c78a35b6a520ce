//! Ties stored runs to the cells of experiment files, and answers what a
//! resumed experiment needs: which cells are finished, and how long a cell
//! with the same configuration took before.
//!
//! It never decides what a cell is or how its key is computed: the CLI does,
//! and the store keeps the key as an opaque string.

use crate::db::{args, Db};
use crate::Fault;
use serde::{Deserialize, Serialize};

/// The cell a run was made for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellTag {
    /// The experiment's `name`.
    pub experiment: String,
    /// The pass over the file: 1, then one more per `--restart`.
    pub generation: i64,
    /// A hash of the cell's complete configuration.
    pub cell_key: String,
    /// The cell's place in the plan, from 0.
    pub cell_index: u32,
    /// The iteration, from 1.
    pub iteration: u32,
}

/// A cell of one pass that has a run which did not fail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FinishedCell {
    /// A hash of the cell's complete configuration.
    pub cell_key: String,
    /// The iteration, from 1.
    pub iteration: u32,
    /// The newest such run.
    pub run_id: i64,
}

pub(crate) fn insert_cell(tx: &Db, run_id: i64, c: &CellTag) -> Result<(), Fault> {
    tx.execute(
        "INSERT INTO experiment_cells (run_id, experiment, generation, cell_key, cell_index, iteration)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &args![run_id, c.experiment, c.generation, c.cell_key, c.cell_index, c.iteration],
    )?;
    Ok(())
}

pub(crate) fn generation(conn: &Db, name: &str) -> Result<Option<i64>, Fault> {
    let g = conn
        .query_opt(
            "SELECT max(generation) FROM experiment_cells WHERE experiment = ?1",
            &args![name],
        )?
        .map(|mut r| r.take::<Option<i64>>(0))
        .transpose()?
        .flatten();
    Ok(g)
}

pub(crate) fn finished(conn: &Db, name: &str, generation: i64) -> Result<Vec<FinishedCell>, Fault> {
    // The last key breaks ties between cells at the same place (an edited
    // plan) the same way on both backends.
    let rows = conn.query(
        "SELECT c.cell_key, c.iteration, max(c.run_id)
         FROM experiment_cells c JOIN runs r ON r.id = c.run_id
         WHERE c.experiment = ?1 AND c.generation = ?2 AND r.status != 'failed'
         GROUP BY c.cell_key, c.iteration
         ORDER BY min(c.cell_index), c.iteration, max(c.run_id)",
        &args![name, generation],
    )?;
    rows.into_iter()
        .map(|mut r| {
            Ok(FinishedCell {
                cell_key: r.take(0)?,
                iteration: r.take(1)?,
                run_id: r.take(2)?,
            })
        })
        .collect()
}

pub(crate) fn seconds(conn: &Db, cell_key: &str) -> Result<Option<f64>, Fault> {
    // Start and end are stored to the second (RFC 3339), which julianday
    // reads, "Z" included (PostgreSQL's from the store's prelude); a
    // second's rounding is fine for an estimate.
    let s = conn
        .query_row(
            "SELECT avg((julianday(r.finished_at) - julianday(r.started_at)) * 86400.0)
             FROM experiment_cells c JOIN runs r ON r.id = c.run_id
             WHERE c.cell_key = ?1 AND r.status != 'failed'",
            &args![cell_key],
        )?
        .take(0)?;
    Ok(s)
}

/// The experiment cell a run was made for, and the runs that measured the
/// same cell in the same pass: its iterations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CellRuns {
    /// The experiment's `name`.
    pub experiment: String,
    /// The pass over the file.
    pub generation: i64,
    /// A hash of the cell's complete configuration.
    pub cell_key: String,
    /// The run's own iteration, from 1.
    pub iteration: u32,
    /// Every run of the cell in this pass that did not fail, by iteration
    /// (the run itself among them unless it failed).
    pub run_ids: Vec<i64>,
}

pub(crate) fn cell_runs(conn: &Db, run_id: i64) -> Result<Option<CellRuns>, Fault> {
    let Some(mut cell) = conn.query_opt(
        "SELECT experiment, generation, cell_key, iteration FROM experiment_cells
         WHERE run_id = ?1",
        &args![run_id],
    )?
    else {
        return Ok(None);
    };
    let (experiment, generation, cell_key, iteration): (String, i64, String, u32) =
        (cell.take(0)?, cell.take(1)?, cell.take(2)?, cell.take(3)?);
    let run_ids = conn
        .query(
            "SELECT c.run_id FROM experiment_cells c JOIN runs r ON r.id = c.run_id
             WHERE c.experiment = ?1 AND c.generation = ?2 AND c.cell_key = ?3
               AND r.status != 'failed'
             ORDER BY c.iteration, c.run_id",
            &args![experiment, generation, cell_key],
        )?
        .into_iter()
        .map(|mut r| r.take(0))
        .collect::<Result<_, _>>()?;
    Ok(Some(CellRuns {
        experiment,
        generation,
        cell_key,
        iteration,
        run_ids,
    }))
}
