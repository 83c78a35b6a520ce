//! One cell, end to end: start the server, probe, load, probe, run, probe,
//! stop, judge, save. Whatever happens, the run is saved (as failed, with
//! its reason, when it did not finish) and the server is stopped.

use crate::config::RunSettings;
use crate::cpus::CpuList;
use crate::deploy::{access, cleanup, new_network, start, CONNECT_TIMEOUT};
use crate::live::{Live, PhaseView};
use crate::marks::{cut_short, judge, load_shortfall, scale_out_marks, server_said};
use crate::reuse::{self, Kept, Reload, Sharing};
use crate::target::Target;
use anyhow::{Context, Result};
use kvbench_engine::{
    run_phase, run_share, EngineError, PhaseConfig, PhaseKind, PhaseOutput, Share, Silent, Slice,
    StartAt, Topology,
};
use kvbench_model::{
    CommandTimes, Companion, CpuCost, Environment, Finding, NetnsConfig, OpKind, OpResult,
    PhaseResult, ReusedServer, RunConfig, RunRecord, RunStatus, SystemKind,
};
use kvbench_servers::canary::Snapshot;
use kvbench_servers::{Deployment, Hosts, Network, TopologyKind};
use kvbench_store::{CellTag, Store};
use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// A worker thread busy this share of the window means kvbench itself may
/// have limited throughput.
const CLIENT_BOUND_SHARE: f64 = 0.9;

/// How long the canary's loopback ping-pong runs before each cell.
const CANARY_PING: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs one cell and saves it, with its experiment cell (`cell`) in the
/// same transaction when it has one. Returns the saved record (with its id).
///
/// # Errors
/// Only when the store cannot save; every other failure is saved as a failed run.
pub fn run_cell(
    s: &RunSettings,
    store: &mut Store,
    live: &Live,
    stop: &Arc<AtomicBool>,
    cell: Option<&CellTag>,
    sharing: Option<Sharing<'_>>,
) -> Result<RunRecord> {
    live.cell(s, cell.map(|c| (c.cell_index, c.iteration)));
    let mut rec = new_record(s);
    let written = RefCell::new(Vec::new());
    let (mut slot, mut kept, mut keep_key) = (None, None, None);
    if let Some(sh) = sharing {
        if sh.policy != Reload::PerRun {
            rec.config.reload = Some(sh.policy.to_string());
        }
        match sh.slot.take() {
            Some(k) if sh.key.as_deref() == Some(k.key.as_str()) => kept = Some(k),
            other => reuse::release(other),
        }
        keep_key = sh
            .key
            .filter(|_| sh.keep_after && reuse::leaves_dataset_intact(s));
        slot = Some(sh.slot);
    }
    let outcome = execute(s, &mut rec, live, stop, &written, kept, keep_key);
    if let (Some(t), true) = (&s.target, s.safety.cleanup) {
        cleanup(s, t, &written.into_inner(), &mut rec, live);
    }
    rec.finished_at = now_rfc3339();
    let kept = match outcome {
        Ok(kept) => {
            judge(s, &mut rec);
            // A window cut short (a signal, a dead server) did not finish:
            // a failed run, with what it measured kept beside the reason.
            if rec.failure.is_some() {
                rec.status = RunStatus::Failed;
            }
            kept
        }
        Err(e) => {
            rec.status = RunStatus::Failed;
            let interrupted = e
                .downcast_ref::<EngineError>()
                .is_some_and(|e| matches!(e, EngineError::Interrupted));
            rec.failure = Some(if interrupted {
                "interrupted by the user".to_string()
            } else {
                format!("{e:#}")
            });
            None
        }
    };
    let id = crate::unsaved::save(store, &rec, cell)?;
    rec.id = Some(id);
    if let (Some(slot), Some(mut k)) = (slot, kept) {
        k.loaded_by.get_or_insert(id);
        k.runs += 1;
        *slot = Some(k);
    }
    Ok(rec)
}

/// The configuration a run of `s` records before anything starts: every
/// setting the user chose or kvbench resolved. An experiment hashes it to
/// recognise the cell.
pub fn planned_config(s: &RunSettings) -> RunConfig {
    new_record(s).config
}

fn new_record(s: &RunSettings) -> RunRecord {
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
            pool_hash: (s.topology == TopologyKind::Pool).then(|| s.pool_hash.as_str().to_string()),
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

/// Runs the cell on a fresh deployment, or on `kept` (started and loaded
/// by an earlier cell: no start, no load). Returns the deployment still
/// running when `keep_key` asks for it and its data is intact, else stops it.
fn execute(
    s: &RunSettings,
    rec: &mut RunRecord,
    live: &Live,
    stop: &Arc<AtomicBool>,
    written: &RefCell<Vec<Range<u64>>>,
    kept: Option<Kept>,
    keep_key: Option<String>,
) -> Result<Option<Kept>> {
    let keys = s.spec.key_namer();
    let (network, reused, kept_server) = match kept {
        Some(k) => {
            rec.environment.reused_server = k.loaded_by.map(|id| ReusedServer {
                loaded_by_run: id,
                runs_before: k.runs,
            });
            rec.config.nodes = k.nodes;
            (k.network, Some((k.loaded_by, k.runs)), Some(k.server))
        }
        None => (new_network(s)?, None, None),
    };
    // Declared before the deployment, so that on an early return the servers
    // stop first, then this thread leaves the client namespace, then the
    // namespaces go (see kvbench_servers::netns).
    let in_client = network.as_ref().map(Network::enter_client).transpose()?;
    let server: Box<dyn Deployment> = match kept_server {
        Some(server) => server,
        None => {
            let hosts = network.as_ref().map_or(Hosts::Loopback, Hosts::Network);
            let server = start(s, rec, hosts)?;
            if let Some(cpus) = &s.server_cpus {
                for pid in server.pids() {
                    cpus.place_process(pid)
                        .map_err(|e| anyhow::anyhow!("--server-cpus {cpus}: {e}"))?;
                }
            }
            server
        }
    };
    // Worker threads start inside the phases and inherit this placement.
    let _placed = s.client_cpus.as_ref().map(CpuList::place_this_thread);
    let topology = Topology::of(server.endpoints(), s.pool_hash);
    rec.config.server_binary = server.binary();
    rec.config.server_settings = server.settings();
    let version = server
        .version()
        .context("cannot read the server's version")?;
    rec.environment.server_name = version.name;
    rec.environment.server_version = version.version;
    rec.environment.server_allocator = version.allocator;
    if reused.is_none() {
        let before = server.probe("before_load").context("probe before load")?;
        let no_room = crate::max_memory::no_room(s, &before);
        rec.probes.push(before);
        if let Some(why) = no_room {
            rec.failure = Some(why);
            return Ok(None);
        }
    } else {
        rec.probes
            .push(server.probe("before_run").context("probe before run")?);
    }

    let base = PhaseConfig {
        topology,
        system: s.system,
        spec: s.spec.clone(),
        keys,
        kind: PhaseKind::Load,
        clients: s.load_clients,
        pipeline: s.load_pipeline,
        threads: s.threads,
        seed: s.seed,
        timeout: s.timeout,
        connect_timeout: CONNECT_TIMEOUT,
        reconnect: reconnect(s),
        retry: s.retry,
        stall: s.stall,
        access: access(s),
        io: s.io,
    };
    let mut intact = true;
    if !s.no_load && reused.is_none() {
        // Recorded before the first insert: an interrupted load wrote some of them.
        written.borrow_mut().push(s.spec.load_range());
        let view = live.phase(false);
        let load = phase(s, &base, &view, None, stop);
        view.finish();
        let load = load?;
        let shortfall = load_shortfall(s, &load.result);
        intact = shortfall.is_none();
        rec.load = Some(load.result);
        rec.probes
            .push(server.probe("after_load").context("probe after load")?);
        if let (Some(why), false) = (shortfall, s.allow_incomplete_load) {
            // A window over a partial data set measures misses, not the
            // workload: the cell ends here, its load kept.
            rec.failure = Some(format!(
                "incomplete load: {why}; the run phase was skipped (--allow-incomplete-load runs it anyway)"
            ));
            return Ok(None);
        }
    }

    // `--with`: the second group's data set, loaded after the main one
    // (its keys never meet the main group's), and its run configuration.
    let companion_cfg = match &s.companion {
        Some(c) => {
            let cfg = PhaseConfig {
                spec: c.spec.clone(),
                keys: c.spec.key_namer(),
                ..base.clone()
            };
            if reused.is_none() {
                let load = run_phase(&cfg, &Silent, stop).context("the --with group's load")?;
                if load.result.errors > 0 {
                    anyhow::bail!("the --with group's load had {} errors", load.result.errors);
                }
            }
            Some(PhaseConfig {
                kind: PhaseKind::Run {
                    warmup: s.warmup,
                    window: s.window,
                    rate: None,
                },
                clients: c.clients,
                pipeline: c.pipeline,
                ..cfg
            })
        }
        None => None,
    };

    let run_cfg = PhaseConfig {
        kind: PhaseKind::Run {
            warmup: s.warmup,
            window: s.window,
            rate: s.rate,
        },
        clients: s.clients,
        pipeline: s.pipeline,
        // Failed keys are the measured window's: the load keeps none.
        retry: kvbench_engine::Retry {
            keep_failed_keys: s.failed_keys.is_some(),
            ..s.retry
        },
        ..base
    };
    // The machine's loopback floor just before the window (the canary).
    let base_rtt = kvbench_servers::canary::base_rtt(CANARY_PING);
    let view = live.phase(true);
    let clock = crate::inject::Clock::default();
    let edges = WindowCpu {
        server: &*server,
        view: &view,
        start: Cell::new(None),
        end: Cell::new(None),
        machine: RefCell::new((None, None)),
        written,
        clock: &clock,
        times: RefCell::new((None, None)),
    };
    // With workers, the --with group runs here and starts at the instant
    // the workers agree on, so both groups share warm-up and window.
    let (start_tx, start_rx) = std::sync::mpsc::channel::<SystemTime>();
    let start_rx = Arc::new(Mutex::new(start_rx));
    let (run, with, faults, samples) = std::thread::scope(|scope| {
        let faults = crate::inject::spawn_all(scope, &*server, network.as_ref(), &s.faults, &clock);
        let sampler = s
            .max_memory
            .is_some()
            .then(|| crate::sampler::spawn(scope, &*server, &clock));
        let with = companion_cfg.as_ref().map(|cfg| {
            let start_rx = start_rx.clone();
            scope.spawn(move || match s.scale_out {
                None => run_phase(cfg, &Silent, stop),
                Some(_) => {
                    let start = StartAt::Signalled(Arc::new(move || {
                        let rx = start_rx.lock().unwrap_or_else(|p| p.into_inner());
                        rx.recv()
                            .map_err(|_| "the workers never started".to_string())
                    }));
                    let share = Share {
                        slice: Slice::WHOLE,
                        start,
                    };
                    run_share(cfg, &share, &Silent, stop)
                }
            })
        });
        let run = phase(s, &run_cfg, &edges, Some(&start_tx), stop);
        // The workers' job is over: a group still waiting for their start
        // learns it never comes.
        drop(start_tx);
        clock.over();
        let with = with.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(EngineError::Config("the --with group panicked".into())))
        });
        // A fault under way (a restart) is waited for: the server is
        // probed next.
        let faults: Vec<_> = faults.into_iter().filter_map(|h| h.join().ok()).collect();
        let samples = sampler.and_then(|h| h.join().ok());
        (run, with, faults, samples)
    });
    view.finish();
    let mut run: PhaseOutput = run?;
    if !faults.is_empty() {
        rec.marks.push(
            Finding::Fault {
                faults: faults.clone(),
            }
            .into(),
        );
    }
    run.result.faults = faults;
    if let (Some(before), Some(after)) = &*edges.times.borrow() {
        let driver = kvbench_engine::driver::Driver::new(s.system, &s.spec, s.spec.key_namer());
        run.result.server_time = Some(kvbench_stats::server_time::split(
            before,
            after,
            &run.result,
            &|kind| driver.server_commands(kind),
            base_rtt,
        ));
    }
    if let (Some(samples), Some(mb)) = (samples, crate::max_memory::mb(s)) {
        let servers = u64::from(s.topology.shards(s.nodes));
        run.result.cache = Some(kvbench_stats::cache::figures(
            &run.result,
            &samples,
            (mb << 20) * servers,
        ));
    }
    if let Some(with) = with {
        let with = with.context("the --with group's run")?;
        // One process counts both groups in its own CPU; with workers the
        // group ran here, apart from theirs.
        if s.scale_out.is_some() {
            run.client_cpu_seconds += with.client_cpu_seconds;
        }
        merge_group(&mut run.result, with.result);
    }
    if let Some(path) = &s.failed_keys {
        write_failed_keys(path, &run.recorder, rec);
    }
    let completed = run.result.completed;
    let lost = server.lost_nodes();
    if !lost.is_empty() {
        rec.marks.push(
            Finding::NodeDown {
                nodes: lost.clone(),
            }
            .into(),
        );
    }
    if let Some(why) = run.cut_short {
        let (text, mark) = cut_short(why, &run, s, &lost);
        rec.failure = Some(text);
        rec.marks.push(mark);
    }
    if run.recorder.stalls > 0 {
        rec.marks.push(
            Finding::Stall {
                stalls: run.recorder.stalls,
                bound_s: s.stall.as_secs_f64(),
                longest_s: run.recorder.longest_stall_ns as f64 / 1e9,
            }
            .into(),
        );
    }
    match server.probe("after_run") {
        Ok(p) => rec.probes.push(p),
        // The server is gone, or cannot be reached as the run's
        // connections could not: the run keeps what it measured (marked
        // above) without a probe after it.
        Err(e) if !lost.is_empty() || run.cut_short.is_some() => rec.warnings.push(
            Finding::NoProbe {
                error: e.to_string().lines().next().unwrap_or_default().into(),
            }
            .into(),
        ),
        Err(e) => return Err(e).context("probe after run"),
    }
    let server_seconds = match (edges.start.get(), edges.end.get()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    // Nothing completed: no cost per operation (0.00 would read as free).
    let per_op = |secs: f64| (completed > 0).then(|| secs * 1e6 / completed as f64);
    rec.cpu = Some(CpuCost {
        server_seconds,
        server_us_per_op: server_seconds.and_then(per_op),
        client_seconds: run.client_cpu_seconds,
        client_us_per_op: per_op(run.client_cpu_seconds),
        canary: match &*edges.machine.borrow() {
            (Some(a), Some(b)) => Some(a.until(b, base_rtt)),
            _ => None,
        },
    });
    // A worker thread that was busy nearly all the window may have been the
    // bottleneck; the numbers are still what was measured, so this is a
    // warning in the record, not a reason to call the run invalid.
    if let Some((worker, busy)) = run
        .worker_busy
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
    {
        if *busy >= CLIENT_BOUND_SHARE {
            rec.warnings.push(
                Finding::ClientBound {
                    worker,
                    busy: *busy,
                }
                .into(),
            );
        }
    }
    if let Some(why) = &run.overloaded {
        rec.marks.push(why.clone().into());
    }
    if run.recorder.clamped > 0 {
        rec.warnings.push(
            Finding::Clamped {
                latencies: run.recorder.clamped,
                limit_s: kvbench_engine::recorder::MAX_LATENCY_NS as f64 / 1e9,
            }
            .into(),
        );
    }
    if run.result.reconnects > 0 {
        rec.marks.push(
            Finding::Reconnects {
                reconnects: run.result.reconnects,
            }
            .into(),
        );
    }
    if run.recorder.failed_connections > 0 {
        rec.marks.push(
            Finding::ConnectionFailures {
                failed: run.recorder.failed_connections,
                of: run.recorder.connections,
                server_said: server_said(&run.result),
            }
            .into(),
        );
    }
    let unions = run
        .result
        .ops
        .iter()
        .any(|o| o.op == OpKind::Union && o.completed > 0);
    if let Some(so) = &run.result.scale_out {
        scale_out_marks(so, run.result.duration_s, rec);
    }
    rec.run = Some(run.result);
    if unions && run.cut_short.is_none() {
        let cfg = match &companion_cfg {
            Some(c) if c.spec.data_model.layout == kvbench_workload::Layout::SortedSets => c,
            _ => &run_cfg,
        };
        check_unions(s.system, s.timeout, cfg, rec, live)?;
    }
    drop(in_client);
    if let Some(key) = keep_key.filter(|_| intact && lost.is_empty() && run.cut_short.is_none()) {
        let (loaded_by, runs) = reused.unwrap_or((None, 0));
        return Ok(Some(Kept {
            key,
            server,
            network,
            loaded_by,
            runs,
            nodes: rec.config.nodes,
        }));
    }
    server.stop().context("cannot stop the server cleanly")?;
    if let Some(n) = network {
        n.remove().context("cannot remove the network namespaces")?;
    }
    Ok(None)
}

/// One phase, in this process or, with `--workers`, spread over Spark
/// barrier tasks: the one place the per-cell sequence chooses.
/// `on_start` hears the workers' common start instant (for `--with`).
fn phase(
    s: &RunSettings,
    cfg: &PhaseConfig,
    observer: &dyn kvbench_engine::Observer,
    on_start: Option<&std::sync::mpsc::Sender<SystemTime>>,
    stop: &Arc<AtomicBool>,
) -> Result<PhaseOutput> {
    match &s.scale_out {
        Some(so) => {
            let job = crate::scaleout::spark::JobInputs {
                properties: &s.properties,
                tls: s.target.as_ref().and_then(|t| t.tls_material.as_ref()),
                on_start,
            };
            let out = crate::scaleout::spark::run_phase(cfg, &job, so, observer, stop);
            // A spread load's failures name the phase (a worker's message
            // alone would read as the measured run's).
            match cfg.kind {
                PhaseKind::Load => out.context("the load"),
                PhaseKind::Run { .. } => out,
            }
        }
        None => Ok(run_phase(cfg, observer, stop)?),
    }
}

/// After a `ZUNIONSTORE` run: reads a sample of the destinations back and
/// fails the run (its measurements kept) when one is not the union it must
/// be; a sample that finds nothing to read is a warning.
fn check_unions(
    system: SystemKind,
    timeout: Duration,
    cfg: &PhaseConfig,
    rec: &mut RunRecord,
    live: &Live,
) -> Result<()> {
    let job = kvbench_engine::union_check::UnionCheck {
        topology: &cfg.topology,
        system,
        spec: &cfg.spec,
        access: &cfg.access,
        timeout,
        clients: cfg.clients,
    };
    let done = kvbench_engine::union_check::check_unions(&job)
        .map_err(|e| anyhow::anyhow!("a ZUNIONSTORE result is wrong: {e}"))?;
    if done.checked == 0 {
        rec.warnings.push(Finding::UnionsUnchecked.into());
    } else if !live.quiet() {
        live.println(&format!(
            "unions: {} destinations read back, each the expected union (members and summed scores)",
            done.checked
        ));
    }
    Ok(())
}

/// Adds the `--with` group's results to the main group's: its operations
/// (of other kinds, checked up front) with their histograms and seconds,
/// and its totals. The window is the main group's; both groups started
/// together and ran for the same duration.
fn merge_group(main: &mut PhaseResult, with: PhaseResult) {
    main.completed += with.completed;
    main.errors += with.errors;
    main.throughput += with.throughput;
    main.ops
        .extend(with.ops.into_iter().map(|o| OpResult { with: true, ..o }));
    main.series.extend(with.series);
    main.series.sort_by_key(|p| (p.second, p.op));
    for (kind, n) in with.errors_by_kind {
        match main.errors_by_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, m)) => *m += n,
            None => main.errors_by_kind.push((kind, n)),
        }
    }
    main.error_samples.extend(with.error_samples);
    main.redirects_moved += with.redirects_moved;
    main.redirects_ask += with.redirects_ask;
    main.retries += with.retries;
    main.reconnects += with.reconnects;
    // The outage stays the main group's: the other group's steps are kept
    // only when it had failures, and without its completions they cannot
    // be added to the main group's.
}

/// How the phase reopens lost connections: those to a server kvbench did
/// not start (a `--target`, which its owner may restart or fail over) as
/// `--reconnect-backoff` says; those to kvbench's own servers never, since
/// they do not restart by themselves: a lost connection to one is a dead
/// node, which ends a single server's run at once, partial. Unless
/// kvbench itself restarts or fails them over (`--fault`), or retries are
/// asked for (sent again on a reopened connection, whoever started the
/// server).
fn reconnect(s: &RunSettings) -> Option<kvbench_engine::Backoff> {
    s.reconnect
        .filter(|_| s.target.is_some() || s.retry.max > 0 || !s.faults.is_empty())
}

/// `--failed-keys`: writes the keys of the window's measured requests that
/// finally failed, one per line (atomically: a reader never sees half a
/// file). A file that cannot be written is a warning on the run, which is
/// kept either way.
fn write_failed_keys(
    path: &std::path::Path,
    r: &kvbench_engine::recorder::Recorder,
    rec: &mut RunRecord,
) {
    let keys = r.failed_keys.as_deref().unwrap_or_default();
    let mut bytes = Vec::with_capacity(keys.iter().map(|k| k.len() + 1).sum());
    for k in keys {
        bytes.extend_from_slice(k);
        bytes.push(b'\n');
    }
    match crate::atomic::write_atomic(path, &bytes) {
        Ok(()) => {
            let more = match r.failed_keys_dropped {
                0 => String::new(),
                n => format!(" (and {n} more, not written: the file keeps at most 1,000,000)"),
            };
            eprintln!(
                "note: {} failed keys written to {}{more}",
                keys.len(),
                path.display()
            );
        }
        Err(e) => rec.warnings.push(
            Finding::FailedKeys {
                path: path.display().to_string(),
                error: format!("{e:#}"),
            }
            .into(),
        ),
    }
}

/// Probes the server's CPU time exactly at the window's edges.
struct WindowCpu<'a> {
    server: &'a dyn Deployment,
    view: &'a PhaseView<'a>,
    start: Cell<Option<f64>>,
    end: Cell<Option<f64>>,
    /// The machine's counters at the window's edges (the noise canary).
    machine: RefCell<(Option<Snapshot>, Option<Snapshot>)>,
    written: &'a RefCell<Vec<Range<u64>>>,
    /// When `--fault`s are due.
    clock: &'a crate::inject::Clock,
    /// The servers' per-command counters at the window's edges.
    times: RefCell<(Option<CommandTimes>, Option<CommandTimes>)>,
}

impl kvbench_engine::Observer for WindowCpu<'_> {
    fn started(&self) {
        self.view.started();
    }
    fn window_started(&self) {
        self.clock.window_started();
        self.start.set(self.server.cpu_seconds());
        self.machine.borrow_mut().0 = Some(Snapshot::take(&self.server.pids()));
        self.times.borrow_mut().0 = self.server.command_times();
        self.view.window_started();
    }
    fn progress(&self, p: &kvbench_engine::Progress) {
        self.view.progress(p);
    }
    fn second(&self, s: &kvbench_engine::SecondStats) {
        self.view.second(s);
    }
    fn finished(&self) {
        self.end.set(self.server.cpu_seconds());
        self.machine.borrow_mut().1 = Some(Snapshot::take(&self.server.pids()));
        self.times.borrow_mut().1 = self.server.command_times();
    }
    fn inserts_issued(&self, keys: Range<u64>) {
        if !keys.is_empty() {
            self.written.borrow_mut().push(keys);
        }
    }
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}
