//! Hooks through which the engine tells its caller what is happening.
//!
//! The engine never prints. The CLI implements [`Observer`] to draw progress
//! bars and to probe the server at the exact edges of the measured window;
//! every hook has a no-op default so a caller implements only what it needs.

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

/// Receives phase events. Called from the thread that called the engine.
pub trait Observer {
    /// All connections are open; sending starts now.
    fn started(&self) {}
    /// Warm-up is over; the measured window starts now.
    fn window_started(&self) {}
    /// Periodic progress.
    fn progress(&self, _p: &Progress) {}
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
