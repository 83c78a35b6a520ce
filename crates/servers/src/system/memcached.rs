//! Memcached: the command line kvbench starts it with, and what `stats` says.
//!
//! It must not decide whether the answering process is the server under test
//! (it only reads `pid`), and must not decode the text protocol itself.

use super::{cpu_sum, exchange, lookup, parse_u64, Counts, Launch, Peer, Snapshot, System};
use crate::ServerError;
use kvbench_model::{Setting, TopologyKind};
use kvbench_proto::memcache_text;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Memcached (or any server speaking its text protocol and `stats`).
pub(crate) struct Memcached;

pub(crate) static MEMCACHED: Memcached = Memcached;

impl System for Memcached {
    /// `-m` for a data set: the data, slab rounding (chunk classes grow by
    /// 1.25x, so up to a quarter is lost) and per-item overhead (about 50
    /// bytes of header), plus the 64 MB default as headroom. Never below
    /// the default. Recorded with the run as a deviation from defaults.
    fn memory_for(&self, data: &crate::DataSize) -> Option<u64> {
        let per_item = (data.value_bytes + data.key_bytes + 64) as f64 * 1.3;
        let mb = (data.records as f64 * per_item / (1024.0 * 1024.0)).ceil() as u64 + 64;
        Some(mb.max(64))
    }

    /// It allocates up to its limit (`-m`, sized for the data when the
    /// user sets none).
    fn data_bytes(&self, data: &crate::DataSize, limit_mb: Option<u64>) -> u64 {
        limit_mb
            .or_else(|| self.memory_for(data))
            .unwrap_or(64)
            .saturating_mul(1 << 20)
    }

    /// It refuses a limit below twice its largest item (`-I`, 1 MB by
    /// default) and exits at start.
    fn min_limit_mb(&self) -> Option<(u64, &'static str)> {
        Some((2, "twice its largest item, 1 MB"))
    }

    /// Its segmented LRU.
    fn default_eviction(&self) -> crate::Eviction {
        crate::Eviction::Lru
    }

    fn liveness(&self) -> Option<super::Liveness> {
        Some(super::Liveness {
            request: b"version\r\n",
            refusal: kvbench_proto::memcache_text::error_text,
        })
    }

    fn binary(&self) -> &'static str {
        "memcached"
    }

    fn install_hint(&self) -> &'static str {
        "install it with `apt-get install memcached`"
    }

    fn launch(
        &self,
        addr: SocketAddr,
        _dir: &Path,
        memory_limit_mb: Option<u64>,
        as_root: bool,
    ) -> Result<Launch, ServerError> {
        Ok(launch(addr, memory_limit_mb, as_root))
    }

    /// `-M` refuses a store past the limit; `-o no_lru_maintainer` brings
    /// back the flat LRU of releases before 1.5; the segmented LRU is the
    /// default and needs nothing.
    fn eviction(&self, policy: crate::Eviction) -> Option<Launch> {
        use crate::Eviction as E;
        let (args, why): (&[&str], &str) = match policy {
            E::Lru => (&[], ""),
            E::LruFlat => (
                &["-o", "no_lru_maintainer"],
                "the flat LRU per slab class (--eviction lru-flat): no hot/warm/cold segments, no LRU maintainer thread",
            ),
            E::NoEviction => (
                &["-M"],
                "refuse a store past the memory limit instead of evicting (--eviction noeviction)",
            ),
            _ => return None,
        };
        let settings = match args {
            [] => Vec::new(),
            [flag, rest @ ..] => vec![Setting {
                name: flag.to_string(),
                value: rest.join(" "),
                reason: why.to_string(),
            }],
        };
        Some(Launch {
            args: args.iter().map(|a| a.to_string()).collect(),
            settings,
        })
    }

    fn forbidden(&self, arg: &str) -> Option<&'static str> {
        forbidden(arg)
    }

    /// `-c` (`--conn-limit`): 1,024 by default, counting the server's own
    /// descriptors (listening sockets, its threads' pipes: `reserved_fds`
    /// in its stats), so a 1,024th client is refused with "ERROR Too many
    /// open connections". 32 covers them at the thread counts people use.
    fn connection_limit(&self) -> super::ConnectionLimit {
        super::ConnectionLimit {
            option: "-c",
            default: 1_024,
            reserved: 32,
        }
    }

    /// No server-side cluster: servers are pooled by the client's hash or
    /// by twemproxy's.
    fn topologies(&self) -> &'static [TopologyKind] {
        &[
            TopologyKind::Single,
            TopologyKind::Pool,
            TopologyKind::Twemproxy,
        ]
    }

    /// The short flag where one exists, and a value attached to it
    /// (`--memory-limit=64`, `-m64`).
    fn split_option(&self, arg: &str) -> (String, Option<String>) {
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let name = short_name(name).map_or_else(|| format!("--{name}"), str::to_string);
            (name, value)
        } else {
            let mut chars = arg.char_indices().skip(1);
            match (chars.next(), chars.next()) {
                (Some((_, flag)), Some((rest, _))) => {
                    (format!("-{flag}"), Some(arg[rest..].to_string()))
                }
                _ => (arg.to_string(), None),
            }
        }
    }

    fn identify(&self, at: Peer<'_>, timeout: Duration) -> Result<Option<u32>, String> {
        Ok(snapshot(&stats(at, None, timeout)?).pid)
    }

    fn snapshot(&self, at: Peer<'_>, timeout: Duration) -> Result<Snapshot, String> {
        Ok(snapshot(&stats(at, None, timeout)?))
    }

    /// `stats` plus `stats settings`, the latter under a `settings.` prefix
    /// (some names occur in both).
    fn info(&self, at: Peer<'_>, timeout: Duration) -> Result<BTreeMap<String, String>, String> {
        let mut map: BTreeMap<String, String> = stats(at, None, timeout)?.into_iter().collect();
        for (k, v) in stats(at, Some("settings"), timeout)? {
            map.insert(format!("settings.{k}"), v);
        }
        Ok(map)
    }

    fn pid_key(&self) -> &'static str {
        "pid"
    }

    fn flush(&self, at: Peer<'_>, timeout: Duration) -> Result<(), String> {
        let line = exchange(at, timeout, b"flush_all\r\n", |buf| {
            Ok(buf
                .windows(2)
                .position(|w| w == b"\r\n")
                .map(|end| (String::from_utf8_lossy(&buf[..end]).into_owned(), end + 2)))
        })?;
        match line.as_str() {
            "OK" => Ok(()),
            other => Err(format!("flush_all refused: {other}")),
        }
    }

    fn command_stats(
        &self,
        at: Peer<'_>,
        timeout: Duration,
    ) -> Result<(Option<u32>, Counts), String> {
        let stats = stats(at, None, timeout)?;
        Ok((snapshot(&stats).pid, command_counts(&stats)))
    }
}

/// Memcached's own default for `-m`, in MB.
pub(crate) const DEFAULT_MEMORY_MB: u64 = 64;

/// Short options that take a value (from `memcached -h`, 1.6): in a cluster
/// such as `-vt4`, everything after one of these is its value.
const TAKES_VALUE: &str = "pUsalumcPfnDtRbBIYeo";

/// `-p P -l IP -U 0 -m <MB>`, plus `-u root` when running as root.
fn launch(addr: SocketAddr, memory_limit_mb: Option<u64>, as_root: bool) -> Launch {
    let mb = memory_limit_mb.unwrap_or(DEFAULT_MEMORY_MB);
    let bind = addr.ip().to_string();
    let mut args: Vec<String> = [
        "-p",
        &addr.port().to_string(),
        "-l",
        &bind,
        "-U",
        "0",
        "-m",
        &mb.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let setting = |name: &str, value: String, reason: &str| Setting {
        name: name.to_string(),
        value,
        reason: reason.to_string(),
    };
    // The port (-p) is not recorded: it is random per run and has no effect on
    // performance, so recording it would only make equal configurations differ.
    let mut settings = vec![
        setting("-l", bind.clone(), super::bind_reason(addr.ip())),
        setting(
            "-U",
            "0".into(),
            "UDP off (the default since 1.5.6, made explicit): the benchmark uses TCP only",
        ),
        setting(
            "-m",
            mb.to_string(),
            if memory_limit_mb.is_some() {
                "item memory limit requested by the caller"
            } else {
                "memcached's default (64 MB), passed explicitly so the record states the limit"
            },
        ),
    ];
    if as_root {
        args.extend(["-u".to_string(), "root".to_string()]);
        settings.push(setting(
            "-u",
            "root".into(),
            "memcached refuses to run as root without it, and kvbench is running as root",
        ));
    }
    Launch { args, settings }
}

/// The short flag for a long option, where memcached has one.
fn short_name(long: &str) -> Option<&'static str> {
    Some(match long {
        "port" => "-p",
        "udp-port" => "-U",
        "unix-socket" => "-s",
        "unix-mask" => "-a",
        "enable-shutdown" => "-A",
        "listen" => "-l",
        "daemon" => "-d",
        "enable-coredumps" => "-r",
        "user" => "-u",
        "memory-limit" => "-m",
        "disable-evictions" => "-M",
        "conn-limit" => "-c",
        "lock-memory" => "-k",
        "verbose" => "-v",
        "pidfile" => "-P",
        "slab-growth-factor" => "-f",
        "slab-min-size" => "-n",
        "enable-largepages" => "-L",
        "threads" => "-t",
        "max-reqs-per-event" => "-R",
        "disable-cas" => "-C",
        "listen-backlog" => "-b",
        "protocol" => "-B",
        "max-item-size" => "-I",
        "enable-sasl" => "-S",
        "disable-flush-all" => "-F",
        "disable-dumping" => "-X",
        "disable-watch" => "-W",
        "auth-file" => "-Y",
        "memory-file" => "-e",
        "enable-ssl" => "-Z",
        "extended" => "-o",
        _ => return None,
    })
}

/// Why kvbench must own this option (`None`: the caller may set it). Short
/// clusters are read the way getopt reads them, so `-vd` is caught.
fn forbidden(arg: &str) -> Option<&'static str> {
    if let Some(long) = arg.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        return forbidden_flag(short_name(name)?.chars().nth(1)?);
    }
    for flag in arg.chars().skip(1) {
        if let Some(reason) = forbidden_flag(flag) {
            return Some(reason);
        }
        if TAKES_VALUE.contains(flag) {
            break;
        }
    }
    None
}

fn forbidden_flag(flag: char) -> Option<&'static str> {
    match flag {
        'p' => Some("kvbench picks a free loopback port itself"),
        'l' => Some("the server must listen on loopback only"),
        'd' => Some("the server must run in the foreground as kvbench's child"),
        's' => Some("a unix socket disables TCP, which kvbench uses"),
        _ => None,
    }
}

/// `stats` or `stats <group>` as `(name, value)` pairs.
fn stats(
    at: Peer<'_>,
    group: Option<&str>,
    timeout: Duration,
) -> Result<Vec<(String, String)>, String> {
    let mut request = Vec::new();
    memcache_text::encode_stats(&mut request, group);
    exchange(at, timeout, &request, memcache_text::parse_stats)
}

fn snapshot(stats: &[(String, String)]) -> Snapshot {
    Snapshot {
        pid: parse_u64(lookup(stats, "pid")).and_then(|p| u32::try_from(p).ok()),
        memory_bytes: parse_u64(lookup(stats, "bytes")),
        items: parse_u64(lookup(stats, "curr_items")),
        evictions: parse_u64(lookup(stats, "evictions")),
        name: Some("memcached".to_string()),
        version: lookup(stats, "version").cloned(),
        // Memcached manages item memory in its own slabs and does not name
        // the malloc underneath.
        allocator: None,
        // Memcached does not report its resident size.
        reported_rss: None,
        reported_cpu: cpu_sum(lookup(stats, "rusage_user"), lookup(stats, "rusage_system")),
    }
}

/// The counters the engine cross-checks: `cmd_get`, `cmd_set`, `get_hits`,
/// `get_misses` (those the server reports, in that order).
fn command_counts(stats: &[(String, String)]) -> Vec<(String, u64)> {
    ["cmd_get", "cmd_set", "get_hits", "get_misses"]
        .iter()
        .filter_map(|name| Some((name.to_string(), parse_u64(lookup(stats, name))?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_fields() {
        let stats: Vec<(String, String)> = [
            ("pid", "7"),
            ("version", "1.6.18"),
            ("bytes", "100"),
            ("curr_items", "2"),
            ("evictions", "0"),
            ("cmd_get", "5"),
            ("get_hits", "4"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s = snapshot(&stats);
        assert_eq!(
            (s.pid, s.memory_bytes, s.items, s.evictions),
            (Some(7), Some(100), Some(2), Some(0))
        );
        assert_eq!(s.version.as_deref(), Some("1.6.18"));
        assert_eq!(
            command_counts(&stats),
            [("cmd_get".to_string(), 5), ("get_hits".to_string(), 4)]
        );
    }

    #[test]
    fn default_memory_is_recorded() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 1));
        let l = launch(addr, None, true);
        let m = l
            .settings
            .iter()
            .find(|s| s.name == "-m")
            .expect("-m recorded");
        assert_eq!(m.value, "64");
        assert!(l.settings.iter().any(|s| s.name == "-u"));
        assert!(!launch(addr, Some(8), false)
            .settings
            .iter()
            .any(|s| s.name == "-u"));
    }
}
