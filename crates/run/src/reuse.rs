//! Keeping a started and loaded deployment for the next cell of an
//! experiment (`reload = "per-workload"` or `"once-per-system"`), so a sweep
//! over clients or pipeline depth measures one loaded server instead of
//! paying a start and a load per point.
//!
//! A cell may use a kept deployment only when everything that shaped the
//! server and its data is the same: the key is the cell's recorded
//! configuration minus what only the client decides (clients, pipeline,
//! threads, window, rate, ...). Anything not known to be client-only stays
//! in the key, so a new setting can cost a reload but never a wrong reuse.

use crate::settings::RunSettings;
use anyhow::{Context, Result};
use kvbench_servers::{Deployment, Network};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// When an experiment starts servers and loads its dataset again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reload {
    /// Every cell starts its own servers and loads (the default).
    #[default]
    PerRun,
    /// The cells of one workload share a server (its sweep).
    PerWorkload,
    /// The cells of one system and deployment share a server across
    /// workloads, as the papers ran YCSB's workloads on one loaded server.
    OncePerSystem,
}

impl Reload {
    pub fn as_str(self) -> &'static str {
        match self {
            Reload::PerRun => "per-run",
            Reload::PerWorkload => "per-workload",
            Reload::OncePerSystem => "once-per-system",
        }
    }
}

impl fmt::Display for Reload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Reload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "per-run" => Ok(Reload::PerRun),
            "per-workload" => Ok(Reload::PerWorkload),
            "once-per-system" => Ok(Reload::OncePerSystem),
            other => Err(format!(
                "unknown reload policy '{other}' (expected per-run, per-workload or once-per-system)"
            )),
        }
    }
}

/// Fields of the recorded configuration that only the client decides: a
/// kept server serves cells that differ in them.
const CLIENT_ONLY: &[&str] = &[
    "clients",
    "pipeline",
    "threads",
    "load_clients",
    "load_pipeline",
    "operations",
    "duration_s",
    "warmup_s",
    "rate",
    "arrival",
    "allow_errors",
    "allow_incomplete_load",
    "reconnect",
    "max_retries",
    "retry_backoff",
    "io",
    "client_cpus",
    "reload",
    "verdict",
];

/// What defines the workload; shared across workloads only `once-per-system`.
const WORKLOAD: &[&str] = &[
    "workload",
    "read_proportion",
    "update_proportion",
    "insert_proportion",
    "request_distribution",
    "workload_properties",
];

/// The key a kept deployment must match, or `None` when this cell can never
/// share one: per-run, a target whose `--cleanup` deletes what each cell
/// wrote, or a cell with a `--fault` (it kills, restarts or fails over its
/// servers: neither a kept one nor one to keep).
pub fn key(s: &RunSettings, policy: Reload) -> Option<String> {
    if policy == Reload::PerRun || (s.target.is_some() && s.safety.cleanup) || !s.faults.is_empty()
    {
        return None;
    }
    let mut config = serde_json::to_value(crate::record::planned_config(s)).ok()?;
    let map = config.as_object_mut()?;
    for field in CLIENT_ONLY {
        map.remove(*field);
    }
    if policy == Reload::OncePerSystem {
        for field in WORKLOAD {
            map.remove(*field);
        }
    }
    let doc = serde_json::json!({
        "config": config,
        "server_binary": s.server_binary,
        "memory_limit_mb": crate::deploy::server_spec(s).memory_limit_mb,
    });
    Some(doc.to_string())
}

/// Whether the data a cell leaves behind is still the dataset a next cell
/// expects: inserts add records (YCSB reloads after workloads D and E), and
/// under `--max-memory` a run changes which records the server still holds.
pub fn leaves_dataset_intact(s: &RunSettings) -> bool {
    s.spec.insert_proportion == 0.0 && s.max_memory.is_none()
}

/// A deployment one cell started and loaded and the next may use.
pub struct Kept {
    pub key: String,
    /// Declared before the network: servers stop first, then their namespaces go.
    pub server: Box<dyn Deployment>,
    pub network: Option<Network>,
    /// The run whose load filled it (set once that run is saved).
    pub loaded_by: Option<i64>,
    /// Runs that used it so far.
    pub runs: u32,
    /// Nodes as the first run recorded them (a target's are discovered).
    pub nodes: u32,
}

impl Kept {
    /// Stops the servers and removes the network.
    ///
    /// # Errors
    /// When a server did not stop cleanly or a namespace stayed.
    pub fn stop(self) -> Result<()> {
        self.server
            .stop()
            .context("cannot stop the kept server cleanly")?;
        if let Some(n) = self.network {
            n.remove().context("cannot remove the network namespaces")?;
        }
        Ok(())
    }
}

/// A cell's part in sharing: the slot holding what the previous cell kept,
/// and whether this cell's deployment is to be kept for the next one.
pub struct Sharing<'a> {
    pub slot: &'a mut Option<Kept>,
    pub key: Option<String>,
    pub policy: Reload,
    pub keep_after: bool,
}

/// Stops a kept deployment, saying so on stderr when it fails (the runs
/// that used it are saved already).
pub fn release(kept: Option<Kept>) {
    if let Some(k) = kept {
        if let Err(e) = k.stop() {
            eprintln!("warning: {e:#}");
        }
    }
}

/// Deployments kept for later cells, one per sharing key (blocks
/// interleave systems, so several at once). Each is stopped when taken out
/// and not put back, or when the pool is dropped, on every path out.
#[derive(Default)]
pub struct Pool {
    kept: HashMap<String, Kept>,
}

impl Pool {
    /// The deployment kept under `key`, if any.
    pub fn take(&mut self, key: Option<&String>) -> Option<Kept> {
        key.and_then(|k| self.kept.remove(k))
    }

    /// Stops kept deployments, in the order of their keys, until `need`
    /// bytes fit in what `available` says is free (read again after each
    /// stop, which frees that deployment's servers), or none is left.
    /// Returns how many were stopped: a later cell that needed one starts
    /// and loads it again.
    ///
    /// Why: blocks interleave systems, so an experiment that keeps its
    /// servers (`reload`) can hold one loaded deployment per system at once;
    /// at paper A's full scale that is three servers of 9.5 GB on 24 GB,
    /// and the kernel's OOM killer, not kvbench, would choose which goes.
    pub fn make_room(&mut self, need: u64, available: impl Fn() -> Option<u64>) -> usize {
        let mut stopped = 0;
        while available().is_some_and(|free| free < need) {
            let Some(key) = self.kept.keys().min().cloned() else {
                break;
            };
            release(self.kept.remove(&key));
            stopped += 1;
        }
        stopped
    }

    /// How many deployments are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether no deployment is kept.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Keeps `kept` (what a cell left for later cells) under its key.
    pub fn put(&mut self, kept: Option<Kept>) {
        if let Some(k) = kept {
            if let Some(old) = self.kept.insert(k.key.clone(), k) {
                release(Some(old));
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for (_, k) in self.kept.drain() {
            release(Some(k));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvbench_servers::{Server, ServerSpec};

    fn kept(key: &str) -> (Kept, u32) {
        // Any system kvbench starts; named as `--system` names it.
        let redis = "redis"
            .parse::<kvbench_model::SystemKind>()
            .expect("a system");
        let server = Server::start(&ServerSpec::new(redis)).expect("redis starts");
        let pid = server.pid();
        let k = Kept {
            key: key.into(),
            server: Box::new(server),
            network: None,
            loaded_by: None,
            runs: 0,
            nodes: 1,
        };
        (k, pid)
    }

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    }

    #[test]
    fn room_is_made_by_stopping_kept_servers_until_the_next_fits() {
        let mut pool = Pool::default();
        let (a, pid_a) = kept("a");
        let (b, pid_b) = kept("b");
        pool.put(Some(a));
        pool.put(Some(b));
        // Enough free memory: nothing is stopped.
        assert_eq!(pool.make_room(1 << 30, || Some(2 << 30)), 0);
        assert_eq!(pool.len(), 2);
        // Room for the next cell after one stop ("a" first, by key).
        let stops = std::cell::Cell::new(0u64);
        let free = || Some((1u64 << 30) * (1 + stops.replace(stops.get() + 1)));
        assert_eq!(pool.make_room(2 << 30, free), 1);
        assert!(!alive(pid_a) && alive(pid_b));
        // Never enough: every kept server goes, and the loop ends.
        assert_eq!(pool.make_room(u64::MAX, || Some(0)), 1);
        assert_eq!(pool.len(), 0);
        assert!(!alive(pid_b));
        // Unknown free memory: nothing to judge by, nothing stopped.
        let (c, pid_c) = kept("c");
        pool.put(Some(c));
        assert_eq!(pool.make_room(u64::MAX, || None), 0);
        assert!(alive(pid_c));
    }
}
