//! The one SQL interface the store's logic is written against, over either
//! backend: an SQLite connection (rusqlite) or a PostgreSQL client (the
//! `postgres` crate, without TLS).
//!
//! SQL is written once, in SQLite's numbered-parameter style (`?1`, `?2`,
//! a number may repeat), and rewritten to `$1`, `$2` for PostgreSQL. Values
//! cross as [`Value`] (NULL, 64-bit integer, double, text), which both
//! backends store exactly. Backend-specific parts stay here and in `lib.rs`
//! (pragmas and WAL for SQLite, the advisory write lock for PostgreSQL);
//! nothing here knows about runs.

use crate::Fault;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

/// Which database engine a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

/// One SQL value, as both backends store it exactly.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

/// An SQL failure from either backend, or a value that does not fit where
/// it goes (a `u64` above `i64::MAX`, a negative count).
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// What SQLite (or rusqlite's type conversion) said.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    /// What PostgreSQL (or the `postgres` client) said.
    #[error("{}", error_text(.0))]
    Postgres(#[from] postgres::Error),
    /// A value that does not convert to or from its column.
    #[error("{0}")]
    Value(String),
}

/// A `postgres::Error` as one line: the server's message with its detail,
/// or the client's with its causes. Neither ever holds the password.
pub(crate) fn error_text(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        };
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

impl BackendError {
    /// Another connection held a lock longer than this one would wait.
    pub(crate) fn is_busy(&self) -> bool {
        match self {
            BackendError::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            BackendError::Postgres(e) => {
                use postgres::error::SqlState;
                e.code().is_some_and(|c| {
                    [
                        SqlState::LOCK_NOT_AVAILABLE,
                        SqlState::T_R_DEADLOCK_DETECTED,
                        SqlState::T_R_SERIALIZATION_FAILURE,
                    ]
                    .contains(c)
                })
            }
            BackendError::Value(_) => false,
        }
    }
}

fn value_error(text: String) -> BackendError {
    BackendError::Value(text)
}

/// A Rust value that is bound as an SQL parameter.
pub(crate) trait ToValue {
    fn to_value(&self) -> Result<Value, BackendError>;
}

/// A Rust value that a result column is read into.
pub(crate) trait FromValue: Sized {
    fn from_value(value: Value) -> Result<Self, BackendError>;
}

impl ToValue for Value {
    fn to_value(&self) -> Result<Value, BackendError> {
        Ok(self.clone())
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Result<Value, BackendError> {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Result<Value, BackendError> {
        match self {
            Some(v) => v.to_value(),
            None => Ok(Value::Null),
        }
    }
}

impl ToValue for str {
    fn to_value(&self) -> Result<Value, BackendError> {
        Ok(Value::Text(self.to_string()))
    }
}

impl ToValue for String {
    fn to_value(&self) -> Result<Value, BackendError> {
        Ok(Value::Text(self.clone()))
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Result<Value, BackendError> {
        Ok(Value::Real(*self))
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Result<Value, BackendError> {
                i64::try_from(*self)
                    .map(Value::Int)
                    .map_err(|_| value_error(format!("integer {self} is too large to store")))
            }
        }
        impl FromValue for $t {
            fn from_value(value: Value) -> Result<Self, BackendError> {
                match value {
                    Value::Int(i) => <$t>::try_from(i).map_err(|_| {
                        value_error(format!("stored integer {i} is out of range for {}", stringify!($t)))
                    }),
                    other => Err(value_error(format!(
                        "expected an integer, found {}", other.kind()
                    ))),
                }
            }
        }
    )*};
}
integers!(i64, i32, u32, u64, usize);

impl FromValue for f64 {
    fn from_value(value: Value) -> Result<Self, BackendError> {
        match value {
            Value::Real(f) => Ok(f),
            // SQLite may hand back a whole REAL as an integer.
            Value::Int(i) => Ok(i as f64),
            other => Err(value_error(format!(
                "expected a number, found {}",
                other.kind()
            ))),
        }
    }
}

impl FromValue for String {
    fn from_value(value: Value) -> Result<Self, BackendError> {
        match value {
            Value::Text(s) => Ok(s),
            other => Err(value_error(format!(
                "expected text, found {}",
                other.kind()
            ))),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: Value) -> Result<Self, BackendError> {
        match value {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<Option<String>> for Value {
    fn from(s: Option<String>) -> Value {
        s.map_or(Value::Null, Value::Text)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real number",
            Value::Text(_) => "text",
        }
    }
}

/// Binds parameters: `args![a, b]` is `[a.to_value()?, b.to_value()?]`
/// in a function whose error converts from [`BackendError`].
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        [$($crate::db::ToValue::to_value(&$v)?),*]
    };
}
pub(crate) use args;

/// One result row; columns are taken out by index.
#[derive(Debug)]
pub(crate) struct Row(Vec<Value>);

impl Row {
    /// Column `i` (from 0) as a `T`; the column is left NULL.
    pub(crate) fn take<T: FromValue>(&mut self, i: usize) -> Result<T, BackendError> {
        let value = self
            .0
            .get_mut(i)
            .map(|v| std::mem::replace(v, Value::Null))
            .ok_or_else(|| value_error(format!("no column {i} in the result")))?;
        T::from_value(value).map_err(|e| match e {
            BackendError::Value(text) => value_error(format!("column {i}: {text}")),
            other => other,
        })
    }
}

/// What a transaction is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxKind {
    /// Reads that must see one snapshot (a run and its child rows).
    Read,
    /// A write: one writer at a time, as SQLite's write lock makes it.
    Write,
}

/// The key of PostgreSQL's transaction-level advisory lock that every write
/// transaction (and a migration) takes: writers queue as on SQLite, so a
/// migration never runs twice and `relabel`/`delete` see what they change.
/// ASCII "kvb1", the store's application id.
pub(crate) const WRITE_LOCK: i64 = 0x6b76_6231;

/// A PostgreSQL connection with its prepared statements.
pub(crate) struct PgConn {
    client: RefCell<postgres::Client>,
    statements: RefCell<HashMap<String, postgres::Statement>>,
}

/// An open database connection of either backend.
pub(crate) enum Db {
    Sqlite(rusqlite::Connection),
    Postgres(Box<PgConn>),
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Db::Sqlite(_) => "Db::Sqlite",
            Db::Postgres(_) => "Db::Postgres",
        })
    }
}

/// `sql` with SQLite's `?N` parameters written as PostgreSQL's `$N`;
/// string literals, quoted identifiers and comments are left alone.
pub(crate) fn postgres_params(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\n' {
                        break;
                    }
                }
            }
            '?' if chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            c => out.push(c),
        }
    }
    out
}

impl PgConn {
    pub(crate) fn new(client: postgres::Client) -> Box<PgConn> {
        Box::new(PgConn {
            client: RefCell::new(client),
            statements: RefCell::new(HashMap::new()),
        })
    }

    /// The prepared statement for `sql` (in `?N` style), prepared once per
    /// connection.
    fn statement(&self, sql: &str) -> Result<postgres::Statement, BackendError> {
        if let Some(stmt) = self.statements.borrow().get(sql) {
            return Ok(stmt.clone());
        }
        let stmt = self.client.borrow_mut().prepare(&postgres_params(sql))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<postgres::Row>, BackendError> {
        let stmt = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> =
            args.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        Ok(self.client.borrow_mut().query(&stmt, &params)?)
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64, BackendError> {
        let stmt = self.statement(sql)?;
        let params: Vec<&(dyn ToSql + Sync)> =
            args.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        Ok(self.client.borrow_mut().execute(&stmt, &params)?)
    }
}

impl Db {
    pub(crate) fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Runs one statement and returns how many rows it changed.
    pub(crate) fn execute(&self, sql: &str, args: &[Value]) -> Result<usize, BackendError> {
        match self {
            Db::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(args.iter()))?)
            }
            Db::Postgres(pg) => {
                let n = pg.execute(sql, args)?;
                usize::try_from(n).map_err(|_| value_error(format!("{n} rows changed")))
            }
        }
    }

    /// Every row `sql` returns.
    pub(crate) fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>, BackendError> {
        match self {
            Db::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let width = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let row = (0..width)
                        .map(|i| r.get::<_, rusqlite::types::Value>(i).map(Value::from))
                        .collect::<Result<Vec<_>, _>>()?;
                    out.push(Row(row));
                }
                Ok(out)
            }
            Db::Postgres(pg) => pg
                .query(sql, args)?
                .iter()
                .map(|r| {
                    (0..r.len())
                        .map(|i| r.try_get::<_, Value>(i))
                        .collect::<Result<Vec<_>, _>>()
                        .map(Row)
                        .map_err(BackendError::from)
                })
                .collect(),
        }
    }

    /// The first row `sql` returns, if any.
    pub(crate) fn query_opt(&self, sql: &str, args: &[Value]) -> Result<Option<Row>, BackendError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// The first row of a query that always returns one (an aggregate,
    /// `INSERT ... RETURNING`).
    pub(crate) fn query_row(&self, sql: &str, args: &[Value]) -> Result<Row, BackendError> {
        self.query_opt(sql, args)?
            .ok_or_else(|| value_error("the query returned no row".into()))
    }

    /// Runs several `;`-separated statements without parameters.
    pub(crate) fn batch(&self, sql: &str) -> Result<(), BackendError> {
        match self {
            Db::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Db::Postgres(pg) => Ok(pg.client.borrow_mut().batch_execute(sql)?),
        }
    }

    /// Starts a transaction, which rolls back unless committed. A write
    /// transaction takes the write lock at once (SQLite `IMMEDIATE`, a
    /// PostgreSQL advisory lock), so a writer waits at its start, within
    /// the busy timeout, rather than failing half way.
    pub(crate) fn begin(&self, kind: TxKind) -> Result<Tx<'_>, BackendError> {
        let sql = match (self.backend(), kind) {
            (Backend::Sqlite, TxKind::Read) => "BEGIN".to_string(),
            (Backend::Sqlite, TxKind::Write) => "BEGIN IMMEDIATE".to_string(),
            (Backend::Postgres, TxKind::Read) => {
                "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY".to_string()
            }
            (Backend::Postgres, TxKind::Write) => {
                format!("BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})")
            }
        };
        let tx = Tx {
            db: self,
            open: true,
        };
        if let Err(e) = self.batch(&sql) {
            // A failed lock wait leaves PostgreSQL's transaction open.
            drop(tx);
            return Err(e);
        }
        Ok(tx)
    }

    /// A JSON array of integers (one parameter, however many) as a subquery
    /// of its elements, for `id IN (...)`.
    pub(crate) fn json_integers(&self, param: &str) -> String {
        match self.backend() {
            Backend::Sqlite => format!("SELECT value FROM json_each({param})"),
            Backend::Postgres => format!(
                "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST({param} AS json))"
            ),
        }
    }
}

/// An open transaction on a [`Db`]; it dereferences to the `Db`, so the
/// store's functions run the same inside one or not.
pub(crate) struct Tx<'a> {
    db: &'a Db,
    open: bool,
}

impl Tx<'_> {
    pub(crate) fn commit(mut self) -> Result<(), BackendError> {
        self.open = false;
        self.db.batch("COMMIT")
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.db
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            // Nothing to do if it fails: the connection is then unusable,
            // and the next statement says so.
            let _ = self.db.batch("ROLLBACK");
        }
    }
}

impl From<BackendError> for Fault {
    fn from(e: BackendError) -> Fault {
        Fault::Sql(e)
    }
}

impl From<rusqlite::Error> for Fault {
    fn from(e: rusqlite::Error) -> Fault {
        Fault::Sql(e.into())
    }
}

impl From<rusqlite::types::Value> for Value {
    fn from(v: rusqlite::types::Value) -> Value {
        use rusqlite::types::Value as V;
        match v {
            V::Null => Value::Null,
            V::Integer(i) => Value::Int(i),
            V::Real(f) => Value::Real(f),
            V::Text(s) => Value::Text(s),
            // kvbench never stores blobs; reading one as text keeps a
            // message readable instead of failing obscurely.
            V::Blob(b) => Value::Text(String::from_utf8_lossy(&b).into_owned()),
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::TEXT | Type::VARCHAR | Type::UNKNOWN => i.to_string().to_sql(ty, out),
                _ => Err(format!("cannot bind an integer as {ty}").into()),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                _ => Err(format!("cannot bind a real number as {ty}").into()),
            },
            Value::Text(s) => s.as_str().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Value, BoxError> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            _ => Value::Text(String::from_sql(ty, raw).map_err(|_| {
                format!("cannot read a column of type {ty} (cast it in the query)")
            })?),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Value, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_renumbered_outside_literals_and_comments() {
        assert_eq!(
            postgres_params("SELECT a FROM t WHERE x = ?1 AND (?2 IS NULL OR y = ?2) LIMIT ?10"),
            "SELECT a FROM t WHERE x = $1 AND ($2 IS NULL OR y = $2) LIMIT $10"
        );
        assert_eq!(
            postgres_params("SELECT '?1', \"?2\", ?3 -- ?4\n, ?5"),
            "SELECT '?1', \"?2\", $3 -- ?4\n, $5"
        );
        assert_eq!(
            postgres_params("SELECT 'it''s ?1', ?2"),
            "SELECT 'it''s ?1', $2"
        );
    }

    #[test]
    fn integers_out_of_range_are_refused_not_wrapped() {
        assert!(u64::MAX.to_value().is_err());
        assert_eq!(
            (i64::MAX as u64).to_value().ok(),
            Some(Value::Int(i64::MAX))
        );
        assert!(u32::from_value(Value::Int(-1)).is_err());
        assert!(u64::from_value(Value::Int(-1)).is_err());
        assert_eq!(Option::<u64>::from_value(Value::Null).ok(), Some(None));
        assert!(String::from_value(Value::Int(1)).is_err());
    }
}
