//! RESP codec tests: table-driven reply summaries, every-prefix truncation,
//! pipelining, malformed input, exact encoder bytes and owned-value round trips.

use kvbench_proto::resp::{
    encode_command, parse_reply, parse_value, write_array_header, write_bulk, write_bulk_extend,
    write_bulk_with, Reply, ReplyKind as K, Value, GET_PREFIX, MAX_DEPTH, SET_PREFIX,
};
use kvbench_proto::DecodeError;

/// (input, kind, elements, payload_bytes); consumed is always the full input.
const VALID: &[(&[u8], K, usize, usize)] = &[
    (b"+OK\r\n", K::Status, 0, 2),
    (b"+\r\n", K::Status, 0, 0),
    (b"-ERR unknown command\r\n", K::Error, 0, 19),
    (b":0\r\n", K::Integer, 0, 0),
    (b":-2\r\n", K::Integer, 0, 0),
    (b":+7\r\n", K::Integer, 0, 0),
    (b":9223372036854775807\r\n", K::Integer, 0, 0),
    (b":-9223372036854775808\r\n", K::Integer, 0, 0),
    (b"$5\r\nhello\r\n", K::Bulk, 0, 5),
    (b"$0\r\n\r\n", K::Bulk, 0, 0),
    (b"$8\r\na\r\nb\r\n\r\n\r\n", K::Bulk, 0, 8),
    (b"$-1\r\n", K::Nil, 0, 0),
    (b"*-1\r\n", K::Nil, 0, 0),
    (b"_\r\n", K::Nil, 0, 0),
    (b"*0\r\n", K::Array, 0, 0),
    (b"*2\r\n$3\r\nfoo\r\n$-1\r\n", K::Array, 2, 3),
    (b"*3\r\n:1\r\n+ab\r\n$2\r\nxy\r\n", K::Array, 3, 4),
    (b"*2\r\n*2\r\n:1\r\n$1\r\na\r\n*0\r\n", K::Array, 2, 1),
    (b"*1\r\n*1\r\n*1\r\n*-1\r\n", K::Array, 1, 0),
    (b"*2\r\n*1\r\n$2\r\nab\r\n$3\r\ncde\r\n", K::Array, 2, 5),
    (b"%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n$2\r\nzz\r\n", K::Map, 4, 4),
    (b"%0\r\n", K::Map, 0, 0),
    (b"~2\r\n+a\r\n+b\r\n", K::Set, 2, 2),
    (
        b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nx\r\n",
        K::Push,
        3,
        10,
    ),
    (b"#t\r\n", K::Boolean, 0, 0),
    (b"#f\r\n", K::Boolean, 0, 0),
    (b",3.25\r\n", K::Double, 0, 0),
    (b",-inf\r\n", K::Double, 0, 0),
    (b",nan\r\n", K::Double, 0, 0),
    (
        b"(3492890328409238509324850943850943825024385\r\n",
        K::BigNumber,
        0,
        0,
    ),
    (b"=15\r\ntxt:Some string\r\n", K::Verbatim, 0, 15),
    (b"!21\r\nSYNTAX invalid syntax\r\n", K::Error, 0, 21),
    // Attributes are skipped: neither kind, elements nor payload.
    (
        b"|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*1\r\n:2\r\n",
        K::Array,
        1,
        0,
    ),
    (b"|0\r\n+OK\r\n", K::Status, 0, 2),
    (b"*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n$1\r\nz\r\n", K::Array, 2, 1),
];

fn check(input: &[u8], kind: K, elements: usize, payload_bytes: usize) {
    let want = Reply {
        kind,
        elements,
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

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn table_every_reply_type() {
    for &(input, kind, elements, payload) in VALID {
        check(input, kind, elements, payload);
    }
}

#[test]
fn trailing_bytes_are_not_consumed() {
    for &(input, kind, elements, payload) in VALID {
        let mut buf = input.to_vec();
        buf.extend_from_slice(b"+NEXT\r\n");
        let r = parse_reply(&buf).unwrap().unwrap();
        assert_eq!(
            (r.kind, r.elements, r.payload_bytes),
            (kind, elements, payload)
        );
        assert_eq!(r.consumed, input.len());
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
            assert_eq!(parse_value(&input[..i]), Ok(None));
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
    for &(input, kind, elements, payload) in VALID {
        let r = parse_reply(&buf[pos..]).unwrap().unwrap();
        assert_eq!(
            (r.kind, r.elements, r.payload_bytes),
            (kind, elements, payload)
        );
        assert_eq!(r.consumed, input.len());
        let (_, used) = parse_value(&buf[pos..]).unwrap().unwrap();
        assert_eq!(used, input.len());
        pos += r.consumed;
    }
    assert_eq!(pos, buf.len());
    assert_eq!(parse_reply(&buf[pos..]), Ok(None));

    // Every prefix of the whole pipeline yields either nothing or the first reply.
    let first = VALID[0].0.len();
    for i in 0..buf.len() {
        match parse_reply(&buf[..i]) {
            Ok(None) => assert!(i < first),
            Ok(Some(r)) => assert_eq!(r.consumed, first),
            Err(e) => panic!("prefix {i}: {e}"),
        }
    }
}

#[test]
fn malformed_input_is_rejected() {
    let p = DecodeError::Protocol;
    let cases: &[(&[u8], DecodeError)] = &[
        (b"$-2\r\n", p),
        (b"$-10\r\n", p),
        (b"*-2\r\n", p),
        (b"$-0\r\n", p),
        (b"%-1\r\n", p),
        (b"!-1\r\n", p),
        (b"$3\r\nab\r\n", p),
        (b"$3\r\nabcd\r\n", p),
        (b"*1\r\n:x\r\n", p),
        (b":\r\n", p),
        (b":1x\r\n", p),
        (b":99999999999999999999\r\n", p),
        (b"$\r\n", p),
        (b"$+3\r\nabc\r\n", p),
        (b"$3x\r\nabc\r\n", p),
        (b"+OK\n", p),
        (b"$3\rabc\r\n", p),
        (b"*1\r\n+OK\n", p),
        (b"?3\r\n", p),
        (b"hello\r\n", p),
        (b"\r\n", p),
        (b"*?\r\n", p),
        (b"_x\r\n", p),
        (b"#x\r\n", p),
        (b",\r\n", p),
        (b"(\r\n", p),
        (b",abc\r\n", p),
        (b",1..2\r\n", p),
        (b"$536870913\r\n", DecodeError::TooLarge),
        (b"*99999999999999999999999\r\n", DecodeError::TooLarge),
        (b"$99999999999", DecodeError::TooLarge),
    ];
    for &(input, err) in cases {
        assert_eq!(parse_reply(input), Err(err), "input {:?}", show(input));
        assert_eq!(parse_value(input), Err(err), "input {:?}", show(input));
    }
    // The maximum length itself is fine (just incomplete).
    assert_eq!(parse_reply(b"$536870912\r\nab"), Ok(None));
}

#[test]
fn unterminated_line_is_bounded() {
    let mut buf = b"+".to_vec();
    buf.resize(70 * 1024, b'a');
    assert_eq!(parse_reply(&buf), Err(DecodeError::TooLarge));
}

fn nested(levels: usize) -> Vec<u8> {
    let mut buf = b"*1\r\n".repeat(levels);
    buf.extend_from_slice(b":1\r\n");
    buf
}

#[test]
fn nesting_depth_is_bounded() {
    let ok = nested(MAX_DEPTH);
    let r = parse_reply(&ok).unwrap().unwrap();
    assert_eq!((r.kind, r.elements, r.consumed), (K::Array, 1, ok.len()));
    assert!(parse_value(&ok).unwrap().is_some());
    // An empty aggregate at the deepest level opens no new level.
    let mut ok_empty = b"*1\r\n".repeat(MAX_DEPTH);
    ok_empty.extend_from_slice(b"*0\r\n");
    assert!(parse_reply(&ok_empty).unwrap().is_some());
    assert!(parse_value(&ok_empty).unwrap().is_some());

    let deep = nested(MAX_DEPTH + 1);
    assert_eq!(parse_reply(&deep), Err(DecodeError::NestingTooDeep));
    assert_eq!(parse_value(&deep), Err(DecodeError::NestingTooDeep));
    let hostile = b"*1\r\n".repeat(100_000);
    assert_eq!(parse_reply(&hostile), Err(DecodeError::NestingTooDeep));
}

#[test]
fn random_bytes_never_panic() {
    // Tiny xorshift so the test needs no dependency; alphabet biased towards
    // RESP syntax so parsing gets past the first byte often.
    let alphabet = b"*$:+-_#,(=!%~>|\r\n0123456789-?abt";
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut buf = Vec::new();
    for _ in 0..20_000 {
        buf.clear();
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let len = (s % 24) as usize;
        for _ in 0..len {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            buf.push(alphabet[(s % alphabet.len() as u64) as usize]);
        }
        let a = parse_reply(&buf);
        let b = parse_value(&buf);
        if let Ok(Some(r)) = a {
            assert!(r.consumed <= buf.len());
            assert_eq!(
                b.map(|o| o.map(|(_, n)| n)),
                Ok(Some(r.consumed)),
                "{:?}",
                show(&buf)
            );
        }
    }
}

#[test]
fn encoders_exact_bytes() {
    let mut buf = Vec::new();
    encode_command(&mut buf, &[b"SET", b"key:1", b"v"]);
    assert_eq!(buf, b"*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$1\r\nv\r\n");

    // The pre-encoded prefixes are exactly what the general encoder writes.
    for (prefix, args) in [
        (GET_PREFIX, &[&b"GET"[..], b"k"][..]),
        (SET_PREFIX, &[b"SET", b"k", b"v"]),
    ] {
        buf.clear();
        encode_command(&mut buf, args);
        let mut fast = prefix.to_vec();
        for a in &args[1..] {
            write_bulk(&mut fast, a);
        }
        assert_eq!(fast, buf);
    }

    buf.clear();
    encode_command(&mut buf, &[b"PING"]);
    encode_command(&mut buf, &[]);
    assert_eq!(buf, b"*1\r\n$4\r\nPING\r\n*0\r\n");

    buf.clear();
    write_array_header(&mut buf, 12);
    write_bulk(&mut buf, b"");
    write_bulk(&mut buf, b"a\r\nb");
    assert_eq!(buf, b"*12\r\n$0\r\n\r\n$4\r\na\r\nb\r\n");

    buf.clear();
    buf.extend_from_slice(b"prefix");
    write_bulk_with(&mut buf, 10, |d| {
        assert_eq!(d.len(), 10);
        for (i, b) in d.iter_mut().enumerate() {
            *b = b'0' + i as u8;
        }
    });
    assert_eq!(buf, b"prefix$10\r\n0123456789\r\n");

    buf.clear();
    write_bulk_with(&mut buf, 0, |d| assert!(d.is_empty()));
    assert_eq!(buf, b"$0\r\n\r\n");

    // Appended data: exactly as announced, and the framing holds when the
    // closure appends too much or too little.
    buf.clear();
    write_bulk_extend(&mut buf, 4, |b| b.extend_from_slice(b"abcd"));
    assert_eq!(buf, b"$4\r\nabcd\r\n");
    buf.clear();
    write_bulk_extend(&mut buf, 4, |b| b.extend_from_slice(b"abcdef"));
    assert_eq!(buf, b"$4\r\nabcd\r\n");
    buf.clear();
    write_bulk_extend(&mut buf, 4, |b| b.push(b'a'));
    assert_eq!(buf, b"$4\r\na\0\0\0\r\n");
}

#[test]
fn encoded_commands_parse_back() {
    let mut buf = Vec::new();
    let args: [&[u8]; 4] = [b"MSET", b"k", b"\r\n*1\r\n", b""];
    encode_command(&mut buf, &args);
    let r = parse_reply(&buf).unwrap().unwrap();
    assert_eq!((r.kind, r.elements, r.consumed), (K::Array, 4, buf.len()));
    assert_eq!(r.payload_bytes, args.iter().map(|a| a.len()).sum::<usize>());
    let (v, _) = parse_value(&buf).unwrap().unwrap();
    let want = Value::Array(args.iter().map(|a| Value::Bulk(a.to_vec())).collect());
    assert_eq!(v, want);
}

#[test]
fn parse_value_round_trips() {
    let b = |s: &str| Value::Bulk(s.as_bytes().to_vec());
    let cases: Vec<(&[u8], Value)> = vec![
        (b"+OK\r\n", Value::Status("OK".into())),
        (b"-WRONGTYPE x\r\n", Value::Error("WRONGTYPE x".into())),
        (b"!5\r\noops!\r\n", Value::Error("oops!".into())),
        (b":-1\r\n", Value::Integer(-1)),
        (b":-9223372036854775808\r\n", Value::Integer(i64::MIN)),
        (b"$3\r\nabc\r\n", b("abc")),
        (b"$-1\r\n", Value::Nil),
        (b"*-1\r\n", Value::Nil),
        (b"_\r\n", Value::Nil),
        (b"#t\r\n", Value::Boolean(true)),
        (b"#f\r\n", Value::Boolean(false)),
        (b",1.5e3\r\n", Value::Double(1500.0)),
        (b",-inf\r\n", Value::Double(f64::NEG_INFINITY)),
        (
            b"(123456789012345678901234567890\r\n",
            Value::BigNumber("123456789012345678901234567890".into()),
        ),
        (
            b"=10\r\ntxt:a\r\nb=1\r\n",
            Value::Verbatim {
                format: "txt".into(),
                data: b"a\r\nb=1".to_vec(),
            },
        ),
        (
            b"=2\r\nab\r\n",
            Value::Verbatim {
                format: String::new(),
                data: b"ab".to_vec(),
            },
        ),
        (
            b"*4\r\n$1\r\nf\r\n$1\r\nv\r\n*1\r\n:3\r\n*0\r\n",
            Value::Array(vec![
                b("f"),
                b("v"),
                Value::Array(vec![Value::Integer(3)]),
                Value::Array(vec![]),
            ]),
        ),
        (
            b"%2\r\n$5\r\nfield\r\n$5\r\nvalue\r\n+n\r\n_\r\n",
            Value::Map(vec![
                (b("field"), b("value")),
                (Value::Status("n".into()), Value::Nil),
            ]),
        ),
        (b"~1\r\n:5\r\n", Value::Set(vec![Value::Integer(5)])),
        (
            b">2\r\n+a\r\n+b\r\n",
            Value::Push(vec![Value::Status("a".into()), Value::Status("b".into())]),
        ),
        (b"|1\r\n+a\r\n+b\r\n|0\r\n:7\r\n", Value::Integer(7)),
        (
            b"*1\r\n|1\r\n+a\r\n+b\r\n:7\r\n",
            Value::Array(vec![Value::Integer(7)]),
        ),
    ];
    for (input, want) in cases {
        let (v, used) = parse_value(input).unwrap().unwrap();
        assert_eq!(v, want, "input {:?}", show(input));
        assert_eq!(used, input.len());
    }
    let (v, _) = parse_value(b",nan\r\n").unwrap().unwrap();
    assert!(matches!(v, Value::Double(d) if d.is_nan()));
    assert_eq!(parse_value(b",abc\r\n"), Err(DecodeError::Protocol));
}

#[test]
fn value_accessors() {
    let (v, _) = parse_value(b"=7\r\ntxt:a:b\r\n").unwrap().unwrap();
    assert_eq!(v.as_bytes(), Some(&b"a:b"[..]));
    assert_eq!(Value::Bulk(b"42".to_vec()).as_i64(), Some(42));
    assert_eq!(Value::Integer(-2).as_i64(), Some(-2));
    assert_eq!(Value::Nil.as_bytes(), None);
}

/// The scalar fast path (`+`, `$` at the top) agrees with the general loop,
/// which reads the same value nested in a one-element array: complete,
/// truncated at every byte, or malformed.
#[test]
fn top_level_scalars_read_as_the_same_values_nested() {
    let cases: &[&[u8]] = &[
        b"+OK\r\n",
        b"+\r\n",
        b"$0\r\n\r\n",
        b"$-1\r\n",
        b"$5\r\nhello\r\n",
        b"$5\r\nhelloXY",
        b"$-2\r\n",
        b"$x\r\n",
        b"+a\rb\r\n",
    ];
    for case in cases {
        for end in 0..=case.len() {
            let bare = &case[..end];
            let mut nested = b"*1\r\n".to_vec();
            nested.extend_from_slice(bare);
            let got = parse_reply(bare);
            let want = parse_reply(&nested);
            match (got, want) {
                (Ok(Some(r)), Ok(Some(n))) => {
                    assert_eq!(n.kind, K::Array, "{bare:?}");
                    assert_eq!(n.elements, 1, "{bare:?}");
                    assert_eq!(r.elements, 0, "{bare:?}");
                    assert_eq!(r.payload_bytes, n.payload_bytes, "{bare:?}");
                    assert_eq!(r.consumed + 4, n.consumed, "{bare:?}");
                }
                (Ok(None), Ok(None)) => {}
                (Err(a), Err(b)) => assert_eq!(a, b, "{bare:?}"),
                (a, b) => panic!("{bare:?}: top level {a:?}, nested {b:?}"),
            }
        }
    }
    // The kinds the nested value cannot show.
    let kind = |b: &[u8]| parse_reply(b).unwrap().unwrap().kind;
    assert_eq!(kind(b"+OK\r\n"), K::Status);
    assert_eq!(kind(b"$-1\r\n"), K::Nil);
    assert_eq!(kind(b"$1\r\nx\r\n"), K::Bulk);
}
