//! Turns what the user typed into resolved, validated settings: every default
//! that depends on the machine is decided here, once, and then recorded with
//! the run.

use crate::args::{ArrivalArg, BenchArgs, HashArg, IoArg, RunArgs};
use crate::exit::UsageError;
use kvbench_engine::driver::Driver;
use kvbench_engine::route::ketama::Variant;
use kvbench_engine::{Arrival, Io, Rate, Window};
use kvbench_model::{Finding, Mark, OpKind, SystemKind, TopologyKind};
use kvbench_run::bounds;
use kvbench_run::cpus::CpuList;
use kvbench_run::settings::{CompanionSettings, RunSettings};
use kvbench_run::target::Target;
use kvbench_servers::{Link, Shape};
use kvbench_workload::{presets, Origin, Properties, WorkloadSpec};
use std::path::PathBuf;

/// Checks `--max-memory` and `--eviction` against the system.
fn memory_limit(system: SystemKind, b: &BenchArgs) -> Result<(), UsageError> {
    if b.max_memory.is_none() {
        return Ok(());
    }
    if b.target.is_some() {
        return Err(UsageError(
            "--max-memory: kvbench sets no option on a --target it did not start (set its limit there, and kvbench reads it)".into(),
        ));
    }
    kvbench_servers::check_max_memory(system)
        .map_err(|why| UsageError(format!("--max-memory: {why}")))?;
    if let Some(p) = b.eviction {
        kvbench_servers::check_eviction(system, p)
            .map_err(|e| UsageError(format!("--eviction: {e}")))?;
    }
    Ok(())
}

/// Checks `--topology`, `--nodes` and `--replicas` against the system.
fn topology(system: SystemKind, b: &BenchArgs) -> Result<Shape, UsageError> {
    let kind: TopologyKind = b
        .topology
        .parse()
        .map_err(|e| UsageError(format!("--topology: {e}")))?;
    kvbench_servers::check_topology(system, kind).map_err(UsageError)?;
    Shape::check(kind, b.nodes, b.replicas).map_err(UsageError)
}

/// `--fault`: only on servers kvbench starts, on a node that exists, a
/// failover only where there is one to make, and within a timed window.
fn faults(
    system: SystemKind,
    shape: Shape,
    window: Window,
    b: &BenchArgs,
) -> Result<Vec<kvbench_servers::fault::Fault>, UsageError> {
    use kvbench_servers::fault::FaultKind;
    let mut faults = b.faults.clone();
    let Some(first) = faults.first() else {
        return Ok(faults);
    };
    let refuse = |why: String| Err(UsageError(format!("--fault {first}: {why}")));
    if b.target.is_some() {
        return refuse(
            "faults are caused only on servers kvbench starts, never on a --target".into(),
        );
    }
    kvbench_servers::check_faults(system)
        .map_err(|why| UsageError(format!("--fault {first}: {why}")))?;
    let data_nodes = shape.data_nodes();
    for f in &faults {
        let bad = |why: String| Err(UsageError(format!("--fault {f}: {why}")));
        if f.kind == FaultKind::Failover {
            let masters = shape.masters();
            if !shape.can_fail_over() {
                return bad(
                    "a failover needs --topology sentinel, or --topology cluster with --replicas"
                        .into(),
                );
            }
            if f.node as u32 >= masters {
                return bad(format!(
                    "there are {masters} masters (0 to {})",
                    masters - 1
                ));
            }
        } else if f.node as u32 >= data_nodes {
            return bad(format!(
                "there are {data_nodes} data nodes (0 to {})",
                data_nodes - 1
            ));
        }
        if f.kind == FaultKind::Drop && !b.netns {
            return bad(
                "a drop takes the node's link down in the run's private network: give --netns"
                    .into(),
            );
        }
        if let Window::Duration(d) = window {
            if f.at >= d {
                return bad(format!(
                    "it comes after the {} window",
                    humantime::format_duration(d)
                ));
            }
        }
    }
    faults.sort_by_key(|f| f.at);
    Ok(faults)
}

/// `--netns` and its links; root, iproute2 and (for a delay) netem are
/// checked here, before any server starts.
fn netns(b: &BenchArgs) -> Result<Option<Link>, UsageError> {
    if b.netns && b.target.is_some() {
        return Err(UsageError(
            "--netns with --target: namespaces are for servers kvbench starts; drop one of them"
                .into(),
        ));
    }
    if !b.netns {
        return match (b.link_rate, b.link_delay) {
            (None, None) => Ok(None),
            _ => Err(UsageError(
                "--link-rate and --link-delay shape the links of --netns; add --netns".into(),
            )),
        };
    }
    let link = Link {
        rate_bits: b.link_rate,
        delay: b.link_delay.unwrap_or_default(),
    };
    kvbench_servers::netns::preflight(link).map_err(|e| UsageError(e.to_string()))?;
    Ok(Some(link))
}

/// Parses a system name, as a usage error.
pub fn system(name: &str) -> Result<SystemKind, UsageError> {
    name.parse().map_err(UsageError)
}

/// kvbench's defaults for what YCSB leaves at 0 or tiny: applied under every
/// preset and file, so any of them (or a flag) overrides it.
const DEFAULT_RECORDS: &str = "100000";
const DEFAULT_OPERATIONS: &str = "100000";
/// Connections when neither --clients nor `threadcount` says.
const DEFAULT_CLIENTS: u32 = 4;

/// The first layer of every workload: [`DEFAULT_RECORDS`] and
/// [`DEFAULT_OPERATIONS`].
fn defaults() -> Properties {
    let mut props = Properties::new();
    let origin = Origin::Preset("kvbench defaults".into());
    props.set("recordcount", DEFAULT_RECORDS, origin.clone());
    props.set("operationcount", DEFAULT_OPERATIONS, origin);
    props
}

/// A preset as `--workload NAME` runs it (kvbench's defaults under it), for
/// listings that must show what a run would use.
pub fn preset_as_run(name: &str) -> Result<WorkloadSpec, UsageError> {
    let mut props = defaults();
    props.merge(presets::find(name).map_err(|e| UsageError(format!("--workload: {e}")))?);
    let (spec, _) = WorkloadSpec::from_properties(&props)
        .map_err(|e| UsageError(format!("preset {name}: {e}")))?;
    Ok(spec)
}

/// Where a workload comes from on the command line.
pub struct WorkloadArgs<'a> {
    pub preset: Option<&'a str>,
    pub files: &'a [PathBuf],
}

/// A workload resolved from presets, files, overrides and flags.
pub struct Resolved {
    pub spec: WorkloadSpec,
    /// The effective properties, recorded with the run.
    pub properties: Vec<(String, String)>,
    /// Warnings about properties kvbench does not use.
    pub warnings: Vec<Mark>,
    /// YCSB client settings it sets aside (see [`RunSettings::notes`]).
    pub notes: Vec<String>,
}

/// Resolves the workload: kvbench defaults, then the preset, then the `-P`
/// files in order, then `-p` overrides, then explicit flags (memtier's, then
/// the others; later wins).
/// Returns the spec, the effective properties (recorded with the run), and
/// warnings about properties kvbench does not use.
pub fn workload(w: &WorkloadArgs<'_>, b: &BenchArgs) -> Result<Resolved, UsageError> {
    let mut props = defaults();
    if let Some(name) = w.preset {
        props.merge(presets::find(name).map_err(|e| UsageError(format!("--workload: {e}")))?);
    }
    for f in w.files {
        props.merge(Properties::load_file(f).map_err(|e| UsageError(e.to_string()))?);
    }
    for o in &b.properties {
        props
            .apply_override(o)
            .map_err(|e| UsageError(e.to_string()))?;
    }
    for (name, value) in crate::memtier_args::properties(b)? {
        props.set(&name, &value, Origin::CommandLine);
    }
    use kvbench_workload::bounds as most;
    let flags: [(&str, &str, Option<u64>, u64); 4] = [
        ("recordcount", "--records", b.records, most::MAX_RECORDS),
        (
            "operationcount",
            "--operations",
            b.operations,
            most::MAX_OPERATIONS,
        ),
        (
            "fieldcount",
            "--field-count",
            b.field_count.map(u64::from),
            u64::from(most::MAX_FIELD_COUNT),
        ),
        (
            "fieldlength",
            "--field-length",
            b.field_length.map(u64::from),
            u64::from(most::MAX_FIELD_LENGTH),
        ),
    ];
    for (name, flag, value, max) in flags {
        if let Some(v) = value {
            // Checked here so the message names the flag, not the property.
            bounds::Count { min: 1, max }.check(flag, v)?;
            props.set(name, &v.to_string(), Origin::CommandLine);
        }
    }
    if let Some(prefix) = &b.key_prefix {
        props.set("kvbench.keyprefix", prefix, Origin::CommandLine);
    }
    let (mut spec, warnings) =
        WorkloadSpec::from_properties(&props).map_err(|e| UsageError(e.to_string()))?;
    spec.validate().map_err(|e| UsageError(e.to_string()))?;
    if let Some(name) = w.preset {
        spec.name = name.to_string();
    } else {
        spec.name = w
            .files
            .iter()
            .map(|f| {
                if f.as_os_str() == kvbench_workload::input::STDIN {
                    "stdin".to_string()
                } else {
                    f.display().to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" + ");
    }
    let effective = effective(&props);
    let (notes, warnings): (Vec<_>, Vec<_>) = warnings.iter().partition(|w| w.is_note());
    Ok(Resolved {
        spec,
        properties: effective,
        warnings: warnings.into_iter().map(property_warning).collect(),
        notes: notes.iter().map(|w| w.to_string()).collect(),
    })
}

/// A workload warning as the run records it.
fn property_warning(w: &kvbench_workload::ycsb::Warning) -> Mark {
    use kvbench_model::mark::PropertyIssue;
    use kvbench_workload::ycsb::WarningKind;
    Finding::Property {
        origin: w.origin.to_string(),
        property: w.property.clone(),
        issue: match w.kind {
            WarningKind::Unknown => PropertyIssue::Unknown,
            // Ignored ones are notes, set apart above.
            WarningKind::Unsupported | WarningKind::Ignored => PropertyIssue::Unsupported,
        },
        message: w.message.clone(),
    }
    .into()
}

/// The last value of every property, in first-set order: enough to repeat
/// the run with `-p` alone.
fn effective(props: &Properties) -> Vec<(String, String)> {
    // `iter` already gives one entry per name, the winning one.
    props
        .iter()
        .map(|e| (e.name.clone(), e.value.clone()))
        .collect()
}

/// Checks the flags that are the same for every cell and resolves defaults.
pub fn settings(
    system: SystemKind,
    spec: WorkloadSpec,
    clients: Option<u32>,
    b: &BenchArgs,
    seed: (u64, &'static str),
) -> Result<RunSettings, UsageError> {
    // A scan on memcached, or a data model the system lacks, fails here,
    // before any server starts.
    Driver::new(system, &spec, spec.key_namer())
        .check(&spec)
        .map_err(UsageError)?;
    if let Some(c) = clients {
        bounds::CLIENTS.check("--clients", c.into())?;
    }
    let clients = clients
        .or(spec.client.thread_count)
        .unwrap_or(DEFAULT_CLIENTS);
    check_bounds(b)?;
    let window = window(&spec, b)?;
    // A write-only load (memtier's --ratio 1:0) needs no records; one that
    // reads them does, and a server kvbench starts has none.
    let reads_records = spec.read_proportion > 0.0
        || spec.scan_proportion > 0.0
        || spec.read_modify_write_proportion > 0.0;
    if b.no_load && b.target.is_none() && reads_records {
        return Err(UsageError(
            "--no-load is for a --target already loaded: a server kvbench starts is empty, so every read would miss (a write-only workload may skip the load)"
                .into(),
        ));
    }
    let rate = rate(&spec, b)?;
    let server_args = server_args(system, b)?;
    memory_limit(system, b)?;
    let target = crate::target::resolve(b, system)?;
    let shape = match &target {
        Some(t) => Shape {
            kind: t.topology(),
            nodes: t.addrs.len() as u32,
            replicas: 0,
        },
        None => topology(system, b)?,
    };
    let netns = netns(b)?;
    let cpus =
        |flag: &str, v: &Option<String>| v.as_deref().map(|t| CpuList::parse(flag, t)).transpose();
    let server_cpus = cpus("--server-cpus", &b.server_cpus)?;
    let client_cpus = cpus("--client-cpus", &b.client_cpus)?;
    if server_cpus.is_some() && target.is_some() {
        return Err(UsageError(
            "--server-cpus places servers kvbench starts; a --target's servers are not".into(),
        ));
    }
    connections(system, clients, b, &server_args, target.is_some(), shape)?;
    let tls = target.as_ref().is_some_and(|t| t.access.is_tls());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let (threads, threads_reason) = match b.threads {
        // The engine never runs more workers than connections; the record
        // says so rather than keeping a number that did not run.
        Some(t) if t > clients => (
            clients,
            Some(format!(
                "--threads {t} capped at the {clients} clients: each worker thread owns whole connections"
            )),
        ),
        Some(t) => (t, None),
        None => match default_threads(
            cores,
            target.as_ref(),
            client_cpus.as_ref(),
            server_cpus.as_ref(),
        ) {
            (t, why) if t > clients => (
                clients,
                Some(format!("{why}; capped at the {clients} clients")),
            ),
            (t, why) => (t, Some(why)),
        },
    };
    let io = io_loop(b, rate, tls)?;
    Ok(RunSettings {
        companion: None,
        netns,
        server_cpus,
        client_cpus,
        labels: crate::labels::parse_all("--label", &b.labels)?,
        scale_out: None,
        verdict: None,
        topology: shape.kind,
        nodes: shape.nodes,
        replicas: shape.replicas,
        pool_hash: match b.hash {
            HashArg::Libmemcached => Variant::Libmemcached,
            HashArg::LibmemcachedMd5 => Variant::LibmemcachedMd5,
            HashArg::Spymemcached => Variant::Spymemcached,
        },
        system,
        spec,
        properties: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
        clients,
        pipeline: b.pipeline,
        threads,
        threads_reason,
        warmup: b.warmup,
        window,
        seed: seed.0,
        seed_source: seed.1,
        load_clients: b.load_clients,
        load_pipeline: b.load_pipeline,
        timeout: b.timeout,
        stall: b.stall,
        reconnect: (!b.no_reconnect).then_some(b.reconnect_backoff),
        retry: kvbench_engine::Retry {
            max: b.max_retries,
            backoff: b.retry_backoff,
            // The measured window's keys: set for that phase only (orchestrate).
            keep_failed_keys: false,
        },
        failed_keys: b.failed_keys.clone(),
        faults: faults(system, shape, window, b)?,
        // Servers start in a directory of their own: a relative path
        // would name another file there.
        server_binary: b
            .server_binary
            .as_ref()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone())),
        server_args,
        max_memory: b.max_memory,
        eviction: b.eviction,
        target,
        safety: crate::target::safety(b),
        rate,
        allow_errors: b.allow_errors,
        allow_incomplete_load: b.allow_incomplete_load,
        no_load: b.no_load,
        io,
    })
}

/// The ranges of the flags that have one (`bounds.rs`).
fn check_bounds(b: &BenchArgs) -> Result<(), UsageError> {
    bounds::PIPELINE.check("--pipeline", b.pipeline.into())?;
    bounds::CLIENTS.check("--load-clients", b.load_clients.into())?;
    bounds::PIPELINE.check("--load-pipeline", b.load_pipeline.into())?;
    if let Some(t) = b.threads {
        bounds::THREADS.check("--threads", t.into())?;
    }
    bounds::WARMUP.check("--warmup", b.warmup)?;
    bounds::TIMEOUT.check("--timeout", b.timeout)?;
    bounds::STALL.check("--stall", b.stall)?;
    bounds::RECONNECT.check("--reconnect-backoff", b.reconnect_backoff.min)?;
    bounds::RECONNECT.check("--reconnect-backoff", b.reconnect_backoff.max)?;
    bounds::RECONNECT.check("--retry-backoff", b.retry_backoff.min)?;
    bounds::RECONNECT.check("--retry-backoff", b.retry_backoff.max)?;
    bounds::RETRIES.check("--max-retries", b.max_retries.into())?;
    Ok(())
}

/// The measured window: `--duration`, else the workload's operation count.
fn window(spec: &WorkloadSpec, b: &BenchArgs) -> Result<Window, UsageError> {
    match b.duration {
        Some(d) => {
            bounds::DURATION.check("--duration", d)?;
            Ok(Window::Duration(d))
        }
        None => match spec.client.operation_count {
            Some(n) if n > 0 => Ok(Window::Operations(n)),
            _ => Err(UsageError(
                "--operations (operationcount) must be at least 1".into(),
            )),
        },
    }
}

/// An open loop's rate: `--rate`, which wins over the workload's `target`.
fn rate(spec: &WorkloadSpec, b: &BenchArgs) -> Result<Option<Rate>, UsageError> {
    let rate = match (b.rate, spec.client.target) {
        (Some(r), _) => Some((r, "--rate")),
        (None, Some(t)) => Some((t as f64, "target")),
        (None, None) => None,
    };
    if let Some((r, name)) = rate {
        bounds::rate(name, r)?;
    }
    Ok(rate.map(|(r, _)| Rate {
        ops_per_s: r,
        arrival: match b.arrival {
            ArrivalArg::Uniform => Arrival::Uniform,
            ArrivalArg::Poisson => Arrival::Poisson,
        },
    }))
}

/// `--server-args`, split into words and checked against what kvbench must
/// own; and `--server-bin`, which must be a file.
fn server_args(system: SystemKind, b: &BenchArgs) -> Result<Vec<String>, UsageError> {
    let server_args: Vec<String> = b
        .server_args
        .iter()
        .flat_map(|a| a.split_whitespace().map(String::from))
        .collect();
    if !server_args.is_empty() {
        if b.target.is_some() {
            return Err(UsageError(
                "--server-args: kvbench does not start a --target, so it passes it no arguments"
                    .into(),
            ));
        }
        kvbench_servers::check_extra_args(system, &server_args)
            .map_err(|e| UsageError(format!("--server-args: {e}")))?;
    }
    if let Some(p) = &b.server_binary {
        if !p.is_file() {
            return Err(UsageError(format!(
                "--server-bin {}: no such file",
                p.display()
            )));
        }
    }
    Ok(server_args)
}

/// The I/O loop: `--io`, where the run allows it (an open loop and TLS run
/// on tokio only).
fn io_loop(b: &BenchArgs, rate: Option<Rate>, tls: bool) -> Result<Io, UsageError> {
    Ok(match (b.io, rate) {
        (IoArg::Uring, Some(_)) => {
            return Err(UsageError(
                "--io uring drives closed-loop runs only; an open-loop run (--rate, or the workload's target) runs on tokio: drop --io uring"
                    .into(),
            ))
        }
        (_, Some(_)) | (IoArg::Tokio, _) => Io::Tokio,
        // Only rustls can produce a TLS connection's bytes, and it runs
        // on the tokio loop; the ring sends plain sockets' buffers.
        (IoArg::Uring, _) if tls => {
            return Err(UsageError(
                "--io uring cannot drive TLS connections (rediss://); use --io tokio or auto"
                    .into(),
            ))
        }
        (IoArg::Auto, _) if tls => Io::Tokio,
        (IoArg::Uring, _) => {
            if !kvbench_engine::uring::available() {
                return Err(UsageError("--io uring: this kernel does not offer what the io_uring loop needs (Linux 6.0 or later, io_uring not disabled in /proc/sys/kernel/io_uring_disabled); use --io tokio".into()));
            }
            Io::Uring
        }
        (IoArg::Auto, None) => Io::auto(),
    })
}

/// Refuses, before any server starts, a run whose connections cannot all
/// be open at once: more than the open-file hard limit allows, or more than
/// a server kvbench starts accepts (Redis's `maxclients`, Memcached's `-c`),
/// which would otherwise fail the run after the load, or hang it.
fn connections(
    system: SystemKind,
    clients: u32,
    b: &BenchArgs,
    server_args: &[String],
    remote: bool,
    shape: Shape,
) -> Result<(), UsageError> {
    let per_client = shape.connections_per_client()
        * kvbench_engine::connections_per_node(system, b.pipeline.max(b.load_pipeline));
    let most = u64::from(clients.max(b.load_clients));
    if !remote && shape.clients_reach_servers() {
        server_accepts(system, clients, b.load_clients, server_args)?;
    }
    kvbench_engine::limits::check_open_files(most * per_client).map_err(UsageError)
}

/// The connection limit of a server kvbench starts (see [`connections`]).
fn server_accepts(
    system: SystemKind,
    clients: u32,
    load_clients: u32,
    server_args: &[String],
) -> Result<(), UsageError> {
    let most = u64::from(clients.max(load_clients));
    let (usable, option, set) = kvbench_servers::connection_limit(system, server_args)
        .map_err(|e| UsageError(format!("--server-args: {e}")))?;
    if most > usable {
        let (flag, n) = if clients >= load_clients {
            ("--clients", clients)
        } else {
            ("--load-clients", load_clients)
        };
        return Err(UsageError(format!(
            "{flag} {n}: a {system} kvbench starts accepts {usable} client connections at once ({option} {set}); use fewer, or raise it with --server-args \"{option} {}\"",
            u64::from(n) + set - usable
        )));
    }
    Ok(())
}

/// Everything `kvbench run` resolves from its flags. An experiment's cells
/// come through here too, as the `run` flags they stand for, so a cell is
/// exactly the run those flags give.
pub fn run_settings(a: &RunArgs) -> Result<RunSettings, UsageError> {
    let system = system(&a.system)?;
    let w = WorkloadArgs {
        preset: a.workload.as_deref(),
        files: &a.property_files,
    };
    let resolved = workload(&w, &a.bench)?;
    let mut s = settings(
        system,
        resolved.spec,
        a.clients,
        &a.bench,
        seed(a.bench.seed),
    )?;
    s.properties = resolved.properties;
    s.warnings = resolved.warnings;
    s.notes = resolved.notes;
    if let Some(name) = &a.with {
        s.companion = Some(companion(name, a, &s)?);
    }
    let w = &a.scale_out;
    if let Some(n) = w.workers {
        if s.failed_keys.is_some() {
            return Err(UsageError(
                "--failed-keys cannot be used with --workers: each worker's failed keys stay in its own process".into(),
            ));
        }
        let so = kvbench_run::scaleout::ScaleOut::new(n, w.spark_master.as_deref(), &w.spark_conf)?;
        so.check(&s)?;
        s.scale_out = Some(so);
    }
    Ok(s)
}

/// The settings `kvbench run ARGS` resolves to, by the same parser and code
/// as `run` itself; an error is clap's or run's first line. An experiment's
/// cells and `compare`'s are resolved here.
pub fn run_flags(args: Vec<String>) -> Result<RunSettings, UsageError> {
    let mut argv = vec!["kvbench".to_string(), "run".to_string()];
    argv.extend(args);
    let cli = crate::args::parse_from(&argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default();
        UsageError(first.trim_start_matches("error: ").to_string())
    })?;
    let crate::args::Command::Run(run) = cli.command else {
        return Err(UsageError("internal: a cell is not a `run` command".into()));
    };
    run_settings(&run)
}

/// Experiment cells resolved by [`run_flags`]; a Ctrl-C during a long
/// expansion leaves at once (nothing was run or stored).
pub struct RunFlags;

impl kvbench_experiment::Resolve for RunFlags {
    fn settings(&self, args: Vec<String>) -> Result<RunSettings, UsageError> {
        run_flags(args)
    }
    fn checkpoint(&self, what: &str) {
        crate::signals::leave_if_stopped(what);
    }
}

/// Resolves `--with` and its flags against the main group's settings: a
/// preset and `--with-property` overrides, operations of other kinds than
/// the main group's (so each group's results stay apart), a time-bound
/// window (a fixed operation count would end the groups at different times),
/// and a server kvbench starts (so its data can never land on someone's).
fn companion(name: &str, a: &RunArgs, s: &RunSettings) -> Result<CompanionSettings, UsageError> {
    let mut props = presets::find(name).map_err(|e| UsageError(format!("--with: {e}")))?;
    for o in &a.with_properties {
        props
            .apply_override(o)
            .map_err(|e| UsageError(format!("--with-property: {e}")))?;
    }
    let (mut spec, _) = WorkloadSpec::from_properties(&props)
        .map_err(|e| UsageError(format!("--with {name}: {e}")))?;
    spec.name = name.to_string();
    bounds::CLIENTS.check("--with-clients", a.with_clients.into())?;
    bounds::PIPELINE.check("--with-pipeline", a.with_pipeline.into())?;
    if !matches!(s.window, Window::Duration(_)) {
        return Err(UsageError(
            "--with needs --duration: both groups measure the same stretch of time".into(),
        ));
    }
    if s.target.is_some() || s.rate.is_some() {
        return Err(UsageError(
            "--with runs on servers kvbench starts, in closed loop (no --target, no --rate)".into(),
        ));
    }
    let main: Vec<OpKind> = s.spec.kinds().collect();
    if let Some(shared) = spec.kinds().find(|k| main.contains(k)) {
        return Err(UsageError(format!(
            "--with {name}: both groups would run {shared} operations; their results must stay \
             apart (e.g. a SET:GET workload with --with zunionstore)"
        )));
    }
    let properties = effective(&props);
    Ok(CompanionSettings {
        name: name.to_string(),
        spec,
        properties,
        clients: a.with_clients,
        pipeline: a.with_pipeline,
    })
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

/// `--threads` when not given, from `bench/threads/run` (docs/performance.md,
/// "Worker threads"): on 2 cores one thread beat two and four both in
/// throughput and in client CPU per operation, for a server kvbench started
/// and for a target on the same machine alike, because a second worker only
/// takes a core from the server. So: one per core kvbench may use when the
/// server is elsewhere, half of them when it shares this machine's cores
/// (a server kvbench starts, or a target on loopback), and never more than
/// the CPUs of `--client-cpus`. Servers placed with `--server-cpus` on CPUs
/// none of `--client-cpus` names share no core with the workers: one per
/// client CPU then, as for a server on another host (the many-core model,
/// docs/performance.md "Many cores").
pub fn default_threads(
    cores: u32,
    target: Option<&Target>,
    client_cpus: Option<&CpuList>,
    server_cpus: Option<&CpuList>,
) -> (u32, String) {
    let (usable, on) = match client_cpus {
        Some(list) => (list.0.len().max(1) as u32, "the CPUs of --client-cpus"),
        None => (cores.max(1), "the cores kvbench may use"),
    };
    if let (Some(c), Some(s)) = (client_cpus, server_cpus) {
        if c.0.is_disjoint(&s.0) {
            return (
                usable,
                format!("default: --server-cpus and --client-cpus share no CPU, so one per CPU of --client-cpus ({usable})"),
            );
        }
    }
    if shares_machine(target) {
        let t = (usable / 2).max(1);
        (
            t,
            format!("default: the server shares this machine's cores, so half of {on} ({usable}), at least 1 (bench/threads/run)"),
        )
    } else {
        (
            usable,
            format!("default: the server is on another host, so one per core of {on} ({usable})"),
        )
    }
}

/// Whether the server shares this machine: none given (kvbench starts it),
/// or a target whose every address is loopback.
fn shares_machine(target: Option<&Target>) -> bool {
    match target {
        None => true,
        Some(t) => t.addrs.iter().all(|a| a.ip().is_loopback()),
    }
}

#[cfg(test)]
mod thread_tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn a_server_on_this_machine_gets_half_the_cores_and_at_least_one() {
        for (cores, want) in [(1, 1), (2, 1), (3, 1), (8, 4)] {
            let (t, why) = default_threads(cores, None, None, None);
            assert_eq!(t, want, "{cores} cores");
            assert!(why.contains("shares this machine"), "{why}");
        }
        let one = CpuList(BTreeSet::from([1]));
        assert_eq!(default_threads(8, None, Some(&one), None).0, 1);
        let four = CpuList(BTreeSet::from([0, 1, 2, 3]));
        let (t, why) = default_threads(8, None, Some(&four), None);
        assert_eq!(t, 2);
        assert!(why.contains("--client-cpus"), "{why}");
    }

    #[test]
    fn a_server_placed_apart_from_the_workers_leaves_them_every_client_cpu() {
        let client = CpuList(BTreeSet::from([4, 5, 6, 7]));
        let apart = CpuList(BTreeSet::from([0, 1, 2, 3]));
        let (t, why) = default_threads(8, None, Some(&client), Some(&apart));
        assert_eq!(t, 4);
        assert!(why.contains("share no CPU"), "{why}");
        // One CPU in common: the server still competes for a worker's core.
        let overlapping = CpuList(BTreeSet::from([3, 4]));
        assert_eq!(
            default_threads(8, None, Some(&client), Some(&overlapping)).0,
            2
        );
        // --server-cpus alone says nothing of where the workers run.
        assert_eq!(default_threads(8, None, None, Some(&apart)).0, 4);
    }
}
