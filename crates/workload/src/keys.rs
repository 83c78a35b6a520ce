//! Record keys named exactly as YCSB core 0.17.0 names them
//! (`CoreWorkload.buildKeyName`, `Utils.fnvhash64`), so a kvbench data set is
//! key-for-key the data set YCSB would load. No I/O.

const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the value's 8 bytes, least
/// significant first, then Java's `Math.abs` of the result as a signed long.
///
/// Returns the bits of Java's `long`: read it `as i64` for the value Java
/// prints. `Math.abs(Long.MIN_VALUE)` is `Long.MIN_VALUE`, so one hash (bits
/// `1 << 63`) stays negative; no key number in `0..=10^10` hashes to it.
#[inline]
pub fn fnv_hash64(val: u64) -> u64 {
    let hash = if val >> 32 == 0 {
        // Every record number below 2^32 (all but the largest data sets):
        // its four high bytes are zero, and xoring a zero changes nothing,
        // so their four multiplications are one by the prime's fourth
        // power (wrapping multiplication is associative). The hash is a
        // chain of dependent multiplications on the path of every key;
        // this halves it. Same hash, tested against the byte loop.
        fnv_rounds((val as u32).to_le_bytes()).wrapping_mul(FNV_PRIME_64_POW4)
    } else {
        fnv_rounds(val.to_le_bytes())
    };
    (hash as i64).wrapping_abs() as u64
}

/// FNV-1a's rounds over `bytes`, from the offset basis.
#[inline(always)]
fn fnv_rounds<const N: usize>(bytes: [u8; N]) -> u64 {
    let mut hash = FNV_OFFSET_BASIS_64;
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    hash
}

/// `FNV_PRIME_64` to the fourth power, wrapping.
const FNV_PRIME_64_POW4: u64 = FNV_PRIME_64
    .wrapping_mul(FNV_PRIME_64)
    .wrapping_mul(FNV_PRIME_64)
    .wrapping_mul(FNV_PRIME_64);

/// `n` in decimal as Java's `Long.toString` writes it, in `buf`: every key
/// name has these digits (19 of them for nearly every hashed key), and
/// writing them eight at a time in one register, rather than two at a time
/// as `itoa` does, takes fewer instructions (docs/performance.md,
/// "Instructions per operation").
#[inline]
fn decimal(n: i64, buf: &mut [u8; KEY_BUF]) -> &[u8] {
    if n < 0 {
        return decimal_negative(n, buf);
    }
    let start = digits_at(n as u64, buf);
    &buf[start..]
}

/// Room for a key built in place: a prefix of up to 8 bytes, then the 24
/// digits three eight-digit words hold.
const KEY_BUF: usize = 32;

/// `n` (at most 19 digits) as 24 ASCII digits, leading zeros included, in
/// three little-endian words (the first digit in the first word's lowest
/// byte), and the index among the 24 of its first significant digit (23,
/// the last, for 0).
#[inline]
fn digit_words(n: u64) -> ([u64; 3], usize) {
    // Both quotients straight from `n` (each a multiplication by a
    // constant), so the three words do not wait on one another.
    let (top, eights) = (n / 10u64.pow(16), n / 10u64.pow(8));
    let (mid, low) = (eights - top * 10u64.pow(8), n - eights * 10u64.pow(8));
    // At most 19 digits: the top word holds at most three, read from a
    // table (one load where the conversion is a chain of five products).
    let top_word = match THREE_DIGITS.get(top as usize) {
        Some(&d) => u64::from(d) << 40,
        None => eight_digits(top as u32),
    };
    let (mid_word, low_word) = two_eight_digits(mid as u32, low as u32);
    let words = [top_word, mid_word, low_word];
    (words.map(|w| w | ASCII_ZEROS), 24 - decimal_len(n))
}

/// How many digits `n` has in decimal (1 for 0), from `n` alone. A key's
/// length decides where every later byte of its request goes; read off
/// the finished digit words instead, it waited for their whole conversion
/// (and took 15 more instructions per operation; docs/performance.md,
/// "2026-11-29, night").
#[inline(always)]
fn decimal_len(n: u64) -> usize {
    // floor(log10(2) * bits) for the bits `n` spans (1233 / 4096 is
    // log10(2) to within 0.01%, close enough for 64 bits): that many
    // digits, or one more when `n` reaches the next power of ten.
    let bits = 64 - (n | 1).leading_zeros() as usize;
    let guess = (bits * 1233) >> 12;
    guess + usize::from(n | 1 >= POWERS_OF_TEN[guess])
}

/// 10^k for k in 0..20 (every `guess` of [`decimal_len`], at most 19).
static POWERS_OF_TEN: [u64; 20] = powers_of_ten();

const fn powers_of_ten() -> [u64; 20] {
    let mut t = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
}

/// The digits of 0..=999 (values 0-9, not ASCII), the hundreds in the
/// lowest byte: the last three bytes of [`eight_digits`]'s word.
static THREE_DIGITS: [u32; 1000] = three_digits();

const fn three_digits() -> [u32; 1000] {
    let mut t = [0u32; 1000];
    let mut n = 0;
    while n < 1000 {
        t[n] = (n / 100) as u32 | (((n / 10 % 10) as u32) << 8) | (((n % 10) as u32) << 16);
        n += 1;
    }
    t
}

/// Writes `n` (at most 19 digits) as 24 digits, leading zeros included,
/// into `buf[8..]`, and returns where its first significant digit is (the
/// last digit for 0): always at least 8.
#[inline]
fn digits_at(n: u64, buf: &mut [u8; KEY_BUF]) -> usize {
    let (words, first_digit) = digit_words(n);
    for (chunk, w) in buf[8..].chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    8 + first_digit
}

/// A key name ready to be written ([`KeyNamer::name`]): its prefix and its
/// digits as words, which [`KeyName::append_to`] stores straight into
/// the output, eight bytes at a time. Building the key in a buffer on the
/// stack and copying it out instead loads wide pieces that straddle the
/// words just stored there, a store-forwarding stall on every key
/// (docs/performance.md, "Instructions per operation").
#[derive(Debug, Clone, Copy)]
pub struct KeyName {
    /// The prefix's bytes, the first in the lowest byte.
    prefix: u64,
    prefix_len: usize,
    /// 24 ASCII digits, the number's leading zeros included.
    words: [u64; 3],
    /// Digits of `words` left out at the front.
    skip: usize,
    len: usize,
}

impl KeyName {
    /// The room [`KeyName::store`] writes in: 8 bytes of prefix and 24
    /// digits. No store runs past it: the first digit word's ends at most
    /// 16 bytes in, and every later one ends where the name does or before.
    pub const ROOM: usize = 32;

    /// The name's length in bytes (at most 32).
    #[inline]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the name's prefix holds `byte` (not 0); the rest of a
    /// name is digits. A cluster router asks for `{`: a name without one
    /// has no hash tag, so its slot is the whole name's, with no search.
    #[inline(always)]
    pub fn prefix_holds(&self, byte: u8) -> bool {
        // The prefix word's unused bytes are 0, never `byte`: a zero byte
        // of `x` marks a match (the exact "has a zero byte" test).
        let x = self.prefix ^ (u64::from(byte) * 0x0101_0101_0101_0101);
        x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080 != 0
    }

    /// Appends the name to `out`. Always inlined, so the name's words go
    /// from registers to `out` without a stop in memory.
    #[inline(always)]
    pub fn append_to(&self, out: &mut Vec<u8>) {
        let at = out.len();
        // Room for every store below, whole words each, then cut back.
        out.extend_from_slice(&[0u8; Self::ROOM]);
        let room: &mut [u8; Self::ROOM] = match (&mut out[at..]).try_into() {
            Ok(room) => room,
            Err(_) => unreachable!("ROOM bytes were just appended"),
        };
        self.store(room);
        out.truncate(at + self.len);
    }

    /// The name's bytes, written into `room` ([`KeyName::store`]): for
    /// hashing a name where it lies, on the stack, without a buffer.
    #[inline(always)]
    pub fn bytes_in<'a>(&self, room: &'a mut [u8; Self::ROOM]) -> &'a [u8] {
        self.store(room);
        &room[..self.len.min(Self::ROOM)]
    }

    /// Writes the name at the start of `room`, and zeros or digits of no
    /// meaning after it: an encoder that writes a request's head in one
    /// fixed-size piece of its buffer writes the name there, then what
    /// follows it over the rest.
    #[inline(always)]
    pub fn store(&self, room: &mut [u8; Self::ROOM]) {
        room[..8].copy_from_slice(&self.prefix.to_le_bytes());
        // The first word holding a digit shown, shifted so that digit is
        // its lowest byte; each whole word after it.
        let (first, shift) = (self.skip / 8, self.skip % 8);
        let mut at = self.prefix_len.min(8);
        let head = self.words[first.min(2)] >> (8 * shift);
        room[at..at + 8].copy_from_slice(&head.to_le_bytes());
        at += 8 - shift;
        for &w in &self.words[(first + 1).min(3)..] {
            let at8 = at.min(Self::ROOM - 8);
            room[at8..at8 + 8].copy_from_slice(&w.to_le_bytes());
            at += 8;
        }
    }
}

/// Added to a digit (0..=9) in each byte, the digits' ASCII characters.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// The one negative hash ([`fnv_hash64`]'s `Long.MIN_VALUE`), and any
/// negative number: rare, so written the plain way.
#[cold]
fn decimal_negative(n: i64, buf: &mut [u8; KEY_BUF]) -> &[u8] {
    let mut digits = itoa::Buffer::new();
    let text = digits.format(n).as_bytes();
    let start = buf.len() - text.len();
    buf[start..].copy_from_slice(text);
    &buf[start..]
}

/// `n` (below 10^8) as exactly eight digits, one a byte (0..=9, the first
/// in the lowest byte, leading zeros included), computed in one 64-bit
/// word: its two halves of four digits split into pairs and then into
/// digits with multiply-and-shift divisions that hold for every value in
/// range (Lemire, "Converting integers to fixed-digit representations
/// quickly", 2021; tested against formatting).
#[inline]
fn eight_digits(n: u32) -> u64 {
    let (hi, lo) = (u64::from(n / 10_000), u64::from(n % 10_000));
    // Two 32-bit lanes of four digits each, the high half in the low lane
    // (it is the first in memory, little-endian).
    let merged = hi | (lo << 32);
    let top = ((merged * 10_486) >> 20) & ((0x7F << 32) | 0x7F);
    let bottom = merged - 100 * top;
    // Four 16-bit lanes of two digits each.
    let hundreds = (bottom << 16) | top;
    let tens = ((hundreds * 103) >> 10) & ((0xF << 48) | (0xF << 32) | (0xF << 16) | 0xF);
    // Eight 8-bit lanes of one digit each.
    tens + ((hundreds - 10 * tens) << 8)
}

/// [`eight_digits`] of `a` and of `b` (each below 10^8). On x86-64 both
/// in one SSE2 register (baseline there): the 16 digits of a hashed key's
/// two low words took two chains of scalar products, some 47 instructions
/// on the path of every key, and take 36 this way (cachegrind).
#[inline(always)]
fn two_eight_digits(a: u32, b: u32) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of every x86-64 CPU (the architecture's
    // baseline), so its instructions run wherever this build does.
    unsafe {
        sse2::two_eight_digits(a, b)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (eight_digits(a), eight_digits(b))
    }
}

/// Eight digits per 128-bit register with SSE2's 16-bit multiplications
/// (Muła, "SSE: conversion integers to decimal representation", 2011):
/// `n` divided by 10^4 in its 32-bit lane, each half of four digits spread
/// over four 16-bit lanes and divided there by 10^3, 10^2, 10 and 1 (a
/// high-half product by a reciprocal, then one by a power of two that
/// shifts each lane by its own amount), and each lane's quotient less ten
/// times its left neighbour's is its digit. Tested against formatting.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use core::arch::x86_64::{
        __m128i, _mm_cvtsi128_si64, _mm_cvtsi32_si128, _mm_mul_epu32, _mm_mulhi_epu16,
        _mm_mullo_epi16, _mm_packus_epi16, _mm_set1_epi16, _mm_set1_epi32, _mm_set_epi16,
        _mm_slli_epi64, _mm_srli_epi64, _mm_sub_epi16, _mm_sub_epi32, _mm_unpackhi_epi64,
        _mm_unpacklo_epi16, _mm_unpacklo_epi32,
    };

    /// `n` (below 10^8) as eight 16-bit lanes of one digit each, the first
    /// digit in the lowest lane.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn eight(n: u32) -> __m128i {
        let n = _mm_cvtsi32_si128(n as i32);
        // ceil(2^45 / 10^4): exact quotients for every n below 3 * 10^10.
        let high = _mm_srli_epi64::<45>(_mm_mul_epu32(n, _mm_set1_epi32(0xD1B7_1759_u32 as i32)));
        let low = _mm_sub_epi32(n, _mm_mul_epu32(high, _mm_set1_epi32(10_000)));
        // [high, low] in 16-bit lanes, times 4 (room for the reciprocals'
        // precision), then each four times: [h h h h l l l l].
        let pair = _mm_slli_epi64::<2>(_mm_unpacklo_epi16(high, low));
        let twice = _mm_unpacklo_epi16(pair, pair);
        let quads = _mm_unpacklo_epi32(twice, twice);
        // Divided by 10^3, 10^2, 10, 1: [a, ab, abc, abcd, e, ef, efg, efgh].
        let divide = _mm_set_epi16(
            -32768, 13108, 5243, 8389, -32768, 13108, 5243, 8389, // 2^15 as i16
        );
        // Hidden from the optimiser: seeing powers of two, it turns this
        // product into per-lane shifts, which SSE2 lacks and emulates in
        // some 30 instructions.
        let shift = core::hint::black_box(_mm_set_epi16(
            -32768, 8192, 2048, 128, -32768, 8192, 2048, 128,
        ));
        let prefixes = _mm_mulhi_epu16(_mm_mulhi_epu16(quads, divide), shift);
        // Each prefix less ten times the one before it (0 at each half's start).
        let tens = _mm_slli_epi64::<16>(_mm_mullo_epi16(prefixes, _mm_set1_epi16(10)));
        _mm_sub_epi16(prefixes, tens)
    }

    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn two_eight_digits(a: u32, b: u32) -> (u64, u64) {
        let digits = _mm_packus_epi16(eight(a), eight(b));
        (
            _mm_cvtsi128_si64(digits) as u64,
            _mm_cvtsi128_si64(_mm_unpackhi_epi64(digits, digits)) as u64,
        )
    }
}

/// Turns record numbers into key names (YCSB's `buildKeyName`): `prefix`,
/// then zeros up to `zero_padding` characters of number, then the number
/// (Java's `Long.toString`, so with a leading `-` when negative; the zeros go
/// before the sign, as YCSB puts them). The number is the record number's
/// [`fnv_hash64`] unless inserts are ordered (`insertorder=ordered`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyNamer {
    ordered: bool,
    zero_padding: usize,
    prefix: String,
    /// A prefix of up to 8 bytes as a little-endian word (`user` as the
    /// bytes `user\0\0\0\0`), so that [`KeyName`] stores it with one
    /// fixed-size store; `None` for a longer prefix.
    prefix_word: Option<u64>,
}

/// `prefix` as the first bytes of a word, when it fits in one.
fn prefix_word(prefix: &str) -> Option<u64> {
    let p = prefix.as_bytes();
    let mut word = [0u8; 8];
    word.get_mut(..p.len())?.copy_from_slice(p);
    Some(u64::from_le_bytes(word))
}

impl Default for KeyNamer {
    /// YCSB's defaults: hashed, `zeropadding=1`, prefix `user`.
    fn default() -> Self {
        KeyNamer::new(false, 1)
    }
}

impl KeyNamer {
    /// A namer with YCSB's `user` prefix; `ordered` is `insertorder=ordered`,
    /// `zero_padding` is `zeropadding`.
    pub fn new(ordered: bool, zero_padding: usize) -> Self {
        KeyNamer {
            ordered,
            zero_padding,
            prefix: "user".to_owned(),
            prefix_word: prefix_word("user"),
        }
    }

    /// The same namer with another prefix.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self.prefix_word = prefix_word(&self.prefix);
        self
    }

    /// Whether keys are numbered in insert order rather than hashed.
    pub fn ordered(&self) -> bool {
        self.ordered
    }

    /// Minimum number of characters of the number part.
    pub fn zero_padding(&self) -> usize {
        self.zero_padding
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Appends the name of record `keynum` to `out`. Allocates nothing beyond
    /// `out`'s own growth, so it can run on the hot path with a reused buffer.
    #[inline]
    pub fn write_key(&self, keynum: u64, out: &mut Vec<u8>) {
        let number = self.number(keynum);
        match self.name_of(number) {
            Some(name) => name.append_to(out),
            None => self.write_key_padded(number, out),
        }
    }

    /// Record `keynum`'s name, computed but not yet written, when it has
    /// the form of every key of YCSB's defaults (a prefix of up to 8 bytes,
    /// at most 24 digits of padding, a number that is not negative):
    /// [`KeyName::len`] is known before a byte is written, so an encoder
    /// can write a length header first and then the key straight into its
    /// request (no key buffer between). `None` for other names, which
    /// [`KeyNamer::write_key`] writes the plain way.
    ///
    /// Always inlined: returned through memory, the name was stored in
    /// words and loaded in wider pieces straddling them, a
    /// store-forwarding stall on every key (a tenth of the samples of the
    /// client's request loop).
    #[inline(always)]
    pub fn name(&self, keynum: u64) -> Option<KeyName> {
        self.name_of(self.number(keynum))
    }

    /// [`KeyNamer::name`] of the name showing `number`.
    #[inline(always)]
    fn name_of(&self, number: i64) -> Option<KeyName> {
        match self.prefix_word {
            Some(prefix) if number >= 0 && self.zero_padding <= 24 => {
                let (words, first_digit) = digit_words(number as u64);
                let digits = (24 - first_digit).max(self.zero_padding);
                let prefix_len = self.prefix.len();
                Some(KeyName {
                    prefix,
                    prefix_len,
                    words,
                    skip: 24 - digits,
                    len: prefix_len + digits,
                })
            }
            _ => None,
        }
    }

    /// The number record `keynum`'s name shows: its hash, or itself when
    /// inserts are ordered (as Java's `long`).
    #[inline]
    fn number(&self, keynum: u64) -> i64 {
        if self.ordered {
            keynum as i64
        } else {
            fnv_hash64(keynum) as i64
        }
    }

    /// [`KeyNamer::write_key`] for a long prefix, wide padding or a
    /// negative number (Java puts the padding zeros before the sign).
    #[cold]
    fn write_key_padded(&self, number: i64, out: &mut Vec<u8>) {
        let mut digits = [0u8; KEY_BUF];
        let text = decimal(number, &mut digits);
        out.reserve(self.prefix.len() + self.zero_padding.max(text.len()));
        out.extend_from_slice(self.prefix.as_bytes());
        let fill = self.zero_padding.saturating_sub(text.len());
        if fill > 0 {
            out.resize(out.len() + fill, b'0');
        }
        out.extend_from_slice(text);
    }

    /// The name of record `keynum`, as a new string (for cold paths).
    pub fn key(&self, keynum: u64) -> String {
        let mut out = Vec::with_capacity(self.max_len());
        self.write_key(keynum, &mut out);
        // Prefix is a String and the rest is ASCII, so the bytes are UTF-8.
        String::from_utf8(out).expect("a UTF-8 prefix followed by ASCII")
    }

    /// The longest name this namer can produce, for sizing buffers.
    pub fn max_len(&self) -> usize {
        self.prefix.len() + self.zero_padding.max(20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_digits_match_formatting_for_every_pair_of_halves_tried() {
        // Each half of four digits, every value, beside several others;
        // converted alone, and two at a time with each number in either word.
        for a in 0..10_000u32 {
            for b in [0, 1, 9, 10, 99, 100, 999, 1000, 5_555, 9_999] {
                let (x, y) = (a * 10_000 + b, b * 10_000 + a);
                let (wx, wy) = two_eight_digits(x, y);
                for (n, two) in [(x, wx), (y, wy)] {
                    let want = format!("{n:08}");
                    let got = (eight_digits(n) | ASCII_ZEROS).to_le_bytes();
                    assert_eq!(got, want.as_bytes(), "{n}");
                    assert_eq!((two | ASCII_ZEROS).to_le_bytes(), want.as_bytes(), "{n}");
                }
            }
        }
        for n in [99_999_999u32, 10_000_000, 12_345_678, 87_654_321] {
            assert_eq!(
                two_eight_digits(n, n),
                (eight_digits(n), eight_digits(n)),
                "{n}"
            );
        }
    }

    #[test]
    fn digit_words_are_formatting_for_every_top_word() {
        // Every value of the top word (the table's), and 20-digit numbers
        // (past the table, converted the long way) alike.
        let tops = (0..1000u64).map(|top| top * 10u64.pow(16) + 1_234_567_890_123_456);
        for n in tops.chain([10u64.pow(16) - 1, 10u64.pow(19), u64::MAX]) {
            let (words, first) = digit_words(n);
            let got: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(got, format!("{n:024}").as_bytes(), "{n}");
            assert_eq!(&got[first..], n.to_string().as_bytes(), "{n}");
        }
    }

    #[test]
    fn decimal_len_counts_what_formatting_writes() {
        // Both sides of every power of ten and of every power of two.
        let mut values = vec![0u64, u64::MAX];
        for k in 0..20 {
            let p = 10u64.pow(k);
            values.extend([p - 1, p, p + 1]);
        }
        for k in 0..64 {
            let p = 1u64 << k;
            values.extend([p - 1, p, p | (p - 1)]);
        }
        for n in values {
            assert_eq!(decimal_len(n), n.to_string().len(), "{n}");
        }
    }

    #[test]
    fn decimal_writes_what_formatting_writes() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut values = vec![0i64, 1, 9, 10, 99, 100, i64::MAX, i64::MIN, -1, -42];
        values.extend((0..19).map(|k| 10i64.pow(k)));
        values.extend((1..19).map(|k| 10i64.pow(k) - 1));
        for _ in 0..100_000 {
            // splitmix64: hashed keys' values, every length.
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            values.push((z >> (z % 63)) as i64);
            values.push(z as i64);
        }
        let mut buf = [0u8; KEY_BUF];
        for v in values {
            assert_eq!(decimal(v, &mut buf), v.to_string().as_bytes(), "{v}");
        }
    }

    #[test]
    fn keys_are_ycsb_names_for_hashed_and_ordered_numbers() {
        let hashed = KeyNamer::default();
        for k in [0u64, 1, 2, 99_999, 1_000_000] {
            let want = format!("user{}", fnv_hash64(k) as i64);
            assert_eq!(hashed.key(k), want);
        }
        let padded = KeyNamer::new(true, 10);
        assert_eq!(padded.key(42), "user0000000042");
        assert_eq!(padded.key(12_345_678_901), "user12345678901");
        let mut out = b"x:".to_vec();
        KeyNamer::new(true, 1)
            .with_prefix("k")
            .write_key(0, &mut out);
        assert_eq!(out, b"x:k0");
    }

    #[test]
    fn the_one_negative_hash_pads_before_the_sign() {
        // Math.abs(Long.MIN_VALUE) stays negative; YCSB's padding counts the
        // '-' and goes in front of it.
        assert_eq!(((1u64 << 63) as i64).wrapping_abs(), i64::MIN);
        let namer = KeyNamer::new(true, 22);
        assert_eq!(namer.key(1 << 63), "user00-9223372036854775808");
    }

    #[test]
    fn the_hash_of_a_small_number_is_the_byte_loops() {
        let plain = |val: u64| (fnv_rounds(val.to_le_bytes()) as i64).wrapping_abs() as u64;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut values = vec![
            0u64,
            1,
            255,
            256,
            u32::MAX as u64,
            1 << 32,
            u64::MAX,
            1 << 63,
        ];
        values.extend((0..100_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> (x % 64)
        }));
        for v in values {
            assert_eq!(fnv_hash64(v), plain(v), "{v}");
        }
    }

    #[test]
    fn known_hashes_and_names() {
        assert_eq!(fnv_hash64(0), 6284781860667377211);
        assert_eq!(KeyNamer::default().key(0), "user6284781860667377211");
        assert_eq!(KeyNamer::new(true, 10).key(42), "user0000000042");
        assert_eq!(KeyNamer::new(true, 1).key(42), "user42");
        assert_eq!(KeyNamer::new(true, 3).with_prefix("k").key(5), "k005");
    }

    #[test]
    fn write_key_appends() {
        let namer = KeyNamer::new(true, 4);
        let mut out = b"x:".to_vec();
        namer.write_key(7, &mut out);
        namer.write_key(12345, &mut out);
        assert_eq!(out, b"x:user0007user12345");
        assert!(namer.max_len() >= "user12345".len());
    }

    #[test]
    fn a_name_knows_which_bytes_its_prefix_holds() {
        // Each byte at each place of prefixes of every length that fits a
        // word; a digit is never in a prefix of letters, nor 0 in any.
        for len in 1..=8 {
            for at in 0..len {
                for byte in [b'{', b'}', b'a', 0x7f, 0x80, 0xff] {
                    let mut prefix = vec![b'u'; len];
                    prefix[at] = byte;
                    let prefix = String::from_utf8_lossy(&prefix).into_owned();
                    let namer = KeyNamer::new(true, 1).with_prefix(prefix.clone());
                    let Some(name) = namer.name(42) else {
                        continue;
                    };
                    for probe in [b'{', b'}', b'a', b'u', b'4', b'2', 0x7f, 0x80, 0xff, 0x01] {
                        assert_eq!(
                            name.prefix_holds(probe),
                            prefix.as_bytes().contains(&probe),
                            "{prefix:?} {probe}"
                        );
                    }
                }
            }
        }
        let empty = KeyNamer::new(true, 1).with_prefix("");
        let name = empty.name(7).expect("an empty prefix fits a word");
        assert!(!name.prefix_holds(b'{'));
    }

    #[test]
    fn keys_built_in_place_match_the_plain_way_for_every_prefix_and_padding() {
        // Prefixes that fit the in-place word and one that does not,
        // paddings on both sides of the 24 digits the words hold, and
        // numbers of every length (ordered namers write them unhashed).
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut numbers = vec![0u64, 9, 10, i64::MAX as u64, 1 << 63];
        numbers.extend((0..19).map(|k| 10u64.pow(k)));
        numbers.extend((0..2_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> (x % 64)
        }));
        for prefix in ["", "k", "user", "abcdefgh", "abcdefghi"] {
            for padding in [0, 1, 5, 19, 20, 23, 24, 25, 30] {
                for ordered in [true, false] {
                    let namer = KeyNamer::new(ordered, padding).with_prefix(prefix);
                    for &n in &numbers {
                        let number = if ordered { n } else { fnv_hash64(n) } as i64;
                        let mut plain = b"x".to_vec();
                        namer.write_key_padded(number, &mut plain);
                        let mut fast = b"x".to_vec();
                        namer.write_key(n, &mut fast);
                        assert_eq!(fast, plain, "{prefix} {padding} {n}");
                        if number >= 0 {
                            let want = format!("x{prefix}{number:0padding$}");
                            assert_eq!(fast, want.as_bytes());
                        }
                    }
                }
            }
        }
    }
}
