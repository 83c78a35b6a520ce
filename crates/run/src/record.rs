//! A run's record before anything starts: every setting the user chose or
//! kvbench resolved, and the machine it runs on. Apart from the sequence
//! that fills in what it measured (orchestrate.rs), because an experiment
//! hashes the planned configuration to recognise its cells.

use crate::cpus::CpuList;
use crate::settings::RunSettings;
use crate::target::Target;
use kvbench_model::{Companion, Environment, NetnsConfig, RunConfig, RunRecord, RunStatus};
use std::time::SystemTime;

/// The configuration a run of `s` records before anything starts: every
/// setting the user chose or kvbench resolved. An experiment hashes it to
/// recognise the cell.
pub fn planned_config(s: &RunSettings) -> RunConfig {
    new_record(s).config
}

/// The run's record before anything starts: its configuration, the
/// machine, and the workload's warnings.
pub fn new_record(s: &RunSettings) -> RunRecord {
    let (operations, duration_s) = match s.window {
        kvbench_engine::Window::Operations(n) => (n, None),
        kvbench_engine::Window::Duration(d) => (0, Some(d.as_secs_f64())),
    };
    let mut environment: Environment = kvbench_servers::machine_environment();
    environment.kvbench_version = env!("CARGO_PKG_VERSION").to_string();
    let rev = env!("KVBENCH_GIT_REV");
    environment.git_revision = (!rev.is_empty()).then(|| rev.to_string());
    RunRecord {
        id: None,
        started_at: now_rfc3339(),
        finished_at: String::new(),
        status: RunStatus::Failed,
        failure: None,
        marks: Vec::new(),
        warnings: s.warnings.clone(),
        config: RunConfig {
            system: s.system,
            workload: s.spec.name.clone(),
            records: s.spec.record_count,
            operations,
            duration_s,
            field_count: s.spec.field_count,
            field_length: s.spec.field_length,
            read_proportion: s.spec.read_proportion,
            update_proportion: s.spec.update_proportion,
            insert_proportion: s.spec.insert_proportion,
            request_distribution: s.spec.request_distribution.name().to_string(),
            clients: s.clients,
            pipeline: s.pipeline,
            threads: s.threads,
            load_clients: s.load_clients,
            load_pipeline: s.load_pipeline,
            warmup_s: s.warmup.as_secs_f64(),
            seed: s.seed,
            seed_source: s.seed_source.to_string(),
            server_settings: Vec::new(),
            server_binary: String::new(),
            target: s.target.as_ref().map(Target::redacted),
            rate: s.rate.map(|r| r.ops_per_s),
            arrival: s.rate.map(|r| r.arrival.as_str().to_string()),
            allow_errors: s.allow_errors,
            allow_incomplete_load: s.allow_incomplete_load,
            skip_load: s.no_load,
            workload_properties: s.properties.clone(),
            io: Some(s.io.as_str().to_string()),
            topology: s.topology,
            nodes: s.nodes,
            replicas: s.replicas,
            pool_hash: s
                .shape()
                .client_hashed()
                .then(|| s.pool_hash.as_str().to_string()),
            flush: s.safety.flush,
            allow_existing: s.safety.allow_existing,
            cleanup: s.safety.cleanup,
            netns: s.netns.map(|l| NetnsConfig {
                link_rate_bits: l.rate_bits,
                link_delay_us: l.delay.as_nanos() as f64 / 1e3,
            }),
            server_cpus: s.server_cpus.as_ref().map(CpuList::to_string),
            client_cpus: s.client_cpus.as_ref().map(CpuList::to_string),
            scale_out: s.scale_out.as_ref().map(|w| w.config()),
            reload: None,
            verdict: s.verdict,
            server_args: s.server_args.clone(),
            threads_reason: s.threads_reason.clone(),
            stall_s: (s.stall != kvbench_engine::phase::DEFAULT_STALL)
                .then_some(s.stall.as_secs_f64()),
            reconnect: match s.reconnect {
                None => Some("off".to_string()),
                Some(b) if b == kvbench_engine::Backoff::DEFAULT => None,
                Some(b) => Some(b.to_string()),
            },
            max_retries: (s.retry.max > 0).then_some(s.retry.max),
            retry_backoff: (s.retry.backoff != kvbench_engine::Retry::DEFAULT_BACKOFF)
                .then(|| s.retry.backoff.to_string()),
            faults: s.faults.iter().map(ToString::to_string).collect(),
            max_memory: s.max_memory.map(|m| m.to_string()),
            max_memory_mb: crate::max_memory::mb(s),
            eviction: crate::max_memory::eviction(s).map(|p| p.to_string()),
            companion: s.companion.as_ref().map(|c| Companion {
                workload: c.name.clone(),
                clients: c.clients,
                pipeline: c.pipeline,
                records: c.spec.record_count,
                workload_properties: c.properties.clone(),
            }),
        },
        environment,
        load: None,
        run: None,
        probes: Vec::new(),
        cpu: None,
        labels: s.labels.clone(),
    }
}

/// Now, for people: RFC 3339 in UTC, to the second.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}
