//! Aerospike, started privately (issue 14, first slice): the loopback-only
//! configuration kvbench writes for `asd`, its cold-path info queries, and
//! a guard that starts one node or an N-node mesh cluster from a binary the
//! user has (`KVBENCH_AEROSPIKE_BIN`; Aerospike is in no package registry
//! this project can reach) and always stops it.
//!
//! Not yet a `SystemKind`: the driver (the official `aerospike` crate) and
//! the engine's path for a client library come next, and `--system
//! aerospike` appears only with them.
//!
//! Every address in the configuration is the node's own (127.0.0.1, or its
//! namespace's with `--netns` later), and the heartbeat seeds are the other
//! nodes kvbench started, never the sample configuration's private address.

use crate::ports::{self, Attempt};
use crate::process::{Ending, ProcessGuard};
use crate::system::aerospike::AEROSPIKE;
use crate::system::{parse_u64, Peer, System};
use crate::{Host, Hosts, ServerError, ServerVersion};
use kvbench_connect::Access;
use kvbench_model::{NodeProbe, Probe, Setting};
use kvbench_proto::aerospike_info;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

// Public here, where users of a started cluster look for them; defined
// with the system's contract (system::aerospike reads them too).
pub use crate::system::aerospike::{BIN_ENV, PAPER_PRESET};

/// How long a node (and a cluster, to form) gets to answer.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const READY_POLL: Duration = Duration::from_millis(100);
/// What asd logs when a port it was given is taken: it does not exit, it
/// waits for the port, so the race is seen in its log.
const PORT_TAKEN: &str = "in use, waiting";
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// Where one node listens: its address (127.0.0.1, or its network
/// namespace's with `--netns`) and a port per service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodePorts {
    /// The address every service of the node binds, and its seeds name.
    pub ip: IpAddr,
    /// Clients (and info queries).
    pub service: u16,
    /// Node to node data (replication, migrations).
    pub fabric: u16,
    /// Mesh heartbeats: what the other nodes seed.
    pub heartbeat: u16,
    /// The admin port (asinfo's `--port` for admin commands).
    pub admin: u16,
}

/// What the configuration holds beyond the ports.
#[derive(Debug, Clone)]
pub struct Config {
    /// The namespace the workload's records go to: `ycsb`, the default of
    /// YCSB's `as.namespace`, so YCSB's binding finds a data set kvbench
    /// loaded (and the other way round).
    pub namespace: String,
    /// Memory for the namespace's data (`storage-engine memory { data-size }`).
    pub data_size_mb: u64,
    /// Connections a node accepts (`proto-fd-max`).
    pub proto_fd_max: u32,
    /// Paper A's settings (`service-threads 4`) instead of the server's
    /// defaults, which size threads from the cores.
    pub paper_preset: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            namespace: crate::system::aerospike::NAMESPACE.into(),
            data_size_mb: 1024,
            proto_fd_max: 15_000,
            paper_preset: false,
        }
    }
}

/// The configuration file of node `me` of `mesh` (every node's ports, `me`
/// included), with its work directory in `dir`; and the settings it
/// changes from the server's defaults, for the record. Each setting on its
/// own line, as the server's parser wants.
pub fn config_text(
    c: &Config,
    node_id: &str,
    dir: &Path,
    me: &NodePorts,
    mesh: &[NodePorts],
) -> (String, Vec<Setting>) {
    let ip = me.ip;
    let d = dir.display();
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# Written by kvbench for a private node: every service binds {ip}."
    );
    let _ = writeln!(t, "service {{");
    let _ = writeln!(t, "\trun-as-daemon false");
    let _ = writeln!(t, "\tnode-id {node_id}");
    let _ = writeln!(t, "\tcluster-name kvbench");
    let _ = writeln!(t, "\twork-directory {d}/work");
    let _ = writeln!(t, "\tpidfile {d}/asd.pid");
    let _ = writeln!(t, "\tproto-fd-max {}", c.proto_fd_max);
    if c.paper_preset {
        let _ = writeln!(t, "\tservice-threads 4");
    }
    let _ = writeln!(t, "}}");
    let _ = writeln!(t, "mod-lua {{\n\tuser-path {d}/work/usr/udf/lua\n}}");
    let _ = writeln!(
        t,
        "logging {{\n\tfile {d}/asd.log {{\n\t\tcontext any info\n\t}}\n}}"
    );
    let _ = writeln!(t, "network {{");
    // A listener of the node's own: its address and port.
    let listener = |t: &mut String, name: &str, port: u16| {
        let _ = writeln!(t, "\t{name} {{\n\t\taddress {ip}\n\t\tport {port}\n\t}}");
    };
    listener(&mut t, "service", me.service);
    let _ = writeln!(
        t,
        "\theartbeat {{\n\t\tmode mesh\n\t\taddress {ip}\n\t\tport {}",
        me.heartbeat
    );
    for seed in mesh {
        let _ = writeln!(
            t,
            "\t\tmesh-seed-address-port {} {}",
            seed.ip, seed.heartbeat
        );
    }
    let _ = writeln!(t, "\t\tinterval 150\n\t\ttimeout 10\n\t}}");
    listener(&mut t, "fabric", me.fabric);
    listener(&mut t, "admin", me.admin);
    let _ = writeln!(t, "}}");
    let _ = writeln!(t, "namespace {} {{", c.namespace);
    let _ = writeln!(t, "\treplication-factor 1");
    let _ = writeln!(
        t,
        "\tstorage-engine memory {{\n\t\tdata-size {}M\n\t}}",
        c.data_size_mb
    );
    let _ = writeln!(t, "}}");
    let why = crate::system::bind_reason(ip);
    let mut settings = vec![
        setting("network.service.address", &ip.to_string(), why),
        setting(
            "network.heartbeat.mode",
            "mesh",
            "seeded with this run's own nodes only, so no node joins another cluster",
        ),
        setting(
            "namespace.replication-factor",
            "1",
            "one copy of each record, as paper A ran it",
        ),
        setting(
            "namespace.storage-engine",
            &format!("memory (data-size {}M)", c.data_size_mb),
            "an in-memory store, like the other systems",
        ),
        setting(
            "service.proto-fd-max",
            &c.proto_fd_max.to_string(),
            "room for every client connection",
        ),
    ];
    if c.paper_preset {
        settings.push(setting(
            "service.service-threads",
            "4",
            "paper A's setting (the preset)",
        ));
    }
    (t, settings)
}

fn setting(name: &str, value: &str, reason: &str) -> Setting {
    Setting {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

/// Asks `addr` for `names` over the info protocol on a short connection.
///
/// # Errors
/// A message naming the address when it cannot be reached or answers with
/// something that is not an info reply.
pub fn info(
    addr: SocketAddr,
    names: &[&str],
    timeout: Duration,
) -> Result<BTreeMap<String, String>, String> {
    crate::system::aerospike::query(Peer::plain(addr), names, timeout)
        .map_err(|e| format!("{addr}: {e}"))
}

/// One node kvbench started.
struct Node {
    ports: NodePorts,
    id: String,
    dir: tempfile::TempDir,
    process: ProcessGuard,
}

impl Node {
    fn addr(&self) -> SocketAddr {
        SocketAddr::from((self.ports.ip, self.ports.service))
    }
}

/// Node ids unique to this process's starts: the node that answers is the
/// one this configuration started.
fn node_id() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    format!(
        "{:x}{:04x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed) & 0xffff
    )
}

/// Free ports for a node at `ip` (free on loopback, so also in a fresh
/// network namespace, where nothing listens yet).
fn free_ports(ip: IpAddr) -> Result<NodePorts, ServerError> {
    let port = || {
        ports::free_loopback_port().map_err(|source| ServerError::Io {
            what: "pick a free loopback port".into(),
            source,
        })
    };
    Ok(NodePorts {
        ip,
        service: port()?,
        fabric: port()?,
        heartbeat: port()?,
        admin: port()?,
    })
}

/// Private Aerospike nodes (one, or a mesh cluster): started by
/// [`Aerospike::start`], stopped by [`Aerospike::stop`] or on drop.
pub struct Aerospike {
    config: Config,
    /// How kvbench's own info queries reach the nodes: plain, with the
    /// namespace whose figures they read.
    access: Access,
    binary: PathBuf,
    nodes: Vec<Node>,
    settings: Vec<Setting>,
}

impl Aerospike {
    /// Starts `nodes` nodes of `binary` with `config` and waits until each
    /// answers as the node kvbench configured and, for several, until the
    /// cluster has them all and no migration is left.
    ///
    /// # Errors
    /// A node that exits or does not answer in time (with its log's tail).
    pub fn start(binary: &Path, config: Config, nodes: usize) -> Result<Aerospike, ServerError> {
        Aerospike::start_on(binary, config, nodes, Hosts::Loopback)
    }

    /// [`Aerospike::start`], node `i` on `hosts`' host `i` (its own network
    /// namespace and address with `--netns`; the mesh is seeded with every
    /// node's address there).
    ///
    /// # Errors
    /// As [`Aerospike::start`], and a network with fewer hosts than nodes.
    pub fn start_on(
        binary: &Path,
        config: Config,
        nodes: usize,
        hosts: Hosts<'_>,
    ) -> Result<Aerospike, ServerError> {
        ports::retry_taken(|| Aerospike::start_once(binary, config.clone(), nodes, hosts))
    }

    /// One start on freshly picked ports (on a port taken, the nodes are
    /// stopped, and a retry may succeed).
    fn start_once(
        binary: &Path,
        config: Config,
        nodes: usize,
        hosts: Hosts<'_>,
    ) -> Result<Aerospike, Attempt> {
        let plain = Attempt::Failed;
        let n = nodes.max(1);
        let places: Vec<Host> = (0..n)
            .map(|i| hosts.host(i))
            .collect::<Result<_, _>>()
            .map_err(plain)?;
        let ports: Vec<NodePorts> = places
            .iter()
            .map(|h| free_ports(IpAddr::V4(h.ip())))
            .collect::<Result<_, _>>()
            .map_err(plain)?;
        let mut me = Aerospike {
            access: Access {
                namespace: Some(config.namespace.clone()),
                ..Access::plain()
            },
            config,
            binary: binary.to_path_buf(),
            nodes: Vec::new(),
            settings: Vec::new(),
        };
        for (p, host) in ports.iter().zip(&places) {
            let netns = host.open_netns().map_err(plain)?;
            let dir = crate::workdir::create("aerospike").map_err(|source| {
                plain(ServerError::Io {
                    what: "create a temporary directory".into(),
                    source,
                })
            })?;
            let io = |what: &str| {
                let what = what.to_string();
                move |source| plain(ServerError::Io { what, source })
            };
            // asd refuses to start without its system metadata directory.
            std::fs::create_dir_all(dir.path().join("work/smd")).map_err(io("create smd"))?;
            std::fs::create_dir_all(dir.path().join("work/usr/udf/lua"))
                .map_err(io("create usr/udf/lua"))?;
            let id = node_id();
            let (text, settings) = config_text(&me.config, &id, dir.path(), p, &ports);
            let file = dir.path().join("aerospike.conf");
            std::fs::write(&file, text).map_err(io("write aerospike.conf"))?;
            let args = vec![
                "--config-file".to_string(),
                file.display().to_string(),
                "--foreground".to_string(),
            ];
            let log = dir.path().join("console.log");
            let process = ProcessGuard::spawn(binary, &args, dir.path(), &log, netns.as_ref())
                .map_err(io(&format!("start {}", binary.display())))?;
            me.settings = settings;
            me.nodes.push(Node {
                ports: *p,
                id,
                dir,
                process,
            });
        }
        me.wait_ready()
            .map_err(|e| Attempt::of(e, me.port_taken()))?;
        Ok(me)
    }

    /// The log asd writes to: its own file once it has one, else the console.
    fn log_of(node: &Node) -> PathBuf {
        let log = node.dir.path().join("asd.log");
        if log.exists() {
            log
        } else {
            node.dir.path().join("console.log")
        }
    }

    /// Whether a node waits for a port another process took.
    fn port_taken(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| crate::process::log_tail(&Aerospike::log_of(n), 20).contains(PORT_TAKEN))
    }

    fn failed(&self, node: &Node, reason: String) -> ServerError {
        ServerError::Aerospike {
            reason: format!("the node at {}: {reason}", node.addr()),
            log_tail: crate::process::log_tail(&Aerospike::log_of(node), 20),
        }
    }

    fn wait_ready(&self) -> Result<(), ServerError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let n = self.nodes.len() as u64;
        for node in &self.nodes {
            let addr = node.addr();
            loop {
                if let Some(status) = node.process.exit_status() {
                    return Err(self.failed(node, format!("it exited during start-up ({status})")));
                }
                let last = match info(addr, &["node", "statistics"], QUERY_TIMEOUT) {
                    Ok(m)
                        if m.get("node")
                            .is_some_and(|id| id.eq_ignore_ascii_case(&node.id)) =>
                    {
                        let stats = aerospike_info::parse_pairs(
                            m.get("statistics").map_or("", String::as_str),
                        );
                        let size = parse_u64(stats.get("cluster_size"));
                        let migrating = parse_u64(stats.get("migrate_partitions_remaining"));
                        if size == Some(n) && migrating == Some(0) {
                            break;
                        }
                        format!("cluster size {size:?} of {n}, partitions to migrate {migrating:?}")
                    }
                    Ok(m) => format!("answered by node {:?}, not {}", m.get("node"), node.id),
                    Err(e) => e,
                };
                if self.port_taken() {
                    return Err(self.failed(node, format!("a port it was given is taken ({last})")));
                }
                if Instant::now() >= deadline {
                    return Err(self.failed(
                        node,
                        format!(
                            "not ready within {} s (last: {last})",
                            READY_TIMEOUT.as_secs()
                        ),
                    ));
                }
                std::thread::sleep(READY_POLL);
            }
        }
        self.wait_stable(deadline)
    }

    /// Waits until every node says the cluster is stable at its full size
    /// with migrations done (`cluster-stable`, the check Aerospike's own
    /// tools use), with one cluster key, twice in a row a poll apart. Per
    /// node statistics are not enough: right after the nodes meet,
    /// `migrate_partitions_remaining` reads 0 before the rebalance has
    /// begun, and a client that reads the partition map then finds no
    /// node for two thirds of the partitions (seen on 3 nodes).
    fn wait_stable(&self, deadline: Instant) -> Result<(), ServerError> {
        let command = format!(
            "cluster-stable:size={};ignore-migrations=false",
            self.nodes.len()
        );
        let mut previous: Option<String> = None;
        loop {
            let mut keys = Vec::with_capacity(self.nodes.len());
            let mut last = String::new();
            for node in &self.nodes {
                if let Some(status) = node.process.exit_status() {
                    return Err(self.failed(node, format!("it exited during start-up ({status})")));
                }
                match info(node.addr(), &[&command], QUERY_TIMEOUT) {
                    Ok(m) => match m.get(&command) {
                        Some(key) if !key.is_empty() && !key.starts_with("ERROR") => {
                            keys.push(key.clone())
                        }
                        other => last = format!("cluster-stable answered {other:?}"),
                    },
                    Err(e) => last = e,
                }
            }
            let agreed = (keys.len() == self.nodes.len() && keys.windows(2).all(|w| w[0] == w[1]))
                .then(|| keys[0].clone());
            if agreed.is_some() && agreed == previous {
                return Ok(());
            }
            previous = agreed;
            if Instant::now() >= deadline {
                return Err(self.failed(
                    &self.nodes[0],
                    format!(
                        "the cluster was not stable within {} s (last: {last}, keys {keys:?})",
                        READY_TIMEOUT.as_secs()
                    ),
                ));
            }
            std::thread::sleep(READY_POLL);
        }
    }

    /// Each node's client address.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|n| n.addr()).collect()
    }

    /// The namespace records go to.
    pub fn namespace(&self) -> &str {
        &self.config.namespace
    }

    /// The settings that differ from the server's defaults.
    pub fn settings(&self) -> &[Setting] {
        &self.settings
    }

    /// The binary started.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// Each node's pid.
    pub fn pids(&self) -> Vec<u32> {
        self.nodes.iter().map(|n| n.process.pid()).collect()
    }

    /// What the first node says it is: its edition and version, from
    /// `release` (8.1 deprecates `edition` and `version`; `build` is the
    /// fallback for older servers).
    ///
    /// # Errors
    /// When it does not answer.
    pub fn version(&self) -> Result<(String, String), String> {
        let m = info(self.addrs()[0], &["release", "build"], QUERY_TIMEOUT)?;
        let (edition, version) = crate::system::aerospike::release(&m);
        Ok((edition.unwrap_or_default(), version.unwrap_or_default()))
    }

    /// Memory per node and summed: the namespace's data and index bytes
    /// (the server's own figures), RSS and CPU from `/proc`, and records.
    ///
    /// # Errors
    /// When a node does not answer.
    pub fn probe(&self, stage: &str) -> Result<Probe, String> {
        let mut nodes = Vec::new();
        // A node that died is reported by `lost_nodes`, not probed.
        for node in self
            .nodes
            .iter()
            .filter(|n| n.process.exit_status().is_none())
        {
            let addr = node.addr();
            let peer = Peer {
                addr,
                access: &self.access,
            };
            let pid = node.process.pid();
            let p = AEROSPIKE
                .snapshot(peer, QUERY_TIMEOUT)
                .map_err(|e| format!("{addr}: {e}"))?
                .probe(
                    stage,
                    crate::probe::rss_bytes(pid).ok(),
                    crate::probe::cpu_seconds(pid).ok(),
                );
            if self.nodes.len() == 1 {
                return Ok(p);
            }
            nodes.push(NodeProbe::of(addr.to_string(), "node".into(), &p));
        }
        Ok(Probe::summed(stage, nodes))
    }

    /// Nodes whose process has exited (`addr (how)`).
    pub fn lost_nodes(&self) -> Vec<String> {
        self.nodes
            .iter()
            .filter_map(|n| {
                n.process
                    .exit_status()
                    .map(|st| format!("{} ({st})", n.addr()))
            })
            .collect()
    }

    /// CPU seconds of every node still running, `None` when one cannot be
    /// read.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.nodes
            .iter()
            .filter(|n| n.process.exit_status().is_none())
            .map(|n| crate::probe::cpu_seconds(n.process.pid()).ok())
            .sum()
    }

    /// Kills node `i` at once (SIGKILL), as a crash would.
    pub fn kill(&self, i: usize) {
        if let Some(n) = self.nodes.get(i) {
            // SAFETY: the pid is our unreaped child's (ProcessGuard never
            // lets it be reaped while it can still be signalled).
            unsafe {
                libc::kill(n.process.pid() as libc::pid_t, libc::SIGKILL);
            }
        }
    }

    /// Stops every node with SIGTERM (SIGKILL after the grace period).
    ///
    /// # Errors
    /// A node that did not stop cleanly (it is stopped either way).
    pub fn stop(mut self) -> Result<(), ServerError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), ServerError> {
        let mut first = Ok(());
        for node in self.nodes.drain(..) {
            let ending = node.process.shutdown();
            if first.is_ok() {
                if let Ending::Killed(_) | Ending::WaitFailed = ending {
                    first = Err(ServerError::Aerospike {
                        reason: format!("node {} did not stop on SIGTERM", node.id),
                        log_tail: String::new(),
                    });
                }
            }
        }
        first
    }
}

/// The per-cell sequence (probe, run, stop) sees a private Aerospike like
/// any other deployment.
impl crate::Deployment for Aerospike {
    /// The nodes as a cluster's seeds (the client library finds the
    /// partition map itself), one node as a single server.
    fn endpoints(&self) -> kvbench_model::Endpoints {
        match self.addrs()[..] {
            [one] => kvbench_model::Endpoints::Single(one),
            _ => kvbench_model::Endpoints::Cluster(self.addrs()),
        }
    }
    fn binary(&self) -> String {
        self.binary.display().to_string()
    }
    fn settings(&self) -> Vec<Setting> {
        self.settings.clone()
    }
    fn version(&self) -> Result<ServerVersion, ServerError> {
        let (_, version) = Aerospike::version(self).map_err(|reason| ServerError::Aerospike {
            reason,
            log_tail: String::new(),
        })?;
        Ok(ServerVersion {
            name: Some("aerospike".into()),
            version,
            allocator: None,
        })
    }
    fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        Aerospike::probe(self, stage).map_err(|reason| ServerError::Aerospike {
            reason,
            log_tail: String::new(),
        })
    }
    fn cpu_seconds(&self) -> Option<f64> {
        Aerospike::cpu_seconds(self)
    }
    fn lost_nodes(&self) -> Vec<String> {
        Aerospike::lost_nodes(self)
    }
    fn pids(&self) -> Vec<u32> {
        Aerospike::pids(self)
    }
    fn stop(self: Box<Self>) -> Result<(), ServerError> {
        Aerospike::stop(*self)
    }
}

impl Drop for Aerospike {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context of Aerospike's configuration format: `name [arg] {`, its
    /// lines `key value...` and nested contexts, `}`; `#` starts a comment.
    #[derive(Debug, Default)]
    struct Context {
        lines: Vec<(String, Vec<String>)>,
        children: Vec<(String, Context)>,
    }

    fn parse(text: &str) -> Result<Context, String> {
        let mut stack = vec![(String::new(), Context::default())];
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.last() == Some(&"{") {
                stack.push((words[..words.len() - 1].join(" "), Context::default()));
            } else if line == "}" {
                let (name, ctx) = stack.pop().ok_or(format!("line {}: stray }}", i + 1))?;
                let parent = stack
                    .last_mut()
                    .ok_or(format!("line {}: stray }}", i + 1))?;
                parent.1.children.push((name, ctx));
            } else if line.contains('{') || line.contains('}') {
                return Err(format!(
                    "line {}: a brace must be alone at the end: {raw}",
                    i + 1
                ));
            } else {
                let top = stack.last_mut().ok_or("empty stack")?;
                top.1.lines.push((
                    words[0].to_string(),
                    words[1..].iter().map(|w| w.to_string()).collect(),
                ));
            }
        }
        if stack.len() != 1 {
            return Err(format!("{} contexts not closed", stack.len() - 1));
        }
        Ok(stack.pop().map(|(_, c)| c).unwrap_or_default())
    }

    fn child<'a>(c: &'a Context, name: &str) -> &'a Context {
        c.children
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
            .unwrap_or_else(|| panic!("context {name} in {c:?}"))
    }

    fn values<'a>(c: &'a Context, key: &str) -> Vec<&'a Vec<String>> {
        c.lines
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v)
            .collect()
    }

    /// Every `address` and every seed anywhere in the file.
    fn addresses(c: &Context, out: &mut Vec<String>) {
        for (k, v) in &c.lines {
            if k == "address" || k == "mesh-seed-address-port" || k.ends_with("-address") {
                out.push(v.first().cloned().unwrap_or_default());
            }
        }
        for (_, ch) in &c.children {
            addresses(ch, out);
        }
    }

    fn ports(base: u16) -> NodePorts {
        NodePorts {
            ip: IpAddr::from([127, 0, 0, 1]),
            service: base,
            fabric: base + 1,
            heartbeat: base + 2,
            admin: base + 3,
        }
    }

    #[test]
    fn the_configuration_parses_and_binds_and_seeds_loopback_only() {
        let mesh = [ports(4000), ports(5000), ports(6000)];
        let (text, settings) = config_text(
            &Config::default(),
            "abc1",
            Path::new("/tmp/kv x"),
            &mesh[1],
            &mesh,
        );
        let root = parse(&text).expect("parses");
        let names: Vec<&str> = root.children.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["service", "mod-lua", "logging", "network", "namespace ycsb"]
        );
        let net = child(&root, "network");
        let service = child(net, "service");
        assert_eq!(values(service, "port"), [&vec!["5000".to_string()]]);
        let hb = child(net, "heartbeat");
        assert_eq!(values(hb, "mode"), [&vec!["mesh".to_string()]]);
        let seeds: Vec<&str> = values(hb, "mesh-seed-address-port")
            .iter()
            .map(|v| v[1].as_str())
            .collect();
        assert_eq!(
            seeds,
            ["4002", "5002", "6002"],
            "every node's heartbeat, its own too"
        );
        assert_eq!(
            values(child(net, "fabric"), "port"),
            [&vec!["5001".to_string()]]
        );
        assert_eq!(
            values(child(net, "admin"), "port"),
            [&vec!["5003".to_string()]]
        );
        let mut all = Vec::new();
        addresses(&root, &mut all);
        assert_eq!(
            all.len(),
            7,
            "service, heartbeat, 3 seeds, fabric, admin: {all:?}"
        );
        assert!(all.iter().all(|a| a == "127.0.0.1"), "{all:?}");
        let svc = child(&root, "service");
        assert_eq!(values(svc, "run-as-daemon"), [&vec!["false".to_string()]]);
        assert_eq!(values(svc, "node-id"), [&vec!["abc1".to_string()]]);
        assert!(values(svc, "service-threads").is_empty(), "server default");
        let ns = child(&root, "namespace ycsb");
        assert_eq!(values(ns, "replication-factor"), [&vec!["1".to_string()]]);
        let engine = child(ns, "storage-engine memory");
        assert_eq!(values(engine, "data-size"), [&vec!["1024M".to_string()]]);
        assert!(settings.iter().any(|s| s.name == "network.service.address"
            && s.value == "127.0.0.1"
            && s.reason.contains("loopback")));
    }

    #[test]
    fn the_papers_preset_sets_four_service_threads() {
        let c = Config {
            paper_preset: true,
            ..Config::default()
        };
        let (text, settings) = config_text(&c, "1", Path::new("/d"), &ports(3000), &[ports(3000)]);
        let root = parse(&text).expect("parses");
        assert_eq!(
            values(child(&root, "service"), "service-threads"),
            [&vec!["4".to_string()]]
        );
        assert!(settings.iter().any(|s| s.name == "service.service-threads"));
    }

    #[test]
    fn the_test_parser_refuses_what_asd_refuses() {
        assert!(parse("service {\n").is_err());
        assert!(parse("}\n").is_err());
        assert!(
            parse("service { run-as-daemon false }\n").is_err(),
            "one setting per line"
        );
    }
}
