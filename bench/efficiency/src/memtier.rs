//! memtier_benchmark as a third tool (issue 34, item 4), when the user has
//! one: `--memtier PATH` or `MEMTIER=PATH`. It is the one reference that
//! pipelines Memcached and routes a Redis Cluster, so it gives Memcached's
//! case (c) and the cluster case an outside figure where memaslap and
//! redis-benchmark have none. No package here ships it; docs/performance.md
//! says how the figures were taken with one built from its public source.
//!
//! Its runs are measured exactly as the other tools' are (server-counted
//! operations, wait4 CPU of the whole process). What it is asked to do
//! matches the case: one thread, the case's connections and pipeline, 1:1
//! SET:GET of 100-byte values on uniformly random keys among 100,000, whose
//! key space is filled before any measured run so its GETs find values as
//! kvbench's do.

use std::path::{Path, PathBuf};

/// memtier's key range: `memtier-1` .. `memtier-100000`.
const KEY_MIN: u64 = 1;

/// The memtier binary the user named, if any: the flag wins over `MEMTIER`.
pub(crate) fn locate(flag: Option<PathBuf>) -> Option<PathBuf> {
    flag.or_else(|| {
        std::env::var_os("MEMTIER")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// `PATH (version)` for the run's header.
///
/// # Errors
/// When `p` is not a file.
pub(crate) fn describe(p: &Path) -> anyhow::Result<String> {
    if !p.is_file() {
        anyhow::bail!(
            "memtier_benchmark {} not found (--memtier or MEMTIER)",
            p.display()
        );
    }
    Ok(format!(
        "{} ({})",
        p.display(),
        crate::tool_version(p, "--version")
    ))
}

/// What one memtier run is asked for.
pub(crate) struct Shape<'a> {
    /// `redis` or `memcache_text`.
    pub protocol: &'a str,
    /// One seed node of a cluster (with `cluster`), else the server.
    pub host: String,
    pub port: u16,
    pub cluster: bool,
    pub conns: u32,
    pub pipeline: u32,
    pub records: u64,
    pub value_bytes: u64,
}

impl Shape<'_> {
    fn common(&self) -> Vec<String> {
        let mut a: Vec<String> = vec![
            format!("--protocol={}", self.protocol),
            "-s".into(),
            self.host.clone(),
            "-p".into(),
            self.port.to_string(),
            "--threads=1".into(),
            format!("--data-size={}", self.value_bytes),
            format!("--key-minimum={KEY_MIN}"),
            format!("--key-maximum={}", self.records + KEY_MIN - 1),
            "--hide-histogram".into(),
        ];
        if self.cluster {
            a.push("--cluster-mode".into());
        }
        a
    }

    /// Requests per connection for `ops` operations in all: memtier counts
    /// them per connection, so `ops` is split evenly (the remainder
    /// dropped; the server's count is what is used).
    fn requests(&self, ops: u64) -> u64 {
        (ops / u64::from(self.conns.max(1))).max(1)
    }

    /// The operations a run of `ops` really asks for.
    pub(crate) fn asked(&self, ops: u64) -> u64 {
        self.requests(ops) * u64::from(self.conns.max(1))
    }

    /// A measured run of `ops` operations in all: 1:1 SET:GET on random keys.
    pub(crate) fn run_args(&self, ops: u64) -> Vec<String> {
        let mut a = self.common();
        a.extend([
            format!("--clients={}", self.conns),
            format!("--pipeline={}", self.pipeline),
            format!("--requests={}", self.requests(ops)),
            "--ratio=1:1".into(),
            "--key-pattern=R:R".into(),
            "--distinct-client-seed".into(),
        ]);
        a
    }

    /// Fills memtier's key space once, every key in order (not measured).
    pub(crate) fn fill_args(&self) -> Vec<String> {
        let mut a = self.common();
        a.extend([
            "--clients=1".to_string(),
            "--pipeline=64".into(),
            "--requests=allkeys".into(),
            "--ratio=1:0".into(),
            "--key-pattern=P:P".into(),
        ]);
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(cluster: bool) -> Shape<'static> {
        Shape {
            protocol: "redis",
            host: "127.0.0.1".into(),
            port: 7000,
            cluster,
            conns: 50,
            pipeline: 16,
            records: 100_000,
            value_bytes: 100,
        }
    }

    fn has(args: &[String], want: &str) -> bool {
        args.iter().any(|a| a == want)
    }

    #[test]
    fn a_run_is_the_case_on_one_thread_with_the_operations_split_over_connections() {
        let a = shape(false).run_args(2_000_000);
        for want in [
            "--threads=1",
            "--clients=50",
            "--pipeline=16",
            "--requests=40000",
            "--ratio=1:1",
            "--data-size=100",
            "--key-minimum=1",
            "--key-maximum=100000",
            "--key-pattern=R:R",
        ] {
            assert!(has(&a, want), "{want} missing from {a:?}");
        }
        assert!(!has(&a, "--cluster-mode"));
        assert_eq!(shape(false).asked(2_000_010), 2_000_000);
        assert!(has(&shape(true).run_args(2_000_000), "--cluster-mode"));
    }

    #[test]
    fn the_fill_writes_every_key_of_the_runs_range_once() {
        let a = shape(false).fill_args();
        for want in [
            "--requests=allkeys",
            "--ratio=1:0",
            "--key-pattern=P:P",
            "--key-minimum=1",
            "--key-maximum=100000",
        ] {
            assert!(has(&a, want), "{want} missing from {a:?}");
        }
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        let p = locate(Some(PathBuf::from("/x/memtier_benchmark")));
        assert_eq!(p, Some(PathBuf::from("/x/memtier_benchmark")));
    }
}
