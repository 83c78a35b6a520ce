//! Field values: random printable bytes written straight into a caller's
//! buffer, or YCSB's deterministic values for `dataintegrity`. No I/O.
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

/// Random values cut from one block of random characters.
///
/// Generating every byte of every value afresh was the largest single cost
/// in kvbench's own encoding (about a tenth of its user time at pipeline
/// 16): a byte per table lookup. A pool of 4 KiB of random alphabet
/// characters is made once, and a value is a window into it at an offset
/// drawn from the client's stream: one draw and one copy per value. Values
/// still differ from one another (about 4,000 start offsets for a 100-byte
/// value), use the same alphabet, and follow the seed; windows may share
/// substrings, which no store benchmarked here can notice (none compresses
/// or deduplicates values). redis-benchmark and memtier_benchmark use fixed
/// data patterns.
///
/// Why 4 KiB and not more: the pool must stay in the first-level cache
/// beside the client's requests in flight and the kernel's socket buffers.
/// With 64 KiB, a value's first load from the pool missed that cache on
/// nearly every write: a seventh of kvbench's user time in case (c) of
/// `bench/efficiency`, gone with 4 KiB (docs/performance.md,
/// "Instructions per operation").
#[derive(Debug, Clone)]
pub struct ValuePool {
    bytes: Vec<u8>,
}

/// Bytes in a [`ValuePool`].
const POOL_BYTES: usize = 1 << 12;
/// A longer value is cut in pieces of this size, each from its own offset.
const POOL_PIECE: usize = POOL_BYTES / 2;

impl ValuePool {
    /// A pool filled from `rng`.
    pub fn new(rng: &mut impl RngCore) -> ValuePool {
        let mut bytes = vec![0; POOL_BYTES];
        fill_value(rng, &mut bytes);
        ValuePool { bytes }
    }

    /// Fills `out` with windows of the pool, at offsets drawn from `rng`.
    #[inline]
    pub fn fill(&self, rng: &mut impl RngCore, out: &mut [u8]) {
        for piece in out.chunks_mut(POOL_PIECE) {
            piece.copy_from_slice(self.window(rng, piece.len()));
        }
    }

    /// Appends `len` bytes to `out`: the bytes [`ValuePool::fill`] would
    /// write with the same draws, without a buffer to fill first.
    #[inline]
    pub fn extend(&self, rng: &mut impl RngCore, out: &mut Vec<u8>, len: usize) {
        let mut left = len;
        while left > 0 {
            let piece = left.min(POOL_PIECE);
            out.extend_from_slice(self.window(rng, piece));
            left -= piece;
        }
    }

    /// A window of `len` (at most [`POOL_PIECE`]) bytes at an offset drawn
    /// from `rng`. The offset is the draw scaled to the number of starts
    /// (the top half of a 64 by 64-bit product, Lemire's reduction) rather
    /// than its remainder: a `div` per written value is a chain of 10-18
    /// cycles, and no YCSB semantics ask for this offset's exact formula.
    #[inline]
    fn window(&self, rng: &mut impl RngCore, len: usize) -> &[u8] {
        let starts = (POOL_BYTES - len + 1) as u128;
        let start = ((u128::from(rng.next_u64()) * starts) >> 64) as usize;
        &self.bytes[start..start + len]
    }
}

/// True when every byte of `value` could have come from [`fill_value`].
pub fn is_valid_value(value: &[u8]) -> bool {
    value.iter().all(|b| ALPHABET.contains(b))
}

/// Java's `String.hashCode` of ASCII (or Latin-1) text:
/// `h = 31 * h + c` over the characters, wrapping as an `int`. YCSB's Redis
/// binding scores its `_indices` sorted set with it, and
/// `buildDeterministicValue` chains it.
#[inline]
pub fn java_string_hash(text: &[u8]) -> i32 {
    text.iter()
        .fold(0i32, |h, &c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// Fills `out` with YCSB's deterministic value for `key` and `field` (its
/// `CoreWorkload.buildDeterministicValue`, used with `dataintegrity=true`),
/// `out.len()` bytes long.
///
/// YCSB starts from `key + ":" + field`; while that is shorter than the
/// length it appends `":"` and then the decimal `String.hashCode` of
/// everything so far (the `":"` included; negative hashes keep their `-`);
/// finally it truncates to the length. So for key `user1`, field `field9`
/// and length 20: `user1:field9` is 12 characters; `hashCode("user1:field9:")`
/// is -1268390937, giving `user1:field9:-1268390937`, truncated to
/// `user1:field9:-126839`.
///
/// The hash is kept running as characters are appended (Java rehashes the
/// whole string each time; the result is the same), so this allocates
/// nothing. Key and field must be ASCII, as kvbench's always are.
pub fn fill_deterministic_value(key: &[u8], field: &[u8], out: &mut [u8]) {
    let size = out.len();
    let mut pos = 0usize;
    let mut hash = 0i32;
    let mut push = |bytes: &[u8], pos: &mut usize, hash: &mut i32| {
        for &b in bytes {
            if *pos < size {
                out[*pos] = b;
            }
            *pos += 1;
            *hash = hash.wrapping_mul(31).wrapping_add(i32::from(b));
        }
    };
    push(key, &mut pos, &mut hash);
    push(b":", &mut pos, &mut hash);
    push(field, &mut pos, &mut hash);
    while pos < size {
        push(b":", &mut pos, &mut hash);
        // Java's Integer.toString, as itoa formats an i32.
        let mut digits = itoa::Buffer::new();
        let text = digits.format(hash).as_bytes();
        push(text, &mut pos, &mut hash);
    }
}

/// Appends YCSB's deterministic value for `key` and `field`, `len` bytes
/// long, to `out` (see [`fill_deterministic_value`]).
pub fn deterministic_value(key: &[u8], field: &[u8], len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + len, 0);
    fill_deterministic_value(key, field, &mut out[start..]);
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
    fn extending_appends_the_bytes_filling_writes() {
        let pool = ValuePool::new(&mut Xoshiro256PlusPlus::seed_from_u64(1));
        // Empty, short, one piece exactly, and longer than a piece.
        for len in [0, 1, 100, POOL_PIECE, POOL_PIECE + 7, 3 * POOL_PIECE] {
            let (mut a, mut b) = (
                Xoshiro256PlusPlus::seed_from_u64(9),
                Xoshiro256PlusPlus::seed_from_u64(9),
            );
            let mut filled = vec![0u8; len];
            pool.fill(&mut a, &mut filled);
            let mut extended = b"head".to_vec();
            pool.extend(&mut b, &mut extended, len);
            assert_eq!(&extended[..4], b"head");
            assert_eq!(&extended[4..], &filled[..], "len {len}");
            // The same draws were taken: the streams stay in step.
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn string_hash_is_javas() {
        // Values printed by Java's String.hashCode.
        assert_eq!(java_string_hash(b""), 0);
        assert_eq!(java_string_hash(b"a"), 97);
        assert_eq!(java_string_hash(b"user1"), 111_578_566);
        assert_eq!(java_string_hash(b"user6284781860667377211"), -594_971_599);
        assert_eq!(java_string_hash(b"user0000000042"), 180_881_545);
    }

    #[test]
    fn deterministic_values_are_ycsbs() {
        // Worked by hand (see fill_deterministic_value's documentation) and
        // checked against YCSB 0.17.0's own buildDeterministicValue.
        let vectors: [(&str, &str, usize, &str); 9] = [
            ("user1", "field9", 0, ""),
            ("user1", "field9", 5, "user1"),
            ("user1", "field9", 12, "user1:field9"),
            ("user1", "field9", 20, "user1:field9:-126839"),
            ("user1", "field9", 33, "user1:field9:-1268390937:70143132"),
            (
                "user1",
                "field9",
                100,
                "user1:field9:-1268390937:701431326:1606534939:-534149429:-1854609471:\
                 -1563934887:1739619784:-7954596",
            ),
            ("user6284781860667377211", "field0", 12, "user62847818"),
            (
                "user6284781860667377211",
                "field0",
                33,
                "user6284781860667377211:field0:-5",
            ),
            (
                "user6284781860667377211",
                "field0",
                100,
                "user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:\
                 -169193395:-1039977118:-10",
            ),
        ];
        for (key, field, len, want) in vectors {
            let mut out = b"x".to_vec();
            deterministic_value(key.as_bytes(), field.as_bytes(), len, &mut out);
            assert_eq!(&out[1..], want.as_bytes(), "{key} {field} {len}");
        }
        // The hash in the 20-byte vector, by hand: hashCode("user1:field9:").
        assert_eq!(java_string_hash(b"user1:field9:"), -1_268_390_937);
    }

    #[test]
    fn pool_values_use_the_alphabet_differ_and_follow_the_seed() {
        let pool = ValuePool::new(&mut Xoshiro256PlusPlus::seed_from_u64(3));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let values: Vec<Vec<u8>> = (0..1000)
            .map(|_| {
                let mut v = vec![0u8; 100];
                pool.fill(&mut rng, &mut v);
                v
            })
            .collect();
        assert!(values.iter().all(|v| is_valid_value(v)));
        let distinct: std::collections::HashSet<&Vec<u8>> = values.iter().collect();
        // 3,997 offsets: 1,000 draws hit about 885 distinct ones (birthday
        // bound; this seed's count is fixed); a fixed or badly drawn offset
        // would hit far fewer.
        assert!(distinct.len() > 850, "{} distinct of 1000", distinct.len());
        let mut again = Xoshiro256PlusPlus::seed_from_u64(4);
        let mut first = vec![0u8; 100];
        pool.fill(&mut again, &mut first);
        assert_eq!(first, values[0], "same seed, same value");
    }

    #[test]
    fn pool_fills_any_length_completely() {
        let pool = ValuePool::new(&mut Xoshiro256PlusPlus::seed_from_u64(5));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
        for len in [0, 1, 100, POOL_PIECE, POOL_BYTES, 3 * POOL_BYTES + 7] {
            // Zero bytes are not in the alphabet: any byte left unfilled shows.
            let mut buf = vec![0u8; len];
            pool.fill(&mut rng, &mut buf);
            assert!(is_valid_value(&buf), "len {len}");
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
