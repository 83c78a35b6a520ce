//! A Redis Sentinel group (Redis, Valkey) of private servers: one master,
//! its replicas, and three sentinels that watch it and fail over to a
//! replica when two of them agree it is down, as Debian's redis-sentinel
//! runs them (`redis-server <conf> --sentinel`, the same binary).
//!
//! Ready only when every sentinel knows the master, its replicas and the
//! two other sentinels (`SENTINEL CKQUORUM`): a failover asked of a group
//! still introducing itself would be refused, and the run would measure
//! that instead of the failover.
//!
//! Each process is a [`Server`] guard, so a failure anywhere stops every
//! process started so far.

use crate::cluster::{lost, probe_masters_and_replicas, stop_all, wait_for, wait_synced};
use crate::server::ServerVersion;
use crate::system::redis::command;
use crate::system::{Peer, Role, SENTINELS, SENTINEL_GROUP};
use crate::{Hosts, Server, ServerError, ServerSpec};
use kvbench_model::{Probe, Protocol, Setting};
use kvbench_proto::resp::Value;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// A running group; dropping it stops every process.
pub struct SentinelGroup {
    /// Declared first: stopped first, so that no failover starts while the
    /// data nodes stop.
    sentinels: Vec<Server>,
    replicas: Vec<Server>,
    /// The node started as the master (a failover may have moved the role).
    master: Server,
}

impl SentinelGroup {
    /// Starts `nodes` data nodes (the first the master, the others its
    /// replicas) and three sentinels on `hosts`' hosts: data nodes first,
    /// then the sentinels.
    ///
    /// # Errors
    /// [`ServerError::NoSentinel`] for a system without Sentinel, any error
    /// of [`Server::start`], or [`ServerError::ClusterFailed`] naming what
    /// did not come together.
    pub fn start_on(
        spec: &ServerSpec,
        nodes: usize,
        hosts: Hosts<'_>,
    ) -> Result<SentinelGroup, ServerError> {
        if spec.system.protocol() != Protocol::Resp {
            return Err(ServerError::NoSentinel {
                system: spec.system,
            });
        }
        let failed = |reason: String| ServerError::ClusterFailed {
            system: spec.system,
            reason,
        };
        if nodes < 2 {
            return Err(failed(
                "a Sentinel group needs at least two nodes (a master and a replica to fail over to)"
                    .into(),
            ));
        }
        let master = Server::start_as(spec, Role::Single, &hosts.host(0)?)?;
        let at = master.addr();
        let replicas = (1..nodes)
            .map(|i| Server::start_as(spec, Role::Replica(at), &hosts.host(i)?))
            .collect::<Result<Vec<_>, _>>()?;
        wait_synced(&replicas).map_err(failed)?;
        let sentinels = (nodes..nodes + SENTINELS)
            .map(|i| Server::start_as(spec, Role::Sentinel(at), &hosts.host(i)?))
            .collect::<Result<Vec<_>, _>>()?;
        let group = SentinelGroup {
            sentinels,
            replicas,
            master,
        };
        group.wait_watching().map_err(failed)?;
        Ok(group)
    }

    /// Waits until every sentinel reaches the quorum with all three and
    /// lists every replica.
    fn wait_watching(&self) -> Result<(), String> {
        for s in &self.sentinels {
            wait_for(|| {
                let ask = |what: &[u8]| {
                    command(
                        Peer::plain(s.addr()),
                        &[b"SENTINEL", what, SENTINEL_GROUP.as_bytes()],
                        QUERY_TIMEOUT,
                    )
                };
                let (quorum, replicas) = (ask(b"CKQUORUM")?, ask(b"REPLICAS")?);
                let all_known = matches!(&quorum, Value::Status(t) if t.starts_with(&format!("OK {SENTINELS} usable")));
                let listed = matches!(&replicas, Value::Array(r) if r.len() == self.replicas.len());
                Ok((!(all_known && listed)).then(|| {
                    format!(
                        "sentinel {} did not see the whole group ({quorum:?})",
                        s.addr()
                    )
                }))
            })?;
        }
        Ok(())
    }

    /// The sentinels' addresses: what a client asks for the master.
    pub fn sentinel_addrs(&self) -> Vec<SocketAddr> {
        self.sentinels.iter().map(Server::addr).collect()
    }

    /// The name the sentinels know the group by.
    pub fn group(&self) -> &'static str {
        SENTINEL_GROUP
    }

    /// The node started as the master.
    pub fn first_master(&self) -> &Server {
        &self.master
    }

    /// The nodes started as replicas.
    pub fn replicas(&self) -> &[Server] {
        &self.replicas
    }

    /// The sentinels.
    pub fn sentinels(&self) -> &[Server] {
        &self.sentinels
    }

    /// Where the sentinels say the master is now (the first that answers).
    ///
    /// # Errors
    /// [`ServerError::Query`] when no sentinel names it.
    pub fn current_master(&self) -> Result<SocketAddr, ServerError> {
        let mut last = String::new();
        for s in &self.sentinels {
            match command(
                Peer::plain(s.addr()),
                &[
                    b"SENTINEL",
                    b"GET-MASTER-ADDR-BY-NAME",
                    SENTINEL_GROUP.as_bytes(),
                ],
                QUERY_TIMEOUT,
            ) {
                Ok(Value::Array(parts)) if parts.len() == 2 => {
                    let text = |v: &Value| {
                        String::from_utf8_lossy(v.as_bytes().unwrap_or_default()).into_owned()
                    };
                    let found = format!("{}:{}", text(&parts[0]), text(&parts[1]))
                        .to_socket_addrs()
                        .ok()
                        .and_then(|mut a| a.next());
                    if let Some(a) = found {
                        return Ok(a);
                    }
                    last = format!("an address that does not resolve: {parts:?}");
                }
                Ok(other) => last = format!("{other:?}"),
                Err(e) => last = e,
            }
        }
        Err(ServerError::Query {
            system: self.master.system(),
            addr: self.sentinels[0].addr(),
            message: format!("no sentinel named the master: {last}"),
        })
    }

    /// `SENTINEL FAILOVER` (the first sentinel that accepts it), waiting
    /// until the sentinels name another master (`--fault failover@AT`).
    ///
    /// # Errors
    /// No sentinel accepts it, or no new master is named within 30 s.
    pub fn failover(&self) -> Result<String, String> {
        let old = self.current_master().map_err(|e| e.to_string())?;
        let mut refused = Vec::new();
        let accepted = self.sentinels.iter().any(|s| {
            match command(
                Peer::plain(s.addr()),
                &[b"SENTINEL", b"FAILOVER", SENTINEL_GROUP.as_bytes()],
                QUERY_TIMEOUT,
            ) {
                Ok(Value::Status(_)) => true,
                other => {
                    refused.push(format!("{}: {other:?}", s.addr()));
                    false
                }
            }
        });
        if !accepted {
            return Err(format!("SENTINEL FAILOVER refused: {}", refused.join("; ")));
        }
        wait_for(|| {
            let now = self.current_master().map_err(|e| e.to_string())?;
            Ok((now == old).then(|| format!("the sentinels still name {old}")))
        })?;
        let new = self.current_master().map_err(|e| e.to_string())?;
        Ok(format!("group {SENTINEL_GROUP}: master {old} to {new}"))
    }

    fn data_nodes(&self) -> impl Iterator<Item = &Server> {
        std::iter::once(&self.master).chain(&self.replicas)
    }

    /// The binary every process runs.
    pub fn binary(&self) -> &std::path::Path {
        self.master.binary()
    }

    /// The data nodes' settings (the same on each), then the sentinels'.
    pub fn settings(&self) -> Vec<Setting> {
        let mut s = self.master.settings().to_vec();
        if let Some(r) = self.replicas.first() {
            s.extend(
                r.settings()
                    .iter()
                    .filter(|x| x.name == "replicaof")
                    .cloned(),
            );
        }
        if let Some(x) = self.sentinels.first() {
            s.extend(
                x.settings()
                    .iter()
                    .filter(|x| x.name.starts_with("sentinel"))
                    .cloned(),
            );
        }
        s
    }

    /// What the first master says it is.
    ///
    /// # Errors
    /// As [`Server::version`].
    pub fn version(&self) -> Result<ServerVersion, ServerError> {
        self.master.version()
    }

    /// Every data node's probe, labelled with the role it has now (the
    /// sentinels' memory is not the store's); items are the master's.
    ///
    /// # Errors
    /// As [`Server::probe`], for the first node that fails.
    pub fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        // A failover moves the master's role: ask where it is now.
        let now = self.current_master().unwrap_or(self.master.addr());
        let (masters, replicas): (Vec<&Server>, Vec<&Server>) =
            self.data_nodes().partition(|s| s.addr() == now);
        probe_masters_and_replicas(stage, masters, replicas)
    }

    /// Every process's CPU seconds so far (sentinels included: the
    /// deployment runs them); `None` once any has exited.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.data_nodes()
            .chain(&self.sentinels)
            .map(Server::cpu_seconds)
            .sum()
    }

    /// Processes that have exited, as `addr (how)`.
    pub fn lost_nodes(&self) -> Vec<String> {
        lost(self.data_nodes().chain(&self.sentinels))
    }

    /// Stops the sentinels, then the replicas, then the first master.
    ///
    /// # Errors
    /// As [`Server::stop`].
    pub fn stop(self) -> Result<(), ServerError> {
        stop_all(
            self.sentinels
                .into_iter()
                .chain(self.replicas)
                .chain(std::iter::once(self.master)),
        )
    }
}
