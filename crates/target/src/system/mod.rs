//! Per-system knowledge: the command line (and the settings it changes) and
//! the cold-path queries (identity, stats, INFO) over short blocking
//! connections.
//!
//! It must not manage processes or decide whether an answer came from the
//! right server: it reports the pid the server claims, and `server.rs`
//! compares. It must not parse the wire format itself; `kvbench-proto` does.

pub(crate) mod memcached;
pub(crate) mod redis;

use crate::{ServerSpec, TargetError};
use kvbench_model::{Setting, SystemKind};
use kvbench_proto::DecodeError;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
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
    pub version: Option<String>,
    pub allocator: Option<String>,
}

/// The command line for a private server on `port` in `dir`, kvbench's own
/// settings followed by the caller's extra arguments. The extra arguments come
/// last, so the server's parser lets them win; a recorded kvbench setting they
/// override is dropped from the list so the record says what really ran.
pub(crate) fn launch(
    spec: &ServerSpec,
    port: u16,
    dir: &Path,
    as_root: bool,
) -> Result<Launch, TargetError> {
    let mut launch = match spec.system {
        SystemKind::Redis => redis::launch(port, dir, spec.memory_limit_mb)?,
        SystemKind::Memcached => memcached::launch(port, spec.memory_limit_mb, as_root),
    };
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
) -> Result<Vec<Setting>, TargetError> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for arg in extra {
        if is_option(arg) {
            if let Some(reason) = forbidden(system, arg) {
                return Err(TargetError::ForbiddenArgument {
                    system,
                    arg: arg.clone(),
                    reason,
                });
            }
            let (name, inline) = split_option(system, arg);
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

/// The option's name as kvbench records it (Redis: the config name without
/// `--`; Memcached: the short flag where one exists) and any value attached
/// to it (`--memory-limit=64`, `-m64`).
fn split_option(system: SystemKind, arg: &str) -> (String, Option<String>) {
    match system {
        SystemKind::Redis => (arg.trim_start_matches('-').to_ascii_lowercase(), None),
        SystemKind::Memcached => {
            if let Some(long) = arg.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let name =
                    memcached::short_name(name).map_or_else(|| format!("--{name}"), str::to_string);
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
    }
}

fn forbidden(system: SystemKind, arg: &str) -> Option<&'static str> {
    match system {
        SystemKind::Redis => redis::forbidden(&arg.trim_start_matches('-').to_ascii_lowercase()),
        SystemKind::Memcached => memcached::forbidden(arg),
    }
}

/// The pid the server at `addr` reports for itself; the cheapest query that
/// proves both "it answers" and "it is our child".
pub(crate) fn identify(
    system: SystemKind,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<u32, String> {
    let pid = match system {
        SystemKind::Redis => redis::snapshot(&redis::info(addr, &["server"], timeout)?).pid,
        SystemKind::Memcached => memcached::snapshot(&memcached::stats(addr, None, timeout)?).pid,
    };
    pid.ok_or_else(|| "the server did not report its pid".to_string())
}

/// Memory, items, evictions, version and pid in one query.
pub(crate) fn snapshot(
    system: SystemKind,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<Snapshot, String> {
    Ok(match system {
        SystemKind::Redis => redis::snapshot(&redis::info(addr, &["all"], timeout)?),
        SystemKind::Memcached => memcached::snapshot(&memcached::stats(addr, None, timeout)?),
    })
}

/// Everything the server says about itself: Redis `INFO all`; Memcached
/// `stats` plus `stats settings` (the latter under a `settings.` prefix, since
/// some names occur in both).
pub(crate) fn info(
    system: SystemKind,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<BTreeMap<String, String>, String> {
    match system {
        SystemKind::Redis => Ok(redis::info(addr, &["all"], timeout)?.into_iter().collect()),
        SystemKind::Memcached => {
            let mut map: BTreeMap<String, String> =
                memcached::stats(addr, None, timeout)?.into_iter().collect();
            for (k, v) in memcached::stats(addr, Some("settings"), timeout)? {
                map.insert(format!("settings.{k}"), v);
            }
            Ok(map)
        }
    }
}

/// Per-command call counts, by command (or counter) name.
pub(crate) type Counts = Vec<(String, u64)>;

/// Per-command call counts and the pid that reported them.
pub(crate) fn command_stats(
    system: SystemKind,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<(Option<u32>, Counts), String> {
    match system {
        SystemKind::Redis => {
            let info = redis::info(addr, &["server", "commandstats"], timeout)?;
            Ok((redis::snapshot(&info).pid, redis::command_calls(&info)))
        }
        SystemKind::Memcached => {
            let stats = memcached::stats(addr, None, timeout)?;
            Ok((
                memcached::snapshot(&stats).pid,
                memcached::command_counts(&stats),
            ))
        }
    }
}

/// One request, one complete reply, on a fresh connection. Errors are plain
/// messages; the caller knows which server they concern.
pub(crate) fn exchange<T>(
    addr: SocketAddr,
    timeout: Duration,
    request: &[u8],
    mut parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, DecodeError>,
) -> Result<T, String> {
    let mut stream =
        TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| format!("set read timeout: {e}"))?;
    stream
        .set_write_timeout(Some(timeout))
        .map_err(|e| format!("set write timeout: {e}"))?;
    stream
        .write_all(request)
        .map_err(|e| format!("send: {e}"))?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = stream
            .read(&mut chunk)
            .map_err(|e| format!("receive: {e}"))?;
        if n == 0 {
            return Err(format!(
                "connection closed after {} bytes of an incomplete reply",
                buf.len()
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        match parse(&buf) {
            Ok(Some((value, _))) => return Ok(value),
            Ok(None) if buf.len() < MAX_REPLY => {}
            Ok(None) => return Err(format!("reply larger than {MAX_REPLY} bytes")),
            Err(e) => return Err(format!("undecodable reply: {e}: {:?}", preview(&buf))),
        }
    }
}

fn preview(buf: &[u8]) -> String {
    String::from_utf8_lossy(&buf[..buf.len().min(120)]).into_owned()
}

fn parse_u64(value: Option<&String>) -> Option<u64> {
    value?.trim().parse().ok()
}

fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a String> {
    pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                matches!(err, TargetError::ForbiddenArgument { .. }),
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
        let l = launch(&spec, 1234, Path::new("/tmp"), false).expect("launch");
        let m: Vec<_> = l.settings.iter().filter(|s| s.name == "-m").collect();
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].value.as_str(), m[0].reason.as_str()), ("256", "user"));
        assert_eq!(&l.args[l.args.len() - 2..], ["-m", "256"]);
    }
}
