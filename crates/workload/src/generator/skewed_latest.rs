//! Recency-skewed keys: the most recently inserted key is the most popular,
//! as YCSB's `SkewedLatestGenerator` (`requestdistribution=latest`). No I/O.

use super::{
    AcknowledgedCounterGenerator, DistError, LastValue, NumberGenerator, ZipfianGenerator,
    ZIPFIAN_CONSTANT,
};
use rand_core::RngCore;
use std::fmt;
use std::sync::Arc;

/// Draws `last - z`, where `last` is the counter's current last value and `z`
/// is Zipfian over `last` items: key `last` is the hottest, `last - 1` the
/// next, and so on, following inserts as they are acknowledged.
///
/// The Zipfian is built for the counter's last value at construction (so over
/// `last` items: key 0 is out of reach until more keys exist, as in YCSB) and
/// extends its zeta as the counter grows.
pub struct SkewedLatestGenerator<C: LastValue = AcknowledgedCounterGenerator> {
    basis: Arc<C>,
    zipfian: ZipfianGenerator,
}

impl<C: LastValue> SkewedLatestGenerator<C> {
    /// Skewed toward `basis`'s last value, with YCSB's constant 0.99.
    pub fn new(basis: Arc<C>) -> Result<Self, DistError> {
        Self::with_constant(basis, ZIPFIAN_CONSTANT)
    }

    /// Skewed toward `basis`'s last value with Zipfian constant `theta`.
    /// Needs a last value of at least 1 (two records), since YCSB's Zipfian
    /// over `last` items is degenerate below that.
    pub fn with_constant(basis: Arc<C>, theta: f64) -> Result<Self, DistError> {
        let last = basis.last_value().unwrap_or(0);
        if last == 0 {
            return Err(DistError::InvalidParameter {
                name: "latest: last inserted key",
                value: last as f64,
                expected: "at least 1, i.e. two or more records",
            });
        }
        let zipfian = ZipfianGenerator::with_constant(0, last - 1, theta)?;
        Ok(SkewedLatestGenerator { basis, zipfian })
    }

    /// Draws the next value, relative to the counter's last value now.
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        let max = self.basis.last_value().unwrap_or(0);
        max.saturating_sub(self.zipfian.next_long(max, rng))
    }
}

impl<C: LastValue> NumberGenerator for SkewedLatestGenerator<C> {
    #[inline]
    fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        SkewedLatestGenerator::next_value(self, rng)
    }

    fn mean(&self) -> Option<f64> {
        None
    }
}

impl<C: LastValue> Clone for SkewedLatestGenerator<C> {
    fn clone(&self) -> Self {
        SkewedLatestGenerator {
            basis: Arc::clone(&self.basis),
            zipfian: self.zipfian.clone(),
        }
    }
}

impl<C: LastValue> fmt::Debug for SkewedLatestGenerator<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkewedLatestGenerator")
            .field("last_value", &self.basis.last_value())
            .field("zipfian", &self.zipfian)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;
    use crate::generator::CounterGenerator;

    #[test]
    fn favours_the_newest_key_and_follows_the_counter() {
        let counter = Arc::new(CounterGenerator::new(0));
        for _ in 0..1000 {
            counter.next_value();
        }
        let mut g = SkewedLatestGenerator::new(Arc::clone(&counter)).unwrap();
        let mut rng = seeded(5);
        let hits = (0..10_000)
            .filter(|_| g.next_value(&mut rng) == 999)
            .count();
        assert!(hits > 1000, "{hits}");
        for _ in 0..1000 {
            counter.next_value();
        }
        let mut newest = 0;
        for _ in 0..10_000 {
            let v = g.next_value(&mut rng);
            assert!(v <= 1999);
            newest += usize::from(v == 1999);
        }
        assert!(newest > 1000, "{newest}");
    }

    #[test]
    fn needs_two_records() {
        let one = Arc::new(AcknowledgedCounterGenerator::new(1));
        assert!(SkewedLatestGenerator::new(one).is_err());
        let none = Arc::new(AcknowledgedCounterGenerator::new(0));
        assert!(SkewedLatestGenerator::new(none).is_err());
        let two = Arc::new(AcknowledgedCounterGenerator::new(2));
        assert!(SkewedLatestGenerator::new(two).is_ok());
    }
}
