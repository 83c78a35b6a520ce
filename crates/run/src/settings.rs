//! One cell's settings, resolved and validated: what the per-cell sequence
//! runs. The binary's `config.rs` builds them from the flags (every default
//! that depends on the machine decided there, once); here they are data, so
//! the sequence and its tests need no command line.

use crate::cpus::CpuList;
use crate::target::{Safety, Target};
use kvbench_engine::route::ketama::Variant;
use kvbench_engine::{Io, Rate, Window};
use kvbench_model::{Mark, SystemKind, TopologyKind};
use kvbench_servers::{Link, Shape};
use kvbench_store::Labels;
use kvbench_workload::WorkloadSpec;
use std::path::PathBuf;
use std::time::Duration;

/// One cell's settings, validated.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// `--with`: the second client group, if any.
    pub companion: Option<CompanionSettings>,
    pub system: SystemKind,
    pub spec: WorkloadSpec,
    /// The workload's effective properties, recorded with the run.
    pub properties: Vec<(String, String)>,
    /// Warnings about the workload's properties, recorded with the run.
    pub warnings: Vec<Mark>,
    /// Notes about YCSB client settings a file may well carry (`db`,
    /// `exporter`), which kvbench sets aside: said once, not recorded as
    /// warnings (they say nothing about the run).
    pub notes: Vec<String>,
    pub clients: u32,
    pub pipeline: u32,
    pub threads: u32,
    /// Why `threads` is what it is, when kvbench chose it.
    pub threads_reason: Option<String>,
    pub warmup: Duration,
    pub window: Window,
    pub seed: u64,
    pub seed_source: &'static str,
    pub load_clients: u32,
    pub load_pipeline: u32,
    pub timeout: Duration,
    /// Stall threshold (zero: none).
    pub stall: Duration,
    /// How lost connections are reopened (`None`: `--no-reconnect`).
    pub reconnect: Option<kvbench_engine::Backoff>,
    /// How failed requests are retried (`--max-retries`, `--retry-backoff`).
    pub retry: kvbench_engine::Retry,
    /// `--failed-keys`: where the keys of finally failed requests go.
    pub failed_keys: Option<PathBuf>,
    /// `--fault`: caused during the window, in order of `at`.
    pub faults: Vec<kvbench_servers::fault::Fault>,
    pub server_binary: Option<PathBuf>,
    /// `--server-args`, split at spaces.
    pub server_args: Vec<String>,
    /// `--max-memory`: each server's limit (`None`: kvbench sizes it).
    pub max_memory: Option<kvbench_servers::MaxMemory>,
    /// `--eviction`: the policy at that limit (`None`: the server's own).
    pub eviction: Option<kvbench_servers::Eviction>,
    /// A system kvbench does not start.
    pub target: Option<Target>,
    /// What kvbench may change on the target.
    pub safety: Safety,
    /// Open loop: the schedule.
    pub rate: Option<Rate>,
    pub allow_errors: bool,
    pub allow_incomplete_load: bool,
    pub no_load: bool,
    /// The I/O loop (closed loop; open loop always uses tokio).
    pub io: Io,
    /// How the system is deployed.
    pub topology: TopologyKind,
    /// Cluster: masters (1 for a single server).
    pub nodes: u32,
    /// Cluster: replicas per master.
    pub replicas: u32,
    /// Pool: whose ketama ring.
    pub pool_hash: Variant,
    /// `--netns`: the links of the run's private network.
    pub netns: Option<Link>,
    /// `--server-cpus`, `--client-cpus`.
    pub server_cpus: Option<CpuList>,
    pub client_cpus: Option<CpuList>,
    /// `--label`: stored with the run, never part of its configuration (an
    /// experiment's cell key does not see them).
    pub labels: Labels,
    /// `--workers`: the run phase spread over several processes.
    pub scale_out: Option<crate::scaleout::ScaleOut>,
    /// How a comparison's verdicts are called, when not the default.
    pub verdict: Option<kvbench_model::VerdictRule>,
}

impl RunSettings {
    /// A cell of `spec` (with its effective `properties`) measured over
    /// `window` on one local `system` that kvbench starts: what `kvbench
    /// run` resolves to with every flag left at its default, except those
    /// whose default depends on the machine or the moment, which are fixed
    /// here (one worker thread, seed 1). Library callers and tests change
    /// the fields they need from this.
    pub fn new(
        system: SystemKind,
        spec: WorkloadSpec,
        properties: Vec<(String, String)>,
        window: Window,
    ) -> RunSettings {
        RunSettings {
            companion: None,
            system,
            spec,
            properties,
            warnings: Vec::new(),
            notes: Vec::new(),
            clients: 1,
            pipeline: 1,
            threads: 1,
            threads_reason: None,
            warmup: Duration::from_secs(1),
            window,
            seed: 1,
            seed_source: "user",
            load_clients: 4,
            load_pipeline: 64,
            timeout: Duration::from_secs(10),
            stall: Duration::from_secs(1),
            reconnect: Some(kvbench_engine::Backoff::DEFAULT),
            retry: kvbench_engine::Retry::default(),
            failed_keys: None,
            faults: Vec::new(),
            server_binary: None,
            server_args: Vec::new(),
            max_memory: None,
            eviction: None,
            target: None,
            safety: Safety::default(),
            rate: None,
            allow_errors: false,
            allow_incomplete_load: false,
            no_load: false,
            io: Io::Tokio,
            topology: TopologyKind::default(),
            nodes: 1,
            replicas: 0,
            pool_hash: Variant::default(),
            netns: None,
            server_cpus: None,
            client_cpus: None,
            labels: Labels::new(),
            scale_out: None,
            verdict: None,
        }
    }

    /// [`RunSettings::new`] for the built-in workload `preset` (`ycsb/a`,
    /// `read-heavy`, ...) with `properties` set over it as on the command
    /// line (`-p name=value`), measured over `window`.
    ///
    /// # Errors
    /// An unknown preset, or a property its workload refuses or warns about
    /// (settings built here carry no warnings), in one line.
    pub fn of_preset(
        system: SystemKind,
        preset: &str,
        properties: &[(&str, &str)],
        window: Window,
    ) -> Result<RunSettings, String> {
        let mut props = kvbench_workload::presets::find(preset).map_err(|e| e.to_string())?;
        for (name, value) in properties {
            props.set(name, value, kvbench_workload::Origin::CommandLine);
        }
        let (mut spec, warnings) =
            WorkloadSpec::from_properties(&props).map_err(|e| e.to_string())?;
        if let Some(w) = warnings.first() {
            return Err(format!("{preset}: {w}"));
        }
        spec.name = preset.into();
        let effective = props
            .iter()
            .map(|e| (e.name.clone(), e.value.clone()))
            .collect();
        Ok(RunSettings::new(system, spec, effective, window))
    }

    /// Records the servers may hold when the run ends: those loaded plus
    /// those it may insert (its operation count's share of inserts, or an
    /// open loop's rate over its window; a closed loop bounded by time
    /// cannot say, so 0). Memcached's memory limit and the memory check are
    /// sized from it.
    pub fn records_at_most(&self) -> u64 {
        let ops = match self.window {
            Window::Operations(n) => n,
            Window::Duration(d) => self
                .rate
                .map_or(0, |r| (r.ops_per_s * d.as_secs_f64()) as u64),
        };
        let inserts = (ops as f64 * self.spec.insert_proportion).ceil() as u64;
        self.spec.record_count.saturating_add(inserts)
    }

    /// The topology with its counts.
    pub fn shape(&self) -> Shape {
        Shape {
            kind: self.topology,
            nodes: self.nodes,
            replicas: self.replicas,
        }
    }
}

/// `--with`: a second client group's workload and load model.
#[derive(Debug, Clone)]
pub struct CompanionSettings {
    pub name: String,
    pub spec: WorkloadSpec,
    pub properties: Vec<(String, String)>,
    pub clients: u32,
    pub pipeline: u32,
}
