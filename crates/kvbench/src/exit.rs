//! Exit codes, in one place (they are documented in `--help` and docs/cli.md).

use kvbench_model::{RunRecord, RunStatus};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Everything worked.
pub const OK: u8 = 0;
/// A run failed; it is stored as failed with its reason.
pub const FAILED: u8 = 1;
/// Bad input: nothing ran, nothing was stored as a result.
pub const USAGE: u8 = 2;
/// A run finished but is marked invalid.
pub const INVALID: u8 = 3;
/// Interrupted by Ctrl-C.
pub const INTERRUPTED: u8 = 130;

/// Bad input from the user. `main` maps it to exit code 2.
pub use kvbench_run::UsageError;

/// The worst outcome of a command that ran benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// All runs ok.
    Ok,
    /// Some run invalid.
    Invalid,
    /// Some run failed.
    Failed,
    /// Interrupted.
    Interrupted,
}

impl Verdict {
    /// The process exit code for this verdict.
    pub fn code(self) -> ExitCode {
        ExitCode::from(match self {
            Verdict::Ok => OK,
            Verdict::Invalid => INVALID,
            Verdict::Failed => FAILED,
            Verdict::Interrupted => INTERRUPTED,
        })
    }
}

/// What a stored run means for the exit code (a failure after Ctrl-C is
/// the interruption's).
pub(crate) fn verdict_of(rec: &RunRecord, stop: &AtomicBool) -> Verdict {
    status_verdict(rec.status, stop)
}

/// What a run's status means for the exit code (a failure after Ctrl-C is
/// the interruption's).
pub(crate) fn status_verdict(status: RunStatus, stop: &AtomicBool) -> Verdict {
    match status {
        RunStatus::Ok => Verdict::Ok,
        RunStatus::Invalid => Verdict::Invalid,
        RunStatus::Failed if stop.load(Ordering::Relaxed) => Verdict::Interrupted,
        RunStatus::Failed => Verdict::Failed,
    }
}
