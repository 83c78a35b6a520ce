//! Starts, stops and probes the systems under test (Redis, Valkey,
//! Memcached, and any server speaking their protocols).
//!
//! A [`Server`] is a guard around a private server process: started in the
//! foreground on a free loopback port, in a fresh temporary directory, with
//! every setting that differs from the server's defaults recorded as a
//! [`Setting`]. Dropping the guard stops the process and removes the directory;
//! the process also dies if kvbench itself is killed. With `--netns` each
//! process starts in a network namespace of its own instead ([`netns`]).
//!
//! This crate must not generate load: everything here is cold path (blocking
//! sockets, one short-lived connection per probe). It must never leave a server
//! process running, never touch a server it did not start, and never report a
//! number it could not read (such fields stay `None`).
#![deny(missing_docs)]

pub mod aerospike;
pub mod canary;
mod cluster;
mod deployment;
mod env;
pub mod netns;
mod pool;
mod ports;
mod probe;
mod process;
mod proxy;
mod remote;
mod server;
mod system;
pub mod workdir;

use std::io;
use std::path::{Path, PathBuf};

pub use cluster::Cluster;
pub use deployment::Deployment;
pub use env::{machine_environment, process_cpu_seconds};
pub use kvbench_model::{Environment, Probe, Protocol, Setting, SystemKind, TopologyKind};
pub use netns::{Host, Hosts, Link, NetnsError, Network};
pub use pool::Pool;
pub use process::{Ending, ProcessGuard};
pub use proxy::Proxied;
pub use remote::RemoteServer;
pub use server::{Server, ServerSpec, ServerVersion};

/// Checks arguments meant for [`ServerSpec::extra_args`] before anything
/// starts: options that would break the private-server guarantees (port,
/// bind address, daemonizing, ...) are refused.
///
/// # Errors
/// [`ServerError::ForbiddenArgument`] naming the first such argument.
pub fn check_extra_args(system: SystemKind, args: &[String]) -> Result<(), ServerError> {
    system::user_settings(system, args).map(drop)
}

/// How many client connections at once a private server of `system`
/// started with `extra` arguments accepts; the option that sets it, as it is
/// written on a command line (for the message that asks for fewer clients
/// or a higher limit); and the option's value.
///
/// # Errors
/// As [`check_extra_args`].
pub fn connection_limit(
    system: SystemKind,
    extra: &[String],
) -> Result<(u64, String, u64), ServerError> {
    let limit = system::of(system).connection_limit();
    let set = system::user_settings(system, extra)?
        .into_iter()
        .rev()
        .find(|s| s.name == limit.option)
        .and_then(|s| s.value.trim().parse().ok())
        .unwrap_or(limit.default);
    let option = if limit.option.starts_with('-') {
        limit.option.to_string()
    } else {
        format!("--{}", limit.option)
    };
    Ok((set.saturating_sub(limit.reserved), option, set))
}

/// Everything that can go wrong while starting, stopping or probing a server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The server binary was not found (or is not an executable file).
    #[error("{}", binary_not_found(binary, hint))]
    BinaryNotFound {
        /// The name searched on `PATH`, or the explicit path given.
        binary: String,
        /// How to get it (the package to install, or the script that does).
        hint: String,
    },
    /// A server-side cluster of a system that has none.
    #[error("{system} has no server-side cluster (a Memcached pool is hashed by the client)")]
    NoCluster {
        /// The server kind.
        system: SystemKind,
    },
    /// The cluster's nodes were started but did not form a working cluster.
    #[error("the {system} cluster did not form: {reason}")]
    ClusterFailed {
        /// The server kind.
        system: SystemKind,
        /// What went wrong, naming the node.
        reason: String,
    },
    /// A caller-supplied extra argument would break the private-server
    /// guarantees (port, bind address, foreground mode).
    #[error("{system} extra argument `{arg}` is not allowed: {reason}")]
    ForbiddenArgument {
        /// The server kind.
        system: SystemKind,
        /// The offending argument.
        arg: String,
        /// Why kvbench must control it.
        reason: &'static str,
    },
    /// A local I/O operation failed (temporary directory, log file, spawn, /proc).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The server did not become ready; `log_tail` holds the last lines it printed.
    #[error("{system} did not start: {reason}\n--- last lines of the server log ---\n{log_tail}")]
    StartFailed {
        /// The server kind.
        system: SystemKind,
        /// What went wrong.
        reason: String,
        /// The last lines of the server's stdout/stderr.
        log_tail: String,
    },
    /// A private Aerospike node did not start, answer or stop; `log_tail`
    /// holds the last lines of its log.
    #[error("aerospike: {reason}\n--- last lines of the server log ---\n{log_tail}")]
    Aerospike {
        /// What went wrong, naming the node.
        reason: String,
        /// The last lines of its log.
        log_tail: String,
    },
    /// The server process is no longer running.
    #[error("{system} (pid {pid}) is no longer running ({status})\n--- last lines of the server log ---\n{log_tail}")]
    Exited {
        /// The server kind.
        system: SystemKind,
        /// The process id it had.
        pid: u32,
        /// How it ended, as the OS reported it.
        status: String,
        /// The last lines of the server's stdout/stderr.
        log_tail: String,
    },
    /// A query to the server failed or its answer made no sense.
    #[error("{system} at {addr}: {message}")]
    Query {
        /// The server kind.
        system: SystemKind,
        /// The address queried.
        addr: std::net::SocketAddr,
        /// What went wrong.
        message: String,
    },
    /// The server did not stop cleanly (it had already died, needed SIGKILL,
    /// or exited with a failure status); it is stopped now.
    #[error("{system} (pid {pid}) did not stop cleanly: {message}")]
    Stop {
        /// The server kind.
        system: SystemKind,
        /// The process id it had.
        pid: u32,
        /// What happened.
        message: String,
    },
}

fn binary_not_found(binary: &str, hint: &str) -> String {
    let what = if binary.contains('/') {
        format!("{binary} does not exist or is not an executable file")
    } else {
        format!("{binary} not found on PATH")
    };
    format!("{what}: {hint}, or pass --server-bin PATH")
}

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
