//! Turns what the user typed into resolved, validated settings: every default
//! that depends on the machine is decided here, once, and then recorded with
//! the run.

use crate::args::{ArrivalArg, BenchArgs};
use crate::exit::UsageError;
use kvbench_engine::{Arrival, Rate, Window};
use kvbench_model::SystemKind;
use kvbench_workload::{preset, RequestDistribution, WorkloadSpec};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// One cell's settings, validated.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub system: SystemKind,
    pub spec: WorkloadSpec,
    pub clients: u32,
    pub pipeline: u32,
    pub threads: u32,
    pub warmup: Duration,
    pub window: Window,
    pub seed: u64,
    pub seed_source: &'static str,
    pub load_clients: u32,
    pub load_pipeline: u32,
    pub timeout: Duration,
    pub server_binary: Option<PathBuf>,
    /// A server kvbench does not start.
    pub target: Option<SocketAddr>,
    /// Open loop: the schedule.
    pub rate: Option<Rate>,
    pub allow_errors: bool,
    pub no_load: bool,
}

/// Parses a system name, as a usage error.
pub fn system(name: &str) -> Result<SystemKind, UsageError> {
    name.parse().map_err(UsageError)
}

/// Builds a workload spec from a preset name and the dataset flags.
pub fn workload(name: &str, b: &BenchArgs) -> Result<WorkloadSpec, UsageError> {
    let p = preset(name).map_err(|e| UsageError(e.to_string()))?;
    let spec = WorkloadSpec {
        name: p.name.to_string(),
        record_count: b.records,
        field_count: b.field_count,
        field_length: b.field_length,
        read_proportion: p.read,
        update_proportion: p.update,
        insert_proportion: 0.0,
        request_distribution: RequestDistribution::Uniform,
        read_all_fields: true,
        write_all_fields: false,
    };
    spec.validate().map_err(|e| UsageError(format!("--{e}")))?;
    Ok(spec)
}

/// Checks the flags that are the same for every cell and resolves defaults.
pub fn settings(
    system: SystemKind,
    spec: WorkloadSpec,
    clients: u32,
    b: &BenchArgs,
    seed: (u64, &'static str),
) -> Result<RunSettings, UsageError> {
    let positive = |name: &str, v: u64| {
        if v == 0 {
            Err(UsageError(format!("--{name} must be at least 1")))
        } else {
            Ok(())
        }
    };
    positive("clients", clients.into())?;
    positive("pipeline", b.pipeline.into())?;
    positive("load-clients", b.load_clients.into())?;
    positive("load-pipeline", b.load_pipeline.into())?;
    if let Some(t) = b.threads {
        positive("threads", t.into())?;
    }
    let window = match b.duration {
        Some(d) if d.is_zero() => {
            return Err(UsageError("--duration must be longer than 0".into()))
        }
        Some(d) => Window::Duration(d),
        None => {
            positive("operations", b.operations)?;
            Window::Operations(b.operations)
        }
    };
    let rate = match b.rate {
        Some(r) if !(r.is_finite() && r > 0.0) => {
            return Err(UsageError(format!(
                "--rate must be a positive number of operations per second, got {r}"
            )))
        }
        Some(r) => Some(Rate {
            ops_per_s: r,
            arrival: match b.arrival {
                ArrivalArg::Uniform => Arrival::Uniform,
                ArrivalArg::Poisson => Arrival::Poisson,
            },
        }),
        None => None,
    };
    if b.timeout.is_zero() {
        return Err(UsageError("--timeout must be longer than 0".into()));
    }
    if let Some(p) = &b.server_binary {
        if !p.is_file() {
            return Err(UsageError(format!(
                "--server-binary {}: no such file",
                p.display()
            )));
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    Ok(RunSettings {
        system,
        spec,
        clients,
        pipeline: b.pipeline,
        threads: b.threads.unwrap_or(cores),
        warmup: b.warmup,
        window,
        seed: seed.0,
        seed_source: seed.1,
        load_clients: b.load_clients,
        load_pipeline: b.load_pipeline,
        timeout: b.timeout,
        server_binary: b.server_binary.clone(),
        target: None,
        rate,
        allow_errors: b.allow_errors,
        no_load: b.no_load,
    })
}

/// Resolves `--target HOST:PORT` to one address.
pub fn target(text: &str) -> Result<SocketAddr, UsageError> {
    text.to_socket_addrs()
        .map_err(|e| UsageError(format!("--target {text}: {e} (expected HOST:PORT)")))?
        .next()
        .ok_or_else(|| UsageError(format!("--target {text}: the name has no address")))
}

/// The user's seed, or one from the OS (recorded either way).
pub fn seed(user: Option<u64>) -> (u64, &'static str) {
    match user {
        Some(s) => (s, "user"),
        None => {
            let mut bytes = [0u8; 8];
            let ok = std::fs::File::open("/dev/urandom")
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
                .is_ok();
            if ok {
                (u64::from_le_bytes(bytes), "entropy")
            } else {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                (t, "clock")
            }
        }
    }
}

/// Memcached's memory limit for a dataset: the data, slab rounding (chunk
/// classes grow by 1.25x, so up to a quarter is lost) and per-item overhead
/// (about 50 bytes of header), plus the 64 MB default as headroom. Never
/// below the default. Recorded with the run as a deviation from defaults.
pub fn memcached_memory_mb(records: u64, value_bytes: u64, key_bytes: u64) -> u64 {
    let per_item = (value_bytes + key_bytes + 64) as f64 * 1.3;
    let mb = (records as f64 * per_item / (1024.0 * 1024.0)).ceil() as u64 + 64;
    mb.max(64)
}
