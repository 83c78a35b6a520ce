//! Memcache classic text protocol: encoding of `get`/`set`/`replace`/`delete`/
//! `stats` and response parsing.
//!
//! [`parse_reply`] is the hot-path parser and must not allocate: it returns a
//! [`McReply`] summary and never copies keys or data. [`parse_stats`] and
//! [`parse_values`] allocate and are for cold paths (probes, verification).
//! Encoders do not validate keys (that costs time on every request); the caller
//! guarantees keys of at most 250 bytes without spaces or control characters,
//! which debug builds assert.

use crate::dec::{expect_crlf, filled, find_line, parse_dec, write_dec, write_header};
use crate::{DecodeError, MAX_LEN};

/// Longest response line accepted. Real lines are short (keys are at most 250
/// bytes); the bound stops a peer that never sends a newline from growing the
/// read buffer without limit.
pub const MAX_LINE: usize = 64 * 1024;

const CRLF: &[u8] = b"\r\n";

#[inline]
fn debug_check_key(key: &[u8]) {
    debug_assert!(
        !key.is_empty() && key.len() <= 250 && key.iter().all(|&b| b > b' ' && b != 0x7f),
        "invalid memcache key"
    );
}

/// Appends `get <key>\r\n`.
#[inline]
pub fn encode_get(buf: &mut Vec<u8>, key: &[u8]) {
    encode_get_keyed(buf, key.len(), |b| b.extend_from_slice(key));
}

/// [`encode_get`] with the key appended by `put_key` (`key_len` bytes, for
/// reserving room), so a caller can write a key straight into the request.
#[inline]
pub fn encode_get_keyed(buf: &mut Vec<u8>, key_len: usize, put_key: impl FnOnce(&mut Vec<u8>)) {
    buf.reserve(key_len + 6);
    buf.extend_from_slice(b"get ");
    let at = buf.len();
    put_key(buf);
    debug_check_key(&buf[at..]);
    buf.extend_from_slice(CRLF);
}

/// The storage command for `key`, with `extend` appending the data (see
/// [`encode_storage_keyed`]).
#[inline]
fn encode_storage_extend(
    buf: &mut Vec<u8>,
    cmd: &[u8],
    key: &[u8],
    flags: u32,
    exptime: u32,
    len: usize,
    extend: impl FnOnce(&mut Vec<u8>),
) {
    let put_key = |b: &mut Vec<u8>| b.extend_from_slice(key);
    encode_storage_keyed(buf, cmd, key.len(), put_key, flags, exptime, len, extend);
}

/// The storage command with `put_key` appending the key (`key_len` bytes)
/// and `extend` the data; whatever `extend` appends is cut or padded with
/// zeros to `len`, so the framing holds.
#[inline]
#[allow(clippy::too_many_arguments)]
fn encode_storage_keyed(
    buf: &mut Vec<u8>,
    cmd: &[u8],
    key_len: usize,
    put_key: impl FnOnce(&mut Vec<u8>),
    flags: u32,
    exptime: u32,
    len: usize,
    extend: impl FnOnce(&mut Vec<u8>),
) {
    buf.reserve(cmd.len() + key_len + len + 48);
    buf.extend_from_slice(cmd);
    buf.push(b' ');
    let at = buf.len();
    put_key(buf);
    debug_check_key(&buf[at..]);
    // No flags and no expiry (every request kvbench's workloads make) as
    // one constant, and the length as one fixed-size append: written as
    // three decimals they cost 48 more instructions per set
    // (docs/performance.md, "Instructions per operation").
    if (flags, exptime) == (0, 0) {
        buf.extend_from_slice(b" 0 0");
    } else {
        buf.push(b' ');
        write_dec(buf, u64::from(flags));
        buf.push(b' ');
        write_dec(buf, u64::from(exptime));
    }
    write_header(buf, b' ', len as u64);
    let start = buf.len();
    extend(buf);
    buf.resize(start + len, 0);
    buf.extend_from_slice(CRLF);
}

/// Appends `set <key> <flags> <exptime> <len>\r\n`, lets `extend` append the
/// `len` data bytes, then `\r\n`. Nothing is zeroed first (see
/// [`crate::resp::write_bulk_extend`]); data longer or shorter than `len`
/// is cut or padded with zeros, so the framing always holds.
#[inline]
pub fn encode_set_extend(
    buf: &mut Vec<u8>,
    key: &[u8],
    flags: u32,
    exptime: u32,
    len: usize,
    extend: impl FnOnce(&mut Vec<u8>),
) {
    encode_storage_extend(buf, b"set", key, flags, exptime, len, extend);
}

/// [`encode_set_extend`] with the key appended by `put_key` (`key_len`
/// bytes, for reserving room), so a caller can write a key straight into
/// the request.
#[inline]
pub fn encode_set_keyed_extend(
    buf: &mut Vec<u8>,
    key_len: usize,
    put_key: impl FnOnce(&mut Vec<u8>),
    len: usize,
    extend: impl FnOnce(&mut Vec<u8>),
) {
    encode_storage_keyed(buf, b"set", key_len, put_key, 0, 0, len, extend);
}

/// Appends `set <key> <flags> <exptime> <len>\r\n`, lets `fill` write exactly
/// `len` bytes (the slice passed is exactly `len` long), then `\r\n`, so value
/// generators write straight into the send buffer without a temporary. The data
/// area is zeroed before `fill` runs (safe code cannot expose uninitialised
/// memory).
#[inline]
pub fn encode_set_with(
    buf: &mut Vec<u8>,
    key: &[u8],
    flags: u32,
    exptime: u32,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) {
    encode_storage_extend(buf, b"set", key, flags, exptime, len, filled(len, fill));
}

/// Appends a `set` with a ready-made value.
#[inline]
pub fn encode_set(buf: &mut Vec<u8>, key: &[u8], flags: u32, exptime: u32, data: &[u8]) {
    encode_storage_extend(buf, b"set", key, flags, exptime, data.len(), |b| {
        b.extend_from_slice(data)
    });
}

/// Like [`encode_set_with`] but `replace`, which only stores if the key exists
/// (used for update-only workloads, answered `NOT_STORED` on a miss).
#[inline]
pub fn encode_replace_with(
    buf: &mut Vec<u8>,
    key: &[u8],
    flags: u32,
    exptime: u32,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) {
    encode_storage_extend(buf, b"replace", key, flags, exptime, len, filled(len, fill));
}

/// Appends `delete <key>\r\n`.
#[inline]
pub fn encode_delete(buf: &mut Vec<u8>, key: &[u8]) {
    debug_check_key(key);
    buf.reserve(key.len() + 9);
    buf.extend_from_slice(b"delete ");
    buf.extend_from_slice(key);
    buf.extend_from_slice(CRLF);
}

/// Appends `stats\r\n` or `stats <group>\r\n` (e.g. `settings`, `slabs`).
pub fn encode_stats(buf: &mut Vec<u8>, group: Option<&str>) {
    buf.extend_from_slice(b"stats");
    if let Some(g) = group {
        buf.push(b' ');
        buf.extend_from_slice(g.as_bytes());
    }
    buf.extend_from_slice(CRLF);
}

/// Classification of one response, which is all the engine needs to count an
/// operation as hit, miss, stored, failed, etc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McReplyKind {
    /// One or more `VALUE` blocks followed by `END`: a hit.
    Values,
    /// Bare `END` to a retrieval: a miss. Also what an empty `stats` response
    /// looks like; [`parse_reply`] cannot tell them apart (see there).
    Miss,
    /// `STORED`.
    Stored,
    /// `NOT_STORED` (e.g. `replace` of a missing key).
    NotStored,
    /// `EXISTS` (cas mismatch).
    Exists,
    /// `NOT_FOUND`.
    NotFound,
    /// `DELETED`.
    Deleted,
    /// `TOUCHED`.
    Touched,
    /// `OK`.
    Ok,
    /// `ERROR` (unknown command), optionally followed by text.
    Error,
    /// `CLIENT_ERROR <msg>`.
    ClientError,
    /// `SERVER_ERROR <msg>` (e.g. out of memory, object too large).
    ServerError,
    /// One or more `STAT` lines followed by `END`.
    Stats,
    /// `VERSION <v>`.
    Version,
}

/// Allocation-free summary of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McReply {
    /// What the response was.
    pub kind: McReplyKind,
    /// `VALUE` blocks or `STAT` lines; 0 otherwise.
    pub items: usize,
    /// Sum of the data block lengths, so callers can check value sizes without
    /// copying.
    pub payload_bytes: usize,
    /// Bytes of the input this response occupies; the next one starts here.
    pub consumed: usize,
}

/// True if `line` is `word` alone or `word` followed by a space and text.
#[inline]
fn is_word(line: &[u8], word: &[u8]) -> bool {
    line.len() >= word.len()
        && &line[..word.len()] == word
        && (line.len() == word.len() || line[word.len()] == b' ')
}

/// Splits `VALUE <key> <flags> <bytes> [<cas>]`. Tolerates repeated spaces.
#[inline]
fn parse_value_line(line: &[u8]) -> Result<(&[u8], u32, usize), DecodeError> {
    // What memcached sends, one space between words: the key's end found
    // by memchr. A walk of the whole line a byte at a time took some 70
    // instructions per `get` (docs/performance.md); every other line
    // takes that walk, so both give the same words and the same answer.
    if let Some(rest) = line.strip_prefix(b"VALUE ") {
        if let Some(k) = memchr::memchr(b' ', rest).filter(|&k| k > 0) {
            let mut numbers = rest[k + 1..].split(|&b| b == b' ');
            if let (Some(flags), Some(len), cas, None) = (
                numbers.next(),
                numbers.next(),
                numbers.next(),
                numbers.next(),
            ) {
                if !flags.is_empty() && !len.is_empty() && cas.is_none_or(|c| !c.is_empty()) {
                    return value_words(&rest[..k], flags, len, cas);
                }
            }
        }
    }
    split_value_line(line)
}

/// [`parse_value_line`] of any line, however spaced: its words one by one.
fn split_value_line(line: &[u8]) -> Result<(&[u8], u32, usize), DecodeError> {
    let mut it = line.split(|&b| b == b' ').filter(|t| !t.is_empty());
    if it.next() != Some(&b"VALUE"[..]) {
        return Err(DecodeError::Protocol);
    }
    let key = it.next().ok_or(DecodeError::Protocol)?;
    let flags = it.next().ok_or(DecodeError::Protocol)?;
    let len = it.next().ok_or(DecodeError::Protocol)?;
    let cas = it.next();
    let extra = it.next().is_some();
    let words = value_words(key, flags, len, cas)?;
    if extra {
        return Err(DecodeError::Protocol);
    }
    Ok(words)
}

/// A `VALUE` line's words read: its key, flags and data length.
#[inline]
fn value_words<'a>(
    key: &'a [u8],
    flags: &[u8],
    len: &[u8],
    cas: Option<&[u8]>,
) -> Result<(&'a [u8], u32, usize), DecodeError> {
    let flags = u32::try_from(parse_dec(flags)?).map_err(|_| DecodeError::Protocol)?;
    let len = parse_dec(len)?;
    if len > MAX_LEN as u64 {
        return Err(DecodeError::TooLarge);
    }
    if let Some(cas) = cas {
        parse_dec(cas)?;
    }
    // len <= MAX_LEN fits usize on every supported target.
    Ok((key, flags, len as usize))
}

/// Walks `VALUE` blocks through `END`, calling `f(key, flags, data)` per block.
/// Generic so the hot path passes a no-op closure and pays nothing for it.
/// Each declared length is honoured exactly (data may contain `\r\nEND\r\n`)
/// and must be followed by CRLF. Returns `(items, payload_bytes, consumed)`.
#[inline]
fn scan_values<F: FnMut(&[u8], u32, &[u8])>(
    buf: &[u8],
    mut f: F,
) -> Result<Option<(usize, usize, usize)>, DecodeError> {
    let (mut pos, mut items, mut payload) = (0usize, 0usize, 0usize);
    loop {
        let Some((end, next)) = find_line(buf, pos, MAX_LINE)? else {
            return Ok(None);
        };
        let line = &buf[pos..end];
        if line == b"END" {
            return Ok(Some((items, payload, next)));
        }
        let (key, flags, len) = parse_value_line(line)?;
        let Some(after) = expect_crlf(buf, next + len)? else {
            return Ok(None);
        };
        f(key, flags, &buf[next..next + len]);
        items += 1;
        payload += len;
        pos = after;
    }
}

/// Walks `STAT <name> <value>` lines through `END`, calling `f(name, value)`.
/// The value is the rest of the line (it may contain spaces, e.g. version
/// strings). Returns `(items, consumed)`.
#[inline]
fn scan_stats<F: FnMut(&[u8], &[u8])>(
    buf: &[u8],
    mut f: F,
) -> Result<Option<(usize, usize)>, DecodeError> {
    let (mut pos, mut items) = (0usize, 0usize);
    loop {
        let Some((end, next)) = find_line(buf, pos, MAX_LINE)? else {
            return Ok(None);
        };
        let line = &buf[pos..end];
        if line == b"END" {
            return Ok(Some((items, next)));
        }
        let rest = line.strip_prefix(b"STAT ").ok_or(DecodeError::Protocol)?;
        let (name, value) = match rest.iter().position(|&b| b == b' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        if name.is_empty() {
            return Err(DecodeError::Protocol);
        }
        f(name, value);
        items += 1;
        pos = next;
    }
}

/// Parses one complete response from the start of `buf` without allocating;
/// The line of a reply that refuses (`SERVER_ERROR out of memory ...`,
/// `ERROR Too many open connections`, `NOT_STORED`), for the record of what
/// a server said; `None` for a reply of any other kind.
pub fn error_text(reply: &[u8]) -> Option<&[u8]> {
    const REFUSALS: [&[u8]; 6] = [
        b"SERVER_ERROR",
        b"CLIENT_ERROR",
        b"ERROR",
        b"NOT_STORED",
        b"NOT_FOUND",
        b"EXISTS",
    ];
    REFUSALS
        .iter()
        .any(|r| reply.starts_with(r))
        .then(|| crate::first_line(reply))
}

/// `Ok(None)` if incomplete. A retrieval response is all `VALUE` blocks through
/// `END`.
///
/// A bare `END` is reported as [`McReplyKind::Miss`] even when it answers a
/// `stats` command (an empty stats response is indistinguishable on the wire);
/// callers that send `stats` use [`parse_stats`]. Numeric `incr`/`decr` replies
/// and unknown lines are [`DecodeError::Protocol`].
pub fn parse_reply(buf: &[u8]) -> Result<Option<McReply>, DecodeError> {
    use McReplyKind as K;
    let Some((end, next)) = find_line(buf, 0, MAX_LINE)? else {
        return Ok(None);
    };
    let line = &buf[..end];
    let kind = match line {
        b"END" => K::Miss,
        b"STORED" => K::Stored,
        b"NOT_STORED" => K::NotStored,
        b"EXISTS" => K::Exists,
        b"NOT_FOUND" => K::NotFound,
        b"DELETED" => K::Deleted,
        b"TOUCHED" => K::Touched,
        b"OK" => K::Ok,
        _ if line.starts_with(b"VALUE ") => {
            return Ok(
                scan_values(buf, |_, _, _| {})?.map(|(items, payload_bytes, consumed)| McReply {
                    kind: K::Values,
                    items,
                    payload_bytes,
                    consumed,
                }),
            );
        }
        _ if line.starts_with(b"STAT ") => {
            return Ok(
                scan_stats(buf, |_, _| {})?.map(|(items, consumed)| McReply {
                    kind: K::Stats,
                    items,
                    payload_bytes: 0,
                    consumed,
                }),
            );
        }
        _ if is_word(line, b"ERROR") => K::Error,
        _ if is_word(line, b"CLIENT_ERROR") => K::ClientError,
        _ if is_word(line, b"SERVER_ERROR") => K::ServerError,
        _ if is_word(line, b"VERSION") => K::Version,
        _ => return Err(DecodeError::Protocol),
    };
    Ok(Some(McReply {
        kind,
        items: 0,
        payload_bytes: 0,
        consumed: next,
    }))
}

/// Cold path: parses a complete `stats` response (`STAT` lines through `END`,
/// possibly none) into `(name, value)` pairs, returned with the bytes consumed.
/// Any other response, including `ERROR`, is [`DecodeError::Protocol`]; use
/// [`parse_reply`] first to tell an error reply apart. Non-UTF-8 bytes are
/// replaced, since stats are ASCII in every known server.
#[allow(clippy::type_complexity)] // spelled out so callers see the shape
pub fn parse_stats(buf: &[u8]) -> Result<Option<(Vec<(String, String)>, usize)>, DecodeError> {
    let mut out = Vec::new();
    let r = scan_stats(buf, |n, v| {
        out.push((
            String::from_utf8_lossy(n).into_owned(),
            String::from_utf8_lossy(v).into_owned(),
        ))
    })?;
    Ok(r.map(|(_, consumed)| (out, consumed)))
}

/// Cold path: parses a complete retrieval response into `(key, flags, data)`
/// items (empty for a miss), returned with the bytes consumed. Any other
/// response is [`DecodeError::Protocol`].
#[allow(clippy::type_complexity)] // spelled out so callers see the shape
pub fn parse_values(
    buf: &[u8],
) -> Result<Option<(Vec<(Vec<u8>, u32, Vec<u8>)>, usize)>, DecodeError> {
    let mut out = Vec::new();
    let r = scan_values(buf, |k, f, d| out.push((k.to_vec(), f, d.to_vec())))?;
    Ok(r.map(|(_, _, consumed)| (out, consumed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_single_spaced_path_reads_every_line_as_the_word_walk_does() {
        // Every way of spacing, splitting and spoiling a VALUE line's words.
        let keys: [&[u8]; 3] = [b"k", b"user6284781860667377211", b""];
        let numbers: [&[u8]; 7] = [b"0", b"42", b"x", b"4294967296", b"536870913", b"100", b""];
        let gaps: [&[u8]; 3] = [b" ", b"  ", b""];
        let mut lines = 0;
        for key in keys {
            for flags in numbers {
                for len in numbers {
                    for cas in [None, Some(&b"7"[..]), Some(b"c"), Some(b"")] {
                        for gap in gaps {
                            for tail in [&b""[..], b" ", b" 9"] {
                                let mut line = b"VALUE ".to_vec();
                                for w in [key, flags, len] {
                                    line.extend_from_slice(w);
                                    line.extend_from_slice(gap);
                                }
                                line.truncate(line.len() - gap.len());
                                if let Some(c) = cas {
                                    line.push(b' ');
                                    line.extend_from_slice(c);
                                }
                                line.extend_from_slice(tail);
                                assert_eq!(
                                    parse_value_line(&line),
                                    split_value_line(&line),
                                    "{}",
                                    String::from_utf8_lossy(&line)
                                );
                                lines += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(lines, 3 * 7 * 7 * 4 * 3 * 3);
        assert_eq!(
            parse_value_line(b"VALUE user1 0 100"),
            Ok((&b"user1"[..], 0, 100))
        );
    }
}
