//! The servers behind a target's endpoints, as the engine will route to
//! them: what a caller probes (memory, INFO, a flush) must be the nodes the
//! requests reach, not the addresses a user typed.

use super::sentinel::Sentinel;
use super::slots;
use kvbench_connect::Access;
use kvbench_model::{Endpoints, SystemKind};
use std::net::SocketAddr;
use std::time::Duration;

/// The data servers found behind some endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    /// The servers requests go to: a cluster's masters from its slot map, a
    /// Sentinel group's master as its sentinels name it now, a pool's nodes,
    /// or the one server.
    pub nodes: Vec<SocketAddr>,
    /// A Sentinel group's sentinels and name, to follow its failovers.
    pub sentinels: Option<(Vec<SocketAddr>, String)>,
}

/// Finds the servers behind `endpoints` for `system`: blocking, each
/// question bounded by `timeout`. A system driven through its own client
/// library (Aerospike) is reached at the seeds given: the library finds
/// the rest of its cluster itself.
///
/// # Errors
/// Why the cluster's slot map or the group's master could not be learnt,
/// naming each node asked.
pub fn reach(
    system: SystemKind,
    endpoints: &Endpoints,
    access: &Access,
    timeout: Duration,
) -> Result<Reached, String> {
    let plain = |nodes: &[SocketAddr]| Reached {
        nodes: nodes.to_vec(),
        sentinels: None,
    };
    Ok(match endpoints {
        Endpoints::Single(addr) => plain(&[*addr]),
        Endpoints::Pool(nodes) => plain(nodes),
        Endpoints::Cluster(seeds) if system.protocol().through_library() => plain(seeds),
        Endpoints::Cluster(seeds) => plain(slots::discover(seeds, access, timeout)?.nodes()),
        Endpoints::Sentinel { sentinels, group } => {
            let found = Sentinel::discover(sentinels, group, timeout)?;
            Reached {
                nodes: vec![found.master()],
                sentinels: Some((sentinels.clone(), group.clone())),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_that_need_no_question_are_the_nodes() {
        let a: Vec<SocketAddr> = ["127.0.0.1:1", "127.0.0.1:2"]
            .iter()
            .map(|s| s.parse().expect("addr"))
            .collect();
        let t = Duration::from_millis(100);
        let access = Access::plain();
        let pool = reach(
            SystemKind::Memcached,
            &Endpoints::Pool(a.clone()),
            &access,
            t,
        );
        assert_eq!(pool.expect("no question asked").nodes, a);
        // Aerospike's library finds its cluster: its seeds are what is probed.
        let seeds = reach(
            SystemKind::Aerospike,
            &Endpoints::Cluster(a.clone()),
            &access,
            t,
        );
        assert_eq!(seeds.expect("no question asked").nodes, a);
        // A Redis cluster's masters come from a slot map: nobody answers here.
        let e = reach(SystemKind::Redis, &Endpoints::Cluster(a), &access, t).unwrap_err();
        assert!(
            e.starts_with("no seed node gave a complete slot map"),
            "{e}"
        );
    }
}
