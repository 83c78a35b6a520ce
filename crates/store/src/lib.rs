//! The kvbench store: every run, finished or failed, kept in one database,
//! so that reports and exporters work from the store alone and never need
//! the engine, the servers, or the terminal output of a run.
//!
//! The database is an embedded SQLite file (the default, `--db FILE`) or a
//! PostgreSQL database (`--db postgres://user@host:5432/dbname`) that several
//! drivers, or a team, write to at once; see [`Location`]. Both hold the same
//! schema, made by the same migrations (`schema.sql`, `migrate_N.sql`,
//! translated mechanically for PostgreSQL), and the same code reads and
//! writes both. TLS to PostgreSQL is not supported yet: use it on loopback
//! or over a VPN. kvbench never prints or stores a password: a location's
//! display, and every error message, shows it as `***`.
//!
//! This crate only stores, reads, relabels and deletes [`RunRecord`]s. It
//! never measures, never talks to servers, never draws tables or charts; the
//! report crate does that from what [`Store::get_run`] and
//! [`Store::list_runs`] return.
//!
//! Guarantees the rest of kvbench relies on, on either backend:
//! - each run is saved in one transaction, so a run is either wholly stored or
//!   absent, and runs already saved survive a later crash or failed save;
//!   processes saving at once each get their own run id;
//! - what [`Store::save_run`] accepts, [`Store::get_run`] gives back exactly
//!   (the save reads the run back inside its transaction and refuses a record
//!   that would not round-trip, e.g. one holding a NaN);
//! - a database written by a newer kvbench is refused, never misread;
//! - relabelling and deleting change all the runs named, or none, and a
//!   deleted run takes every row stored with it (the tables cascade).
#![deny(missing_docs)]

mod analytics;
mod db;
mod delete;
mod error;
mod experiment;
mod labels;
mod layout;
mod location;
mod migrate;
mod query;
mod save;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;

use db::{Db, PgConn};
use rusqlite::Connection;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use db::BackendError;
use error::Fault;
pub use error::StoreError;
pub use experiment::{CellRuns, CellTag, FinishedCell};
pub use kvbench_model::analytics::AnalyticsRecord;
pub use kvbench_model::RunRecord;
pub use labels::Labels;
pub use location::{Location, LocationError, PostgresUrl};
pub use migrate::SCHEMA_VERSION;
pub use query::{RunFilter, RunSelection, RunSummary};

/// How long a writer waits for another kvbench process holding the write
/// lock before giving up; generous, because losing a finished run to a brief
/// lock is worse than waiting.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long connecting to a PostgreSQL server may take, unless the URL
/// sets `connect_timeout`: a firewalled host fails the open, not hangs it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `path` as the path of an SQLite `file:` URI: `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// An open kvbench database: one SQLite connection or one PostgreSQL
/// connection. Several processes may open the same database: SQLite's WAL
/// mode lets readers run during a writer's sweep; on PostgreSQL writers
/// queue on an advisory lock and readers never wait.
pub struct Store {
    db: Db,
    location: Location,
    /// The location as shown in messages (no password).
    database: String,
    /// The SQLite file, or the shown URL for PostgreSQL (see [`Store::path`]).
    path: PathBuf,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens or creates the SQLite database at `path` and brings its schema
    /// up to date; [`Store::open_location`] with a [`Location::Sqlite`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_location(&Location::Sqlite(path.to_path_buf()))
    }

    /// Opens or creates the database at `location` and brings its schema
    /// up to date. It also commits a real write, so an unwritable location
    /// (missing directory, read-only file or directory, a PostgreSQL role
    /// without write rights) fails here, before any server is started,
    /// rather than after a long run has nothing to save into.
    ///
    /// On PostgreSQL the database must exist (kvbench creates its tables,
    /// never the database) and hold no tables but kvbench's; two drivers
    /// opening a fresh one at once migrate it once.
    ///
    /// # Errors
    /// [`StoreError::Open`] when it cannot be reached, created or written,
    /// [`StoreError::Foreign`], [`StoreError::SchemaTooNew`].
    pub fn open_location(location: &Location) -> Result<Store, StoreError> {
        let store = Store::connect(location, false)?;
        migrate::migrate(&store.db, &store.database)?;
        Ok(store)
    }

    /// Connects (SQLite: opens the file, `read_only` or with the write
    /// settings) without looking at the schema.
    fn connect(location: &Location, read_only: bool) -> Result<Store, StoreError> {
        let database = location.to_string();
        let db = match location {
            Location::Sqlite(path) if read_only => open_sqlite_read_only(path)
                .map(Db::Sqlite)
                .map_err(BackendError::from),
            Location::Sqlite(path) => open_sqlite(path)
                .map(Db::Sqlite)
                .map_err(BackendError::from),
            Location::Postgres(url) => connect(url)
                .map(|client| Db::Postgres(PgConn::new(client)))
                .map_err(BackendError::from),
        }
        .map_err(|source| StoreError::Open {
            database: database.clone(),
            source,
        })?;
        Ok(Store {
            db,
            path: match location {
                Location::Sqlite(path) => path.clone(),
                Location::Postgres(_) => PathBuf::from(&database),
            },
            location: location.clone(),
            database,
        })
    }

    /// How long each write waits for another process's lock before it
    /// fails with [`StoreError::is_busy`] (10 s unless set). On PostgreSQL
    /// this is the session's `lock_timeout` (at least 1 ms).
    ///
    /// # Errors
    /// [`StoreError::Sql`] when the database refuses it.
    pub fn set_busy_timeout(&self, wait: Duration) -> Result<(), StoreError> {
        let set = match &self.db {
            Db::Sqlite(conn) => conn.busy_timeout(wait).map_err(BackendError::from),
            Db::Postgres(_) => self.db.batch(&format!(
                "SET lock_timeout = {}",
                wait.as_millis().clamp(1, i32::MAX as u128)
            )),
        };
        set.map_err(|source| StoreError::Sql {
            database: self.database.clone(),
            source,
        })
    }

    /// Opens an existing SQLite database only to read it;
    /// [`Store::open_read_only_location`] with a [`Location::Sqlite`].
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Store::open_read_only_location(&Location::Sqlite(path.to_path_buf()))
    }

    /// Opens an existing database only to read it (`runs`, `show`, reports,
    /// exports) where it cannot be written. Nothing is migrated: the schema
    /// must already be this build's.
    ///
    /// SQLite: a read-only file system or file. A WAL database without its
    /// `-shm` file on a file system where none can be made is opened as
    /// immutable, which is exact as long as nobody writes it meanwhile, and
    /// nobody can. PostgreSQL: an ordinary connection (a role that may only
    /// read is fine); only the schema check differs from [`Store::open_location`].
    ///
    /// # Errors
    /// [`StoreError::Open`] when it cannot be read,
    /// [`StoreError::SchemaTooOld`] when it needs migrating, and as
    /// [`Store::open_location`].
    pub fn open_read_only_location(location: &Location) -> Result<Store, StoreError> {
        let store = Store::connect(location, true)?;
        migrate::check_current(&store.db, &store.database)?;
        Ok(store)
    }

    /// The SQLite file this store was opened from, for messages. For a
    /// PostgreSQL database it is the URL as [`Location`] displays it (no
    /// password), which is no file: use [`Store::location`] instead.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where this store lives; its display never shows a password.
    pub fn location(&self) -> &Location {
        &self.location
    }

    fn fail(&self) -> impl Fn(Fault) -> StoreError + '_ {
        |f| f.at(&self.database)
    }

    /// Saves a run of any status (a failed run keeps its reason) in one
    /// transaction and returns its new id; `record.id` is ignored, because
    /// ids belong to the database. Before committing, the run is read back
    /// and compared, so a run that is saved can always be read exactly.
    pub fn save_run(&mut self, record: &RunRecord) -> Result<i64, StoreError> {
        save::save_run(&self.db, record, None).map_err(self.fail())
    }

    /// [`Store::save_run`] for a cell of an experiment: the run and its
    /// cell row commit in the same transaction, so a stored run is never
    /// missing from its experiment (and a resumed experiment never redoes it).
    pub fn save_cell_run(&mut self, record: &RunRecord, cell: &CellTag) -> Result<i64, StoreError> {
        save::save_run(&self.db, record, Some(cell)).map_err(self.fail())
    }

    /// The newest pass over experiment `name` (1 for the first, one more
    /// per `--restart`), or `None` when no run of it is stored.
    pub fn experiment_generation(&self, name: &str) -> Result<Option<i64>, StoreError> {
        experiment::generation(&self.db, name).map_err(self.fail())
    }

    /// The cells of one pass whose runs did not fail (ok or invalid): the
    /// ones a resumed experiment skips.
    pub fn finished_cells(
        &self,
        name: &str,
        generation: i64,
    ) -> Result<Vec<FinishedCell>, StoreError> {
        experiment::finished(&self.db, name, generation).map_err(self.fail())
    }

    /// Mean wall-clock seconds of the stored runs (of any experiment) that
    /// did not fail and had this cell key, or `None` when there are none.
    pub fn cell_seconds(&self, cell_key: &str) -> Result<Option<f64>, StoreError> {
        experiment::seconds(&self.db, cell_key).map_err(self.fail())
    }

    /// The experiment cell run `id` was made for, with the runs of its
    /// iterations in the same pass; `None` for a run outside any experiment.
    pub fn cell_runs(&self, id: i64) -> Result<Option<CellRuns>, StoreError> {
        experiment::cell_runs(&self.db, id).map_err(self.fail())
    }

    /// Sets the labels `add` (a key already set takes the new value) and
    /// removes the keys `remove` on every run of `ids`, in one transaction.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] with the first id that is not stored; then
    /// no run was changed.
    pub fn relabel(
        &mut self,
        ids: &[i64],
        add: &Labels,
        remove: &[String],
    ) -> Result<(), StoreError> {
        labels::relabel(&self.db, ids, add, remove).map_err(self.fail())
    }

    /// Deletes the runs `ids` and everything stored with them (results,
    /// histograms, probes, experiment cells, labels) in one transaction, and
    /// returns how many were deleted.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] with the first id that is not stored; then
    /// nothing was deleted.
    pub fn delete_runs(&mut self, ids: &[i64]) -> Result<usize, StoreError> {
        delete::delete_runs(&self.db, ids).map_err(self.fail())
    }

    /// Saves an analytics command's record in one transaction and returns
    /// its id (numbered apart from runs).
    ///
    /// # Errors
    /// [`StoreError::NotExact`] when the record would not read back exactly
    /// (nothing is saved then); SQL errors.
    pub fn save_analytics(&mut self, record: &AnalyticsRecord) -> Result<i64, StoreError> {
        analytics::save(&self.db, record).map_err(self.fail())
    }

    /// Reads analytics run `id` back with its id set, exactly as saved.
    ///
    /// # Errors
    /// [`StoreError::AnalyticsNotFound`] when no analytics run has that id.
    pub fn get_analytics(&self, id: i64) -> Result<AnalyticsRecord, StoreError> {
        analytics::get(&self.db, id).map_err(self.fail())
    }

    /// The stored analytics runs, newest first, at most `limit`.
    ///
    /// # Errors
    /// SQL errors, or a stored record that no longer decodes.
    pub fn list_analytics(&self, limit: Option<u32>) -> Result<Vec<AnalyticsRecord>, StoreError> {
        analytics::list(&self.db, limit).map_err(self.fail())
    }

    /// Reads run `id` back with its id set, exactly as it was saved.
    pub fn get_run(&self, id: i64) -> Result<RunRecord, StoreError> {
        query::get_run(&self.db, id).map_err(self.fail())
    }

    /// The ids of the runs `selection` names, ascending and without repeats.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] with the first named id that is not stored.
    pub fn select_runs(&self, selection: &RunSelection) -> Result<Vec<i64>, StoreError> {
        query::select_runs(&self.db, selection).map_err(self.fail())
    }

    /// Summary rows for listing, newest first (by start time, then id).
    pub fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        query::list_runs(&self.db, filter).map_err(self.fail())
    }
}

/// Opens (or creates) an SQLite file for writing, with the per-connection
/// settings: cascades need foreign keys on; WAL lets a report read while a
/// sweep writes; FULL sync makes a committed run survive power loss, which
/// costs nothing at one commit per run.
fn open_sqlite(path: &Path) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update_and_check(None, "journal_mode", "wal", |row| row.get::<_, String>(0))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    Ok(conn)
}

/// Opens an SQLite file that may not be writable, read only; immutable
/// when even that fails (a WAL file without `-shm` on a read-only file
/// system). The first error is the one reported.
fn open_sqlite_read_only(path: &Path) -> Result<Connection, rusqlite::Error> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let readable = |conn: Connection| -> Result<Connection, rusqlite::Error> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
        Ok(conn)
    };
    match Connection::open_with_flags(path, flags).and_then(readable) {
        Ok(c) => Ok(c),
        Err(first) => {
            let uri = format!("file:{}?immutable=1", uri_path(path));
            Connection::open_with_flags(uri, flags)
                .and_then(readable)
                .map_err(|_| first)
        }
    }
}

/// Connects to a PostgreSQL database without TLS, with a connect timeout
/// and the busy timeout as the session's `lock_timeout`.
fn connect(url: &PostgresUrl) -> Result<postgres::Client, postgres::Error> {
    let mut config = url.config()?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("kvbench");
    }
    let mut client = config.connect(postgres::NoTls)?;
    client.batch_execute(&format!(
        "SET lock_timeout = {}; SET client_min_messages = warning",
        BUSY_TIMEOUT.as_millis()
    ))?;
    Ok(client)
}

#[cfg(test)]
mod tests;
