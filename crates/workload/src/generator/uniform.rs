//! Uniform integers over an inclusive range, as YCSB's
//! `UniformLongGenerator`. No I/O.

use super::java_random::{abs_long_mod, Modulus};
use super::{interval, DistError, NumberGenerator};
use rand_core::RngCore;

/// Uniform over `[lb, ub]` by YCSB's formula `lb + |nextLong| % interval`.
///
/// The modulo carries the same (negligible for key counts) bias toward small
/// offsets as YCSB's; reproducing it, rather than drawing without bias, keeps
/// the distribution exactly YCSB's.
#[derive(Debug, Clone)]
pub struct UniformLongGenerator {
    lb: u64,
    ub: u64,
    interval: Modulus,
}

impl UniformLongGenerator {
    /// Uniform over `lb..=ub`, for bounds the caller has already checked.
    ///
    /// # Panics
    /// When `ub < lb` or the range holds 2^63 values or more; use
    /// [`try_new`](Self::try_new) for bounds that come from a user.
    pub fn new(lb: u64, ub: u64) -> Self {
        match Self::try_new(lb, ub) {
            Ok(g) => g,
            Err(e) => panic!("{e}"),
        }
    }

    /// Uniform over `lb..=ub`, refusing an empty or too-wide range.
    pub fn try_new(lb: u64, ub: u64) -> Result<Self, DistError> {
        Ok(UniformLongGenerator {
            lb,
            ub,
            interval: Modulus::new(interval(lb, ub)?),
        })
    }

    /// Draws the next value.
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.lb + abs_long_mod(rng, &self.interval)
    }

    /// Smallest value drawn.
    pub fn lower_bound(&self) -> u64 {
        self.lb
    }

    /// Largest value drawn.
    pub fn upper_bound(&self) -> u64 {
        self.ub
    }
}

impl NumberGenerator for UniformLongGenerator {
    #[inline]
    fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        UniformLongGenerator::next_value(self, rng)
    }

    fn mean(&self) -> Option<f64> {
        Some((self.lb as f64 + self.ub as f64) / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;

    #[test]
    fn stays_in_range_and_hits_both_ends() {
        let mut rng = seeded(1);
        let mut g = UniformLongGenerator::new(5, 9);
        let mut seen = [0u32; 5];
        for _ in 0..10_000 {
            let v = g.next_value(&mut rng);
            assert!((5..=9).contains(&v));
            seen[(v - 5) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (1800..2200).contains(&c)), "{seen:?}");
        assert_eq!(g.mean(), Some(7.0));
    }

    #[test]
    fn single_value_and_bad_ranges() {
        let mut rng = seeded(1);
        let mut g = UniformLongGenerator::new(3, 3);
        assert_eq!(g.next_value(&mut rng), 3);
        assert!(UniformLongGenerator::try_new(4, 3).is_err());
        assert!(UniformLongGenerator::try_new(0, u64::MAX).is_err());
        assert!(UniformLongGenerator::try_new(0, i64::MAX as u64 - 1).is_ok());
    }

    #[test]
    #[should_panic(expected = "invalid range")]
    fn new_panics_on_an_empty_range() {
        UniformLongGenerator::new(4, 3);
    }
}
