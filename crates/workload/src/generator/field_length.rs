//! Field value lengths (CoreWorkload's `fieldlengthgenerator`): constant,
//! uniform, Zipfian or histogram, drawn through a shared reference so one
//! encoder can serve many connections. No I/O.

use super::java_random::abs_long_rem;
use super::{interval, DistError, HistogramGenerator, ZipfianGenerator};
use rand_core::RngCore;
use std::sync::Arc;

/// Draws the length of each field value YCSB would write, as
/// `CoreWorkload.getFieldLengthGenerator` builds it:
/// `constant` → `fieldlength`; `uniform` → `UniformLongGenerator(minfieldlength,
/// fieldlength)`; `zipfian` → `ZipfianGenerator(minfieldlength, fieldlength)`
/// (the shortest length is the most popular); `histogram` →
/// `HistogramGenerator(fieldlengthhistogram)`.
#[derive(Debug, Clone)]
pub enum FieldLengthGenerator {
    /// Every value has this length.
    Constant(u64),
    /// Uniform over `min..=max`.
    Uniform {
        /// Shortest length.
        min: u64,
        /// Number of lengths in the range.
        interval: u64,
    },
    /// Zipfian over `min..=max`.
    Zipfian(ZipfianGenerator),
    /// A bucket histogram.
    Histogram(Arc<HistogramGenerator>),
    /// memtier's `--data-size-list`: each length with a share of the draws
    /// proportional to its weight, as `(length, running total of weights)`.
    Weighted(Arc<[(u64, u64)]>),
}

impl FieldLengthGenerator {
    /// Uniform lengths over `min..=max`.
    pub fn uniform(min: u64, max: u64) -> Result<Self, DistError> {
        Ok(FieldLengthGenerator::Uniform {
            min,
            interval: interval(min, max)?,
        })
    }

    /// Zipfian lengths over `min..=max` (YCSB's constant 0.99).
    pub fn zipfian(min: u64, max: u64) -> Result<Self, DistError> {
        Ok(FieldLengthGenerator::Zipfian(ZipfianGenerator::new(
            min, max,
        )?))
    }

    /// Lengths drawn with the given weights, from `(length, weight)` pairs.
    ///
    /// # Errors
    /// For an empty list, a length or weight of 0, or weights that overflow.
    pub fn weighted(sizes: &[(u32, u32)]) -> Result<Self, DistError> {
        let mut total = 0u64;
        let mut table = Vec::with_capacity(sizes.len());
        for &(len, weight) in sizes {
            if len == 0 || weight == 0 {
                return Err(DistError::InvalidParameter {
                    name: "kvbench.fieldlengths",
                    value: if len == 0 { 0.0 } else { f64::from(len) },
                    expected: "lengths and weights of at least 1",
                });
            }
            total += u64::from(weight);
            table.push((u64::from(len), total));
        }
        if table.is_empty() {
            return Err(DistError::NoChoices);
        }
        Ok(FieldLengthGenerator::Weighted(table.into()))
    }

    /// Draws one length. Draws nothing from `rng` when lengths are constant.
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> usize {
        let len = match self {
            FieldLengthGenerator::Constant(n) => *n,
            FieldLengthGenerator::Uniform { min, interval } => min + abs_long_rem(rng, *interval),
            FieldLengthGenerator::Zipfian(z) => z.sample(rng),
            FieldLengthGenerator::Histogram(h) => h.sample(rng),
            FieldLengthGenerator::Weighted(table) => {
                let total = table.last().map_or(1, |&(_, t)| t);
                let r = abs_long_rem(rng, total);
                let i = table.partition_point(|&(_, upto)| upto <= r);
                table[i.min(table.len() - 1)].0
            }
        };
        len as usize
    }

    /// True when every draw returns the same length.
    pub fn is_constant(&self) -> bool {
        matches!(self, FieldLengthGenerator::Constant(_))
    }

    /// The largest length a draw can return (for sizing buffers and memory).
    pub fn max(&self) -> u64 {
        match self {
            FieldLengthGenerator::Constant(n) => *n,
            FieldLengthGenerator::Uniform { min, interval } => min + interval - 1,
            FieldLengthGenerator::Zipfian(z) => z.min() + z.items() - 1,
            FieldLengthGenerator::Histogram(h) => h.max(),
            FieldLengthGenerator::Weighted(table) => {
                table.iter().map(|&(len, _)| len).max().unwrap_or(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;

    #[test]
    fn weighted_lengths_follow_their_weights() {
        let w = FieldLengthGenerator::weighted(&[(100, 3), (1000, 1)]).unwrap();
        assert_eq!(w.max(), 1000);
        assert!(!w.is_constant());
        let mut rng = seeded(3);
        let n = 40_000;
        let long = (0..n).filter(|_| w.sample(&mut rng) == 1000).count();
        assert!((long as f64 / n as f64 - 0.25).abs() < 0.01, "{long}");
        assert!(FieldLengthGenerator::weighted(&[]).is_err());
        assert!(FieldLengthGenerator::weighted(&[(10, 0)]).is_err());
        assert!(FieldLengthGenerator::weighted(&[(0, 1)]).is_err());
    }

    #[test]
    fn lengths_stay_in_range() {
        let mut rng = seeded(9);
        let c = FieldLengthGenerator::Constant(100);
        assert_eq!(
            (c.sample(&mut rng), c.max(), c.is_constant()),
            (100, 100, true)
        );
        let u = FieldLengthGenerator::uniform(10, 20).unwrap();
        let z = FieldLengthGenerator::zipfian(10, 20).unwrap();
        assert_eq!((u.max(), z.max()), (20, 20));
        let (mut u_seen, mut z_min) = ([false; 11], 0);
        for _ in 0..10_000 {
            let a = u.sample(&mut rng);
            let b = z.sample(&mut rng);
            assert!((10..=20).contains(&a) && (10..=20).contains(&b), "{a} {b}");
            u_seen[a - 10] = true;
            z_min += usize::from(b == 10);
        }
        assert!(u_seen.iter().all(|&s| s));
        // The minimum is the Zipfian's most popular value: 1 / zeta(11, 0.99) ~ 0.33.
        assert!((2_900..3_800).contains(&z_min), "{z_min}");
        assert!(FieldLengthGenerator::uniform(5, 4).is_err());
    }
}
