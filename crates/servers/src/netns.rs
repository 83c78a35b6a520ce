//! A private network for one run (`--netns`): every process kvbench starts
//! lives in a network namespace of its own, the client (kvbench's engine and
//! probes) in another, each joined by a veth pair to one bridge, with every
//! link shaped by `tc`. Traffic then crosses a real network stack and a real
//! bandwidth limit, as between the machines of the papers, on one machine.
//!
//! Why it is built this way:
//! - **Nothing in the root namespace.** The bridge lives in a hub namespace
//!   of its own, veth ends are created directly inside their namespaces
//!   (`ip -n HUB link add ... peer ... netns NS`), and only private
//!   addresses inside those namespaces are used, so kvbench never changes
//!   the host's interfaces, routes or firewall.
//! - **The same subnet for every run** (10.77.0.0/16: client .0.1, servers
//!   from .0.2). Two runs at once cannot collide: their networks share no
//!   link, route or neighbour table, and a namespace sees only its own.
//!   A per-run subnet would buy nothing and would make the recorded
//!   settings (`bind`, `cluster-announce-ip`) of equal runs differ.
//! - **Names carry the owner's pid** (`kvb-<pid>-<seq>-hub`, `-c`, `-n0`...)
//!   because a SIGKILLed kvbench runs no destructor: the next [`Network`]
//!   removes every `kvb-` namespace whose pid is gone, and never one of a
//!   live process, nor anything not named by kvbench. Removing a namespace
//!   removes its interfaces and bridge with it.
//! - **The client joins by `setns` on the calling thread** ([`Network::enter_client`]):
//!   threads created afterwards (the engine's workers, their io_uring and
//!   tokio) inherit its namespace, so readiness checks, probes and the load
//!   all cross the links with no change to the engine. Servers join theirs
//!   between fork and exec (`process.rs`), whatever thread forks them.
//! - **Shaping** is on both ends of every veth: each host's egress (what it
//!   sends) and the hub's egress towards it (what it receives), so `--link-rate`
//!   is a full-duplex port rate, and three servers answering one client
//!   share the client's one port, as behind a switch. The delay is added once,
//!   at each host's egress, so any two hosts are `--link-delay` apart one way
//!   and a request and its reply pay it twice.
//!
//! It must not touch namespaces or interfaces it did not create (other than
//! leftovers of dead kvbench processes, recognised by name), and must not
//! start servers: it only gives them a place ([`Host`]).

use crate::ServerError;
use kvbench_model::TopologyKind;
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Where `ip netns` keeps its namespaces (bind mounts named after them).
const NETNS_DIR: &str = "/run/netns";
/// Every name kvbench gives a namespace starts with this.
const PREFIX: &str = "kvb-";
/// The bridge in the hub namespace, and each host's end of its veth pair.
const BRIDGE: &str = "kvb-br";
const HOST_IF: &str = "kvb-eth";
/// Every network's addresses (a /16; see the module docs for why one).
const SUBNET: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 0);
/// Capabilities `ip netns` and `setns` need (linux/capability.h).
const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;

/// Token bucket depth at least this large: veth hands tbf GSO packets of up
/// to 64 KiB, and a bucket smaller than about two of them starves between
/// refills. Measured between two namespaces through the hub at 1gbit (TCP
/// goodput, payload bytes): bucket 16 KiB 471 Mbit/s, 64 KiB 866, 128 KiB
/// 956, 256 KiB 956; 956 Mbit/s is exactly 1 Gbit/s of frames (1448 payload
/// bytes per 1514-byte frame).
const MIN_BURST_BYTES: u64 = 128 * 1024;
/// ...and at least this long at the link's rate, so the bucket does not run
/// dry between timer wake-ups at high rates (10gbit: 1.25 MB).
const BURST_TIME: Duration = Duration::from_millis(1);
/// How long a packet may wait in tbf's queue before it is dropped (the
/// queue holds `rate x this + burst` bytes; 1.4 MB at 1gbit). Deep enough
/// that a closed loop with many requests in flight queues, as it would in
/// a NIC's transmit queue, instead of losing packets: a dropped segment
/// with nothing behind it waits for TCP's retransmission timer (200 ms and
/// more). Measured loading 10,000 8 KB records (4 connections x 64 in
/// flight, 2 MB) over 1gbit: with 1ms, 11,859 inserts/s and p99 493 ms
/// (single) / 249 ms (3-node cluster); with 10ms, 14,156 inserts/s (the
/// link's rate) and p99 28 / 42 ms, which is the queue itself (2 MB at
/// 125 MB/s is 17 ms, the p50).
const QUEUE_LATENCY: &str = "10ms";

/// Distinguishes networks created by one process (tests build several).
static NEXT: AtomicU32 = AtomicU32::new(0);

/// How every link of a network is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Link {
    /// Port rate in bits per second, each direction; `None`: unshaped.
    ///
    /// Shaped with tbf rather than htb or netem's `rate`: tbf is a token
    /// bucket built for rate limiting and measured exact here (956 Mbit/s
    /// of TCP goodput at 1gbit, i.e. line rate; see `MIN_BURST_BYTES`;
    /// htb: 930), while netem's `rate` could not be measured on the kernel
    /// this was written on (it lacks `sch_netem`), and with tbf netem stays
    /// optional: without `--link-delay`, only tbf is needed.
    pub rate_bits: Option<u64>,
    /// One-way delay between any two hosts (netem `delay` at each host's
    /// egress, under the rate limit); zero: none.
    pub delay: Duration,
}

/// Where a process kvbench starts lives: the address it binds and the
/// network namespace it joins (none: loopback in kvbench's own namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    ip: Ipv4Addr,
    netns: Option<String>,
}

impl Host {
    /// 127.0.0.1 in kvbench's own namespace: how servers run without `--netns`.
    pub fn loopback() -> Host {
        Host {
            ip: Ipv4Addr::LOCALHOST,
            netns: None,
        }
    }

    /// The address the process binds and clients reach it at.
    pub fn ip(&self) -> Ipv4Addr {
        self.ip
    }

    /// The namespace's name (`kvb-<pid>-<seq>-n0`), if it has one.
    pub fn netns(&self) -> Option<&str> {
        self.netns.as_deref()
    }

    /// The namespace as a file to `setns` into, opened now (before any fork).
    pub(crate) fn open_netns(&self) -> Result<Option<File>, ServerError> {
        self.netns
            .as_deref()
            .map(|name| {
                File::open(Path::new(NETNS_DIR).join(name)).map_err(|source| ServerError::Io {
                    what: format!("open network namespace {NETNS_DIR}/{name}"),
                    source,
                })
            })
            .transpose()
    }
}

/// Where the servers of a deployment run.
#[derive(Debug, Clone, Copy)]
pub enum Hosts<'a> {
    /// All on loopback, in kvbench's own namespace.
    Loopback,
    /// Server `i` on the network's host `i`.
    Network(&'a Network),
}

impl Hosts<'_> {
    /// The place of the deployment's `i`-th process (in start order).
    ///
    /// # Errors
    /// [`ServerError::Io`] when the network has fewer hosts.
    pub fn host(&self, i: usize) -> Result<Host, ServerError> {
        match self {
            Hosts::Loopback => Ok(Host::loopback()),
            Hosts::Network(n) => n.servers.get(i).cloned().ok_or_else(|| ServerError::Io {
                what: format!(
                    "place process {} in network {}: it has only {} server namespaces",
                    i + 1,
                    n.tag,
                    n.servers.len()
                ),
                source: io::Error::from(io::ErrorKind::InvalidInput),
            }),
        }
    }
}

/// What can go wrong while building or removing a network.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    /// kvbench lacks the capabilities namespaces need.
    #[error("--netns needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces; run kvbench as root, or drop --netns")]
    NotPermitted,
    /// `ip` or `tc` is missing.
    #[error("--netns needs `{program}` from iproute2 (apt-get install iproute2): {message}")]
    MissingTool {
        /// `ip` or `tc`.
        program: &'static str,
        /// Why it could not run.
        message: String,
    },
    /// The kernel has no netem, so no delay can be added.
    #[error("--link-delay needs tc's netem queueing discipline (kernel option CONFIG_NET_SCH_NETEM, module sch_netem), which this kernel lacks (tc: {stderr}); run without --link-delay")]
    NoNetem {
        /// What tc said.
        stderr: String,
    },
    /// An `ip` or `tc` command failed.
    #[error("--netns: `{command}` failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// What it printed on stderr (one line).
        stderr: String,
    },
    /// Joining or leaving a namespace failed.
    #[error("--netns: cannot {what}: {source}")]
    Setns {
        /// What was being done, naming the namespace.
        what: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// A run's private network; dropping it removes every namespace it created
/// (and with them their interfaces, the bridge and the shaping).
#[derive(Debug)]
pub struct Network {
    /// `kvb-<pid>-<seq>`: the prefix of all its namespaces.
    tag: String,
    link: Link,
    client: Host,
    servers: Vec<Host>,
    /// Every namespace created so far, hub first; removed in reverse.
    created: Vec<String>,
}

impl Network {
    /// How many processes a deployment starts (one namespace each): nodes
    /// and replicas, plus twemproxy itself.
    pub fn hosts_for(topology: TopologyKind, nodes: usize, replicas: usize) -> usize {
        match topology {
            TopologyKind::Single => 1,
            TopologyKind::Cluster => nodes * (1 + replicas),
            TopologyKind::Pool => nodes,
            TopologyKind::Twemproxy => nodes + 1,
            TopologyKind::Sentinel => nodes + crate::system::SENTINELS,
        }
    }

    /// Checks the privileges and tools, removes the leftovers of kvbench
    /// processes that are gone, and builds a hub with a bridge, a client
    /// namespace and `servers` server namespaces, every link shaped by `link`.
    ///
    /// # Errors
    /// [`NetnsError::NotPermitted`] without root, [`NetnsError::MissingTool`],
    /// [`NetnsError::NoNetem`] for a delay on a kernel without netem, or the
    /// first failing command; whatever was created is removed again.
    pub fn create(servers: usize, link: Link) -> Result<Network, NetnsError> {
        preflight(link)?;
        remove_leftovers();
        let mut net = Network {
            tag: format!(
                "{PREFIX}{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            link,
            client: Host::loopback(),
            servers: Vec::with_capacity(servers),
            created: Vec::new(),
        };
        // On error `net` drops here and removes what exists.
        let hub = net.add_namespace("hub")?;
        ip(&["-n", &hub, "link", "add", "name", BRIDGE, "type", "bridge"])?;
        ip(&["-n", &hub, "link", "set", "dev", BRIDGE, "up"])?;
        net.client = net.add_host("c", 1)?;
        for i in 0..servers {
            let host = net.add_host(&format!("n{i}"), i as u32 + 2)?;
            net.servers.push(host);
        }
        Ok(net)
    }

    /// The namespace prefix of this network (`kvb-<pid>-<seq>`).
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The client's place.
    pub fn client(&self) -> &Host {
        &self.client
    }

    /// How the links are shaped.
    pub fn link(&self) -> Link {
        self.link
    }

    fn hub(&self) -> String {
        format!("{}-hub", self.tag)
    }

    fn add_namespace(&mut self, role: &str) -> Result<String, NetnsError> {
        let name = format!("{}-{role}", self.tag);
        ip(&["netns", "add", &name])?;
        self.created.push(name.clone());
        Ok(name)
    }

    /// Namespace `role` with address number `k` in the /16, linked to the
    /// bridge through `kvb-<role>` in the hub.
    fn add_host(&mut self, role: &str, k: u32) -> Result<Host, NetnsError> {
        let ns = self.add_namespace(role)?;
        let hub = self.hub();
        let port = format!("{PREFIX}{role}");
        let [a, b, ..] = SUBNET.octets();
        let ip_addr = Ipv4Addr::new(a, b, (k >> 8) as u8, k as u8);
        let cidr = format!("{ip_addr}/16");
        ip(&[
            "-n", &hub, "link", "add", "name", &port, "type", "veth", "peer", "name", HOST_IF,
            "netns", &ns,
        ])?;
        ip(&["-n", &hub, "link", "set", "dev", &port, "master", BRIDGE])?;
        ip(&["-n", &hub, "link", "set", "dev", &port, "up"])?;
        ip(&["-n", &ns, "addr", "add", &cidr, "dev", HOST_IF])?;
        ip(&["-n", &ns, "link", "set", "dev", HOST_IF, "up"])?;
        ip(&["-n", &ns, "link", "set", "dev", "lo", "up"])?;
        shape(&ns, HOST_IF, self.link.rate_bits, self.link.delay)?;
        shape(&hub, &port, self.link.rate_bits, Duration::ZERO)?;
        Ok(Host {
            ip: ip_addr,
            netns: Some(ns),
        })
    }

    /// Cuts the server host at `addr` off the network for `span` (its port
    /// on the bridge down, then up again): every packet to or from it is
    /// dropped meanwhile, a partition as the clients meet it (connections
    /// stay open and stall; nothing is reset).
    ///
    /// # Errors
    /// When no server host has `addr`, or `ip` fails.
    pub fn cut_off(&self, addr: std::net::IpAddr, span: Duration) -> Result<(), NetnsError> {
        let i = self
            .servers
            .iter()
            .position(|h| std::net::IpAddr::V4(h.ip) == addr)
            .ok_or_else(|| NetnsError::Command {
                command: format!("find the host of {addr}"),
                stderr: "no server of this run's network has that address".into(),
            })?;
        let (hub, port) = (self.hub(), format!("{PREFIX}n{i}"));
        ip(&["-n", &hub, "link", "set", "dev", &port, "down"])?;
        std::thread::sleep(span);
        ip(&["-n", &hub, "link", "set", "dev", &port, "up"])
    }

    /// Moves the calling thread into the client namespace until the guard
    /// drops. Threads it creates meanwhile are born there.
    ///
    /// # Errors
    /// [`NetnsError::Setns`] when a namespace cannot be opened or joined.
    pub fn enter_client(&self) -> Result<InClient<'_>, NetnsError> {
        let name = self.client.netns.as_deref().unwrap_or_default();
        let failed = |what: String| move |source| NetnsError::Setns { what, source };
        // The spawner thread must be born in our own namespace, not in one
        // that is removed at the end of the run.
        crate::process::spawner().map_err(failed("start the process spawner thread".into()))?;
        let home = File::open("/proc/thread-self/ns/net")
            .map_err(failed("open this thread's network namespace".into()))?;
        let target = File::open(Path::new(NETNS_DIR).join(name))
            .map_err(failed(format!("open network namespace {name}")))?;
        setns(&target).map_err(failed(format!("join network namespace {name}")))?;
        Ok(InClient {
            home,
            _network: PhantomData,
        })
    }

    /// Removes every namespace of the network, reporting the first failure
    /// (the others are still removed).
    ///
    /// # Errors
    /// [`NetnsError::Command`] when `ip netns del` fails.
    pub fn remove(mut self) -> Result<(), NetnsError> {
        self.remove_all()
    }

    fn remove_all(&mut self) -> Result<(), NetnsError> {
        let mut first = Ok(());
        while let Some(name) = self.created.pop() {
            let r = ip(&["netns", "del", &name]);
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        let _ = self.remove_all();
    }
}

/// The calling thread is in a network's client namespace while this lives;
/// dropping it returns the thread to where it was. Not `Send`: it must drop
/// on the thread that entered.
pub struct InClient<'a> {
    home: File,
    _network: PhantomData<(&'a Network, *const ())>,
}

impl Drop for InClient<'_> {
    fn drop(&mut self) {
        // Cannot fail for a namespace we were in a moment ago, short of
        // losing privileges; then the thread stays in a namespace that is
        // about to be removed, and its sockets simply reach nothing.
        let _ = setns(&self.home);
    }
}

fn setns(ns: &File) -> io::Result<()> {
    // SAFETY: setns has no memory-safety preconditions; the fd is open.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Root's privileges, iproute2's tools and, for a delay, netem: checked
/// before anything is made.
///
/// # Errors
/// [`NetnsError::NotPermitted`], [`NetnsError::MissingTool`] or
/// [`NetnsError::NoNetem`].
pub fn preflight(link: Link) -> Result<(), NetnsError> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .unwrap_or(0);
    let has = |cap: u32| effective & (1 << cap) != 0;
    if !(has(CAP_NET_ADMIN) && has(CAP_SYS_ADMIN)) {
        return Err(NetnsError::NotPermitted);
    }
    for program in ["ip", "tc"] {
        match Command::new(program).arg("-V").output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                return Err(NetnsError::MissingTool {
                    program,
                    message: format!("`{program} -V` failed: {}", one_line(&out.stderr)),
                })
            }
            Err(e) => {
                return Err(NetnsError::MissingTool {
                    program,
                    message: e.to_string(),
                })
            }
        }
    }
    if link.delay.is_zero() {
        Ok(())
    } else {
        probe_netem()
    }
}

/// Adds netem to a throwaway veth pair in a throwaway namespace, named like
/// every other, so that even a crash here leaves nothing a later start
/// would not remove.
fn probe_netem() -> Result<(), NetnsError> {
    let name = format!(
        "{PREFIX}{}-{}-probe",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    ip(&["netns", "add", &name])?;
    let tried = ip(&[
        "-n", &name, "link", "add", "name", "kvb-a", "type", "veth", "peer", "name", "kvb-b",
    ])
    .and_then(|()| shape(&name, "kvb-a", None, Duration::from_micros(1)));
    let removed = ip(&["netns", "del", &name]);
    tried.and(removed)
}

/// Removes the namespaces of kvbench processes that no longer run (named
/// `kvb-<pid>-...`, pid gone) and returns their names. A pid that is alive,
/// even if reused by another program, keeps its namespaces: better a
/// leftover than someone else's network removed.
pub fn remove_leftovers() -> Vec<String> {
    let me = std::process::id();
    remove_where(|pid| pid != me && !crate::process::alive(pid))
}

/// Removes every namespace this process created and returns their names:
/// for an exit that skips destructors (a second Ctrl-C).
pub fn remove_own() -> Vec<String> {
    let me = std::process::id();
    remove_where(|pid| pid == me)
}

fn remove_where(owner_matches: impl Fn(u32) -> bool) -> Vec<String> {
    let mut removed = Vec::new();
    for name in kvbench_namespaces() {
        if owner(&name).is_some_and(&owner_matches) && ip(&["netns", "del", &name]).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// The names in `/run/netns` that kvbench gives namespaces.
pub fn kvbench_namespaces() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| owner(n).is_some())
        .collect();
    names.sort();
    names
}

/// The pid in `kvb-<pid>-<seq>-<role>`; `None` for any other name.
fn owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, rest) = rest.split_once('-')?;
    let (seq, role) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(seq) && !role.is_empty())
        .then(|| pid.parse().ok())
        .flatten()
}

/// Shapes `dev`'s egress in `ns`: netem for the delay (when there is one)
/// at the root, tbf for the rate under it, as netem's documentation
/// combines them; tbf alone without a delay.
fn shape(ns: &str, dev: &str, rate_bits: Option<u64>, delay: Duration) -> Result<(), NetnsError> {
    let base = ["-n", ns, "qdisc", "add", "dev", dev];
    let tbf_parent: &[&str] = if delay.is_zero() {
        &["root", "handle", "1:"]
    } else {
        // Whole nanoseconds, so 50us is written as 50us, not 50.000000001us.
        let delay = format!("{}us", delay.as_nanos() as f64 / 1e3);
        let args: Vec<&str> = base
            .iter()
            .copied()
            .chain(["root", "handle", "1:", "netem", "delay", &delay])
            .collect();
        tc(&args).map_err(|e| match e {
            NetnsError::Command { stderr, .. } if stderr.contains("qdisc kind is unknown") => {
                NetnsError::NoNetem { stderr }
            }
            other => other,
        })?;
        &["parent", "1:1", "handle", "10:"]
    };
    let Some(bits) = rate_bits else {
        return Ok(());
    };
    let rate = format!("{bits}bit");
    let burst = MIN_BURST_BYTES.max((bits as f64 / 8.0 * BURST_TIME.as_secs_f64()) as u64);
    let burst = format!("{burst}b");
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain(tbf_parent.iter().copied())
        .chain([
            "tbf",
            "rate",
            &rate,
            "burst",
            &burst,
            "latency",
            QUEUE_LATENCY,
        ])
        .collect();
    tc(&args)
}

fn ip(args: &[&str]) -> Result<(), NetnsError> {
    run("ip", args)
}

fn tc(args: &[&str]) -> Result<(), NetnsError> {
    run("tc", args)
}

/// Runs an iproute2 command; its stderr, on one line, is the error.
fn run(program: &'static str, args: &[&str]) -> Result<(), NetnsError> {
    let command = format!("{program} {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| NetnsError::MissingTool {
            program,
            message: e.to_string(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(NetnsError::Command {
            command,
            stderr: one_line(&out.stderr),
        })
    }
}

fn one_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        "(no message)".to_string()
    } else {
        text
    }
}

/// A rate as `tc` reads one: a number and a unit, case-insensitive; bit,
/// kbit, mbit, gbit, tbit (powers of 1000), kibit..tibit (of 1024), bps,
/// kbps.. (bytes per second, as in tc: `mbps` is megabytes); no unit is
/// bits per second. Returns bits per second.
///
/// # Errors
/// A message naming the text, for anything else or a rate below 8 bit/s.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    const UNITS: &[(&str, f64)] = &[
        ("bit", 1.0),
        ("kibit", 1024.0),
        ("kbit", 1e3),
        ("mibit", 1048576.0),
        ("mbit", 1e6),
        ("gibit", 1073741824.0),
        ("gbit", 1e9),
        ("tibit", 1099511627776.0),
        ("tbit", 1e12),
        ("bps", 8.0),
        ("kibps", 8.0 * 1024.0),
        ("kbps", 8e3),
        ("mibps", 8.0 * 1048576.0),
        ("mbps", 8e6),
        ("gibps", 8.0 * 1073741824.0),
        ("gbps", 8e9),
        ("tibps", 8.0 * 1099511627776.0),
        ("tbps", 8e12),
        ("", 1.0),
    ];
    let bad = || format!("'{text}' is not a rate like 1gbit, 100mbit or 10gbit (tc's units)");
    let (number, unit) = split_number(text).ok_or_else(bad)?;
    let scale = UNITS
        .iter()
        .find(|(u, _)| u.eq_ignore_ascii_case(unit))
        .map(|(_, s)| *s)
        .ok_or_else(bad)?;
    let bits = number * scale;
    if !(bits.is_finite() && bits >= 8.0 && bits < u64::MAX as f64) {
        return Err(format!("'{text}': a link rate must be at least 8bit"));
    }
    Ok(bits.round() as u64)
}

/// A delay as `tc` reads one: a number and s, ms, us or ns (also sec,
/// msec, usec, nsec and their plurals); no unit is microseconds.
///
/// # Errors
/// A message naming the text, for anything else or a delay above 10 s.
pub fn parse_delay(text: &str) -> Result<Duration, String> {
    const UNITS: &[(&[&str], f64)] = &[
        (&["s", "sec", "secs"], 1.0),
        (&["ms", "msec", "msecs"], 1e-3),
        (&["us", "usec", "usecs", ""], 1e-6),
        (&["ns", "nsec", "nsecs"], 1e-9),
    ];
    let bad = || format!("'{text}' is not a delay like 50us, 1ms or 0.2ms (tc's units)");
    let (number, unit) = split_number(text).ok_or_else(bad)?;
    let scale = UNITS
        .iter()
        .find(|(names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(unit)))
        .map(|(_, s)| *s)
        .ok_or_else(bad)?;
    let seconds = number * scale;
    if !(seconds.is_finite() && (0.0..=10.0).contains(&seconds)) {
        return Err(format!("'{text}': a link delay must be between 0 and 10s"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `"1.5gbit"` → `(1.5, "gbit")`; `None` without a leading non-negative number.
fn split_number(text: &str) -> Option<(f64, &str)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number: f64 = text[..end].parse().ok()?;
    Some((number, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_read_as_tc_reads_them() {
        for (text, bits) in [
            ("1gbit", 1_000_000_000),
            ("100mbit", 100_000_000),
            ("10Gbit", 10_000_000_000),
            ("1.5mbit", 1_500_000),
            ("1gibit", 1 << 30),
            ("125mbps", 1_000_000_000),
            ("1000000", 1_000_000),
            ("64kbit", 64_000),
        ] {
            assert_eq!(parse_rate(text), Ok(bits), "{text}");
        }
        for text in ["", "gbit", "1 gigabit", "-1gbit", "0bit", "1e3bit", "fast"] {
            let err = parse_rate(text).expect_err(text);
            assert!(err.contains(text) || text.is_empty(), "{err}");
        }
    }

    #[test]
    fn delays_are_read_as_tc_reads_them() {
        for (text, us) in [
            ("50us", 50.0),
            ("1ms", 1000.0),
            ("0.2msec", 200.0),
            ("75", 75.0),
            ("1s", 1e6),
            ("500ns", 0.5),
            ("0", 0.0),
        ] {
            let d = parse_delay(text).expect(text);
            assert!((d.as_secs_f64() * 1e6 - us).abs() < 1e-6, "{text}: {d:?}");
        }
        for text in ["", "ms", "50 parsecs", "11s", "-1ms"] {
            assert!(parse_delay(text).is_err(), "{text}");
        }
    }

    #[test]
    fn only_kvbench_names_have_an_owner() {
        assert_eq!(owner("kvb-1234-0-hub"), Some(1234));
        assert_eq!(owner("kvb-1234-12-n3"), Some(1234));
        for other in [
            "kvb-abc-0-hub",
            "kvb-1234-hub",
            "kvb-1234-0-",
            "kvbench-1-0-x",
            "docker-1-0-x",
            "kvb--0-c",
        ] {
            assert_eq!(owner(other), None, "{other}");
        }
    }

    #[test]
    fn hosts_match_what_each_topology_starts() {
        assert_eq!(Network::hosts_for(TopologyKind::Single, 3, 0), 1);
        assert_eq!(Network::hosts_for(TopologyKind::Cluster, 3, 1), 6);
        assert_eq!(Network::hosts_for(TopologyKind::Pool, 4, 0), 4);
        assert_eq!(Network::hosts_for(TopologyKind::Twemproxy, 3, 0), 4);
    }
}
