//! The Redis family's data model (Redis, Valkey, any RESP server with the
//! Redis command set): YCSB's Redis binding's commands, and what each reply
//! means. See the table in the parent module.
//!
//! Like the parent, it must not allocate on the hot path (encoding and
//! classifying); only [`returned_fields`] (data integrity checks) does.

use super::records::{Cell, Records, Shape};
use crate::outcome::Outcome;
use kvbench_model::OpKind;
use kvbench_proto::{resp, DecodeError};
use kvbench_workload::command::{Arg, CommandTemplate};
use kvbench_workload::keys::KeyName;
use kvbench_workload::values::java_string_hash;
use kvbench_workload::{Layout, Op};
use rand_core::RngCore;

/// The sorted set YCSB's Redis binding indexes keys in.
pub(super) const INDEX_KEY: &[u8] = b"_indices";

/// `GET` (plain), or `HMGET` of one field or of every field listed
/// (`all_listed`), or `HGETALL`.
#[inline]
pub(super) fn encode_read(
    d: &Records,
    key: &[u8],
    field: Option<u32>,
    all_listed: bool,
    buf: &mut Vec<u8>,
) {
    match d.layout {
        Layout::Plain => {
            buf.extend_from_slice(resp::GET_PREFIX);
            resp::write_bulk(buf, key);
        }
        Layout::Hash => match field {
            Some(f) => {
                resp::write_array_header(buf, 3);
                resp::write_bulk(buf, b"HMGET");
                resp::write_bulk(buf, key);
                resp::write_bulk(buf, &d.field_names[f as usize]);
            }
            None if all_listed => {
                resp::write_array_header(buf, 2 + d.field_names.len());
                resp::write_bulk(buf, b"HMGET");
                resp::write_bulk(buf, key);
                for name in &d.field_names {
                    resp::write_bulk(buf, name);
                }
            }
            None => {
                resp::write_array_header(buf, 2);
                resp::write_bulk(buf, b"HGETALL");
                resp::write_bulk(buf, key);
            }
        },
        Layout::SortedSets => {
            unreachable!("sortedsets has no reads (WorkloadSpec::validate)")
        }
    }
}

/// `SET` (plain) or `HMSET` of `names`.
#[inline]
pub(super) fn encode_write(
    d: &Records,
    key: &[u8],
    names: &[Vec<u8>],
    rng: &mut impl RngCore,
    buf: &mut Vec<u8>,
) {
    match d.layout {
        Layout::Plain => {
            buf.extend_from_slice(resp::SET_PREFIX);
            resp::write_bulk(buf, key);
            let len = d.lengths.sample(rng);
            resp::write_bulk_extend(buf, len, |b| {
                d.extend_value(rng, key, &d.field_names[0], b, len)
            });
        }
        Layout::SortedSets => {
            unreachable!("sortedsets has no updates or field writes (WorkloadSpec::validate)")
        }
        Layout::Hash => {
            resp::write_array_header(buf, 2 + 2 * names.len());
            resp::write_bulk(buf, b"HMSET");
            resp::write_bulk(buf, key);
            for name in names {
                resp::write_bulk(buf, name);
                let len = d.lengths.sample(rng);
                resp::write_bulk_extend(buf, len, |b| d.extend_value(rng, key, name, b, len));
            }
        }
    }
}

/// `GET` of a plain record, its name written straight into the request
/// (`Driver::encode_first_named`).
#[inline]
pub(super) fn encode_get_named(name: &KeyName, buf: &mut Vec<u8>) {
    write_head_named(resp::GET_PREFIX, name, buf);
}

/// `SET` of a plain record, its name written straight into the request:
/// the bytes and draws of [`encode_write`] (`Driver::encode_first_named`).
#[inline]
pub(super) fn encode_set_named(
    d: &Records,
    name: &KeyName,
    rng: &mut impl RngCore,
    buf: &mut Vec<u8>,
) {
    write_head_named(resp::SET_PREFIX, name, buf);
    let len = d.lengths.sample(rng);
    resp::write_bulk_extend(buf, len, |b| d.values.extend(rng, b, len));
}

/// Room for a request's head up to its key: a command's prefix (13
/// bytes), the key's header (`$32\r\n` at most), the key and its CRLF.
const HEAD_ROOM: usize = 64;

/// Appends `prefix` (a command's array header and name, 13 bytes) and
/// `name` as a bulk string. Written in one fixed-size piece of `buf`, then
/// cut to its length: one capacity check for the whole head, where
/// appending its five parts one after another checked five times.
#[inline(always)]
fn write_head_named(prefix: &[u8; 13], name: &KeyName, buf: &mut Vec<u8>) {
    let at = buf.len();
    buf.resize(at + HEAD_ROOM, 0);
    let Ok(room) = <&mut [u8; HEAD_ROOM]>::try_from(&mut buf[at..]) else {
        unreachable!("HEAD_ROOM bytes were just appended");
    };
    room[..13].copy_from_slice(prefix);
    // A name is at most 32 bytes: one or two digits.
    let len = name.len().min(KeyName::ROOM);
    let key_at = if len < 10 {
        room[13..17].copy_from_slice(&[b'$', b'0' + len as u8, b'\r', b'\n']);
        17
    } else {
        let digits = [b'0' + (len / 10) as u8, b'0' + (len % 10) as u8];
        room[13..18].copy_from_slice(&[b'$', digits[0], digits[1], b'\r', b'\n']);
        18
    };
    let Ok(key_room) =
        <&mut [u8; KeyName::ROOM]>::try_from(&mut room[key_at..key_at + KeyName::ROOM])
    else {
        unreachable!("the name's room is inside the head's");
    };
    name.store(key_room);
    let end = key_at + len;
    room[end..end + 2].copy_from_slice(b"\r\n");
    buf.truncate(at + end + 2);
}

/// `ZADD <set> <score> m<j> ...`: every member of sorted set `keynum`,
/// named `key` (the load of a `sortedsets` record, see
/// `kvbench_workload::zsets`). Cold path: a load.
pub(super) fn encode_zset(d: &Records, keynum: u64, key: &[u8], buf: &mut Vec<u8>) {
    let (group, set) = d.zsets.locate(keynum);
    resp::write_array_header(buf, 2 + 2 * d.zsets.members as usize);
    resp::write_bulk(buf, b"ZADD");
    resp::write_bulk(buf, key);
    let (mut number, mut member) = (itoa::Buffer::new(), Vec::with_capacity(24));
    for (score, j) in d.zsets.members(group, set) {
        resp::write_bulk(buf, number.format(score).as_bytes());
        member.clear();
        member.push(b'm');
        member.extend_from_slice(number.format(j).as_bytes());
        resp::write_bulk(buf, &member);
    }
}

/// `ZUNIONSTORE <dest> <sets> <set 0> ... <set n-1>` of `op`'s group into
/// its client's destination.
pub(super) fn encode_zunionstore(d: &Records, op: &Op, buf: &mut Vec<u8>) {
    let (group, _) = d.zsets.locate(op.keynum);
    let mut key = Vec::with_capacity(48);
    resp::write_array_header(buf, 3 + d.zsets.sets as usize);
    resp::write_bulk(buf, b"ZUNIONSTORE");
    kvbench_workload::ZsetShape::write_dest_key(d.keys.prefix(), group, op.client, &mut key);
    resp::write_bulk(buf, &key);
    resp::write_bulk(buf, itoa::Buffer::new().format(d.zsets.sets).as_bytes());
    for set in 0..d.zsets.sets {
        key.clear();
        kvbench_workload::ZsetShape::write_set_key(d.keys.prefix(), group, set, &mut key);
        resp::write_bulk(buf, &key);
    }
}

/// Command template `t` with its placeholders filled: `first_key` is the
/// template's first key argument as `Driver::write_key` wrote it (text
/// around the key included); every `__key__` gets the same record key,
/// `__data__` a value of the workload's size, `__score__` a whole number
/// below 1,000,000 drawn from `rng`.
pub(super) fn encode_template(
    d: &Records,
    t: &CommandTemplate,
    first_key: &[u8],
    rng: &mut impl RngCore,
    buf: &mut Vec<u8>,
) {
    let bare = t.first_key().map_or(&[][..], |(prefix, suffix)| {
        first_key
            .get(prefix.len()..first_key.len().saturating_sub(suffix.len()))
            .unwrap_or(first_key)
    });
    resp::write_array_header(buf, t.args.len());
    let mut number = itoa::Buffer::new();
    for arg in &t.args {
        match arg {
            Arg::Literal(bytes) => resp::write_bulk(buf, bytes),
            Arg::Key { prefix, suffix } => {
                resp::write_bulk_with(buf, prefix.len() + bare.len() + suffix.len(), |out| {
                    let (p, rest) = out.split_at_mut(prefix.len());
                    let (k, s) = rest.split_at_mut(bare.len());
                    p.copy_from_slice(prefix);
                    k.copy_from_slice(bare);
                    s.copy_from_slice(suffix);
                });
            }
            Arg::Data => {
                let len = d.lengths.sample(rng);
                resp::write_bulk_extend(buf, len, |b| d.values.extend(rng, b, len));
            }
            Arg::Score => {
                let score = rng.next_u64() % SCORE_RANGE;
                resp::write_bulk(buf, number.format(score).as_bytes());
            }
        }
    }
}

/// `__score__` is below this.
const SCORE_RANGE: u64 = 1_000_000;

/// Parses one reply from the start of `buf` and says what it means.
#[inline]
pub(super) fn classify(shape: Shape, buf: &[u8]) -> Result<Option<(Outcome, usize)>, DecodeError> {
    Ok(resp::parse_reply(buf)?.map(|r| (redis_outcome(shape, &r), r.consumed)))
}

/// The fields a complete read reply returned (cold path: allocates).
pub(super) fn returned_fields(
    d: &Records,
    op: &Op,
    reply: &[u8],
    requested: &[&[u8]],
    key_text: &str,
) -> Result<Vec<Cell>, String> {
    Ok(match d.layout {
        Layout::Plain | Layout::SortedSets => {
            let value = redis_value(reply)?;
            vec![(
                d.field_names[0].clone(),
                value.as_bytes().map(<[u8]>::to_vec),
            )]
        }
        Layout::Hash => {
            let hmget =
                op.fields_read().is_some() || (op.kind == OpKind::Read && d.read_all_fields);
            match redis_value(reply)? {
                resp::Value::Array(items) if hmget => requested
                    .iter()
                    .zip(items)
                    .map(|(name, v)| (name.to_vec(), v.as_bytes().map(<[u8]>::to_vec)))
                    .collect(),
                resp::Value::Array(items) => pairs(items.into_iter())?,
                resp::Value::Map(items) => pairs(items.into_iter().flat_map(|(k, v)| [k, v]))?,
                other => return Err(format!("{key_text}: unexpected reply {other:?}")),
            }
        }
    })
}

/// As [`classify`], for a reply that must be the integer `expected`
/// (`ZUNIONSTORE`'s cardinality): any other number is an error, so a wrong
/// union is never counted as completed.
pub(super) fn classify_count(
    expected: u64,
    buf: &[u8],
) -> Result<Option<(Outcome, usize)>, DecodeError> {
    Ok(resp::parse_reply(buf)?.map(|r| {
        let exact = r.kind == resp::ReplyKind::Integer
            && buf
                .get(1..r.consumed.saturating_sub(2))
                .and_then(|digits| std::str::from_utf8(digits).ok())
                .and_then(|digits| digits.parse::<u64>().ok())
                == Some(expected);
        let outcome = if exact { Outcome::Ok } else { Outcome::Error };
        (outcome, r.consumed)
    }))
}

fn redis_outcome(shape: Shape, r: &resp::Reply) -> Outcome {
    use resp::ReplyKind as K;
    match (shape, r.kind) {
        (_, K::Error) => Outcome::Error,
        // HGETALL answers an empty array (RESP2) or map (RESP3) for a missing
        // key, HMGET an array of nils (no payload at all: names are never empty).
        (Shape::Read, K::Array | K::Map) if r.elements == 0 || r.payload_bytes == 0 => {
            Outcome::Miss
        }
        (Shape::Read, K::Array | K::Map | K::Bulk) => Outcome::Ok,
        (Shape::Read, K::Nil) => Outcome::Miss,
        (Shape::Write, K::Status | K::Integer) => Outcome::Ok,
        // A scan starts at an existing key, which the index holds: nothing
        // at all means no index (a load without `kvbench.redis.index`).
        (Shape::KeyList, K::Array | K::Set) if r.elements == 0 => Outcome::Miss,
        (Shape::KeyList, K::Array | K::Set) => Outcome::Ok,
        (Shape::Any, _) => Outcome::Ok,
        _ => Outcome::Error,
    }
}

/// `ZADD _indices <hash(key)> <key>`, as YCSB's Redis binding indexes an insert.
pub(super) fn encode_zadd(key: &[u8], buf: &mut Vec<u8>) {
    let mut score = [0u8; 24];
    let score = java_double_of_int(java_string_hash(key), &mut score);
    resp::write_array_header(buf, 4);
    resp::write_bulk(buf, b"ZADD");
    resp::write_bulk(buf, INDEX_KEY);
    resp::write_bulk(buf, score);
    resp::write_bulk(buf, key);
}

/// `ZRANGEBYSCORE _indices <hash(start)> +inf LIMIT 0 <len>`: YCSB's scan
/// lookup (Jedis' `zrangeByScore(key, min, +inf, 0, len)`).
pub(super) fn encode_zrangebyscore(start: &[u8], len: u32, buf: &mut Vec<u8>) {
    let mut score = [0u8; 24];
    let score = java_double_of_int(java_string_hash(start), &mut score);
    let mut count = itoa::Buffer::new();
    resp::write_array_header(buf, 7);
    resp::write_bulk(buf, b"ZRANGEBYSCORE");
    resp::write_bulk(buf, INDEX_KEY);
    resp::write_bulk(buf, score);
    resp::write_bulk(buf, b"+inf");
    resp::write_bulk(buf, b"LIMIT");
    resp::write_bulk(buf, b"0");
    resp::write_bulk(buf, count.format(len).as_bytes());
}

/// Java's `Double.toString((double) v)` for an `int` `v`: `97.0`,
/// `-1234567.0`, and from 10^7 on computerized scientific notation with the
/// shortest digits (`1.11578566E8`, `1.0E7`, `-2.147483648E9`). Every `int`
/// is exactly a double, so the shortest digits are its own digits without
/// trailing zeros.
pub(super) fn java_double_of_int(v: i32, out: &mut [u8; 24]) -> &[u8] {
    let mut digits = itoa::Buffer::new();
    let d = digits.format(v.unsigned_abs()).as_bytes();
    let mut n = 0;
    let mut push = |bytes: &[u8], n: &mut usize| {
        out[*n..*n + bytes.len()].copy_from_slice(bytes);
        *n += bytes.len();
    };
    if v < 0 {
        push(b"-", &mut n);
    }
    if v.unsigned_abs() < 10_000_000 {
        push(d, &mut n);
        push(b".0", &mut n);
    } else {
        let significant = d.len() - d.iter().rev().take_while(|&&c| c == b'0').count();
        push(&d[..1], &mut n);
        push(b".", &mut n);
        if significant > 1 {
            push(&d[1..significant], &mut n);
        } else {
            push(b"0", &mut n);
        }
        push(b"E", &mut n);
        let mut exp = itoa::Buffer::new();
        push(exp.format(d.len() - 1).as_bytes(), &mut n);
    }
    &out[..n]
}

/// Calls `f` with each bulk string of a complete RESP array (or set) reply
/// and returns how many there were; an error reply has none.
pub(super) fn for_each_bulk(reply: &[u8], mut f: impl FnMut(&[u8])) -> Result<usize, DecodeError> {
    let summary = resp::parse_reply(reply)?.ok_or(DecodeError::Protocol)?;
    match summary.kind {
        resp::ReplyKind::Error => return Ok(0),
        resp::ReplyKind::Array | resp::ReplyKind::Set => {}
        _ => return Err(DecodeError::Protocol),
    }
    let mut at = 0;
    let (count, next) = read_header(reply, &mut at, b"*~")?;
    at = next;
    for _ in 0..count {
        let (len, next) = read_header(reply, &mut at, b"$")?;
        let end = next + len;
        f(reply.get(next..end).ok_or(DecodeError::Protocol)?);
        if reply.get(end..end + 2) != Some(b"\r\n") {
            return Err(DecodeError::Protocol);
        }
        at = end + 2;
    }
    Ok(count)
}

/// Reads `<type><decimal>\r\n` at `*at` for one of `types`; returns the
/// number and the index after the line.
fn read_header(buf: &[u8], at: &mut usize, types: &[u8]) -> Result<(usize, usize), DecodeError> {
    let start = *at;
    if !buf.get(start).is_some_and(|t| types.contains(t)) {
        return Err(DecodeError::Protocol);
    }
    let line_end = buf[start..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or(DecodeError::Protocol)?
        + start;
    let text = std::str::from_utf8(&buf[start + 1..line_end]).map_err(|_| DecodeError::Protocol)?;
    let n = text.parse().map_err(|_| DecodeError::Protocol)?;
    Ok((n, line_end + 2))
}

fn redis_value(reply: &[u8]) -> Result<resp::Value, String> {
    resp::parse_value(reply)
        .map_err(|e| e.to_string())?
        .map(|(v, _)| v)
        .ok_or_else(|| "incomplete reply".to_owned())
}

/// HGETALL's flat `name, value, name, value` list as pairs.
#[allow(clippy::type_complexity)]
fn pairs(
    mut items: impl Iterator<Item = resp::Value>,
) -> Result<Vec<(Vec<u8>, Option<Vec<u8>>)>, String> {
    let mut out = Vec::new();
    while let Some(name) = items.next() {
        let value = items
            .next()
            .ok_or("odd number of elements in a hash reply")?;
        let name = name
            .as_bytes()
            .ok_or("a field name that is not a string")?
            .to_vec();
        out.push((name, value.as_bytes().map(<[u8]>::to_vec)));
    }
    Ok(out)
}
