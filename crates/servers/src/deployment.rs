//! The system under test as a run sees it, however it is deployed: one
//! private server, a private cluster or pool, or a server kvbench did not
//! start.
//! The per-cell sequence (start, probe, load, run, probe, stop) talks only
//! to this trait, so a new topology is one more implementation here, not a
//! `match` in the orchestration.

use crate::{
    Cluster, Pool, Proxied, RemoteServer, SentinelGroup, Server, ServerError, ServerVersion,
};
use kvbench_model::{Endpoints, Probe, Setting};

/// A deployed system under test.
pub trait Deployment: Sync {
    /// How clients reach it: a single server's address, a cluster's seed
    /// nodes (the client discovers the rest), a pool's servers, a Sentinel
    /// group's sentinels.
    fn endpoints(&self) -> Endpoints;
    /// The binary that was started (empty for a server kvbench did not start).
    fn binary(&self) -> String;
    /// Every setting that differs from the server's defaults.
    fn settings(&self) -> Vec<Setting>;
    /// What the server says it is.
    ///
    /// # Errors
    /// When it does not answer or does not say.
    fn version(&self) -> Result<ServerVersion, ServerError>;
    /// Resource use now (per node and summed, for several nodes).
    ///
    /// # Errors
    /// When a node does not answer, or is not the process kvbench started.
    fn probe(&self, stage: &str) -> Result<Probe, ServerError>;
    /// CPU seconds of every process kvbench started for it, `None` when
    /// unknown (a server kvbench did not start) or a process has exited.
    fn cpu_seconds(&self) -> Option<f64>;
    /// Nodes that have died (`addr (how)`): the run goes on without them
    /// (for a single server, it ends there) and is marked, keeping what it
    /// measured until then.
    fn lost_nodes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The processes kvbench started for it (none for a server it did not
    /// start), e.g. to place them on CPUs.
    fn pids(&self) -> Vec<u32> {
        Vec::new()
    }
    /// The data nodes a fault may hit (`--fault`), in the order the probes
    /// list them; none for a server kvbench did not start.
    fn fault_nodes(&self) -> Vec<&Server> {
        Vec::new()
    }
    /// Fails over now, blocking until the new master is named: a Sentinel
    /// group's `SENTINEL FAILOVER`, or the replica of cluster master
    /// `node` taking over. Returns what failed over.
    ///
    /// # Errors
    /// A deployment that cannot fail over, or a failover that did not
    /// complete.
    fn failover(&self, node: usize) -> Result<String, String> {
        let _ = node;
        Err(
            "this deployment has no failover (a Sentinel group, or a cluster with --replicas)"
                .into(),
        )
    }
    /// Every command's counters on the nodes that execute the clients'
    /// requests, summed (`None`: unknown, as for a system that keeps none,
    /// a server kvbench did not start, or a node that does not answer).
    fn command_times(&self) -> Option<kvbench_model::CommandTimes> {
        None
    }
    /// Stops what kvbench started; leaves anything else alone.
    ///
    /// # Errors
    /// When a process did not stop cleanly (it is stopped either way).
    fn stop(self: Box<Self>) -> Result<(), ServerError>;
}

/// `nodes`' counters summed; `None` when any is unknown.
fn summed_times<'a>(
    nodes: impl Iterator<Item = &'a Server>,
) -> Option<kvbench_model::CommandTimes> {
    let mut sum = kvbench_model::CommandTimes::new();
    for n in nodes {
        kvbench_model::server_time::add_command_times(&mut sum, &n.command_times().ok()??);
    }
    Some(sum)
}

impl Deployment for Server {
    fn fault_nodes(&self) -> Vec<&Server> {
        vec![self]
    }
    fn pids(&self) -> Vec<u32> {
        vec![self.pid()]
    }
    fn endpoints(&self) -> Endpoints {
        Endpoints::Single(self.addr())
    }
    fn binary(&self) -> String {
        Server::binary(self).display().to_string()
    }
    fn settings(&self) -> Vec<Setting> {
        Server::settings(self).to_vec()
    }
    fn version(&self) -> Result<ServerVersion, ServerError> {
        Server::version(self)
    }
    fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        Server::probe(self, stage)
    }
    fn cpu_seconds(&self) -> Option<f64> {
        Server::cpu_seconds(self)
    }
    fn command_times(&self) -> Option<kvbench_model::CommandTimes> {
        summed_times(std::iter::once(self))
    }
    fn lost_nodes(&self) -> Vec<String> {
        self.exited()
            .map(|how| vec![format!("{} ({how})", self.addr())])
            .unwrap_or_default()
    }
    /// A server that had already exited was reported by
    /// [`Deployment::lost_nodes`]; it is reaped and its directory removed
    /// here like any other, without a second error.
    fn stop(self: Box<Self>) -> Result<(), ServerError> {
        let lost = self.exited().is_some();
        match Server::stop(*self) {
            Err(ServerError::Stop { .. }) if lost => Ok(()),
            other => other,
        }
    }
}

impl Deployment for Cluster {
    fn fault_nodes(&self) -> Vec<&Server> {
        self.masters().iter().chain(self.replicas()).collect()
    }
    fn failover(&self, node: usize) -> Result<String, String> {
        Cluster::failover(self, node)
    }
    fn pids(&self) -> Vec<u32> {
        self.masters()
            .iter()
            .chain(self.replicas())
            .map(Server::pid)
            .collect()
    }
    fn endpoints(&self) -> Endpoints {
        Endpoints::Cluster(self.seeds())
    }
    fn binary(&self) -> String {
        Cluster::binary(self).display().to_string()
    }
    fn settings(&self) -> Vec<Setting> {
        Cluster::settings(self).to_vec()
    }
    fn version(&self) -> Result<ServerVersion, ServerError> {
        Cluster::version(self)
    }
    fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        Cluster::probe(self, stage)
    }
    fn cpu_seconds(&self) -> Option<f64> {
        Cluster::cpu_seconds(self)
    }
    /// The masters: a replica runs its master's writes again, not the
    /// clients' requests.
    fn command_times(&self) -> Option<kvbench_model::CommandTimes> {
        summed_times(self.masters().iter())
    }
    fn lost_nodes(&self) -> Vec<String> {
        Cluster::lost_nodes(self)
    }
    fn stop(self: Box<Self>) -> Result<(), ServerError> {
        Cluster::stop(*self)
    }
}

impl Deployment for SentinelGroup {
    fn fault_nodes(&self) -> Vec<&Server> {
        std::iter::once(self.first_master())
            .chain(self.replicas())
            .collect()
    }
    fn failover(&self, _node: usize) -> Result<String, String> {
        SentinelGroup::failover(self)
    }
    fn pids(&self) -> Vec<u32> {
        std::iter::once(self.first_master())
            .chain(self.replicas())
            .chain(self.sentinels())
            .map(Server::pid)
            .collect()
    }
    fn endpoints(&self) -> Endpoints {
        Endpoints::Sentinel {
            sentinels: self.sentinel_addrs(),
            group: self.group().to_string(),
        }
    }
    fn binary(&self) -> String {
        SentinelGroup::binary(self).display().to_string()
    }
    fn settings(&self) -> Vec<Setting> {
        SentinelGroup::settings(self)
    }
    fn version(&self) -> Result<ServerVersion, ServerError> {
        SentinelGroup::version(self)
    }
    fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        SentinelGroup::probe(self, stage)
    }
    fn cpu_seconds(&self) -> Option<f64> {
        SentinelGroup::cpu_seconds(self)
    }
    fn lost_nodes(&self) -> Vec<String> {
        SentinelGroup::lost_nodes(self)
    }
    fn stop(self: Box<Self>) -> Result<(), ServerError> {
        SentinelGroup::stop(*self)
    }
}

impl Deployment for Pool {
    fn fault_nodes(&self) -> Vec<&Server> {
        self.nodes().iter().collect()
    }
    fn pids(&self) -> Vec<u32> {
        self.nodes().iter().map(Server::pid).collect()
    }
    fn endpoints(&self) -> Endpoints {
        Endpoints::Pool(self.addrs())
    }
    fn binary(&self) -> String {
        Pool::binary(self).display().to_string()
    }
    fn settings(&self) -> Vec<Setting> {
        Pool::settings(self).to_vec()
    }
    fn version(&self) -> Result<ServerVersion, ServerError> {
        Pool::version(self)
    }
    fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        Pool::probe(self, stage)
    }
    fn cpu_seconds(&self) -> Option<f64> {
        Pool::cpu_seconds(self)
    }
    fn lost_nodes(&self) -> Vec<String> {
        Pool::lost_nodes(self)
    }
    fn stop(self: Box<Self>) -> Result<(), ServerError> {
        Pool::stop(*self)
    }
}

impl Deployment for Proxied {
    fn fault_nodes(&self) -> Vec<&Server> {
        self.backends().nodes().iter().collect()
    }
    fn pids(&self) -> Vec<u32> {
        let mut p = self.backends().pids();
        p.push(self.proxy_pid());
        p
    }
    fn endpoints(&self) -> Endpoints {
        Endpoints::Single(self.addr())
    }
    fn binary(&self) -> String {
        format!(
            "{} behind {}",
            self.backends().binary().display(),
            Proxied::binary(self).display()
        )
    }
    fn settings(&self) -> Vec<Setting> {
        Proxied::settings(self)
    }
    fn version(&self) -> Result<ServerVersion, ServerError> {
        Proxied::version(self)
    }
    fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        Proxied::probe(self, stage)
    }
    fn cpu_seconds(&self) -> Option<f64> {
        Proxied::cpu_seconds(self)
    }
    fn lost_nodes(&self) -> Vec<String> {
        Proxied::lost_nodes(self)
    }
    fn stop(self: Box<Self>) -> Result<(), ServerError> {
        Proxied::stop(*self)
    }
}

impl Deployment for RemoteServer {
    fn endpoints(&self) -> Endpoints {
        RemoteServer::endpoints(self)
    }
    fn binary(&self) -> String {
        String::new()
    }
    fn settings(&self) -> Vec<Setting> {
        Vec::new()
    }
    fn version(&self) -> Result<ServerVersion, ServerError> {
        RemoteServer::version(self)
    }
    fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        RemoteServer::probe(self, stage)
    }
    /// What the servers report for themselves (not our processes: `/proc`
    /// is not ours to read).
    fn cpu_seconds(&self) -> Option<f64> {
        RemoteServer::cpu_seconds(self)
    }
    fn stop(self: Box<Self>) -> Result<(), ServerError> {
        Ok(())
    }
}
