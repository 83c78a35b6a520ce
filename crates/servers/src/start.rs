//! One way in for every deployment kvbench starts itself: the topology and
//! the system pick the kind of deployment here, so a caller never matches
//! on either (adding a topology adds a branch here and its own module).

use crate::aerospike::{Aerospike, Config as AerospikeConfig, PAPER_PRESET};
use crate::{
    find_binary, Cluster, Deployment, Hosts, Pool, Proxied, SentinelGroup, Server, ServerError,
    ServerSpec, SystemKind, TopologyKind,
};

/// What to start: a server spec (system, binary, memory limit, policy,
/// options) in a topology of `nodes` masters with `replicas` each, on
/// `hosts` (loopback, or a run's network namespaces).
#[derive(Debug, Clone, Copy)]
pub struct Plan<'a> {
    /// The system and how each of its servers is started.
    pub spec: &'a ServerSpec,
    /// One server, a cluster, a pool, a proxy, a Sentinel group.
    pub topology: TopologyKind,
    /// Masters, pool members, proxied servers or Sentinel data nodes.
    pub nodes: usize,
    /// Replicas per cluster master.
    pub replicas: usize,
    /// Where the processes run.
    pub hosts: Hosts<'a>,
}

/// A deployment that did not start: what it was (`"the cluster"`), and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot start {what}")]
pub struct StartError {
    /// What did not start, as a message names it ("the cluster").
    pub what: &'static str,
    /// Why.
    #[source]
    pub source: ServerError,
}

/// Starts what `plan` describes and returns it running.
///
/// # Errors
/// [`StartError`] naming the deployment, with the server's error as its
/// source.
pub fn start(plan: Plan<'_>) -> Result<Box<dyn Deployment>, StartError> {
    let Plan {
        spec,
        topology,
        nodes,
        replicas,
        hosts,
    } = plan;
    let failed = |what: &'static str| move |source: ServerError| StartError { what, source };
    if spec.system == SystemKind::Aerospike {
        return Ok(Box::new(
            start_aerospike(spec, topology, nodes, hosts).map_err(failed("aerospike"))?,
        ));
    }
    Ok(match topology {
        TopologyKind::Single => Box::new(
            hosts
                .host(0)
                .and_then(|h| Server::start_on(spec, &h))
                .map_err(failed("the server"))?,
        ),
        TopologyKind::Cluster => Box::new(
            Cluster::start_on(spec, nodes, replicas, hosts).map_err(failed("the cluster"))?,
        ),
        TopologyKind::Pool => {
            Box::new(Pool::start_on(spec, nodes, hosts).map_err(failed("the pool"))?)
        }
        TopologyKind::Twemproxy => Box::new(
            Proxied::start_on(spec, nodes, None, hosts)
                .map_err(failed("twemproxy and its servers"))?,
        ),
        TopologyKind::Sentinel => Box::new(
            SentinelGroup::start_on(spec, nodes, hosts).map_err(failed("the Sentinel group"))?,
        ),
    })
}

/// A private Aerospike node, or a mesh cluster of `nodes`, from the user's
/// asd (`ServerSpec::binary` or KVBENCH_AEROSPIKE_BIN).
fn start_aerospike(
    spec: &ServerSpec,
    topology: TopologyKind,
    nodes: usize,
    hosts: Hosts<'_>,
) -> Result<Aerospike, ServerError> {
    let bin = find_binary(spec.system, spec.binary.as_deref())?;
    let config = AerospikeConfig {
        data_size_mb: spec.memory_limit_mb.unwrap_or(1024),
        paper_preset: spec.extra_args.iter().any(|a| a == PAPER_PRESET),
        ..AerospikeConfig::default()
    };
    let nodes = match topology {
        TopologyKind::Cluster => nodes,
        _ => 1,
    };
    Aerospike::start_on(&bin, config, nodes, hosts)
}
