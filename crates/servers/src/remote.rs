//! A server kvbench did not start (`--target HOST:PORT`).
//!
//! It has no process of ours, so nothing here reads `/proc` (another
//! process's figures would be wrong), checks a pid, or stops anything. The
//! server's own figures (memory, items, evictions, counters) still come from
//! its protocol. kvbench writes its records there and deletes nothing.

use crate::server::ServerVersion;
use crate::{system, ServerError};
use kvbench_model::{Probe, SystemKind};
use std::net::SocketAddr;
use std::time::Duration;

const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// A reachable server at an address.
#[derive(Debug, Clone)]
pub struct RemoteServer {
    system: SystemKind,
    addr: SocketAddr,
}

impl RemoteServer {
    /// Checks that `addr` answers as `system`.
    ///
    /// # Errors
    /// [`ServerError::Query`] when nothing answers in that protocol.
    pub fn connect(system: SystemKind, addr: SocketAddr) -> Result<RemoteServer, ServerError> {
        let server = RemoteServer { system, addr };
        system::identify(system, addr, QUERY_TIMEOUT).map_err(|m| server.failed(m))?;
        Ok(server)
    }

    fn failed(&self, message: String) -> ServerError {
        ServerError::Query {
            system: self.system,
            addr: self.addr,
            message,
        }
    }

    /// The address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Which server this is.
    pub fn system(&self) -> SystemKind {
        self.system
    }

    /// The server's own figures; RSS and CPU time are unknown (`None`).
    ///
    /// # Errors
    /// [`ServerError::Query`] when the server does not answer.
    pub fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        let snap = system::of(self.system)
            .snapshot(self.addr, QUERY_TIMEOUT)
            .map_err(|m| self.failed(m))?;
        Ok(snap.probe(stage, None, None))
    }

    /// The server's version and (Redis) allocator.
    ///
    /// # Errors
    /// [`ServerError::Query`] when the server does not answer or reports no version.
    pub fn version(&self) -> Result<ServerVersion, ServerError> {
        let snap = system::of(self.system)
            .snapshot(self.addr, QUERY_TIMEOUT)
            .map_err(|m| self.failed(m))?;
        ServerVersion::from_snapshot(snap).map_err(|m| self.failed(m))
    }

    /// The server's command counters (see [`crate::Server::command_stats`]).
    ///
    /// # Errors
    /// [`ServerError::Query`] when the server does not answer.
    pub fn command_stats(&self) -> Result<Vec<(String, u64)>, ServerError> {
        system::of(self.system)
            .command_stats(self.addr, QUERY_TIMEOUT)
            .map(|(_, stats)| stats)
            .map_err(|m| self.failed(m))
    }
}
