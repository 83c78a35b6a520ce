//! Everything that can go wrong while starting, stopping or probing a
//! server, as one error type whose messages name the server and its log.

use kvbench_model::SystemKind;
use std::io;

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
    /// A Sentinel group of a system that has none.
    #[error("{system} has no Sentinel (Sentinel groups are the Redis family's)")]
    NoSentinel {
        /// The server kind.
        system: SystemKind,
    },
    /// `--eviction` names a policy the system does not have.
    #[error("--eviction: {reason}")]
    Eviction {
        /// The server kind.
        system: SystemKind,
        /// Which policies it has.
        reason: String,
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
