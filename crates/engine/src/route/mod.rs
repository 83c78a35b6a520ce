//! Which node of a multi-node target a request goes to, computed exactly as
//! the servers (Redis Cluster's hash slots, `slots`) or the usual client
//! libraries (a Memcached pool's ketama ring, `ketama`) do it. A single
//! server is the one-node case of the same interface, so the connection
//! code has one path.
//!
//! Nothing here does I/O on the hot path; [`slots::discover`] (a blocking
//! `CLUSTER SLOTS` before the phase starts, and refreshes when asked for)
//! and [`sentinel::Sentinel`] (asking the sentinels for the master before
//! the phase, and listening to them on threads of its own while it runs)
//! are the only network calls.

pub mod ketama;
mod reach;
pub mod sentinel;
pub mod slots;

pub use reach::{reach, Reached};

use crate::driver::Driver;
use crate::EngineError;
use ketama::{Continuum, Variant};
use kvbench_connect::Access;
use kvbench_model::Endpoints;
use kvbench_workload::keys::KeyName;
use sentinel::Sentinel;
use slots::SlotTable;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The longest key a Memcached pool routes (the protocol's limit is 250
/// bytes; the driver refuses longer keys before a run starts).
const MAX_POOL_KEY: usize = 256;

/// The nodes of a target and how keys map onto them.
// One per worker thread: the cluster's table inline (its runs read on
// every request) is worth more than a small enum.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Router {
    /// One server: every request goes to node 0.
    Single,
    /// The master of a Sentinel group: every request goes to node 0,
    /// wherever the sentinels say the master is now.
    Sentinel(Arc<Sentinel>),
    /// Redis Cluster: CRC16 hash slots, updated by `MOVED` replies.
    Cluster(SlotTable),
    /// A Memcached pool: a ketama ring over the key as it goes on the wire
    /// (`prefix` + record key, what the client library hashes).
    Pool {
        /// The ring.
        ring: Continuum,
        /// What the driver puts before a record key on the wire.
        prefix: Vec<u8>,
    },
}

/// A cluster's node for `key`. Out of line, with [`pool_node_of`], so that
/// [`Router::node_of`] stays small enough to inline for one node, where it
/// is a constant (the slot's hash and the pool's stack buffer inlined made
/// it a call of 26 instructions per request).
#[inline(never)]
fn cluster_node_of(table: &SlotTable, key: &[u8]) -> usize {
    table.node_of_slot(slots::slot_of(key))
}

/// A cluster's node for a record's `name` (see [`cluster_node_of`]).
#[inline(never)]
fn cluster_node_of_name(table: &SlotTable, name: &KeyName) -> usize {
    table.node_of_slot(slots::slot_of_name(name))
}

/// A pool's server for a record's `name` (see [`pool_node_of`]).
#[inline(never)]
fn pool_node_of_name(ring: &Continuum, prefix: &[u8], name: &KeyName) -> usize {
    let mut room = [0u8; KeyName::ROOM];
    pool_node_of(ring, prefix, name.bytes_in(&mut room))
}

/// A pool's server for `key` sent with `prefix` (see [`cluster_node_of`]).
#[inline(never)]
fn pool_node_of(ring: &Continuum, prefix: &[u8], key: &[u8]) -> usize {
    if prefix.is_empty() {
        return ring.server_for(key);
    }
    // Joined on the stack: routing allocates nothing.
    let mut wire = [0u8; MAX_POOL_KEY];
    let n = (prefix.len() + key.len()).min(MAX_POOL_KEY);
    let p = prefix.len().min(n);
    wire[..p].copy_from_slice(&prefix[..p]);
    wire[p..n].copy_from_slice(&key[..n - p]);
    ring.server_for(&wire[..n])
}

impl Router {
    /// The node index a request for `key` goes to.
    #[inline]
    pub fn node_of(&self, key: &[u8]) -> usize {
        match self {
            Router::Single | Router::Sentinel(_) => 0,
            Router::Cluster(t) => cluster_node_of(t, key),
            Router::Pool { ring, prefix } => pool_node_of(ring, prefix, key),
        }
    }

    /// [`node_of`](Self::node_of) the key `name` names, before it is
    /// written anywhere: the client then writes it once, into the request
    /// on the node's connection, where a key buffer cost a copy and the
    /// encoders' general path (docs/performance.md).
    #[inline]
    pub fn node_of_name(&self, name: &KeyName) -> usize {
        match self {
            Router::Single | Router::Sentinel(_) => 0,
            Router::Cluster(t) => cluster_node_of_name(t, name),
            Router::Pool { ring, prefix } => pool_node_of_name(ring, prefix, name),
        }
    }

    /// How many nodes requests go to (one connection each per client).
    pub fn nodes(&self) -> usize {
        match self {
            Router::Single | Router::Sentinel(_) => 1,
            Router::Cluster(t) => t.node_count(),
            Router::Pool { ring, .. } => ring.servers(),
        }
    }

    /// True when a request's node depends on its key (a cluster, a pool):
    /// otherwise every request goes to the one node, and the client need
    /// not have the key before it encodes the request.
    pub fn routes_by_key(&self) -> bool {
        matches!(self, Router::Cluster(_) | Router::Pool { .. })
    }

    /// True when the target answers with redirects (`MOVED`, `ASK`).
    pub fn redirects(&self) -> bool {
        matches!(self, Router::Cluster(_))
    }

    /// The master this target follows across failovers, when it does.
    pub fn follows(&self) -> Option<&Arc<Sentinel>> {
        match self {
            Router::Sentinel(s) => Some(s),
            _ => None,
        }
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
    /// A Memcached pool: every node, in the order the ring is built from,
    /// and the client library whose ring to reproduce.
    Pool(Vec<SocketAddr>, Variant),
    /// The master of a Sentinel group: the sentinels to ask, and the
    /// group's name.
    Sentinel(Vec<SocketAddr>, String),
}

impl Topology {
    /// What the engine connects to for `endpoints`, a pool's keys placed
    /// as the client library `pool_hash` places them.
    pub fn of(endpoints: Endpoints, pool_hash: Variant) -> Topology {
        match endpoints {
            Endpoints::Single(a) => Topology::Single(a),
            Endpoints::Cluster(seeds) => Topology::Cluster(seeds),
            Endpoints::Pool(nodes) => Topology::Pool(nodes, pool_hash),
            Endpoints::Sentinel { sentinels, group } => Topology::Sentinel(sentinels, group),
        }
    }

    /// Back to the endpoints and, for a pool, its ring (what a scaled-out
    /// worker is sent).
    pub fn endpoints(&self) -> (Endpoints, Option<Variant>) {
        match self {
            Topology::Single(a) => (Endpoints::Single(*a), None),
            Topology::Cluster(seeds) => (Endpoints::Cluster(seeds.clone()), None),
            Topology::Pool(nodes, v) => (Endpoints::Pool(nodes.clone()), Some(*v)),
            Topology::Sentinel(sentinels, group) => (
                Endpoints::Sentinel {
                    sentinels: sentinels.clone(),
                    group: group.clone(),
                },
                None,
            ),
        }
    }
}

/// The ring of a pool of `nodes` for `variant`, hosts written as their IP
/// addresses (kvbench connects by address, as a client given `ip:port` does).
///
/// # Errors
/// A message when the ring cannot be built (no nodes).
pub fn pool_ring(nodes: &[SocketAddr], variant: Variant) -> Result<Continuum, String> {
    let hosts: Vec<String> = nodes.iter().map(|a| a.ip().to_string()).collect();
    let servers: Vec<(&str, u16)> = hosts
        .iter()
        .zip(nodes)
        .map(|(h, a)| (h.as_str(), a.port()))
        .collect();
    Continuum::new(variant, &servers).map_err(|e| e.to_string())
}

/// The nodes a client connects to (one connection each) and how keys map
/// onto them: a cluster's masters and slot map come from its seeds, a
/// pool's ring from its nodes, a Sentinel group's master from its
/// sentinels.
///
/// # Errors
/// [`EngineError::Connect`] when no seed gives a complete slot map or no
/// sentinel names the master, [`EngineError::Config`] for a pool without
/// nodes.
pub fn connect_plan(
    topology: &Topology,
    driver: &Driver,
    access: &Access,
    timeout: Duration,
) -> Result<(Vec<SocketAddr>, Router), EngineError> {
    Ok(match topology {
        Topology::Single(addr) => (vec![*addr], Router::Single),
        Topology::Cluster(seeds) => {
            let table = slots::discover(seeds, access, timeout).map_err(unreached(seeds))?;
            (table.all_nodes(), Router::Cluster(table))
        }
        Topology::Pool(nodes, variant) => {
            let ring = pool_ring(nodes, *variant).map_err(EngineError::Config)?;
            let prefix = driver.wire_prefix().to_vec();
            (nodes.clone(), Router::Pool { ring, prefix })
        }
        Topology::Sentinel(sentinels, name) => {
            let s = Sentinel::discover(sentinels, name, timeout).map_err(unreached(sentinels))?;
            (vec![s.master()], Router::Sentinel(Arc::new(s)))
        }
    })
}

/// A discovery through `asked` (seeds, sentinels) that found nothing, as a
/// connection error naming the first of them.
fn unreached(asked: &[SocketAddr]) -> impl Fn(String) -> EngineError + '_ {
    move |message| EngineError::Connect {
        addr: asked.first().copied().unwrap_or(([0, 0, 0, 0], 0).into()),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvbench_workload::keys::KeyNamer;

    #[test]
    fn a_pool_places_a_name_where_it_places_its_bytes() {
        // Four servers, every ring variant, with and without the wire
        // prefix the driver puts before a key.
        let servers = [
            ("10.0.0.1", 11211),
            ("10.0.0.2", 11211),
            ("10.0.0.3", 11212),
            ("h", 1),
        ];
        for variant in [
            Variant::Libmemcached,
            Variant::LibmemcachedMd5,
            Variant::Spymemcached,
        ] {
            for prefix in [&b""[..], b"kv:"] {
                let ring = Continuum::new(variant, &servers).expect("four servers");
                let router = Router::Pool {
                    ring,
                    prefix: prefix.to_vec(),
                };
                let mut seen = [false; 4];
                for namer in [
                    KeyNamer::default(),
                    KeyNamer::new(true, 12).with_prefix("k"),
                ] {
                    for keynum in 0..2_000 {
                        let name = namer.name(keynum).expect("a name of the usual form");
                        let node = router.node_of_name(&name);
                        assert_eq!(node, router.node_of(namer.key(keynum).as_bytes()));
                        seen[node] = true;
                    }
                }
                assert_eq!(seen, [true; 4], "{variant:?}: every server is reached");
            }
        }
        assert_eq!(
            Router::Single.node_of_name(&KeyNamer::default().name(3).expect("a name")),
            0
        );
    }
}
