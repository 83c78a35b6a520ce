//! Redis Cluster's key-to-slot mapping and the client's slot table.
//!
//! The slot of a key is CRC16 (XMODEM: polynomial 0x1021, initial value 0,
//! no reflection) of the key modulo 16384, where a key holding a non-empty
//! `{...}` hash tag is hashed on the tag only, exactly as the cluster
//! specification and `CLUSTER KEYSLOT` define it: the first `{`, then the
//! first `}` after it; an empty tag (`{}`) means the whole key is hashed.
//!
//! The table is shared by the clients of one worker thread and updated in
//! place by `MOVED` replies, so it holds `Cell`s (no borrow checks per
//! request, no locks: one worker owns it).

use kvbench_connect::Access;
use kvbench_proto::resp::{self, Value};
use std::cell::Cell;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

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
    crc16_bytewise(crc, chunks.remainder())
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
    if let Some(open) = memchr::memchr(b'{', key) {
        if let Some(len) = memchr::memchr(b'}', &key[open + 1..]) {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// The hash slot of `key`.
#[inline]
pub fn slot_of(key: &[u8]) -> u16 {
    crc16(hashed_part(key)) & (SLOTS as u16 - 1)
}

/// Which node owns each slot, by index into [`SlotTable::nodes`].
#[derive(Debug, Clone)]
pub struct SlotTable {
    nodes: Vec<SocketAddr>,
    owner: Vec<Cell<u16>>,
}

impl SlotTable {
    /// A table from `(first slot, last slot, node address)` ranges; every
    /// slot must be covered.
    ///
    /// # Errors
    /// A message naming the first uncovered slot.
    pub fn from_ranges(ranges: &[(u16, u16, SocketAddr)]) -> Result<SlotTable, String> {
        let mut nodes: Vec<SocketAddr> = Vec::new();
        let mut owner = vec![u16::MAX; SLOTS];
        for &(first, last, addr) in ranges {
            let node = match nodes.iter().position(|a| *a == addr) {
                Some(i) => i,
                None => {
                    nodes.push(addr);
                    nodes.len() - 1
                }
            };
            for slot in first..=last.min(SLOTS as u16 - 1) {
                owner[usize::from(slot)] = node as u16;
            }
        }
        if let Some(slot) = owner.iter().position(|&o| o == u16::MAX) {
            return Err(format!(
                "slot {slot} is served by no node (the cluster is not fully set up)"
            ));
        }
        Ok(SlotTable {
            nodes,
            owner: owner.into_iter().map(Cell::new).collect(),
        })
    }

    /// The masters, in the order node indices refer to.
    pub fn nodes(&self) -> &[SocketAddr] {
        &self.nodes
    }

    /// The node serving `slot`.
    #[inline]
    pub fn node_of_slot(&self, slot: u16) -> usize {
        usize::from(self.owner[usize::from(slot) & (SLOTS - 1)].get())
    }

    /// Records that `slot` has moved to `addr` (a `MOVED` reply). Returns
    /// the node index, or `None` when `addr` is not one of the nodes the
    /// phase connected to (a node added while it ran).
    pub fn moved(&self, slot: u16, addr: SocketAddr) -> Option<usize> {
        let node = self.node_index(addr)?;
        self.owner[usize::from(slot) & (SLOTS - 1)].set(node as u16);
        Some(node)
    }

    /// The index of the node at `addr`.
    pub fn node_index(&self, addr: SocketAddr) -> Option<usize> {
        self.nodes.iter().position(|a| *a == addr)
    }
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
            Ok(t) => return Ok(t),
            Err(e) => why.push(format!("{seed}: {e}")),
        }
    }
    Err(format!(
        "no seed node gave a complete slot map: {}",
        why.join("; ")
    ))
}

/// `CLUSTER SLOTS` of the node at `addr`, as `(first, last, master)` ranges.
/// A master announced with an empty host (`""`, Redis 7 when it does not
/// know its own address) is at the seed's host.
fn cluster_slots(
    addr: SocketAddr,
    access: &Access,
    timeout: Duration,
) -> Result<Vec<(u16, u16, SocketAddr)>, String> {
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
        let Some(Value::Array(master)) = parts.get(2) else {
            return Err("a slot range without a master".into());
        };
        let host = master
            .first()
            .and_then(Value::as_bytes)
            .map(|h| String::from_utf8_lossy(h).into_owned())
            .unwrap_or_default();
        let port = num(master.get(1)).ok_or("a master without a port")?;
        let node = if host.is_empty() || host == "?" {
            SocketAddr::new(addr.ip(), port)
        } else {
            parse_node_addr(&format!("{host}:{port}"))
                .ok_or_else(|| format!("cannot resolve master {host}:{port}"))?
        };
        out.push((first, last, node));
    }
    Ok(out)
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
        let t = SlotTable::from_ranges(&[(0, 8191, a), (8192, 16383, b)]).expect("table");
        assert_eq!(t.nodes(), [a, b]);
        assert_eq!((t.node_of_slot(0), t.node_of_slot(16383)), (0, 1));
        assert_eq!(t.moved(5, b), Some(1));
        assert_eq!(t.node_of_slot(5), 1);
        assert_eq!(t.moved(5, "127.0.0.1:3".parse().expect("addr")), None);
        let err = SlotTable::from_ranges(&[(0, 100, a)]).expect_err("gaps");
        assert!(err.contains("slot 101"), "{err}");
    }
}
