//! The measured window of one cell: the phase itself (here, or spread over
//! Spark workers), what is read exactly at its edges, and what runs beside
//! it (injected faults, the memory sampler, the `--with` group).

use crate::settings::RunSettings;
use crate::view::Phase;
use anyhow::{Context, Result};
use kvbench_engine::{
    run_phase, run_share, EngineError, PhaseConfig, PhaseKind, PhaseOutput, Share, Silent, Slice,
    StartAt,
};
use kvbench_model::{CommandTimes, CpuCost, InjectedFault};
use kvbench_servers::canary::Snapshot;
use kvbench_servers::{Deployment, Network};
use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// What the window measured, and what ran beside it.
pub struct Measured {
    /// The main group's phase.
    pub run: Result<PhaseOutput>,
    /// The `--with` group's phase, when there is one.
    pub with: Option<Result<PhaseOutput, EngineError>>,
    /// The faults caused during it, as they happened.
    pub faults: Vec<InjectedFault>,
    /// The memory sampler's seconds (`--max-memory`).
    pub samples: Option<Vec<kvbench_model::ServerSecond>>,
}

/// Runs the window on the deployment `edges` reads: the main group's phase, with the faults, the memory
/// sampler and the `--with` group on their own threads. With workers, the
/// `--with` group runs here and starts at the instant the workers agree
/// on, so both groups share warm-up and window.
pub fn measure(
    s: &RunSettings,
    network: Option<&Network>,
    run_cfg: &PhaseConfig,
    with_cfg: Option<&PhaseConfig>,
    edges: &Edges<'_>,
    stop: &Arc<AtomicBool>,
) -> Measured {
    let (server, clock) = (edges.server, edges.clock);
    let (start_tx, start_rx) = std::sync::mpsc::channel::<SystemTime>();
    let start_rx = Arc::new(Mutex::new(start_rx));
    std::thread::scope(|scope| {
        let faults = crate::inject::spawn_all(scope, server, network, &s.faults, clock);
        let sampler = s
            .max_memory
            .is_some()
            .then(|| crate::sampler::spawn(scope, server, clock));
        let with = with_cfg.map(|cfg| {
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
        let run = phase(s, run_cfg, edges, Some(&start_tx), stop);
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
        Measured {
            run,
            with,
            faults,
            samples,
        }
    })
}

/// One phase, in this process or, with `--workers`, spread over Spark
/// barrier tasks: the one place the per-cell sequence chooses.
/// `on_start` hears the workers' common start instant (for `--with`).
pub fn phase(
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

/// What is read exactly at the window's edges: the servers' CPU time,
/// the machine's counters (the noise canary), the servers' per-command
/// times; and the keys inserted, for the cleanup of a target.
pub struct Edges<'a> {
    server: &'a dyn Deployment,
    view: &'a dyn Phase,
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

impl kvbench_engine::Observer for Edges<'_> {
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

impl<'a> Edges<'a> {
    /// Edges to be read during the window `view` shows.
    pub fn new(
        server: &'a dyn Deployment,
        view: &'a dyn Phase,
        written: &'a RefCell<Vec<Range<u64>>>,
        clock: &'a crate::inject::Clock,
    ) -> Edges<'a> {
        Edges {
            server,
            view,
            start: Cell::new(None),
            end: Cell::new(None),
            machine: RefCell::new((None, None)),
            written,
            clock,
            times: RefCell::new((None, None)),
        }
    }

    /// The servers' per-command counters at the window's start and end.
    pub fn command_times(&self) -> (Option<CommandTimes>, Option<CommandTimes>) {
        self.times.borrow().clone()
    }

    /// The window's CPU cost: the servers' (from their CPU time at the
    /// edges) and kvbench's, per completed operation, and the canary.
    pub fn cost(&self, run: &PhaseOutput, base_rtt: Option<f64>) -> CpuCost {
        let completed = run.result.completed;
        let server_seconds = match (self.start.get(), self.end.get()) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        // Nothing completed: no cost per operation (0.00 would read as free).
        let per_op = |secs: f64| (completed > 0).then(|| secs * 1e6 / completed as f64);
        CpuCost {
            server_seconds,
            server_us_per_op: server_seconds.and_then(per_op),
            client_seconds: run.client_cpu_seconds,
            client_us_per_op: per_op(run.client_cpu_seconds),
            canary: match &*self.machine.borrow() {
                (Some(a), Some(b)) => Some(a.until(b, base_rtt)),
                _ => None,
            },
        }
    }
}
