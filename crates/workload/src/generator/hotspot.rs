//! A hot set and a cold set of keys, each uniform, as YCSB's
//! `HotspotIntegerGenerator` (`requestdistribution=hotspot`). No I/O.

use super::java_random::{abs_long_mod, next_double, Modulus};
use super::{check_fraction, interval, DistError, NumberGenerator};
use rand_core::RngCore;

/// CoreWorkload's default `hotspotdatafraction`.
pub const HOTSPOT_DATA_FRACTION_DEFAULT: f64 = 0.2;
/// CoreWorkload's default `hotspotopnfraction`.
pub const HOTSPOT_OPN_FRACTION_DEFAULT: f64 = 0.8;

/// The lowest `hotset_fraction` of `[lb, ub]` receives `hot_opn_fraction` of
/// the draws, uniformly; the rest of the range receives the others.
///
/// The hot set's size is YCSB's `(int) (interval * hotsetFraction)`,
/// truncated and capped at 2^31 - 1 as Java's cast does.
#[derive(Debug, Clone)]
pub struct HotspotIntegerGenerator {
    lower_bound: u64,
    upper_bound: u64,
    hot_interval: Modulus,
    cold_interval: Modulus,
    hotset_fraction: f64,
    hot_opn_fraction: f64,
}

impl HotspotIntegerGenerator {
    /// Hot spot over `lower_bound..=upper_bound`.
    ///
    /// Where YCSB repairs bad input silently (a fraction outside [0, 1]
    /// becomes 0, reversed bounds are swapped) this refuses it, and it also
    /// refuses an empty hot or cold set that would be drawn from (YCSB would
    /// divide by zero).
    pub fn new(
        lower_bound: u64,
        upper_bound: u64,
        hotset_fraction: f64,
        hot_opn_fraction: f64,
    ) -> Result<Self, DistError> {
        let hotset_fraction = check_fraction("hotspotdatafraction", hotset_fraction)?;
        let hot_opn_fraction = check_fraction("hotspotopnfraction", hot_opn_fraction)?;
        let interval = interval(lower_bound, upper_bound)?;
        let hot_interval = (interval as f64 * hotset_fraction) as i32 as u64;
        let cold_interval = interval - hot_interval;
        if hot_interval == 0 && hot_opn_fraction > 0.0 {
            return Err(DistError::InvalidParameter {
                name: "hotspotdatafraction",
                value: hotset_fraction,
                expected: "a hot set of at least one key when hotspotopnfraction > 0",
            });
        }
        if cold_interval == 0 && hot_opn_fraction < 1.0 {
            return Err(DistError::InvalidParameter {
                name: "hotspotdatafraction",
                value: hotset_fraction,
                expected: "a cold set of at least one key when hotspotopnfraction < 1",
            });
        }
        Ok(HotspotIntegerGenerator {
            lower_bound,
            upper_bound,
            hot_interval: Modulus::new(hot_interval),
            cold_interval: Modulus::new(cold_interval),
            hotset_fraction,
            hot_opn_fraction,
        })
    }

    /// Draws the next value.
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        if next_double(rng) < self.hot_opn_fraction {
            self.lower_bound + abs_long_mod(rng, &self.hot_interval)
        } else {
            self.lower_bound + self.hot_interval.get() + abs_long_mod(rng, &self.cold_interval)
        }
    }

    /// Smallest value drawn.
    pub fn lower_bound(&self) -> u64 {
        self.lower_bound
    }

    /// Largest value drawn.
    pub fn upper_bound(&self) -> u64 {
        self.upper_bound
    }

    /// Share of the range that is hot.
    pub fn hotset_fraction(&self) -> f64 {
        self.hotset_fraction
    }

    /// Share of draws that go to the hot set.
    pub fn hot_opn_fraction(&self) -> f64 {
        self.hot_opn_fraction
    }
}

impl NumberGenerator for HotspotIntegerGenerator {
    #[inline]
    fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        HotspotIntegerGenerator::next_value(self, rng)
    }

    fn mean(&self) -> Option<f64> {
        let lb = self.lower_bound as f64;
        let hot = self.hot_interval.get() as f64;
        let cold = self.cold_interval.get() as f64;
        Some(
            self.hot_opn_fraction * (lb + hot / 2.0)
                + (1.0 - self.hot_opn_fraction) * (lb + hot + cold / 2.0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;

    #[test]
    fn hot_set_gets_its_share() {
        let mut rng = seeded(2);
        let mut g = HotspotIntegerGenerator::new(1000, 1999, 0.2, 0.8).unwrap();
        let mut hot = 0;
        for _ in 0..100_000 {
            let v = g.next_value(&mut rng);
            assert!((1000..=1999).contains(&v));
            hot += usize::from(v < 1200);
        }
        assert!((79_000..81_000).contains(&hot), "{hot}");
        assert_eq!(g.mean(), Some(0.8 * 1100.0 + 0.2 * 1600.0));
    }

    #[test]
    fn hot_interval_is_truncated_like_java() {
        let g = HotspotIntegerGenerator::new(0, 9, 0.25, 0.5).unwrap();
        assert_eq!(g.hot_interval.get(), 2);
        let huge = HotspotIntegerGenerator::new(0, 1 << 40, 0.5, 0.5).unwrap();
        assert_eq!(huge.hot_interval.get(), i32::MAX as u64);
    }

    #[test]
    fn refuses_what_ycsb_would_repair_or_divide_by_zero_on() {
        assert!(HotspotIntegerGenerator::new(0, 9, 1.5, 0.5).is_err());
        assert!(HotspotIntegerGenerator::new(0, 9, 0.5, f64::NAN).is_err());
        assert!(HotspotIntegerGenerator::new(9, 0, 0.5, 0.5).is_err());
        assert!(HotspotIntegerGenerator::new(0, 9, 0.05, 0.5).is_err());
        assert!(HotspotIntegerGenerator::new(0, 9, 1.0, 0.5).is_err());
        assert!(HotspotIntegerGenerator::new(0, 9, 1.0, 1.0).is_ok());
        assert!(HotspotIntegerGenerator::new(0, 9, 0.0, 0.0).is_ok());
    }
}
