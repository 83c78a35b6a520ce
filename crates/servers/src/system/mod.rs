//! Per-system knowledge: the command line (and the settings it changes) and
//! the cold-path queries (identity, stats, INFO) over short blocking
//! connections.
//!
//! It must not manage processes or decide whether an answer came from the
//! right server: it reports the pid the server claims, and `server.rs`
//! compares. It must not parse the wire format itself; `kvbench-proto` does.

pub(crate) mod aerospike;
mod contract;
pub(crate) mod memcached;
pub(crate) mod redis;

use crate::{ServerError, ServerSpec};
pub(crate) use contract::{
    bind_reason, cpu_sum, exchange, lookup, parse_u64, ConnectionLimit, Counts, Launch, Liveness,
    Peer, Role, Snapshot, System,
};
use kvbench_model::{Setting, SystemKind, TopologyKind};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// The name of the group the sentinels kvbench starts watch.
pub const SENTINEL_GROUP: &str = "kvbench";
/// How many sentinels a group kvbench starts gets: the fewest that can
/// still fail over with one of them down.
pub const SENTINELS: usize = 3;

/// The implementation for `kind`.
pub(crate) fn of(kind: SystemKind) -> &'static dyn System {
    match kind {
        SystemKind::Memcached => &memcached::MEMCACHED,
        SystemKind::Aerospike => &aerospike::AEROSPIKE,
        // The Redis family: one table, so a sibling is one entry there.
        resp => redis::member(resp).expect("every system of the model has an implementation"),
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
    match role {
        Role::Single => {}
        Role::ClusterNode => {
            let node = sys.cluster_node(addr).ok_or(ServerError::NoCluster {
                system: spec.system,
            })?;
            launch.args.extend(node.args);
            launch.settings.extend(node.settings);
        }
        Role::Replica(master) => {
            let node = sys.replica_of(master).ok_or(ServerError::NoSentinel {
                system: spec.system,
            })?;
            launch.args.extend(node.args);
            launch.settings.extend(node.settings);
        }
        // A sentinel is not the system under test: the user's server
        // arguments are not its own.
        Role::Sentinel(master) => {
            let start = sys
                .sentinel(dir, master, SENTINEL_GROUP)
                .map_err(|source| ServerError::Io {
                    what: format!("write a sentinel's configuration in {}", dir.display()),
                    source,
                })?
                .ok_or(ServerError::NoSentinel {
                    system: spec.system,
                })?;
            launch.args.splice(0..0, start.args);
            launch.settings.extend(start.settings);
            return Ok(launch);
        }
    }
    if let Some(policy) = spec.eviction {
        let set = sys.eviction(policy).ok_or_else(|| ServerError::Eviction {
            system: spec.system,
            reason: no_policy(spec.system, policy),
        })?;
        launch.args.extend(set.args);
        launch.settings.extend(set.settings);
    }
    let user = user_settings(spec.system, &spec.extra_args)?;
    launch
        .settings
        .retain(|ours| !user.iter().any(|u| u.name == ours.name));
    launch.settings.extend(user);
    launch.args.extend(spec.extra_args.iter().cloned());
    Ok(launch)
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

/// The memory limit (MB) a private `system` server is started with to
/// hold `data` when the user sets none (`None`: the server's default, no
/// limit); see each system's `memory_for`.
pub fn memory_limit_mb(system: SystemKind, data: &crate::DataSize) -> Option<u64> {
    of(system).memory_for(data)
}

/// What `system`'s servers are expected to keep resident for one copy of
/// `data` (see each system's `data_bytes`), each started with `limit_mb`.
pub fn data_bytes(system: SystemKind, data: &crate::DataSize, limit_mb: Option<u64>) -> u64 {
    of(system).data_bytes(data, limit_mb)
}

/// The namespace a private `system` server's records go to (`None`: it
/// has no namespaces).
pub fn private_namespace(system: SystemKind) -> Option<String> {
    of(system).namespace()
}

/// One idle `system` server process, bytes.
pub fn idle_bytes(system: SystemKind) -> u64 {
    of(system).idle_bytes()
}

/// Checks that kvbench can give `system` a memory limit (`--max-memory`).
///
/// # Errors
/// Why it cannot, naming the system.
pub fn check_max_memory(system: SystemKind) -> Result<(), String> {
    match of(system).no_memory_limit() {
        Some(why) => Err(format!("{system} {why}")),
        None => Ok(()),
    }
}

/// Checks that kvbench can cause faults on `system`'s nodes (`--fault`).
///
/// # Errors
/// Why it cannot, naming the system.
pub fn check_faults(system: SystemKind) -> Result<(), String> {
    match of(system).no_faults() {
        Some(why) => Err(format!("{system}'s {why}")),
        None => Ok(()),
    }
}

/// Checks a memory limit (MB per server) against the smallest `system`
/// starts with.
///
/// # Errors
/// What it needs, and why.
pub fn check_limit(system: SystemKind, mb: u64) -> Result<(), String> {
    match of(system).min_limit_mb() {
        Some((min, why)) if mb < min => Err(format!("{system} needs at least {min} MB ({why})")),
        _ => Ok(()),
    }
}

/// Checks `--topology` against what `system` can be deployed as.
///
/// # Errors
/// One line naming the topology, the system, and the systems that have it.
pub fn check_topology(system: SystemKind, kind: TopologyKind) -> Result<(), String> {
    if of(system).topologies().contains(&kind) {
        return Ok(());
    }
    let have: Vec<String> = SystemKind::ALL
        .into_iter()
        .filter(|s| of(*s).topologies().contains(&kind))
        .map(|s| s.to_string())
        .collect();
    let have = match have.split_last() {
        None => "none has one".to_string(),
        Some((one, [])) => format!("{one} has one"),
        Some((last, rest)) => format!("{} and {last} have one", rest.join(", ")),
    };
    Err(format!(
        "--topology {}: {system} has no {} ({have})",
        kind.as_str(),
        kind.described()
    ))
}

/// The policy a memory-limited `system` evicts by when none is given.
pub fn default_eviction(system: SystemKind) -> crate::Eviction {
    of(system).default_eviction()
}

/// Checks `--eviction` against the system before anything starts.
///
/// # Errors
/// Why `system` has no such policy, naming the ones it has.
pub fn check_eviction(system: SystemKind, policy: crate::Eviction) -> Result<(), String> {
    match of(system).eviction(policy) {
        Some(_) => Ok(()),
        None => Err(no_policy(system, policy)),
    }
}

fn no_policy(system: SystemKind, policy: crate::Eviction) -> String {
    let sys = of(system);
    let has: Vec<&str> = crate::Eviction::ALL
        .into_iter()
        .filter(|p| sys.eviction(*p).is_some())
        .map(crate::Eviction::as_str)
        .collect();
    if has.is_empty() {
        format!("{system} has no eviction policy kvbench can set")
    } else {
        format!(
            "{system} has no policy {policy} (it has {})",
            has.join(", ")
        )
    }
}

/// Checks arguments meant for [`ServerSpec::extra_args`] before anything
/// starts: options that would break the private-server guarantees (port,
/// bind address, daemonizing, ...) are refused.
///
/// # Errors
/// [`ServerError::ForbiddenArgument`] naming the first such argument.
pub fn check_extra_args(system: SystemKind, args: &[String]) -> Result<(), ServerError> {
    user_settings(system, args).map(drop)
}

/// How many client connections at once a private server of `system`
/// started with `extra` arguments accepts; the option that sets it, as it is
/// written on a command line (for the message that asks for fewer clients
/// or a higher limit); and the option's value.
///
/// # Errors
/// As [`check_extra_args`].
pub fn connection_limit(
    system: SystemKind,
    extra: &[String],
) -> Result<(u64, String, u64), ServerError> {
    let limit = of(system).connection_limit();
    let set = user_settings(system, extra)?
        .into_iter()
        .rev()
        .find(|s| s.name == limit.option)
        .and_then(|s| s.value.trim().parse().ok())
        .unwrap_or(limit.default);
    let option = if limit.option.starts_with('-') {
        limit.option.to_string()
    } else {
        format!("--{}", limit.option)
    };
    Ok((set.saturating_sub(limit.reserved), option, set))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_system_accepts_its_topologies_and_a_refusal_names_who_has_one() {
        use SystemKind::*;
        use TopologyKind::*;
        for (system, has) in [
            (Redis, vec![Single, Cluster, Twemproxy, Sentinel]),
            (Valkey, vec![Single, Cluster, Twemproxy, Sentinel]),
            (Keydb, vec![Single, Cluster, Twemproxy, Sentinel]),
            (Memcached, vec![Single, Pool, Twemproxy]),
            (Aerospike, vec![Single, Cluster]),
        ] {
            for kind in [Single, Cluster, Pool, Twemproxy, Sentinel] {
                assert_eq!(
                    check_topology(system, kind).is_ok(),
                    has.contains(&kind),
                    "{system} {kind:?}"
                );
            }
        }
        assert_eq!(
            check_topology(Memcached, Cluster).unwrap_err(),
            "--topology cluster: memcached has no server-side cluster (redis, valkey, keydb and aerospike have one)"
        );
        assert_eq!(
            check_topology(Redis, Pool).unwrap_err(),
            "--topology pool: redis has no client-hashed pool (memcached has one)"
        );
        assert_eq!(
            check_topology(Aerospike, Sentinel).unwrap_err(),
            "--topology sentinel: aerospike has no Sentinel group (redis, valkey and keydb have one)"
        );
    }

    #[test]
    fn each_system_sizes_its_memory_for_the_data_it_will_hold() {
        let data = |records| crate::DataSize {
            records,
            key_bytes: 23,
            record_bytes: 1_000,
            value_bytes: 1_100,
            names_bytes: 60,
            sorted_sets: false,
        };
        // Redis and Valkey grow as they need: no limit of kvbench's.
        assert_eq!(memory_limit_mb(SystemKind::Redis, &data(1_000_000)), None);
        assert_eq!(memory_limit_mb(SystemKind::Valkey, &data(1_000_000)), None);
        // Memcached: (1,100 + 23 + 64) x 1.3 bytes per item, plus 64 MB;
        // never below its default of 64.
        assert_eq!(
            memory_limit_mb(SystemKind::Memcached, &data(1_000_000)),
            Some(1_472 + 64)
        );
        assert_eq!(memory_limit_mb(SystemKind::Memcached, &data(0)), Some(64));
        // Aerospike: twice the raw data per node, at least 1 GiB.
        assert_eq!(
            memory_limit_mb(SystemKind::Aerospike, &data(100_000)),
            Some(1024)
        );
        assert_eq!(
            memory_limit_mb(SystemKind::Aerospike, &data(10_000_000)),
            Some(2 * ((10_000_000 * 1_023) >> 20))
        );
        // At a limit with no policy given, each evicts as it does by default.
        assert_eq!(
            default_eviction(SystemKind::Memcached),
            crate::Eviction::Lru
        );
        for s in [SystemKind::Redis, SystemKind::Valkey, SystemKind::Aerospike] {
            assert_eq!(default_eviction(s), crate::Eviction::NoEviction);
        }
    }

    #[test]
    fn each_system_estimates_what_it_will_hold_resident() {
        use SystemKind::*;
        let data = crate::DataSize {
            records: 1_000_000,
            key_bytes: 23,
            record_bytes: 1_000,
            value_bytes: 1_100,
            names_bytes: 60,
            sorted_sets: false,
        };
        // Redis and Valkey: (1,000 + 23 + 60) x 1.6 per record, as hashes;
        // sorted sets' members cost 8x their raw bytes.
        assert_eq!(data_bytes(Redis, &data, None), 1_732_800_000);
        assert_eq!(data_bytes(Valkey, &data, None), 1_732_800_000);
        let zsets = crate::DataSize {
            sorted_sets: true,
            ..data
        };
        assert_eq!(data_bytes(Redis, &zsets, None), 8_664_000_000);
        // Memcached: up to its limit, the one given or the one it is sized with.
        assert_eq!(data_bytes(Memcached, &data, Some(100)), 100 << 20);
        assert_eq!(data_bytes(Memcached, &data, None), (1_472 + 64) << 20);
        // Aerospike: the raw data twice, and a large idle process.
        assert_eq!(data_bytes(Aerospike, &data, None), 2 * 1_023_000_000);
        assert_eq!(idle_bytes(Aerospike), 280 << 20);
        assert_eq!(idle_bytes(Redis), 16 << 20);
        // Only memcached refuses a small limit, and says why.
        assert_eq!(
            check_limit(Memcached, 1).unwrap_err(),
            "memcached needs at least 2 MB (twice its largest item, 1 MB)"
        );
        assert!(check_limit(Memcached, 2).is_ok());
        assert!(check_limit(Redis, 1).is_ok());
        // Aerospike is given neither a limit nor faults, and says why.
        assert_eq!(
            check_max_memory(Aerospike).unwrap_err(),
            "aerospike evicts only records with a TTL and kvbench writes none; its namespace is sized from the data set"
        );
        assert_eq!(
            check_faults(Aerospike).unwrap_err(),
            "aerospike's nodes are not restarted or paused by kvbench"
        );
        assert!(check_max_memory(Memcached).is_ok() && check_faults(Redis).is_ok());
        // Only Aerospike has namespaces: kvbench's records go to `ycsb`.
        assert_eq!(private_namespace(Aerospike).as_deref(), Some("ycsb"));
        assert_eq!(private_namespace(Redis), None);
    }

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
    fn each_system_sets_the_policies_it_has_and_names_them_when_asked_for_another() {
        use crate::Eviction as E;
        let addr = SocketAddr::from(([127, 0, 0, 1], 1234));
        let line = |system, eviction| {
            let spec = ServerSpec {
                eviction: Some(eviction),
                memory_limit_mb: Some(16),
                ..ServerSpec::new(system)
            };
            launch(&spec, Role::Single, addr, Path::new("/tmp"), false).map(|l| l.args.join(" "))
        };
        let redis = line(SystemKind::Redis, E::AllkeysLfu).expect("redis");
        assert!(
            redis.ends_with("--maxmemory 16mb --maxmemory-policy allkeys-lfu"),
            "{redis}"
        );
        let valkey = line(SystemKind::Valkey, E::VolatileTtl).expect("valkey");
        assert!(
            valkey.ends_with("--maxmemory-policy volatile-ttl"),
            "{valkey}"
        );
        let mc = |e| line(SystemKind::Memcached, e).expect("memcached");
        assert!(
            mc(E::NoEviction).ends_with("-m 16 -M"),
            "{}",
            mc(E::NoEviction)
        );
        assert!(mc(E::LruFlat).ends_with("-o no_lru_maintainer"));
        assert!(mc(E::Lru).ends_with("-m 16"), "the default needs no flag");
        let e = check_eviction(SystemKind::Memcached, E::AllkeysLru).unwrap_err();
        assert_eq!(
            e,
            "memcached has no policy allkeys-lru (it has noeviction, lru, lru-flat)"
        );
        let e = check_eviction(SystemKind::Redis, E::Lru).unwrap_err();
        assert!(e.contains("(it has noeviction, allkeys-lru,"), "{e}");
        assert!(line(SystemKind::Redis, E::LruFlat).is_err());
        let e = check_eviction(SystemKind::Aerospike, E::AllkeysLru).unwrap_err();
        assert_eq!(e, "aerospike has no eviction policy kvbench can set");
    }

    #[test]
    fn user_args_override_recorded_settings() {
        let spec = ServerSpec {
            system: SystemKind::Memcached,
            binary: None,
            memory_limit_mb: Some(128),
            eviction: None,
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
