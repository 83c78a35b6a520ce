//! Zipfian-distributed integers by the method of Gray et al., "Quickly
//! Generating Billion-Record Synthetic Databases" (SIGMOD 1994), with the
//! semantics of YCSB's `ZipfianGenerator`, and the zeta sums it needs.
//! No I/O.

use super::java_random::next_double;
use super::{interval, DistError, NumberGenerator};
use rand_core::RngCore;

/// YCSB's default Zipfian constant (`ZipfianGenerator.ZIPFIAN_CONSTANT`).
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// Item counts up to this are summed term by term, in YCSB's order.
const DIRECT_TERMS: u64 = 1 << 22;
/// Where a long sum switches from terms to the Euler-Maclaurin tail.
const TAIL_START: u64 = 1 << 20;

/// The generalized harmonic number `sum_{i=1}^{n} 1 / i^theta`, which YCSB
/// calls zeta (`ZipfianGenerator.zetastatic(n, theta)`).
///
/// Up to 2^22 items the terms are added one by one in YCSB's order, so the
/// result is YCSB's to the last bit or so. Beyond that YCSB's loop would take
/// minutes (10^10 items is its scrambled Zipfian's item count), so the terms
/// past 2^20 are replaced by their Euler-Maclaurin sum, accurate to about
/// 1e-13 relative: closer to the exact value than YCSB's own 10^10-term sum.
pub fn zeta(n: u64, theta: f64) -> f64 {
    zeta_incremental(0, n, theta, 0.0)
}

/// Extends a zeta sum over `st` items to `n` items:
/// `initial_sum + sum_{i=st+1}^{n} 1 / i^theta`, as YCSB's
/// `zetastatic(st, n, theta, initialsum)` does when the item count grows.
/// Returns `initial_sum` unchanged when `n <= st`.
pub fn zeta_incremental(st: u64, n: u64, theta: f64, initial_sum: f64) -> f64 {
    if n <= st {
        return initial_sum;
    }
    let direct_end = if n - st <= DIRECT_TERMS {
        n
    } else {
        st.max(TAIL_START)
    };
    let mut sum = initial_sum;
    for i in st..direct_end {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    if direct_end < n {
        sum += power_sum_tail(direct_end + 1, n, theta);
    }
    sum
}

/// `sum_{k=a}^{b} k^-theta` for large `a`, by Euler-Maclaurin with three
/// derivative corrections (the next one is below 1e-30 for `a >= 2^20`).
fn power_sum_tail(a: u64, b: u64, theta: f64) -> f64 {
    let (fa, fb) = (a as f64, b as f64);
    let f = |x: f64| x.powf(-theta);
    // Integral of x^-theta from a to b, written with expm1 so that theta near 1
    // loses no precision: a^s * L * (e^{sL} - 1) / (sL), s = 1 - theta, L = ln(b/a).
    let s = 1.0 - theta;
    let l = (fb / fa).ln();
    let sl = s * l;
    let ratio = if sl == 0.0 { 1.0 } else { sl.exp_m1() / sl };
    let integral = fa.powf(s) * l * ratio;
    // Odd derivatives of x^-theta, as coefficient * x^(-theta - k).
    let d1 = -theta;
    let d3 = d1 * (theta + 1.0) * (theta + 2.0);
    let d5 = d3 * (theta + 3.0) * (theta + 4.0);
    let diff = |c: f64, k: f64| c * (fb.powf(-theta - k) - fa.powf(-theta - k));
    integral + (f(fa) + f(fb)) / 2.0 + diff(d1, 1.0) / 12.0 - diff(d3, 3.0) / 720.0
        + diff(d5, 5.0) / 30240.0
}

/// Zipfian over `[min, max]`: `min` is the most popular value, `min + 1` the
/// next, and so on. YCSB's `ZipfianGenerator`, including its behaviour when
/// the caller passes a larger item count to [`ZipfianGenerator::next_long`]:
/// zeta is extended incrementally, while eta keeps using the item count the
/// generator was built with (as YCSB's does); a smaller count is used as is,
/// with the old zeta (YCSB's `allowitemcountdecrease` is always false).
///
/// YCSB's constructor draws (and discards) one value; this one draws nothing,
/// since it has no random source until the first draw.
#[derive(Debug, Clone)]
pub struct ZipfianGenerator {
    items: u64,
    base: u64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    half_pow_theta: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: u64,
}

impl ZipfianGenerator {
    /// Zipfian over `min..=max` with YCSB's constant 0.99.
    pub fn new(min: u64, max: u64) -> Result<Self, DistError> {
        Self::with_constant(min, max, ZIPFIAN_CONSTANT)
    }

    /// Zipfian over `0..items` (YCSB's `ZipfianGenerator(long items)`).
    pub fn with_items(items: u64) -> Result<Self, DistError> {
        match items.checked_sub(1) {
            Some(max) => Self::new(0, max),
            None => Err(DistError::InvalidRange { min: 0, max: 0 }),
        }
    }

    /// Zipfian over `min..=max` with Zipfian constant `theta`, computing zeta
    /// for that many items.
    pub fn with_constant(min: u64, max: u64, theta: f64) -> Result<Self, DistError> {
        check_theta(theta)?;
        let items = interval(min, max)?;
        Self::with_zetan(min, max, theta, zeta(items, theta))
    }

    /// Zipfian over `min..=max` with constant `theta` and a precomputed zeta
    /// of the item count (YCSB's four-argument constructor).
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Result<Self, DistError> {
        check_theta(theta)?;
        let items = interval(min, max)?;
        if !(zetan.is_finite() && zetan > 0.0) {
            return Err(DistError::InvalidParameter {
                name: "zetan",
                value: zetan,
                expected: "a positive finite zeta sum",
            });
        }
        let zeta2theta = zeta(2, theta);
        let mut g = ZipfianGenerator {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            half_pow_theta: 0.5f64.powf(theta),
            zetan,
            eta: 0.0,
            count_for_zeta: items,
        };
        g.eta = g.eta_for(zetan);
        Ok(g)
    }

    /// YCSB's eta, always from the construction-time item count.
    fn eta_for(&self, zetan: f64) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / zetan)
    }

    /// Draws from a Zipfian over `itemcount` items starting at the minimum
    /// (YCSB's `nextLong(itemcount)`). A count above any seen before extends
    /// zeta incrementally first.
    #[inline]
    pub fn next_long<R: RngCore + ?Sized>(&mut self, itemcount: u64, rng: &mut R) -> u64 {
        if itemcount > self.count_for_zeta {
            self.zetan = zeta_incremental(self.count_for_zeta, itemcount, self.theta, self.zetan);
            self.count_for_zeta = itemcount;
            self.eta = self.eta_for(self.zetan);
        }
        self.draw(itemcount, rng)
    }

    /// Gray's formula for one uniform draw, with the current zeta and eta.
    #[inline]
    fn draw<R: RngCore + ?Sized>(&self, itemcount: u64, rng: &mut R) -> u64 {
        let u = next_double(rng);
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + self.half_pow_theta {
            return self.base + 1;
        }
        let offset = (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        self.base.wrapping_add(offset)
    }

    /// Draws from the item count the generator was built for without
    /// changing it: the same value [`next_value`](Self::next_value) would
    /// return, through a shared reference (field lengths are drawn this way
    /// by an encoder that is shared between connections).
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> u64 {
        self.draw(self.items, rng)
    }

    /// Draws from the item count the generator was built for.
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.next_long(self.items, rng)
    }

    /// The smallest (and most popular) value.
    pub fn min(&self) -> u64 {
        self.base
    }

    /// Items the generator was built for.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The Zipfian constant (theta).
    pub fn constant(&self) -> f64 {
        self.theta
    }

    /// The zeta sum currently in use.
    pub fn zetan(&self) -> f64 {
        self.zetan
    }
}

impl NumberGenerator for ZipfianGenerator {
    #[inline]
    fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        ZipfianGenerator::next_value(self, rng)
    }

    fn mean(&self) -> Option<f64> {
        None
    }
}

/// Gray's method needs `0 <= theta < 1` (alpha = 1 / (1 - theta)).
pub(crate) fn check_theta(theta: f64) -> Result<(), DistError> {
    if (0.0..1.0).contains(&theta) {
        Ok(())
    } else {
        Err(DistError::InvalidParameter {
            name: "zipfian constant",
            value: theta,
            expected: "0 <= theta < 1",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;
    use approx::assert_relative_eq;

    fn naive(n: u64, theta: f64) -> f64 {
        (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
    }

    #[test]
    fn zeta_small_values() {
        assert_eq!(zeta(0, 0.99), 0.0);
        assert_eq!(zeta(1, 0.99), 1.0);
        assert_relative_eq!(zeta(2, 0.99), 1.0 + 0.5f64.powf(0.99));
        assert_relative_eq!(zeta(10, 0.0), 10.0);
        // H_10 = 7381/2520.
        assert_relative_eq!(zeta(10, 1.0 - 1e-15), 7381.0 / 2520.0, max_relative = 1e-12);
        assert_eq!(zeta(100_000, 0.99), naive(100_000, 0.99));
    }

    #[test]
    fn zeta_known_values() {
        // zeta(theta) - hurwitz_zeta(theta, n + 1), computed with mpmath at 30 digits.
        let known = [
            (1_000, 0.99, 7.728_953_217_284_738),
            (100_000, 0.99, 12.778_338_062_551_17),
            (1_000_000, 0.5, 1_998.540_145_491_148_7),
            (4_194_305, 0.8, 101.123_101_996_219_73),
            (100_000_000, 0.99, 20.802_930_490_024_426),
            (10_000_000_000, 0.2, 124_999_999.271_079_04),
        ];
        for (n, theta, exact) in known {
            assert_relative_eq!(zeta(n, theta), exact, max_relative = 1e-12);
        }
    }

    #[test]
    fn incremental_matches_from_scratch() {
        let whole = zeta(5_000, 0.7);
        let part = zeta_incremental(1_000, 5_000, 0.7, zeta(1_000, 0.7));
        assert_relative_eq!(whole, part, max_relative = 1e-14);
        assert_eq!(zeta_incremental(10, 5, 0.7, 3.0), 3.0);
    }

    #[test]
    fn tail_matches_the_direct_sum() {
        for theta in [0.0, 0.5, 0.8, 0.99, 0.999_999] {
            let n = (1 << 22) + 12_345;
            let direct = zeta_incremental(0, 1 << 20, theta, 0.0)
                + ((1u64 << 20) + 1..=n)
                    .map(|i| 1.0 / (i as f64).powf(theta))
                    .sum::<f64>();
            assert_relative_eq!(zeta(n, theta), direct, max_relative = 1e-12);
        }
    }

    #[test]
    fn generator_stays_in_range_and_favours_low_items() {
        let mut rng = seeded(3);
        let mut g = ZipfianGenerator::new(10, 1009).unwrap();
        let mut counts = vec![0u32; 1000];
        for _ in 0..200_000 {
            let v = g.next_value(&mut rng);
            assert!((10..=1009).contains(&v), "{v}");
            counts[(v - 10) as usize] += 1;
        }
        // P(item 0) = 1 / zeta(1000, 0.99) ~= 0.1336.
        let p0 = f64::from(counts[0]) / 200_000.0;
        assert!((p0 - 1.0 / zeta(1000, 0.99)).abs() < 0.005, "{p0}");
        assert!(counts[0] > counts[1] && counts[1] > counts[2] && counts[2] > counts[10]);
    }

    #[test]
    fn growing_the_item_count_extends_zeta() {
        let mut rng = seeded(3);
        let mut g = ZipfianGenerator::with_items(1000).unwrap();
        g.next_long(2000, &mut rng);
        assert_relative_eq!(g.zetan(), zeta(2000, 0.99), max_relative = 1e-13);
        // Shrinking keeps the larger zeta, as YCSB does.
        g.next_long(1500, &mut rng);
        assert_relative_eq!(g.zetan(), zeta(2000, 0.99), max_relative = 1e-13);
        assert_eq!(g.items(), 1000);
    }

    #[test]
    fn refuses_bad_parameters() {
        assert!(ZipfianGenerator::with_constant(0, 10, 1.0).is_err());
        assert!(ZipfianGenerator::with_constant(0, 10, -0.1).is_err());
        assert!(ZipfianGenerator::with_constant(0, 10, f64::NAN).is_err());
        assert!(ZipfianGenerator::with_zetan(0, 10, 0.5, 0.0).is_err());
        assert!(ZipfianGenerator::new(5, 4).is_err());
        assert!(ZipfianGenerator::with_items(0).is_err());
    }
}
