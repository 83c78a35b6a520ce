//! Starts, stops and probes the servers under test. This crate never
//! generates load: it hands the engine an address and reads the server's own
//! view of itself (memory, CPU, counters) before and after.
//!
//! - [`process`]: a child process guard that always stops its server;
//! - [`ports`]: free loopback ports;
//! - [`system`]: per-server arguments, readiness checks and probes;
//! - [`proc`]: `/proc` readers (RSS, CPU time);
//! - [`env`]: facts about the machine.
#![deny(missing_docs)]

pub mod env;
pub mod ports;
pub mod proc;
pub mod process;
pub mod system;
mod wire;

pub use env::machine_environment;
pub use system::{find_binary, Server, ServerSpec, ServerVersion};

use std::path::PathBuf;

/// Why a server could not be started, stopped or probed.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The server binary is not installed.
    #[error("{binary} not found on PATH: install it with `apt-get install {package}` or pass --server-binary")]
    BinaryNotFound {
        /// The binary looked for.
        binary: String,
        /// The Debian package that provides it.
        package: String,
    },
    /// An explicitly named binary does not exist.
    #[error("server binary {0} does not exist")]
    NoSuchBinary(PathBuf),
    /// The server did not come up.
    #[error("{binary} did not start: {reason}{log}")]
    Start {
        /// The binary started.
        binary: String,
        /// What went wrong.
        reason: String,
        /// The tail of the server's log, prefixed for display.
        log: String,
    },
    /// Talking to the server failed.
    #[error("{addr}: {message}")]
    Probe {
        /// The server address.
        addr: String,
        /// What went wrong.
        message: String,
    },
    /// Local I/O (temporary directory, log file, spawning).
    #[error("{what}: {source}")]
    Io {
        /// What kvbench was doing.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}
