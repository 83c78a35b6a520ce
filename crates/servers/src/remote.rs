//! A system kvbench did not start (`--target`): one server, a Redis
//! Cluster's masters, or a Memcached pool's nodes, reached with the
//! target's TLS and AUTH settings.
//!
//! It has no process of ours, so nothing here reads `/proc` (another
//! process's figures would be wrong), checks a pid, or stops anything. The
//! servers' own figures (memory, resident size and CPU time where the
//! server reports them, items, evictions, counters) come from their
//! protocol. What kvbench may change on such a server is decided by the
//! caller's flags; here are only the means (counting keys, flushing).

use crate::server::ServerVersion;
use crate::system::{self, Peer};
use crate::ServerError;
use kvbench_connect::Access;
use kvbench_model::{Endpoints, NodeProbe, Probe, SystemKind, TopologyKind};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// A reachable system at one or more addresses.
#[derive(Debug, Clone)]
pub struct RemoteServer {
    system: SystemKind,
    kind: TopologyKind,
    /// Every node probed: the server, a cluster's masters, a pool's nodes,
    /// a Sentinel group's master.
    nodes: Vec<SocketAddr>,
    access: Arc<Access>,
    /// Where clients start: the nodes, or a Sentinel group's sentinels.
    entry: Vec<SocketAddr>,
    /// A Sentinel group's name.
    group: Option<String>,
}

impl RemoteServer {
    /// Checks that every node answers as `system` (a server that does not
    /// say what it is, or refuses our credentials, is refused here).
    ///
    /// # Errors
    /// [`ServerError::Query`] naming the first node that does not answer.
    pub fn connect(
        system: SystemKind,
        kind: TopologyKind,
        nodes: Vec<SocketAddr>,
        access: Arc<Access>,
    ) -> Result<RemoteServer, ServerError> {
        let server = RemoteServer {
            system,
            kind,
            entry: nodes.clone(),
            nodes,
            access,
            group: None,
        };
        for &addr in &server.nodes {
            server.version_of(addr)?;
        }
        Ok(server)
    }

    /// Clients start at `sentinels`, which watch this server as `group`.
    pub fn behind_sentinels(mut self, sentinels: Vec<SocketAddr>, group: String) -> RemoteServer {
        self.entry = sentinels;
        self.group = Some(group);
        self
    }

    /// Where clients start: the one server (a proxy's address too), a
    /// cluster's masters as seeds, a pool's nodes, a Sentinel group's
    /// sentinels.
    pub fn endpoints(&self) -> Endpoints {
        match (self.kind, &self.group) {
            (TopologyKind::Sentinel, Some(group)) => Endpoints::Sentinel {
                sentinels: self.entry.clone(),
                group: group.clone(),
            },
            (TopologyKind::Cluster, _) => Endpoints::Cluster(self.entry.clone()),
            (TopologyKind::Pool, _) => Endpoints::Pool(self.entry.clone()),
            _ => Endpoints::Single(self.entry[0]),
        }
    }

    fn peer(&self, addr: SocketAddr) -> Peer<'_> {
        Peer {
            addr,
            access: &self.access,
        }
    }

    fn failed(&self, addr: SocketAddr, message: String) -> ServerError {
        ServerError::Query {
            system: self.system,
            addr,
            message,
        }
    }

    fn snapshot(&self, addr: SocketAddr) -> Result<system::Snapshot, ServerError> {
        system::of(self.system)
            .snapshot(self.peer(addr), QUERY_TIMEOUT)
            .map_err(|m| self.failed(addr, m))
    }

    fn version_of(&self, addr: SocketAddr) -> Result<ServerVersion, ServerError> {
        ServerVersion::from_snapshot(self.snapshot(addr)?).map_err(|m| self.failed(addr, m))
    }

    /// The first node's address.
    pub fn addr(&self) -> SocketAddr {
        self.nodes[0]
    }

    /// Every node probed.
    pub fn nodes(&self) -> &[SocketAddr] {
        &self.nodes
    }

    /// How it is deployed.
    pub fn kind(&self) -> TopologyKind {
        self.kind
    }

    /// Which server this is.
    pub fn system(&self) -> SystemKind {
        self.system
    }

    /// The servers' own figures, per node and summed for several nodes:
    /// memory, items and evictions as they report them, resident size and
    /// CPU time where they report those (Redis's INFO does; Memcached
    /// reports CPU but not its resident size).
    ///
    /// # Errors
    /// [`ServerError::Query`] when a node does not answer.
    pub fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for &addr in &self.nodes {
            let snap = self.snapshot(addr)?;
            let (rss, cpu) = (snap.reported_rss, snap.reported_cpu);
            let p = snap.probe(stage, rss, cpu);
            if self.nodes.len() == 1 {
                return Ok(p);
            }
            let role = match self.kind {
                TopologyKind::Cluster => "master",
                _ => "node",
            };
            nodes.push(NodeProbe::of(addr.to_string(), role.to_string(), &p));
        }
        Ok(Probe::summed(stage, nodes))
    }

    /// The CPU seconds the servers report for themselves, summed; `None`
    /// when any does not report them.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.nodes
            .iter()
            .map(|&a| self.snapshot(a).ok().and_then(|s| s.reported_cpu))
            .sum()
    }

    /// Opens `per_node` connections to every node and holds them all at
    /// once, as the run will, each asked the system's cheapest question: a
    /// server that accepts fewer (Redis's `maxclients`, Memcached's `-c`)
    /// is found before anything is loaded, with its own words.
    ///
    /// # Errors
    /// [`ServerError::Query`] naming the node, how many connections it
    /// accepted, and what it said when it refused the next.
    pub fn check_capacity(&self, per_node: u32) -> Result<(), ServerError> {
        let Some(live) = system::of(self.system).liveness() else {
            return Ok(());
        };
        // One reply line (PING's `+PONG`, `VERSION 1.6.18`, or a refusal).
        let line = |b: &[u8]| -> Result<Option<(Vec<u8>, usize)>, String> {
            Ok(b.iter()
                .position(|&c| c == b'\n')
                .map(|i| (b[..=i].to_vec(), i + 1)))
        };
        for &addr in &self.nodes {
            let mut held = Vec::with_capacity(per_node as usize);
            for i in 0..per_node {
                let answer = kvbench_connect::open(addr, &self.access, QUERY_TIMEOUT)
                    .map_err(|e| e.to_string())
                    .and_then(|mut stream| {
                        kvbench_connect::exchange_on(&mut stream, live.request, 4096, line)
                            .map(|reply| (stream, reply))
                    });
                let refusal = match answer {
                    Ok((stream, reply)) => match (live.refusal)(&reply) {
                        None => {
                            held.push(stream);
                            continue;
                        }
                        Some(text) => String::from_utf8_lossy(text).into_owned(),
                    },
                    Err(e) => e,
                };
                return Err(self.failed(
                    addr,
                    format!(
                        "accepted {i} of the {per_node} connections the run holds at once, then: {refusal}; use fewer --clients, or raise the server's connection limit"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Keys held now, summed over the nodes (Redis: in the URL's database).
    ///
    /// # Errors
    /// [`ServerError::Query`] when a node does not answer or does not say.
    pub fn keys(&self) -> Result<u64, ServerError> {
        let mut total = 0;
        for &addr in &self.nodes {
            total += self.snapshot(addr)?.items.ok_or_else(|| {
                self.failed(
                    addr,
                    "the server did not report how many keys it holds".into(),
                )
            })?;
        }
        Ok(total)
    }

    /// Deletes every key of the URL's database on every node (Redis
    /// `FLUSHDB`, Memcached `flush_all`). Only for `--flush`.
    ///
    /// # Errors
    /// [`ServerError::Query`] naming the node that refused.
    pub fn flush(&self) -> Result<(), ServerError> {
        for &addr in &self.nodes {
            system::of(self.system)
                .flush(self.peer(addr), QUERY_TIMEOUT)
                .map_err(|m| self.failed(addr, m))?;
        }
        Ok(())
    }

    /// The first node's version and (Redis) allocator.
    ///
    /// # Errors
    /// [`ServerError::Query`] when it does not answer or reports no version.
    pub fn version(&self) -> Result<ServerVersion, ServerError> {
        self.version_of(self.addr())
    }

    /// The first node's command counters (see [`crate::Server::command_stats`]).
    ///
    /// # Errors
    /// [`ServerError::Query`] when the server does not answer.
    pub fn command_stats(&self) -> Result<Vec<(String, u64)>, ServerError> {
        let addr = self.addr();
        system::of(self.system)
            .command_stats(self.peer(addr), QUERY_TIMEOUT)
            .map(|(_, stats)| stats)
            .map_err(|m| self.failed(addr, m))
    }
}
