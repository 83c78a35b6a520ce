//! Byte-level helpers shared by the codecs: decimal formatting and parsing
//! without `str` conversion, and CRLF line framing.
//!
//! Must not allocate (beyond appending to the caller's buffer) and must never
//! panic on arbitrary input; every index into network data is bounds-checked.

use crate::DecodeError;

/// Appends `n` in decimal. Hand-written because `write!` goes through the
/// formatting machinery, which is measurably slower on the per-request path.
/// Numbers below 1,000 (every array length and most bulk lengths a request
/// carries) are written without the loop and without a variable-length copy.
#[inline]
pub(crate) fn write_dec(buf: &mut Vec<u8>, n: u64) {
    let d = |x: u64| b'0' + (x % 10) as u8;
    match n {
        0..=9 => buf.push(d(n)),
        10..=99 => buf.extend_from_slice(&[d(n / 10), d(n)]),
        100..=999 => buf.extend_from_slice(&[d(n / 100), d(n / 10), d(n)]),
        _ => write_dec_long(buf, n),
    }
}

/// Appends `lead`, `n` in decimal and CRLF: a RESP header (`*3\r\n`,
/// `$23\r\n`). Below 1,000 (every array length and most bulk lengths a
/// request carries) the header is one fixed-size append, where writing its
/// three parts one after another cost about 35 instructions per header
/// (docs/performance.md, "Instructions per operation").
#[inline(always)]
pub(crate) fn write_header(buf: &mut Vec<u8>, lead: u8, n: u64) {
    let d = |x: u64| b'0' + (x % 10) as u8;
    match n {
        0..=9 => buf.extend_from_slice(&[lead, d(n), b'\r', b'\n']),
        10..=99 => buf.extend_from_slice(&[lead, d(n / 10), d(n), b'\r', b'\n']),
        100..=999 => buf.extend_from_slice(&[lead, d(n / 100), d(n / 10), d(n), b'\r', b'\n']),
        _ => write_header_long(buf, lead, n),
    }
}

#[cold]
fn write_header_long(buf: &mut Vec<u8>, lead: u8, n: u64) {
    buf.push(lead);
    write_dec_long(buf, n);
    buf.extend_from_slice(b"\r\n");
}

#[inline(never)]
fn write_dec_long(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// `fill` (which writes a slice of exactly `len` bytes) as an `extend` of the
/// encoders that append their data (`resp::write_bulk_extend`,
/// `memcache_text`'s storage commands): the data's place is zeroed first,
/// since safe code cannot hand out uninitialised memory, then filled.
#[inline]
pub(crate) fn filled(len: usize, fill: impl FnOnce(&mut [u8])) -> impl FnOnce(&mut Vec<u8>) {
    move |buf| {
        let start = buf.len();
        buf.resize(start + len, 0);
        fill(&mut buf[start..]);
    }
}

/// Parses a token that must consist only of ASCII digits. Saturates instead of
/// overflowing so callers can turn "too big" into their own bound check.
#[inline]
pub(crate) fn parse_dec(s: &[u8]) -> Result<u64, DecodeError> {
    if s.is_empty() {
        return Err(DecodeError::Protocol);
    }
    let mut n: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return Err(DecodeError::Protocol);
        }
        n = n.saturating_mul(10).saturating_add(u64::from(b - b'0'));
    }
    Ok(n)
}

/// Checks for CRLF at `i`. `Ok(None)` when the bytes have not arrived yet;
/// anything else in that position is a framing error (this is what catches a
/// data block longer than its declared length).
#[inline]
pub(crate) fn expect_crlf(buf: &[u8], i: usize) -> Result<Option<usize>, DecodeError> {
    match buf.get(i) {
        None => Ok(None),
        Some(b'\r') => match buf.get(i + 1) {
            None => Ok(None),
            Some(b'\n') => Ok(Some(i + 2)),
            Some(_) => Err(DecodeError::Protocol),
        },
        Some(_) => Err(DecodeError::Protocol),
    }
}

/// Finds the line starting at `start`. Returns `(end, next)`: `end` is the index
/// of the terminating CR (exclusive end of the line contents), `next` the index
/// after LF. Searches for LF rather than CR so that a bare `\n` is reported as a
/// framing error instead of waiting forever; a line longer than `max_line`
/// without a terminator is `TooLarge` so garbage cannot grow the buffer unbounded.
#[inline]
pub(crate) fn find_line(
    buf: &[u8],
    start: usize,
    max_line: usize,
) -> Result<Option<(usize, usize)>, DecodeError> {
    let rest = buf.get(start..).unwrap_or(&[]);
    let window = &rest[..rest.len().min(max_line + 2)];
    // Short lines (`+OK`, `$100`, `END`, `STORED`) end within 8 bytes, where
    // a byte loop is cheapest; a longer one (a Memcached `VALUE` line, 37
    // bytes) is searched by memchr, 16 or 32 bytes at a time, where the
    // byte loop took about 5 instructions per byte (docs/performance.md).
    let head = &window[..window.len().min(8)];
    let found = head
        .iter()
        .position(|&b| b == b'\n')
        .or_else(|| memchr::memchr(b'\n', &window[head.len()..]).map(|off| off + head.len()));
    match found {
        Some(off) => {
            if off == 0 || window[off - 1] != b'\r' {
                return Err(DecodeError::Protocol);
            }
            Ok(Some((start + off - 1, start + off + 1)))
        }
        None if window.len() >= max_line + 2 => Err(DecodeError::TooLarge),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_dec_edges() {
        for n in [
            0u64,
            7,
            9,
            10,
            42,
            99,
            100,
            500,
            999,
            1000,
            1234567890,
            u64::MAX,
        ] {
            let mut b = b"x".to_vec();
            write_dec(&mut b, n);
            assert_eq!(b, format!("x{n}").into_bytes());
        }
        for n in 0..=2000u64 {
            let mut b = Vec::new();
            write_dec(&mut b, n);
            assert_eq!(b, n.to_string().into_bytes());
        }
    }

    #[test]
    fn write_header_is_lead_decimal_crlf() {
        let mut tried: Vec<u64> = (0..=2000).collect();
        tried.extend([9_999, 10_000, 1 << 20, u64::from(u32::MAX), u64::MAX]);
        for n in tried {
            let mut b = b"x".to_vec();
            write_header(&mut b, b'$', n);
            assert_eq!(b, format!("x${n}\r\n").into_bytes());
        }
    }

    #[test]
    fn parse_dec_edges() {
        assert_eq!(parse_dec(b"0"), Ok(0));
        assert_eq!(parse_dec(b"0042"), Ok(42));
        assert_eq!(parse_dec(b"99999999999999999999999"), Ok(u64::MAX));
        assert_eq!(parse_dec(b""), Err(DecodeError::Protocol));
        assert_eq!(parse_dec(b"-1"), Err(DecodeError::Protocol));
        assert_eq!(parse_dec(b"1a"), Err(DecodeError::Protocol));
    }

    #[test]
    fn line_framing() {
        assert_eq!(find_line(b"ab\r\nx", 0, 10), Ok(Some((2, 4))));
        assert_eq!(find_line(b"ab\r\nx", 5, 10), Ok(None));
        assert_eq!(find_line(b"ab\r", 0, 10), Ok(None));
        assert_eq!(find_line(b"ab\n", 0, 10), Err(DecodeError::Protocol));
        assert_eq!(find_line(b"\n", 0, 10), Err(DecodeError::Protocol));
        assert_eq!(
            find_line(b"0123456789ab", 0, 10),
            Err(DecodeError::TooLarge)
        );
        assert_eq!(find_line(b"0123456789\r\n", 0, 10), Ok(Some((10, 12))));
        // Lines ending at every place before, at and after the first 8
        // bytes (a byte loop there, memchr beyond), from any start.
        for len in 0..40 {
            for start in [0, 3] {
                let mut b = vec![b'-'; start];
                b.extend(std::iter::repeat_n(b'a', len));
                b.extend_from_slice(b"\r\nnext\n");
                assert_eq!(
                    find_line(&b, start, 64),
                    Ok(Some((start + len, start + len + 2))),
                    "{len} {start}"
                );
                let bare = b.iter().rposition(|&c| c == b'\r').expect("CR");
                b.remove(bare);
                assert_eq!(
                    find_line(&b, start, 64),
                    Err(DecodeError::Protocol),
                    "{len}"
                );
                b.truncate(start + len);
                assert_eq!(find_line(&b, start, 64), Ok(None), "{len}");
            }
        }
        assert_eq!(find_line(&[b'a'; 100], 0, 20), Err(DecodeError::TooLarge));
        assert_eq!(expect_crlf(b"a\r", 1), Ok(None));
        assert_eq!(expect_crlf(b"a\rx", 1), Err(DecodeError::Protocol));
    }
}
