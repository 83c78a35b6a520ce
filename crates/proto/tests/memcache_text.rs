//! Memcache text protocol tests: table-driven reply summaries, every-prefix
//! truncation, pipelining, malformed input, exact encoder bytes and the cold
//! parsers.

use kvbench_proto::memcache_text::{
    encode_delete, encode_get, encode_replace_with, encode_set, encode_set_extend, encode_set_with,
    encode_stats, parse_reply, parse_stats, parse_values, McReply, McReplyKind as K,
};
use kvbench_proto::DecodeError;

/// (input, kind, items, payload_bytes); consumed is always the full input.
const VALID: &[(&[u8], K, usize, usize)] = &[
    (b"END\r\n", K::Miss, 0, 0),
    (b"VALUE k 0 3\r\nabc\r\nEND\r\n", K::Values, 1, 3),
    (b"VALUE k 42 0\r\n\r\nEND\r\n", K::Values, 1, 0),
    (
        b"VALUE k 1 11\r\nab\r\nEND\r\nxy\r\nEND\r\n",
        K::Values,
        1,
        11,
    ),
    (
        b"VALUE a 0 2 99\r\nxy\r\nVALUE b 4294967295 3 100\r\n\r\n\r\r\nEND\r\n",
        K::Values,
        2,
        5,
    ),
    (b"STORED\r\n", K::Stored, 0, 0),
    (b"NOT_STORED\r\n", K::NotStored, 0, 0),
    (b"EXISTS\r\n", K::Exists, 0, 0),
    (b"NOT_FOUND\r\n", K::NotFound, 0, 0),
    (b"DELETED\r\n", K::Deleted, 0, 0),
    (b"TOUCHED\r\n", K::Touched, 0, 0),
    (b"OK\r\n", K::Ok, 0, 0),
    (b"ERROR\r\n", K::Error, 0, 0),
    (b"ERROR unknown command\r\n", K::Error, 0, 0),
    (b"CLIENT_ERROR bad data chunk\r\n", K::ClientError, 0, 0),
    (
        b"SERVER_ERROR out of memory storing object\r\n",
        K::ServerError,
        0,
        0,
    ),
    (b"VERSION 1.6.21\r\n", K::Version, 0, 0),
    (
        b"STAT pid 1\r\nSTAT version 1.6.21\r\nSTAT empty \r\nEND\r\n",
        K::Stats,
        3,
        0,
    ),
];

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn table_every_reply_type() {
    for &(input, kind, items, payload_bytes) in VALID {
        let want = McReply {
            kind,
            items,
            payload_bytes,
            consumed: input.len(),
        };
        assert_eq!(
            parse_reply(input),
            Ok(Some(want)),
            "input {:?}",
            show(input)
        );
    }
}

#[test]
fn every_prefix_is_incomplete() {
    for &(input, ..) in VALID {
        for i in 0..input.len() {
            assert_eq!(
                parse_reply(&input[..i]),
                Ok(None),
                "prefix {i} of {:?}",
                show(input)
            );
        }
        assert_eq!(parse_reply(input).unwrap().unwrap().consumed, input.len());
    }
}

#[test]
fn pipelined_replies_parse_in_sequence() {
    let mut buf = Vec::new();
    for &(input, ..) in VALID {
        buf.extend_from_slice(input);
    }
    let mut pos = 0;
    for &(input, kind, items, payload) in VALID {
        let r = parse_reply(&buf[pos..]).unwrap().unwrap();
        assert_eq!((r.kind, r.items, r.payload_bytes), (kind, items, payload));
        assert_eq!(r.consumed, input.len(), "input {:?}", show(input));
        pos += r.consumed;
    }
    assert_eq!(pos, buf.len());
    assert_eq!(parse_reply(&buf[pos..]), Ok(None));
}

#[test]
fn malformed_input_is_rejected() {
    let p = DecodeError::Protocol;
    let cases: &[(&[u8], DecodeError)] = &[
        (b"VALUE k 0 3\r\nabcd\r\nEND\r\n", p),
        (b"VALUE k 0 3\r\nab\r\nEND\r\n", p),
        (b"VALUE k 0 3\r\nabc\r\nGARBAGE\r\n", p),
        (b"VALUE k 0 3\r\nabc\r\nSTORED\r\n", p),
        (b"VALUE k 0\r\n", p),
        (b"VALUE k x 3\r\n", p),
        (b"VALUE k 0 -3\r\n", p),
        (b"VALUE k 4294967296 1\r\n", p),
        (b"VALUE k 0 1 2 3\r\n", p),
        (b"VALUE k 0 1 cas\r\n", p),
        (b"VALUE k 0 536870913\r\n", DecodeError::TooLarge),
        (
            b"VALUE k 0 99999999999999999999999\r\n",
            DecodeError::TooLarge,
        ),
        (b"STAT pid 1\r\nVALUE k 0 1\r\n", p),
        (b"STAT \r\nEND\r\n", p),
        (b"hello world\r\n", p),
        (b"STOREDX\r\n", p),
        (b"ERRORS\r\n", p),
        (b"42\r\n", p),
        (b"\r\n", p),
        (b"END\n", p),
        (b"STORED\rX\n", p),
    ];
    for &(input, err) in cases {
        assert_eq!(parse_reply(input), Err(err), "input {:?}", show(input));
    }
    let mut long = vec![b'a'; 70 * 1024];
    long.extend_from_slice(b"\r\n");
    assert_eq!(parse_reply(&long), Err(DecodeError::TooLarge));
    assert_eq!(parse_values(b"STORED\r\n"), Err(p));
    assert_eq!(parse_stats(b"ERROR\r\n"), Err(p));
}

#[test]
fn encoders_exact_bytes() {
    let mut buf = Vec::new();
    encode_get(&mut buf, b"user:1");
    encode_delete(&mut buf, b"user:2");
    encode_stats(&mut buf, None);
    encode_stats(&mut buf, Some("settings"));
    assert_eq!(
        buf,
        b"get user:1\r\ndelete user:2\r\nstats\r\nstats settings\r\n"
    );

    buf.clear();
    encode_set(&mut buf, b"k", 5, 0, b"a\r\nb");
    assert_eq!(buf, b"set k 5 0 4\r\na\r\nb\r\n");

    buf.clear();
    encode_set_with(&mut buf, b"key", 0, 3600, 6, |d| {
        assert_eq!(d.len(), 6);
        d.copy_from_slice(b"xxxxxx");
    });
    encode_replace_with(&mut buf, b"key", u32::MAX, 0, 0, |d| assert!(d.is_empty()));
    assert_eq!(
        buf,
        b"set key 0 3600 6\r\nxxxxxx\r\nreplace key 4294967295 0 0\r\n\r\n"
    );

    // Appended data: the same bytes as a filled set; too much is cut and
    // too little padded, so the announced length always holds.
    let mut filled = Vec::new();
    encode_set_with(&mut filled, b"k", 1, 2, 3, |d| d.copy_from_slice(b"abc"));
    buf.clear();
    encode_set_extend(&mut buf, b"k", 1, 2, 3, |b| b.extend_from_slice(b"abc"));
    assert_eq!(buf, filled);
    buf.clear();
    encode_set_extend(&mut buf, b"k", 1, 2, 3, |b| b.extend_from_slice(b"abcdef"));
    assert_eq!(buf, filled);
    buf.clear();
    encode_set_extend(&mut buf, b"k", 0, 0, 2, |_| {});
    assert_eq!(buf, b"set k 0 0 2\r\n\0\0\r\n");

    // No flags, no expiry: the header's constant path, at every length
    // class of its decimal (1 to 3 digits, then the long way).
    for len in [0usize, 9, 10, 99, 100, 999, 1000, 65_536] {
        for (flags, exptime) in [(0, 0), (0, 1), (1, 0)] {
            buf.clear();
            encode_set_extend(&mut buf, b"k", flags, exptime, len, |b| {
                b.resize(b.len() + len, b'v')
            });
            let mut want = format!("set k {flags} {exptime} {len}\r\n").into_bytes();
            want.resize(want.len() + len, b'v');
            want.extend_from_slice(b"\r\n");
            assert_eq!(buf, want, "{flags} {exptime} {len}");
        }
    }
}

#[test]
fn parse_values_round_trip() {
    let items: Vec<(Vec<u8>, u32, Vec<u8>)> = vec![
        (b"a".to_vec(), 0, b"hello".to_vec()),
        (b"b".to_vec(), 7, b"x\r\nEND\r\n".to_vec()),
        (b"c".to_vec(), u32::MAX, Vec::new()),
    ];
    let mut buf = Vec::new();
    for (k, f, d) in &items {
        buf.extend_from_slice(format!("VALUE {} {} {}\r\n", show(k), f, d.len()).as_bytes());
        buf.extend_from_slice(d);
        buf.extend_from_slice(b"\r\n");
    }
    buf.extend_from_slice(b"END\r\nSTORED\r\n");
    let total = buf.len() - b"STORED\r\n".len();
    assert_eq!(parse_values(&buf), Ok(Some((items, total))));
    assert_eq!(parse_values(&buf[..total - 1]), Ok(None));
    assert_eq!(parse_values(b"END\r\n"), Ok(Some((Vec::new(), 5))));
    let r = parse_reply(&buf).unwrap().unwrap();
    assert_eq!(
        (r.kind, r.items, r.payload_bytes, r.consumed),
        (K::Values, 3, 13, total)
    );
}

#[test]
fn parse_stats_round_trip() {
    let buf = b"STAT pid 1234\r\nSTAT version 1.6.21 extra\r\nSTAT evictions on\r\nEND\r\n";
    let want = vec![
        ("pid".to_string(), "1234".to_string()),
        ("version".to_string(), "1.6.21 extra".to_string()),
        ("evictions".to_string(), "on".to_string()),
    ];
    assert_eq!(parse_stats(buf), Ok(Some((want, buf.len()))));
    for i in 0..buf.len() {
        assert_eq!(parse_stats(&buf[..i]), Ok(None));
    }
    // An empty stats response is a bare END (parse_reply calls that a Miss).
    assert_eq!(parse_stats(b"END\r\n"), Ok(Some((Vec::new(), 5))));
    assert_eq!(parse_reply(b"END\r\n").unwrap().unwrap().kind, K::Miss);
}

#[test]
fn random_bytes_never_panic() {
    let words: &[&[u8]] = &[
        b"VALUE ", b"END", b"STAT ", b"STORED", b"\r\n", b"\r", b"\n", b" ", b"k", b"0", b"3",
        b"abc", b"ERROR",
    ];
    let mut s: u64 = 0x2545_f491_4f6c_dd1d;
    let mut buf = Vec::new();
    for _ in 0..20_000 {
        buf.clear();
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        for _ in 0..(s % 12) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            buf.extend_from_slice(words[(s % words.len() as u64) as usize]);
        }
        if let Ok(Some(r)) = parse_reply(&buf) {
            assert!(r.consumed <= buf.len());
            if r.kind == K::Values || r.kind == K::Miss {
                let (items, used) = parse_values(&buf).unwrap().unwrap();
                assert_eq!((items.len(), used), (r.items, r.consumed));
            }
        }
        let _ = parse_stats(&buf);
    }
}
