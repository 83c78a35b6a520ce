//! Deletes stored runs, all or nothing, in one transaction. The run row goes
//! and the foreign keys' cascades take every row that belongs to it: its
//! per-op results and histograms, interval histograms, probes, experiment
//! cell and labels. A run id is never reused (AUTOINCREMENT, or an
//! identity column on PostgreSQL).

use crate::db::{args, Db, TxKind};
use crate::{query, Fault};

/// Deletes `ids`; an id that is not stored deletes nothing at all.
pub(crate) fn delete_runs(conn: &Db, ids: &[i64]) -> Result<usize, Fault> {
    let tx = conn.begin(TxKind::Write)?;
    query::require_all(&tx, ids)?;
    let mut deleted = 0;
    for &id in ids {
        deleted += tx.execute("DELETE FROM runs WHERE id = ?1", &args![id])?;
    }
    tx.commit()?;
    Ok(deleted)
}
