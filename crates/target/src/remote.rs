//! A server kvbench did not start (`--target HOST:PORT`).
//!
//! It has no process of ours, so nothing here reads `/proc` (another
//! process's figures would be wrong), checks a pid, or stops anything. The
//! server's own figures (memory, items, evictions, counters) still come from
//! its protocol. kvbench writes its records there and deletes nothing.

use crate::server::ServerVersion;
use crate::{system, TargetError};
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
    /// [`TargetError::Query`] when nothing answers in that protocol.
    pub fn connect(system: SystemKind, addr: SocketAddr) -> Result<RemoteServer, TargetError> {
        let server = RemoteServer { system, addr };
        system::identify(system, addr, QUERY_TIMEOUT).map_err(|m| server.failed(m))?;
        Ok(server)
    }

    fn failed(&self, message: String) -> TargetError {
        TargetError::Query {
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
    /// [`TargetError::Query`] when the server does not answer.
    pub fn probe(&self, stage: &str) -> Result<Probe, TargetError> {
        let snap =
            system::snapshot(self.system, self.addr, QUERY_TIMEOUT).map_err(|m| self.failed(m))?;
        Ok(Probe {
            stage: stage.to_string(),
            rss_bytes: None,
            server_memory_bytes: snap.memory_bytes,
            cpu_seconds: None,
            items: snap.items,
            evictions: snap.evictions,
        })
    }

    /// The server's version and (Redis) allocator.
    ///
    /// # Errors
    /// [`TargetError::Query`] when the server does not answer or reports no version.
    pub fn version(&self) -> Result<ServerVersion, TargetError> {
        let snap =
            system::snapshot(self.system, self.addr, QUERY_TIMEOUT).map_err(|m| self.failed(m))?;
        let version = snap
            .version
            .filter(|v| !v.is_empty())
            .ok_or_else(|| self.failed("the server did not report its version".into()))?;
        Ok(ServerVersion {
            version,
            allocator: snap.allocator,
        })
    }

    /// The server's command counters (see [`crate::Server::command_stats`]).
    ///
    /// # Errors
    /// [`TargetError::Query`] when the server does not answer.
    pub fn command_stats(&self) -> Result<Vec<(String, u64)>, TargetError> {
        system::command_stats(self.system, self.addr, QUERY_TIMEOUT)
            .map(|(_, stats)| stats)
            .map_err(|m| self.failed(m))
    }
}
