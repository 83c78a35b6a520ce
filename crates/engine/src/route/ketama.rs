//! Ketama consistent hashing over a Memcached pool, bit-for-bit as the client
//! libraries compute it, so kvbench sends every key to the server a real
//! client of that library would.
//!
//! "Ketama" names a family, not one algorithm: the libraries agree on the
//! idea (hash each server to many points on a 32-bit circle, send a key to
//! the first point at or after the key's hash, wrapping past the top) and
//! disagree on every detail, so the same pool routes keys differently under
//! each of them. [`Variant`] picks one:
//!
//! | | [`Libmemcached`](Variant::Libmemcached) | [`LibmemcachedMd5`](Variant::LibmemcachedMd5) | [`Spymemcached`](Variant::Spymemcached) |
//! |---|---|---|---|
//! | points per server | 100 | 100 | 160 |
//! | string hashed per point | `host:port-N`, N = 0..=99; `host-N` when port is 11211 | same | `host:port-N`, N = 0..=39, port always |
//! | points per hashed string | 1 | 1 | 4 (all 16 MD5 bytes) |
//! | point and key hash | one-at-a-time | MD5, bytes 0..4 little-endian | MD5, bytes 4h..4h+4 little-endian |
//! | two servers on one point | the earlier server keeps it | same | the later server takes it |
//! | one-server pool | key is not hashed | same | (always the one server) |
//!
//! Libmemcached (`update_continuum` in hosts.cc, `dispatch_host` in hash.cc,
//! libmemcached 1.1.4): `MEMCACHED_BEHAVIOR_KETAMA` = 1, which is all that
//! pylibmc's `"ketama": True` sets, only switches the distribution to
//! `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA`. Since libmemcached 0.49 (2011)
//! it no longer switches the hash to MD5 (pylibmc's documentation still says it
//! does), so both the points and the keys go through the library's default
//! hash, Bob Jenkins' one-at-a-time, read byte by byte as C `char`: signed on
//! x86-64, so bytes 0x80 and up count as negative there, and as
//! [`c_char`] here. Unweighted (every server weight 1) it
//! makes 100 points per server, one hash per point; the default port is left
//! out of the point string, a libmemcached quirk the others lack. The
//! continuum is sorted by (point, server index) and searched for the first
//! point not below the key's hash, so on a shared point the server added
//! first wins. With a single server it skips hashing and answers server 0.
//!
//! LibmemcachedMd5 is the same continuum with `MEMCACHED_BEHAVIOR_HASH` =
//! `MEMCACHED_HASH_MD5` set before the servers are added (pylibmc's `"hash":
//! "md5"` beside `"ketama": True`, and what `KETAMA` alone meant before
//! 0.49): every hash is the first four MD5 bytes read little-endian. It is
//! still not libketama's continuum: 100 single points, not 160 from 40
//! digests, and no port for 11211.
//!
//! Spymemcached (`KetamaNodeLocator` with `DefaultHashAlgorithm.KETAMA_HASH`,
//! the `Locator.CONSISTENT` plus `KETAMA_HASH` a spymemcached user has to ask
//! for; YCSB's memcached binding asks for neither and gets spymemcached's
//! default, `ARRAY_MOD` over `String.hashCode`, no ring at all): 40 MD5 digests per server, of `node key + "-" + N`, each digest cut
//! into four little-endian points. The node key is
//! `String.valueOf(InetSocketAddress)` with a leading `/` removed. For
//! `new InetSocketAddress("127.0.0.1", port)` (an IP literal, so Java never
//! looks up a name) that string is `/127.0.0.1:port`, so the node key is
//! `127.0.0.1:port`, which is what this variant hashes for host `127.0.0.1`:
//! kvbench addresses servers by IP. An address built from a name prints as
//! `name/ip:port`; pass `name/ip` as the host to reproduce it. Points live in
//! a `TreeMap`, so a later server's `put` replaces an earlier one's on a
//! shared point. Keys are hashed as their UTF-8 bytes, which is what the
//! bytes given here are for any key Java could have sent.
//!
//! libmemcached's own `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY` is not
//! this: it hashes `/host:port-N`, keeping the slash spymemcached has
//! stripped since 2.5.
//!
//! Lookups allocate nothing: a binary search over a sorted `Vec` of
//! (point, server index) built once.

use std::ffi::c_char;
use std::fmt::Write as _;

use md5::{Digest, Md5};

/// Which client library's continuum to reproduce; see the module
/// documentation for exactly what each hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Variant {
    /// libmemcached with `MEMCACHED_BEHAVIOR_KETAMA` on and nothing else
    /// (pylibmc's `"ketama": True`; `MEMCACHED_DISTRIBUTION_CONSISTENT`
    /// builds the same ring): one-at-a-time hash, 100 points per server.
    #[default]
    Libmemcached,
    /// libmemcached with `MEMCACHED_BEHAVIOR_KETAMA` and
    /// `MEMCACHED_HASH_MD5`: the same 100 points, hashed with MD5.
    LibmemcachedMd5,
    /// spymemcached's `KetamaNodeLocator` with `KETAMA_HASH`: 160 MD5
    /// points per server.
    Spymemcached,
}

impl Variant {
    /// Every variant, in the order `--hash` lists them.
    pub const ALL: [Variant; 3] = [
        Variant::Libmemcached,
        Variant::LibmemcachedMd5,
        Variant::Spymemcached,
    ];

    /// The name used on the command line and in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Libmemcached => "libmemcached",
            Variant::LibmemcachedMd5 => "libmemcached-md5",
            Variant::Spymemcached => "spymemcached",
        }
    }
}

/// Why a continuum could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContinuumError {
    /// There is no server a key could go to.
    #[error("a Memcached pool needs at least one server")]
    NoServers,
    /// Server indices are stored as `u32` to keep the continuum compact.
    #[error("{0} servers are more than a continuum can index")]
    TooManyServers(usize),
}

/// A ketama ring: maps a key to the index of its server in the list the ring
/// was built from.
#[derive(Debug, Clone)]
pub struct Continuum {
    variant: Variant,
    servers: usize,
    /// Sorted by point, one entry per point: the server a tie goes to is
    /// settled while building, so a lookup needs no tie rule.
    points: Vec<(u32, u32)>,
}

/// libmemcached's `MEMCACHED_DEFAULT_PORT`, left out of its point strings.
const MEMCACHED_DEFAULT_PORT: u16 = 11211;
/// libmemcached's `MEMCACHED_POINTS_PER_SERVER` (unweighted).
const LIBMEMCACHED_POINTS_PER_SERVER: u32 = 100;
/// spymemcached's `DefaultKetamaNodeLocatorConfiguration` `numReps`.
const SPYMEMCACHED_POINTS_PER_SERVER: u32 = 160;

impl Continuum {
    /// Builds the ring for `servers` (host, port), in the order the client
    /// was given them: the order decides who wins a shared point, and the
    /// index returned by [`server_for`](Self::server_for) is a position in
    /// this list. Every server has the default weight.
    ///
    /// Hosts are used verbatim, as the libraries do (no name lookup). For
    /// the libmemcached variants, port 0 and an empty host are read as
    /// 11211 and `localhost`, as `memcached_server_add` reads them.
    ///
    /// # Errors
    /// [`ContinuumError::NoServers`] for an empty list,
    /// [`ContinuumError::TooManyServers`] past `u32::MAX` servers.
    pub fn new(variant: Variant, servers: &[(&str, u16)]) -> Result<Continuum, ContinuumError> {
        if servers.is_empty() {
            return Err(ContinuumError::NoServers);
        }
        if u32::try_from(servers.len()).is_err() {
            return Err(ContinuumError::TooManyServers(servers.len()));
        }
        let per_server = match variant {
            Variant::Libmemcached | Variant::LibmemcachedMd5 => LIBMEMCACHED_POINTS_PER_SERVER,
            Variant::Spymemcached => SPYMEMCACHED_POINTS_PER_SERVER,
        };
        let mut points = Vec::with_capacity(servers.len() * per_server as usize);
        let mut label = String::new();
        for (index, &(host, port)) in (0u32..).zip(servers) {
            match variant {
                Variant::Libmemcached | Variant::LibmemcachedMd5 => {
                    let host = if host.is_empty() { "localhost" } else { host };
                    let port = if port == 0 {
                        MEMCACHED_DEFAULT_PORT
                    } else {
                        port
                    };
                    for n in 0..LIBMEMCACHED_POINTS_PER_SERVER {
                        label.clear();
                        // Writing to a String cannot fail.
                        let _ = if port == MEMCACHED_DEFAULT_PORT {
                            write!(label, "{host}-{n}")
                        } else {
                            write!(label, "{host}:{port}-{n}")
                        };
                        points.push((hash_key(variant, label.as_bytes()), index));
                    }
                }
                Variant::Spymemcached => {
                    for n in 0..SPYMEMCACHED_POINTS_PER_SERVER / 4 {
                        label.clear();
                        let _ = write!(label, "{host}:{port}-{n}");
                        let digest = Md5::digest(label.as_bytes());
                        for chunk in digest.chunks_exact(4) {
                            points.push((le_u32(chunk), index));
                        }
                    }
                }
            }
        }
        match variant {
            Variant::Libmemcached | Variant::LibmemcachedMd5 => {
                // qsort by (point, index) then a lower-bound search: the
                // lowest index on a shared point is the one found.
                points.sort_unstable();
            }
            Variant::Spymemcached => {
                // TreeMap.put in list order: the last server on a point keeps it.
                points.sort_unstable_by_key(|&(point, index)| (point, std::cmp::Reverse(index)));
            }
        }
        points.dedup_by_key(|&mut (point, _)| point);
        Ok(Continuum {
            variant,
            servers: servers.len(),
            points,
        })
    }

    /// The index (into the list given to [`new`](Self::new)) of the server
    /// `key` belongs on. Allocates nothing.
    pub fn server_for(&self, key: &[u8]) -> usize {
        if self.servers == 1 {
            // libmemcached returns before hashing; for the others every
            // point is server 0's anyway.
            return 0;
        }
        self.server_for_hash(hash_key(self.variant, key))
    }

    /// How many servers the ring was built from.
    pub fn servers(&self) -> usize {
        self.servers
    }

    /// Which library's continuum this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The first point at or after `hash`, wrapping to the lowest point past
    /// the highest (libmemcached's lower bound, spymemcached's
    /// `ceilingKey` then `firstKey`).
    fn server_for_hash(&self, hash: u32) -> usize {
        let at = self.points.partition_point(|&(point, _)| point < hash);
        let (_, index) = match self.points.get(at) {
            Some(&entry) => entry,
            // `new` refuses an empty pool, so there is a first point.
            None => self.points.first().copied().unwrap_or((0, 0)),
        };
        index as usize
    }
}

/// The key hash of `variant`, which is also libmemcached's point hash.
fn hash_key(variant: Variant, key: &[u8]) -> u32 {
    match variant {
        Variant::Libmemcached => one_at_a_time(key),
        Variant::LibmemcachedMd5 | Variant::Spymemcached => le_u32(&Md5::digest(key)),
    }
}

/// libhashkit's `hashkit_one_at_a_time`, which reads the key through a
/// `const char *`: whether bytes 0x80 and up are negative follows the
/// target's C `char`, as it does in the library built for that target.
fn one_at_a_time(key: &[u8]) -> u32 {
    let mut value: u32 = 0;
    for &byte in key {
        value = value.wrapping_add(byte as c_char as u32);
        value = value.wrapping_add(value << 10);
        value ^= value >> 6;
    }
    value = value.wrapping_add(value << 3);
    value ^= value >> 11;
    value.wrapping_add(value << 15)
}

/// Four bytes read little-endian: how both libraries turn an MD5 digest
/// into 32-bit points. `bytes` holds at least four.
fn le_u32(bytes: &[u8]) -> u32 {
    let mut word = [0u8; 4];
    for (to, from) in word.iter_mut().zip(bytes) {
        *to = *from;
    }
    u32::from_le_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values below were computed outside this code, from the
    // algorithm as the libraries write it: Python's hashlib.md5 for digests
    // and a ten-line one-at-a-time (signed bytes) for the libmemcached hash.

    const THREE: [(&str, u16); 3] = [
        ("127.0.0.1", 11211),
        ("127.0.0.1", 11212),
        ("127.0.0.1", 11213),
    ];

    #[test]
    fn one_at_a_time_matches_libhashkit() {
        assert_eq!(one_at_a_time(b""), 0);
        assert_eq!(one_at_a_time(b"a"), 3_392_050_242);
        assert_eq!(one_at_a_time(b"127.0.0.1:11212-0"), 998_730_936);
        assert_eq!(one_at_a_time(b"127.0.0.1-0"), 942_932_303);
        assert_eq!(
            one_at_a_time(b"usertable-user6284781860667377211"),
            3_867_243_759
        );
        // 0xff is -1 as a signed char; unsigned it would hash differently.
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        assert_eq!(one_at_a_time(&[0xff]), 2_925_896_852);
    }

    #[test]
    fn libmemcached_points_are_one_hash_of_each_host_string() {
        let ring = Continuum::new(Variant::Libmemcached, &THREE).expect("ring");
        assert_eq!(ring.points.len(), 300);
        // Port 11211 is left out of the string: "127.0.0.1-0", not "…:11211-0".
        assert!(ring.points.contains(&(942_932_303, 0)));
        assert!(!ring
            .points
            .contains(&(one_at_a_time(b"127.0.0.1:11211-0"), 0)));
        assert!(ring.points.contains(&(998_730_936, 1)));
        assert_eq!(ring.points.first(), Some(&(3_994_915, 0)));
        assert_eq!(ring.points.last(), Some(&(4_273_955_684, 0)));

        let md5 = Continuum::new(Variant::LibmemcachedMd5, &THREE).expect("ring");
        assert_eq!(md5.points.len(), 300);
        // md5("127.0.0.1:11212-0") = 19d09d26 2da7decb…: bytes 19 d0 9d 26 LE.
        assert!(md5.points.contains(&(0x269d_d019, 1)));
        assert_eq!(0x269d_d019, 647_876_633);
    }

    #[test]
    fn spymemcached_points_are_four_per_digest_with_the_port_always() {
        let ring = Continuum::new(Variant::Spymemcached, &THREE).expect("ring");
        assert_eq!(ring.points.len(), 480);
        // md5("127.0.0.1:11211-0") = e2fa569a 4ecf5e58 ab09bf98 d948c859.
        for point in [0x9a56_fae2, 0x585e_cf4e, 0x98bf_09ab, 0x59c8_48d9] {
            assert!(ring.points.contains(&(point, 0)), "{point:#x}");
        }
        assert_eq!(ring.points.first(), Some(&(13_595_443, 0)));
        assert_eq!(ring.points.last(), Some(&(4_292_320_248, 0)));
    }

    #[test]
    fn known_keys_route_as_the_reference_does() {
        let lm = Continuum::new(Variant::Libmemcached, &THREE).expect("ring");
        let md5 = Continuum::new(Variant::LibmemcachedMd5, &THREE).expect("ring");
        let spy = Continuum::new(Variant::Spymemcached, &THREE).expect("ring");
        let cases: [(&[u8], [usize; 3]); 5] = [
            (b"usertable-user6284781860667377211", [2, 2, 2]),
            (b"foo", [2, 0, 2]),
            (b"bar", [0, 0, 1]),
            (b"usertable-user0", [1, 0, 2]),
            (b"", [0, 0, 0]),
        ];
        for (key, [want_lm, want_md5, want_spy]) in cases {
            let shown = key.escape_ascii();
            assert_eq!(lm.server_for(key), want_lm, "libmemcached {shown}");
            assert_eq!(md5.server_for(key), want_md5, "libmemcached md5 {shown}");
            assert_eq!(spy.server_for(key), want_spy, "spymemcached {shown}");
        }
    }

    #[test]
    fn hashes_past_the_last_point_wrap_to_the_first() {
        for variant in [
            Variant::Libmemcached,
            Variant::LibmemcachedMd5,
            Variant::Spymemcached,
        ] {
            let ring = Continuum::new(variant, &THREE).expect("ring");
            let (first, first_server) = ring.points[0];
            let (last, last_server) = ring.points[ring.points.len() - 1];
            assert!(last < u32::MAX);
            assert_eq!(ring.server_for_hash(u32::MAX), first_server as usize);
            assert_eq!(ring.server_for_hash(last + 1), first_server as usize);
            assert_eq!(ring.server_for_hash(last), last_server as usize);
            assert_eq!(ring.server_for_hash(0), first_server as usize);
            assert_eq!(ring.server_for_hash(first), first_server as usize);
            // And through a real key whose hash lies past the last point.
            let key = (0u32..)
                .map(|i| format!("wrap-{i}"))
                .find(|k| hash_key(variant, k.as_bytes()) > last)
                .expect("some key hashes past the last point");
            assert_eq!(
                ring.server_for(key.as_bytes()),
                first_server as usize,
                "{key}"
            );
        }
    }

    #[test]
    fn shared_points_go_where_each_library_puts_them() {
        // The same server listed twice puts every point on two indices.
        let twice = [("127.0.0.1", 11212), ("127.0.0.1", 11212)];
        let lm = Continuum::new(Variant::Libmemcached, &twice).expect("ring");
        assert!(lm.points.iter().all(|&(_, index)| index == 0));
        let spy = Continuum::new(Variant::Spymemcached, &twice).expect("ring");
        assert!(spy.points.iter().all(|&(_, index)| index == 1));
    }

    #[test]
    fn one_server_takes_every_key() {
        for variant in [
            Variant::Libmemcached,
            Variant::LibmemcachedMd5,
            Variant::Spymemcached,
        ] {
            let ring = Continuum::new(variant, &[("10.0.0.7", 11311)]).expect("ring");
            for i in 0..1000 {
                assert_eq!(ring.server_for(format!("usertable-user{i}").as_bytes()), 0);
            }
            assert_eq!(ring.server_for(b""), 0);
        }
    }

    #[test]
    fn three_servers_share_100k_keys_roughly_evenly() {
        for variant in [
            Variant::Libmemcached,
            Variant::LibmemcachedMd5,
            Variant::Spymemcached,
        ] {
            let ring = Continuum::new(variant, &THREE).expect("ring");
            let mut counts = [0u32; 3];
            for i in 0..100_000u64 {
                counts[ring.server_for(format!("usertable-user{i}").as_bytes())] += 1;
            }
            for (server, &count) in counts.iter().enumerate() {
                assert!(
                    (25_000..=42_000).contains(&count),
                    "{variant:?}: server {server} got {count} of 100000 ({counts:?})"
                );
            }
        }
    }

    #[test]
    fn empty_pool_is_an_error() {
        assert_eq!(
            Continuum::new(Variant::default(), &[]).err(),
            Some(ContinuumError::NoServers)
        );
    }

    #[test]
    fn libmemcached_reads_port_zero_and_no_host_as_its_defaults() {
        let given = Continuum::new(Variant::Libmemcached, &[("", 0), ("b", 1)]).expect("ring");
        let spelled =
            Continuum::new(Variant::Libmemcached, &[("localhost", 11211), ("b", 1)]).expect("ring");
        assert_eq!(given.points, spelled.points);
    }
}
