//! Per-system knowledge: the command line (and the settings it changes) and
//! the cold-path queries (identity, stats, INFO) over short blocking
//! connections.
//!
//! It must not manage processes or decide whether an answer came from the
//! right server: it reports the pid the server claims, and `server.rs`
//! compares. It must not parse the wire format itself; `kvbench-proto` does.

pub(crate) mod aerospike;
pub(crate) mod memcached;
pub(crate) mod redis;
pub(crate) mod valkey;

use crate::{ServerError, ServerSpec};
use kvbench_connect::Access;
use kvbench_model::{Probe, Setting, SystemKind};
use kvbench_proto::DecodeError;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

/// Replies larger than this are refused: no probe answer comes close, and a
/// runaway buffer would be worse than an error.
const MAX_REPLY: usize = 16 * 1024 * 1024;

/// A server's command line and the settings it deviates in.
pub(crate) struct Launch {
    pub args: Vec<String>,
    pub settings: Vec<Setting>,
}

/// What one probe query tells, with `None` for anything the server did not say.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// The pid the server reports for itself.
    pub pid: Option<u32>,
    pub memory_bytes: Option<u64>,
    pub items: Option<u64>,
    pub evictions: Option<u64>,
    /// What the server calls itself (`redis`, `valkey`, `memcached`).
    pub name: Option<String>,
    pub version: Option<String>,
    pub allocator: Option<String>,
    /// The process's resident memory as the server reports it (Redis
    /// `used_memory_rss`): what a remote server's probe records instead of `/proc`.
    pub reported_rss: Option<u64>,
    /// The process's CPU seconds (user + system) as the server reports them.
    pub reported_cpu: Option<f64>,
}

impl Snapshot {
    /// A probe at `stage` from the server's own figures, with the process
    /// figures read from `/proc` (`None` for a process that is not ours).
    pub(crate) fn probe(
        self,
        stage: &str,
        rss_bytes: Option<u64>,
        cpu_seconds: Option<f64>,
    ) -> Probe {
        Probe {
            stage: stage.to_string(),
            rss_bytes,
            server_memory_bytes: self.memory_bytes,
            cpu_seconds,
            items: self.items,
            evictions: self.evictions,
            nodes: Vec::new(),
        }
    }
}

/// Per-command call counts, by command (or counter) name.
pub(crate) type Counts = Vec<(String, u64)>;

/// Everything kvbench knows about one kind of server: how to find and start
/// it, which of its options kvbench must own, and what its cold-path
/// queries say. One implementation per module; [`of`] is the only place
/// that maps a [`SystemKind`] to one, so a new system is a new module and
/// one line there.
pub(crate) trait System: Sync {
    /// The executable searched on `PATH` when no binary is given.
    fn binary(&self) -> &'static str;
    /// The environment variable that names the binary when no
    /// `--server-bin` is given (before `PATH` is searched).
    fn binary_env(&self) -> Option<&'static str> {
        None
    }
    /// How to get the binary, for the "not found" message.
    fn install_hint(&self) -> &'static str;
    /// The command line for a private server bound to `addr` in `dir`,
    /// before the caller's extra arguments.
    fn launch(
        &self,
        addr: SocketAddr,
        dir: &Path,
        memory_limit_mb: Option<u64>,
        as_root: bool,
    ) -> Result<Launch, ServerError>;
    /// Why kvbench must own this option (`None`: the caller may set it).
    fn forbidden(&self, arg: &str) -> Option<&'static str>;
    /// The option's name as kvbench records it, and any value attached to it.
    fn split_option(&self, arg: &str) -> (String, Option<String>);
    /// The pid the server reports, from the cheapest query that has it.
    fn identify(&self, at: Peer<'_>, timeout: Duration) -> Result<Option<u32>, String>;
    /// Memory, items, evictions, identity and pid in one query.
    fn snapshot(&self, at: Peer<'_>, timeout: Duration) -> Result<Snapshot, String>;
    /// Everything the server says about itself, as key/value pairs.
    fn info(&self, at: Peer<'_>, timeout: Duration) -> Result<BTreeMap<String, String>, String>;
    /// The key of [`System::info`] that holds the server's pid.
    fn pid_key(&self) -> &'static str;
    /// Per-command call counts and the pid that reported them.
    fn command_stats(
        &self,
        at: Peer<'_>,
        timeout: Duration,
    ) -> Result<(Option<u32>, Counts), String>;
    /// Deletes every key the connection sees (Redis `FLUSHDB`: the
    /// selected database only; Memcached `flush_all`). Only ever called for
    /// `--flush` on a server kvbench did not start.
    fn flush(&self, at: Peer<'_>, timeout: Duration) -> Result<(), String>;
    /// The option that limits the connections a private server accepts at
    /// once (named as [`System::split_option`] records it), its default, and
    /// how many of them the server keeps for itself.
    fn connection_limit(&self) -> ConnectionLimit;
    /// What a node of a server-side cluster bound to `addr` adds to its
    /// command line; `None` when the system has no such cluster.
    fn cluster_node(&self, _addr: SocketAddr) -> Option<Launch> {
        None
    }
}

/// See [`System::connection_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionLimit {
    /// The option, as [`System::split_option`] names it.
    pub option: &'static str,
    /// Its value when nobody sets it.
    pub default: u64,
    /// Connections (descriptors) the server counts against the limit
    /// before any client: listening sockets, its own pipes.
    pub reserved: u64,
}

/// What a started server is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A server on its own.
    Single,
    /// A node of a server-side cluster.
    ClusterNode,
}

/// The implementation for `kind`.
pub(crate) fn of(kind: SystemKind) -> &'static dyn System {
    match kind {
        SystemKind::Redis => &redis::REDIS,
        SystemKind::Valkey => &valkey::VALKEY,
        SystemKind::Memcached => &memcached::MEMCACHED,
        SystemKind::Aerospike => &aerospike::AEROSPIKE,
    }
}

/// The command line for a private server bound to `addr` in `dir`, kvbench's own
/// settings followed by the caller's extra arguments. The extra arguments come
/// last, so the server's parser lets them win; a recorded kvbench setting they
/// override is dropped from the list so the record says what really ran.
pub(crate) fn launch(
    spec: &ServerSpec,
    role: Role,
    addr: SocketAddr,
    dir: &Path,
    as_root: bool,
) -> Result<Launch, ServerError> {
    let sys = of(spec.system);
    let mut launch = sys.launch(addr, dir, spec.memory_limit_mb, as_root)?;
    if role == Role::ClusterNode {
        let node = sys.cluster_node(addr).ok_or(ServerError::NoCluster {
            system: spec.system,
        })?;
        launch.args.extend(node.args);
        launch.settings.extend(node.settings);
    }
    let user = user_settings(spec.system, &spec.extra_args)?;
    launch
        .settings
        .retain(|ours| !user.iter().any(|u| u.name == ours.name));
    launch.settings.extend(user);
    launch.args.extend(spec.extra_args.iter().cloned());
    Ok(launch)
}

/// Why a server binds `ip`, recorded with its bind-address setting.
pub(crate) fn bind_reason(ip: IpAddr) -> &'static str {
    if ip.is_loopback() {
        "loopback only: the server is private to this run and must not be reachable from the network"
    } else {
        "its own network namespace's address (--netns): reachable only inside this run's private network"
    }
}

/// Records the caller's extra arguments as settings (reason `user`), grouping
/// each option with the values that follow it, and rejects options that would
/// break the private-server guarantees.
pub(crate) fn user_settings(
    system: SystemKind,
    extra: &[String],
) -> Result<Vec<Setting>, ServerError> {
    let sys = of(system);
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for arg in extra {
        if is_option(arg) {
            if let Some(reason) = sys.forbidden(arg) {
                return Err(ServerError::ForbiddenArgument {
                    system,
                    arg: arg.clone(),
                    reason,
                });
            }
            let (name, inline) = sys.split_option(arg);
            groups.push((name, inline.into_iter().collect()));
        } else if let Some((_, values)) = groups.last_mut() {
            values.push(arg.clone());
        } else {
            groups.push((arg.clone(), Vec::new()));
        }
    }
    Ok(groups
        .into_iter()
        .map(|(name, values)| Setting {
            name,
            value: values.join(" "),
            reason: "user".to_string(),
        })
        .collect())
}

/// `-5` is a value, `-t` and `--save` are options.
fn is_option(arg: &str) -> bool {
    arg.len() > 1 && arg.starts_with('-') && arg.parse::<f64>().is_err()
}

/// The pid the server at `addr` reports for itself; the cheapest query that
/// proves both "it answers" and "it is our child".
pub(crate) fn identify(system: SystemKind, at: Peer<'_>, timeout: Duration) -> Result<u32, String> {
    of(system)
        .identify(at, timeout)?
        .ok_or_else(|| "the server did not report its pid".to_string())
}

/// Where a cold-path query goes: a node, and how to open a connection to
/// it (TLS, AUTH) when kvbench did not start it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer<'a> {
    pub addr: SocketAddr,
    pub access: &'a Access,
}

impl Peer<'static> {
    /// A server kvbench started: plain TCP, no AUTH.
    pub(crate) fn plain(addr: SocketAddr) -> Peer<'static> {
        Peer {
            addr,
            access: &kvbench_connect::PLAIN,
        }
    }
}

/// One request, one complete reply, on a fresh connection. Errors are plain
/// messages; the caller knows which server they concern.
pub(crate) fn exchange<T>(
    at: Peer<'_>,
    timeout: Duration,
    request: &[u8],
    parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, DecodeError>,
) -> Result<T, String> {
    kvbench_connect::exchange(at.addr, at.access, timeout, request, MAX_REPLY, parse)
}

pub(crate) fn parse_u64(value: Option<&String>) -> Option<u64> {
    value?.trim().parse().ok()
}

/// The sum of two reported CPU-seconds figures (user and system).
fn cpu_sum(a: Option<&String>, b: Option<&String>) -> Option<f64> {
    let f = |v: Option<&String>| v?.trim().parse::<f64>().ok();
    Some(f(a)? + f(b)?)
}

fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a String> {
    pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_limit_the_user_sets_is_the_one_that_counts() {
        let limit = |system, args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            let (usable, option, set) = crate::connection_limit(system, &args).unwrap();
            (usable, option.to_string(), set)
        };
        assert_eq!(
            limit(SystemKind::Redis, &[]),
            (10_000, "--maxclients".into(), 10_000)
        );
        assert_eq!(
            limit(SystemKind::Valkey, &["--maxclients", "20000"]),
            (20_000, "--maxclients".into(), 20_000)
        );
        assert_eq!(limit(SystemKind::Memcached, &[]), (992, "-c".into(), 1_024));
        for args in [&["-c", "4096"][..], &["-c4096"], &["--conn-limit=4096"]] {
            assert_eq!(
                limit(SystemKind::Memcached, args),
                (4_064, "-c".into(), 4_096),
                "{args:?}"
            );
        }
    }

    fn names(settings: &[Setting]) -> Vec<(&str, &str)> {
        settings
            .iter()
            .map(|s| (s.name.as_str(), s.value.as_str()))
            .collect()
    }

    #[test]
    fn user_args_are_grouped_and_recorded() {
        let args: Vec<String> = [
            "--io-threads",
            "4",
            "--save",
            "900",
            "1",
            "--maxmemory-samples",
            "-1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = user_settings(SystemKind::Redis, &args).expect("allowed");
        assert_eq!(
            names(&s),
            [
                ("io-threads", "4"),
                ("save", "900 1"),
                ("maxmemory-samples", "-1")
            ]
        );
        assert!(s.iter().all(|s| s.reason == "user"));

        let args: Vec<String> = [
            "-t",
            "8",
            "-m1024",
            "--conn-limit=4096",
            "-o",
            "modern",
            "-M",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = user_settings(SystemKind::Memcached, &args).expect("allowed");
        assert_eq!(
            names(&s),
            [
                ("-t", "8"),
                ("-m", "1024"),
                ("-c", "4096"),
                ("-o", "modern"),
                ("-M", "")
            ]
        );
    }

    #[test]
    fn options_that_break_the_private_server_are_refused() {
        for (system, arg) in [
            (SystemKind::Redis, "--port"),
            (SystemKind::Redis, "--bind"),
            (SystemKind::Redis, "--daemonize"),
            (SystemKind::Memcached, "-p"),
            (SystemKind::Memcached, "-p7000"),
            (SystemKind::Memcached, "--listen=0.0.0.0"),
            (SystemKind::Memcached, "-d"),
            (SystemKind::Memcached, "-vd"),
            (SystemKind::Memcached, "--unix-socket"),
        ] {
            let err = user_settings(system, &[arg.to_string()]).expect_err(arg);
            assert!(
                matches!(err, ServerError::ForbiddenArgument { .. }),
                "{arg}: {err}"
            );
        }
        // `-t` takes a value, so the `d` in `-td` is not a flag.
        assert!(user_settings(SystemKind::Memcached, &["-tdv".to_string()]).is_ok());
    }

    #[test]
    fn user_args_override_recorded_settings() {
        let spec = ServerSpec {
            system: SystemKind::Memcached,
            binary: None,
            memory_limit_mb: Some(128),
            extra_args: vec!["-m".into(), "256".into()],
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], 1234));
        let l = launch(&spec, Role::Single, addr, Path::new("/tmp"), false).expect("launch");
        let m: Vec<_> = l.settings.iter().filter(|s| s.name == "-m").collect();
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].value.as_str(), m[0].reason.as_str()), ("256", "user"));
        assert_eq!(&l.args[l.args.len() - 2..], ["-m", "256"]);
    }
}
