//! Exponentially distributed offsets, as YCSB's `ExponentialGenerator`
//! (`requestdistribution=exponential` draws keys this far back from the
//! newest). No I/O.

use super::java_random::next_double;
use super::{DistError, NumberGenerator};
use rand_core::RngCore;

/// YCSB's default `exponential.percentile`.
pub const EXPONENTIAL_PERCENTILE_DEFAULT: f64 = 95.0;
/// YCSB's default `exponential.frac` (its string "0.8571428571", about 6/7).
pub const EXPONENTIAL_FRAC_DEFAULT: f64 = 0.8571428571;

/// Exponential with rate `gamma`: `-ln(u) / gamma` for uniform `u`.
#[derive(Debug, Clone)]
pub struct ExponentialGenerator {
    gamma: f64,
}

impl ExponentialGenerator {
    /// Exponential with the given mean.
    pub fn with_mean(mean: f64) -> Result<Self, DistError> {
        if !(mean.is_finite() && mean > 0.0) {
            return Err(DistError::InvalidParameter {
                name: "exponential mean",
                value: mean,
                expected: "a positive finite number",
            });
        }
        Ok(ExponentialGenerator { gamma: 1.0 / mean })
    }

    /// Exponential that puts `percentile` percent of its draws below `range`,
    /// as CoreWorkload builds it with `range = recordcount * exponential.frac`.
    pub fn with_percentile(percentile: f64, range: f64) -> Result<Self, DistError> {
        if !(percentile > 0.0 && percentile < 100.0) {
            return Err(DistError::InvalidParameter {
                name: "exponential.percentile",
                value: percentile,
                expected: "a percentage strictly between 0 and 100",
            });
        }
        if !(range.is_finite() && range > 0.0) {
            return Err(DistError::InvalidParameter {
                name: "exponential range",
                value: range,
                expected: "a positive finite number",
            });
        }
        Ok(ExponentialGenerator {
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        })
    }

    /// The next draw as YCSB returns it, a double (infinite when the uniform
    /// draw is exactly 0).
    #[inline]
    pub fn next_f64<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> f64 {
        -next_double(rng).ln() / self.gamma
    }

    /// The draw truncated toward zero (saturating), as a key offset.
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.next_f64(rng) as u64
    }
}

impl NumberGenerator for ExponentialGenerator {
    #[inline]
    fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        ExponentialGenerator::next_value(self, rng)
    }

    fn mean(&self) -> Option<f64> {
        Some(1.0 / self.gamma)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;
    use approx::assert_relative_eq;

    #[test]
    fn percentile_holds() {
        let mut rng = seeded(4);
        let mut g = ExponentialGenerator::with_percentile(90.0, 100.0).unwrap();
        let below = (0..100_000)
            .filter(|_| g.next_f64(&mut rng) < 100.0)
            .count();
        assert!((89_500..90_500).contains(&below), "{below}");
        assert_relative_eq!(g.mean().unwrap(), 100.0 / 10f64.ln());
    }

    #[test]
    fn mean_holds() {
        let mut rng = seeded(5);
        let mut g = ExponentialGenerator::with_mean(50.0).unwrap();
        let sum: f64 = (0..100_000).map(|_| g.next_f64(&mut rng)).sum();
        assert!((sum / 100_000.0 - 50.0).abs() < 1.0);
        assert!(ExponentialGenerator::with_mean(0.0).is_err());
        assert!(ExponentialGenerator::with_percentile(100.0, 1.0).is_err());
        assert!(ExponentialGenerator::with_percentile(95.0, f64::INFINITY).is_err());
    }
}
