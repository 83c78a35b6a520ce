//! Redis: the command line kvbench starts it with, and what `INFO` says.
//!
//! It must not decide whether the answering process is the server under test
//! (it only reads `process_id`), and must not decode RESP itself.

use super::{exchange, lookup, parse_u64, Launch, Snapshot};
use crate::TargetError;
use kvbench_model::Setting;
use kvbench_proto::resp::{self, Value};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

/// `--port P --bind 127.0.0.1 --save "" --appendonly no --dir <dir>
/// --daemonize no`, plus `--maxmemory <N>mb` when the caller sets a limit.
pub(crate) fn launch(
    port: u16,
    dir: &Path,
    memory_limit_mb: Option<u64>,
) -> Result<Launch, TargetError> {
    let dir = dir.to_str().ok_or_else(|| TargetError::Io {
        what: format!("temporary directory {} is not valid UTF-8", dir.display()),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    let mut args: Vec<String> = [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
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
        setting("bind", "127.0.0.1", "loopback only: the server is private to this run and must not be reachable from the network"),
        setting("save", "", "RDB snapshots off, so no background save (fork and copy-on-write) disturbs a measurement"),
        setting("appendonly", "no", "AOF off (the Redis 7 default, made explicit), so no fsync or rewrite disturbs a measurement"),
        setting("dir", dir, "private temporary directory, removed when the server stops"),
    ];
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
pub(crate) fn forbidden(name: &str) -> Option<&'static str> {
    match name {
        "port" => Some("kvbench picks a free loopback port itself"),
        "bind" => Some("the server must listen on loopback only"),
        "daemonize" => Some("the server must run in the foreground as kvbench's child"),
        _ => None,
    }
}

/// `INFO <sections>` as `(key, value)` pairs, in the server's order.
pub(crate) fn info(
    addr: SocketAddr,
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
        match exchange(addr, timeout, &request, resp::parse_value)? {
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

/// `key:value` lines; `# Section` headers and blank lines skipped.
fn parse_info(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(crate) fn snapshot(info: &[(String, String)]) -> Snapshot {
    let pid = parse_u64(lookup(info, "process_id")).and_then(|p| u32::try_from(p).ok());
    // A server that has never held a key has no db0 line at all; but only a
    // reply that includes the other sections (used_memory) can say so.
    let items = match lookup(info, "db0") {
        Some(db0) => keyspace_keys(db0),
        None => lookup(info, "used_memory").map(|_| 0),
    };
    Snapshot {
        pid,
        memory_bytes: parse_u64(lookup(info, "used_memory")),
        items,
        evictions: parse_u64(lookup(info, "evicted_keys")),
        version: lookup(info, "redis_version").cloned(),
        allocator: lookup(info, "mem_allocator").cloned(),
    }
}

/// `keys=12,expires=0,avg_ttl=0` -> 12.
fn keyspace_keys(db: &str) -> Option<u64> {
    db.split(',')
        .find_map(|kv| kv.strip_prefix("keys="))?
        .parse()
        .ok()
}

/// `cmdstat_hgetall:calls=3,usec=...` -> `("hgetall", 3)`; subcommands keep
/// Redis's `config|get` form.
pub(crate) fn command_calls(info: &[(String, String)]) -> Vec<(String, u64)> {
    info.iter()
        .filter_map(|(k, v)| {
            let name = k.strip_prefix("cmdstat_")?;
            let calls = v
                .split(',')
                .find_map(|kv| kv.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name.to_string(), calls))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# Server\r\nredis_version:7.0.15\r\nprocess_id:42\r\n\r\n# Memory\r\nused_memory:1000\r\nmem_allocator:jemalloc-5.3.0\r\n# Stats\r\nevicted_keys:3\r\n# Commandstats\r\ncmdstat_set:calls=5,usec=10,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\ncmdstat_config|get:calls=1,usec=3\r\n# Keyspace\r\ndb0:keys=12,expires=0,avg_ttl=0\r\n";

    #[test]
    fn info_fields() {
        let info = parse_info(INFO);
        let s = snapshot(&info);
        assert_eq!(s.pid, Some(42));
        assert_eq!(s.memory_bytes, Some(1000));
        assert_eq!(s.items, Some(12));
        assert_eq!(s.evictions, Some(3));
        assert_eq!(s.version.as_deref(), Some("7.0.15"));
        assert_eq!(s.allocator.as_deref(), Some("jemalloc-5.3.0"));
        assert_eq!(
            command_calls(&info),
            [("set".to_string(), 5), ("config|get".to_string(), 1)]
        );
    }

    #[test]
    fn no_keyspace_line_means_zero_items() {
        let info = parse_info("# Memory\r\nused_memory:10\r\n# Keyspace\r\n");
        assert_eq!(snapshot(&info).items, Some(0));
        // But a reply without the memory section says nothing about items.
        assert_eq!(
            snapshot(&parse_info("# Server\r\nprocess_id:1\r\n")).items,
            None
        );
    }
}
