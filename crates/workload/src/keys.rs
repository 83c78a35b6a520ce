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
    let mut hash = FNV_OFFSET_BASIS_64;
    for byte in val.to_le_bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    (hash as i64).wrapping_abs() as u64
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
        }
    }

    /// The same namer with another prefix.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
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
        let number = if self.ordered {
            keynum
        } else {
            fnv_hash64(keynum)
        };
        // Java formats a signed long, as itoa does an i64.
        let mut digits = itoa::Buffer::new();
        let text = digits.format(number as i64).as_bytes();
        out.extend_from_slice(self.prefix.as_bytes());
        let fill = self.zero_padding.saturating_sub(text.len());
        out.resize(out.len() + fill, b'0');
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
    fn the_one_negative_hash_pads_before_the_sign() {
        // Math.abs(Long.MIN_VALUE) stays negative; YCSB's padding counts the
        // '-' and goes in front of it.
        assert_eq!(((1u64 << 63) as i64).wrapping_abs(), i64::MIN);
        let namer = KeyNamer::new(true, 22);
        assert_eq!(namer.key(1 << 63), "user00-9223372036854775808");
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
}
