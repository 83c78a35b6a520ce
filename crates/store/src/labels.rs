//! Labels on stored runs: saved with a run, read back with it, and changed
//! afterwards (`kvbench label`) for many runs in one transaction.
//!
//! It never checks what a key may look like: the CLI does, once, for every
//! way a label comes in; the store keeps any non-empty key.

use crate::{query, Fault};
use rusqlite::{params, Connection, Transaction, TransactionBehavior};
use std::collections::BTreeMap;

/// Labels of one run, KEY → VALUE.
pub type Labels = BTreeMap<String, String>;

pub(crate) fn insert(tx: &Transaction<'_>, run_id: i64, labels: &Labels) -> Result<(), Fault> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO run_labels (run_id, key, value) VALUES (?1, ?2, ?3)
         ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
    )?;
    for (key, value) in labels {
        stmt.execute(params![run_id, key, value])?;
    }
    Ok(())
}

pub(crate) fn load(conn: &Connection, run_id: i64) -> Result<Labels, Fault> {
    let mut stmt =
        conn.prepare_cached("SELECT key, value FROM run_labels WHERE run_id = ?1 ORDER BY key")?;
    let rows = stmt
        .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Sets `add` (replacing a key's value) and removes `remove` on every run
/// of `ids`, all or nothing: an id that is not stored changes no run.
pub(crate) fn relabel(
    conn: &mut Connection,
    ids: &[i64],
    add: &Labels,
    remove: &[String],
) -> Result<(), Fault> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    query::require_all(&tx, ids)?;
    {
        let mut drop =
            tx.prepare_cached("DELETE FROM run_labels WHERE run_id = ?1 AND key = ?2")?;
        for &id in ids {
            insert(&tx, id, add)?;
            for key in remove {
                drop.execute(params![id, key])?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}
