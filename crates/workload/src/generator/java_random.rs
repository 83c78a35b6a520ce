//! How YCSB turns random bits into numbers (`ThreadLocalRandom.nextDouble`,
//! `nextLong`, and the `Math.abs(nextLong) % n` idiom), over any `RngCore`.
//! No I/O.

use rand_core::RngCore;

/// A uniform double in `[0, 1)`, built as Java 17's
/// `ThreadLocalRandom.nextDouble()` builds it: the top 53 bits of a 64-bit
/// draw, times 2^-53. Every YCSB generator that draws a double uses this.
#[inline]
pub fn next_double<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform signed 64-bit integer, as `ThreadLocalRandom.nextLong()`.
#[inline]
pub fn next_long<R: RngCore + ?Sized>(rng: &mut R) -> i64 {
    rng.next_u64() as i64
}

/// YCSB's `Math.abs(random.nextLong()) % interval` (UniformLongGenerator,
/// HotspotIntegerGenerator). Folding the sign keeps the result in
/// `[0, interval)`; where Java's `Math.abs(Long.MIN_VALUE)` stays negative
/// (one draw in 2^64) and yields a negative remainder, this yields
/// `2^63 % interval` instead, because the result is an unsigned key number.
#[inline]
pub(crate) fn abs_long_mod<R: RngCore + ?Sized>(rng: &mut R, interval: u64) -> u64 {
    next_long(rng).unsigned_abs() % interval
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A "random" source that always returns the same word.
    pub(crate) struct Fixed(pub u64);

    impl RngCore for Fixed {
        fn next_u32(&mut self) -> u32 {
            self.0 as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0
        }
        fn fill_bytes(&mut self, _: &mut [u8]) {}
        fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), rand_core::Error> {
            Ok(())
        }
    }

    /// A seeded generator for tests.
    pub(crate) fn seeded(seed: u64) -> rand_xoshiro::Xoshiro256PlusPlus {
        rand_core::SeedableRng::seed_from_u64(seed)
    }

    #[test]
    fn doubles_are_in_the_unit_interval_and_use_53_bits() {
        assert_eq!(next_double(&mut Fixed(0)), 0.0);
        assert_eq!(next_double(&mut Fixed(u64::MAX)), 1.0 - f64::EPSILON / 2.0);
        assert_eq!(next_double(&mut Fixed(1 << 63)), 0.5);
        assert_eq!(next_double(&mut Fixed((1 << 11) - 1)), 0.0);
    }

    #[test]
    fn abs_mod_folds_the_sign() {
        assert_eq!(next_long(&mut Fixed(u64::MAX)), -1);
        assert_eq!(abs_long_mod(&mut Fixed(u64::MAX), 10), 1);
        assert_eq!(abs_long_mod(&mut Fixed(1 << 63), 10), (1u64 << 63) % 10);
    }
}
