//! One cell, end to end: start the server, probe, load, probe, run, probe,
//! stop, judge, save. Whatever happens, the run is saved (as failed, with
//! its reason, when it did not finish) and the server is stopped.

use crate::cpus::CpuList;
use crate::deploy::{access, cleanup, new_network, start, CONNECT_TIMEOUT};
use crate::marks::{judge, load_shortfall};
use crate::record::{new_record, now_rfc3339};
use crate::reuse::{self, Kept, Reload, Sharing};
use crate::settings::RunSettings;
use crate::view::View;
use crate::window::{self, Edges};
use anyhow::{Context, Result};
use kvbench_engine::{EngineError, PhaseConfig, PhaseKind, PhaseOutput, Topology};
use kvbench_model::{Finding, OpKind, ReusedServer, RunRecord, RunStatus};
use kvbench_servers::{Deployment, Hosts, Network};
use kvbench_store::{CellTag, Store};
use std::cell::RefCell;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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
    live: &dyn View,
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

/// Runs the cell on a fresh deployment, or on `kept` (started and loaded
/// by an earlier cell: no start, no load). Returns the deployment still
/// running when `keep_key` asks for it and its data is intact, else stops it.
fn execute(
    s: &RunSettings,
    rec: &mut RunRecord,
    live: &dyn View,
    stop: &Arc<AtomicBool>,
    written: &RefCell<Vec<Range<u64>>>,
    kept: Option<Kept>,
    keep_key: Option<String>,
) -> Result<Option<Kept>> {
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
    describe(&*server, rec)?;
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

    let base = load_config(s, Topology::of(server.endpoints(), s.pool_hash));
    let mut intact = true;
    if !s.no_load && reused.is_none() {
        match load(s, rec, &*server, &base, live, written, stop)? {
            Load::Whole => {}
            Load::Short => intact = false,
            Load::Stopped => return Ok(None),
        }
    }
    let with_cfg = crate::companion::prepare(s, &base, reused.is_none(), stop)?;
    let run_cfg = run_config(s, base);
    // The machine's loopback floor just before the window (the canary).
    let base_rtt = kvbench_servers::canary::base_rtt(CANARY_PING);
    let view = live.phase(true);
    let clock = crate::inject::Clock::default();
    let edges = Edges::new(&*server, &*view, written, &clock);
    let measured = window::measure(
        s,
        network.as_ref(),
        &run_cfg,
        with_cfg.as_ref(),
        &edges,
        stop,
    );
    view.finish();
    let run = complete(s, measured, &edges, base_rtt)?;
    if let Some(path) = &s.failed_keys {
        crate::failed_keys::write(path, &run.recorder, rec);
    }
    let lost = server.lost_nodes();
    crate::marks::window(s, &run, &lost, rec);
    match server.probe("after_run") {
        Ok(p) => rec.probes.push(p),
        // The server is gone, or cannot be reached as the run's
        // connections could not: the run keeps what it measured (marked)
        // without a probe after it.
        Err(e) if !lost.is_empty() || run.cut_short.is_some() => rec.warnings.push(
            Finding::NoProbe {
                error: e.to_string().lines().next().unwrap_or_default().into(),
            }
            .into(),
        ),
        Err(e) => return Err(e).context("probe after run"),
    }
    rec.cpu = Some(edges.cost(&run, base_rtt));
    let unions = run
        .result
        .ops
        .iter()
        .any(|o| o.op == OpKind::Union && o.completed > 0);
    rec.run = Some(run.result);
    if unions && run.cut_short.is_none() {
        let cfg = match &with_cfg {
            Some(c) if c.spec.data_model.layout == kvbench_workload::Layout::SortedSets => c,
            _ => &run_cfg,
        };
        crate::unions::check(s.system, s.timeout, cfg, rec, live)?;
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

/// What the deployment says of itself, recorded with the run: its binary,
/// its settings, its name, version and allocator.
fn describe(server: &dyn Deployment, rec: &mut RunRecord) -> Result<()> {
    rec.config.server_binary = server.binary();
    rec.config.server_settings = server.settings();
    let version = server
        .version()
        .context("cannot read the server's version")?;
    rec.environment.server_name = version.name;
    rec.environment.server_version = version.version;
    rec.environment.server_allocator = version.allocator;
    Ok(())
}

/// The load phase's configuration, which the run phase's and the `--with`
/// group's start from.
fn load_config(s: &RunSettings, topology: Topology) -> PhaseConfig {
    PhaseConfig {
        topology,
        system: s.system,
        spec: s.spec.clone(),
        keys: s.spec.key_namer(),
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
    }
}

/// The measured window's configuration.
fn run_config(s: &RunSettings, base: PhaseConfig) -> PhaseConfig {
    PhaseConfig {
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
    }
}

/// How the load went.
enum Load {
    /// Every record was inserted.
    Whole,
    /// Some were not, and `--allow-incomplete-load` goes on to the window.
    Short,
    /// Some were not: the cell ends here, its load kept.
    Stopped,
}

/// The load phase, with the probe after it. A window over a partial data
/// set measures misses, not the workload, so a short load ends the cell
/// unless `--allow-incomplete-load`.
fn load(
    s: &RunSettings,
    rec: &mut RunRecord,
    server: &dyn Deployment,
    base: &PhaseConfig,
    live: &dyn View,
    written: &RefCell<Vec<Range<u64>>>,
    stop: &Arc<AtomicBool>,
) -> Result<Load> {
    // Recorded before the first insert: an interrupted load wrote some of them.
    written.borrow_mut().push(s.spec.load_range());
    let view = live.phase(false);
    let load = window::phase(s, base, &*view, None, stop);
    view.finish();
    let load = load?;
    let shortfall = load_shortfall(s, &load.result);
    rec.load = Some(load.result);
    rec.probes
        .push(server.probe("after_load").context("probe after load")?);
    Ok(match shortfall {
        None => Load::Whole,
        Some(_) if s.allow_incomplete_load => Load::Short,
        Some(why) => {
            rec.failure = Some(format!(
                "incomplete load: {why}; the run phase was skipped (--allow-incomplete-load runs it anyway)"
            ));
            Load::Stopped
        }
    })
}

/// The main group's output with what ran beside it: the faults caused, the
/// servers' time split (from their per-command counters at the edges), the
/// cache figures (`--max-memory`), and the `--with` group's results.
fn complete(
    s: &RunSettings,
    measured: window::Measured,
    edges: &Edges<'_>,
    base_rtt: Option<f64>,
) -> Result<PhaseOutput> {
    let mut run: PhaseOutput = measured.run?;
    run.result.faults = measured.faults;
    if let (Some(before), Some(after)) = edges.command_times() {
        let driver = kvbench_engine::driver::Driver::new(s.system, &s.spec, s.spec.key_namer());
        run.result.server_time = Some(kvbench_stats::server_time::split(
            &before,
            &after,
            &run.result,
            &|kind| driver.server_commands(kind),
            base_rtt,
        ));
    }
    if let (Some(samples), Some(mb)) = (measured.samples, crate::max_memory::mb(s)) {
        let servers = u64::from(s.topology.shards(s.nodes));
        run.result.cache = Some(kvbench_stats::cache::figures(
            &run.result,
            &samples,
            (mb << 20) * servers,
        ));
    }
    if let Some(with) = measured.with {
        let with = with.context("the --with group's run")?;
        // One process counts both groups in its own CPU; with workers the
        // group ran here, apart from theirs.
        if s.scale_out.is_some() {
            run.client_cpu_seconds += with.client_cpu_seconds;
        }
        crate::companion::merge(&mut run.result, with.result);
    }
    Ok(run)
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
