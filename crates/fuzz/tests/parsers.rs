//! The parsers that read what a peer or a hand wrote, fed generated and
//! mutated input: the RESP and memcache reply parsers (what a server sends)
//! and the YCSB property parser with the workload built from it (what a
//! user writes). For every input: no panic; a reply found is inside the
//! input and every cut of it is incomplete (never an error or another
//! reply); the hot-path parsers allocate nothing and the others at most a
//! fixed multiple of the input; well-formed input reads back exactly.

use kvbench_fuzz::{
    allocated_by, config, encode_resp, memcache_reply, mutated, noise, property_file, resp_value,
};
use kvbench_proto::{aerospike_info, memcache_text as mc, resp};
use kvbench_workload::{bounds, client_rngs, Properties, Workload, WorkloadSpec};
use proptest::prelude::*;

#[global_allocator]
static METER: kvbench_fuzz::Meter = kvbench_fuzz::Meter;

/// What the owned-value parsers may allocate: a value per three input bytes
/// (the shortest RESP value, `_\r\n`) of at most 64 bytes, and a little more.
fn owned_bound(input: usize) -> usize {
    64 * input + 1024
}

fn resp_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        5 => mutated(resp_value().prop_map(|v| {
            let mut out = Vec::new();
            encode_resp(&v, &mut out);
            out
        })),
        1 => noise(),
    ]
}

/// Names and values as an info reply has them: no tab or newline inside,
/// and names unique (a reply names each once).
fn aerospike_info_pairs() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::btree_map("[a-z/_-]{1,12}", "[ -~&&[^\t]]{0,40}", 0..8)
        .prop_map(|m| m.into_iter().collect())
}

fn aerospike_info_reply(pairs: &[(String, String)]) -> Vec<u8> {
    let body: String = pairs.iter().map(|(k, v)| format!("{k}\t{v}\n")).collect();
    let mut buf = vec![2, 1];
    buf.extend_from_slice(&(body.len() as u64).to_be_bytes()[2..]);
    buf.extend_from_slice(body.as_bytes());
    buf
}

fn aerospike_info_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        5 => mutated(aerospike_info_pairs().prop_map(|p| aerospike_info_reply(&p))),
        1 => noise(),
    ]
}

fn memcache_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        5 => mutated(memcache_reply().prop_map(|(b, _)| b)),
        1 => noise(),
    ]
}

proptest! {
    #![proptest_config(config(10_000))]

    #[test]
    fn resp_replies_never_panic_allocate_or_overrun(buf in resp_input()) {
        let (r, bytes) = allocated_by(|| resp::parse_reply(&buf));
        prop_assert_eq!(bytes, 0, "parse_reply allocated");
        if let Ok(Some(reply)) = r {
            let n = reply.consumed;
            prop_assert!(n > 0 && n <= buf.len(), "consumed {} of {}", n, buf.len());
            prop_assert_eq!(resp::parse_reply(&buf[..n]), Ok(Some(reply)));
            for cut in [n - 1, n / 2] {
                prop_assert_eq!(resp::parse_reply(&buf[..cut]), Ok(None), "cut at {}", cut);
            }
        }
        let (v, bytes) = allocated_by(|| resp::parse_value(&buf));
        prop_assert!(bytes <= owned_bound(buf.len()), "parse_value allocated {} for {} bytes", bytes, buf.len());
        match (r, v) {
            (Ok(Some(a)), Ok(Some((_, n)))) => prop_assert_eq!(a.consumed, n),
            (Ok(None), v) => prop_assert_eq!(v, Ok(None)),
            (Err(_), v) => prop_assert!(v.is_err()),
            // A complete frame whose contents do not read (a double that is
            // not a number) is an error of parse_value alone.
            (Ok(Some(_)), v) => prop_assert!(v.is_err()),
        }
    }

    #[test]
    fn resp_values_read_back_exactly(v in resp_value()) {
        let mut buf = Vec::new();
        encode_resp(&v, &mut buf);
        let reply = resp::parse_reply(&buf);
        prop_assert_eq!(reply.map(|r| r.map(|r| r.consumed)), Ok(Some(buf.len())));
        prop_assert_eq!(resp::parse_value(&buf), Ok(Some((v, buf.len()))));
    }

    #[test]
    fn memcache_replies_never_panic_allocate_or_overrun(buf in memcache_input()) {
        let (r, bytes) = allocated_by(|| mc::parse_reply(&buf));
        prop_assert_eq!(bytes, 0, "parse_reply allocated");
        if let Ok(Some(reply)) = r {
            let n = reply.consumed;
            prop_assert!(n > 0 && n <= buf.len(), "consumed {} of {}", n, buf.len());
            prop_assert_eq!(mc::parse_reply(&buf[..n]), Ok(Some(reply)));
            for cut in [n - 1, n / 2] {
                prop_assert_eq!(mc::parse_reply(&buf[..cut]), Ok(None), "cut at {}", cut);
            }
        }
        let (values, bytes) = allocated_by(|| mc::parse_values(&buf));
        prop_assert!(bytes <= owned_bound(buf.len()), "parse_values allocated {} for {} bytes", bytes, buf.len());
        if let Ok(Some((_, n))) = values {
            prop_assert!(n <= buf.len());
        }
        let (stats, bytes) = allocated_by(|| mc::parse_stats(&buf));
        prop_assert!(bytes <= owned_bound(buf.len()), "parse_stats allocated {} for {} bytes", bytes, buf.len());
        if let Ok(Some((_, n))) = stats {
            prop_assert!(n <= buf.len());
        }
    }

    #[test]
    fn aerospike_info_replies_never_panic_or_overrun(buf in aerospike_info_input()) {
        let (r, bytes) = allocated_by(|| aerospike_info::parse_reply(&buf));
        prop_assert!(bytes <= owned_bound(buf.len()), "parse_reply allocated {} for {} bytes", bytes, buf.len());
        if let Ok(Some((map, n))) = r {
            prop_assert!(n >= aerospike_info::HEADER && n <= buf.len(), "consumed {} of {}", n, buf.len());
            prop_assert_eq!(aerospike_info::parse_reply(&buf[..n]), Ok(Some((map, n))));
            for cut in [n - 1, n / 2] {
                prop_assert_eq!(aerospike_info::parse_reply(&buf[..cut]), Ok(None), "cut at {}", cut);
            }
        }
    }

    #[test]
    fn aerospike_info_replies_read_back_exactly(pairs in aerospike_info_pairs()) {
        let buf = aerospike_info_reply(&pairs);
        let want: std::collections::BTreeMap<String, String> = pairs.into_iter().collect();
        prop_assert_eq!(aerospike_info::parse_reply(&buf), Ok(Some((want, buf.len()))));
    }

    #[test]
    fn memcache_values_read_back_exactly((buf, items) in memcache_reply()) {
        let reply = mc::parse_reply(&buf);
        prop_assert_eq!(reply.map(|r| r.map(|r| r.consumed)), Ok(Some(buf.len())));
        if let Some(items) = items {
            let want: Vec<(Vec<u8>, u32, Vec<u8>)> = items
                .into_iter()
                .map(|(k, f, d, _)| (k.into_bytes(), f, d))
                .collect();
            prop_assert_eq!(mc::parse_values(&buf), Ok(Some((want, buf.len()))));
        }
    }

    #[test]
    fn property_files_never_panic_and_what_they_accept_runs(text in property_file()) {
        let dog = kvbench_fuzz::watchdog(std::time::Duration::from_secs(20));
        dog.start(&text);
        let checked = property_case(&text);
        dog.done();
        checked?;
    }
}

fn property_case(text: &str) -> Result<(), TestCaseError> {
    {
        let (props, bytes) = allocated_by(|| Properties::parse(text, "fuzz.properties"));
        prop_assert!(
            bytes <= owned_bound(text.len()) + 4096,
            "allocated {} for {} bytes",
            bytes,
            text.len()
        );
        let Ok(props) = props else { return Ok(()) };
        let Ok((spec, _)) = WorkloadSpec::from_properties(&props) else {
            return Ok(());
        };
        prop_assert!(spec.record_count <= bounds::MAX_RECORDS);
        prop_assert!(spec.field_count >= 1 && spec.field_count <= bounds::MAX_FIELD_COUNT);
        prop_assert!(spec.field_length >= 1 && spec.field_length <= bounds::MAX_FIELD_LENGTH);
        prop_assert!(spec.max_scan_length <= bounds::MAX_SCAN_LENGTH);
        // Accepted means it runs: a client draws operations from it.
        let Ok(workload) = Workload::new(&spec) else {
            return Ok(());
        };
        let rng = client_rngs(7, 1).remove(0);
        if let Ok(mut ops) = workload.client_stream(rng, 0, 1) {
            for _ in 0..50 {
                let _ = ops.next_op();
            }
        }
    }
    Ok(())
}

#[test]
fn noise_alone_is_refused_or_incomplete_never_a_panic() {
    for buf in [
        &b"$-2\r\n"[..],
        b"*-5\r\n",
        b"$9223372036854775807\r\n",
        b"%99999999999999999999\r\n",
        b"\r\n",
    ] {
        let _ = resp::parse_reply(buf);
        let _ = resp::parse_value(buf);
        let _ = mc::parse_values(buf);
    }
}
