//! Fuzzing kvbench's parsers on stable Rust, with proptest: generators of
//! well-formed inputs (RESP replies, memcache replies, YCSB property files,
//! experiment files), the mutations that turn them into the inputs a broken
//! or hostile peer or a careless hand produces (truncated, a byte changed,
//! bytes inserted, lengths made huge), and an allocation meter that bounds
//! what a parser may allocate per byte of input.
//!
//! The properties themselves live with the code they check: this crate's
//! `tests/parsers.rs` for the wire codecs and the property parser, and the
//! experiment module's tests in the kvbench binary for experiment files.
//! `KVBENCH_FUZZ_CASES` sets the number of inputs per target (CI runs a few
//! thousand; `bench/fuzz/run` runs ten million).
#![deny(missing_docs)]

use kvbench_proto::resp::Value;
use proptest::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Aborts the process, printing the input, when one case runs longer than
/// its limit: a hang found by fuzzing must end the run with the input that
/// hangs (as the exponential redraw loop did), not stall it.
pub struct Watchdog {
    current: Mutex<Option<(Instant, String)>>,
}

/// The process's watchdog, started on first use with `limit` per case.
pub fn watchdog(limit: Duration) -> &'static Watchdog {
    static DOG: OnceLock<Watchdog> = OnceLock::new();
    DOG.get_or_init(|| {
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let Some(dog) = DOG.get() else { continue };
            let stuck = dog
                .current
                .lock()
                .map(|c| {
                    c.as_ref()
                        .filter(|(t, _)| t.elapsed() > limit)
                        .map(|(_, i)| i.clone())
                })
                .unwrap_or_default();
            if let Some(input) = stuck {
                eprintln!("fuzz: one input ran for more than {limit:?} (a hang): {input:?}");
                std::process::abort();
            }
        });
        Watchdog {
            current: Mutex::new(None),
        }
    })
}

impl Watchdog {
    /// A case with this input starts now.
    pub fn start(&self, input: &str) {
        if let Ok(mut c) = self.current.lock() {
            *c = Some((Instant::now(), input.to_string()));
        }
    }

    /// The case ended.
    pub fn done(&self) {
        if let Ok(mut c) = self.current.lock() {
            *c = None;
        }
    }
}

/// Inputs per target: `KVBENCH_FUZZ_CASES`, or `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("KVBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The proptest settings every target uses: `cases` inputs, no shrinking
/// time limit beyond proptest's own, and no regression files written into
/// the source tree (a failure found becomes a plain test by hand).
pub fn config(default_cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default_cases),
        failure_persistence: None,
        max_shrink_iters: 2048,
        ..ProptestConfig::default()
    }
}

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

/// A global allocator that counts the bytes each thread allocates (the
/// system allocator does the work). A test binary installs it with
/// `#[global_allocator] static METER: kvbench_fuzz::Meter = kvbench_fuzz::Meter;`
/// and wraps each call in [`allocated_by`].
pub struct Meter;

// SAFETY: every call is passed to the system allocator unchanged; the
// counter is a thread-local Cell with a const initialiser (no allocation,
// no destructor).
unsafe impl GlobalAlloc for Meter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + layout.size()));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + layout.size()));
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + new_size));
        System.realloc(ptr, layout, new_size)
    }
}

/// Runs `f` and returns its result with the bytes this thread allocated
/// meanwhile (every allocation and growth counted, frees not subtracted:
/// an upper bound on what it held). Counts only with [`Meter`] installed.
pub fn allocated_by<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATED.with(Cell::get);
    let r = f();
    (r, ALLOCATED.with(Cell::get) - before)
}

/// One change to a byte string. Positions are taken modulo the length
/// (plus one, where the end is a place too).
#[derive(Debug, Clone)]
pub enum Mutation {
    /// Cut it here (a reply that stops mid-way).
    Truncate(usize),
    /// Replace one byte.
    Set(usize, u8),
    /// Insert bytes here.
    Insert(usize, Vec<u8>),
    /// Remove up to this many bytes here.
    Remove(usize, usize),
    /// Replace the run of digits at or after here with a number at the
    /// edge of what integers hold, or negative.
    Number(usize, &'static str),
    /// Repeat a slice of it in place (a length that no longer matches).
    Repeat(usize, usize),
}

/// Numbers that break length arithmetic when taken at their word.
const EDGE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-2",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "99999999999999999999999999",
    "1e308",
    "NaN",
];

/// Bytes the protocols give meaning to, so inserted bytes hit the parsers'
/// branches more often than uniform bytes would.
const SYNTAX: &[u8] = b"\r\n\r\n$*:+-%~>_#,(!=|0123456789 =#\\[]\"'.";

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![any::<u8>(), proptest::sample::select(SYNTAX)]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), byte()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<usize>(), proptest::collection::vec(byte(), 1..12))
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 1usize..16).prop_map(|(i, n)| Mutation::Remove(i, n)),
        (any::<usize>(), proptest::sample::select(EDGE_NUMBERS))
            .prop_map(|(i, n)| Mutation::Number(i, n)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Repeat(i, n)),
    ]
}

impl Mutation {
    /// Applies the change to `b`.
    pub fn apply(&self, b: &mut Vec<u8>) {
        let at = |i: &usize| i % (b.len() + 1);
        match self {
            Mutation::Truncate(i) => {
                let n = at(i);
                b.truncate(n);
            }
            Mutation::Set(i, v) => {
                if !b.is_empty() {
                    let n = i % b.len();
                    b[n] = *v;
                }
            }
            Mutation::Insert(i, v) => {
                let n = at(i);
                b.splice(n..n, v.iter().copied());
            }
            Mutation::Remove(i, len) => {
                let n = at(i);
                let end = (n + len).min(b.len());
                b.drain(n..end);
            }
            Mutation::Number(i, num) => {
                let n = at(i);
                let Some(start) = b[n..].iter().position(u8::is_ascii_digit).map(|p| p + n) else {
                    return;
                };
                let end = b[start..]
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .map_or(b.len(), |p| p + start);
                // A minus sign before the run goes too, so "-1" replaces "-5".
                let start = if start > 0 && b[start - 1] == b'-' {
                    start - 1
                } else {
                    start
                };
                b.splice(start..end, num.bytes());
            }
            Mutation::Repeat(i, len) => {
                let n = at(i);
                let end = (n + len).min(b.len());
                let copy = b[n..end].to_vec();
                b.splice(end..end, copy);
            }
        }
    }
}

/// `seed` inputs, each left alone or changed by up to four mutations (one
/// in four stays well-formed, so the properties about valid input run too).
pub fn mutated(seed: impl Strategy<Value = Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    (
        seed,
        prop_oneof![
            1 => Just(Vec::new()),
            3 => proptest::collection::vec(mutation(), 1..5),
        ],
    )
        .prop_map(|(mut b, ms)| {
            for m in &ms {
                m.apply(&mut b);
            }
            b
        })
}

/// Bytes with no structure at all, weighted towards protocol syntax.
pub fn noise() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(byte(), 0..200)
}

/// RESP2 and RESP3 values, nested up to four levels.
pub fn resp_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        "[a-zA-Z0-9 :._-]{0,24}".prop_map(Value::Status),
        "[a-zA-Z0-9 :._-]{0,24}".prop_map(Value::Error),
        any::<i64>().prop_map(Value::Integer),
        proptest::collection::vec(any::<u8>(), 0..48).prop_map(Value::Bulk),
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Boolean),
        (-1e12f64..1e12).prop_map(Value::Double),
        "-?[1-9][0-9]{0,40}".prop_map(Value::BigNumber),
        ("[a-z]{3}", proptest::collection::vec(any::<u8>(), 0..24))
            .prop_map(|(format, data)| Value::Verbatim { format, data }),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(Value::Map),
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Set),
            proptest::collection::vec(inner, 0..6).prop_map(Value::Push),
        ]
    })
}

/// `v` as a server sends it (RESP3 where the type has no RESP2 form).
pub fn encode_resp(v: &Value, out: &mut Vec<u8>) {
    fn line(out: &mut Vec<u8>, tag: u8, text: &[u8]) {
        out.push(tag);
        out.extend_from_slice(text);
        out.extend_from_slice(b"\r\n");
    }
    fn aggregate(out: &mut Vec<u8>, tag: u8, items: &[Value]) {
        line(out, tag, items.len().to_string().as_bytes());
        for i in items {
            encode_resp(i, out);
        }
    }
    match v {
        Value::Status(s) => line(out, b'+', s.as_bytes()),
        Value::Error(s) => line(out, b'-', s.as_bytes()),
        Value::Integer(i) => line(out, b':', i.to_string().as_bytes()),
        Value::Bulk(b) => {
            line(out, b'$', b.len().to_string().as_bytes());
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
        }
        Value::Nil => out.extend_from_slice(b"$-1\r\n"),
        Value::Boolean(b) => line(out, b'#', if *b { b"t" } else { b"f" }),
        Value::Double(d) => line(out, b',', d.to_string().as_bytes()),
        Value::BigNumber(n) => line(out, b'(', n.as_bytes()),
        Value::Verbatim { format, data } => {
            line(out, b'=', (data.len() + 4).to_string().as_bytes());
            out.extend_from_slice(format.as_bytes());
            out.push(b':');
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        Value::Array(items) => aggregate(out, b'*', items),
        Value::Set(items) => aggregate(out, b'~', items),
        Value::Push(items) => aggregate(out, b'>', items),
        Value::Map(pairs) => {
            line(out, b'%', pairs.len().to_string().as_bytes());
            for (k, v) in pairs {
                encode_resp(k, out);
                encode_resp(v, out);
            }
        }
    }
}

/// One item of a memcache `VALUE` reply: key, flags, data, cas.
pub type McItem = (String, u32, Vec<u8>, Option<u64>);

/// Memcache text-protocol replies: the one-line ones, `VALUE` blocks (with
/// their items, to check what the parser reads back) and `STAT` lists.
pub fn memcache_reply() -> impl Strategy<Value = (Vec<u8>, Option<Vec<McItem>>)> {
    let lines = proptest::sample::select(vec![
        "END",
        "STORED",
        "NOT_STORED",
        "EXISTS",
        "NOT_FOUND",
        "DELETED",
        "TOUCHED",
        "OK",
        "ERROR",
        "CLIENT_ERROR bad data chunk",
        "SERVER_ERROR out of memory storing object",
        "VERSION 1.6.21",
    ])
    .prop_map(|l| (format!("{l}\r\n").into_bytes(), None));
    let item = (
        "[a-zA-Z0-9:_.-]{1,40}",
        any::<u32>(),
        proptest::collection::vec(any::<u8>(), 0..64),
        proptest::option::of(any::<u64>()),
    );
    let values = proptest::collection::vec(item, 0..4).prop_map(|items| {
        let mut out = Vec::new();
        for (key, flags, data, cas) in &items {
            out.extend_from_slice(format!("VALUE {key} {flags} {}", data.len()).as_bytes());
            if let Some(c) = cas {
                out.extend_from_slice(format!(" {c}").as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"END\r\n");
        (out, Some(items))
    });
    let stats =
        proptest::collection::vec(("[a-z_:]{1,16}", "[0-9a-z.:]{0,16}"), 1..8).prop_map(|pairs| {
            let mut out = Vec::new();
            for (k, v) in pairs {
                out.extend_from_slice(format!("STAT {k} {v}\r\n").as_bytes());
            }
            out.extend_from_slice(b"END\r\n");
            (out, None)
        });
    prop_oneof![lines, values, stats]
}

/// Property names YCSB's CoreWorkload and kvbench read, and some it does not.
const PROPERTY_NAMES: &[&str] = &[
    "recordcount",
    "operationcount",
    "fieldcount",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "maxscanlength",
    "minscanlength",
    "scanlengthdistribution",
    "insertorder",
    "insertstart",
    "insertcount",
    "zeropadding",
    "readallfields",
    "writeallfields",
    "readallfieldsbyname",
    "dataintegrity",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "zipfian.constant",
    "exponential.percentile",
    "exponential.frac",
    "fieldnameprefix",
    "workload",
    "threadcount",
    "target",
    "table",
    "measurementtype",
    "core_workload_insertion_retry_limit",
    "kvbench.layout",
    "kvbench.writedistribution",
    "redis.host",
    "nonsense",
];

/// Values of every kind the properties take, and values they must refuse.
const PROPERTY_VALUES: &[&str] = &[
    "0",
    "1",
    "10",
    "1000",
    "100000",
    "-5",
    "0.5",
    "0.95",
    "1.0",
    "1.5",
    "-0.1",
    "1e308",
    "1e-320",
    "NaN",
    "inf",
    "",
    " ",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "4294967295",
    "uniform",
    "zipfian",
    "latest",
    "hotspot",
    "sequential",
    "exponential",
    "constant",
    "histogram",
    "hashed",
    "ordered",
    "true",
    "false",
    "site.ycsb.workloads.CoreWorkload",
    "com.example.Other",
    "field",
    "\u{e9}t\u{e9}",
    "a=b=c",
];

/// YCSB property files: `name=value` lines (some with `:` or spaces, some
/// continued with a backslash), comments, blank lines; then mutated.
pub fn property_file() -> impl Strategy<Value = String> {
    let entry = prop_oneof![
        6 => (
            proptest::sample::select(PROPERTY_NAMES),
            proptest::sample::select(vec!["=", " = ", ":", " "]),
            proptest::sample::select(PROPERTY_VALUES),
        )
            .prop_map(|(n, sep, v)| format!("{n}{sep}{v}")),
        1 => "[#!][ -~]{0,20}",
        1 => Just(String::new()),
        1 => (proptest::sample::select(PROPERTY_NAMES), "[0-9]{1,3}")
            .prop_map(|(n, v)| format!("{n}=\\\n  {v}")),
        1 => "[ -~]{0,30}",
    ];
    mutated(proptest::collection::vec(entry, 0..16).prop_map(|lines| lines.join("\n").into_bytes()))
        .prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Inputs made from `samples` (well-formed files): each one mutated, or
/// lines of several put together, or noise.
pub fn text_from(samples: Vec<String>) -> impl Strategy<Value = String> {
    let lines: Vec<String> = samples
        .iter()
        .flat_map(|s| s.lines().map(str::to_string))
        .collect();
    prop_oneof![
        4 => mutated(proptest::sample::select(samples).prop_map(String::into_bytes)),
        3 => mutated(
            proptest::collection::vec(proptest::sample::select(lines), 0..30)
                .prop_map(|l| l.join("\n").into_bytes())
        ),
        1 => noise(),
    ]
    .prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_mutation_replaces_the_whole_run_and_its_sign() {
        let mut b = b"$-15\r\nab\r\n".to_vec();
        Mutation::Number(0, "9223372036854775808").apply(&mut b);
        assert_eq!(b, b"$9223372036854775808\r\nab\r\n");
    }

    #[test]
    fn the_encoder_writes_what_redis_writes() {
        let mut out = Vec::new();
        encode_resp(
            &Value::Array(vec![
                Value::Bulk(b"ab".to_vec()),
                Value::Integer(-3),
                Value::Nil,
                Value::Map(vec![(Value::Status("k".into()), Value::Boolean(true))]),
            ]),
            &mut out,
        );
        assert_eq!(out, b"*4\r\n$2\r\nab\r\n:-3\r\n$-1\r\n%1\r\n+k\r\n#t\r\n");
    }
}
