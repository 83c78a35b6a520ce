//! kvbench's ketama continuum against libmemcached itself: a small C program
//! built here against the system's libmemcached routes 100,000 keys per pool
//! with `memcached_generate_hash` (pure: no server runs, nothing is sent),
//! and every key must land on the same server in
//! [`Continuum`](kvbench_engine::route::ketama::Continuum).
//!
//! There is no reference to run for spymemcached (it is Java), so its
//! variant is checked against values derived by hand at the end.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kvbench_engine::route::ketama::{Continuum, Variant};
use kvbench_workload::keys::KeyNamer;

/// Sets behaviours the way pylibmc does (its table order puts `hash` before
/// `ketama`, and it adds servers only after the behaviours), so the
/// continuum is built with the final hash: libmemcached does not rebuild it
/// when only the hash changes. Then prints, for each stdin line, the index
/// of the server `memcached_generate_hash` picks for it.
const REFERENCE_C: &str = r#"
#define _GNU_SOURCE
#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(memcached_st *memc, memcached_return_t rc, const char *what) {
  if (rc != MEMCACHED_SUCCESS) {
    fprintf(stderr, "%s: %s\n", what, memcached_strerror(memc, rc));
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s default|md5 host:port...\n", argv[0]);
    return 2;
  }
  memcached_st *memc = memcached_create(NULL);
  if (memc == NULL) {
    fprintf(stderr, "memcached_create failed\n");
    return 1;
  }
  if (strcmp(argv[1], "md5") == 0) {
    check(memc, memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_MD5), "HASH");
  } else if (strcmp(argv[1], "default") != 0) {
    fprintf(stderr, "unknown hash %s\n", argv[1]);
    return 2;
  }
  check(memc, memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA, 1), "KETAMA");
  for (int i = 2; i < argc; i++) {
    char *colon = strrchr(argv[i], ':');
    if (colon == NULL) {
      fprintf(stderr, "no port in %s\n", argv[i]);
      return 2;
    }
    *colon = '\0';
    check(memc, memcached_server_add_with_weight(memc, argv[i], (in_port_t) atoi(colon + 1), 1),
          "memcached_server_add_with_weight");
  }
  for (int i = 2; i < argc; i++) {
    const memcached_instance_st *s = memcached_server_instance_by_position(memc, (uint32_t) (i - 2));
    if (s == NULL || strcmp(memcached_server_name(s), argv[i]) != 0) {
      fprintf(stderr, "server %d is not %s: the list was reordered\n", i - 2, argv[i]);
      return 1;
    }
  }
  if (memcached_behavior_get(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION)
          != MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA
      || memcached_behavior_get(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED) != 0) {
    fprintf(stderr, "not unweighted CONSISTENT_KETAMA\n");
    return 1;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, stdin)) != -1) {
    if (len > 0 && line[len - 1] == '\n') {
      len--;
    }
    printf("%u\n", memcached_generate_hash(memc, line, (size_t) len));
  }
  free(line);
  memcached_free(memc);
  return ferror(stdout) ? 1 : 0;
}
"#;

const SETUP_HINT: &str =
    "scripts/setup installs it (apt packages gcc and libmemcached-dev); run it, then this test again";

/// Builds the reference program into `dir`. Fails, never skips, when the
/// compiler or libmemcached's headers are missing: a silent skip would
/// report agreement nobody checked.
fn build_reference(dir: &Path) -> PathBuf {
    let header = Path::new("/usr/include/libmemcached/memcached.h");
    assert!(
        header.is_file(),
        "{} is missing (package libmemcached-dev): {SETUP_HINT}",
        header.display()
    );
    let source = dir.join("ketama_ref.c");
    std::fs::write(&source, REFERENCE_C).expect("write the C source");
    let binary = dir.join("ketama_ref");
    let out = match Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .arg("-lmemcached")
        .output()
    {
        Ok(out) => out,
        Err(e) => panic!("cannot run cc ({e}): {SETUP_HINT}"),
    };
    assert!(
        out.status.success(),
        "cc could not build the libmemcached reference ({}): {SETUP_HINT}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    binary
}

/// SplitMix64: a fixed, seedable stream for the arbitrary keys.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// 100,000 keys, one per line (so none contains `\n`): mostly what YCSB's
/// memcached binding sends (`usertable-` + a YCSB key, hashed and ordered,
/// numbers of 1 to 20 digits), then bare YCSB keys, the empty key, and
/// arbitrary bytes, including bytes 0x80 and up that libmemcached's
/// one-at-a-time hash reads as negative `char`s.
fn keys() -> Vec<Vec<u8>> {
    let mut keys = Vec::with_capacity(100_000);
    let hashed = KeyNamer::default().with_prefix("usertable-user");
    for n in 0..50_000 {
        keys.push(hashed.key(n).into_bytes());
    }
    let ordered = KeyNamer::new(true, 1).with_prefix("usertable-user");
    for n in 0..20_000 {
        keys.push(ordered.key(n).into_bytes());
    }
    let mut rng = SplitMix(0x6b65_7461_6d61);
    for _ in 0..10_000 {
        // Numbers of every length up to 19 digits.
        let digits = 1 + (rng.next() % 19) as u32;
        let n = rng.next() % 10u64.pow(digits);
        keys.push(ordered.key(n).into_bytes());
    }
    let padded = KeyNamer::new(false, 20).with_prefix("usertable-user");
    for n in 0..5_000 {
        keys.push(padded.key(n).into_bytes());
    }
    let bare = KeyNamer::default();
    for n in 50_000..55_000 {
        keys.push(bare.key(n).into_bytes());
    }
    keys.push(Vec::new());
    while keys.len() < 100_000 {
        let len = 1 + (rng.next() % 250) as usize;
        let key: Vec<u8> = (0..len)
            .map(|_| rng.next() as u8)
            .map(|b| if b == b'\n' { b'x' } else { b })
            .collect();
        keys.push(key);
    }
    keys
}

/// Writes `keys` one per line, as the reference reads them.
fn write_keys(path: &Path, keys: &[Vec<u8>]) {
    let mut text = Vec::new();
    for key in keys {
        text.extend_from_slice(key);
        text.push(b'\n');
    }
    std::fs::write(path, text).expect("write keys");
}

/// The server index libmemcached picks for each key in `input`.
fn reference_routes(binary: &Path, input: &Path, hash: &str, pool: &[(&str, u16)]) -> Vec<usize> {
    let out = Command::new(binary)
        .arg(hash)
        .args(pool.iter().map(|(host, port)| format!("{host}:{port}")))
        .stdin(std::fs::File::open(input).expect("open keys"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run the libmemcached reference");
    assert!(
        out.status.success(),
        "libmemcached reference failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("reference prints digits")
        .lines()
        .map(|line| line.parse().expect("a server index"))
        .collect()
}

fn pools() -> Vec<Vec<(&'static str, u16)>> {
    vec![
        vec![("127.0.0.1", 21001)],
        vec![("127.0.0.1", 21001), ("127.0.0.1", 21002)],
        vec![
            ("127.0.0.1", 21001),
            ("127.0.0.1", 21002),
            ("127.0.0.1", 21003),
        ],
        vec![
            ("127.0.0.1", 21001),
            ("127.0.0.1", 21002),
            ("127.0.0.1", 21003),
            ("127.0.0.1", 21004),
            ("127.0.0.1", 21005),
        ],
        // The default port is left out of libmemcached's point strings.
        vec![
            ("127.0.0.1", 11211),
            ("127.0.0.1", 11212),
            ("127.0.0.1", 21003),
        ],
        // Hosts are hashed as written, names included.
        vec![
            ("cache-a.example", 11211),
            ("cache-b.example", 11211),
            ("10.1.2.3", 11300),
        ],
    ]
}

fn check_against_libmemcached(variant: Variant, hash: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let binary = build_reference(dir.path());
    let keys = keys();
    let input = dir.path().join("keys");
    write_keys(&input, &keys);
    let mut report = String::new();
    for pool in pools() {
        let want = reference_routes(&binary, &input, hash, &pool);
        assert_eq!(
            want.len(),
            keys.len(),
            "one answer per key from libmemcached"
        );
        let ring = Continuum::new(variant, &pool).expect("ring");
        let mut counts = vec![0usize; pool.len()];
        for (key, &want) in keys.iter().zip(&want) {
            let got = ring.server_for(key);
            assert_eq!(
                got,
                want,
                "kvbench's {variant:?} continuum disagrees with libmemcached ({hash} hash) on pool \
                 {pool:?}: first mismatching key \"{}\" ({} bytes): kvbench says server {got}, \
                 libmemcached server {want}",
                key.escape_ascii(),
                key.len()
            );
            counts[got] += 1;
        }
        let _ = writeln!(
            report,
            "{pool:?}: {} keys agree, per server {counts:?}",
            keys.len()
        );
    }
    eprint!("{report}");
}

#[test]
fn libmemcached_variant_routes_every_key_as_libmemcached_ketama_does() {
    check_against_libmemcached(Variant::Libmemcached, "default");
}

#[test]
fn libmemcached_md5_variant_routes_every_key_as_libmemcached_ketama_md5_does() {
    check_against_libmemcached(Variant::LibmemcachedMd5, "md5");
}

/// spymemcached's `KetamaNodeLocator` with `KETAMA_HASH`, worked by hand
/// from its source (KetamaNodeLocator, KetamaNodeKeyFormatter,
/// DefaultHashAlgorithm) for `new InetSocketAddress("127.0.0.1", 21001)` and
/// `…21002`, with nothing but md5sum:
///
/// - Node key: `String.valueOf(addr)` is `/127.0.0.1:21001` (an IP literal
///   carries no host name), and the formatter cuts the leading `/`. Points:
///   for N in 0..40, md5("127.0.0.1:21001-N") split into four words, each
///   read little-endian. All 320:
///   `for p in 21001 21002; do for n in $(seq 0 39); do printf
///   '127.0.0.1:%s-%s' $p $n | md5sum; done; done`, byte-swapped per word.
/// - Lowest point 1921044 (0x001d5014, word 1 of md5("127.0.0.1:21001-1") =
///   f5649c77 14501d00 …): server 0. Highest 4294817090 (0xfffdb542, word 0
///   of md5("127.0.0.1:21002-2") = 42b5fdff …): server 1.
/// - Key hash: first word of md5(key), little-endian.
///   - `usertable-user0`: md5 dae9d01e… → 517007834. The point below it is
///     510983111 (server 0), the ceiling 548719665 (word 1 of
///     md5("127.0.0.1:21002-25") = 0c6251fd 31ccb420 …): server 1.
///   - `usertable-user1`: md5 3ffed9cb… → 3420061247; ceiling 3429116494
///     (word 0 of md5("127.0.0.1:21002-5")): server 1.
///   - `usertable-user6284781860667377211`: md5 c048a121… → 564218048;
///     ceiling 568207216 (word 0 of md5("127.0.0.1:21001-17") = 7027de21 …):
///     server 0.
///   - `bar`: md5 37b51d19… → 421377335; ceiling 427036669 (word 0 of
///     md5("127.0.0.1:21001-39") = fd0f7419 …): server 0.
///   - `usertable-user47524`: md5 ea2fffff… → 4294914026, above the highest
///     point, so `ceilingKey` is null and `firstKey` answers: server 0 (the
///     highest point's server is 1).
/// - Port 11211 stays in the node key (libmemcached would drop it): with
///   11211 and 11212, `usertable-user0` (517007834) reaches 523439446, word 2
///   of md5("127.0.0.1:11211-1") = 85230bdf 21a84e7f 560d331f …: server 0.
/// - The same address listed twice: `TreeMap.put` of the second node
///   replaces the first on every point, so every key goes to index 1.
#[test]
fn spymemcached_variant_matches_values_worked_from_its_source() {
    let pool = [("127.0.0.1", 21001), ("127.0.0.1", 21002)];
    let ring = Continuum::new(Variant::Spymemcached, &pool).expect("ring");
    let cases: [(&str, usize); 5] = [
        ("usertable-user0", 1),
        ("usertable-user1", 1),
        ("usertable-user6284781860667377211", 0),
        ("bar", 0),
        ("usertable-user47524", 0),
    ];
    for (key, want) in cases {
        assert_eq!(ring.server_for(key.as_bytes()), want, "{key}");
    }

    let default_port = [("127.0.0.1", 11211), ("127.0.0.1", 11212)];
    let ring = Continuum::new(Variant::Spymemcached, &default_port).expect("ring");
    assert_eq!(ring.server_for(b"usertable-user0"), 0);

    let twice = [("127.0.0.1", 21001), ("127.0.0.1", 21001)];
    let ring = Continuum::new(Variant::Spymemcached, &twice).expect("ring");
    for i in 0..1000 {
        assert_eq!(ring.server_for(format!("usertable-user{i}").as_bytes()), 1);
    }
}
