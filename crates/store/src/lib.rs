//! The kvbench store: every run, finished or failed, kept in one embedded
//! SQLite file, so that reports and exporters work from the store alone and
//! never need the engine, the servers, or the terminal output of a run.
//!
//! This crate only stores, reads, relabels and deletes [`RunRecord`]s. It
//! never measures, never talks to servers, never draws tables or charts; the
//! report crate does that from what [`Store::get_run`] and
//! [`Store::list_runs`] return.
//!
//! Guarantees the rest of kvbench relies on:
//! - each run is saved in one transaction, so a run is either wholly stored or
//!   absent, and runs already saved survive a later crash or failed save;
//! - what [`Store::save_run`] accepts, [`Store::get_run`] gives back exactly
//!   (the save reads the run back inside its transaction and refuses a record
//!   that would not round-trip, e.g. one holding a NaN);
//! - a database written by a newer kvbench is refused, never misread;
//! - relabelling and deleting change all the runs named, or none, and a
//!   deleted run takes every row stored with it (the tables cascade).
#![deny(missing_docs)]

mod analytics;
mod delete;
mod experiment;
mod labels;
mod migrate;
mod query;
mod save;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use experiment::{CellRuns, CellTag, FinishedCell};
pub use kvbench_model::analytics::AnalyticsRecord;
pub use kvbench_model::RunRecord;
pub use labels::Labels;
pub use migrate::SCHEMA_VERSION;
pub use query::{RunFilter, RunSelection, RunSummary};

/// How long a writer waits for another kvbench process holding the write
/// lock before giving up; generous, because losing a finished run to a brief
/// lock is worse than waiting.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

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

/// Everything that can go wrong with the store. Variants name the database
/// file so that a one-line message is enough for the user to act on.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened, created, or written. Raised by
    /// [`Store::open`], which the CLI calls before starting any server, so a
    /// bad `--db` path costs nothing.
    #[error("cannot open database {}: {}", .path.display(), open_reason(.source, .path))]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The file was written by a newer kvbench whose schema this build does
    /// not know; reading it could silently drop or misread fields.
    #[error(
        "database {} has schema version {found}, newer than the {supported} this kvbench supports; \
         use a newer kvbench to read it",
        .path.display()
    )]
    SchemaTooNew {
        /// The database file.
        path: PathBuf,
        /// The version found in the file (`PRAGMA user_version`).
        found: i64,
        /// The newest version this build understands.
        supported: i64,
    },
    /// A database opened only to read ([`Store::open_read_only`]) has an
    /// older schema, which only a writable open can bring up to date.
    #[error(
        "database {} has schema version {found}, older than the {supported} this kvbench reads, \
         and cannot be written to upgrade it; open it once where it can be written",
        .path.display()
    )]
    SchemaTooOld {
        /// The database file.
        path: PathBuf,
        /// The version found in the file.
        found: i64,
        /// The version this build reads.
        supported: i64,
    },
    /// The file is an SQLite database that kvbench did not create; kvbench
    /// refuses to add its tables to someone else's data.
    #[error("{} is an SQLite database not created by kvbench; choose another --db file", .path.display())]
    Foreign {
        /// The database file.
        path: PathBuf,
    },
    /// An SQL statement failed after the database was opened.
    #[error("database error in {}: {source}", .path.display())]
    Sql {
        /// The database file.
        path: PathBuf,
        /// What SQLite (or rusqlite's type conversion) said.
        source: rusqlite::Error,
    },
    /// A JSON column could not be encoded or decoded.
    #[error("bad JSON in {what} in database {}: {source}", .path.display())]
    Json {
        /// The database file.
        path: PathBuf,
        /// Which column of which run.
        what: String,
        /// What serde_json said.
        source: serde_json::Error,
    },
    /// Stored data that kvbench itself would never have written.
    #[error("corrupt data in database {}: {reason}", .path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The record would not read back exactly, so nothing was saved: better
    /// a loud refusal now than a stored run that reports cannot read.
    #[error(
        "run not saved to {}: its {part} would not read back exactly \
         (a NaN or infinite number?)",
        .path.display()
    )]
    NotExact {
        /// The database file.
        path: PathBuf,
        /// The first `RunRecord` field that differed (`config`, `run`, ...).
        part: &'static str,
    },
    /// No run has this id.
    #[error("no run with id {0}")]
    NotFound(i64),
    /// No analytics run has this id.
    #[error("no analytics run with id {0}")]
    AnalyticsNotFound(i64),
}

/// rusqlite appends the path to "unable to open database file"; the
/// `Open` message already names it, so drop the repeat.
fn open_reason(source: &rusqlite::Error, path: &Path) -> String {
    let text = source.to_string();
    let suffix = format!(": {}", path.display());
    match text.strip_suffix(&suffix) {
        Some(reason) => reason.to_string(),
        None => text,
    }
}

/// Failures inside the store before the database path is attached, so that
/// internal code can use `?` and the public methods add the path once.
#[derive(Debug)]
enum Fault {
    Sql(rusqlite::Error),
    /// `run` is set when decoding a stored run, unset when encoding one.
    Json {
        field: &'static str,
        run: Option<i64>,
        source: serde_json::Error,
    },
    Corrupt(String),
    NotExact(&'static str),
    NotFound(i64),
    AnalyticsNotFound(i64),
}

impl From<rusqlite::Error> for Fault {
    fn from(e: rusqlite::Error) -> Self {
        Fault::Sql(e)
    }
}

impl StoreError {
    /// Another process held the database's lock for longer than the busy
    /// timeout: the same write may succeed if tried again.
    pub fn is_busy(&self) -> bool {
        let sql = match self {
            StoreError::Sql { source, .. } | StoreError::Open { source, .. } => source,
            _ => return false,
        };
        matches!(
            sql.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }
}

impl Fault {
    fn at(self, path: &Path) -> StoreError {
        let path = path.to_path_buf();
        match self {
            Fault::Sql(source) => StoreError::Sql { path, source },
            Fault::Json { field, run, source } => StoreError::Json {
                path,
                what: match run {
                    Some(id) => format!("{field}_json of run {id}"),
                    None => format!("{field} of the run being saved"),
                },
                source,
            },
            Fault::Corrupt(reason) => StoreError::Corrupt { path, reason },
            Fault::NotExact(part) => StoreError::NotExact { path, part },
            Fault::NotFound(id) => StoreError::NotFound(id),
            Fault::AnalyticsNotFound(id) => StoreError::AnalyticsNotFound(id),
        }
    }
}

/// An open kvbench database. One `Store` is one SQLite connection; several
/// processes may open the same file (WAL mode lets readers run during a
/// writer's sweep).
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens or creates the database at `path` and brings its schema up to
    /// date. It also commits a real write, so an unwritable location (missing
    /// directory, read-only file or directory) fails here, before any server
    /// is started, rather than after a long run has nothing to save into.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // Per-connection settings: cascades need foreign keys on; WAL lets a
        // report read while a sweep writes; FULL sync makes a committed run
        // survive power loss, which costs nothing at one commit per run.
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_err)?;
        conn.pragma_update_and_check(None, "journal_mode", "wal", |row| row.get::<_, String>(0))
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_err)?;
        migrate::migrate(&mut conn, path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// How long each write waits for another process's lock before it
    /// fails with [`StoreError::is_busy`] (10 s unless set).
    ///
    /// # Errors
    /// [`StoreError::Sql`] when SQLite refuses it.
    pub fn set_busy_timeout(&self, wait: Duration) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(wait)
            .map_err(|source| StoreError::Sql {
                path: self.path.clone(),
                source,
            })
    }

    /// Opens an existing database only to read it (`runs`, `show`, reports,
    /// exports) where it cannot be written: a read-only file system or
    /// file. Nothing is migrated. A WAL database without its `-shm` file on
    /// a file system where none can be made is opened as immutable, which
    /// is exact as long as nobody writes it meanwhile, and nobody can.
    ///
    /// # Errors
    /// [`StoreError::Open`] when SQLite cannot read it,
    /// [`StoreError::SchemaTooOld`] when it needs migrating, and as [`Store::open`].
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        use rusqlite::OpenFlags;
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let readable = |conn: Connection| -> Result<Connection, rusqlite::Error> {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
            Ok(conn)
        };
        let conn = match Connection::open_with_flags(path, flags).and_then(readable) {
            Ok(c) => c,
            Err(first) => {
                let uri = format!("file:{}?immutable=1", uri_path(path));
                Connection::open_with_flags(uri, flags)
                    .and_then(readable)
                    .map_err(|_| open_err(first))?
            }
        };
        migrate::check_current(&conn, path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The file this store was opened from, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves a run of any status (a failed run keeps its reason) in one
    /// transaction and returns its new id; `record.id` is ignored, because
    /// ids belong to the database. Before committing, the run is read back
    /// and compared, so a run that is saved can always be read exactly.
    pub fn save_run(&mut self, record: &RunRecord) -> Result<i64, StoreError> {
        save::save_run(&mut self.conn, record, None).map_err(|f| f.at(&self.path))
    }

    /// [`Store::save_run`] for a cell of an experiment: the run and its
    /// cell row commit in the same transaction, so a stored run is never
    /// missing from its experiment (and a resumed experiment never redoes it).
    pub fn save_cell_run(&mut self, record: &RunRecord, cell: &CellTag) -> Result<i64, StoreError> {
        save::save_run(&mut self.conn, record, Some(cell)).map_err(|f| f.at(&self.path))
    }

    /// The newest pass over experiment `name` (1 for the first, one more
    /// per `--restart`), or `None` when no run of it is stored.
    pub fn experiment_generation(&self, name: &str) -> Result<Option<i64>, StoreError> {
        experiment::generation(&self.conn, name).map_err(|f| f.at(&self.path))
    }

    /// The cells of one pass whose runs did not fail (ok or invalid): the
    /// ones a resumed experiment skips.
    pub fn finished_cells(
        &self,
        name: &str,
        generation: i64,
    ) -> Result<Vec<FinishedCell>, StoreError> {
        experiment::finished(&self.conn, name, generation).map_err(|f| f.at(&self.path))
    }

    /// Mean wall-clock seconds of the stored runs (of any experiment) that
    /// did not fail and had this cell key, or `None` when there are none.
    pub fn cell_seconds(&self, cell_key: &str) -> Result<Option<f64>, StoreError> {
        experiment::seconds(&self.conn, cell_key).map_err(|f| f.at(&self.path))
    }

    /// The experiment cell run `id` was made for, with the runs of its
    /// iterations in the same pass; `None` for a run outside any experiment.
    pub fn cell_runs(&self, id: i64) -> Result<Option<CellRuns>, StoreError> {
        experiment::cell_runs(&self.conn, id).map_err(|f| f.at(&self.path))
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
        labels::relabel(&mut self.conn, ids, add, remove).map_err(|f| f.at(&self.path))
    }

    /// Deletes the runs `ids` and everything stored with them (results,
    /// histograms, probes, experiment cells, labels) in one transaction, and
    /// returns how many were deleted.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] with the first id that is not stored; then
    /// nothing was deleted.
    pub fn delete_runs(&mut self, ids: &[i64]) -> Result<usize, StoreError> {
        delete::delete_runs(&mut self.conn, ids).map_err(|f| f.at(&self.path))
    }

    /// Saves an analytics command's record in one transaction and returns
    /// its id (numbered apart from runs).
    ///
    /// # Errors
    /// [`StoreError::NotExact`] when the record would not read back exactly
    /// (nothing is saved then); SQL errors.
    pub fn save_analytics(&mut self, record: &AnalyticsRecord) -> Result<i64, StoreError> {
        analytics::save(&mut self.conn, record).map_err(|f| f.at(&self.path))
    }

    /// Reads analytics run `id` back with its id set, exactly as saved.
    ///
    /// # Errors
    /// [`StoreError::AnalyticsNotFound`] when no analytics run has that id.
    pub fn get_analytics(&self, id: i64) -> Result<AnalyticsRecord, StoreError> {
        analytics::get(&self.conn, id).map_err(|f| f.at(&self.path))
    }

    /// The stored analytics runs, newest first, at most `limit`.
    ///
    /// # Errors
    /// SQL errors, or a stored record that no longer decodes.
    pub fn list_analytics(&self, limit: Option<u32>) -> Result<Vec<AnalyticsRecord>, StoreError> {
        analytics::list(&self.conn, limit).map_err(|f| f.at(&self.path))
    }

    /// Reads run `id` back with its id set, exactly as it was saved.
    pub fn get_run(&self, id: i64) -> Result<RunRecord, StoreError> {
        query::get_run(&self.conn, id).map_err(|f| f.at(&self.path))
    }

    /// The ids of the runs `selection` names, ascending and without repeats.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] with the first named id that is not stored.
    pub fn select_runs(&self, selection: &RunSelection) -> Result<Vec<i64>, StoreError> {
        query::select_runs(&self.conn, selection).map_err(|f| f.at(&self.path))
    }

    /// Summary rows for listing, newest first (by start time, then id).
    pub fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        query::list_runs(&self.conn, filter).map_err(|f| f.at(&self.path))
    }
}

#[cfg(test)]
mod tests;
