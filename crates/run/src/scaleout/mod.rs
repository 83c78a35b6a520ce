//! Scale-out: a run's phases driven from several kvbench processes at once,
//! started as Spark barrier tasks (docs/scale-out.md).
//!
//! ```text
//! run --workers N ─► task (the phase as JSON) ─► spark (python -m kvbench_spark scale-out)
//!     ─► N × `kvbench worker --slice I/N` (worker, part) ─► merge ─► one stored run
//! ```
//!
//! The driver starts (or reaches) the target, loads it and probes it as a
//! single-process run does; the load and the measured phase are each
//! spread by a Spark job of their own.

pub mod merge;
pub mod part;
pub mod spark;
pub mod task;

use crate::settings::RunSettings;
use crate::usage::UsageError;
use kvbench_model::ScaleOutConfig;

/// Where and how widely a run's phase is spread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleOut {
    /// Worker processes.
    pub workers: u32,
    /// The Spark master (`local[N]`, `spark://host:7077`, `k8s://...`, `yarn`).
    pub spark_master: String,
    /// `--spark-conf KEY=VALUE` settings passed to the session.
    pub spark_conf: Vec<String>,
}

impl ScaleOut {
    /// What the run records.
    pub fn config(&self) -> ScaleOutConfig {
        ScaleOutConfig {
            workers: self.workers,
            spark_master: self.spark_master.clone(),
        }
    }

    /// `--workers N` with its master: `local[N]` unless one is named.
    pub fn new(
        workers: u32,
        master: Option<&str>,
        conf: &[String],
    ) -> Result<ScaleOut, UsageError> {
        crate::bounds::WORKERS.check("--workers", workers.into())?;
        for c in conf {
            if !c.contains('=') || c.starts_with('=') {
                return Err(UsageError(format!(
                    "--spark-conf: \"{c}\" is not KEY=VALUE"
                )));
            }
        }
        let spark_master = master.map_or_else(|| format!("local[{workers}]"), str::to_string);
        if let Some(slots) = local_slots(&spark_master) {
            if slots < workers {
                return Err(UsageError(format!(
                    "--spark-master {spark_master} has {slots} task slots, fewer than --workers {workers}: barrier tasks all run at once"
                )));
            }
        }
        Ok(ScaleOut {
            workers,
            spark_master,
            spark_conf: conf.to_vec(),
        })
    }

    /// Refuses, before anything starts, what the workers cannot run.
    ///
    /// # Errors
    /// [`UsageError`] naming the flag.
    pub fn check(&self, s: &RunSettings) -> Result<(), UsageError> {
        if self.workers > s.clients {
            return Err(UsageError(format!(
                "--workers {}: more workers than the {} --clients; each worker runs a slice of the clients",
                self.workers, s.clients
            )));
        }
        kvbench_analytics::spark::check("--workers").map_err(|m| UsageError(m.0))?;
        Ok(())
    }
}

/// Task slots of a local master (`local`: 1, `local[N]`, `local[N,F]`,
/// `local[*]`: the cores); `None` for a cluster, whose size Spark checks.
fn local_slots(master: &str) -> Option<u32> {
    if master == "local" {
        return Some(1);
    }
    let inner = master.strip_prefix("local[")?.strip_suffix(']')?;
    match inner.split(',').next()? {
        "*" => std::thread::available_parallelism()
            .ok()
            .map(|n| n.get() as u32),
        n => n.trim().parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_master_defaults_to_local_with_a_slot_per_worker_and_must_have_enough() {
        let so = ScaleOut::new(4, None, &[]).expect("ok");
        assert_eq!(so.spark_master, "local[4]");
        assert!(ScaleOut::new(4, Some("local[2]"), &[]).is_err());
        assert!(ScaleOut::new(2, Some("local[2,3]"), &[]).is_ok());
        assert!(ScaleOut::new(64, Some("spark://h:7077"), &[]).is_ok());
        assert!(ScaleOut::new(0, None, &[]).is_err());
        assert!(ScaleOut::new(crate::bounds::WORKERS.max as u32 + 1, None, &[]).is_err());
        let bad = ScaleOut::new(2, None, &["nokey".into()]).expect_err("not KEY=VALUE");
        assert!(bad.0.contains("--spark-conf"), "{}", bad.0);
    }

    #[test]
    fn local_slots_are_read_from_the_master() {
        assert_eq!(local_slots("local"), Some(1));
        assert_eq!(local_slots("local[8]"), Some(8));
        assert_eq!(local_slots("local[3,2]"), Some(3));
        assert_eq!(local_slots("yarn"), None);
        assert!(local_slots("local[*]").is_some_and(|n| n >= 1));
    }
}
