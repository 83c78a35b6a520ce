//! Redis Cluster's key-to-slot mapping and the client's slot table.
//!
//! The slot of a key is CRC16 (XMODEM: polynomial 0x1021, initial value 0,
//! no reflection) of the key modulo 16384, where a key holding a non-empty
//! `{...}` hash tag is hashed on the tag only, exactly as the cluster
//! specification and `CLUSTER KEYSLOT` define it: the first `{`, then the
//! first `}` after it; an empty tag (`{}`) means the whole key is hashed.
//!
//! The table is shared by the clients of one worker thread and updated in
//! place by `MOVED` replies and by refreshes, so it holds `Cell`s (no
//! borrow checks per request, no locks: one worker owns it).
//!
//! Its nodes are the masters and, after them, their replicas: a client
//! connects to every one, so when a failover promotes a replica, a refresh
//! moves the slots to a connection that is already open. A node that
//! joins while the phase runs (named by a refresh or a `MOVED`) is added
//! behind them, to one list shared by the phase's workers, so a node's
//! index means the same node in every worker; each client then opens a
//! connection to it (`client.rs`, the I/O loops).

use kvbench_connect::Access;
use kvbench_proto::resp::{self, Value};
use kvbench_workload::keys::KeyName;
use std::cell::Cell;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The shortest and longest wait between two refreshes of the slot map.
const REFRESH_MIN: Duration = Duration::from_millis(50);
const REFRESH_MAX: Duration = Duration::from_secs(1);
/// A refresh asks one node at a time and blocks its worker meanwhile: a
/// node that accepts but does not answer costs at most this long.
const REFRESH_TIMEOUT: Duration = Duration::from_millis(500);

/// One range of `CLUSTER SLOTS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotRange {
    /// First slot.
    pub first: u16,
    /// Last slot (inclusive).
    pub last: u16,
    /// The master serving it.
    pub master: SocketAddr,
    /// Its replicas.
    pub replicas: Vec<SocketAddr>,
}

/// Hash slots in a Redis Cluster.
pub const SLOTS: usize = 16384;

/// CRC16/XMODEM, table-driven (the cluster specification's reference).
const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC16: [u16; 256] = crc16_table();

/// Slicing-by-8 tables: `CRC16_8[k][b]` is the CRC of byte `b` followed by
/// `k` zero bytes. The CRC is linear, so the CRC of 8 bytes (the register
/// folded into the first two) is the XOR of each byte's entry for its
/// distance from the end: 8 independent lookups instead of a chain of 8
/// dependent steps. Routing hashes every key, and the chain was a tenth
/// of the client's CPU per operation in the cluster benchmark.
const fn crc16_slice_tables() -> [[u16; 256]; 8] {
    let t = crc16_table();
    let mut out = [[0u16; 256]; 8];
    out[0] = t;
    let mut k = 1;
    while k < 8 {
        let mut b = 0;
        while b < 256 {
            // One more zero byte after `b`'s CRC.
            let prev = out[k - 1][b];
            out[k][b] = (prev << 8) ^ t[(prev >> 8) as usize];
            b += 1;
        }
        k += 1;
    }
    out
}

static CRC16_8: [[u16; 256]; 8] = crc16_slice_tables();

/// CRC16/XMODEM of `data`.
#[inline]
pub fn crc16(data: &[u8]) -> u16 {
    let mut chunks = data.chunks_exact(8);
    let mut crc = 0u16;
    for c in &mut chunks {
        let t = &CRC16_8;
        let hi = (crc >> 8) as u8 ^ c[0];
        let lo = crc as u8 ^ c[1];
        crc = t[7][usize::from(hi)]
            ^ t[6][usize::from(lo)]
            ^ t[5][usize::from(c[2])]
            ^ t[4][usize::from(c[3])]
            ^ t[3][usize::from(c[4])]
            ^ t[2][usize::from(c[5])]
            ^ t[1][usize::from(c[6])]
            ^ t[0][usize::from(c[7])];
    }
    // Of the up to seven bytes left (YCSB's 23-byte keys leave seven), four
    // go as one 4-byte slice: four dependent steps of the chain fewer.
    let mut rest = chunks.remainder();
    if let [a, b, c, d, tail @ ..] = rest {
        let t = &CRC16_8;
        crc = t[3][usize::from((crc >> 8) as u8 ^ a)]
            ^ t[2][usize::from(crc as u8 ^ b)]
            ^ t[1][usize::from(*c)]
            ^ t[0][usize::from(*d)];
        rest = tail;
    }
    crc16_bytewise(crc, rest)
}

/// The reference: one byte at a time from register `crc`.
#[inline]
fn crc16_bytewise(crc: u16, data: &[u8]) -> u16 {
    data.iter().fold(crc, |crc, &b| {
        (crc << 8) ^ CRC16[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// The part of `key` that is hashed: the hash tag when there is a non-empty
/// one, else the whole key.
#[inline]
pub fn hashed_part(key: &[u8]) -> &[u8] {
    if !may_hold_open_brace(key) {
        return key;
    }
    if let Some(open) = memchr::memchr(b'{', key) {
        if let Some(len) = memchr::memchr(b'}', &key[open + 1..]) {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// False only when `key` holds no `{`, so has no hash tag. Every key is
/// routed and almost none has a tag: `memchr`'s dispatch and set-up cost
/// some 50 instructions per key of 16-32 bytes (YCSB's 23), two SSE2
/// compares of the key's first and last 16 bytes (overlapping) about 8.
/// Other lengths and architectures answer true and take `memchr`.
#[inline]
fn may_hold_open_brace(key: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if (16..=32).contains(&key.len()) {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of every x86-64 CPU; both unaligned 16-byte
        // loads lie within `key` (16 <= len <= 32).
        return unsafe {
            let brace = _mm_set1_epi8(b'{' as i8);
            let first = _mm_loadu_si128(key.as_ptr().cast());
            let last = _mm_loadu_si128(key.as_ptr().add(key.len() - 16).cast());
            let hits = _mm_or_si128(_mm_cmpeq_epi8(first, brace), _mm_cmpeq_epi8(last, brace));
            _mm_movemask_epi8(hits) != 0
        };
    }
    true
}

/// The hash slot of `key`.
#[inline]
pub fn slot_of(key: &[u8]) -> u16 {
    slot_of_part(hashed_part(key))
}

/// The hash slot of a key whose hashed part is `part`.
#[inline]
fn slot_of_part(part: &[u8]) -> u16 {
    crc16(part) & (SLOTS as u16 - 1)
}

/// The hash slot of a record's `name`, written to the stack and hashed
/// there: [`slot_of`] of its bytes. A name is a prefix and digits, so only
/// a `{` in the prefix can open a hash tag; without one the whole name is
/// hashed, with no search.
#[inline]
pub fn slot_of_name(name: &KeyName) -> u16 {
    let mut room = [0u8; KeyName::ROOM];
    let key = name.bytes_in(&mut room);
    if name.prefix_holds(b'{') {
        return slot_of(key);
    }
    slot_of_part(key)
}

/// The most nodes a phase follows (slot owners are `u16` indices).
const MAX_NODES: usize = 1024;

/// Which node owns each slot, by index into [`SlotTable::all_nodes`].
#[derive(Debug, Clone)]
pub struct SlotTable {
    /// Masters first, then replicas, then nodes that joined: shared by the
    /// phase's workers (their tables are clones), appended to only.
    nodes: Arc<Mutex<Vec<SocketAddr>>>,
    /// How many `nodes` holds, read without the lock on the hot path.
    count: Arc<AtomicUsize>,
    /// The first masters, for [`SlotTable::nodes`].
    first_masters: Vec<SocketAddr>,
    owner: Vec<Cell<u16>>,
    /// `owner` in a few runs, while it has at most [`RUNS`] of them.
    runs: Cell<Option<Runs>>,
    refresh: Refresh,
}

/// The most runs of slots [`Runs`] holds: 8 starts, 16 bytes.
const RUNS: usize = 9;

/// The slot map as runs of consecutive slots with one owner: what a
/// cluster set up by `redis-cli --cluster create` or kvbench has (a range
/// per master). Every request looks its slot up, and `perf record` put
/// about a third of routing's samples on the one load from the 32 KiB
/// table (a random slot per request, the kernel's network path run in
/// between); the runs fit in one cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Runs {
    /// The first slot of each run after the first, ascending; [`SLOTS`]
    /// (past every slot) where there are fewer runs.
    starts: [u16; RUNS - 1],
    /// The node of each run.
    nodes: [u16; RUNS],
}

impl Runs {
    /// The runs of `owner`, when there are at most [`RUNS`].
    fn of(owner: &[Cell<u16>]) -> Option<Runs> {
        let first = owner.first()?.get();
        let mut runs = Runs {
            starts: [SLOTS as u16; RUNS - 1],
            nodes: [first; RUNS],
        };
        let mut n = 1;
        for (slot, o) in owner.iter().enumerate().skip(1) {
            let node = o.get();
            if node != runs.nodes[n - 1] {
                if n == RUNS {
                    return None;
                }
                runs.starts[n - 1] = slot as u16;
                runs.nodes[n] = node;
                n += 1;
            }
        }
        Some(runs)
    }

    /// The node of `slot` (below [`SLOTS`]): its run is the number of
    /// starts at or below it. On x86-64 one SSE2 compare of all eight
    /// (starts and slots are below 2^15, so signed compares hold): the
    /// starts above `slot` are the last lanes, and the first of them, from
    /// the lane mask, is the count.
    #[inline]
    fn node_of(&self, slot: u16) -> u16 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{
                _mm_cmpgt_epi16, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi16,
            };
            // SAFETY: SSE2 is part of every x86-64 CPU; the load reads the
            // 16 bytes of `starts`, whole.
            let above = unsafe {
                let starts = _mm_loadu_si128(self.starts.as_ptr().cast());
                _mm_movemask_epi8(_mm_cmpgt_epi16(starts, _mm_set1_epi16(slot as i16)))
            };
            // Two mask bits a lane; no start above: all eight at or below.
            let run = ((above as u32) | 1 << 16).trailing_zeros() as usize / 2;
            self.nodes[run.min(RUNS - 1)]
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self.node_of_counted(slot)
        }
    }

    /// [`Runs::node_of`] by counting the starts one by one: the
    /// reference, and the way on other architectures.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    fn node_of_counted(&self, slot: u16) -> u16 {
        let run: usize = self.starts.iter().map(|&s| usize::from(s <= slot)).sum();
        self.nodes[run.min(RUNS - 1)]
    }
}

/// When the slot map is asked for again: after `CLUSTERDOWN`, `TRYAGAIN`
/// or a lost connection, no sooner than the wait, which doubles (up to
/// [`REFRESH_MAX`]) while refreshes change nothing.
#[derive(Debug, Clone)]
struct Refresh {
    /// How to reach the nodes (no access: a table built from ranges alone,
    /// which never refreshes).
    access: Option<Access>,
    wanted: Cell<bool>,
    not_before: Cell<Option<Instant>>,
    wait: Cell<Duration>,
    done: Cell<u64>,
}

impl SlotTable {
    /// A table from `CLUSTER SLOTS` ranges; every slot must be covered.
    ///
    /// # Errors
    /// A message naming the first uncovered slot.
    pub fn from_ranges(ranges: &[SlotRange]) -> Result<SlotTable, String> {
        let mut nodes: Vec<SocketAddr> = Vec::new();
        let mut owner = vec![u16::MAX; SLOTS];
        for r in ranges {
            let node = match nodes.iter().position(|a| *a == r.master) {
                Some(i) => i,
                None => {
                    nodes.push(r.master);
                    nodes.len() - 1
                }
            };
            for slot in r.first..=r.last.min(SLOTS as u16 - 1) {
                owner[usize::from(slot)] = node as u16;
            }
        }
        if let Some(slot) = owner.iter().position(|&o| o == u16::MAX) {
            return Err(format!(
                "slot {slot} is served by no node (the cluster is not fully set up)"
            ));
        }
        let masters = nodes.len();
        for a in ranges.iter().flat_map(|r| &r.replicas) {
            if !nodes.contains(a) {
                nodes.push(*a);
            }
        }
        let owner_cells: Vec<Cell<u16>> = owner.into_iter().map(Cell::new).collect();
        Ok(SlotTable {
            count: Arc::new(AtomicUsize::new(nodes.len())),
            first_masters: nodes[..masters].to_vec(),
            nodes: Arc::new(Mutex::new(nodes)),
            runs: Cell::new(Runs::of(&owner_cells)),
            owner: owner_cells,
            refresh: Refresh {
                access: None,
                wanted: Cell::new(false),
                not_before: Cell::new(None),
                wait: Cell::new(REFRESH_MIN),
                done: Cell::new(0),
            },
        })
    }

    /// The masters the map was built from.
    pub fn nodes(&self) -> &[SocketAddr] {
        &self.first_masters
    }

    /// Every node a client connects to, in the order node indices refer
    /// to: the masters, then the replicas, then nodes that joined.
    pub fn all_nodes(&self) -> Vec<SocketAddr> {
        self.list().clone()
    }

    /// How many nodes [`SlotTable::all_nodes`] holds.
    #[inline]
    pub fn node_count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// The address of node `i`.
    pub fn node_addr(&self, i: usize) -> Option<SocketAddr> {
        self.list().get(i).copied()
    }

    fn list(&self) -> std::sync::MutexGuard<'_, Vec<SocketAddr>> {
        self.nodes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The index of the node at `addr`, adding it when it is new (it joined
    /// the cluster while the phase ran); `None` past [`MAX_NODES`].
    fn index_or_join(&self, addr: SocketAddr) -> Option<usize> {
        let mut nodes = self.list();
        if let Some(i) = nodes.iter().position(|a| *a == addr) {
            return Some(i);
        }
        if nodes.len() >= MAX_NODES {
            return None;
        }
        nodes.push(addr);
        self.count.store(nodes.len(), Ordering::Release);
        Some(nodes.len() - 1)
    }

    /// Asks for a refresh of the map at the next [`SlotTable::refresh_if_due`].
    pub fn want_refresh(&self) {
        self.refresh.wanted.set(true);
    }

    /// How many refreshes have been made.
    pub fn refreshes(&self) -> u64 {
        self.refresh.done.get()
    }

    /// Refreshes the map when one was asked for and the wait since the last
    /// one is over: asks the nodes in turn for `CLUSTER SLOTS` and moves
    /// each slot to its master (a node that joined is added, and gets its
    /// connections). Blocking, for at most [`REFRESH_TIMEOUT`] in all,
    /// however many nodes do not answer; cheap when nothing is due.
    pub fn refresh_if_due(&self, now: Instant) {
        let r = &self.refresh;
        if !r.wanted.get() || r.not_before.get().is_some_and(|t| now < t) {
            return;
        }
        let Some(access) = &r.access else {
            r.wanted.set(false);
            return;
        };
        r.wanted.set(false);
        r.done.set(r.done.get() + 1);
        // One budget for the whole refresh: a worker waits no longer than
        // one timeout, however many nodes are down.
        let deadline = now + REFRESH_TIMEOUT;
        let changed = self
            .all_nodes()
            .into_iter()
            .find_map(|n| {
                let left = deadline.saturating_duration_since(Instant::now());
                (!left.is_zero())
                    .then(|| cluster_slots(n, access, left).ok())
                    .flatten()
            })
            .is_some_and(|ranges| self.apply(&ranges));
        let wait = if changed {
            REFRESH_MIN
        } else {
            (r.wait.get() * 2).min(REFRESH_MAX)
        };
        r.wait.set(wait);
        r.not_before.set(Some(now + wait));
    }

    /// Moves slots to the masters `ranges` name (adding nodes that
    /// joined, replicas too, so a later promotion finds a connection);
    /// true when any moved.
    fn apply(&self, ranges: &[SlotRange]) -> bool {
        let mut changed = false;
        for r in ranges {
            for &replica in &r.replicas {
                self.index_or_join(replica);
            }
            let Some(node) = self.index_or_join(r.master) else {
                continue;
            };
            for slot in r.first..=r.last.min(SLOTS as u16 - 1) {
                let o = &self.owner[usize::from(slot)];
                if o.get() != node as u16 {
                    o.set(node as u16);
                    changed = true;
                }
            }
        }
        if changed {
            self.runs.set(Runs::of(&self.owner));
        }
        changed
    }

    /// The node serving `slot`.
    #[inline]
    pub fn node_of_slot(&self, slot: u16) -> usize {
        let slot = slot & (SLOTS as u16 - 1);
        match self.runs.get() {
            Some(runs) => usize::from(runs.node_of(slot)),
            None => usize::from(self.owner[usize::from(slot)].get()),
        }
    }

    /// Records that `slot` has moved to `addr` (a `MOVED` reply), adding
    /// the node when it joined while the phase ran. Returns the node
    /// index (`None` only past [`MAX_NODES`]).
    pub fn moved(&self, slot: u16, addr: SocketAddr) -> Option<usize> {
        let node = self.index_or_join(addr)?;
        let o = &self.owner[usize::from(slot) & (SLOTS - 1)];
        if o.get() != node as u16 {
            o.set(node as u16);
            // Slots move one at a time while a cluster reshards: the
            // table serves until the next refresh rebuilds the runs.
            self.runs.set(None);
        }
        Some(node)
    }

    /// The index of the node at `addr`, adding it when it is new (an `ASK`
    /// to a node that joined).
    pub fn node_index(&self, addr: SocketAddr) -> Option<usize> {
        self.index_or_join(addr)
    }
}

/// True for a reply that asks to try again later: `TRYAGAIN` (a
/// multi-key request during a migration) or `CLUSTERDOWN` (the cluster
/// cannot serve the slot now, e.g. during a failover).
pub fn asks_to_retry(reply: &[u8]) -> bool {
    reply.starts_with(b"-TRYAGAIN") || reply.starts_with(b"-CLUSTERDOWN")
}

/// A redirect reply, parsed (`-MOVED 3999 127.0.0.1:6381`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirect {
    /// The slot lives on another node now: update the table, send there.
    Moved {
        /// The slot.
        slot: u16,
        /// Its node.
        addr: SocketAddr,
    },
    /// The slot is being migrated and this key is already on `addr`: send
    /// `ASKING` and the request there, once, without updating the table.
    Ask {
        /// The slot.
        slot: u16,
        /// The node importing it.
        addr: SocketAddr,
    },
}

impl Redirect {
    /// Parses a complete RESP error reply; `None` for any other reply.
    pub fn parse(reply: &[u8]) -> Option<Redirect> {
        let text = reply.strip_prefix(b"-")?;
        let line = &text[..text.windows(2).position(|w| w == b"\r\n")?];
        let line = std::str::from_utf8(line).ok()?;
        let mut words = line.split(' ');
        let kind = words.next()?;
        let slot: u16 = words.next()?.parse().ok()?;
        let addr = parse_node_addr(words.next()?)?;
        match kind {
            "MOVED" => Some(Redirect::Moved { slot, addr }),
            "ASK" => Some(Redirect::Ask { slot, addr }),
            _ => None,
        }
    }
}

/// `host:port` (an IPv6 host may be bare or bracketed), resolved.
fn parse_node_addr(text: &str) -> Option<SocketAddr> {
    if let Ok(a) = text.parse() {
        return Some(a);
    }
    let (host, port) = text.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port).to_socket_addrs().ok()?.next()
}

/// Asks the seed nodes, in order, for the cluster's slot map (`CLUSTER
/// SLOTS`), and returns the first complete one. Blocking; called once
/// before a phase starts.
///
/// # Errors
/// A message naming each seed and why it did not answer with a full map.
pub fn discover(
    seeds: &[SocketAddr],
    access: &Access,
    timeout: Duration,
) -> Result<SlotTable, String> {
    let mut why = Vec::new();
    for &seed in seeds {
        match cluster_slots(seed, access, timeout).and_then(|r| SlotTable::from_ranges(&r)) {
            Ok(mut t) => {
                t.refresh.access = Some(access.clone());
                return Ok(t);
            }
            Err(e) => why.push(format!("{seed}: {e}")),
        }
    }
    Err(format!(
        "no seed node gave a complete slot map: {}",
        why.join("; ")
    ))
}

/// `CLUSTER SLOTS` of the node at `addr`. A node announced with an empty
/// host (`""`, Redis 7 when it does not know its own address) is at the
/// asked node's host.
fn cluster_slots(
    addr: SocketAddr,
    access: &Access,
    timeout: Duration,
) -> Result<Vec<SlotRange>, String> {
    let mut request = Vec::new();
    resp::encode_command(&mut request, &[b"CLUSTER", b"SLOTS"]);
    let value =
        kvbench_connect::exchange(addr, access, timeout, &request, 64 << 20, resp::parse_value)?;
    let ranges = match value {
        Value::Array(items) => items,
        Value::Error(e) => return Err(format!("CLUSTER SLOTS: {e}")),
        other => return Err(format!("unexpected reply to CLUSTER SLOTS: {other:?}")),
    };
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let Value::Array(parts) = r else {
            return Err("a slot range that is not an array".into());
        };
        let num = |v: Option<&Value>| {
            v.and_then(Value::as_i64)
                .and_then(|n| u16::try_from(n).ok())
        };
        let (Some(first), Some(last)) = (num(parts.first()), num(parts.get(1))) else {
            return Err("a slot range without its bounds".into());
        };
        if !matches!(parts.get(2), Some(Value::Array(_))) {
            return Err("a slot range without a master".into());
        }
        let mut nodes = parts[2..].iter().map(|n| node_addr(n, addr));
        let master = nodes.next().ok_or("a slot range without a master")??;
        let replicas = nodes.collect::<Result<Vec<_>, _>>()?;
        out.push(SlotRange {
            first,
            last,
            master,
            replicas,
        });
    }
    Ok(out)
}

/// A node entry of `CLUSTER SLOTS` (`[host, port, id, ...]`), as an address.
fn node_addr(entry: &Value, asked: SocketAddr) -> Result<SocketAddr, String> {
    let Value::Array(fields) = entry else {
        return Err("a node entry that is not an array".into());
    };
    let host = fields
        .first()
        .and_then(Value::as_bytes)
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .unwrap_or_default();
    let port = fields
        .get(1)
        .and_then(Value::as_i64)
        .and_then(|n| u16::try_from(n).ok())
        .ok_or("a node without a port")?;
    if host.is_empty() || host == "?" {
        Ok(SocketAddr::new(asked.ip(), port))
    } else {
        parse_node_addr(&format!("{host}:{port}"))
            .ok_or_else(|| format!("cannot resolve node {host}:{port}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_is_xmodem() {
        // The cluster specification's check value.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn sliced_crc16_equals_the_bytewise_reference() {
        // Every length up to 64 (all remainders after 8-byte chunks), with
        // bytes from a fixed pseudo-random sequence.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let data: Vec<u8> = (0..64)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for len in 0..=data.len() {
            for start in [0, 1, 3] {
                let d = &data[start.min(len)..len];
                assert_eq!(crc16(d), crc16_bytewise(0, d), "length {}", d.len());
            }
        }
        assert_eq!(crc16(&[0xff; 40]), crc16_bytewise(0, &[0xff; 40]));
    }

    #[test]
    fn slots_and_hash_tags_follow_the_specification() {
        // Values from `CLUSTER KEYSLOT` on Redis 7.
        assert_eq!(slot_of(b"foo"), 12182);
        assert_eq!(slot_of(b"bar"), 5061);
        assert_eq!(slot_of(b"{user1000}.following"), slot_of(b"user1000"));
        assert_eq!(slot_of(b"foo{}{bar}"), slot_of(b"foo{}{bar}"));
        assert_eq!(hashed_part(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hashed_part(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hashed_part(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hashed_part(b"{"), b"{");
        assert_eq!(hashed_part(b"a}b{c"), b"a}b{c");
        // The SSE2 look for a brace: every position in keys of 16 to 32
        // bytes, and the lengths around them.
        for len in 1..=40 {
            let plain = vec![b'7'; len];
            assert_eq!(hashed_part(&plain), &plain[..], "length {len}");
            assert!(!(16..=32).contains(&len) || !may_hold_open_brace(&plain));
            for at in 0..len.saturating_sub(2) {
                let mut tagged = plain.clone();
                tagged[at] = b'{';
                tagged[at + 2] = b'}';
                assert!(may_hold_open_brace(&tagged), "length {len}, brace at {at}");
                assert_eq!(
                    hashed_part(&tagged),
                    &plain[at + 1..at + 2],
                    "length {len}, brace at {at}"
                );
            }
        }
    }

    #[test]
    fn a_name_has_the_slot_of_its_bytes() {
        use kvbench_workload::keys::KeyNamer;
        // Hashed and ordered names of every length, prefixes with and
        // without a hash tag (whole, open only, empty), paddings to 24.
        let prefixes = [
            "user", "", "k", "{a}", "{ab}:", "x{", "{}", "ab}{cd}", "{user}",
        ];
        for prefix in prefixes {
            for (ordered, padding) in [(false, 1), (true, 1), (true, 10), (true, 24)] {
                let namer = KeyNamer::new(ordered, padding).with_prefix(prefix);
                for keynum in (0..2_000u64).chain([u64::from(u32::MAX), 1 << 62]) {
                    let Some(name) = namer.name(keynum) else {
                        continue;
                    };
                    let mut key = Vec::new();
                    namer.write_key(keynum, &mut key);
                    assert_eq!(slot_of_name(&name), slot_of(&key), "{key:?}");
                }
            }
        }
        // A tag in the prefix decides: every name of `{user}` shares a slot.
        let tagged = KeyNamer::default().with_prefix("{user}");
        let names = (0..100).filter_map(|k| tagged.name(k));
        assert!(names
            .map(|n| slot_of_name(&n))
            .all(|s| s == slot_of(b"user")));
    }

    #[test]
    fn the_runs_answer_as_the_table_does() {
        let addr = |i: u16| SocketAddr::from(([127, 0, 0, 1], 7000 + i));
        // Maps of 1 to 12 ranges over up to 4 masters, cut at pseudo-random
        // slots (the first and last slot among them): up to 9 runs fit.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for ranges in 1..=12u16 {
            for _ in 0..20 {
                let mut cuts: Vec<u16> = (1..ranges)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        1 + (x % (SLOTS as u64 - 1)) as u16
                    })
                    .collect();
                cuts.extend([0, SLOTS as u16]);
                cuts.sort_unstable();
                cuts.dedup();
                let map: Vec<SlotRange> = cuts
                    .windows(2)
                    .enumerate()
                    .map(|(i, w)| SlotRange {
                        first: w[0],
                        last: w[1] - 1,
                        master: addr(i as u16 % 4),
                        replicas: Vec::new(),
                    })
                    .collect();
                let t = SlotTable::from_ranges(&map).expect("every slot covered");
                let runs = Runs::of(&t.owner);
                let owners = t.owner.iter().map(Cell::get);
                let changes = owners.clone().zip(owners.skip(1)).filter(|(a, b)| a != b);
                assert_eq!(runs.is_some(), changes.count() < RUNS, "{map:?}");
                for slot in 0..SLOTS as u16 {
                    let want = usize::from(t.owner[usize::from(slot)].get());
                    assert_eq!(t.node_of_slot(slot), want, "slot {slot} of {map:?}");
                    if let Some(r) = runs {
                        assert_eq!(usize::from(r.node_of(slot)), want);
                        assert_eq!(usize::from(r.node_of_counted(slot)), want);
                    }
                }
            }
        }
    }

    #[test]
    fn a_moved_slot_is_served_by_the_table_until_a_refresh() {
        let (a, b) = (
            SocketAddr::from(([127, 0, 0, 1], 1)),
            SocketAddr::from(([127, 0, 0, 1], 2)),
        );
        let range = |first, last, master| SlotRange {
            first,
            last,
            master,
            replicas: Vec::new(),
        };
        let t = SlotTable::from_ranges(&[range(0, 8191, a), range(8192, 16383, b)]).expect("map");
        assert!(t.runs.get().is_some());
        assert_eq!(t.moved(100, a), Some(0), "the owner already");
        assert!(t.runs.get().is_some(), "no move, the runs stay");
        assert_eq!(t.moved(100, b), Some(1));
        assert_eq!(
            (t.node_of_slot(99), t.node_of_slot(100), t.node_of_slot(101)),
            (0, 1, 0)
        );
        assert!(t.runs.get().is_none());
        // A refresh that moves slots builds the runs again.
        assert!(t.apply(&[range(0, 99, a), range(100, 16383, b)]));
        assert_eq!(
            t.runs.get().map(|r| (r.starts[0], r.nodes[..2].to_vec())),
            Some((100, vec![0, 1]))
        );
        assert_eq!((t.node_of_slot(99), t.node_of_slot(8000)), (0, 1));
    }

    #[test]
    fn redirects_parse() {
        let a: SocketAddr = "127.0.0.1:7001".parse().expect("addr");
        assert_eq!(
            Redirect::parse(b"-MOVED 3999 127.0.0.1:7001\r\n"),
            Some(Redirect::Moved {
                slot: 3999,
                addr: a
            })
        );
        assert_eq!(
            Redirect::parse(b"-ASK 12 127.0.0.1:7001\r\n"),
            Some(Redirect::Ask { slot: 12, addr: a })
        );
        assert_eq!(Redirect::parse(b"-ERR wrong\r\n"), None);
        assert_eq!(Redirect::parse(b"+OK\r\n"), None);
        assert_eq!(Redirect::parse(b"-MOVED x 127.0.0.1:1\r\n"), None);
    }

    #[test]
    fn the_table_covers_every_slot_and_follows_moves() {
        let a: SocketAddr = "127.0.0.1:1".parse().expect("addr");
        let b: SocketAddr = "127.0.0.1:2".parse().expect("addr");
        let c: SocketAddr = "127.0.0.1:4".parse().expect("addr");
        let range = |first, last, master, replicas: &[SocketAddr]| SlotRange {
            first,
            last,
            master,
            replicas: replicas.to_vec(),
        };
        let t = SlotTable::from_ranges(&[range(0, 8191, a, &[c]), range(8192, 16383, b, &[])])
            .expect("table");
        assert_eq!(t.nodes(), [a, b]);
        assert_eq!(t.all_nodes(), [a, b, c]);
        // A failover: the replica takes the first range over.
        assert!(t.apply(&[range(0, 8191, c, &[]), range(8192, 16383, b, &[])]));
        assert_eq!(t.node_of_slot(0), 2);
        assert!(!t.apply(&[range(0, 8191, c, &[])]));
        assert!(t.apply(&[range(0, 8191, a, &[])]));
        assert_eq!((t.node_of_slot(0), t.node_of_slot(16383)), (0, 1));
        assert_eq!(t.moved(5, b), Some(1));
        assert_eq!(t.node_of_slot(5), 1);
        // A node that joined: added behind the others, for every clone.
        let joined: SocketAddr = "127.0.0.1:3".parse().expect("addr");
        let other_worker = t.clone();
        assert_eq!(t.moved(5, joined), Some(3));
        assert_eq!((t.node_of_slot(5), t.node_count()), (3, 4));
        assert_eq!(other_worker.node_count(), 4);
        assert_eq!(other_worker.node_index(joined), Some(3));
        assert_eq!(
            other_worker.node_of_slot(5),
            1,
            "slots stay each worker's own"
        );
        assert_eq!(t.all_nodes(), [a, b, c, joined]);
        let err = SlotTable::from_ranges(&[range(0, 100, a, &[])]).expect_err("gaps");
        assert!(err.contains("slot 101"), "{err}");
    }
}
