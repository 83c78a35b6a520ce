//! Ties stored runs to the cells of experiment files, and answers what a
//! resumed experiment needs: which cells are finished, and how long a cell
//! with the same configuration took before.
//!
//! It never decides what a cell is or how its key is computed: the CLI does,
//! and the store keeps the key as an opaque string.

use crate::Fault;
use rusqlite::{params, Connection, OptionalExtension, Transaction};
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

pub(crate) fn insert_cell(tx: &Transaction<'_>, run_id: i64, c: &CellTag) -> Result<(), Fault> {
    tx.execute(
        "INSERT INTO experiment_cells (run_id, experiment, generation, cell_key, cell_index, iteration)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![run_id, c.experiment, c.generation, c.cell_key, c.cell_index, c.iteration],
    )?;
    Ok(())
}

pub(crate) fn generation(conn: &Connection, name: &str) -> Result<Option<i64>, Fault> {
    let g: Option<i64> = conn
        .query_row(
            "SELECT max(generation) FROM experiment_cells WHERE experiment = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    Ok(g)
}

pub(crate) fn finished(
    conn: &Connection,
    name: &str,
    generation: i64,
) -> Result<Vec<FinishedCell>, Fault> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.cell_key, c.iteration, max(c.run_id)
         FROM experiment_cells c JOIN runs r ON r.id = c.run_id
         WHERE c.experiment = ?1 AND c.generation = ?2 AND r.status != 'failed'
         GROUP BY c.cell_key, c.iteration
         ORDER BY min(c.cell_index), c.iteration",
    )?;
    let rows = stmt
        .query_map(params![name, generation], |r| {
            Ok(FinishedCell {
                cell_key: r.get(0)?,
                iteration: r.get(1)?,
                run_id: r.get(2)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

pub(crate) fn seconds(conn: &Connection, cell_key: &str) -> Result<Option<f64>, Fault> {
    // Start and end are stored to the second (RFC 3339), which SQLite's
    // julianday reads, "Z" included; a second's rounding is fine for an estimate.
    let s: Option<f64> = conn.query_row(
        "SELECT avg((julianday(r.finished_at) - julianday(r.started_at)) * 86400.0)
         FROM experiment_cells c JOIN runs r ON r.id = c.run_id
         WHERE c.cell_key = ?1 AND r.status != 'failed'",
        [cell_key],
        |r| r.get(0),
    )?;
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

pub(crate) fn cell_runs(conn: &Connection, run_id: i64) -> Result<Option<CellRuns>, Fault> {
    let cell = conn
        .query_row(
            "SELECT experiment, generation, cell_key, iteration FROM experiment_cells
             WHERE run_id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((experiment, generation, cell_key, iteration)) = cell else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT c.run_id FROM experiment_cells c JOIN runs r ON r.id = c.run_id
         WHERE c.experiment = ?1 AND c.generation = ?2 AND c.cell_key = ?3
           AND r.status != 'failed'
         ORDER BY c.iteration, c.run_id",
    )?;
    let run_ids = stmt
        .query_map(params![experiment, generation, cell_key], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(Some(CellRuns {
        experiment,
        generation,
        cell_key,
        iteration,
        run_ids,
    }))
}
