//! The range of every number kvbench's flags take, checked before anything
//! starts. Without them a typo allocates what the kernel's OOM killer ends
//! (`--pipeline 100000000`), loads forever (`--records 18446744073709551615`)
//! or never ends (`--rate 1e12`); with them it is one line naming the flag
//! and the range, and exit 2. The workload's own numbers (records, fields,
//! operations, clients, rate) share [`kvbench_workload::bounds`], so a flag
//! and its property cannot disagree. docs/reliability.md lists every range.

use crate::usage::UsageError;
use kvbench_workload::bounds as workload;
use std::time::Duration;

/// A closed range of whole numbers a flag accepts.
#[derive(Debug, Clone, Copy)]
pub struct Count {
    pub min: u64,
    pub max: u64,
}

/// `--clients`, `--with-clients`, `--load-clients`.
pub const CLIENTS: Count = Count {
    min: 1,
    max: workload::MAX_CLIENTS as u64,
};

/// `--pipeline`, `--with-pipeline`, `--load-pipeline`: requests in flight
/// per connection. Each holds a slot of bookkeeping and its bytes; the
/// memory estimate ([`crate::memory`]) checks what they add up to.
pub const PIPELINE: Count = Count {
    min: 1,
    max: 100_000,
};

/// `--threads`: more worker threads than this is never faster (each owns
/// whole connections; beyond the cores they only take turns).
pub const THREADS: Count = Count { min: 1, max: 256 };

/// `--workers`: kvbench processes a scaled-out phase is spread over.
pub const WORKERS: Count = Count { min: 1, max: 1024 };

/// `--iterations` (compare, reproduce).
pub const ITERATIONS: Count = Count { min: 1, max: 1_000 };
/// `--max-blocks`: at least the 3 blocks a sequential comparison starts with.
pub const MAX_BLOCKS: Count = Count { min: 3, max: 1_000 };

/// `--rate`, operations per second (a number, not necessarily whole).
pub const MAX_RATE: f64 = workload::MAX_RATE as f64;

/// A range of durations a flag accepts.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub min: Duration,
    pub max: Duration,
}

const HOUR: Duration = Duration::from_secs(3600);

/// `--duration`: the measured window. Up to a week: an `Instant` plus an
/// absurd duration would overflow, and a longer soak is a series of runs.
pub const DURATION: Span = Span {
    min: Duration::from_millis(1),
    max: Duration::from_secs(7 * 24 * 3600),
};

/// `--warmup`: zero (none) to a day.
pub const WARMUP: Span = Span {
    min: Duration::ZERO,
    max: Duration::from_secs(24 * 3600),
};

/// `--timeout`: how long a request may go without a reply.
pub const TIMEOUT: Span = Span {
    min: Duration::from_millis(1),
    max: HOUR,
};

/// `--max-retries`: a request is counted once, so its attempts stay few
/// (and fit in the four bits each pending request keeps for them).
pub const RETRIES: Count = Count { min: 0, max: 15 };

/// `--reconnect-backoff`, `--retry-backoff`: each wait, from a millisecond to a minute.
pub const RECONNECT: Span = Span {
    min: Duration::from_millis(1),
    max: Duration::from_secs(60),
};

/// `--stall`: zero (no stall check) to an hour.
pub const STALL: Span = Span {
    min: Duration::ZERO,
    max: HOUR,
};

impl Count {
    /// `value` for `flag`, or the one line that names both and the range.
    pub fn check(self, flag: &str, value: u64) -> Result<(), UsageError> {
        workload::check(value, self.min, self.max).map_err(|m| UsageError(format!("{flag} {m}")))
    }
}

impl Span {
    /// `value` for `flag`, or the one line that names both and the range.
    pub fn check(self, flag: &str, value: Duration) -> Result<(), UsageError> {
        if (self.min..=self.max).contains(&value) {
            Ok(())
        } else {
            Err(UsageError(format!(
                "{flag} must be between {} and {}, got {}",
                human(self.min),
                human(self.max),
                human(value)
            )))
        }
    }
}

/// A duration as people write it (`1ms`, `7days`), as `--duration` takes it.
fn human(d: Duration) -> String {
    if d.is_zero() {
        "0s".into()
    } else {
        humantime::format_duration(d).to_string()
    }
}

/// `--rate` (or the workload's `target`): a positive number of operations
/// per second, at most [`MAX_RATE`].
pub fn rate(flag: &str, r: f64) -> Result<(), UsageError> {
    if r.is_finite() && r > 0.0 && r <= MAX_RATE {
        Ok(())
    } else {
        Err(UsageError(format!(
            "{flag} must be a number of operations per second above 0 and at most {MAX_RATE:.0}, got {r}"
        )))
    }
}

/// An equivalence margin given in percent (`--margin`, `[verdicts]
/// margin`) as a share, or why it cannot be one.
pub fn margin_share(pct: f64) -> Result<f64, String> {
    if pct > 0.0 && pct < 100.0 {
        Ok(pct / 100.0)
    } else {
        Err(format!(
            "{pct}: give a percentage above 0 and below 100 (e.g. 5)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_names_the_flag_and_the_range() {
        assert!(PIPELINE.check("--pipeline", 1).is_ok());
        assert!(PIPELINE.check("--pipeline", 100_000).is_ok());
        let e = PIPELINE.check("--pipeline", 100_000_000).unwrap_err();
        assert_eq!(
            e.0,
            "--pipeline must be between 1 and 100000, got 100000000"
        );
        assert!(CLIENTS.check("--clients", 0).is_err());
    }

    #[test]
    fn a_span_is_written_as_the_flag_takes_it() {
        let e = DURATION
            .check("--duration", Duration::from_secs(8 * 24 * 3600))
            .unwrap_err();
        assert_eq!(e.0, "--duration must be between 1ms and 7days, got 8days");
        assert!(WARMUP.check("--warmup", Duration::ZERO).is_ok());
        assert!(TIMEOUT.check("--timeout", Duration::ZERO).is_err());
    }

    #[test]
    fn a_rate_is_positive_finite_and_bounded() {
        assert!(rate("--rate", 1e8).is_ok());
        assert!(rate("--rate", 0.5).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e12] {
            assert!(rate("--rate", bad).is_err(), "{bad}");
        }
    }
}
