//! The load phase writes every record, with the right fields and sizes, on
//! both systems. The check reads the records back over a plain socket with
//! the cold-path parsers, independently of the engine's own reply handling.

use crate::load::{exchange, load, spec, start};
use kvbench_model::SystemKind;
use kvbench_proto::{memcache_text as mc, resp};
use kvbench_servers::Server;
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::WorkloadSpec;
use std::net::TcpStream;

fn check_redis(server: &Server, spec: &WorkloadSpec) {
    let mut sock = TcpStream::connect(server.addr()).expect("connect");
    let keys = KeyNamer::default();
    let mut req = Vec::new();
    resp::encode_command(&mut req, &[b"DBSIZE"]);
    let n = exchange(&mut sock, &req, |b| resp::parse_value(b).ok().flatten());
    assert_eq!(n, resp::Value::Integer(spec.record_count as i64), "DBSIZE");
    for keynum in 0..spec.record_count {
        let key = keys.key(keynum);
        req.clear();
        resp::encode_command(&mut req, &[b"HGETALL", key.as_bytes()]);
        let v = exchange(&mut sock, &req, |b| resp::parse_value(b).ok().flatten());
        let items = match v {
            resp::Value::Array(items) => items,
            other => panic!("record {keynum} ({key}): {other:?}"),
        };
        assert_eq!(
            items.len(),
            2 * spec.field_count as usize,
            "record {keynum} field count"
        );
        for pair in items.chunks(2) {
            let name = pair[0].as_bytes().expect("field name");
            let value = pair[1].as_bytes().expect("field value");
            assert!(
                name.starts_with(b"field"),
                "{key}: field name {:?}",
                String::from_utf8_lossy(name)
            );
            assert_eq!(value.len(), spec.field_length as usize, "{key}: value size");
        }
    }
}

fn check_memcached(server: &Server, spec: &WorkloadSpec) {
    let mut sock = TcpStream::connect(server.addr()).expect("connect");
    let keys = KeyNamer::default();
    let mut req = Vec::new();
    for keynum in 0..spec.record_count {
        // Where YCSB's Memcached binding looks a record up: `table-key`.
        let key = format!("usertable-{}", keys.key(keynum));
        req.clear();
        mc::encode_get(&mut req, key.as_bytes());
        let items = exchange(&mut sock, &req, |b| mc::parse_values(b).ok().flatten());
        assert_eq!(items.len(), 1, "record {keynum} ({key}) missing");
        let (_, _, data) = &items[0];
        // YCSB's Memcached binding stores a JSON object of the fields.
        let text = std::str::from_utf8(data).expect("utf-8 JSON");
        let obj: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).expect("a JSON object");
        assert_eq!(obj.len(), spec.field_count as usize, "{key}: field count");
        for (name, value) in obj {
            assert!(name.starts_with("field"), "{key}: {name}");
            assert_eq!(
                value.as_str().map(str::len),
                Some(spec.field_length as usize),
                "{key}.{name}"
            );
        }
    }
    let probe = server.probe("check").expect("probe");
    assert_eq!(probe.items, Some(spec.record_count), "curr_items");
    assert_eq!(probe.evictions, Some(0));
}

#[test]
fn every_record_is_loaded_on_redis() {
    let server = start(SystemKind::Redis, None);
    let spec = spec(3_000, 7, 33, 0.5);
    let out = load(&server, &spec, 11);
    assert_eq!(out.result.completed, spec.record_count);
    assert_eq!(out.result.errors, 0);
    check_redis(&server, &spec);
}

#[test]
fn every_record_is_loaded_on_memcached() {
    let server = start(SystemKind::Memcached, Some(64));
    let spec = spec(3_000, 7, 33, 0.5);
    let out = load(&server, &spec, 11);
    assert_eq!(out.result.completed, spec.record_count);
    assert_eq!(out.result.errors, 0);
    check_memcached(&server, &spec);
}
