//! Which node of a multi-node target a request goes to, computed exactly as
//! the servers (Redis Cluster's hash slots, `slots`) or the usual client
//! libraries (a Memcached pool's ketama ring, `ketama`) do it. A single
//! server is the one-node case of the same interface, so the connection
//! code has one path.
//!
//! Nothing here does I/O on the hot path; [`slots::discover`] (a blocking
//! `CLUSTER SLOTS` before the phase starts) is the only network call.

pub mod ketama;
pub mod slots;

use slots::SlotTable;
use std::net::SocketAddr;

/// The nodes of a target and how keys map onto them.
#[derive(Debug, Clone)]
pub enum Router {
    /// One server: every request goes to node 0.
    Single,
    /// Redis Cluster: CRC16 hash slots, updated by `MOVED` replies.
    Cluster(SlotTable),
}

impl Router {
    /// The node index a request for `key` goes to.
    #[inline]
    pub fn node_of(&self, key: &[u8]) -> usize {
        match self {
            Router::Single => 0,
            Router::Cluster(t) => t.node_of_slot(slots::slot_of(key)),
        }
    }

    /// How many nodes requests go to (one connection each per client).
    pub fn nodes(&self) -> usize {
        match self {
            Router::Single => 1,
            Router::Cluster(t) => t.nodes().len(),
        }
    }

    /// True when the target answers with redirects (`MOVED`, `ASK`).
    pub fn redirects(&self) -> bool {
        matches!(self, Router::Cluster(_))
    }
}

/// What a target looks like from the client: its nodes' addresses (one
/// connection per node per client) and how keys map onto them.
#[derive(Debug, Clone)]
pub enum Topology {
    /// One server.
    Single(SocketAddr),
    /// A Redis Cluster, found from any of these seed nodes: the masters and
    /// the slot map come from `CLUSTER SLOTS` when the phase starts.
    Cluster(Vec<SocketAddr>),
}

impl Topology {
    /// The first address (for messages and single-node uses).
    pub fn first(&self) -> SocketAddr {
        match self {
            Topology::Single(a) => *a,
            Topology::Cluster(seeds) => seeds[0],
        }
    }
}
