//! A Redis Cluster (Redis, Valkey) of private servers: N masters on free
//! loopback ports (or each in its network namespace), the 16,384 hash slots split evenly between them in
//! order, optionally R replicas per master, formed with `CLUSTER MEET`,
//! `CLUSTER ADDSLOTSRANGE` and `CLUSTER REPLICATE` (no `redis-cli`
//! needed), and ready only when every node agrees that the cluster is `ok`
//! and knows every other node.
//!
//! Each node is a [`Server`] guard, so a failure anywhere stops every node
//! started so far and removes their directories.

use crate::server::ServerVersion;
use crate::system::redis::{command, info, parse_info};
use crate::system::{Peer, Role};
use crate::{Hosts, Server, ServerError, ServerSpec};
use kvbench_model::{NodeProbe, Probe, Protocol, Setting};
use kvbench_proto::resp::Value;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Hash slots in a Redis Cluster.
const SLOTS: u32 = 16384;
/// How long the nodes get to agree on a working cluster.
const FORM_TIMEOUT: Duration = Duration::from_secs(30);
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(50);

/// Per-command call counts of one server, by command name.
pub type CommandCounts = Vec<(String, u64)>;

/// A running cluster; dropping it stops every node.
pub struct Cluster {
    /// `replicas[i]` replicate `masters[i / per_master]`. Declared first so
    /// that dropping stops them first (see [`Cluster::stop`]).
    replicas: Vec<Server>,
    masters: Vec<Server>,
}

impl Cluster {
    /// Starts `masters` masters with `replicas` replicas each and returns
    /// once the cluster is formed (at most 30 s after the nodes answer).
    ///
    /// # Errors
    /// [`ServerError::NoCluster`] for a system without server-side
    /// clusters, any error of [`Server::start`], or
    /// [`ServerError::ClusterFailed`] naming the node that did not agree.
    pub fn start(
        spec: &ServerSpec,
        masters: usize,
        replicas: usize,
    ) -> Result<Cluster, ServerError> {
        Self::start_on(spec, masters, replicas, Hosts::Loopback)
    }

    /// [`Cluster::start`] with node `i` (masters first, then replicas) on
    /// `hosts`' host `i`; the nodes meet and announce each other at those
    /// addresses.
    ///
    /// # Errors
    /// As [`Cluster::start`].
    pub fn start_on(
        spec: &ServerSpec,
        masters: usize,
        replicas: usize,
        hosts: Hosts<'_>,
    ) -> Result<Cluster, ServerError> {
        if spec.system.protocol() != Protocol::Resp {
            return Err(ServerError::NoCluster {
                system: spec.system,
            });
        }
        let failed = |reason: String| ServerError::ClusterFailed {
            system: spec.system,
            reason,
        };
        if masters == 0 {
            return Err(failed("a cluster needs at least one master".into()));
        }
        let start = |i| Server::start_as(spec, Role::ClusterNode, &hosts.host(i)?);
        let masters_started = (0..masters).map(start).collect::<Result<_, _>>()?;
        let cluster = Cluster {
            replicas: (masters..masters * (1 + replicas))
                .map(start)
                .collect::<Result<_, _>>()?,
            masters: masters_started,
        };
        cluster.assign_slots().map_err(failed)?;
        cluster.meet().map_err(failed)?;
        cluster.wait_formed(masters).map_err(failed)?;
        if replicas > 0 {
            cluster.replicate(replicas).map_err(failed)?;
            cluster.wait_formed(masters).map_err(failed)?;
            wait_synced(&cluster.replicas).map_err(failed)?;
            cluster.wait_announced(replicas).map_err(failed)?;
        }
        Ok(cluster)
    }

    /// Master `i` serves slots `[i * 16384 / n, (i + 1) * 16384 / n)`.
    fn assign_slots(&self) -> Result<(), String> {
        let n = self.masters.len() as u32;
        for (i, m) in self.masters.iter().enumerate() {
            let (first, last) = (i as u32 * SLOTS / n, (i as u32 + 1) * SLOTS / n - 1);
            let (a, b) = (first.to_string(), last.to_string());
            let reply = command(
                Peer::plain(m.addr()),
                &[b"CLUSTER", b"ADDSLOTSRANGE", a.as_bytes(), b.as_bytes()],
                QUERY_TIMEOUT,
            )?;
            match reply {
                Value::Status(_) => {}
                // Before Redis 7 there is no ADDSLOTSRANGE: list the slots.
                Value::Error(e) if e.to_ascii_lowercase().contains("unknown subcommand") => {
                    let slots: Vec<String> = (first..=last).map(|s| s.to_string()).collect();
                    let mut args: Vec<&[u8]> = vec![b"CLUSTER", b"ADDSLOTS"];
                    args.extend(slots.iter().map(|s| s.as_bytes()));
                    expect_ok(
                        m.addr(),
                        command(Peer::plain(m.addr()), &args, QUERY_TIMEOUT)?,
                    )?;
                }
                other => expect_ok(m.addr(), other)?,
            }
        }
        Ok(())
    }

    /// Introduces every node to the first master; gossip does the rest.
    fn meet(&self) -> Result<(), String> {
        let first = self.masters[0].addr();
        for node in self.nodes().skip(1) {
            let (ip, port) = (node.addr().ip().to_string(), node.addr().port().to_string());
            let reply = command(
                Peer::plain(first),
                &[b"CLUSTER", b"MEET", ip.as_bytes(), port.as_bytes()],
                QUERY_TIMEOUT,
            )?;
            expect_ok(first, reply)?;
        }
        Ok(())
    }

    fn replicate(&self, per_master: usize) -> Result<(), String> {
        for (j, r) in self.replicas.iter().enumerate() {
            let master = self.masters[j / per_master].addr();
            let id = match command(Peer::plain(master), &[b"CLUSTER", b"MYID"], QUERY_TIMEOUT)? {
                Value::Bulk(id) => id,
                other => return Err(format!("{master}: CLUSTER MYID answered {other:?}")),
            };
            // A replica can follow a master only once it knows it: retry
            // while gossip spreads.
            let deadline = Instant::now() + FORM_TIMEOUT;
            loop {
                match command(
                    Peer::plain(r.addr()),
                    &[b"CLUSTER", b"REPLICATE", &id],
                    QUERY_TIMEOUT,
                )? {
                    Value::Status(_) => break,
                    Value::Error(_) if Instant::now() < deadline => std::thread::sleep(POLL),
                    other => {
                        return Err(format!(
                            "{}: CLUSTER REPLICATE answered {other:?}",
                            r.addr()
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// Waits until every node's `CLUSTER SLOTS` names `per_master` replicas
    /// beside each master: a client finds the replicas there, and connects
    /// to them so that it can follow a failover (gossip spreads who
    /// replicates whom a little after the replicas have synced).
    fn wait_announced(&self, per_master: usize) -> Result<(), String> {
        for node in self.nodes() {
            wait_for(|| {
                let ranges = match command(
                    Peer::plain(node.addr()),
                    &[b"CLUSTER", b"SLOTS"],
                    QUERY_TIMEOUT,
                )? {
                    Value::Array(ranges) => ranges,
                    other => {
                        return Err(format!("{}: CLUSTER SLOTS answered {other:?}", node.addr()))
                    }
                };
                let complete = ranges
                    .iter()
                    .all(|r| matches!(r, Value::Array(parts) if parts.len() == 3 + per_master));
                Ok((!complete).then(|| format!("{} did not announce every replica", node.addr())))
            })?;
        }
        Ok(())
    }

    /// Waits until every node says `cluster_state:ok`, knows every node,
    /// and counts `masters` masters with slots.
    fn wait_formed(&self, masters: usize) -> Result<(), String> {
        let total = self.masters.len() + self.replicas.len();
        let deadline = Instant::now() + FORM_TIMEOUT;
        loop {
            let mut waiting_for = None;
            for node in self.nodes() {
                let info = match command(
                    Peer::plain(node.addr()),
                    &[b"CLUSTER", b"INFO"],
                    QUERY_TIMEOUT,
                )? {
                    Value::Bulk(text) => parse_info(&String::from_utf8_lossy(&text)),
                    other => {
                        return Err(format!("{}: CLUSTER INFO answered {other:?}", node.addr()))
                    }
                };
                let get = |k: &str| info.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
                let ok = get("cluster_state") == Some("ok")
                    && get("cluster_known_nodes") == Some(total.to_string().as_str())
                    && get("cluster_size") == Some(masters.to_string().as_str())
                    && get("cluster_slots_ok") == Some("16384");
                if !ok {
                    waiting_for = Some(format!(
                        "{} reports state {}, {} known nodes of {total}, {} masters of {masters}",
                        node.addr(),
                        get("cluster_state").unwrap_or("?"),
                        get("cluster_known_nodes").unwrap_or("?"),
                        get("cluster_size").unwrap_or("?"),
                    ));
                    break;
                }
            }
            let Some(why) = waiting_for else {
                return Ok(());
            };
            if Instant::now() >= deadline {
                return Err(format!(
                    "not formed within {} s: {why}",
                    FORM_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    fn nodes(&self) -> impl Iterator<Item = &Server> {
        self.masters.iter().chain(&self.replicas)
    }

    /// `CLUSTER FAILOVER` on the first replica of master `node`, waiting
    /// until it says it is a master (`--fault failover:NODE@AT`).
    ///
    /// # Errors
    /// No such master, no replica, a refusal, or no promotion within 30 s.
    pub fn failover(&self, node: usize) -> Result<String, String> {
        let master = self
            .masters
            .get(node)
            .ok_or_else(|| format!("there are {} masters", self.masters.len()))?;
        if self.replicas.is_empty() {
            return Err("the cluster has no replicas to fail over to (--replicas)".into());
        }
        let per_master = self.replicas.len() / self.masters.len();
        let replica = self.replicas[node * per_master].addr();
        expect_ok(
            replica,
            command(
                Peer::plain(replica),
                &[b"CLUSTER", b"FAILOVER"],
                QUERY_TIMEOUT,
            )?,
        )?;
        wait_for(|| {
            let info = replication(replica)?;
            let promoted = info.iter().any(|(k, v)| k == "role" && v == "master");
            Ok((!promoted).then(|| format!("replica {replica} was not promoted")))
        })?;
        Ok(format!("master {} to its replica {replica}", master.addr()))
    }

    /// The masters' addresses: the seeds a client discovers the slot map from.
    pub fn seeds(&self) -> Vec<SocketAddr> {
        self.masters.iter().map(Server::addr).collect()
    }

    /// The binary every node runs.
    pub fn binary(&self) -> &std::path::Path {
        self.masters[0].binary()
    }

    /// Every setting that differs from the server's defaults (the same on
    /// every node).
    pub fn settings(&self) -> &[Setting] {
        self.masters[0].settings()
    }

    /// What the first master says it is (every node runs the same binary).
    ///
    /// # Errors
    /// As [`Server::version`].
    pub fn version(&self) -> Result<ServerVersion, ServerError> {
        self.masters[0].version()
    }

    /// Every node's probe and their sums (items: the masters' only).
    ///
    /// # Errors
    /// As [`Server::probe`], for the first node that fails.
    pub fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        probe_masters_and_replicas(stage, &self.masters, &self.replicas)
    }

    /// All nodes' CPU seconds so far; `None` once any node has exited.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.nodes().map(Server::cpu_seconds).sum()
    }

    /// Each master's per-command counters (see [`Server::command_stats`]).
    ///
    /// # Errors
    /// As [`Server::command_stats`].
    pub fn command_stats(&self) -> Result<Vec<(SocketAddr, CommandCounts)>, ServerError> {
        self.masters
            .iter()
            .map(|m| Ok((m.addr(), m.command_stats()?)))
            .collect()
    }

    /// The masters, in slot order (for tests that act on one node).
    pub fn masters(&self) -> &[Server] {
        &self.masters
    }

    /// The replicas: `replicas()[i]` follows `masters()[i / per_master]`.
    pub fn replicas(&self) -> &[Server] {
        &self.replicas
    }

    /// Nodes whose process has exited, as `addr (how)`.
    pub fn lost_nodes(&self) -> Vec<String> {
        lost(self.nodes())
    }

    /// Stops every node, reporting the first that did not stop cleanly
    /// (all are stopped either way); a node that had already exited is
    /// reported by [`Cluster::lost_nodes`] instead. Replicas go first: a
    /// master asked to stop waits for its replicas to catch up
    /// (`shutdown-timeout`, 10 s).
    ///
    /// # Errors
    /// As [`Server::stop`].
    pub fn stop(self) -> Result<(), ServerError> {
        stop_all(self.replicas.into_iter().chain(self.masters))
    }
}

/// Waits until every replica has finished its first sync, so the run
/// does not measure a full resynchronisation (a master delays it by
/// `repl-diskless-sync-delay`, 5 s by default, for more replicas to join).
pub(crate) fn wait_synced(replicas: &[Server]) -> Result<(), String> {
    for r in replicas {
        wait_for(|| {
            let up = replication(r.addr())?
                .iter()
                .any(|(k, v)| k == "master_link_status" && v == "up");
            Ok((!up).then(|| format!("replica {} did not finish its first sync", r.addr())))
        })?;
    }
    Ok(())
}

/// `INFO replication` of the node at `addr`.
fn replication(addr: SocketAddr) -> Result<Vec<(String, String)>, String> {
    info(Peer::plain(addr), &["replication"], QUERY_TIMEOUT).map_err(|e| format!("{addr}: {e}"))
}

/// Asks `check` every 50 ms until it finds nothing to wait for (`None`),
/// at most 30 s; then fails with what it was still waiting for.
pub(crate) fn wait_for(
    mut check: impl FnMut() -> Result<Option<String>, String>,
) -> Result<(), String> {
    let deadline = Instant::now() + FORM_TIMEOUT;
    loop {
        let Some(why) = check()? else {
            return Ok(());
        };
        if Instant::now() >= deadline {
            return Err(format!("{why} within {} s", FORM_TIMEOUT.as_secs()));
        }
        std::thread::sleep(POLL);
    }
}

fn expect_ok(addr: SocketAddr, reply: Value) -> Result<(), String> {
    match reply {
        Value::Status(_) => Ok(()),
        other => Err(format!("{addr}: {other:?}")),
    }
}

/// Stops every server, in order, and returns the first unclean stop of one
/// that was still running (one that had exited is reported as lost).
pub(crate) fn stop_all(servers: impl Iterator<Item = Server>) -> Result<(), ServerError> {
    let mut first = Ok(());
    for s in servers {
        let gone = s.exited().is_some();
        let r = s.stop().or_else(|e| if gone { Ok(()) } else { Err(e) });
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// `addr (how it ended)` of every server whose process has exited.
pub(crate) fn lost<'a>(servers: impl Iterator<Item = &'a Server>) -> Vec<String> {
    servers
        .filter_map(|s| s.exited().map(|how| format!("{} ({how})", s.addr())))
        .collect()
}

/// The probes of masters and replicas, summed; the records held are the
/// masters' keys (a replica's are copies, though its memory counts: the
/// deployment uses it).
pub(crate) fn probe_masters_and_replicas<'a, S>(
    stage: &str,
    masters: S,
    replicas: S,
) -> Result<Probe, ServerError>
where
    S: Clone + IntoIterator<Item = &'a Server>,
{
    let mut probe = probe_nodes(stage, &[("master", masters), ("replica", replicas)])?;
    probe.items = probe
        .nodes
        .iter()
        .filter(|n| n.role == "master")
        .map(|n| n.items)
        .sum();
    Ok(probe)
}

/// Each server's probe, labelled with its role, and their sums; a server
/// that has exited is listed with no figures.
pub(crate) fn probe_nodes<'a, S>(stage: &str, groups: &[(&str, S)]) -> Result<Probe, ServerError>
where
    S: Clone + IntoIterator<Item = &'a Server>,
{
    let mut nodes = Vec::new();
    for (role, servers) in groups {
        for s in servers.clone() {
            if let Some(how) = s.exited() {
                // A node that died says nothing; the sums become unknown.
                nodes.push(NodeProbe {
                    addr: s.addr().to_string(),
                    role: format!("{role}, exited ({how})"),
                    ..NodeProbe::default()
                });
                continue;
            }
            let p = s.probe(stage)?;
            nodes.push(NodeProbe::of(s.addr().to_string(), role.to_string(), &p));
        }
    }
    Ok(Probe::summed(stage, nodes))
}
