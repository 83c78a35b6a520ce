//! A Memcached pool: N independent private servers. The servers know
//! nothing of each other; the client decides which one holds a key (the
//! engine's ketama ring), as the usual client libraries do.

use crate::cluster::{lost, probe_nodes, stop_all};
use crate::server::ServerVersion;
use crate::{Hosts, Server, ServerError, ServerSpec};
use kvbench_model::{Probe, Setting};
use std::net::SocketAddr;

/// Running pool servers; dropping the pool stops them all.
pub struct Pool {
    nodes: Vec<Server>,
}

impl Pool {
    /// Starts `n` servers of `spec` (each with `spec`'s memory limit).
    ///
    /// # Errors
    /// As [`Server::start`]; the servers started so far are stopped.
    pub fn start(spec: &ServerSpec, n: usize) -> Result<Pool, ServerError> {
        Self::start_on(spec, n, Hosts::Loopback)
    }

    /// [`Pool::start`] with server `i` on `hosts`' host `i`.
    ///
    /// # Errors
    /// As [`Pool::start`].
    pub fn start_on(spec: &ServerSpec, n: usize, hosts: Hosts<'_>) -> Result<Pool, ServerError> {
        Ok(Pool {
            nodes: (0..n)
                .map(|i| Server::start_on(spec, &hosts.host(i)?))
                .collect::<Result<_, _>>()?,
        })
    }

    /// The servers, in the order the ring is built from.
    pub fn nodes(&self) -> &[Server] {
        &self.nodes
    }

    /// Their addresses, in ring order.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(Server::addr).collect()
    }

    /// Every server's probe and their sums.
    ///
    /// # Errors
    /// As [`Server::probe`], for the first server that fails.
    pub fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        probe_nodes(stage, &[("node", &self.nodes)])
    }

    /// The binary every server runs.
    pub fn binary(&self) -> &std::path::Path {
        self.nodes[0].binary()
    }

    /// Every setting that differs from the server's defaults (the same on each).
    pub fn settings(&self) -> &[Setting] {
        self.nodes[0].settings()
    }

    /// What the first server says it is.
    ///
    /// # Errors
    /// As [`Server::version`].
    pub fn version(&self) -> Result<ServerVersion, ServerError> {
        self.nodes[0].version()
    }

    /// All servers' CPU seconds so far; `None` once any has exited.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.nodes.iter().map(Server::cpu_seconds).sum()
    }

    /// Servers whose process has exited, as `addr (how)`.
    pub fn lost_nodes(&self) -> Vec<String> {
        lost(self.nodes.iter())
    }

    /// Stops every server, reporting the first that did not stop cleanly
    /// (all are stopped either way); one that had already exited is
    /// reported by [`Pool::lost_nodes`] instead.
    ///
    /// # Errors
    /// As [`Server::stop`].
    pub fn stop(self) -> Result<(), ServerError> {
        stop_all(self.nodes.into_iter())
    }
}
