//! Data models: how a neutral [`Op`] becomes wire bytes for each system, and
//! how a reply becomes an [`Outcome`].
//!
//! This module must not touch sockets or clocks, and
//! [`Driver::encode_first`] (with every other encoder here) must not
//! allocate: keys go into a scratch buffer the caller reuses, values
//! straight into the send buffer.
//!
//! # Data models (`kvbench.datamodel`, see docs/workloads.md)
//!
//! **hash** (the default; YCSB's Redis and Memcached bindings):
//!
//! | op | Redis | Memcached |
//! |---|---|---|
//! | read, all fields | `HGETALL key` (`HMGET key f0..fN-1` with `dataintegrity`) | `get key` |
//! | read, one field | `HMGET key f` | `get key` (the binding filters fields itself) |
//! | update | `HMSET key f v [f v ...]` | `set` of the whole record as JSON (`kvbench.memcached.update=full`) or `replace` with a JSON object of only the changed field(s) (`=ycsb`, as YCSB) |
//! | insert | `HMSET key f0 v0 ...`, then `ZADD _indices <hash(key)> key` with `kvbench.redis.index=ycsb` | `set` of the whole record as JSON |
//! | scan | `ZRANGEBYSCORE _indices <hash(start)> +inf LIMIT 0 <n>`, then one read per key returned | unsupported |
//! | read-modify-write | a read (one field or all), then an update | `get`, then the update |
//!
//! `hash(key)` is Java's `String.hashCode` of the key, written as Java's
//! `Double.toString` writes it (`-5.94971599E8`), as YCSB's binding sends it.
//!
//! **plain** (`fieldcount=1`): `GET key` / `SET key value` on Redis, `get` /
//! `set` of the raw value on Memcached; no scans.
//!
//! # Operations of several requests
//!
//! Most operations are one request and one reply. The rest, and how the
//! connection drives them ([`Step`]):
//!
//! - an indexed insert is `HMSET` ([`Driver::encode_first`]) and `ZADD`
//!   ([`Driver::encode_index`]), each sent on its key's node; classify both
//!   replies with [`Step::First`] (the operation is `Ok` when both are);
//! - a read-modify-write is [`Step::First`] (the read, one reply), then,
//!   after its reply, [`Driver::encode_rmw_write`] ([`Step::RmwWrite`], one
//!   reply), timed from the first send to the last reply, as YCSB times it;
//! - a Redis scan is [`Step::First`] (`ZRANGEBYSCORE`, one reply), then,
//!   after its reply, one [`Driver::encode_scan_read`] per key that
//!   [`Driver::for_each_scan_key`] finds in it ([`Step::ScanRead`], one
//!   reply each).
//!
//! [`Driver::next_step`] says which step follows which.

use kvbench_model::{OpKind, Protocol, SystemKind};
use kvbench_proto::DecodeError;
use kvbench_workload::command::CommandTemplate;
use kvbench_workload::keys::{KeyName, KeyNamer};
use kvbench_workload::{Layout, Op, WorkloadSpec, ZsetShape};
use rand_core::RngCore;

pub(crate) mod aerospike;
mod memcached;
mod records;
mod redis;

use records::{json_len, Records, Shape};
use redis::INDEX_KEY;

/// Aerospike's requests go through its official client
/// ([`aerospike::Model`]), never through this module's wire encoders: the
/// engine takes its library path for it before any encoder is asked.
const NO_WIRE: &str = "Aerospike is driven through its client library, not kvbench's wire codecs";

pub use crate::outcome::Outcome;

/// Which request of a multi-request operation a reply answers (see the
/// module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// What [`Driver::encode_first`] (and [`Driver::encode_index`]) wrote:
    /// the whole operation for reads, updates and inserts (an indexed
    /// insert's two commands included), the read of a read-modify-write,
    /// the key lookup of a scan.
    First,
    /// The update of a read-modify-write ([`Driver::encode_rmw_write`]).
    RmwWrite,
    /// One of a scan's record reads ([`Driver::encode_scan_read`]).
    ScanRead,
    /// Cache-aside: the set of a record a read missed ([`Driver::encode_fill`]).
    Fill,
}

/// Encodes operations and classifies replies for one system and workload.
#[derive(Debug, Clone)]
pub struct Driver {
    /// For messages only: what is encoded follows `protocol`.
    system: SystemKind,
    protocol: Protocol,
    /// What every encoder reads (see [`Records`]).
    rec: Records,
    redis_index: bool,
    /// The longest value a record can have on Memcached.
    max_value_len: usize,
    /// `kvbench.command.N`, in order: operations of kind
    /// [`OpKind::command`]`(i)` send template `i`.
    commands: Vec<CommandTemplate>,
    /// See [`Driver::reply_limit`].
    reply_limit: usize,
    /// `kvbench.mode=cache-aside`: a read miss's penalty before its fill.
    cache_aside: Option<kvbench_workload::cache_aside::Penalty>,
    /// [`Driver::encode_first_named`] applies: the plain data model of the
    /// Redis family or of Memcached (with a wire prefix that leaves room
    /// for any name), without data integrity checks (whose values are made
    /// from the key).
    names_in_place: bool,
}

/// The smallest reply limit: room for any error text or probe reply.
const MIN_REPLY_LIMIT: usize = 1 << 20;

impl Driver {
    /// A driver for `spec` (which must have passed
    /// [`WorkloadSpec::validate`]) on `system`, naming keys with `keys`
    /// (normally `spec.key_namer()`).
    pub fn new(system: SystemKind, spec: &WorkloadSpec, keys: KeyNamer) -> Driver {
        let rec = Records::new(spec, keys);
        let field_names = &rec.field_names;
        let max_len = rec.lengths.max() as usize;
        let max_value_len = match spec.data_model.layout {
            Layout::Hash => json_len(field_names.iter().map(|n| (n.len(), max_len))),
            Layout::Plain | Layout::SortedSets => max_len,
        };
        // A record with every field at its longest, with names and framing;
        // or a scan's key list. Commands of the user's own (memtier's
        // --command) and sorted sets can get anything RESP allows.
        let record: usize = field_names
            .iter()
            .map(|n| n.len() + max_len + 32)
            .sum::<usize>()
            + max_value_len
            + 64;
        let scan = spec.max_scan_length as usize * (rec.keys.max_len() + 16);
        let reply_limit =
            if spec.commands.is_empty() && spec.data_model.layout != Layout::SortedSets {
                record.max(scan).saturating_mul(4).max(MIN_REPLY_LIMIT)
            } else {
                kvbench_proto::MAX_LEN
            };
        let names_in_place = match system.protocol() {
            Protocol::Resp => true,
            Protocol::Memcache => rec.memcached_prefix.len() <= 200,
            Protocol::Aerospike => false,
        } && spec.data_model.layout == Layout::Plain
            && !spec.data_integrity;
        Driver {
            reply_limit,
            system,
            protocol: system.protocol(),
            rec,
            redis_index: spec.data_model.redis_index,
            max_value_len,
            commands: spec.commands.iter().map(|c| c.template.clone()).collect(),
            cache_aside: spec.cache_aside,
            names_in_place,
        }
    }

    /// What the protocol encoders read: Aerospike's model takes it from here.
    pub(crate) fn records(&self) -> &Records {
        &self.rec
    }

    /// Cache-aside: how long a read that missed waits before its record is
    /// set (`None`: reads that miss are done).
    #[inline]
    pub fn cache_aside(&self) -> Option<kvbench_workload::cache_aside::Penalty> {
        self.cache_aside
    }

    /// The most bytes one reply to this workload's requests can take, with
    /// room to spare (four times its largest record or scan key list, at
    /// least 1 MiB); an incomplete reply past it fails its connection.
    pub fn reply_limit(&self) -> usize {
        self.reply_limit
    }

    /// What goes before a record key on the wire (Memcached's
    /// `usertable-`; empty for the Redis family): a pool hashes the wire key.
    pub fn wire_prefix(&self) -> &[u8] {
        match self.protocol {
            Protocol::Memcache => &self.rec.memcached_prefix,
            Protocol::Resp | Protocol::Aerospike => &[],
        }
    }

    /// Length in bytes of the largest Memcached value a record can have
    /// (every record's, when field lengths are constant).
    pub fn memcached_value_len(&self) -> usize {
        self.max_value_len
    }

    /// Whether this system and data model can run operations of `kind`.
    ///
    /// # Errors
    /// A message for the user, naming the property to change.
    pub fn supports(&self, kind: OpKind) -> Result<(), String> {
        if let Some(i) = kind.command_index() {
            if self.protocol != Protocol::Resp {
                return Err(format!(
                    "command templates (kvbench.command.N, --command) are RESP commands; {} \
                     speaks the memcache protocol",
                    self.system
                ));
            }
            if i >= self.commands.len() {
                return Err(format!(
                    "{kind}: the workload has no kvbench.command.{}",
                    i + 1
                ));
            }
            return Ok(());
        }
        if self.rec.layout == Layout::SortedSets && self.protocol != Protocol::Resp {
            return Err(format!(
                "{} has no sorted sets; kvbench.datamodel=sortedsets needs the Redis family",
                self.system
            ));
        }
        if kind == OpKind::Union && self.rec.layout != Layout::SortedSets {
            return Err("ZUNIONSTORE needs kvbench.datamodel=sortedsets".into());
        }
        if kind != OpKind::Scan {
            return Ok(());
        }
        match (self.protocol, self.rec.layout) {
            (Protocol::Aerospike, _) => Err(
                "aerospike: scans are not supported (as in YCSB's aerospike binding); \
                 scanproportion must be 0"
                    .into(),
            ),
            (Protocol::Memcache, _) => Err(format!(
                "{} has no range scan; scanproportion must be 0 for {}",
                self.system, self.system
            )),
            (Protocol::Resp, Layout::Plain) => Err(
                "the plain data model has no index to scan; scanproportion must be 0 with \
                 kvbench.datamodel=plain"
                    .into(),
            ),
            (Protocol::Resp, Layout::Hash) if !self.redis_index => {
                Err("scans find keys through YCSB's index; set kvbench.redis.index=ycsb".into())
            }
            (Protocol::Resp, Layout::Hash) => Ok(()),
            (Protocol::Resp, Layout::SortedSets) => {
                Err("sortedsets has no scans; scanproportion must be 0".into())
            }
        }
    }

    /// Checks that every operation `spec`'s mix can draw is supported here,
    /// and that keys fit the protocol; for the CLI to refuse a run up front.
    ///
    /// # Errors
    /// The first problem, as a message for the user.
    pub fn check(&self, spec: &WorkloadSpec) -> Result<(), String> {
        for kind in spec.kinds() {
            self.supports(kind)?;
        }
        // The load's inserts.
        self.supports(OpKind::Insert)?;
        if self.protocol == Protocol::Aerospike {
            aerospike::check_names(spec)?;
        }
        if self.protocol == Protocol::Memcache && self.rec.keys.max_len() > 250 {
            return Err(format!(
                "memcached keys are at most 250 bytes; zeropadding={} makes keys up to {} bytes",
                self.rec.keys.zero_padding(),
                self.rec.keys.max_len()
            ));
        }
        Ok(())
    }

    /// Replies the request(s) [`encode`](Self::encode) writes for `op` will
    /// get: 2 for an insert with the Redis index (`HMSET` + `ZADD`), else 1.
    #[cfg(test)]
    fn replies(&self, op: &Op) -> usize {
        if op.kind == OpKind::Insert && self.indexes() {
            2
        } else {
            1
        }
    }

    /// The step that follows `step` of `op` once its replies are in, or
    /// `None` when the operation is complete.
    #[inline]
    pub fn next_step(&self, op: &Op, step: Step) -> Option<Step> {
        match (op.kind, step) {
            (OpKind::ReadModifyWrite, Step::First) => Some(Step::RmwWrite),
            (OpKind::Scan, Step::First) if self.protocol == Protocol::Resp => Some(Step::ScanRead),
            _ => None,
        }
    }

    fn indexes(&self) -> bool {
        self.protocol == Protocol::Resp && self.rec.layout == Layout::Hash && self.redis_index
    }

    /// Appends the first request(s) of `op` to `buf` (see [`Step::First`]):
    /// [`write_key`](Self::write_key), [`encode_first`](Self::encode_first)
    /// and, for an indexed insert, [`encode_index`](Self::encode_index).
    /// `key` is scratch space reused across calls so that steady-state
    /// encoding allocates nothing. Random values and lengths are drawn from
    /// `rng` (the stream's generator, so a run repeats exactly).
    ///
    /// The client sends the parts separately (each on its key's node); this
    /// whole-operation form is what the tests compare with YCSB's bytes.
    ///
    /// # Panics
    /// For a scan where [`supports`](Self::supports) refuses it: run
    /// [`check`](Self::check) first.
    #[cfg(test)]
    fn encode(&self, op: &Op, rng: &mut impl RngCore, key: &mut Vec<u8>, buf: &mut Vec<u8>) {
        self.write_key(op, key);
        self.encode_first(op, rng, key, buf);
        if self.indexes_insert(op) {
            self.encode_index(key, buf);
        }
    }

    /// Writes `op`'s record key into `key` (cleared first).
    #[inline]
    pub fn write_key(&self, op: &Op, key: &mut Vec<u8>) {
        key.clear();
        if let Some(t) = op.kind.command_index().and_then(|i| self.commands.get(i)) {
            // The template's first key argument in full (`user:__key__:n`
            // with its text around the key), so a cluster routes by what is
            // sent: a hash tag in the template decides the slot.
            if let Some((prefix, suffix)) = t.first_key() {
                key.extend_from_slice(prefix);
                self.rec.keys.write_key(op.keynum, key);
                key.extend_from_slice(suffix);
            }
            return;
        }
        if self.rec.layout == Layout::SortedSets {
            // A set (insert), or the client's destination (union): both
            // carry the group's hash tag, so either routes the union.
            let (group, set) = self.rec.zsets.locate(op.keynum);
            let prefix = self.rec.keys.prefix();
            match op.kind {
                OpKind::Union => ZsetShape::write_dest_key(prefix, group, op.client, key),
                _ => ZsetShape::write_set_key(prefix, group, set, key),
            }
            return;
        }
        self.rec.keys.write_key(op.keynum, key);
    }

    /// [`write_key`](Self::write_key) and [`encode_first`](Self::encode_first)
    /// at once for what most runs send, a record's read or write in the
    /// plain data model (Redis family, Memcached): the key is written straight into
    /// the request, with no key buffer between (and none of the stalls of
    /// copying it out of one). Returns false, having written and drawn
    /// nothing, for anything else (another data model or protocol, data
    /// integrity checks, a key name of an unusual form): the caller then
    /// takes the two steps. The same bytes and draws as the two steps
    /// (tested).
    #[inline]
    pub fn encode_first_named(&self, op: &Op, rng: &mut impl RngCore, buf: &mut Vec<u8>) -> bool {
        match self.name_of(op) {
            Some(name) => {
                self.encode_first_as(op, &name, rng, buf);
                true
            }
            None => false,
        }
    }

    /// The name of `op`'s key, not yet written, when
    /// [`encode_first_as`](Self::encode_first_as) can write `op`'s first
    /// request with it (see [`encode_first_named`](Self::encode_first_named)):
    /// a multi-node target routes by it ([`Router::node_of_name`]) and then
    /// writes it once, into the request. `None` for anything else.
    ///
    /// [`Router::node_of_name`]: crate::route::Router::node_of_name
    #[inline(always)]
    pub fn name_of(&self, op: &Op) -> Option<KeyName> {
        if !self.names_in_place
            || !matches!(
                op.kind,
                OpKind::Read | OpKind::ReadModifyWrite | OpKind::Update | OpKind::Insert
            )
        {
            return None;
        }
        // The plain model has no index: no insert here has a second request.
        debug_assert!(!self.indexes_insert(op));
        self.rec.keys.name(op.keynum)
    }

    /// Appends `op`'s first request, its key `name` written straight into
    /// it; `name` is [`name_of`](Self::name_of)`(op)`. Always inlined: out
    /// of line, the single node's requests paid 10 instructions each for
    /// the call (cachegrind).
    #[inline(always)]
    pub fn encode_first_as(
        &self,
        op: &Op,
        name: &KeyName,
        rng: &mut impl RngCore,
        buf: &mut Vec<u8>,
    ) {
        let read = matches!(op.kind, OpKind::Read | OpKind::ReadModifyWrite);
        match (self.protocol, read) {
            (Protocol::Resp, true) => redis::encode_get_named(name, buf),
            (Protocol::Resp, false) => redis::encode_set_named(&self.rec, name, rng, buf),
            (_, true) => memcached::encode_get_named(&self.rec, name, buf),
            (_, false) => memcached::encode_set_named(&self.rec, name, rng, buf),
        }
    }

    /// The key that decides where `op`'s first request goes on a
    /// multi-node target: the record's `key`, or for a scan the index it
    /// looks keys up in.
    #[inline]
    pub fn first_request_key<'a>(&self, op: &Op, key: &'a [u8]) -> &'a [u8] {
        if op.kind == OpKind::Scan {
            INDEX_KEY
        } else {
            key
        }
    }

    /// Appends `op`'s first request for record `key` (an indexed insert's
    /// `ZADD` is [`encode_index`](Self::encode_index), sent on its own node).
    ///
    /// # Panics
    /// For a scan where [`supports`](Self::supports) refuses it.
    #[inline]
    pub fn encode_first(&self, op: &Op, rng: &mut impl RngCore, key: &[u8], buf: &mut Vec<u8>) {
        match op.kind {
            OpKind::Read => {
                // YCSB passes every field name (so HMGET) when it verifies a read.
                let all_listed = self.rec.data_integrity && self.rec.read_all_fields;
                self.encode_read(key, op.field, all_listed, buf);
            }
            OpKind::ReadModifyWrite => self.encode_read(key, op.read_field, false, buf),
            OpKind::Update => self.encode_write(key, op.field, rng, buf, true),
            OpKind::Insert if self.rec.layout == Layout::SortedSets => {
                redis::encode_zset(&self.rec, op.keynum, key, buf)
            }
            OpKind::Insert => self.encode_write(key, None, rng, buf, false),
            OpKind::Union => redis::encode_zunionstore(&self.rec, op, buf),
            OpKind::Scan => {
                if let Err(e) = self.supports(OpKind::Scan) {
                    panic!("Driver::encode: {e}");
                }
                redis::encode_zrangebyscore(key, op.scan_length, buf);
            }
            command => {
                if let Some(t) = command.command_index().and_then(|i| self.commands.get(i)) {
                    redis::encode_template(&self.rec, t, key, rng, buf);
                } else {
                    panic!("Driver::encode: {command} without its template (run check first)");
                }
            }
        }
    }

    /// The commands a request of `kind` makes a RESP server run, named as
    /// its `INFO commandstats` names them (lowercase), so their server time
    /// can be set beside the request's latency; empty for other protocols.
    /// A scan (its index, then each record) and a read-modify-write run
    /// several per request: they are listed so that a kind sharing one of
    /// them is not credited with their time.
    pub fn server_commands(&self, kind: OpKind) -> Vec<String> {
        if self.protocol != Protocol::Resp {
            return Vec::new();
        }
        let names: &[&str] = match (kind, self.rec.layout) {
            (OpKind::Read, Layout::Plain) => &["get"],
            (OpKind::Read, Layout::Hash) => &["hgetall", "hmget"],
            (OpKind::Update, Layout::Plain) => &["set"],
            (OpKind::Update, Layout::Hash) => &["hmset"],
            (OpKind::Insert, Layout::SortedSets) => &["zadd"],
            (OpKind::Insert, Layout::Plain) => &["set"],
            (OpKind::Insert, Layout::Hash) if self.indexes() => &["hmset", "zadd"],
            (OpKind::Insert, Layout::Hash) => &["hmset"],
            (OpKind::Union, _) => &["zunionstore"],
            (OpKind::Scan, _) => &["zrangebyscore", "hgetall", "hmget"],
            (OpKind::ReadModifyWrite, Layout::Plain) => &["get", "set"],
            (OpKind::ReadModifyWrite, _) => &["hgetall", "hmget", "hmset"],
            (command, _) => {
                return command
                    .command_index()
                    .and_then(|i| self.commands.get(i))
                    .map(|t| vec![t.name.to_lowercase()])
                    .unwrap_or_default()
            }
        };
        names.iter().map(|n| n.to_string()).collect()
    }

    /// True when `op` is an insert that YCSB's Redis binding also indexes
    /// (`ZADD _indices`, see [`encode_index`](Self::encode_index)).
    #[inline]
    pub fn indexes_insert(&self, op: &Op) -> bool {
        op.kind == OpKind::Insert && self.indexes()
    }

    /// Appends the deletion of record `key` (`DEL key`, Memcached's
    /// `delete <wire key>`), for `--cleanup`. Cold path.
    pub fn encode_delete(&self, key: &[u8], buf: &mut Vec<u8>) {
        match self.protocol {
            Protocol::Resp => kvbench_proto::resp::encode_command(buf, &[b"DEL", key]),
            Protocol::Memcache => memcached::with_wire_key(&self.rec, key, |k| {
                buf.extend_from_slice(b"delete ");
                buf.extend_from_slice(k);
                buf.extend_from_slice(b"\r\n");
            }),
            Protocol::Aerospike => unreachable!("{}", NO_WIRE),
        }
    }

    /// Appends `ZREM _indices <key>` when this run indexes inserts (the
    /// index entry an insert added), for `--cleanup`; false otherwise.
    pub fn encode_unindex(&self, key: &[u8], buf: &mut Vec<u8>) -> bool {
        if self.indexes() {
            kvbench_proto::resp::encode_command(buf, &[b"ZREM", INDEX_KEY, key]);
        }
        self.indexes()
    }

    /// One reply to [`encode_delete`](Self::encode_delete) or
    /// [`encode_unindex`](Self::encode_unindex): whether something was
    /// deleted, and the bytes used; `Ok(None)` until it is complete.
    ///
    /// # Errors
    /// The server's error, or what was not a reply to a deletion.
    pub fn parse_delete_reply(&self, buf: &[u8]) -> Result<Option<(bool, usize)>, String> {
        match self.protocol {
            Protocol::Resp => match kvbench_proto::resp::parse_value(buf) {
                Ok(None) => Ok(None),
                Ok(Some((kvbench_proto::resp::Value::Integer(n), used))) => Ok(Some((n > 0, used))),
                Ok(Some((kvbench_proto::resp::Value::Error(e), _))) => Err(e),
                Ok(Some((other, _))) => Err(format!("unexpected reply to DEL: {other:?}")),
                Err(e) => Err(e.to_string()),
            },
            Protocol::Memcache => {
                let Some(end) = buf.windows(2).position(|w| w == b"\r\n") else {
                    return Ok(None);
                };
                match &buf[..end] {
                    b"DELETED" => Ok(Some((true, end + 2))),
                    b"NOT_FOUND" => Ok(Some((false, end + 2))),
                    line => Err(String::from_utf8_lossy(line).into_owned()),
                }
            }
            Protocol::Aerospike => unreachable!("{}", NO_WIRE),
        }
    }

    /// The key of the index an indexed insert adds to (`_indices`).
    pub fn index_key(&self) -> &'static [u8] {
        INDEX_KEY
    }

    /// Appends the `ZADD _indices <hash(key)> <key>` of an indexed insert
    /// of record `key`.
    #[inline]
    pub fn encode_index(&self, key: &[u8], buf: &mut Vec<u8>) {
        redis::encode_zadd(key, buf);
    }

    /// Appends the update half of read-modify-write `op` ([`Step::RmwWrite`]),
    /// to send once the read half's reply has arrived: the same update
    /// [`encode_first`](Self::encode_first) sends for an update of `op.field`.
    #[inline]
    pub fn encode_rmw_write(
        &self,
        op: &Op,
        rng: &mut impl RngCore,
        key: &mut Vec<u8>,
        buf: &mut Vec<u8>,
    ) {
        self.encode_write_of(op, op.field, true, rng, key, buf);
    }

    /// Cache-aside: the whole record `op` read and missed, set as the
    /// application sets what it fetched from its backend (every field,
    /// as the load writes it).
    pub fn encode_fill(
        &self,
        op: &Op,
        rng: &mut impl RngCore,
        key: &mut Vec<u8>,
        buf: &mut Vec<u8>,
    ) {
        self.encode_write_of(op, None, false, rng, key, buf);
    }

    /// A write of `field` (every field: `None`) of `op`'s record, named
    /// into `key` first.
    fn encode_write_of(
        &self,
        op: &Op,
        field: Option<u32>,
        update: bool,
        rng: &mut impl RngCore,
        key: &mut Vec<u8>,
        buf: &mut Vec<u8>,
    ) {
        self.write_key(op, key);
        self.encode_write(key, field, rng, buf, update);
    }

    /// Appends one read per key in `reply`, the complete `ZRANGEBYSCORE`
    /// reply of scan `op` ([`Step::ScanRead`]), reading `op.field` or every
    /// field as YCSB's scan does, and returns how many reads (= replies to
    /// expect; 0 when the range was empty or the reply was an error).
    ///
    /// # Errors
    /// [`DecodeError`] when `reply` is not a complete array of bulk strings.
    #[cfg(test)]
    fn encode_scan_reads(
        &self,
        op: &Op,
        reply: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<usize, DecodeError> {
        redis::for_each_bulk(reply, |key| self.encode_scan_read(op, key, buf))
    }

    /// Calls `f` with each key a complete `ZRANGEBYSCORE` reply lists, and
    /// returns how many (0 for an error reply).
    ///
    /// # Errors
    /// [`DecodeError`] when `reply` is not a complete array of bulk strings.
    pub fn for_each_scan_key(
        &self,
        reply: &[u8],
        f: impl FnMut(&[u8]),
    ) -> Result<usize, DecodeError> {
        redis::for_each_bulk(reply, f)
    }

    /// Appends one of scan `op`'s record reads: record `key`, `op.field`
    /// or every field, as YCSB's scan reads them.
    #[inline]
    pub fn encode_scan_read(&self, op: &Op, key: &[u8], buf: &mut Vec<u8>) {
        self.encode_read(key, op.field, false, buf);
    }

    /// The keys a complete `ZRANGEBYSCORE` reply lists (tests read the key
    /// list the scan step walks through this).
    #[cfg(test)]
    fn scan_keys(reply: &[u8]) -> Result<Vec<Vec<u8>>, DecodeError> {
        let mut keys = Vec::new();
        redis::for_each_bulk(reply, |k| keys.push(k.to_vec()))?;
        Ok(keys)
    }

    fn encode_read(&self, key: &[u8], field: Option<u32>, all_listed: bool, buf: &mut Vec<u8>) {
        match self.protocol {
            Protocol::Resp => redis::encode_read(&self.rec, key, field, all_listed, buf),
            Protocol::Memcache => memcached::encode_read(&self.rec, key, buf),
            Protocol::Aerospike => unreachable!("{}", NO_WIRE),
        }
    }

    /// An update of `field` (all fields when `None`), or an insert.
    fn encode_write(
        &self,
        key: &[u8],
        field: Option<u32>,
        rng: &mut impl RngCore,
        buf: &mut Vec<u8>,
        update: bool,
    ) {
        let names: &[Vec<u8>] = match field {
            Some(f) => std::slice::from_ref(&self.rec.field_names[f as usize]),
            None => &self.rec.field_names,
        };
        match self.protocol {
            Protocol::Resp => redis::encode_write(&self.rec, key, names, rng, buf),
            Protocol::Memcache => memcached::encode_write(&self.rec, key, names, rng, buf, update),
            Protocol::Aerospike => unreachable!("{}", NO_WIRE),
        }
    }

    /// Parses one reply to `step` of `op` from the start of `buf` and
    /// classifies it; with `dataintegrity`, a read's values (a read, or a
    /// read-modify-write's read) are checked against the values written and
    /// any difference is an [`Outcome::Error`] (YCSB's `VERIFY`
    /// `UNEXPECTED_STATE`; scans are not checked, as in YCSB). Checking
    /// parses the reply into owned values: a cold path, taken only with
    /// `dataintegrity`. `Ok(None)` means the reply is not complete.
    ///
    /// # Errors
    /// A [`DecodeError`] when the bytes are not valid protocol.
    #[inline]
    pub fn classify_step(
        &self,
        op: &Op,
        step: Step,
        buf: &[u8],
    ) -> Result<Option<(Outcome, usize)>, DecodeError> {
        let r = self.classify_kind(op.kind, step, buf)?;
        if let Some((Outcome::Ok, used)) = r {
            if self.verifies(op, step) && self.verify(op, &buf[..used]).is_err() {
                return Ok(Some((Outcome::Error, used)));
            }
        }
        Ok(r)
    }

    /// The text of an error reply, to keep what the server said: a RESP
    /// error without its `-` (`OOM command not allowed ...`), or a
    /// Memcached refusal line (`SERVER_ERROR out of memory ...`,
    /// `NOT_STORED`); `None` for a reply of any other shape.
    pub fn error_text<'a>(&self, reply: &'a [u8]) -> Option<&'a [u8]> {
        match self.protocol {
            Protocol::Resp => kvbench_proto::resp::error_text(reply),
            Protocol::Memcache => kvbench_proto::memcache_text::error_text(reply),
            Protocol::Aerospike => None,
        }
    }

    /// True when [`classify_step`](Self::classify_step) checks values for
    /// this reply.
    #[inline]
    pub fn verifies(&self, op: &Op, step: Step) -> bool {
        self.rec.data_integrity
            && step == Step::First
            && matches!(op.kind, OpKind::Read | OpKind::ReadModifyWrite)
    }

    fn classify_kind(
        &self,
        kind: OpKind,
        step: Step,
        buf: &[u8],
    ) -> Result<Option<(Outcome, usize)>, DecodeError> {
        if kind == OpKind::Union {
            return redis::classify_count(self.rec.zsets.union_cardinality(), buf);
        }
        if kind.command_index().is_some() {
            return redis::classify(Shape::Any, buf);
        }
        let shape = match (kind, step) {
            (OpKind::Scan, Step::First) => Shape::KeyList,
            (OpKind::Read | OpKind::ReadModifyWrite, Step::First) | (_, Step::ScanRead) => {
                Shape::Read
            }
            _ => Shape::Write,
        };
        match self.protocol {
            Protocol::Resp => redis::classify(shape, buf),
            Protocol::Memcache => memcached::classify(shape, buf),
            Protocol::Aerospike => unreachable!("{}", NO_WIRE),
        }
    }

    /// Checks the values in `reply`, a complete successful reply to the read
    /// of `op`, against YCSB's deterministic values (cold path: allocates).
    ///
    /// # Errors
    /// A description of the first difference, naming key and field.
    pub fn verify(&self, op: &Op, reply: &[u8]) -> Result<(), String> {
        let mut key = Vec::new();
        self.rec.keys.write_key(op.keynum, &mut key);
        let key_text = String::from_utf8_lossy(&key).into_owned();
        let requested: Vec<&[u8]> = match op.fields_read() {
            Some(f) => vec![&self.rec.field_names[f as usize]],
            None => self.rec.field_names.iter().map(Vec::as_slice).collect(),
        };
        let cells = match self.protocol {
            Protocol::Resp => redis::returned_fields(&self.rec, op, reply, &requested, &key_text)?,
            Protocol::Memcache => {
                memcached::returned_fields(&self.rec, reply, &requested, &key_text)?
            }
            Protocol::Aerospike => unreachable!("{}", NO_WIRE),
        };
        self.rec.check_values(&key, cells)
    }
}

#[cfg(test)]
mod tests {
    use super::memcached::parse_json_object;
    use super::redis::java_double_of_int;
    use super::*;
    use kvbench_proto::resp;
    use kvbench_workload::Rng;
    use rand_core::SeedableRng;

    use super::records::tests::spec;

    fn driver(system: SystemKind, extra: &str) -> Driver {
        let s = spec(extra);
        let d = Driver::new(system, &s, s.key_namer());
        d.check(&s).unwrap();
        d
    }

    /// RESP for a command.
    fn cmd(args: &[&str]) -> Vec<u8> {
        let mut b = Vec::new();
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        resp::encode_command(&mut b, &args);
        b
    }

    fn op(kind: OpKind, field: Option<u32>, read_field: Option<u32>, scan_length: u32) -> Op {
        Op {
            kind,
            keynum: 5,
            field,
            read_field,
            scan_length,
            client: 0,
        }
    }

    fn encode(d: &Driver, o: &Op) -> Vec<u8> {
        let mut rng = Rng::seed_from_u64(1);
        let (mut key, mut buf) = (Vec::new(), Vec::new());
        d.encode(o, &mut rng, &mut key, &mut buf);
        buf
    }

    const DI: &str = "dataintegrity=true\n";
    // Deterministic values of length 8 for key user5: "user5:field0" cut to 8.
    const V: &str = "user5:fi";

    #[test]
    fn redis_hash_requests_are_ycsbs() {
        let d = driver(SystemKind::Redis, DI);
        let di_read_one = driver(
            SystemKind::Redis,
            "dataintegrity=true\nreadallfields=false\n",
        );
        let idx = driver(
            SystemKind::Redis,
            "dataintegrity=true\nkvbench.redis.index=ycsb\n",
        );
        let plain_read = driver(SystemKind::Redis, "");
        let cases: Vec<(&Driver, Op, Vec<u8>)> = vec![
            (
                &plain_read,
                op(OpKind::Read, None, None, 0),
                cmd(&["HGETALL", "user5"]),
            ),
            (
                &d,
                op(OpKind::Read, None, None, 0),
                cmd(&["HMGET", "user5", "field0", "field1"]),
            ),
            (
                &di_read_one,
                op(OpKind::Read, Some(1), None, 0),
                cmd(&["HMGET", "user5", "field1"]),
            ),
            (
                &d,
                op(OpKind::Update, Some(1), None, 0),
                cmd(&["HMSET", "user5", "field1", V]),
            ),
            (
                &d,
                op(OpKind::Update, None, None, 0),
                cmd(&["HMSET", "user5", "field0", V, "field1", V]),
            ),
            (
                &d,
                Op::insert(5),
                cmd(&["HMSET", "user5", "field0", V, "field1", V]),
            ),
            (
                &idx,
                Op::insert(5),
                [
                    cmd(&["HMSET", "user5", "field0", V, "field1", V]),
                    // hashCode("user5") = 111578570.
                    cmd(&["ZADD", "_indices", "1.1157857E8", "user5"]),
                ]
                .concat(),
            ),
            (
                &idx,
                op(OpKind::Scan, None, None, 42),
                cmd(&[
                    "ZRANGEBYSCORE",
                    "_indices",
                    "1.1157857E8",
                    "+inf",
                    "LIMIT",
                    "0",
                    "42",
                ]),
            ),
            (
                &d,
                op(OpKind::ReadModifyWrite, Some(0), None, 0),
                cmd(&["HGETALL", "user5"]),
            ),
            (
                &d,
                op(OpKind::ReadModifyWrite, None, Some(1), 0),
                cmd(&["HMGET", "user5", "field1"]),
            ),
        ];
        for (i, (d, o, want)) in cases.iter().enumerate() {
            let got = encode(d, o);
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(want),
                "case {i}: {o:?}"
            );
            let replies = if i == 6 { 2 } else { 1 };
            assert_eq!(d.replies(o), replies, "case {i}");
        }
        // The write half of a read-modify-write is the update of op.field.
        let mut rng = Rng::seed_from_u64(1);
        let (mut key, mut buf) = (Vec::new(), Vec::new());
        d.encode_rmw_write(
            &op(OpKind::ReadModifyWrite, Some(0), None, 0),
            &mut rng,
            &mut key,
            &mut buf,
        );
        assert_eq!(buf, cmd(&["HMSET", "user5", "field0", V]));
    }

    #[test]
    fn plain_and_memcached_requests() {
        let mc = |kind: OpKind, field, extra: &str| {
            encode(
                &driver(SystemKind::Memcached, &format!("{DI}{extra}")),
                &op(kind, field, None, 0),
            )
        };
        let json_all = format!("{{\"field0\":\"{V}\",\"field1\":\"{V}\"}}");
        let json_one = format!("{{\"field1\":\"{V}\"}}");
        let cases: Vec<(Vec<u8>, String)> = vec![
            (mc(OpKind::Read, None, ""), "get usertable-user5\r\n".into()),
            (
                mc(OpKind::Read, Some(1), "readallfields=false\n"),
                "get usertable-user5\r\n".into(),
            ),
            (
                mc(OpKind::Update, Some(1), ""),
                format!(
                    "set usertable-user5 0 0 {}\r\n{json_all}\r\n",
                    json_all.len()
                ),
            ),
            (
                mc(OpKind::Update, Some(1), "kvbench.memcached.update=ycsb\n"),
                format!(
                    "replace usertable-user5 0 0 {}\r\n{json_one}\r\n",
                    json_one.len()
                ),
            ),
            (
                mc(OpKind::Insert, None, "kvbench.memcached.update=ycsb\n"),
                format!(
                    "set usertable-user5 0 0 {}\r\n{json_all}\r\n",
                    json_all.len()
                ),
            ),
            (
                mc(
                    OpKind::Update,
                    None,
                    "fieldcount=1\nkvbench.datamodel=plain\n",
                ),
                format!("set user5 0 0 8\r\n{V}\r\n"),
            ),
            (
                mc(
                    OpKind::Read,
                    None,
                    "fieldcount=1\nkvbench.datamodel=plain\n",
                ),
                "get user5\r\n".into(),
            ),
            (
                encode(
                    &driver(
                        SystemKind::Redis,
                        "fieldcount=1\nkvbench.datamodel=plain\ndataintegrity=true\n",
                    ),
                    &op(OpKind::Update, Some(0), None, 0),
                ),
                String::from_utf8(cmd(&["SET", "user5", V])).unwrap(),
            ),
            (
                encode(
                    &driver(SystemKind::Redis, "fieldcount=1\nkvbench.datamodel=plain\n"),
                    &op(OpKind::Read, None, None, 0),
                ),
                String::from_utf8(cmd(&["GET", "user5"])).unwrap(),
            ),
        ];
        for (i, (got, want)) in cases.iter().enumerate() {
            assert_eq!(String::from_utf8_lossy(got), *want, "case {i}");
        }
        assert_eq!(
            driver(SystemKind::Memcached, "").memcached_value_len(),
            json_all.len()
        );
    }

    #[test]
    fn random_values_have_the_drawn_lengths() {
        // Uniform lengths 1..=8: every value's length is in range and JSON
        // headers match the data that follows.
        let d = driver(SystemKind::Memcached, "fieldlengthdistribution=uniform\n");
        assert_eq!(
            d.memcached_value_len(),
            json_len([(6, 8), (6, 8)].into_iter())
        );
        let mut rng = Rng::seed_from_u64(3);
        let (mut key, mut buf) = (Vec::new(), Vec::new());
        let mut lens = std::collections::BTreeSet::new();
        for _ in 0..200 {
            buf.clear();
            d.encode(&Op::insert(5), &mut rng, &mut key, &mut buf);
            let text = String::from_utf8(buf.clone()).unwrap();
            let (header, rest) = text.split_once("\r\n").unwrap();
            let len: usize = header.rsplit(' ').next().unwrap().parse().unwrap();
            assert_eq!(rest.len(), len + 2, "{text}");
            for (name, value) in parse_json_object(&rest.as_bytes()[..len]).unwrap() {
                assert!(name.starts_with(b"field"));
                assert!((1..=8).contains(&value.len()));
                lens.insert(value.len());
            }
        }
        assert_eq!(lens.len(), 8, "{lens:?}");
        let r = driver(
            SystemKind::Redis,
            "fieldlengthdistribution=zipfian\nminfieldlength=3\n",
        );
        for _ in 0..100 {
            buf.clear();
            r.encode(&Op::insert(5), &mut rng, &mut key, &mut buf);
            let (v, _) = resp::parse_value(&buf).unwrap().unwrap();
            let resp::Value::Array(items) = v else {
                panic!()
            };
            for value in items.iter().skip(3).step_by(2) {
                assert!((3..=8).contains(&value.as_bytes().unwrap().len()));
            }
        }
    }

    #[test]
    fn classifies_every_shape() {
        let d = driver(SystemKind::Redis, "");
        let c = |kind, step, reply: &[u8]| {
            d.classify_step(&op(kind, None, None, 0), step, reply)
                .unwrap()
                .map(|(o, _)| o)
        };
        use OpKind::*;
        assert_eq!(
            c(Read, Step::First, b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
            Some(Outcome::Ok)
        );
        assert_eq!(c(Read, Step::First, b"*0\r\n"), Some(Outcome::Miss));
        assert_eq!(c(Read, Step::First, b"*1\r\n$-1\r\n"), Some(Outcome::Miss));
        assert_eq!(c(Read, Step::First, b"%0\r\n"), Some(Outcome::Miss));
        assert_eq!(c(Read, Step::First, b"$-1\r\n"), Some(Outcome::Miss));
        assert_eq!(c(Read, Step::First, b"-ERR x\r\n"), Some(Outcome::Error));
        assert_eq!(c(Read, Step::First, b"*2\r\n$1\r\na\r\n"), None);
        assert_eq!(c(Update, Step::First, b"+OK\r\n"), Some(Outcome::Ok));
        assert_eq!(c(Insert, Step::First, b":1\r\n"), Some(Outcome::Ok));
        assert_eq!(c(Insert, Step::First, b"*0\r\n"), Some(Outcome::Error));
        // An empty key list: the index is missing (issue 36).
        assert_eq!(c(Scan, Step::First, b"*0\r\n"), Some(Outcome::Miss));
        assert_eq!(
            c(Scan, Step::First, b"*1\r\n$4\r\nuser\r\n"),
            Some(Outcome::Ok)
        );
        assert_eq!(c(Scan, Step::ScanRead, b"*0\r\n"), Some(Outcome::Miss));
        assert_eq!(
            c(ReadModifyWrite, Step::First, b"*0\r\n"),
            Some(Outcome::Miss)
        );
        assert_eq!(
            c(ReadModifyWrite, Step::RmwWrite, b"+OK\r\n"),
            Some(Outcome::Ok)
        );
        assert_eq!(
            d.classify_step(&op(Read, None, None, 0), Step::First, b"*0\r\n")
                .unwrap(),
            Some((Outcome::Miss, 4))
        );
        let m = driver(SystemKind::Memcached, "");
        let c = |kind, step, reply: &[u8]| {
            m.classify_step(&op(kind, None, None, 0), step, reply)
                .unwrap()
                .map(|(o, _)| o)
        };
        assert_eq!(
            c(Read, Step::First, b"VALUE k 0 1\r\nx\r\nEND\r\n"),
            Some(Outcome::Ok)
        );
        assert_eq!(c(Read, Step::First, b"END\r\n"), Some(Outcome::Miss));
        assert_eq!(c(Update, Step::First, b"STORED\r\n"), Some(Outcome::Ok));
        assert_eq!(
            c(Update, Step::First, b"NOT_STORED\r\n"),
            Some(Outcome::Error)
        );
        assert_eq!(
            c(ReadModifyWrite, Step::RmwWrite, b"STORED\r\n"),
            Some(Outcome::Ok)
        );
    }

    #[test]
    fn error_replies_give_their_text() {
        let r = driver(SystemKind::Redis, "");
        assert_eq!(
            r.error_text(b"-OOM command not allowed\r\n"),
            Some(&b"OOM command not allowed"[..])
        );
        assert_eq!(r.error_text(b"+OK\r\n"), None);
        assert_eq!(r.error_text(b"$-1\r\n"), None);
        let m = driver(SystemKind::Memcached, "");
        assert_eq!(
            m.error_text(b"SERVER_ERROR out of memory storing object\r\n"),
            Some(&b"SERVER_ERROR out of memory storing object"[..])
        );
        assert_eq!(m.error_text(b"NOT_STORED\r\n"), Some(&b"NOT_STORED"[..]));
        assert_eq!(m.error_text(b"END\r\n"), None);
        assert_eq!(m.error_text(b"VALUE k 0 1\r\nx\r\nEND\r\n"), None);
    }

    #[test]
    fn data_integrity_checks_reads() {
        let read = op(OpKind::Read, None, None, 0);
        let d = driver(SystemKind::Redis, DI);
        let good = format!("*2\r\n$8\r\n{V}\r\n$8\r\n{V}\r\n");
        let bad = format!("*2\r\n$8\r\n{V}\r\n$8\r\nuser5:fX\r\n");
        assert!(d.verifies(&read, Step::First));
        assert_eq!(
            d.classify_step(&read, Step::First, good.as_bytes())
                .unwrap()
                .unwrap()
                .0,
            Outcome::Ok
        );
        assert_eq!(
            d.classify_step(&read, Step::First, bad.as_bytes())
                .unwrap()
                .unwrap()
                .0,
            Outcome::Error
        );
        let e = d.verify(&read, bad.as_bytes()).unwrap_err();
        assert!(e.contains("user5: field field1 holds \"user5:fX\""), "{e}");
        // Read-modify-write reads all fields with HGETALL: name/value pairs.
        let rmw = op(OpKind::ReadModifyWrite, Some(0), None, 0);
        let pairs = format!("*4\r\n$6\r\nfield0\r\n$8\r\n{V}\r\n$6\r\nfield1\r\n$8\r\n{V}\r\n");
        assert_eq!(
            d.classify_step(&rmw, Step::First, pairs.as_bytes())
                .unwrap()
                .unwrap()
                .0,
            Outcome::Ok
        );
        let wrong = pairs.replace("field1", "fieldX");
        assert_eq!(
            d.classify_step(&rmw, Step::First, wrong.as_bytes())
                .unwrap()
                .unwrap()
                .0,
            Outcome::Error
        );
        assert!(!d.verifies(&rmw, Step::RmwWrite));
        // Memcached: the JSON record, filtered to the fields asked for.
        let m = driver(SystemKind::Memcached, DI);
        let json = format!("{{\"field1\":\"{V}\"}}");
        let reply = format!("VALUE user5 0 {}\r\n{json}\r\nEND\r\n", json.len());
        assert_eq!(
            m.classify_step(&read, Step::First, reply.as_bytes())
                .unwrap()
                .unwrap()
                .0,
            Outcome::Ok
        );
        let reply = reply.replace(V, "user5:fY");
        assert_eq!(
            m.classify_step(&read, Step::First, reply.as_bytes())
                .unwrap()
                .unwrap()
                .0,
            Outcome::Error
        );
        // Without dataintegrity nothing is checked.
        let plain = driver(SystemKind::Redis, "");
        assert!(!plain.verifies(&read, Step::First));
        assert_eq!(
            plain
                .classify_step(&read, Step::First, bad.as_bytes())
                .unwrap()
                .unwrap()
                .0,
            Outcome::Ok
        );
    }

    #[test]
    fn scans_read_each_key_returned() {
        let d = driver(
            SystemKind::Redis,
            "scanproportion=0.5\nreadallfields=false\n",
        );
        let scan = op(OpKind::Scan, Some(1), None, 3);
        assert_eq!(d.next_step(&scan, Step::First), Some(Step::ScanRead));
        assert_eq!(d.next_step(&scan, Step::ScanRead), None);
        let rmw = op(OpKind::ReadModifyWrite, None, None, 0);
        assert_eq!(d.next_step(&rmw, Step::First), Some(Step::RmwWrite));
        assert_eq!(d.next_step(&rmw, Step::RmwWrite), None);
        assert_eq!(d.next_step(&Op::insert(1), Step::First), None);
        let reply = b"*2\r\n$5\r\nuser7\r\n$6\r\nuser12\r\n";
        assert_eq!(
            Driver::scan_keys(reply).unwrap(),
            [b"user7".to_vec(), b"user12".to_vec()]
        );
        let mut buf = Vec::new();
        assert_eq!(d.encode_scan_reads(&scan, reply, &mut buf).unwrap(), 2);
        assert_eq!(
            buf,
            [
                cmd(&["HMGET", "user7", "field1"]),
                cmd(&["HMGET", "user12", "field1"])
            ]
            .concat()
        );
        buf.clear();
        assert_eq!(d.encode_scan_reads(&scan, b"*0\r\n", &mut buf).unwrap(), 0);
        assert_eq!(
            d.encode_scan_reads(&scan, b"-ERR no\r\n", &mut buf)
                .unwrap(),
            0
        );
        assert!(buf.is_empty());
        assert!(d.encode_scan_reads(&scan, b"+OK\r\n", &mut buf).is_err());
        assert!(d
            .encode_scan_reads(&scan, b"*1\r\n$5\r\nab", &mut buf)
            .is_err());
    }

    #[test]
    fn unsupported_combinations_are_refused_up_front() {
        let s = spec("scanproportion=0.5\n");
        let m = Driver::new(SystemKind::Memcached, &s, s.key_namer());
        assert_eq!(
            m.check(&s).unwrap_err(),
            "memcached has no range scan; scanproportion must be 0 for memcached"
        );
        assert!(m.supports(OpKind::ReadModifyWrite).is_ok());
        let r = Driver::new(SystemKind::Redis, &s, s.key_namer());
        r.check(&s).unwrap();
        let s = spec("zeropadding=300\n");
        let m = Driver::new(SystemKind::Memcached, &s, s.key_namer());
        assert!(m.check(&s).unwrap_err().contains("250 bytes"));
        // Aerospike: no scans, and names it cannot hold.
        let s = spec("scanproportion=0.5\nreadproportion=0.5\nkvbench.redis.index=ycsb\n");
        let a = Driver::new(SystemKind::Aerospike, &s, s.key_namer());
        assert!(a.check(&s).unwrap_err().contains("scans are not supported"));
        let s = spec("fieldnameprefix=averyverylongname\n");
        let a = Driver::new(SystemKind::Aerospike, &s, s.key_namer());
        assert!(a.check(&s).unwrap_err().starts_with("fieldnameprefix:"));
    }

    #[test]
    fn scores_are_javas_double_to_string() {
        // Printed by Java's String.valueOf((double) v).
        let vectors: [(i32, &str); 16] = [
            (0, "0.0"),
            (1, "1.0"),
            (-1, "-1.0"),
            (97, "97.0"),
            (9_999_999, "9999999.0"),
            (10_000_000, "1.0E7"),
            (-10_000_000, "-1.0E7"),
            (12_345_678, "1.2345678E7"),
            (2_147_483_647, "2.147483647E9"),
            (-2_147_483_648, "-2.147483648E9"),
            (100_000_000, "1.0E8"),
            (1_234_567_890, "1.23456789E9"),
            (1_200_000_000, "1.2E9"),
            (-55_869_325, "-5.5869325E7"),
            (111_578_566, "1.11578566E8"),
            (-594_971_599, "-5.94971599E8"),
        ];
        for (v, want) in vectors {
            let mut out = [0u8; 24];
            assert_eq!(java_double_of_int(v, &mut out), want.as_bytes(), "{v}");
        }
    }

    #[test]
    fn encoding_reuses_buffers() {
        // Steady state: after the first request, encoding the same shape
        // again does not grow either buffer's capacity.
        let d = driver(SystemKind::Redis, "kvbench.redis.index=ycsb\n");
        let mut rng = Rng::seed_from_u64(1);
        let (mut key, mut buf) = (Vec::with_capacity(64), Vec::with_capacity(4096));
        let caps = (key.capacity(), buf.capacity());
        for i in 0..1000 {
            buf.clear();
            d.encode(&Op::insert(i), &mut rng, &mut key, &mut buf);
        }
        assert_eq!((key.capacity(), buf.capacity()), caps);
    }

    #[test]
    fn a_request_with_its_name_in_place_is_the_two_steps_request() {
        // Hashed and ordered names, prefixes that fit a word and one that
        // does not, paddings on both sides of 24 digits, varying lengths.
        let bases = [
            "",
            "insertorder=hashed\n",
            "insertorder=hashed\nzeropadding=20\nkvbench.keyprefix=k\n",
            "zeropadding=25\n",
            "kvbench.keyprefix=abcdefgh\n",
            "kvbench.keyprefix=abcdefghi\n",
            "fieldlengthdistribution=uniform\nminfieldlength=1\nfieldlength=300\n",
        ];
        for (system, base) in [SystemKind::Redis, SystemKind::Memcached]
            .into_iter()
            .flat_map(|s| bases.map(|b| (s, b)))
        {
            let d = driver(
                system,
                &format!("fieldcount=1\nkvbench.datamodel=plain\n{base}"),
            );
            for keynum in [0, 5, 99, 12_345_678, u64::from(u32::MAX) + 7] {
                for kind in [
                    OpKind::Read,
                    OpKind::ReadModifyWrite,
                    OpKind::Update,
                    OpKind::Insert,
                ] {
                    let o = Op {
                        keynum,
                        ..op(kind, None, None, 0)
                    };
                    let (mut a, mut b) = (Rng::seed_from_u64(3), Rng::seed_from_u64(3));
                    let (mut key, mut two_steps, mut named) =
                        (Vec::new(), b"x".to_vec(), b"x".to_vec());
                    d.write_key(&o, &mut key);
                    d.encode_first(&o, &mut a, &key, &mut two_steps);
                    if d.encode_first_named(&o, &mut b, &mut named) {
                        assert_eq!(named, two_steps, "{system} {base} {keynum} {kind}");
                        assert_eq!(a.next_u64(), b.next_u64(), "the same draws: {base} {kind}");
                    } else {
                        // Only a name of an unusual form goes the two
                        // steps, and then nothing was written or drawn.
                        assert!(base.contains("=25") || base.contains("abcdefghi"), "{base}");
                        assert_eq!(named, b"x");
                        assert_eq!(b.next_u64(), Rng::seed_from_u64(3).next_u64());
                    }
                }
            }
        }
        // Not for other data models, protocols, data integrity checks or
        // operations, and then nothing is written or drawn.
        for (system, extra) in [
            (SystemKind::Redis, ""),
            (
                SystemKind::Redis,
                "fieldcount=1\nkvbench.datamodel=plain\ndataintegrity=true\n",
            ),
            (SystemKind::Memcached, ""),
            (
                SystemKind::Memcached,
                "fieldcount=1\nkvbench.datamodel=plain\ndataintegrity=true\n",
            ),
        ] {
            let d = driver(system, extra);
            let (mut a, mut b) = (Rng::seed_from_u64(3), Rng::seed_from_u64(3));
            let mut buf = Vec::new();
            assert!(!d.encode_first_named(&op(OpKind::Update, None, None, 0), &mut a, &mut buf));
            assert!(buf.is_empty());
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let d = driver(SystemKind::Redis, "fieldcount=1\nkvbench.datamodel=plain\n");
        let mut buf = Vec::new();
        let scan = op(OpKind::Scan, None, None, 3);
        assert!(!d.encode_first_named(&scan, &mut Rng::seed_from_u64(3), &mut buf));
        assert!(buf.is_empty());
    }
}
