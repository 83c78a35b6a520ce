//! A topology's shape before anything starts: the counts it accepts, how
//! many of its nodes hold data or take writes, whether it can fail over,
//! and how many connections a client opens to it. One place for what the
//! command line checks and what the memory and connection checks count,
//! beside the deployments that start each topology.

use kvbench_model::TopologyKind;

/// The largest cluster kvbench starts on one machine: every client opens a
/// connection to every master.
pub const MAX_NODES: u32 = 64;

/// The most replicas a cluster master gets.
pub const MAX_REPLICAS: u32 = 8;

/// A topology with its counts, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The topology.
    pub kind: TopologyKind,
    /// Its nodes (1 for a single server): a cluster's masters, a pool's or
    /// a proxy's servers, a Sentinel group's master and replicas.
    pub nodes: u32,
    /// A cluster's replicas per master (0 elsewhere).
    pub replicas: u32,
}

/// `single`, or the topology with its nodes (`cluster/3`, `pool/3`): how a
/// comparison names the deployment a cell ran on.
impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            TopologyKind::Single => write!(f, "single"),
            kind => write!(f, "{kind}/{}", self.nodes),
        }
    }
}

impl Shape {
    /// `kind` with `nodes` and `replicas` as asked, when they fit it.
    ///
    /// # Errors
    /// One line naming the flag and what it accepts.
    pub fn check(kind: TopologyKind, nodes: u32, replicas: u32) -> Result<Shape, String> {
        let shape = |nodes, replicas| Shape {
            kind,
            nodes,
            replicas,
        };
        match kind {
            TopologyKind::Cluster if replicas > MAX_REPLICAS => Err(format!(
                "--replicas must be at most {MAX_REPLICAS}, got {replicas}"
            )),
            TopologyKind::Sentinel if !(2..=9).contains(&nodes) => Err(format!(
                "--topology sentinel: --nodes counts the master and its replicas, 2 to 9 (a failover needs a replica), got {nodes}"
            )),
            TopologyKind::Single
            | TopologyKind::Pool
            | TopologyKind::Twemproxy
            | TopologyKind::Sentinel
                if replicas > 0 =>
            {
                Err("--replicas needs --topology cluster (a Sentinel group's --nodes counts its replicas)".to_string())
            }
            TopologyKind::Single => Ok(shape(1, 0)),
            _ if nodes == 0 || nodes > MAX_NODES => Err(format!(
                "--nodes must be between 1 and {MAX_NODES}, got {nodes}"
            )),
            _ => Ok(shape(nodes, replicas)),
        }
    }

    /// The server processes that hold data: a cluster's masters and their
    /// replicas, every node elsewhere.
    pub fn data_nodes(&self) -> u32 {
        match self.kind {
            TopologyKind::Single => 1,
            TopologyKind::Cluster => self.nodes * (1 + self.replicas),
            _ => self.nodes,
        }
    }

    /// The nodes that take writes: a cluster's masters, one elsewhere
    /// (a Sentinel group's master; a pool is not failed over).
    pub fn masters(&self) -> u32 {
        match self.kind {
            TopologyKind::Cluster => self.nodes,
            _ => 1,
        }
    }

    /// Whether a master can be failed over to a replica: a Sentinel group,
    /// or a cluster with replicas.
    pub fn can_fail_over(&self) -> bool {
        match self.kind {
            TopologyKind::Sentinel => true,
            TopologyKind::Cluster => self.replicas > 0,
            _ => false,
        }
    }

    /// Connections one client opens: one to every node, except through the
    /// one proxy in front of them (twemproxy) or to a Sentinel group, whose
    /// clients write to its master only.
    pub fn connections_per_client(&self) -> u64 {
        match self.kind {
            TopologyKind::Twemproxy | TopologyKind::Sentinel => 1,
            _ => u64::from(self.nodes.max(1)),
        }
    }

    /// Whether kvbench's clients pick each key's node by hashing it (a
    /// pool), so the hash is part of what was run.
    pub fn client_hashed(&self) -> bool {
        self.kind == TopologyKind::Pool
    }

    /// Whether kvbench's clients reach the servers themselves, so each
    /// counts against a server's connection limit (through twemproxy they
    /// reach the proxy, which holds its own few).
    pub fn clients_reach_servers(&self) -> bool {
        self.kind != TopologyKind::Twemproxy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TopologyKind::*;

    #[test]
    fn counts_that_do_not_fit_the_topology_are_refused_in_one_line() {
        assert_eq!(
            Shape::check(Single, 5, 0),
            Ok(Shape {
                kind: Single,
                nodes: 1,
                replicas: 0
            })
        );
        assert_eq!(
            Shape::check(Cluster, 3, 9).unwrap_err(),
            "--replicas must be at most 8, got 9"
        );
        assert!(Shape::check(Sentinel, 1, 0).unwrap_err().starts_with(
            "--topology sentinel: --nodes counts the master and its replicas, 2 to 9"
        ));
        assert!(Shape::check(Pool, 3, 1)
            .unwrap_err()
            .starts_with("--replicas needs --topology cluster"));
        assert_eq!(
            Shape::check(Pool, 65, 0).unwrap_err(),
            "--nodes must be between 1 and 64, got 65"
        );
        assert!(Shape::check(Cluster, 0, 0).is_err());
    }

    #[test]
    fn nodes_are_counted_by_role() {
        let cluster = Shape::check(Cluster, 3, 1).expect("fits");
        assert_eq!(
            (
                cluster.data_nodes(),
                cluster.masters(),
                cluster.can_fail_over()
            ),
            (6, 3, true)
        );
        assert_eq!(cluster.connections_per_client(), 3);
        let bare = Shape::check(Cluster, 3, 0).expect("fits");
        assert!(!bare.can_fail_over());
        let group = Shape::check(Sentinel, 3, 0).expect("fits");
        assert_eq!(
            (group.data_nodes(), group.masters(), group.can_fail_over()),
            (3, 1, true)
        );
        assert_eq!(group.connections_per_client(), 1);
        let proxy = Shape::check(Twemproxy, 4, 0).expect("fits");
        assert_eq!(proxy.connections_per_client(), 1);
        assert!(!proxy.clients_reach_servers());
        let pool = Shape::check(Pool, 4, 0).expect("fits");
        assert_eq!((pool.data_nodes(), pool.masters()), (4, 1));
        assert!(!pool.can_fail_over() && pool.clients_reach_servers());
        assert!(pool.client_hashed() && !proxy.client_hashed() && !cluster.client_hashed());
    }

    #[test]
    fn a_shape_is_named_by_its_topology_and_nodes() {
        let name = |kind, nodes| Shape::check(kind, nodes, 0).expect("fits").to_string();
        assert_eq!(name(Single, 1), "single");
        assert_eq!(name(Cluster, 3), "cluster/3");
        assert_eq!(name(Twemproxy, 4), "twemproxy/4");
    }
}
