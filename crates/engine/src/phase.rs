//! Runs one phase (load, or warm-up plus measured window) across worker
//! threads and merges what they measured.
//!
//! Each worker thread runs its own single-threaded tokio runtime and owns its
//! connections and its recorder: nothing is shared per request across
//! threads. All connections are opened before any request is sent, and all
//! workers start from one common instant, so the warm-up and the window are
//! the same for every connection.

use crate::client::{Client, Limit, Source};
use crate::conn;
use crate::cpu::{process_cpu_seconds, thread_cpu_seconds};
use crate::driver::aerospike::Model;
use crate::driver::Driver;
use crate::events::{Observer, Progress};
use crate::library;
use crate::recorder::LagTrend;
use crate::recorder::Recorder;
use crate::reopen::{Backoff, Reopener};
use crate::retry::Retry;
use crate::route::{Router, Topology};
use crate::schedule::{Arrival, Schedule};
use crate::series::{LiveMsg, LiveSeconds, LiveSink, SeriesRecorder};
use crate::share::{Share, Slice};
use crate::uring;
use crate::EngineError;
use kvbench_connect::{Access, AsyncStream};
use kvbench_model::mark::Overload;
use kvbench_model::{Finding, PhaseResult, SystemKind};
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::{client_rngs, purpose_seed, InsertSpace, Workload, WorkloadSpec};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Barrier, OnceLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// Seed purposes: the load phase's values and the run phase's operations
/// come from unrelated streams of the same master seed.
const SEED_LOAD: u64 = 1;
const SEED_RUN: u64 = 2;
const SEED_SCHEDULE: u64 = 3;
/// Below this share of the offered rate an open-loop run is overloaded.
const MIN_ACHIEVED_SHARE: f64 = 0.97;
/// How often the coordinator reports progress.
const TICK: Duration = Duration::from_millis(100);
/// The default stall threshold: a server that stops answering for a
/// second is not measured at its steady state, whatever the averages say.
pub const DEFAULT_STALL: Duration = Duration::from_secs(1);

/// How long the measured window lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Window {
    /// Until this many operations have been sent and answered, split evenly
    /// across clients (as YCSB splits `operationcount` across threads).
    Operations(u64),
    /// For this long; replies that arrive after the window are not counted.
    Duration(Duration),
}

/// Which phase to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PhaseKind {
    /// Insert every record once, as fast as the server allows.
    Load,
    /// Run the workload's mix: `warmup` uncounted, then the window.
    Run {
        /// Uncounted lead-in.
        warmup: Duration,
        /// The measured window.
        window: Window,
        /// `Some` for open loop: requests follow a schedule at this rate.
        rate: Option<Rate>,
    },
}

/// Which I/O loop drives the connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// tokio (epoll): one `write` and one `read` per batch per connection.
    Tokio,
    /// io_uring: every connection of a worker through one ring, one system
    /// call per loop; closed loop only (open-loop runs use tokio).
    Uring,
}

impl Io {
    /// The best loop this machine offers: io_uring when the kernel allows it.
    pub fn auto() -> Io {
        if crate::uring::available() {
            Io::Uring
        } else {
            Io::Tokio
        }
    }

    /// The name used on the command line and in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            Io::Tokio => "tokio",
            Io::Uring => "uring",
        }
    }
}

/// The names of [`Io::as_str`], as a stored configuration or a worker's
/// task spells them.
impl std::str::FromStr for Io {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        [Io::Tokio, Io::Uring]
            .into_iter()
            .find(|io| io.as_str() == s)
            .ok_or_else(|| format!("\"{s}\" is not uring or tokio"))
    }
}

/// An open-loop schedule for the whole phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Total operations per second, split evenly across connections.
    pub ops_per_s: f64,
    /// Fixed or Poisson gaps.
    pub arrival: Arrival,
}

/// Everything one phase needs.
#[derive(Debug, Clone)]
pub struct PhaseConfig {
    /// Where the target's nodes are.
    pub topology: Topology,
    /// Server kind (selects the data model and protocol).
    pub system: SystemKind,
    /// The workload.
    pub spec: WorkloadSpec,
    /// Key naming (hashed or ordered, padding).
    pub keys: KeyNamer,
    /// Load or run.
    pub kind: PhaseKind,
    /// Connections.
    pub clients: u32,
    /// Requests in flight per connection.
    pub pipeline: u32,
    /// Worker threads (capped at the number of clients).
    pub threads: u32,
    /// Master seed.
    pub seed: u64,
    /// A request without a reply for this long fails its connection.
    pub timeout: Duration,
    /// Connection set-up limit.
    pub connect_timeout: Duration,
    /// How a lost connection is opened again (`None`: it is not; its node's
    /// requests fail from then on). See `reopen.rs`.
    pub reconnect: Option<Backoff>,
    /// How failed requests are retried (`retry.rs`; by default never).
    pub retry: Retry,
    /// A connection with requests outstanding and no reply for longer
    /// than this is a stall (counted in the recorder; zero counts none).
    pub stall: Duration,
    /// How every connection is opened (TLS, AUTH, SELECT).
    pub access: Arc<Access>,
    /// The I/O loop.
    pub io: Io,
}

/// What a phase measured.
#[derive(Debug, Clone)]
pub struct PhaseOutput {
    /// The stored form.
    pub result: PhaseResult,
    /// Raw merged measurements (for time series and checks).
    pub recorder: Recorder,
    /// kvbench's CPU seconds during the window.
    pub client_cpu_seconds: f64,
    /// Each worker thread's CPU time over the window, as a share of the window (0..1).
    pub worker_busy: Vec<f64>,
    /// Open loop: why the schedule was not kept, when it was not.
    pub overloaded: Option<Finding>,
    /// Why the window ended before its end, when it did: what was measured
    /// until then is here, over the time the window really lasted.
    pub cut_short: Option<CutShort>,
    /// The wall-clock time at the common start (warm-up included), read when
    /// the clients were released: what scale-out compares across processes.
    pub started_wall: SystemTime,
}

/// Why a run phase's window ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutShort {
    /// The stop flag was set (a signal) after the window had begun.
    Interrupted,
    /// Every connection failed (the server died or closed them): no
    /// client had anything left to send on.
    ConnectionsLost,
}

struct Shared {
    barrier: Barrier,
    start: OnceLock<Instant>,
    /// The wall clock at the start, and why there was none (the start
    /// signal failed).
    start_wall: OnceLock<Result<SystemTime, String>>,
    connect_failed: AtomicBool,
}

/// The operations a one-client run phase of `spec` seeded `seed` sends to
/// `system`, in order, drawn as [`run_phase`] draws them (each request's
/// values come from the same generator as the next operation, so they are
/// drawn too): what an offline replay of a run needs, such as a cache's hit
/// ratio against an exact LRU's on the same keys.
///
/// # Errors
/// The spec's own error, as the phase would report it.
pub fn replay(system: SystemKind, spec: &WorkloadSpec, seed: u64) -> Result<Replay, EngineError> {
    let config = |e: kvbench_workload::SpecError| EngineError::Config(e.to_string());
    let mut workload = Workload::new(spec).map_err(config)?;
    workload.set_space(InsertSpace::of_worker(spec.record_count, 0));
    let rng = client_rngs(purpose_seed(seed, SEED_RUN), 1)
        .into_iter()
        .next()
        .ok_or_else(|| EngineError::Config("no client to replay".into()))?;
    Ok(Replay {
        stream: workload.client_stream(rng, 0, 1).map_err(config)?,
        driver: Driver::new(system, spec, spec.key_namer()),
        key: Vec::new(),
        request: Vec::new(),
    })
}

/// A one-client run's operations, in order (see [`replay`]).
pub struct Replay {
    stream: kvbench_workload::OpStream,
    driver: Driver,
    key: Vec<u8>,
    request: Vec<u8>,
}

impl Iterator for Replay {
    type Item = kvbench_workload::Op;
    fn next(&mut self) -> Option<Self::Item> {
        let op = self.stream.next_op();
        self.driver.write_key(&op, &mut self.key);
        self.request.clear();
        self.driver
            .encode_first(&op, self.stream.rng(), &self.key, &mut self.request);
        Some(op)
    }
}

/// Runs one phase to completion.
///
/// # Errors
/// [`EngineError::Connect`] when a connection cannot be opened (nothing is
/// sent then), [`EngineError::Interrupted`] when `stop` was set, or
/// [`EngineError::Config`] for impossible settings.
pub fn run_phase(
    cfg: &PhaseConfig,
    observer: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<PhaseOutput, EngineError> {
    run_share(cfg, &Share::default(), observer, stop)
}

/// [`run_phase`] for this process's `share` of the clients, started when the
/// share says: the clients outside the slice are left to other processes,
/// and the ones inside keep the seeds, key slices, quotas and schedules they
/// have when one process runs them all. Inserts are the exception: no
/// counter is shared between processes, so slice `I` inserts into a block
/// of its own ([`InsertSpace::of_worker`]).
///
/// # Errors
/// As [`run_phase`]; also [`EngineError::Config`] for a slice without
/// clients or a failed start signal.
pub fn run_share(
    cfg: &PhaseConfig,
    share: &Share,
    observer: &dyn Observer,
    stop: &Arc<AtomicBool>,
) -> Result<PhaseOutput, EngineError> {
    let shape = Shape::of(cfg, share.slice)?;
    let Shape {
        clients,
        threads,
        warmup,
        window,
        rate,
        ..
    } = shape;
    let Dealt {
        per_worker,
        expected,
        insert_counter,
    } = deal(cfg, share.slice, threads, window, rate)?;

    let shared = Arc::new(Shared {
        barrier: Barrier::new(threads),
        start: OnceLock::new(),
        start_wall: OnceLock::new(),
        connect_failed: AtomicBool::new(false),
    });
    let counters: Vec<Arc<AtomicU64>> = (0..threads).map(|_| Arc::new(AtomicU64::new(0))).collect();
    // Each worker sends its finished seconds here (the live view).
    let (live_tx, live_rx) = mpsc::channel();
    let Reach {
        driver,
        library,
        nodes,
        router,
    } = Reach::of(cfg)?;

    let mut handles = Vec::with_capacity(threads);
    for (w, sources) in per_worker.into_iter().enumerate() {
        let job = WorkerJob {
            nodes: nodes.clone(),
            router: router.clone(),
            driver: driver.clone(),
            sources,
            pipeline: cfg.pipeline as usize,
            warmup,
            window,
            clients,
            timeout: cfg.timeout,
            connect_timeout: cfg.connect_timeout,
            reconnect: cfg.reconnect,
            retry: cfg.retry,
            stall: cfg.stall,
            access: cfg.access.clone(),
            io: cfg.io,
            start_at: share.start.clone(),
            library: library.clone(),
            progress: counters[w].clone(),
            live: (w, live_tx.clone()),
            stop: stop.clone(),
            shared: shared.clone(),
        };
        let h = thread::Builder::new()
            .name(format!("kvbench-worker-{w}"))
            .spawn(move || job.run())
            .map_err(|e| EngineError::Config(format!("cannot start worker thread: {e}")))?;
        handles.push(h);
    }

    let edges = Edges {
        warmup,
        window,
        expected,
    };
    let Coordinated {
        start,
        cpu_at_start,
        cpu_at_end,
        mut live,
        ended_at,
    } = coordinate(
        &shared,
        &handles,
        &counters,
        (live_rx, threads),
        edges,
        observer,
    );
    let Joined {
        merged,
        first_error,
        mut series,
        worker_busy,
    } = join(handles);
    let interrupted = stop.load(Ordering::Relaxed);
    let cut_short = edges.cut_short(start, interrupted, ended_at, &merged);
    if let (Some(start), Some(live)) = (start, live.as_mut()) {
        for second in live.rest(edges.window_len(start, cut_short, &merged, ended_at)) {
            observer.second(&second);
        }
    }
    if let Some((c, space)) = insert_counter {
        let issued = c.issued_until();
        if issued > cfg.spec.record_count {
            observer.inserts_issued(space.record(cfg.spec.record_count)..space.record(issued));
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let Some(start) = start else {
        return Err(EngineError::Config("no worker started".into()));
    };
    let started_wall = match shared.start_wall.get() {
        Some(Ok(t)) => *t,
        Some(Err(why)) => return Err(EngineError::Config(why.clone())),
        None => SystemTime::now(),
    };
    if interrupted && cut_short.is_none() {
        return Err(EngineError::Interrupted);
    }
    let window_len = edges.window_len(start, cut_short, &merged, ended_at);
    let mut result = merged.to_phase_result(window_len.as_secs_f64());
    result.series = SeriesRecorder::merge(&mut series);
    // A cluster's list includes the nodes that joined while it ran.
    let nodes = match &router {
        Router::Cluster(t) => t.all_nodes(),
        _ => nodes,
    };
    let overloaded = shape.complete(cfg, &mut result, &merged, &nodes);
    Ok(PhaseOutput {
        result,
        recorder: merged,
        client_cpu_seconds: cpu_at_end.unwrap_or(cpu_at_start) - cpu_at_start,
        worker_busy,
        overloaded,
        cut_short,
        started_wall,
    })
}

/// What the phase's requests go through: the driver, and either a client
/// library (Aerospike's, which finds the nodes itself) or the nodes and
/// the router kvbench's own connections use.
struct Reach {
    driver: Driver,
    library: Option<LibraryJob>,
    nodes: Vec<SocketAddr>,
    router: Router,
}

impl Reach {
    fn of(cfg: &PhaseConfig) -> Result<Reach, EngineError> {
        let driver = Driver::new(cfg.system, &cfg.spec, cfg.keys.clone());
        let library = if cfg.system.protocol().through_library() {
            Some(LibraryJob::new(cfg, &driver)?)
        } else {
            None
        };
        let (nodes, router) = match &library {
            // The library finds the cluster's nodes and partitions itself.
            Some(_) => (Vec::new(), Router::Single),
            None => crate::route::connect_plan(
                &cfg.topology,
                &driver,
                &cfg.access,
                cfg.connect_timeout,
            )?,
        };
        // Failovers are followed while the phase runs (the watcher ends with it).
        if let Some(s) = router.follows() {
            s.watch().map_err(|e| {
                EngineError::Config(format!("cannot start the Sentinel watcher: {e}"))
            })?;
        }
        Ok(Reach {
            driver,
            library,
            nodes,
            router,
        })
    }
}

/// What a phase's configuration makes of one share, checked before
/// anything starts.
#[derive(Clone, Copy)]
struct Shape {
    /// Clients of the whole phase, over every share.
    clients: usize,
    /// This share's clients.
    mine: usize,
    threads: usize,
    warmup: Duration,
    window: Option<Window>,
    rate: Option<Rate>,
}

impl Shape {
    fn of(cfg: &PhaseConfig, slice: Slice) -> Result<Shape, EngineError> {
        if cfg.clients == 0 {
            return Err(EngineError::Config("clients must be at least 1".into()));
        }
        if cfg.pipeline == 0 {
            return Err(EngineError::Config("pipeline must be at least 1".into()));
        }
        let clients = cfg.clients as usize;
        let mine = slice.clients_of(cfg.clients) as usize;
        if mine == 0 {
            return Err(EngineError::Config(format!(
                "worker {slice} has none of the {clients} clients: use at most as many workers as clients"
            )));
        }
        let (warmup, window, rate) = match cfg.kind {
            PhaseKind::Load => (Duration::ZERO, None, None),
            PhaseKind::Run {
                warmup,
                window,
                rate,
            } => (warmup, Some(window), rate),
        };
        if let Some(r) = rate {
            if !(r.ops_per_s.is_finite() && r.ops_per_s > 0.0) {
                return Err(EngineError::Config(
                    "rate must be a positive number of operations per second".into(),
                ));
            }
        }
        crate::limits::ensure_open_files(cfg.clients as u64).map_err(EngineError::Config)?;
        Ok(Shape {
            clients,
            mine,
            threads: (cfg.threads.max(1) as usize).min(mine),
            warmup,
            window,
            rate,
        })
    }

    /// Completes a share's `result` with what the shape decides: the rate
    /// it offered, the latency per pipelined request, the counts of each
    /// of `nodes`. Returns why an open-loop run fell behind its rate.
    fn complete(
        &self,
        cfg: &PhaseConfig,
        result: &mut PhaseResult,
        merged: &Recorder,
        nodes: &[SocketAddr],
    ) -> Option<Finding> {
        // A share offers its clients' part of the rate (each client's schedule
        // is the whole phase's rate over every client).
        let offered = self
            .rate
            .map(|r| r.ops_per_s * self.mine as f64 / self.clients as f64);
        result.offered_rate = offered;
        if cfg.pipeline > 1 && self.rate.is_none() && matches!(cfg.kind, PhaseKind::Run { .. }) {
            for op in &mut result.ops {
                op.per_pipeline = Some(op.latency.divided_by(cfg.pipeline));
            }
        }
        if nodes.len() > 1 {
            result.nodes = node_counts(nodes, merged);
        }
        offered.and_then(|r| overload(r, result, merged))
    }
}

/// The window as the coordinator marks it.
#[derive(Clone, Copy)]
struct Edges {
    warmup: Duration,
    window: Option<Window>,
    /// The progress bar's total (a load's or an operation-count window's).
    expected: u64,
}

impl Edges {
    /// A timed window's length (`None`: a load, or an operation count).
    fn time_bound(&self) -> Option<Duration> {
        match self.window {
            Some(Window::Duration(d)) => Some(d),
            _ => None,
        }
    }

    /// Whether (and why) the window ended before its end, given the
    /// workers' common `start` and when they were seen to end.
    fn cut_short(
        &self,
        start: Option<Instant>,
        interrupted: bool,
        ended_at: Instant,
        merged: &Recorder,
    ) -> Option<CutShort> {
        match (self.window, start) {
            // A load, or a run stopped before its window: nothing to keep.
            (None, _) | (_, None) => None,
            (Some(_), Some(s)) if interrupted => {
                (ended_at > s + self.warmup).then_some(CutShort::Interrupted)
            }
            (Some(Window::Duration(d)), Some(s)) => {
                (ended_at + TICK < s + self.warmup + d).then_some(CutShort::ConnectionsLost)
            }
            (Some(Window::Operations(_)), Some(_)) => {
                // A miss is an answered operation too: it counts against the
                // quota the workers stop at.
                let ended = merged.completed() + merged.misses_total() + merged.errors_total();
                (ended < self.expected).then_some(CutShort::ConnectionsLost)
            }
        }
    }

    /// How long the window lasted. A window cut short ends at its last
    /// reply (or when the workers were seen to end), so its rates are over
    /// the time it really lasted.
    fn window_len(
        &self,
        start: Instant,
        cut_short: Option<CutShort>,
        merged: &Recorder,
        ended_at: Instant,
    ) -> Duration {
        match (self.time_bound(), cut_short) {
            (Some(d), None) => d,
            (Some(d), Some(_)) => merged
                .last_reply
                .unwrap_or(ended_at)
                .saturating_duration_since(start + self.warmup)
                .min(d),
            (None, _) => merged
                .last_reply
                .map(|t| t.saturating_duration_since(start + self.warmup))
                .unwrap_or_default(),
        }
    }
}

/// What the coordinator saw of a phase.
struct Coordinated {
    /// The workers' common start (`None`: they ended before agreeing one).
    start: Option<Instant>,
    /// kvbench's CPU time at the window's start and end.
    cpu_at_start: f64,
    cpu_at_end: Option<f64>,
    live: Option<LiveSeconds>,
    /// When the last worker was seen to finish (within a tick).
    ended_at: Instant,
}

/// Waits for the workers' common start, then marks the window's edges for
/// `observer` exactly when they pass (so its CPU and server probes bracket
/// the window tightly) and passes on the live seconds and the progress
/// until every worker has finished.
fn coordinate(
    shared: &Shared,
    handles: &[thread::JoinHandle<Result<(Recorder, f64), EngineError>>],
    counters: &[Arc<AtomicU64>],
    (live_rx, threads): (mpsc::Receiver<LiveMsg>, usize),
    edges: Edges,
    observer: &dyn Observer,
) -> Coordinated {
    let time_bound = edges.time_bound();
    let Edges {
        warmup,
        window,
        expected,
    } = edges;
    let start = loop {
        if let Some(t) = shared.start.get() {
            break Some(*t);
        }
        if handles.iter().all(|h| h.is_finished()) {
            break None;
        }
        thread::sleep(Duration::from_millis(1));
    };
    let mut cpu_at_start = process_cpu_seconds();
    let mut cpu_at_end = None;
    let mut live = start.map(|s| LiveSeconds::new(live_rx, threads, s + warmup, time_bound));
    // When the last worker was seen to finish (within a tick).
    let mut ended_at = Instant::now();
    if let (Some(start), Some(live)) = (start, live.as_mut()) {
        observer.started();
        let measure_from = start + warmup;
        let deadline = time_bound.map(|d| measure_from + d);
        let total = match window {
            Some(Window::Operations(_)) | None => Some(expected),
            _ => None,
        };
        let mut in_window = false;
        loop {
            let now = Instant::now();
            if !in_window && now >= measure_from {
                in_window = true;
                cpu_at_start = process_cpu_seconds();
                observer.window_started();
            }
            if cpu_at_end.is_none() && deadline.is_some_and(|d| now >= d) {
                cpu_at_end = Some(process_cpu_seconds());
                observer.finished();
            }
            for second in live.ready(now) {
                observer.second(&second);
            }
            let completed = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
            observer.progress(&Progress {
                completed,
                total,
                elapsed: now - start,
                warmup,
                window: time_bound,
            });
            if handles.iter().all(|h| h.is_finished()) {
                // Read the clock again: the observer's edges above may
                // have waited on a busy server (its probes at the window's
                // start), and `now` from before them made a window whose
                // workers ran to its deadline look cut short.
                ended_at = Instant::now();
                break;
            }
            // Wake exactly at the next window edge, not up to a tick late,
            // so CPU and server probes bracket the window tightly.
            let mut next = now + TICK;
            for edge in [Some(measure_from), deadline].into_iter().flatten() {
                if edge > now && edge < next {
                    next = edge;
                }
            }
            thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        if cpu_at_end.is_none() {
            cpu_at_end = Some(process_cpu_seconds());
            observer.finished();
        }
    }
    Coordinated {
        start,
        cpu_at_start,
        cpu_at_end,
        live,
        ended_at,
    }
}

/// A share's clients dealt to its worker threads, with what they are
/// expected to do.
struct Dealt {
    /// Each thread's connections' sources, dealt round-robin so each
    /// thread gets an even share.
    per_worker: Vec<Vec<ConnSeed>>,
    /// The progress bar's total and the yardstick of a window cut short.
    expected: u64,
    /// A run's insert counter and where its keys land, to report which
    /// keys it handed out.
    insert_counter: Option<(
        Arc<kvbench_workload::generator::AcknowledgedCounterGenerator>,
        InsertSpace,
    )>,
}

/// Makes the sources of the clients `slice` holds (a load's key ranges, a
/// run's streams and schedules, each drawn from the client's own seed so
/// client i is the same whoever runs it) and deals them to `threads`.
fn deal(
    cfg: &PhaseConfig,
    slice: Slice,
    threads: usize,
    window: Option<Window>,
    rate: Option<Rate>,
) -> Result<Dealt, EngineError> {
    let clients = cfg.clients as usize;
    let mut insert_counter = None;
    // What this share is expected to do: the progress bar's total and the
    // yardstick of a window cut short.
    let mut expected = 0u64;
    // Sources, dealt round-robin to workers so each worker gets an even share.
    let mut per_worker: Vec<Vec<ConnSeed>> = (0..threads).map(|_| Vec::new()).collect();
    // The index among this share's clients, for dealing them to threads.
    let mut dealt = 0usize;
    match cfg.kind {
        PhaseKind::Load => {
            let rngs = client_rngs(purpose_seed(cfg.seed, SEED_LOAD), clients);
            let range = cfg.spec.load_range();
            for (i, rng) in rngs.into_iter().enumerate() {
                if !slice.holds(i) {
                    continue;
                }
                let first = range.start + i as u64;
                expected += range.end.saturating_sub(first).div_ceil(clients as u64);
                let source = Source::Load {
                    next: first,
                    step: clients as u64,
                    end: range.end,
                    rng,
                };
                per_worker[dealt % threads].push(ConnSeed {
                    source,
                    quota: None,
                    schedule: None,
                    index: i,
                });
                dealt += 1;
            }
        }
        PhaseKind::Run { .. } => {
            // One workload per phase: its insert counter is shared by every
            // client, as YCSB shares it between threads.
            let mut workload =
                Workload::new(&cfg.spec).map_err(|e| EngineError::Config(e.to_string()))?;
            // Processes share no counter: each worker inserts into a block
            // of its own (worker 0, like one process, right after the records).
            workload.set_space(InsertSpace::of_worker(cfg.spec.record_count, slice.index));
            insert_counter = Some((workload.inserts().clone(), workload.space()));
            let rngs = client_rngs(purpose_seed(cfg.seed, SEED_RUN), clients);
            let mut schedule_rngs =
                client_rngs(purpose_seed(cfg.seed, SEED_SCHEDULE), clients).into_iter();
            for (i, rng) in rngs.into_iter().enumerate() {
                // Every client's schedule generator is drawn, so client i
                // keeps its own whoever runs it.
                let schedule_rng = schedule_rngs.next();
                if !slice.holds(i) {
                    continue;
                }
                let quota = match window {
                    Some(Window::Operations(n)) => {
                        Some(n / clients as u64 + u64::from((i as u64) < n % clients as u64))
                    }
                    _ => None,
                };
                let stream = workload
                    .client_stream(rng, i, clients)
                    .map_err(|e| EngineError::Config(e.to_string()))?;
                let source = Source::Run {
                    stream: Box::new(stream),
                };
                expected += quota.unwrap_or(0);
                let schedule = rate.zip(schedule_rng);
                per_worker[dealt % threads].push(ConnSeed {
                    source,
                    quota,
                    schedule,
                    index: i,
                });
                dealt += 1;
            }
        }
    }
    Ok(Dealt {
        per_worker,
        expected,
        insert_counter,
    })
}

/// What the worker threads returned, merged.
struct Joined {
    merged: Recorder,
    first_error: Option<EngineError>,
    series: Vec<SeriesRecorder>,
    worker_busy: Vec<f64>,
}

/// Waits for every worker and merges their recorders (histograms merged,
/// never averaged); the first error is kept.
fn join(handles: Vec<thread::JoinHandle<Result<(Recorder, f64), EngineError>>>) -> Joined {
    let mut merged = Recorder::default();
    let mut first_error = None;
    let mut series = Vec::with_capacity(handles.len());
    let mut worker_busy = Vec::with_capacity(handles.len());
    for h in handles {
        match h.join() {
            Ok(Ok((r, busy))) => {
                merged.merge(&r);
                series.push(r.series);
                worker_busy.push(busy);
            }
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(_) => {
                first_error.get_or_insert(EngineError::Config("a worker thread panicked".into()));
            }
        }
    }
    Joined {
        merged,
        first_error,
        series,
        worker_busy,
    }
}

/// Each node's replies, errors and reconnects, in the order of `nodes`.
fn node_counts(nodes: &[SocketAddr], merged: &Recorder) -> Vec<kvbench_model::NodeCount> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, addr)| {
            let [replies, errors] = merged.node_counts.get(i).copied().unwrap_or_default();
            kvbench_model::NodeCount {
                addr: addr.to_string(),
                replies,
                errors,
                reconnects: merged.node_reconnects.get(i).copied().unwrap_or(0),
            }
        })
        .collect()
}

/// Open loop: the schedule was not kept if fewer than 97% of the offered
/// operations completed per second of the window, or if the lag at the end
/// of the window is far above the lag at its start (it kept growing).
fn overload(offered: f64, result: &PhaseResult, rec: &Recorder) -> Option<Finding> {
    let achieved = result.throughput + result.errors as f64 / result.duration_s.max(1e-9);
    if achieved < MIN_ACHIEVED_SHARE * offered {
        return Some(Finding::Overloaded {
            cause: Overload::Rate { achieved, offered },
            worker: None,
        });
    }
    if let Some((first_us, last_us)) = rec.lag_trend.means_us() {
        if last_us > 1000.0 && last_us > 10.0 * first_us.max(1.0) {
            return Some(Finding::Overloaded {
                cause: Overload::Lag { first_us, last_us },
                worker: None,
            });
        }
    }
    None
}

/// One connection's inputs, before the start instant is known.
struct ConnSeed {
    source: Source,
    quota: Option<u64>,
    schedule: Option<(Rate, kvbench_workload::Rng)>,
    index: usize,
}

struct WorkerJob {
    nodes: Vec<SocketAddr>,
    /// This worker's own copy: `MOVED` replies update it in place.
    router: Router,
    driver: Driver,
    sources: Vec<ConnSeed>,
    pipeline: usize,
    warmup: Duration,
    window: Option<Window>,
    clients: usize,
    timeout: Duration,
    connect_timeout: Duration,
    reconnect: Option<Backoff>,
    retry: Retry,
    stall: Duration,
    access: Arc<Access>,
    io: Io,
    start_at: crate::share::StartAt,
    /// `Some` for a system driven through its client library.
    library: Option<LibraryJob>,
    progress: Arc<AtomicU64>,
    /// This worker's index and where it sends its finished seconds.
    live: (usize, Sender<LiveMsg>),
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

/// What a worker has once every worker has connected.
struct Ready {
    measure_from: Instant,
    recorder: Recorder,
    plans: Vec<Plan>,
    /// Shared by this worker's clients.
    driver: Rc<Driver>,
    router: Rc<Router>,
}

/// One client's inputs from the common start on.
pub(crate) struct Plan {
    pub source: Source,
    pub limit: Limit,
    pub schedule: Option<Schedule>,
}

impl Ready {
    /// The wire clients of the tokio and io_uring loops.
    fn clients(
        &mut self,
        pipeline: usize,
        timeout: Duration,
        reopen: bool,
        retry: Retry,
    ) -> Vec<Client> {
        self.plans
            .drain(..)
            .map(|p| {
                Client::new(
                    self.driver.clone(),
                    self.router.clone(),
                    p.source,
                    pipeline,
                    self.measure_from,
                    p.limit,
                    p.schedule,
                    timeout,
                )
                .reopening(reopen, retry)
            })
            .collect()
    }
}

impl WorkerJob {
    fn run(self) -> Result<(Recorder, f64), EngineError> {
        let open_loop = self.sources.iter().any(|c| c.schedule.is_some());
        if self.io == Io::Uring && !open_loop && self.library.is_none() {
            return self.run_uring();
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| EngineError::Config(format!("cannot start runtime: {e}")))?;
        let local = tokio::task::LocalSet::new();
        match self.library.clone() {
            Some(lib) => local.block_on(&rt, self.run_library(lib)),
            None => local.block_on(&rt, self.run_tokio()),
        }
    }

    /// The client-library path: one library client per worker, its pool
    /// opened before the common start, one task per operation in flight.
    async fn run_library(self, lib: LibraryJob) -> Result<(Recorder, f64), EngineError> {
        let in_flight = self.sources.len() * self.pipeline;
        let connected = library::connect(&lib.seeds, &self.access, in_flight, self.connect_timeout)
            .await
            .map_err(|message| EngineError::Connect {
                addr: lib.seeds[0],
                message,
            });
        let (client, error) = match connected {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(e)),
        };
        let (timeout, progress, stop) = (self.timeout, self.progress.clone(), self.stop.clone());
        let pipeline = self.pipeline;
        let Some(ready) = self.ready(error)? else {
            if let Some(c) = client {
                let _ = c.close().await;
            }
            return Ok((Recorder::default(), 0.0));
        };
        let Some(client) = client else {
            return Ok((Recorder::default(), 0.0));
        };
        let measure_from = ready.measure_from;
        let shared_lib = Rc::new(library::Library {
            client: Arc::new(client),
            model: Rc::new(lib.model),
            driver: ready.driver.clone(),
            pipeline,
            measure_from,
        });
        let recorder = Rc::new(RefCell::new(ready.recorder));
        let cpu_start = spawn_window_helpers(measure_from, &recorder);
        let mut tasks = Vec::with_capacity(ready.plans.len());
        for plan in ready.plans {
            let shared = conn::Shared {
                timeout,
                recorder: recorder.clone(),
                progress: progress.clone(),
                stop: stop.clone(),
                // The library reconnects by itself.
                reopen: None,
            };
            tasks.push(tokio::task::spawn_local(library::run(
                shared_lib.clone(),
                plan,
                shared,
            )));
        }
        for t in tasks {
            t.await
                .map_err(|e| EngineError::Config(format!("client task failed: {e}")))?;
        }
        // Closing stops the library's tend task and its connections.
        let _ = shared_lib.client.close().await;
        recorder.borrow_mut().series.finish();
        let out = recorder.borrow().clone();
        Ok((out, busy_share(cpu_start.get())))
    }

    /// Waits for every worker to connect (or fail to), then builds this
    /// worker's clients from the common start. `None` when any worker
    /// failed to connect (that worker reports the error).
    fn ready(self, connect_error: Option<EngineError>) -> Result<Option<Ready>, EngineError> {
        if connect_error.is_some() {
            self.shared.connect_failed.store(true, Ordering::Relaxed);
        }
        // Every worker reaches the barrier, failed or not, so none waits forever.
        self.shared.barrier.wait();
        if let Some(e) = connect_error {
            return Err(e);
        }
        if self.shared.connect_failed.load(Ordering::Relaxed) {
            return Ok(None);
        }
        // The first worker past the barrier waits for the start; the others
        // block here until it has one.
        let start = *self
            .shared
            .start
            .get_or_init(|| match self.start_at.wait() {
                Ok((at, wall)) => {
                    let _ = self.shared.start_wall.set(Ok(wall));
                    at
                }
                Err(why) => {
                    let _ = self.shared.start_wall.set(Err(why));
                    Instant::now()
                }
            });
        if let Some(Err(why)) = self.shared.start_wall.get() {
            return Err(EngineError::Config(format!("no common start: {why}")));
        }
        let measure_from = start + self.warmup;
        let open_loop = self
            .sources
            .iter()
            .find_map(|c| c.schedule.as_ref().map(|(r, _)| *r));
        let mut recorder = match open_loop {
            Some(r) => {
                // The window's expected length fixes its first and last tenth.
                let length = match self.window {
                    Some(Window::Duration(d)) => d,
                    Some(Window::Operations(n)) => Duration::from_secs_f64(n as f64 / r.ops_per_s),
                    None => Duration::ZERO,
                };
                Recorder::open_loop(LagTrend::new(
                    measure_from + length / 10,
                    measure_from + length * 9 / 10,
                ))
            }
            None => Recorder::default(),
        };
        recorder.stall_threshold_ns = self.stall.as_nanos() as u64;
        if self.retry.keep_failed_keys {
            recorder.failed_keys = Some(Vec::new());
        }
        if self.library.is_none() {
            recorder.connections = (self.sources.len() * self.nodes.len()) as u64;
        }
        recorder.series.set_origin(measure_from);
        recorder.timeline.set_origin(measure_from);
        recorder
            .series
            .set_live(LiveSink::new(self.live.0, self.live.1));
        let plans = self
            .sources
            .into_iter()
            .map(|seed| {
                let limit = match (self.window, seed.quota) {
                    (Some(Window::Duration(d)), _) => Limit::Until(measure_from + d),
                    (_, Some(n)) => Limit::Operations(n),
                    _ => Limit::Operations(u64::MAX),
                };
                let schedule = seed.schedule.map(|(r, rng)| {
                    let per_conn = r.ops_per_s / self.clients as f64;
                    Schedule::new(start, per_conn, r.arrival, rng, seed.index, self.clients)
                });
                Plan {
                    source: seed.source,
                    limit,
                    schedule,
                }
            })
            .collect();
        Ok(Some(Ready {
            measure_from,
            recorder,
            plans,
            driver: Rc::new(self.driver),
            router: Rc::new(self.router),
        }))
    }

    /// Opens one ready connection per source and node (blocking, for the
    /// io_uring loop), stopping at the first failure (returned beside the
    /// connections opened so far).
    fn connect_all(&self) -> (Vec<Vec<std::net::TcpStream>>, Option<EngineError>) {
        let mut socks = Vec::with_capacity(self.sources.len());
        for _ in 0..self.sources.len() {
            let mut lanes = Vec::with_capacity(self.nodes.len());
            for &addr in &self.nodes {
                match crate::reopen::open_for_ring(addr, &self.access, self.connect_timeout) {
                    Ok(s) => lanes.push(s),
                    Err(e) => return (socks, Some(e)),
                }
            }
            socks.push(lanes);
        }
        (socks, None)
    }

    /// [`WorkerJob::connect_all`] for the tokio loop (plain or TLS).
    async fn connect_all_async(&self) -> (Vec<Vec<AsyncStream>>, Option<EngineError>) {
        let mut socks = Vec::with_capacity(self.sources.len());
        for _ in 0..self.sources.len() {
            let mut lanes = Vec::with_capacity(self.nodes.len());
            for &addr in &self.nodes {
                match kvbench_connect::open_async(addr, &self.access, self.connect_timeout).await {
                    Ok(s) => lanes.push(s),
                    Err(e) => return (socks, Some(EngineError::connect(addr)(e))),
                }
            }
            socks.push(lanes);
        }
        (socks, None)
    }

    /// How this worker's connections are opened again, when they are.
    fn reopener(&self) -> Option<Arc<Reopener>> {
        self.reconnect.map(|backoff| {
            Arc::new(Reopener {
                addrs: self.nodes.clone(),
                follow: self.router.follows().cloned(),
                access: self.access.clone(),
                connect_timeout: self.connect_timeout,
                backoff,
                give_up: self.timeout,
            })
        })
    }

    async fn run_tokio(self) -> Result<(Recorder, f64), EngineError> {
        let (socks, error) = self.connect_all_async().await;
        let (timeout, progress, stop) = (self.timeout, self.progress.clone(), self.stop.clone());
        let pipeline = self.pipeline;
        let (reopen, retry) = (self.reopener(), self.retry);
        let Some(mut ready) = self.ready(error)? else {
            return Ok((Recorder::default(), 0.0));
        };
        let clients = ready.clients(pipeline, timeout, reopen.is_some(), retry);
        let measure_from = ready.measure_from;
        let recorder = Rc::new(RefCell::new(ready.recorder));
        let cpu_start = spawn_window_helpers(measure_from, &recorder);
        let mut tasks = Vec::with_capacity(socks.len());
        for (sock, client) in socks.into_iter().zip(clients) {
            let shared = conn::Shared {
                timeout,
                recorder: recorder.clone(),
                progress: progress.clone(),
                stop: stop.clone(),
                reopen: reopen.clone(),
            };
            tasks.push(tokio::task::spawn_local(conn::run(sock, client, shared)));
        }
        for t in tasks {
            // A panicking connection task is a bug; surface it rather than lose its share.
            t.await
                .map_err(|e| EngineError::Config(format!("connection task failed: {e}")))?;
        }
        recorder.borrow_mut().series.finish();
        let out = recorder.borrow().clone();
        Ok((out, busy_share(cpu_start.get())))
    }

    fn run_uring(self) -> Result<(Recorder, f64), EngineError> {
        let (socks, error) = self.connect_all();
        let (timeout, progress, stop) = (self.timeout, self.progress.clone(), self.stop.clone());
        let pipeline = self.pipeline;
        let (reopen, retry) = (self.reopener(), self.retry);
        let Some(mut ready) = self.ready(error)? else {
            return Ok((Recorder::default(), 0.0));
        };
        let clients = ready.clients(pipeline, timeout, reopen.is_some(), retry);
        let env = uring::Env {
            timeout,
            progress: &progress,
            stop: &stop,
            measure_from: ready.measure_from,
            reopen,
        };
        let conns = socks.into_iter().zip(clients).collect();
        let cpu_start =
            uring::run(conns, &env, &mut ready.recorder).map_err(EngineError::Config)?;
        ready.recorder.series.finish();
        Ok((ready.recorder, busy_share(cpu_start)))
    }
}

/// The worker's helper tasks: one reads the thread's CPU time when the
/// window starts (returned), one rolls the per-second series over at each
/// second's end, so a worker waiting for replies still finishes its
/// seconds on time.
fn spawn_window_helpers(
    measure_from: Instant,
    recorder: &Rc<RefCell<Recorder>>,
) -> Rc<std::cell::Cell<Option<(Instant, f64)>>> {
    let cpu_start = Rc::new(std::cell::Cell::new(None));
    let probe = cpu_start.clone();
    tokio::task::spawn_local(async move {
        tokio::time::sleep_until(measure_from.into()).await;
        probe.set(Some((Instant::now(), thread_cpu_seconds())));
    });
    let ticker = recorder.clone();
    tokio::task::spawn_local(async move {
        let mut edge = measure_from;
        loop {
            edge += Duration::from_secs(1);
            tokio::time::sleep_until(edge.into()).await;
            ticker.borrow_mut().series.tick(Instant::now());
        }
    });
    cpu_start
}

/// What a worker needs to drive a system through its client library.
#[derive(Debug, Clone)]
struct LibraryJob {
    /// Where the library starts discovering the cluster.
    seeds: Vec<SocketAddr>,
    /// The phase's data model, made once and shared by the workers.
    model: Model,
}

impl LibraryJob {
    fn new(cfg: &PhaseConfig, driver: &Driver) -> Result<LibraryJob, EngineError> {
        let seeds = match &cfg.topology {
            Topology::Single(a) => vec![*a],
            Topology::Cluster(seeds) => seeds.clone(),
            Topology::Pool(..) => {
                return Err(EngineError::Config(format!(
                    "{} is a server-side cluster, not a client-side pool",
                    cfg.system
                )))
            }
            Topology::Sentinel(..) => {
                return Err(EngineError::Config(format!(
                    "{} has no Sentinel; Sentinel groups are the Redis family's",
                    cfg.system
                )))
            }
        };
        let namespace = cfg.access.namespace.clone().ok_or_else(|| {
            EngineError::Config(format!("{} needs a namespace to write to", cfg.system))
        })?;
        Ok(LibraryJob {
            seeds,
            model: Model::new(driver.records(), &cfg.spec, &namespace, cfg.timeout),
        })
    }
}

/// The calling thread's CPU time since `start`, as a share of the wall time.
fn busy_share(start: Option<(Instant, f64)>) -> f64 {
    match start {
        Some((t0, c0)) => {
            let wall = t0.elapsed().as_secs_f64();
            if wall > 0.0 {
                (thread_cpu_seconds() - c0) / wall
            } else {
                0.0
            }
        }
        None => 0.0,
    }
}
