//! How YCSB turns random bits into numbers (`ThreadLocalRandom.nextDouble`,
//! `nextLong`, and the `Math.abs(nextLong) % n` idiom), over any `RngCore`.
//! No I/O.

use rand_core::RngCore;

/// A uniform double in `[0, 1)`, built as Java 17's
/// `ThreadLocalRandom.nextDouble()` builds it: the top 53 bits of a 64-bit
/// draw, times 2^-53. Every YCSB generator that draws a double uses this.
#[inline]
pub fn next_double<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    // Through i64: below 2^53 both conversions are exact and equal, and a
    // signed one is a single instruction where an unsigned one is six.
    ((rng.next_u64() >> 11) as i64) as f64 * (1.0 / (1u64 << 53) as f64)
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
pub(crate) fn abs_long_mod<R: RngCore + ?Sized>(rng: &mut R, interval: &Modulus) -> u64 {
    interval.rem(next_long(rng).unsigned_abs())
}

/// [`abs_long_mod`] by a divisor used once (no [`Modulus`] prepared).
#[inline]
pub(crate) fn abs_long_rem<R: RngCore + ?Sized>(rng: &mut R, interval: u64) -> u64 {
    next_long(rng).unsigned_abs() % interval
}

/// A divisor made ready for exact remainders by a multiplication.
///
/// A 64-bit `%` by a divisor known only at run time is a `div` instruction,
/// a chain of some 10-18 cycles that the CPU cannot overlap with the draw
/// that feeds it; the uniform key chooser pays it on every operation.
/// Granlund and Montgomery ("Division by invariant integers using
/// multiplication", 1994, theorem 4.2) give the exact quotient of any `n`
/// below 2^63 as the top bits of `n * m`, with `m = ceil(2^(63+l) / d)` and
/// `l = ceil(log2 d)`; the remainder follows. `Math.abs` of a long is at
/// most 2^63, so only that one value (and a divisor of 0, which `%` refuses
/// too) takes the plain `%`. Tested against `%`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Modulus {
    d: u64,
    /// Below 2^64 for every `d` (`d` above 2^(l-1) puts `2^(63+l) / d`
    /// below 2^64), so `n * m` is one 64-bit multiplication where a u128
    /// `m` took three.
    m: u64,
    shift: u32,
    /// Numbers below it take the multiplication: 2^63, or 0 for `d == 0`.
    limit: u64,
}

impl Modulus {
    pub(crate) fn new(d: u64) -> Modulus {
        let l = 64 - d.saturating_sub(1).leading_zeros();
        let m = (d > 0)
            .then(|| (1u128 << (63 + l)).div_ceil(u128::from(d)))
            .and_then(|m| u64::try_from(m).ok());
        match m {
            Some(m) => Modulus {
                d,
                m,
                shift: 63 + l,
                limit: 1 << 63,
            },
            // A divisor of 0, which `%` refuses too, or a multiplier past
            // 64 bits (never, see `m`): every number takes `%`.
            None => Modulus {
                d,
                m: 0,
                shift: 0,
                limit: 0,
            },
        }
    }

    /// The divisor.
    pub(crate) fn get(self) -> u64 {
        self.d
    }

    /// `n % d`.
    #[inline]
    pub(crate) fn rem(self, n: u64) -> u64 {
        if n < self.limit {
            let q = ((u128::from(n) * u128::from(self.m)) >> self.shift) as u64;
            n - q * self.d
        } else {
            n % self.d
        }
    }
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
        // The signed conversion is the unsigned one for every draw.
        let mut rng = seeded(53);
        for _ in 0..100_000 {
            let x = rng.next_u64();
            let want = (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            assert_eq!(next_double(&mut Fixed(x)).to_bits(), want.to_bits(), "{x}");
        }
    }

    #[test]
    fn abs_mod_folds_the_sign() {
        let ten = Modulus::new(10);
        assert_eq!(next_long(&mut Fixed(u64::MAX)), -1);
        assert_eq!(abs_long_mod(&mut Fixed(u64::MAX), &ten), 1);
        assert_eq!(abs_long_mod(&mut Fixed(1 << 63), &ten), (1u64 << 63) % 10);
    }

    #[test]
    fn remainders_by_multiplication_are_those_of_the_division() {
        // Divisors of every size, powers of two and their neighbours (the
        // edges of `l`), and the largest; numbers at the edges and drawn.
        let mut divisors = vec![1u64, 2, 3, 7, 10, 100_000, 1_000_000_007, u64::MAX];
        divisors.extend((1..64).flat_map(|k| [(1u64 << k) - 1, 1 << k, (1 << k) + 1]));
        let mut rng = seeded(34);
        divisors.extend((0..200).map(|_| rng.next_u64() >> (rng.next_u64() % 64)));
        let mut numbers = vec![0u64, 1, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, u64::MAX];
        numbers.extend((0..2_000).map(|_| rng.next_u64() >> (rng.next_u64() % 64)));
        for &d in divisors.iter().filter(|&&d| d > 0) {
            let m = Modulus::new(d);
            assert_eq!(m.get(), d);
            assert_eq!(m.limit, 1 << 63, "{d}: its multiplier fits in 64 bits");
            for &n in numbers
                .iter()
                .chain(&[d - 1, d, d.wrapping_add(1), d.wrapping_mul(3)])
            {
                assert_eq!(m.rem(n), n % d, "{n} % {d}");
            }
        }
    }
}
