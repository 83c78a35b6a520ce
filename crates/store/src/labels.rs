//! Labels on stored runs: saved with a run, read back with it, and changed
//! afterwards (`kvbench label`) for many runs in one transaction.
//!
//! It never checks what a key may look like: the CLI does, once, for every
//! way a label comes in; the store keeps any non-empty key.

use crate::db::{args, Db, TxKind};
use crate::{query, Fault};
use std::collections::BTreeMap;

/// Labels of one run, KEY → VALUE.
pub type Labels = BTreeMap<String, String>;

pub(crate) fn insert(tx: &Db, run_id: i64, labels: &Labels) -> Result<(), Fault> {
    for (key, value) in labels {
        tx.execute(
            "INSERT INTO run_labels (run_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
            &args![run_id, key, value],
        )?;
    }
    Ok(())
}

pub(crate) fn load(conn: &Db, run_id: i64) -> Result<Labels, Fault> {
    // No ORDER BY: the map orders by key, bytewise, whatever the
    // database's collation.
    conn.query(
        "SELECT key, value FROM run_labels WHERE run_id = ?1",
        &args![run_id],
    )?
    .into_iter()
    .map(|mut r| Ok((r.take(0)?, r.take(1)?)))
    .collect()
}

/// Sets `add` (replacing a key's value) and removes `remove` on every run
/// of `ids`, all or nothing: an id that is not stored changes no run.
pub(crate) fn relabel(
    conn: &Db,
    ids: &[i64],
    add: &Labels,
    remove: &[String],
) -> Result<(), Fault> {
    let tx = conn.begin(TxKind::Write)?;
    query::require_all(&tx, ids)?;
    for &id in ids {
        insert(&tx, id, add)?;
        for key in remove {
            tx.execute(
                "DELETE FROM run_labels WHERE run_id = ?1 AND key = ?2",
                &args![id, key],
            )?;
        }
    }
    tx.commit()?;
    Ok(())
}
