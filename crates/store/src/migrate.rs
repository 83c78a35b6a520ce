//! Schema versioning through `PRAGMA user_version`: brings an older database
//! up to date and refuses one written by a newer kvbench (or by another
//! program) instead of silently misreading it.
//!
//! It only creates and alters tables; it never reads or writes runs.

use crate::StoreError;
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;

/// Migration `i` takes a database from version `i` to `i + 1`. Entries are
/// only ever appended: a released migration is never edited, because
/// databases in the field already ran it.
const MIGRATIONS: &[&str] = &[
    include_str!("schema.sql"),
    include_str!("migrate_2.sql"),
    include_str!("migrate_3.sql"),
    include_str!("migrate_4.sql"),
    include_str!("migrate_5.sql"),
    include_str!("migrate_6.sql"),
    include_str!("migrate_7.sql"),
];

/// The schema version this build writes and the newest it can read.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Marks the file as kvbench's (`PRAGMA application_id`, ASCII "kvb1"), so a
/// foreign SQLite file that happens to have a user_version is not mistaken
/// for a kvbench database.
const APPLICATION_ID: i64 = 0x6b76_6231;

/// The file's schema version and application id (`PRAGMA user_version`,
/// `application_id`).
fn marks(conn: &Connection, path: &Path) -> Result<(i64, i64), StoreError> {
    let read = |pragma: &str| -> Result<i64, StoreError> {
        conn.pragma_query_value(None, pragma, |row| row.get(0))
            .map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })
    };
    Ok((read("user_version")?, read("application_id")?))
}

/// Refuses a schema newer than this build's: reading it could drop or
/// misread fields.
fn not_newer(found: i64, path: &Path) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Checks, without writing, that `conn` holds a kvbench database of exactly
/// this build's schema (for a store opened only to read).
pub(crate) fn check_current(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let (found, app_id) = marks(conn, path)?;
    if app_id != APPLICATION_ID {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
        });
    }
    not_newer(found, path)?;
    if found < SCHEMA_VERSION {
        return Err(StoreError::SchemaTooOld {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Runs inside one write transaction even when nothing needs migrating: the
/// unconditional `user_version` write makes an unwritable location fail at
/// open, before a run is started, instead of at the first save.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(open_err)?;
    let (found, app_id) = marks(&tx, path)?;
    let objects: i64 = tx
        .query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get(0))
        .map_err(open_err)?;

    let ours = app_id == APPLICATION_ID;
    let empty = found == 0 && objects == 0 && app_id == 0;
    if (!ours && !empty) || found < 0 {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
        });
    }
    not_newer(found, path)?;
    // `found` is in 0..=SCHEMA_VERSION here, so the slice is in bounds.
    for migration in &MIGRATIONS[found as usize..] {
        tx.execute_batch(migration).map_err(open_err)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(open_err)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(open_err)?;
    tx.commit().map_err(open_err)
}
