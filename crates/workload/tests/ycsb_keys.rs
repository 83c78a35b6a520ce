//! Key names and FNV hashes against vectors written by YCSB core 0.17.0
//! itself (tests/ycsb-vectors; regenerate with its regenerate.sh).

use kvbench_workload::keys::{fnv_hash64, KeyNamer};
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/ycsb-vectors/data/keys.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn hashed_keys_0_to_9999_match_ycsb() {
    let v = vectors();
    let expected = v["hashed_zeropadding_1"].as_array().expect("key list");
    assert_eq!(expected.len(), 10_000);
    let namer = KeyNamer::default();
    let mut buf = Vec::new();
    for (keynum, want) in expected.iter().enumerate() {
        let want = want.as_str().expect("key string");
        assert_eq!(namer.key(keynum as u64), want, "record {keynum}");
        buf.clear();
        namer.write_key(keynum as u64, &mut buf);
        assert_eq!(buf, want.as_bytes(), "record {keynum}");
    }
}

#[test]
fn ordered_padded_and_large_keys_match_ycsb() {
    let v = vectors();
    let cases = v["cases"].as_array().expect("cases");
    assert!(cases.len() >= 50);
    for case in cases {
        let ordered = match case["insertorder"].as_str() {
            Some("ordered") => true,
            Some("hashed") => false,
            other => panic!("insertorder {other:?}"),
        };
        let padding = case["zeropadding"].as_u64().expect("zeropadding") as usize;
        let keynum = case["keynum"].as_u64().expect("keynum");
        let want = case["key"].as_str().expect("key");
        assert_eq!(KeyNamer::new(ordered, padding).key(keynum), want, "{case}");
    }
}

#[test]
fn fnv_hashes_match_ycsb() {
    let v = vectors();
    for case in v["fnvhash64"].as_array().expect("fnvhash64") {
        let input: u64 = case["input"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("input");
        let output: i64 = case["output"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("output");
        assert_eq!(fnv_hash64(input) as i64, output, "fnvhash64({input})");
    }
}
