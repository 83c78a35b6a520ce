//! Why a phase could not run: one error type for every caller of the engine.

use std::net::SocketAddr;

/// Why a phase could not run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A connection could not be opened; nothing was measured.
    #[error("cannot connect to {addr}: {message}")]
    Connect {
        /// The server address.
        addr: SocketAddr,
        /// What the OS said.
        message: String,
    },
    /// The stop flag was raised (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// Settings the engine cannot run with.
    #[error("{0}")]
    Config(String),
}

impl EngineError {
    /// A set-up failure of a connection to `addr` as the engine reports it:
    /// the message names the step (connect, TLS handshake, AUTH), never a
    /// password.
    pub(crate) fn connect(addr: SocketAddr) -> impl Fn(kvbench_connect::ConnectError) -> Self {
        move |e| EngineError::Connect {
            addr,
            message: e.to_string(),
        }
    }
}
