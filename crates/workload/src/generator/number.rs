//! What every generator shares: the [`NumberGenerator`] trait, the
//! [`DistError`] they refuse bad parameters with, and the range and
//! fraction checks that produce it.

use super::WINDOW_SIZE;
use rand_core::RngCore;
use std::fmt;

/// A source of numbers drawn from some distribution, as YCSB's
/// `NumberGenerator`, except that the random source is passed in.
///
/// Each generator also has the same `next_value` as an inherent method, so
/// callers need not import this trait; the trait is for generic code.
pub trait NumberGenerator {
    /// Draws the next value.
    fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64;

    /// The distribution's mean, or `None` where YCSB throws
    /// `UnsupportedOperationException` (Zipfian, latest, counters: their
    /// mean is not defined or not stationary).
    fn mean(&self) -> Option<f64>;
}

/// Why a generator could not be built or used.
#[derive(Debug, Clone, PartialEq)]
pub enum DistError {
    /// A range whose upper bound is below its lower bound, or too wide to count.
    InvalidRange {
        /// Lower bound (inclusive).
        min: u64,
        /// Upper bound (inclusive).
        max: u64,
    },
    /// A parameter outside the values the generator's formula accepts.
    InvalidParameter {
        /// The parameter's name, as YCSB's property names it where it has one.
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A discrete choice with no value of positive weight.
    NoChoices,
    /// An acknowledgement the window cannot hold: the value was already
    /// acknowledged, or is [`WINDOW_SIZE`] or more past the oldest
    /// unacknowledged one (YCSB: "Too many unacknowledged insertion keys").
    Acknowledge {
        /// The value being acknowledged.
        value: u64,
    },
}

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistError::InvalidRange { min, max } => {
                write!(f, "invalid range [{min}, {max}]: it must be non-empty and hold fewer than 2^63 values")
            }
            DistError::InvalidParameter {
                name,
                value,
                expected,
            } => write!(f, "{name} = {value} is out of range (expected {expected})"),
            DistError::NoChoices => f.write_str("no choice has a positive weight"),
            DistError::Acknowledge { value } => write!(
                f,
                "cannot acknowledge insert {value}: already acknowledged, or too many \
                 unacknowledged inserts (window of {WINDOW_SIZE})"
            ),
        }
    }
}

impl std::error::Error for DistError {}

/// Number of values in `[min, max]`, refused when empty or beyond Java's
/// `long` range (every YCSB bound is a `long`).
pub(super) fn interval(min: u64, max: u64) -> Result<u64, DistError> {
    match max.checked_sub(min) {
        Some(d) if d < i64::MAX as u64 => Ok(d + 1),
        _ => Err(DistError::InvalidRange { min, max }),
    }
}

/// Refuses a fraction outside `[0, 1]` (or NaN).
pub(super) fn check_fraction(name: &'static str, value: f64) -> Result<f64, DistError> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(DistError::InvalidParameter {
            name,
            value,
            expected: "a fraction in [0, 1]",
        })
    }
}
