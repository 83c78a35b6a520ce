//! Deletes stored runs, all or nothing, in one transaction. The run row goes
//! and the foreign keys' cascades take every row that belongs to it: its
//! per-op results and histograms, interval histograms, probes, experiment
//! cell and labels. A run id is never reused (AUTOINCREMENT).

use crate::{query, Fault};
use rusqlite::{Connection, TransactionBehavior};

/// Deletes `ids`; an id that is not stored deletes nothing at all.
pub(crate) fn delete_runs(conn: &mut Connection, ids: &[i64]) -> Result<usize, Fault> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    query::require_all(&tx, ids)?;
    let mut deleted = 0;
    {
        let mut stmt = tx.prepare_cached("DELETE FROM runs WHERE id = ?1")?;
        for &id in ids {
            deleted += stmt.execute([id])?;
        }
    }
    tx.commit()?;
    Ok(deleted)
}
