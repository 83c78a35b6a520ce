//! Field values: random printable bytes written straight into a caller's buffer.
//!
//! The alphabet is the 64 characters `A-Z a-z 0-9 + /`. It needs no escaping
//! in JSON (the Memcached record encoding) or anywhere else, so a value's
//! encoded length is known before it is generated and the engine can write it
//! into the send buffer with no temporary copy. YCSB's `RandomByteIterator`
//! draws from a wider range that includes `"` and `\`; byte-for-byte value
//! contents are not part of YCSB compatibility (its RNG is unseeded), sizes are.

use rand_core::RngCore;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Fills `out` with random characters from the 64-character alphabet.
///
/// Ten characters per 64-bit draw keeps this cheap (a 1 KB value costs about
/// a hundred RNG calls) so value generation never dominates client CPU.
#[inline]
pub fn fill_value(rng: &mut impl RngCore, out: &mut [u8]) {
    for chunk in out.chunks_mut(10) {
        let mut bits = rng.next_u64();
        for b in chunk {
            *b = ALPHABET[(bits & 63) as usize];
            bits >>= 6;
        }
    }
}

/// True when every byte of `value` could have come from [`fill_value`].
pub fn is_valid_value(value: &[u8]) -> bool {
    value.iter().all(|b| ALPHABET.contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn values_use_the_alphabet_and_every_symbol_occurs() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut buf = vec![0u8; 100_000];
        fill_value(&mut rng, &mut buf);
        assert!(is_valid_value(&buf));
        for c in ALPHABET {
            let n = buf.iter().filter(|b| *b == c).count();
            // 100,000 / 64 = 1562.5 expected; a uniform draw stays well inside +-20%.
            assert!(
                (1250..1875).contains(&n),
                "symbol {} occurred {n} times",
                *c as char
            );
        }
    }

    #[test]
    fn odd_lengths_are_filled_completely() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for len in [0, 1, 9, 10, 11, 799, 800] {
            let mut buf = vec![0u8; len];
            fill_value(&mut rng, &mut buf);
            assert!(is_valid_value(&buf), "len {len}");
        }
    }
}
