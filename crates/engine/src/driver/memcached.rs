//! Memcached's data model: YCSB's Memcached binding's records (a JSON
//! object per record under `table-key`, or the raw value in the plain
//! model), and what each reply means. See the table in the parent module.
//!
//! Like the parent, it must not allocate on the hot path (encoding and
//! classifying); only [`returned_fields`] (data integrity checks) does.

use super::records::{json_len, Cell, Records, Shape};
use crate::outcome::Outcome;
use kvbench_proto::{memcache_text as mc, DecodeError};
use kvbench_workload::keys::KeyName;
use kvbench_workload::{Layout, MemcachedUpdate, Rng};
use rand_core::{RngCore, SeedableRng};

/// `get` of the record.
#[inline]
pub(super) fn encode_read(d: &Records, key: &[u8], buf: &mut Vec<u8>) {
    with_wire_key(d, key, |k| mc::encode_get(buf, k));
}

/// A `set` of the record, or (an update with `kvbench.memcached.update=ycsb`)
/// a `replace` with only the fields in `names`.
#[inline]
pub(super) fn encode_write(
    d: &Records,
    key: &[u8],
    names: &[Vec<u8>],
    rng: &mut impl RngCore,
    buf: &mut Vec<u8>,
    update: bool,
) {
    match d.layout {
        Layout::Plain => {
            let len = d.lengths.sample(rng);
            with_wire_key(d, key, |k| {
                mc::encode_set_extend(buf, k, 0, 0, len, |b| {
                    d.extend_value(rng, key, &d.field_names[0], b, len)
                })
            });
        }
        Layout::SortedSets => {
            unreachable!("memcached has no sorted sets (Driver::check refuses them)")
        }
        Layout::Hash => {
            let replace = update && d.memcached_update == MemcachedUpdate::Ycsb;
            // Full mode rewrites every field, whatever the update chose.
            let names = if replace { names } else { &d.field_names[..] };
            encode_json_record(d, key, names, replace, rng, buf);
        }
    }
}

/// `get` of a plain record, its name written straight into the request
/// behind the wire prefix (`Driver::encode_first_named`).
#[inline]
pub(super) fn encode_get_named(d: &Records, name: &KeyName, buf: &mut Vec<u8>) {
    let prefix = &d.memcached_prefix;
    mc::encode_get_keyed(buf, prefix.len() + name.len(), |b| {
        b.extend_from_slice(prefix);
        name.append_to(b);
    });
}

/// `set <prefix><name> 0 0 <len>` and a value from the pool, the name
/// written in place: what [`encode_write`] sends for a plain record, with
/// the same draws (`Driver::encode_first_named`).
#[inline]
pub(super) fn encode_set_named(
    d: &Records,
    name: &KeyName,
    rng: &mut impl RngCore,
    buf: &mut Vec<u8>,
) {
    let len = d.lengths.sample(rng);
    // Each encoder has its own closure for the key (the prefix, then the
    // name): one closure shared by both was one function with two callers,
    // which the compiler kept out of line, and every key went through a
    // call with the name in memory.
    let prefix = &d.memcached_prefix;
    let put_key = |b: &mut Vec<u8>| {
        b.extend_from_slice(prefix);
        name.append_to(b);
    };
    let key_len = prefix.len() + name.len();
    mc::encode_set_keyed_extend(buf, key_len, put_key, len, |b| d.values.extend(rng, b, len));
}

/// Parses one reply from the start of `buf` and says what it means.
#[inline]
pub(super) fn classify(shape: Shape, buf: &[u8]) -> Result<Option<(Outcome, usize)>, DecodeError> {
    Ok(mc::parse_reply(buf)?.map(|r| (memcached_outcome(shape, &r), r.consumed)))
}

/// The fields a complete read reply returned, only those asked for, as
/// YCSB's binding filters them (cold path: allocates).
pub(super) fn returned_fields(
    d: &Records,
    reply: &[u8],
    requested: &[&[u8]],
    key_text: &str,
) -> Result<Vec<Cell>, String> {
    let (items, _) = mc::parse_values(reply)
        .map_err(|e| format!("{key_text}: {e}"))?
        .ok_or_else(|| format!("{key_text}: incomplete reply"))?;
    let Some((_, _, data)) = items.into_iter().next() else {
        return Err(format!("{key_text}: no value"));
    };
    Ok(match d.layout {
        Layout::Plain | Layout::SortedSets => vec![(d.field_names[0].clone(), Some(data))],
        Layout::Hash => parse_json_object(&data)
            .map_err(|e| format!("{key_text}: {e}"))?
            .into_iter()
            .filter(|(name, _)| requested.contains(&name.as_slice()))
            .map(|(n, v)| (n, Some(v)))
            .collect(),
    })
}

/// A Memcached `set` (or `replace`) of a JSON object of `names`.
///
/// The length header precedes the data, so with variable lengths each
/// value's length is drawn twice from the same sub-generator (seeded
/// from one draw of `rng`): once to total the length, once to write.
fn encode_json_record(
    d: &Records,
    key: &[u8],
    names: &[Vec<u8>],
    replace: bool,
    rng: &mut impl RngCore,
    buf: &mut Vec<u8>,
) {
    let whole = names.len() == d.field_names.len();
    let (total, seed) = match d.json_len {
        Some(n) if whole => (n, 0),
        Some(_) => {
            let len = d.lengths.max() as usize;
            (json_len(names.iter().map(|n| (n.len(), len))), 0)
        }
        None => {
            let seed = rng.next_u64();
            let mut lengths = Rng::seed_from_u64(seed);
            let total = json_len(
                names
                    .iter()
                    .map(|n| (n.len(), d.lengths.sample(&mut lengths))),
            );
            (total, seed)
        }
    };
    let fill = |out: &mut [u8]| {
        let mut lengths = Rng::seed_from_u64(seed);
        let mut at = 0;
        put(out, &mut at, b"{");
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                put(out, &mut at, b",");
            }
            put(out, &mut at, b"\"");
            put(out, &mut at, name);
            put(out, &mut at, b"\":\"");
            let len = d.lengths.sample(&mut lengths);
            d.fill(rng, key, name, &mut out[at..at + len]);
            at += len;
            put(out, &mut at, b"\"");
        }
        put(out, &mut at, b"}");
        debug_assert_eq!(at, out.len());
    };
    with_wire_key(d, key, |k| {
        if replace {
            mc::encode_replace_with(buf, k, 0, 0, total, fill);
        } else {
            mc::encode_set_with(buf, k, 0, 0, total, fill);
        }
    });
}

/// Calls `f` with the key as Memcached sees it: the prefix and `key`,
/// joined on the stack (a Memcached key is at most 250 bytes), so the
/// hot path does not allocate.
#[inline]
pub(super) fn with_wire_key<R>(d: &Records, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
    if d.memcached_prefix.is_empty() {
        return f(key);
    }
    let mut joined = [0u8; 256];
    let (p, k) = (d.memcached_prefix.len(), key.len());
    let n = (p + k).min(joined.len());
    joined[..p.min(n)].copy_from_slice(&d.memcached_prefix[..p.min(n)]);
    joined[p.min(n)..n].copy_from_slice(&key[..n - p.min(n)]);
    f(&joined[..n])
}

fn memcached_outcome(shape: Shape, r: &mc::McReply) -> Outcome {
    use mc::McReplyKind as K;
    match (shape, r.kind) {
        (Shape::Read, K::Values) => Outcome::Ok,
        (Shape::Read, K::Miss) => Outcome::Miss,
        (Shape::Write, K::Stored) => Outcome::Ok,
        // Includes NOT_STORED: a `replace` of a record that is not there.
        _ => Outcome::Error,
    }
}

/// Parses a flat JSON object of string values (what kvbench and YCSB's
/// Memcached binding store): `{"name":"value",...}`, with `\"`, `\\` and
/// `\/` escapes.
#[allow(clippy::type_complexity)]
pub(super) fn parse_json_object(data: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>, String> {
    fn ws(d: &[u8], i: &mut usize) {
        while d.get(*i).is_some_and(|c| c.is_ascii_whitespace()) {
            *i += 1;
        }
    }
    fn expect(d: &[u8], i: &mut usize, c: u8) -> Result<(), String> {
        ws(d, i);
        if d.get(*i) == Some(&c) {
            *i += 1;
            Ok(())
        } else {
            Err(format!(
                "malformed JSON record: expected '{}' at byte {}",
                c as char, *i
            ))
        }
    }
    fn string(d: &[u8], i: &mut usize) -> Result<Vec<u8>, String> {
        expect(d, i, b'"')?;
        let mut out = Vec::new();
        loop {
            match d.get(*i) {
                None => return Err("malformed JSON record: unterminated string".into()),
                Some(b'"') => {
                    *i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    match d.get(*i + 1) {
                        Some(c @ (b'"' | b'\\' | b'/')) => out.push(*c),
                        _ => return Err("unsupported escape in JSON record".into()),
                    }
                    *i += 2;
                }
                Some(c) => {
                    out.push(*c);
                    *i += 1;
                }
            }
        }
    }
    let mut i = 0;
    let mut out = Vec::new();
    expect(data, &mut i, b'{')?;
    ws(data, &mut i);
    if data.get(i) == Some(&b'}') {
        return Ok(out);
    }
    loop {
        let name = string(data, &mut i)?;
        expect(data, &mut i, b':')?;
        let value = string(data, &mut i)?;
        out.push((name, value));
        ws(data, &mut i);
        match data.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Ok(out),
            _ => return Err(format!("malformed JSON record at byte {i}")),
        }
    }
}

#[inline]
fn put(out: &mut [u8], at: &mut usize, bytes: &[u8]) {
    out[*at..*at + bytes.len()].copy_from_slice(bytes);
    *at += bytes.len();
}
