//! Data models: how a neutral [`Op`] becomes wire bytes for each system, and
//! how a reply becomes an [`Outcome`].
//!
//! Redis/Valkey: one hash per record, fields `field0..fieldN-1` (as YCSB's
//! Redis binding; HMSET, which YCSB uses, rather than HSET, so the server's
//! command statistics read the same as a YCSB run's).
//! Memcached: one item per record whose value is a JSON object of the fields
//! (as YCSB's Memcached binding encodes it, so YCSB can read what kvbench
//! loaded). Memcached cannot update one field in place, so an update
//! rewrites the whole record with fresh values: the record keeps its size and
//! every field, which is what a user of that data model would have to do.
//!
//! This module must not touch sockets or clocks.

use kvbench_model::{OpKind, SystemKind};
use kvbench_proto::{memcache_text as mc, resp, DecodeError};
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::values::fill_value;
use kvbench_workload::{Op, WorkloadSpec};
use rand_core::RngCore;

/// What a reply means for the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A read hit or an acknowledged write: counted and timed.
    Ok,
    /// A read that found no record: counted apart, never timed.
    Miss,
    /// An error reply (or a reply of the wrong shape): counted apart, never timed.
    Error,
}

/// Encodes operations and classifies replies for one system and workload.
#[derive(Debug, Clone)]
pub struct Driver {
    system: SystemKind,
    keys: KeyNamer,
    field_count: u32,
    field_length: usize,
    read_all_fields: bool,
    write_all_fields: bool,
    /// Precomputed `field0`..`fieldN-1`, so encoding never formats numbers.
    field_names: Vec<Vec<u8>>,
    /// Length of a record's JSON encoding for Memcached, fixed because
    /// values never need escaping.
    json_len: usize,
}

impl Driver {
    /// A driver for `spec` on `system`.
    pub fn new(system: SystemKind, spec: &WorkloadSpec, keys: KeyNamer) -> Driver {
        let field_names: Vec<Vec<u8>> = (0..spec.field_count)
            .map(|i| format!("field{i}").into_bytes())
            .collect();
        let field_length = spec.field_length as usize;
        // {"f":"v","f":"v"}: braces, and per field two quoted strings, a colon,
        // and a comma between fields.
        let json_len = 2
            + field_names
                .iter()
                .map(|n| n.len() + 2 + 1 + field_length + 2)
                .sum::<usize>()
            + field_names.len().saturating_sub(1);
        Driver {
            system,
            keys,
            field_count: spec.field_count,
            field_length,
            read_all_fields: spec.read_all_fields,
            write_all_fields: spec.write_all_fields,
            field_names,
            json_len,
        }
    }

    /// Length in bytes of one record's Memcached value.
    pub fn memcached_value_len(&self) -> usize {
        self.json_len
    }

    /// Appends the request for `op` to `buf`. `key` is scratch space reused
    /// across calls so that steady-state encoding allocates nothing.
    #[inline]
    pub fn encode(&self, op: &Op, rng: &mut impl RngCore, key: &mut Vec<u8>, buf: &mut Vec<u8>) {
        key.clear();
        self.keys.write_key(op.keynum, key);
        match self.system {
            SystemKind::Redis => self.encode_redis(op, rng, key, buf),
            SystemKind::Memcached => self.encode_memcached(op, rng, key, buf),
        }
    }

    fn encode_redis(&self, op: &Op, rng: &mut impl RngCore, key: &[u8], buf: &mut Vec<u8>) {
        match op.kind {
            OpKind::Read => match (self.read_all_fields, op.field) {
                (false, Some(f)) => {
                    resp::write_array_header(buf, 3);
                    resp::write_bulk(buf, b"HGET");
                    resp::write_bulk(buf, key);
                    resp::write_bulk(buf, &self.field_names[f as usize]);
                }
                _ => {
                    resp::write_array_header(buf, 2);
                    resp::write_bulk(buf, b"HGETALL");
                    resp::write_bulk(buf, key);
                }
            },
            OpKind::Update if !self.write_all_fields => {
                let f = op.field.unwrap_or(0) as usize;
                resp::write_array_header(buf, 4);
                resp::write_bulk(buf, b"HMSET");
                resp::write_bulk(buf, key);
                resp::write_bulk(buf, &self.field_names[f]);
                resp::write_bulk_with(buf, self.field_length, |v| fill_value(rng, v));
            }
            OpKind::Update | OpKind::Insert => {
                resp::write_array_header(buf, 2 + 2 * self.field_count as usize);
                resp::write_bulk(buf, b"HMSET");
                resp::write_bulk(buf, key);
                for name in &self.field_names {
                    resp::write_bulk(buf, name);
                    resp::write_bulk_with(buf, self.field_length, |v| fill_value(rng, v));
                }
            }
        }
    }

    fn encode_memcached(&self, op: &Op, rng: &mut impl RngCore, key: &[u8], buf: &mut Vec<u8>) {
        match op.kind {
            OpKind::Read => mc::encode_get(buf, key),
            OpKind::Update | OpKind::Insert => {
                mc::encode_set_with(buf, key, 0, 0, self.json_len, |out| {
                    self.write_json_record(rng, out)
                })
            }
        }
    }

    /// Writes `{"field0":"...",...}` into `out`, which is exactly `json_len` long.
    fn write_json_record(&self, rng: &mut impl RngCore, out: &mut [u8]) {
        let mut at = 0;
        fn put(bytes: &[u8], at: &mut usize, out: &mut [u8]) {
            out[*at..*at + bytes.len()].copy_from_slice(bytes);
            *at += bytes.len();
        }
        put(b"{", &mut at, out);
        for (i, name) in self.field_names.iter().enumerate() {
            if i > 0 {
                put(b",", &mut at, out);
            }
            put(b"\"", &mut at, out);
            put(name, &mut at, out);
            put(b"\":\"", &mut at, out);
            fill_value(rng, &mut out[at..at + self.field_length]);
            at += self.field_length;
            put(b"\"", &mut at, out);
        }
        put(b"}", &mut at, out);
        debug_assert_eq!(at, out.len());
    }

    /// Parses one reply from the start of `buf` and classifies it for `kind`.
    /// `Ok(None)` means the reply is not complete yet.
    ///
    /// # Errors
    /// A [`DecodeError`] when the bytes are not valid protocol; the connection
    /// cannot be trusted after that.
    #[inline]
    pub fn classify(
        &self,
        kind: OpKind,
        buf: &[u8],
    ) -> Result<Option<(Outcome, usize)>, DecodeError> {
        match self.system {
            SystemKind::Redis => {
                Ok(resp::parse_reply(buf)?.map(|r| (self.redis_outcome(kind, &r), r.consumed)))
            }
            SystemKind::Memcached => {
                Ok(mc::parse_reply(buf)?.map(|r| (memcached_outcome(kind, &r), r.consumed)))
            }
        }
    }

    fn redis_outcome(&self, kind: OpKind, r: &resp::Reply) -> Outcome {
        use resp::ReplyKind as K;
        match (kind, r.kind) {
            (_, K::Error) => Outcome::Error,
            // HGETALL answers an empty array (RESP2) or empty map (RESP3) for a missing key.
            (OpKind::Read, K::Array | K::Map) if r.elements == 0 => Outcome::Miss,
            (OpKind::Read, K::Array | K::Map) => Outcome::Ok,
            (OpKind::Read, K::Nil) => Outcome::Miss,
            (OpKind::Read, K::Bulk) => Outcome::Ok,
            (OpKind::Update | OpKind::Insert, K::Status) => Outcome::Ok,
            _ => Outcome::Error,
        }
    }
}

fn memcached_outcome(kind: OpKind, r: &mc::McReply) -> Outcome {
    use mc::McReplyKind as K;
    match (kind, r.kind) {
        (OpKind::Read, K::Values) => Outcome::Ok,
        (OpKind::Read, K::Miss) => Outcome::Miss,
        (OpKind::Update | OpKind::Insert, K::Stored) => Outcome::Ok,
        _ => Outcome::Error,
    }
}
