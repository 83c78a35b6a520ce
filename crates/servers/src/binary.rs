//! Finding a server's binary (on PATH, in the project's virtual environment,
//! or where the user said) and reading the version it reports.

use crate::error::ServerError;
use crate::system;
use kvbench_model::{Protocol, SystemKind};
use std::io;
use std::path::{Path, PathBuf};

/// Finds the server binary: `explicit` when given (a bare name is searched on
/// `PATH`, like a shell would), else the system's usual name on `PATH`.
///
/// Fails with [`ServerError::BinaryNotFound`], whose message says how to
/// get the binary.
pub fn find_binary(system: SystemKind, explicit: Option<&Path>) -> Result<PathBuf, ServerError> {
    let sys = system::of(system);
    let from_env = sys
        .binary_env()
        .and_then(std::env::var_os)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let default = from_env.unwrap_or_else(|| PathBuf::from(sys.binary()));
    find_in_path(explicit.unwrap_or(&default), sys.install_hint())
}

/// The version a server binary reports without starting (`--version` for
/// Redis and Valkey, `-V` for Memcached): `7.0.15`, `1.6.18`. Cheap enough
/// to run while planning, so an experiment's cell keys can include it.
///
/// # Errors
/// When the binary is missing, does not run, or prints no version.
pub fn binary_version(system: SystemKind, explicit: Option<&Path>) -> Result<String, ServerError> {
    let bin = find_binary(system, explicit)?;
    let flag = match system.protocol() {
        Protocol::Memcache => "-V",
        Protocol::Resp | Protocol::Aerospike => "--version",
    };
    let out = std::process::Command::new(&bin)
        .arg(flag)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| ServerError::Io {
            what: format!("run {} {flag}", bin.display()),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    version_in(&text).ok_or_else(|| ServerError::Io {
        what: format!("read the version {} {flag} prints", bin.display()),
        source: io::Error::new(
            io::ErrorKind::InvalidData,
            format!("no version in {:?}", text.trim()),
        ),
    })
}

/// `Redis server v=7.0.15 sha=...` → `7.0.15`; `memcached 1.6.18` → `1.6.18`.
fn version_in(text: &str) -> Option<String> {
    let words = text.lines().next()?.split_whitespace();
    let mut fallback = None;
    for w in words {
        if let Some(v) = w.strip_prefix("v=") {
            return Some(v.to_string());
        }
        if fallback.is_none() && w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.') {
            fallback = Some(w.to_string());
        }
    }
    fallback
}

/// `wanted` as a path (a bare name is searched on `PATH`, like a shell
/// would); `hint` says how to get it when it is not there.
pub(crate) fn find_in_path(wanted: &Path, hint: &str) -> Result<PathBuf, ServerError> {
    let found = if wanted.components().count() > 1 || wanted.is_absolute() {
        is_executable_file(wanted).then(|| wanted.to_path_buf())
    } else {
        search_path(wanted)
    };
    found.ok_or_else(|| ServerError::BinaryNotFound {
        binary: wanted.display().to_string(),
        hint: hint.to_string(),
    })
}

fn search_path(name: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| {
            // An empty PATH entry means the current directory (POSIX).
            if dir.as_os_str().is_empty() {
                PathBuf::from(".").join(name)
            } else {
                dir.join(name)
            }
        })
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_servers_print() {
        assert_eq!(
            version_in("Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0").as_deref(),
            Some("7.0.15")
        );
        assert_eq!(
            version_in("Valkey server v=9.1.2 sha=0").as_deref(),
            Some("9.1.2")
        );
        assert_eq!(version_in("memcached 1.6.18\n").as_deref(), Some("1.6.18"));
        assert_eq!(version_in("usage: x").as_deref(), None);
    }

    #[test]
    fn missing_binary_names_the_package() {
        let err = find_binary(
            SystemKind::Redis,
            Some(Path::new("/nonexistent/redis-server")),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("/nonexistent/redis-server does not exist"),
            "{msg}"
        );
        assert!(!msg.contains('\n'), "{msg}");
        let err = find_binary(
            SystemKind::Memcached,
            Some(Path::new("no-such-memcached-xyz")),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("not found on PATH"), "{msg}");
        assert!(msg.contains("apt-get install memcached"), "{msg}");
        assert!(
            matches!(err, ServerError::BinaryNotFound { ref hint, .. } if hint.contains("apt-get install memcached"))
        );
        let msg = find_binary(SystemKind::Valkey, None)
            .map(|_| String::new())
            .unwrap_or_else(|e| e.to_string());
        // Found on PATH when scripts/setup put it there; else the hint.
        assert!(msg.is_empty() || msg.contains("scripts/setup"), "{msg}");
    }

    #[test]
    fn a_directory_is_not_a_binary() {
        assert!(find_binary(SystemKind::Redis, Some(Path::new("/tmp"))).is_err());
    }
}
