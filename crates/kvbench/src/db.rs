//! Opening the result store named by `--db`, with the exit code each way
//! of failing deserves (a store that cannot be opened is bad input).

use crate::exit::UsageError;
use anyhow::Result;
use kvbench_store::{Location, Store};
use std::path::Path;

/// The store at `db`, created when it does not exist.
pub(crate) fn open_store(db: &Location) -> Result<Store> {
    Store::open_location(db).map_err(|e| UsageError(format!("--db: {e}")).into())
}

/// A database that must hold runs already: an SQLite file is not created
/// (a mistyped path would otherwise start an empty store); a PostgreSQL
/// database exists or the connection says so.
pub(crate) fn open_existing_store(db: &Location) -> Result<Store> {
    if let Some(path) = db.sqlite_path() {
        if !path.exists() {
            return Err(UsageError(format!(
                "--db {db}: no such database (runs are stored there by `kvbench run`)"
            ))
            .into());
        }
    }
    open_store(db)
}

/// An existing database for a command that only reads it: opened as usual
/// (which brings an older schema up to date), or, where it cannot be
/// written (a read-only file system, a file of another user, a PostgreSQL
/// role that may only read), read only.
pub(crate) fn open_for_reading(db: &Location) -> Result<Store> {
    let writable = open_existing_store(db);
    let exists = db.sqlite_path().is_none_or(Path::exists);
    match writable {
        Ok(store) => Ok(store),
        Err(e) if exists => {
            Store::open_read_only_location(db).map_err(|ro| match ro {
                // Not readable either: the first reason is the one to act on.
                kvbench_store::StoreError::Open { .. } => e,
                other => UsageError(format!("--db: {other}")).into(),
            })
        }
        Err(e) => Err(e),
    }
}

/// An unknown run id is bad input (exit 2); any other store error is not.
pub(crate) use kvbench_run::usage::unknown_run as not_found;
