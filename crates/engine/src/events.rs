//! Hooks through which the engine tells its caller what is happening.
//!
//! The engine never prints. The CLI implements [`Observer`] to draw progress
//! bars and to probe the server at the exact edges of the measured window;
//! every hook has a no-op default so a caller implements only what it needs.

use kvbench_model::OpKind;
use std::time::Duration;

/// Where a phase stands, passed to [`Observer::progress`] a few times a second.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Measured operations completed so far.
    pub completed: u64,
    /// Operations the window will complete, when it is operation-bound.
    pub total: Option<u64>,
    /// Time since the connections started.
    pub elapsed: Duration,
    /// Warm-up length (nothing is counted before it ends).
    pub warmup: Duration,
    /// Window length, when it is time-bound.
    pub window: Option<Duration>,
}

/// One finished second of the measured window, every worker's replies
/// merged (the live view; the stored series has the same seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct SecondStats {
    /// Seconds since the window opened: 0 is the window's first second.
    pub second: u32,
    /// How long this second is: 1, except the last one of a window that
    /// ends inside a second.
    pub length_s: f64,
    /// Operations completed in it, every kind.
    pub completed: u64,
    /// Operations that failed in it, every kind.
    pub errors: u64,
    /// Median latency of its completed operations, every kind, in
    /// microseconds (to 1%: the interval histograms keep two significant
    /// digits); 0 when none completed.
    pub p50_us: f64,
    /// 99th percentile, likewise.
    pub p99_us: f64,
    /// The same per operation kind, for every kind seen so far in the window.
    pub ops: Vec<OpSecond>,
}

impl SecondStats {
    /// Completed operations per second.
    pub fn throughput(&self) -> f64 {
        per_second(self.completed, self.length_s)
    }
}

/// One operation kind's share of a [`SecondStats`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpSecond {
    /// The kind.
    pub op: OpKind,
    /// Completed operations.
    pub completed: u64,
    /// Failed operations.
    pub errors: u64,
    /// Median latency in microseconds (0 when none completed).
    pub p50_us: f64,
    /// 99th percentile in microseconds (0 when none completed).
    pub p99_us: f64,
}

/// `n` over `length_s` seconds, as a rate.
pub(crate) fn per_second(n: u64, length_s: f64) -> f64 {
    if length_s > 0.0 {
        n as f64 / length_s
    } else {
        0.0
    }
}

/// Receives phase events. Called from the thread that called the engine.
pub trait Observer {
    /// All connections are open; sending starts now.
    fn started(&self) {}
    /// Warm-up is over; the measured window starts now.
    fn window_started(&self) {}
    /// Periodic progress.
    fn progress(&self, _p: &Progress) {}
    /// A second of the window has finished: called once per second, in
    /// order, as soon as every worker is past it (a worker that does not
    /// get there within 2 s is left out of it), and for the last seconds
    /// when the workers have stopped. Load phases have seconds too.
    fn second(&self, _s: &SecondStats) {}
    /// Every connection has finished; the window is over.
    fn finished(&self) {}
    /// A run phase handed out the insert keys `keys` (record numbers),
    /// whether or not it then succeeded: what `--cleanup` must delete.
    /// Called once, after every worker has stopped.
    fn inserts_issued(&self, _keys: std::ops::Range<u64>) {}
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}
