//! What can go wrong with the store: [`StoreError`] for callers, naming
//! the database, and [`Fault`] inside the store, named once at the edge.

use crate::db::BackendError;

/// Everything that can go wrong with the store. Variants name the database
/// (its file, or its URL without the password) so that a one-line message
/// is enough for the user to act on.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened, created, reached, or written.
    /// Raised by [`Store::open`], which the CLI calls before starting any
    /// server, so a bad `--db` costs nothing.
    #[error("cannot open database {database}: {}", open_reason(.source, .database))]
    Open {
        /// The database, as [`Location`] displays it (no password).
        database: String,
        /// What SQLite or PostgreSQL said.
        source: BackendError,
    },
    /// The database was written by a newer kvbench whose schema this build
    /// does not know; reading it could silently drop or misread fields.
    #[error(
        "database {database} has schema version {found}, newer than the {supported} this kvbench supports; \
         use a newer kvbench to read it"
    )]
    SchemaTooNew {
        /// The database, as [`Location`] displays it (no password).
        database: String,
        /// The version found (`PRAGMA user_version`, or `kvbench_meta`).
        found: i64,
        /// The newest version this build understands.
        supported: i64,
    },
    /// A database opened only to read ([`Store::open_read_only`]) has an
    /// older schema, which only a writable open can bring up to date.
    #[error(
        "database {database} has schema version {found}, older than the {supported} this kvbench reads, \
         and cannot be written to upgrade it; open it once where it can be written"
    )]
    SchemaTooOld {
        /// The database, as [`Location`] displays it (no password).
        database: String,
        /// The version found.
        found: i64,
        /// The version this build reads.
        supported: i64,
    },
    /// The database was not created by kvbench (an SQLite file of another
    /// program, a PostgreSQL database with other tables); kvbench refuses
    /// to add its tables to someone else's data.
    #[error("{database} is {backend} database not created by kvbench; choose another --db")]
    Foreign {
        /// The database, as [`Location`] displays it (no password).
        database: String,
        /// "an SQLite" or "a PostgreSQL".
        backend: &'static str,
    },
    /// An SQL statement failed after the database was opened.
    #[error("database error in {database}: {source}")]
    Sql {
        /// The database, as [`Location`] displays it (no password).
        database: String,
        /// What SQLite or PostgreSQL (or a value's conversion) said.
        source: BackendError,
    },
    /// A JSON column could not be encoded or decoded.
    #[error("bad JSON in {what} in database {database}: {source}")]
    Json {
        /// The database, as [`Location`] displays it (no password).
        database: String,
        /// Which column of which run.
        what: String,
        /// What serde_json said.
        source: serde_json::Error,
    },
    /// Stored data that kvbench itself would never have written.
    #[error("corrupt data in database {database}: {reason}")]
    Corrupt {
        /// The database, as [`Location`] displays it (no password).
        database: String,
        /// What is wrong.
        reason: String,
    },
    /// The record would not read back exactly, so nothing was saved: better
    /// a loud refusal now than a stored run that reports cannot read.
    #[error(
        "run not saved to {database}: its {part} would not read back exactly \
         (a NaN or infinite number?)"
    )]
    NotExact {
        /// The database, as [`Location`] displays it (no password).
        database: String,
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
fn open_reason(source: &BackendError, database: &str) -> String {
    let text = source.to_string();
    let suffix = format!(": {database}");
    match text.strip_suffix(&suffix) {
        Some(reason) => reason.to_string(),
        None => text,
    }
}

/// Failures inside the store before the database is named, so that
/// internal code can use `?` and the public methods add the name once.
#[derive(Debug)]
pub(crate) enum Fault {
    Sql(BackendError),
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

impl StoreError {
    /// Another process held the database's lock for longer than the busy
    /// timeout: the same write may succeed if tried again.
    pub fn is_busy(&self) -> bool {
        match self {
            StoreError::Sql { source, .. } | StoreError::Open { source, .. } => source.is_busy(),
            _ => false,
        }
    }
}

impl Fault {
    pub(crate) fn at(self, database: &str) -> StoreError {
        let database = database.to_string();
        match self {
            Fault::Sql(source) => StoreError::Sql { database, source },
            Fault::Json { field, run, source } => StoreError::Json {
                database,
                what: match run {
                    Some(id) => format!("{field}_json of run {id}"),
                    None => format!("{field} of the run being saved"),
                },
                source,
            },
            Fault::Corrupt(reason) => StoreError::Corrupt { database, reason },
            Fault::NotExact(part) => StoreError::NotExact { database, part },
            Fault::NotFound(id) => StoreError::NotFound(id),
            Fault::AnalyticsNotFound(id) => StoreError::AnalyticsNotFound(id),
        }
    }
}
