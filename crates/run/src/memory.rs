//! Will the run fit in this machine's memory? An estimate of what the
//! servers kvbench starts and kvbench itself will hold, checked before any
//! server starts, so a typo in `--records` or `--pipeline` is one line and
//! exit 2 instead of the kernel's OOM killer picking a process on a machine
//! someone shares. The estimate errs high on purpose (its factors are above
//! what docs/reproductions measured); `--skip-memory-check` runs anyway.

use crate::settings::RunSettings;
use crate::usage::UsageError;
use std::sync::OnceLock;

/// kvbench itself before any connection: runtime, histograms, store.
const CLIENT_BASE: u64 = 64 << 20;
/// Per connection before its pipeline: a read buffer, a write buffer and
/// the socket's bookkeeping on this side.
const PER_CONNECTION: u64 = 16 << 10;
/// Per request in flight: its slot in the pending queues and its timing.
const PER_REQUEST: u64 = 256;

/// What one run is expected to hold, in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The servers kvbench starts (0 for a `--target`: its memory is not
    /// this machine's to count).
    pub server: u64,
    /// kvbench: the larger of the load phase and the run phase.
    pub client: u64,
    /// The servers' part in words: records, their size, nodes.
    pub server_why: String,
    /// kvbench's part in words: connections and pipeline.
    pub client_why: String,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.server + self.client
    }
}

/// The estimate for `s`.
pub fn estimate(s: &RunSettings) -> Estimate {
    let data = crate::dataset::data_size(s);
    let (record, key, items) = (data.record_bytes, data.key_bytes, data.records);
    let nodes = u64::from(s.nodes.max(1));
    let copies = 1 + u64::from(s.replicas);
    // Every server process: a cluster's masters and their replicas, a
    // Sentinel group's master and replicas, a pool's or a proxy's servers.
    let processes = u64::from(s.shape().data_nodes());
    let (server, server_why) = if s.target.is_some() {
        (0, "none on this machine (--target)".to_string())
    } else {
        let limit = crate::deploy::server_spec(s).memory_limit_mb;
        let bytes = kvbench_servers::data_bytes(s.system, &data, limit);
        let idle = kvbench_servers::idle_bytes(s.system);
        let mut total = bytes
            .saturating_mul(copies)
            .saturating_add(idle * processes);
        // `--max-memory`: no server holds more than its limit (Memcached's
        // `-m` above is that limit already).
        let limited = crate::max_memory::mb(s);
        if let Some(mb) = limited {
            total = total.min((mb << 20).saturating_add(idle).saturating_mul(processes));
        }
        let replicas = if s.replicas > 0 {
            format!(", {copies} copies")
        } else {
            String::new()
        };
        let limit = limited.map_or(String::new(), |mb| format!(", at most {mb} MB each"));
        (
            total,
            format!(
                "{items} records of {record} B on {} node{}{replicas}{limit}",
                nodes,
                if nodes == 1 { "" } else { "s" }
            ),
        )
    };
    let per_client = s.shape().connections_per_client();
    let phase = |clients: u64, pipeline: u64| {
        let conns = clients.saturating_mul(per_client);
        let per_conn = PER_CONNECTION
            .saturating_add(pipeline.saturating_mul(PER_REQUEST.saturating_add(record + key)));
        (conns, conns.saturating_mul(per_conn))
    };
    let (mut conns, mut run) = phase(u64::from(s.clients), u64::from(s.pipeline));
    let mut pipeline = s.pipeline;
    if let Some(c) = &s.companion {
        let (n, bytes) = phase(u64::from(c.clients), u64::from(c.pipeline));
        conns = conns.saturating_add(n);
        run = run.saturating_add(bytes);
    }
    let (load_conns, load) = phase(u64::from(s.load_clients), u64::from(s.load_pipeline));
    let client = if load > run && !s.no_load {
        conns = load_conns;
        pipeline = s.load_pipeline;
        load
    } else {
        run
    };
    Estimate {
        server,
        client: client.saturating_add(CLIENT_BASE),
        server_why,
        client_why: format!("{conns} connections x pipeline {pipeline} of {record} B records"),
    }
}

/// Bytes of memory available when kvbench first asked, before it started
/// any server: later checks (one per cell) compare against the same figure,
/// so a server an earlier cell kept running is not counted twice.
pub fn available() -> Option<u64> {
    static AVAILABLE: OnceLock<Option<u64>> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        mem_available(&text)
    })
}

/// `MemAvailable` from the text of /proc/meminfo, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// Refuses `s` when its estimate is above the memory available, unless
/// `skip` (`--skip-memory-check`).
///
/// # Errors
/// One line: the estimate, its two parts, what is available, what to change.
pub fn check(s: &RunSettings, skip: bool) -> Result<(), UsageError> {
    room(s)?;
    if skip {
        return Ok(());
    }
    match available() {
        Some(avail) => judge(&estimate(s), avail),
        None => Ok(()),
    }
}

/// Refuses a data set larger than `--max-memory` under a policy that
/// refuses writes at the limit: its load would fail part way (unless
/// `--allow-incomplete-load` asks for exactly that).
fn room(s: &RunSettings) -> Result<(), UsageError> {
    let (Some(mb), Some(given), Some(policy)) = (
        crate::max_memory::mb(s),
        s.max_memory,
        crate::max_memory::eviction(s),
    ) else {
        return Ok(());
    };
    kvbench_servers::check_limit(s.system, mb)
        .map_err(|why| UsageError(format!("--max-memory {given} is {mb} MB per server; {why}")))?;
    let raw = crate::max_memory::raw_per_server(s, s.spec.record_count);
    if policy.makes_room() || raw <= mb << 20 || s.allow_incomplete_load || s.no_load {
        return Ok(());
    }
    Err(UsageError(format!(
        "--max-memory {given}: each server's {} of raw records exceed its {mb} MB, and under {policy} it refuses writes past the limit, so the load would fail; give --eviction a policy that evicts (allkeys-lru, lru), a larger limit, or --allow-incomplete-load to measure the refusals",
        size(raw)
    )))
}

fn judge(e: &Estimate, avail: u64) -> Result<(), UsageError> {
    if e.total() <= avail {
        return Ok(());
    }
    Err(UsageError(format!(
        "memory: this run needs about {} (servers {}: {}; kvbench {}: {}) but {} is available; use fewer --records or --clients, a smaller --field-length or --pipeline, or --skip-memory-check to run anyway",
        size(e.total()),
        size(e.server),
        e.server_why,
        size(e.client),
        e.client_why,
        size(avail)
    )))
}

/// Bytes as people read them: 1.5 GiB, 200 MiB.
fn size(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", b / MIB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(mem_available(text), Some(23_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn an_estimate_above_what_is_available_is_one_line_with_both_parts() {
        let e = Estimate {
            server: 20 << 30,
            client: 4 << 30,
            server_why: "1000000 records of 8000 B on 1 node".into(),
            client_why: "4 connections x pipeline 100000 of 8000 B records".into(),
        };
        assert!(judge(&e, 25 << 30).is_ok());
        let m = judge(&e, 22 << 30).unwrap_err().0;
        assert_eq!(m.lines().count(), 1);
        assert!(
            m.starts_with(
                "memory: this run needs about 24.0 GiB (servers 20.0 GiB: 1000000 records"
            ),
            "{m}"
        );
        assert!(m.contains("but 22.0 GiB is available"), "{m}");
        assert!(m.contains("--skip-memory-check"), "{m}");
    }
}
