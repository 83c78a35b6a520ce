//! Keys in order, wrapping around, as YCSB's `SequentialGenerator`
//! (`requestdistribution=sequential`). No I/O.

use super::{interval, DistError, NumberGenerator};
use rand_core::RngCore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// `countstart + (n % interval)` for the n-th draw, counting draws across all
/// clones: YCSB's threads share one generator, so the run as a whole walks
/// the range in order. Clones share the position.
#[derive(Debug, Clone)]
pub struct SequentialGenerator {
    counter: Arc<AtomicU64>,
    countstart: u64,
    interval: u64,
}

impl SequentialGenerator {
    /// Walks `countstart..=countend`, starting at `countstart`.
    pub fn new(countstart: u64, countend: u64) -> Result<Self, DistError> {
        Ok(SequentialGenerator {
            counter: Arc::new(AtomicU64::new(0)),
            countstart,
            interval: interval(countstart, countend)?,
        })
    }

    /// The next value; needs no randomness.
    #[inline]
    pub fn next(&self) -> u64 {
        self.countstart + self.counter.fetch_add(1, Ordering::Relaxed) % self.interval
    }

    /// The next value, in the shape of the other generators (the random
    /// source is not used).
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&mut self, _rng: &mut R) -> u64 {
        self.next()
    }
}

impl NumberGenerator for SequentialGenerator {
    #[inline]
    fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        SequentialGenerator::next_value(self, rng)
    }

    fn mean(&self) -> Option<f64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_and_wraps_across_clones() {
        let a = SequentialGenerator::new(10, 12).unwrap();
        let b = a.clone();
        let got: Vec<u64> = (0..7)
            .map(|i| if i % 2 == 0 { a.next() } else { b.next() })
            .collect();
        assert_eq!(got, [10, 11, 12, 10, 11, 12, 10]);
        assert!(SequentialGenerator::new(3, 2).is_err());
    }
}
