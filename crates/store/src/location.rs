//! Where a store lives: an SQLite file, or a PostgreSQL database named by a
//! `postgres://` URL. Its [`Display`](std::fmt::Display) (and `Debug`) never
//! shows a password, so every message may name the database freely.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// What replaces a password wherever a location is shown.
const REDACTED: &str = "***";

/// The URL prefixes that name a PostgreSQL database; anything else is an
/// SQLite file path.
const POSTGRES_PREFIXES: [&str; 2] = ["postgres://", "postgresql://"];

/// Where a [`crate::Store`] lives: an SQLite file (the default) or a
/// PostgreSQL database, from the `--db` argument.
///
/// A string starting with `postgres://` or `postgresql://` is a libpq-style
/// connection URL (`postgres://user:password@host:5432/dbname?param=value`,
/// as the `postgres` crate reads it); anything else is an SQLite file path.
/// Displaying a location never shows a password: it reads
/// `postgres://user:***@host:5432/dbname`.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL database. TLS is not supported yet: use it on loopback
    /// or over a VPN.
    Postgres(PostgresUrl),
}

/// A PostgreSQL connection URL that the `postgres` crate accepts. It keeps
/// the password to connect with but never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    url: String,
    shown: String,
}

/// A `--db` value that starts like a PostgreSQL URL but is not one. Its
/// message shows the URL with the password redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{shown}: not a PostgreSQL connection URL ({reason})")]
pub struct LocationError {
    shown: String,
    reason: String,
}

impl PostgresUrl {
    /// Parses `url`, which must start with `postgres://` or
    /// `postgresql://`.
    ///
    /// # Errors
    /// When the `postgres` crate refuses it; the message never holds the
    /// password.
    pub fn parse(url: &str) -> Result<PostgresUrl, LocationError> {
        let shown = redact(url);
        if !POSTGRES_PREFIXES.iter().any(|p| url.starts_with(p)) {
            return Err(LocationError {
                shown,
                reason: "it must start with postgres:// or postgresql://".into(),
            });
        }
        // The crate's own messages name options, never their values; the
        // underlying cause is kept as well for a usable message.
        postgres::Config::from_str(url).map_err(|e| LocationError {
            shown: shown.clone(),
            reason: crate::db::error_text(&e),
        })?;
        Ok(PostgresUrl {
            url: url.to_string(),
            shown,
        })
    }

    /// The connection settings, password included (for connecting only).
    pub(crate) fn config(&self) -> Result<postgres::Config, postgres::Error> {
        postgres::Config::from_str(&self.url)
    }
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PostgresUrl").field(&self.shown).finish()
    }
}

impl Location {
    /// Reads a `--db` value: a PostgreSQL URL by its prefix, else a path.
    ///
    /// # Errors
    /// A value with a PostgreSQL prefix that is not a valid URL.
    pub fn parse(text: &str) -> Result<Location, LocationError> {
        if POSTGRES_PREFIXES.iter().any(|p| text.starts_with(p)) {
            PostgresUrl::parse(text).map(Location::Postgres)
        } else {
            Ok(Location::Sqlite(PathBuf::from(text)))
        }
    }

    /// The SQLite file, or `None` for a PostgreSQL database.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            Location::Sqlite(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }

    /// Whether this is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }
}

impl FromStr for Location {
    type Err = LocationError;

    fn from_str(text: &str) -> Result<Location, LocationError> {
        Location::parse(text)
    }
}

impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Location {
        Location::Sqlite(path)
    }
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Location {
        Location::Sqlite(path.to_path_buf())
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => write!(f, "{url}"),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            Location::Postgres(url) => f.debug_tuple("Postgres").field(url).finish(),
        }
    }
}

/// `url` with its password replaced by `***`, wherever the `postgres` crate
/// would find one: between the first `:` and the first `@` after the
/// scheme, and in a `password=` query parameter. Any other text is kept.
fn redact(url: &str) -> String {
    let Some(prefix) = POSTGRES_PREFIXES.iter().find(|p| url.starts_with(*p)) else {
        return url.to_string();
    };
    let rest = &url[prefix.len()..];
    let mut out = String::from(*prefix);
    // The crate takes everything up to the first '@' as the credentials.
    let rest = match rest.find('@') {
        Some(at) => {
            let creds = &rest[..at];
            match creds.split_once(':') {
                Some((user, _)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(REDACTED);
                }
                None => out.push_str(creds),
            }
            out.push('@');
            &rest[at + 1..]
        }
        None => rest,
    };
    // Host and path run up to the first '?'; then key=value pairs.
    let (head, query) = match rest.find('?') {
        Some(q) => (&rest[..q], Some(&rest[q + 1..])),
        None => (rest, None),
    };
    out.push_str(head);
    if let Some(query) = query {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if decoded_key(key) == "password" => {
                    format!("{key}={REDACTED}")
                }
                _ => pair.to_string(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
}

/// A query key as the crate reads it (percent-decoded), for comparing.
fn decoded_key(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let (h, l) = (hex(h).unwrap_or(0), hex(l).unwrap_or(0));
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_choose_the_backend() {
        for url in [
            "postgres://u@localhost/db",
            "postgresql://localhost:5433/db",
        ] {
            assert!(Location::parse(url).expect("valid").is_postgres(), "{url}");
        }
        for path in [
            "kvbench.db",
            "/tmp/postgres://x",
            "postgres",
            "./postgres:/x",
        ] {
            assert_eq!(
                Location::parse(path).expect("a path"),
                Location::Sqlite(PathBuf::from(path))
            );
        }
    }

    #[test]
    fn display_and_debug_never_show_the_password() {
        let cases = [
            (
                "postgres://kv:s3cret@db.lan:5432/runs",
                "postgres://kv:***@db.lan:5432/runs",
            ),
            (
                "postgresql://kv:s3cret@db.lan/runs?application_name=x&password=s3cret",
                "postgresql://kv:***@db.lan/runs?application_name=x&password=***",
            ),
            (
                "postgres://db.lan/runs?pass%77ord=s3cret",
                "postgres://db.lan/runs?pass%77ord=***",
            ),
            ("postgres://kv@db.lan/runs", "postgres://kv@db.lan/runs"),
            (
                "postgres://kv:s3cr%40t:x@db.lan/runs",
                "postgres://kv:***@db.lan/runs",
            ),
        ];
        for (url, shown) in cases {
            let loc = Location::parse(url).expect("valid");
            assert_eq!(loc.to_string(), shown);
            assert!(!format!("{loc:?}").contains("s3cr"), "{loc:?}");
        }
        // A refused URL's message is redacted too.
        let err = Location::parse("postgres://kv:s3cret@db.lan/runs?port=nope").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("kv:***@db.lan") && !text.contains("s3cret"),
            "{text}"
        );
        assert!(!format!("{err:?}").contains("s3cret"));
    }
}
