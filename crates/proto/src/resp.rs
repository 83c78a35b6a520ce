//! RESP codec: request encoding (always RESP2 arrays of bulk strings, which every
//! server accepts) and reply parsing for RESP2 plus the RESP3 types a server may
//! send after `HELLO 3` (`_ # , ( = ! % ~ > |`).
//!
//! [`parse_reply`] is the hot-path parser: it must not allocate and must not
//! recurse without bound. It walks nested aggregates with a fixed-size counter
//! stack on the call stack ([`MAX_DEPTH`] frames), so its cost is a scan of the
//! bytes and nothing else. [`parse_value`] builds an owned [`Value`] and is for
//! cold paths only. Streamed RESP3 aggregates (`*?`, `$?`) are not supported and
//! are reported as [`DecodeError::Protocol`]; no mainstream server sends them.

use crate::dec::{expect_crlf, filled, find_line, write_header};
use crate::{DecodeError, MAX_LEN};

/// Deepest aggregate nesting accepted (an attribute map counts as a level). Real
/// replies nest at most a handful of levels (CLUSTER SLOTS, COMMAND DOCS), so 32
/// leaves slack while keeping the parser's counter stack at 264 bytes.
pub const MAX_DEPTH: usize = 32;

/// Longest simple-string / simple-error / double / big-number line accepted.
/// Matches Redis's own inline limit; it bounds buffering when the peer sends
/// bytes without a line terminator.
pub const MAX_LINE: usize = 64 * 1024;

const _: () = assert!(MAX_DEPTH < 64, "attribute bitmask is a u64");

const CRLF: &[u8] = b"\r\n";

/// `*2\r\n$3\r\nGET\r\n`: a GET up to its key, pre-encoded, so the hot path
/// copies one constant instead of encoding an array header and a bulk string
/// per request (measurable at pipeline 16, where encoding is most of the
/// client's own time).
pub const GET_PREFIX: &[u8; 13] = b"*2\r\n$3\r\nGET\r\n";
/// `*3\r\n$3\r\nSET\r\n`: a SET up to its key, pre-encoded (see [`GET_PREFIX`]).
pub const SET_PREFIX: &[u8; 13] = b"*3\r\n$3\r\nSET\r\n";

/// Appends `*<n>\r\n`; with [`write_bulk`] lets callers build commands in place
/// without collecting arguments into a slice first.
#[inline]
pub fn write_array_header(buf: &mut Vec<u8>, n: usize) {
    write_header(buf, b'*', n as u64);
}

#[inline]
fn write_bulk_header(buf: &mut Vec<u8>, len: usize) {
    write_header(buf, b'$', len as u64);
}

/// Appends `$<len>\r\n<data>\r\n`.
#[inline]
pub fn write_bulk(buf: &mut Vec<u8>, data: &[u8]) {
    buf.reserve(data.len() + 16);
    write_bulk_header(buf, data.len());
    buf.extend_from_slice(data);
    buf.extend_from_slice(CRLF);
}

/// Writes a bulk header for `len` bytes, lets `fill` write exactly `len` bytes
/// into the buffer (the slice passed is exactly `len` long), then the CRLF. Lets
/// value generators write straight into the send buffer without a temporary.
/// The region is zeroed before `fill` runs (safe code cannot hand out
/// uninitialised memory); that memset is cheaper than a second copy.
#[inline]
pub fn write_bulk_with(buf: &mut Vec<u8>, len: usize, fill: impl FnOnce(&mut [u8])) {
    write_bulk_extend(buf, len, filled(len, fill));
}

/// Writes a bulk header for `len` bytes, lets `extend` append them to the
/// buffer, then the CRLF. Nothing is zeroed first: a value copied in from
/// a pool of random bytes costs one copy, where [`write_bulk_with`]'s
/// memset was about 2% of kvbench's instructions per operation at
/// pipeline 16. Should `extend` append more or fewer than `len` bytes, the
/// data is cut or padded with zeros to `len`, so the framing always holds.
#[inline]
pub fn write_bulk_extend(buf: &mut Vec<u8>, len: usize, extend: impl FnOnce(&mut Vec<u8>)) {
    buf.reserve(len + 16);
    write_bulk_header(buf, len);
    let start = buf.len();
    extend(buf);
    buf.resize(start + len, 0);
    buf.extend_from_slice(CRLF);
}

/// Appends a whole command as an array of bulk strings, reserving once so a
/// pipelined batch grows the buffer at most once per command.
#[inline]
pub fn encode_command(buf: &mut Vec<u8>, args: &[&[u8]]) {
    let total: usize = args.iter().map(|a| a.len() + 16).sum::<usize>() + 16;
    buf.reserve(total);
    write_array_header(buf, args.len());
    for a in args {
        write_bulk_header(buf, a.len());
        buf.extend_from_slice(a);
        buf.extend_from_slice(CRLF);
    }
}

/// Type of a reply's top-level value (leading RESP3 attributes are skipped).
/// RESP3 blob errors (`!`) report as `Error` and RESP3 null (`_`) as `Nil`, so
/// callers classify replies the same way under RESP2 and RESP3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// `+` simple string, e.g. `OK`, `PONG`.
    Status,
    /// `-` simple error or `!` blob error; the engine counts it as a failed op.
    Error,
    /// `:` integer.
    Integer,
    /// `$` bulk string.
    Bulk,
    /// `$-1`, `*-1` or RESP3 `_`: a miss, not an error.
    Nil,
    /// `*` array.
    Array,
    /// `%` map.
    Map,
    /// `~` set.
    Set,
    /// `>` out-of-band push (pub/sub, client tracking); callers must not match it
    /// to an outstanding request.
    Push,
    /// `#` boolean.
    Boolean,
    /// `,` double.
    Double,
    /// `(` big number.
    BigNumber,
    /// `=` verbatim string (e.g. `INFO` under RESP3).
    Verbatim,
}

/// Allocation-free summary of one reply: enough for the engine to classify the
/// outcome, check value sizes and advance its read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// Type of the top-level value.
    pub kind: ReplyKind,
    /// Number of top-level elements of an aggregate, counting a map's keys and
    /// values separately (`%2` gives 4) so it equals the number of values that
    /// follow; 0 for scalars and nil.
    pub elements: usize,
    /// Sum of string payload bytes (simple strings, errors, bulk, blob errors,
    /// verbatim strings including their `txt:` prefix) at every nesting level,
    /// excluding attributes. Lets callers verify value sizes without copying.
    /// Numbers, booleans and doubles contribute nothing.
    pub payload_bytes: usize,
    /// Bytes of the input this reply occupies; the next reply starts here.
    pub consumed: usize,
}

/// Reads a length header after a type byte. `Some((None, next))` means `-1`
/// (nil); any other negative length is a framing error. Checks the bound while
/// accumulating so that a runaway digit string fails fast without overflow.
#[inline]
fn read_len(buf: &[u8], mut i: usize) -> Result<Option<(Option<usize>, usize)>, DecodeError> {
    let neg = buf.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let digits_start = i;
    let mut n: u64 = 0;
    loop {
        match buf.get(i) {
            None => return Ok(None),
            Some(&b) if b.is_ascii_digit() => {
                n = n * 10 + u64::from(b - b'0');
                if neg && n > 1 {
                    return Err(DecodeError::Protocol);
                }
                if n > MAX_LEN as u64 {
                    return Err(DecodeError::TooLarge);
                }
                i += 1;
            }
            Some(b'\r') => break,
            Some(_) => return Err(DecodeError::Protocol),
        }
    }
    if i == digits_start {
        return Err(DecodeError::Protocol);
    }
    let Some(next) = expect_crlf(buf, i)? else {
        return Ok(None);
    };
    if neg {
        if n == 1 {
            Ok(Some((None, next)))
        } else {
            Err(DecodeError::Protocol)
        }
    } else {
        // n <= MAX_LEN, which fits usize on every supported target.
        Ok(Some((Some(n as usize), next)))
    }
}

/// Reads a signed 64-bit integer line (TTL replies are negative). Accumulates
/// towards the sign so that `i64::MIN` parses; overflow is a framing error.
#[inline]
fn read_int(buf: &[u8], mut i: usize) -> Result<Option<(i64, usize)>, DecodeError> {
    let neg = match buf.get(i) {
        None => return Ok(None),
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        Some(_) => false,
    };
    let digits_start = i;
    let mut n: i64 = 0;
    loop {
        match buf.get(i) {
            None => return Ok(None),
            Some(&b) if b.is_ascii_digit() => {
                let d = i64::from(b - b'0');
                n = n
                    .checked_mul(10)
                    .and_then(|m| {
                        if neg {
                            m.checked_sub(d)
                        } else {
                            m.checked_add(d)
                        }
                    })
                    .ok_or(DecodeError::Protocol)?;
                i += 1;
            }
            Some(b'\r') => break,
            Some(_) => return Err(DecodeError::Protocol),
        }
    }
    if i == digits_start {
        return Err(DecodeError::Protocol);
    }
    Ok(expect_crlf(buf, i)?.map(|next| (n, next)))
}

/// The text of an error reply, without its `-` (`OOM command not allowed
/// ...`), for the record of what a server said; `None` for a reply of any
/// other type.
pub fn error_text(reply: &[u8]) -> Option<&[u8]> {
    reply.strip_prefix(b"-").map(crate::first_line)
}

/// Parses exactly one complete reply from the start of `buf` without allocating.
/// `Ok(None)` means the reply is incomplete: read more and call again with the
/// same start. Leading RESP3 attributes are consumed and not reported.
///
/// Nesting is tracked with a fixed array of "values still expected" counters
/// (one per level, [`MAX_DEPTH`] deep) instead of recursion, so hostile input
/// can neither allocate nor overflow the stack; deeper input is
/// [`DecodeError::NestingTooDeep`]. An incomplete reply is rescanned from its
/// start on the next call, which is cheap for the small replies of a benchmark.
pub fn parse_reply(buf: &[u8]) -> Result<Option<Reply>, DecodeError> {
    use ReplyKind as K;
    // The replies of the hot path (`+OK`, a bulk string, a nil) are one
    // value with nothing nested: read without the nesting stack below,
    // which is zeroed on every call (about 8% of kvbench's instructions
    // per operation went to parsing replies in bench/efficiency case (c)).
    if let Some(&t @ (b'+' | b'$')) = buf.first() {
        return Ok(
            string_at(buf, 0, t)?.map(|(kind, payload_bytes, consumed)| Reply {
                kind,
                elements: 0,
                payload_bytes,
                consumed,
            }),
        );
    }
    // remaining[0] is a virtual root that expects exactly one value.
    let mut remaining = [0usize; MAX_DEPTH + 1];
    remaining[0] = 1;
    let mut depth = 0usize;
    // Bit d set: frame d is an attribute, whose completion does not count as a
    // value of its parent and whose strings are not payload.
    let mut attr_mask: u64 = 0;
    let mut top = (K::Nil, 0usize);
    let mut payload = 0usize;
    let mut pos = 0usize;
    loop {
        let Some(&t) = buf.get(pos) else {
            return Ok(None);
        };
        let counts = attr_mask == 0;
        let kind = match t {
            b'+' | b'-' | b'$' | b'!' | b'=' => {
                let Some((kind, n, next)) = string_at(buf, pos, t)? else {
                    return Ok(None);
                };
                if counts {
                    payload += n;
                }
                pos = next;
                kind
            }
            b':' => {
                let Some((_, next)) = read_int(buf, pos + 1)? else {
                    return Ok(None);
                };
                pos = next;
                K::Integer
            }
            b'_' | b'#' | b',' | b'(' => {
                let Some((end, next)) = find_line(buf, pos + 1, MAX_LINE)? else {
                    return Ok(None);
                };
                let line = &buf[pos + 1..end];
                let kind = match t {
                    b'_' if line.is_empty() => K::Nil,
                    b'#' if line == b"t" || line == b"f" => K::Boolean,
                    // Validated like parse_value does, so both agree on what
                    // is malformed; float parsing does not allocate.
                    b',' if parse_double(line).is_ok() => K::Double,
                    b'(' if !line.is_empty() => K::BigNumber,
                    _ => return Err(DecodeError::Protocol),
                };
                pos = next;
                kind
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let Some((len, next)) = read_len(buf, pos + 1)? else {
                    return Ok(None);
                };
                pos = next;
                let kind = match t {
                    b'*' => K::Array,
                    b'~' => K::Set,
                    b'>' => K::Push,
                    _ => K::Map, // `|` is never reported as a kind
                };
                match len {
                    None if t == b'*' => K::Nil,
                    None => return Err(DecodeError::Protocol),
                    Some(n) => {
                        let is_attr = t == b'|';
                        // n <= MAX_LEN, so doubling cannot overflow.
                        let count = if t == b'%' || is_attr { n * 2 } else { n };
                        if count == 0 {
                            if is_attr {
                                continue;
                            }
                            kind
                        } else {
                            if depth == MAX_DEPTH {
                                return Err(DecodeError::NestingTooDeep);
                            }
                            if depth == 0 && !is_attr {
                                top = (kind, count);
                            }
                            depth += 1;
                            remaining[depth] = count;
                            if is_attr {
                                attr_mask |= 1 << depth;
                            }
                            continue;
                        }
                    }
                }
            }
            _ => return Err(DecodeError::Protocol),
        };
        // A whole value has been read: a scalar, a nil or an empty aggregate.
        if depth == 0 {
            top = (kind, 0);
        }
        loop {
            remaining[depth] -= 1;
            if remaining[depth] != 0 {
                break;
            }
            if depth == 0 {
                return Ok(Some(Reply {
                    kind: top.0,
                    elements: top.1,
                    payload_bytes: payload,
                    consumed: pos,
                }));
            }
            let was_attr = attr_mask & (1 << depth) != 0;
            attr_mask &= !(1 << depth);
            depth -= 1;
            if was_attr {
                break;
            }
        }
    }
}

/// The string value at `pos` whose type byte is `t` (`+`, `-`, `$`, `!` or
/// `=`): its kind, its payload bytes and where the next value starts;
/// `Ok(None)` while it is incomplete. Shared by [`parse_reply`]'s loop and
/// its fast path for a top-level `+` or `$` (always inlined: called out of
/// line it cost 28 instructions per operation in bench/efficiency case (c)).
#[inline(always)]
fn string_at(
    buf: &[u8],
    pos: usize,
    t: u8,
) -> Result<Option<(ReplyKind, usize, usize)>, DecodeError> {
    use ReplyKind as K;
    if let b'+' | b'-' = t {
        let Some((end, next)) = find_line(buf, pos + 1, MAX_LINE)? else {
            return Ok(None);
        };
        let kind = if t == b'+' { K::Status } else { K::Error };
        return Ok(Some((kind, end - (pos + 1), next)));
    }
    let Some((len, next)) = read_len(buf, pos + 1)? else {
        return Ok(None);
    };
    match len {
        None if t == b'$' => Ok(Some((K::Nil, 0, next))),
        None => Err(DecodeError::Protocol),
        Some(n) => {
            let Some(after) = expect_crlf(buf, next + n)? else {
                return Ok(None);
            };
            let kind = match t {
                b'$' => K::Bulk,
                b'!' => K::Error,
                _ => K::Verbatim,
            };
            Ok(Some((kind, n, after)))
        }
    }
}

/// Owned reply for cold paths (probes, verification): `INFO` text, `HGETALL`
/// contents, `CLUSTER` replies. Attributes are discarded.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Simple string (lossily decoded: servers only send ASCII here).
    Status(String),
    /// Simple or blob error message.
    Error(String),
    /// Integer.
    Integer(i64),
    /// Bulk string, kept as bytes because values are binary.
    Bulk(Vec<u8>),
    /// `$-1`, `*-1` or `_`.
    Nil,
    /// Array.
    Array(Vec<Value>),
    /// Map, in wire order (keys may repeat or be non-hashable, so no HashMap).
    Map(Vec<(Value, Value)>),
    /// Set, in wire order.
    Set(Vec<Value>),
    /// Out-of-band push message.
    Push(Vec<Value>),
    /// Boolean.
    Boolean(bool),
    /// Double, including `inf`, `-inf` and `nan`.
    Double(f64),
    /// Big number, kept as its decimal text.
    BigNumber(String),
    /// Verbatim string split into its format (e.g. `txt`) and text; format is
    /// empty if the server omitted the `xxx:` prefix.
    Verbatim {
        /// Three-letter format tag.
        format: String,
        /// Text after the `xxx:` prefix.
        data: Vec<u8>,
    },
}

impl Value {
    /// String-like contents, so probes can read `INFO` the same way whether it
    /// arrived as a RESP2 bulk or a RESP3 verbatim string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Status(s) => Some(s.as_bytes()),
            Value::Bulk(b) => Some(b),
            Value::Verbatim { data, .. } => Some(data),
            _ => None,
        }
    }

    /// Integer contents, accepting integer-looking bulk strings too because some
    /// commands (and proxies) reply with numbers as bulk text.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Integer(i) => Some(*i),
            Value::Bulk(b) => std::str::from_utf8(b).ok()?.parse().ok(),
            _ => None,
        }
    }
}

/// Parses one complete reply into an owned [`Value`], returning it with the
/// number of bytes consumed; `Ok(None)` if incomplete. Validates completeness
/// and depth with [`parse_reply`] first, so building never sees a truncated
/// buffer and its recursion is bounded by [`MAX_DEPTH`].
pub fn parse_value(buf: &[u8]) -> Result<Option<(Value, usize)>, DecodeError> {
    let Some(reply) = parse_reply(buf)? else {
        return Ok(None);
    };
    let (value, end) = build(buf, 0, 0)?;
    if end != reply.consumed {
        return Err(DecodeError::Protocol);
    }
    Ok(Some((value, end)))
}

/// Turns "incomplete" into an error: [`build`] only runs on input that
/// [`parse_reply`] already found complete, so this cannot normally trigger.
#[inline]
fn need<T>(r: Result<Option<T>, DecodeError>) -> Result<T, DecodeError> {
    r?.ok_or(DecodeError::Protocol)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Builds the value at `pos`; `depth` is the number of enclosing aggregates.
fn build(buf: &[u8], mut pos: usize, depth: usize) -> Result<(Value, usize), DecodeError> {
    loop {
        let t = *buf.get(pos).ok_or(DecodeError::Protocol)?;
        match t {
            b'+' | b'-' | b'_' | b'#' | b',' | b'(' => {
                let (end, next) = need(find_line(buf, pos + 1, MAX_LINE))?;
                let line = &buf[pos + 1..end];
                let v = match t {
                    b'+' => Value::Status(lossy(line)),
                    b'-' => Value::Error(lossy(line)),
                    b'_' => Value::Nil,
                    b'#' => Value::Boolean(line == b"t"),
                    b',' => Value::Double(parse_double(line)?),
                    _ => Value::BigNumber(lossy(line)),
                };
                return Ok((v, next));
            }
            b':' => {
                let (n, next) = need(read_int(buf, pos + 1))?;
                return Ok((Value::Integer(n), next));
            }
            b'$' | b'!' | b'=' => {
                let (len, next) = need(read_len(buf, pos + 1))?;
                let Some(n) = len else {
                    return Ok((Value::Nil, next));
                };
                let after = need(expect_crlf(buf, next + n))?;
                let data = &buf[next..next + n];
                let v = match t {
                    b'$' => Value::Bulk(data.to_vec()),
                    b'!' => Value::Error(lossy(data)),
                    _ => match data.get(3) {
                        Some(b':') => Value::Verbatim {
                            format: lossy(&data[..3]),
                            data: data[4..].to_vec(),
                        },
                        _ => Value::Verbatim {
                            format: String::new(),
                            data: data.to_vec(),
                        },
                    },
                };
                return Ok((v, after));
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let (len, mut next) = need(read_len(buf, pos + 1))?;
                let Some(n) = len else {
                    return Ok((Value::Nil, next));
                };
                // Same rule as parse_reply: only a non-empty aggregate opens a level.
                if n > 0 && depth >= MAX_DEPTH {
                    return Err(DecodeError::NestingTooDeep);
                }
                // parse_reply proved every element is present (>= 3 bytes
                // each), so this capacity is bounded by the input size.
                let cap = n.min(buf.len() / 3);
                if t == b'%' || t == b'|' {
                    let mut pairs = Vec::with_capacity(cap);
                    for _ in 0..n {
                        let (k, p) = build(buf, next, depth + 1)?;
                        let (v, p) = build(buf, p, depth + 1)?;
                        pairs.push((k, v));
                        next = p;
                    }
                    if t == b'|' {
                        // Attributes annotate the value that follows; skip them.
                        pos = next;
                        continue;
                    }
                    return Ok((Value::Map(pairs), next));
                }
                let mut items = Vec::with_capacity(cap);
                for _ in 0..n {
                    let (v, p) = build(buf, next, depth + 1)?;
                    items.push(v);
                    next = p;
                }
                let v = match t {
                    b'*' => Value::Array(items),
                    b'~' => Value::Set(items),
                    _ => Value::Push(items),
                };
                return Ok((v, next));
            }
            _ => return Err(DecodeError::Protocol),
        }
    }
}

/// RESP3 doubles are `inf`, `-inf`, `nan` or a decimal/exponent literal; Rust's
/// float parser accepts all of these.
fn parse_double(line: &[u8]) -> Result<f64, DecodeError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .ok_or(DecodeError::Protocol)
}
