//! memtier_benchmark's JSON (`--json-out-file`, format version 2) for one
//! run's measured window, with memtier's own field names, nesting and units
//! (latencies in milliseconds), so scripts written for memtier's output read
//! kvbench's.
//!
//! memtier knows two request types, so kvbench's kinds are grouped: reads
//! are "Gets"; updates and inserts (both writes of a record) are "Sets";
//! "Waits" (Redis WAIT) are always empty; "Totals" holds every kind,
//! scans and read-modify-writes included. Group histograms are exact merges
//! of the stored ones. What kvbench does not measure is `null`, never a
//! made-up number: bytes on the wire (KB/sec, Bytes RX/TX), and the
//! configuration keys that have no kvbench counterpart. docs/metrics.md
//! ("Exports") lists every field.

use crate::{hist, run_id, ExportError, RunRecord};
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use kvbench_model::{OpKind, PhaseResult, Protocol};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// memtier's default `--print-percentiles 50,99,99.9`, with the keys its
/// JSON writer gives them.
const PERCENTILES: [(&str, f64); 3] = [("p50.00", 0.50), ("p99.00", 0.99), ("p99.90", 0.999)];
/// Ticks per half distance of memtier's "Request Latency Distribution".
const DISTRIBUTION_TICKS: u32 = 10;
const NS_PER_MS: f64 = 1_000_000.0;

/// A JSON value whose objects keep their keys in insertion order, as
/// memtier writes them (serde_json's `Value` would sort them).
enum Node {
    Leaf(Value),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
}

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Leaf(v) => v.serialize(s),
            Node::Object(fields) => {
                let mut m = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            Node::Array(items) => {
                let mut a = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    a.serialize_element(item)?;
                }
                a.end()
            }
        }
    }
}

fn leaf(v: impl Into<Value>) -> Node {
    Node::Leaf(v.into())
}

fn object<const N: usize>(fields: [(&str, Node); N]) -> Node {
    Node::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// The memtier JSON of `record`'s measured window, pretty-printed.
///
/// # Errors
/// [`ExportError::NoWindow`] for a run without a measured window,
/// [`ExportError::BadHistogram`] for stored data that does not decode.
pub fn export(record: &RunRecord) -> Result<Vec<u8>, ExportError> {
    let run = run_id(record);
    let window = record.run.as_ref().ok_or(ExportError::NoWindow {
        run,
        status: record.status.as_str(),
    })?;
    let groups = [
        Group::of(run, window, "Sets", &[OpKind::Update, OpKind::Insert])?,
        Group::of(run, window, "Gets", &[OpKind::Read])?,
        Group::of(run, window, "Waits", &[])?,
        Group::of(run, window, "Totals", &OpKind::ALL)?,
    ];
    let c = &record.config;
    let (threads, per_thread) = if c.threads > 0 && c.clients.is_multiple_of(c.threads) {
        (c.threads, c.clients / c.threads)
    } else {
        (1, c.clients)
    };
    let mut run_information = vec![
        ("Threads".to_string(), leaf(threads)),
        ("Connections per thread".to_string(), leaf(per_thread)),
    ];
    run_information.push(match c.duration_s {
        Some(s) => ("Seconds".into(), leaf(s.round() as u64)),
        None => (
            "Requests per client".into(),
            leaf(requests_per_client(record)),
        ),
    });
    run_information.push(("Format version".into(), leaf(2)));

    let mut all_stats = vec![("Runtime".to_string(), runtime(record, window))];
    for g in &groups {
        all_stats.push((g.name.to_string(), g.stats(record, window)));
    }
    for (name, g) in [
        ("SET", &groups[0]),
        ("GET", &groups[1]),
        ("WAIT", &groups[2]),
    ] {
        all_stats.push((name.to_string(), g.distribution()));
    }
    let doc = Node::Object(vec![
        (
            "configuration".into(),
            configuration(record, threads, per_thread),
        ),
        ("run information".into(), Node::Object(run_information)),
        ("ALL STATS".into(), Node::Object(all_stats)),
    ]);
    let mut bytes = serde_json::to_vec_pretty(&doc)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// memtier's `requests`: per connection (kvbench splits the total evenly).
fn requests_per_client(r: &RunRecord) -> u64 {
    r.config.operations / u64::from(r.config.clients.max(1))
}

/// One of memtier's request types: the kinds it covers, merged.
struct Group {
    name: &'static str,
    kinds: Vec<OpKind>,
    completed: u64,
    misses: u64,
    hist: Histogram<u64>,
    /// Second → (completions, merged histogram when the run stored them).
    seconds: BTreeMap<u32, (u64, Option<Histogram<u64>>)>,
}

impl Group {
    fn of(
        run: i64,
        p: &PhaseResult,
        name: &'static str,
        kinds: &[OpKind],
    ) -> Result<Group, ExportError> {
        let bad =
            |what: String| move |reason: String| ExportError::BadHistogram { run, what, reason };
        let mut g = Group {
            name,
            kinds: kinds.to_vec(),
            completed: 0,
            misses: 0,
            hist: hist::empty(3),
            seconds: BTreeMap::new(),
        };
        for op in p.ops.iter().filter(|o| kinds.contains(&o.op)) {
            g.completed += op.completed;
            g.misses += op.misses;
            // memtier times a GET that misses like one that hits.
            for text in [Some(&op.histogram), op.miss_histogram.as_ref()]
                .into_iter()
                .flatten()
            {
                if !text.is_empty() {
                    let h = hist::decode(text).map_err(bad(format!("run/{}", op.op)))?;
                    add(&mut g.hist, &h).map_err(bad(format!("run/{}", op.op)))?;
                }
            }
        }
        for point in &p.series {
            let entry = g.seconds.entry(point.second).or_insert((0, None));
            if !kinds.contains(&point.op) {
                continue;
            }
            entry.0 += point.completed + point.misses;
            if !point.histogram.is_empty() {
                let what = format!("run/{} second {}", point.op, point.second);
                let h = hist::decode(&point.histogram).map_err(bad(what.clone()))?;
                let merged = entry.1.get_or_insert_with(|| Histogram::new_from(&h));
                add(merged, &h).map_err(bad(what))?;
            }
        }
        Ok(g)
    }

    /// memtier's `result_print_to_json` block.
    fn stats(&self, r: &RunRecord, p: &PhaseResult) -> Node {
        let per_s = |n: f64| {
            if p.duration_s > 0.0 {
                n / p.duration_s
            } else {
                0.0
            }
        };
        let reads = self.kinds.contains(&OpKind::Read);
        let (hits, misses) = if reads { self.read_counts(p) } else { (0, 0) };
        let count = self.completed + self.misses;
        let mut fields = vec![
            ("Count", leaf(count)),
            ("Ops/sec", leaf(per_s(count as f64))),
            ("Hits/sec", leaf(per_s(hits as f64))),
            ("Misses/sec", leaf(per_s(misses as f64))),
        ];
        // memtier writes these only against a cluster, where kvbench counts
        // them per phase, not per kind: Totals only.
        if r.config.topology == kvbench_model::TopologyKind::Cluster && self.name == "Totals" {
            fields.push(("MOVED/sec", leaf(per_s(p.redirects_moved as f64))));
            fields.push(("ASK/sec", leaf(per_s(p.redirects_ask as f64))));
        }
        let connection_errors = if self.name == "Totals" {
            p.errors_by_kind
                .iter()
                .filter(|(kind, _)| matches!(kind.as_str(), "closed" | "io" | "timeout"))
                .map(|(_, n)| n)
                .sum()
        } else {
            0
        };
        fields.extend([
            (
                "Connection Errors/sec",
                leaf(per_s(connection_errors as f64)),
            ),
            ("Connection Errors", leaf(connection_errors)),
        ]);
        fields.extend(latencies(&self.hist));
        fields.extend([
            ("KB/sec", leaf(Value::Null)),
            ("KB/sec RX/TX", leaf(Value::Null)),
            ("KB/sec RX", leaf(Value::Null)),
            ("KB/sec TX", leaf(Value::Null)),
            ("Time-Serie", self.time_series()),
            ("Percentile Latencies", percentile_latencies(&self.hist)),
        ]);
        Node::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    /// Read hits and misses: memtier's hits and misses are GETs'.
    fn read_counts(&self, p: &PhaseResult) -> (u64, u64) {
        p.ops
            .iter()
            .filter(|o| o.op == OpKind::Read)
            .fold((0, 0), |(h, m), o| (h + o.completed, m + o.misses))
    }

    fn time_series(&self) -> Node {
        Node::Object(
            self.seconds
                .iter()
                .map(|(second, (count, h))| {
                    let mut fields = vec![
                        ("Bytes RX".to_string(), leaf(Value::Null)),
                        ("Bytes TX".to_string(), leaf(Value::Null)),
                        ("Count".to_string(), leaf(*count)),
                    ];
                    if let Some(h) = h.as_ref().filter(|h| !h.is_empty()) {
                        fields.extend(latencies(h).into_iter().map(|(k, v)| (k.to_string(), v)));
                        fields.extend(percentiles(h).map(|(k, v)| (k.to_string(), leaf(v))));
                    }
                    (second.to_string(), Node::Object(fields))
                })
                .collect(),
        )
    }

    /// memtier's "Request Latency Distribution" entries for this group.
    fn distribution(&self) -> Node {
        Node::Array(
            hist::percentile_steps(&self.hist, DISTRIBUTION_TICKS)
                .into_iter()
                .map(|s| {
                    object([
                        ("<=msec", leaf(s.value as f64 / NS_PER_MS)),
                        ("percent", leaf(s.percentile)),
                    ])
                })
                .collect(),
        )
    }
}

fn add(into: &mut Histogram<u64>, h: &Histogram<u64>) -> Result<(), String> {
    into.add(h).map_err(|e| format!("cannot merge: {e:?}"))
}

/// Average, accumulated (from the histogram: kvbench keeps no exact sum),
/// min and max latency in milliseconds; zeros when nothing was recorded.
fn latencies(h: &Histogram<u64>) -> Vec<(&'static str, Node)> {
    let ms = |ns: f64| if h.is_empty() { 0.0 } else { ns / NS_PER_MS };
    let mean = ms(h.mean());
    vec![
        ("Latency", leaf(mean)),
        ("Average Latency", leaf(mean)),
        (
            "Accumulated Latency",
            leaf((mean * h.len() as f64).round() as u64),
        ),
        ("Min Latency", leaf(ms(h.min() as f64))),
        ("Max Latency", leaf(ms(h.max() as f64))),
    ]
}

fn percentiles(h: &Histogram<u64>) -> impl Iterator<Item = (&'static str, f64)> + '_ {
    PERCENTILES.into_iter().map(|(key, q)| {
        let ms = if h.is_empty() {
            0.0
        } else {
            h.value_at_quantile(q) as f64 / NS_PER_MS
        };
        (key, ms)
    })
}

/// "Percentile Latencies", with memtier's "Histogram log format" inside it:
/// the group's histogram in microseconds (memtier records microseconds),
/// compressed V2, base64.
fn percentile_latencies(h: &Histogram<u64>) -> Node {
    let mut fields: Vec<(String, Node)> = percentiles(h)
        .map(|(k, v)| (k.to_string(), leaf(v)))
        .collect();
    fields.push((
        "Histogram log format".into(),
        object([("Compressed Histogram", leaf(compressed_us(h)))]),
    ));
    Node::Object(fields)
}

/// `h` (nanoseconds) re-binned to microseconds, each bucket at its median
/// value, compressed and base64-encoded as memtier's `hdr_string_write` does.
fn compressed_us(h: &Histogram<u64>) -> Value {
    let mut us = match Histogram::<u64>::new_with_bounds(1, 60_000_000, 3) {
        Ok(us) => us,
        Err(_) => return Value::Null,
    };
    for v in h.iter_recorded() {
        let value = (h.median_equivalent(v.value_iterated_to()) as f64 / 1000.0).round() as u64;
        us.saturating_record_n(value.clamp(1, 60_000_000), v.count_at_value());
    }
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(&us, &mut bytes) {
        Ok(_) => Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
        Err(_) => Value::Null,
    }
}

/// memtier's "Runtime": the run's wall-clock bounds (load phase included;
/// kvbench does not store when the window opened) and the window's length.
fn runtime(r: &RunRecord, p: &PhaseResult) -> Node {
    let ms = |t: &str| {
        humantime::parse_rfc3339_weak(t)
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(Value::Null, |d| Value::from(d.as_millis() as u64))
    };
    let interrupted = r
        .failure
        .as_deref()
        .is_some_and(|f| f.contains("interrupted"));
    object([
        ("Start time", leaf(ms(&r.started_at))),
        ("Finish time", leaf(ms(&r.finished_at))),
        (
            "Total duration",
            leaf((p.duration_s * 1000.0).round() as u64),
        ),
        ("Time unit", leaf("MILLISECONDS")),
        (
            "Interrupted",
            leaf(if interrupted { "true" } else { "false" }),
        ),
    ])
}

/// memtier's "configuration" block, every key in memtier's order; `null`
/// where kvbench has no counterpart.
fn configuration(r: &RunRecord, threads: u32, per_thread: u32) -> Node {
    let c = &r.config;
    let null = || leaf(Value::Null);
    let property = |name: &str| {
        c.workload_properties
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let tls = c
        .target
        .as_deref()
        .is_some_and(|t| t.starts_with("rediss") || t.starts_with("valkeys"));
    let writes = c.update_proportion + c.insert_proportion;
    let key_pattern = match c.request_distribution.as_str() {
        "uniform" => leaf("R:R"),
        "zipfian" => leaf("Z:Z"),
        "sequential" => leaf("S:S"),
        _ => null(),
    };
    let zipf = if c.request_distribution == "zipfian" {
        leaf(
            property("zipfianconstant")
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.99),
        )
    } else {
        null()
    };
    let open_loop_rate = c
        .rate
        .map(|r| (r / f64::from(c.clients.max(1))).round() as u64);
    object([
        ("server", null()),
        ("port", null()),
        ("uri", c.target.clone().map_or_else(null, leaf)),
        ("unix socket", null()),
        ("address family", null()),
        (
            "protocol",
            leaf(match c.system.protocol() {
                Protocol::Resp => "redis",
                Protocol::Memcache => "memcache_text",
                // memtier has no Aerospike protocol; the name says what ran.
                Protocol::Aerospike => "aerospike",
            }),
        ),
        ("out_file", null()),
        ("tls", leaf(if tls { "true" } else { "false" })),
        ("cert", null()),
        ("key", null()),
        ("cacert", null()),
        ("tls_skip_verify", null()),
        ("sni", null()),
        ("client_stats", null()),
        ("run_count", leaf(1)),
        ("debug", null()),
        (
            "requests",
            leaf(if c.duration_s.is_some() {
                0
            } else {
                requests_per_client(r)
            }),
        ),
        ("rate_limit", leaf(open_loop_rate.unwrap_or(0))),
        ("clients", leaf(per_thread)),
        ("threads", leaf(threads)),
        (
            "test_time",
            leaf(c.duration_s.map_or(0, |s| s.round() as u64)),
        ),
        ("ratio", leaf(ratio(writes, c.read_proportion))),
        ("pipeline", leaf(c.pipeline)),
        (
            "data_size",
            leaf(u64::from(c.field_count) * u64::from(c.field_length)),
        ),
        ("data_offset", null()),
        ("random_data", null()),
        ("data_size_range", null()),
        ("data_size_list", null()),
        ("data_size_pattern", null()),
        ("expiry_range", null()),
        ("data_import", null()),
        ("data_verify", null()),
        ("verify_only", null()),
        ("generate_keys", null()),
        (
            "key_prefix",
            leaf(property("kvbench.keyprefix").unwrap_or_else(|| "user".into())),
        ),
        ("key_minimum", leaf(0)),
        ("key_maximum", leaf(c.records.saturating_sub(1))),
        ("key_pattern", key_pattern),
        ("key_stddev", null()),
        ("key_median", null()),
        ("key_zipf_exp", zipf),
        ("reconnect_interval", null()),
        ("connection_timeout", null()),
        ("thread_conn_start_min_jitter_micros", null()),
        ("thread_conn_start_max_jitter_micros", null()),
        ("multi_key_get", null()),
        ("authenticate", null()),
        ("select-db", null()),
        ("no-expiry", null()),
        ("wait-ratio", leaf("0:0")),
        ("num-slaves", null()),
        ("wait-timeout", null()),
        ("print-all-runs", null()),
    ])
}

/// memtier's `SET:GET` ratio from the shares of writes and reads, in lowest
/// whole terms at a precision of 1%.
fn ratio(writes: f64, reads: f64) -> String {
    let (w, r) = (
        (writes * 100.0).round() as u64,
        (reads * 100.0).round() as u64,
    );
    let (mut a, mut b) = (w, r);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let g = a.max(1);
    format!("{}:{}", w / g, r / g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exported() -> serde_json::Value {
        let bytes = export(&crate::tests::sample_record()).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    /// memtier times and counts a GET that misses as it does one that hits:
    /// the misses' histogram joins the Gets' and each second's misses its Count.
    #[test]
    fn misses_are_timed_and_counted_per_second_as_memtier_does() {
        let mut r = crate::tests::sample_record();
        let run = r.run.as_mut().unwrap();
        let read = run.ops.iter_mut().find(|o| o.op == OpKind::Read).unwrap();
        read.miss_histogram = Some(crate::tests::encoded(&[(5_000_000, 5)], 3));
        let second = run
            .series
            .iter_mut()
            .find(|p| p.op == OpKind::Read && p.second == 0)
            .unwrap();
        second.misses = 5;
        let v: serde_json::Value = serde_json::from_slice(&export(&r).unwrap()).unwrap();
        let gets = &v["ALL STATS"]["Gets"];
        assert_eq!(gets["Time-Serie"]["0"]["Count"], 95);
        let max = gets["Max Latency"].as_f64().unwrap();
        assert!((5.0..5.01).contains(&max), "the misses' 5 ms: {max}");
    }

    #[test]
    fn totals_and_percentiles_carry_memtiers_names() {
        let v = exported();
        let all = &v["ALL STATS"];
        // The percentile keys of every request type (the integration test
        // checks the other keys on a real run).
        for group in ["Sets", "Gets", "Waits", "Totals"] {
            for key in ["p50.00", "p99.00", "p99.90"] {
                assert!(
                    all[group]["Percentile Latencies"][key].is_number(),
                    "{group} {key}"
                );
            }
        }
        // 100 reads and 5 misses over 2.5 s; memtier counts a miss as a GET.
        assert_eq!(all["Gets"]["Count"], 105);
        assert_eq!(all["Gets"]["Ops/sec"], 42.0);
        assert_eq!(all["Gets"]["Hits/sec"], 40.0);
        assert_eq!(all["Gets"]["Misses/sec"], 2.0);
        assert_eq!(all["Sets"]["Count"], 50);
        assert_eq!(all["Totals"]["Count"], 155);
        assert_eq!(all["Waits"]["Count"], 0);
        assert!(all["Gets"]["KB/sec"].is_null());
        // The slowest tenth of reads took 0.9 ms.
        let p99 = all["Gets"]["Percentile Latencies"]["p99.00"]
            .as_f64()
            .unwrap();
        assert!((0.9..0.902).contains(&p99), "{p99}");
        assert_eq!(all["Runtime"]["Total duration"], 2500);
        assert_eq!(all["Runtime"]["Start time"], 1_772_366_400_000_u64);
        assert_eq!(v["run information"]["Threads"], 2);
        assert_eq!(v["run information"]["Connections per thread"], 2);
        assert_eq!(v["run information"]["Requests per client"], 37);
        assert_eq!(v["configuration"]["ratio"], "1:1");
        assert_eq!(v["configuration"]["protocol"], "redis");
        // Seconds 0..=2, the stalled one with a count of zero.
        let series = all["Gets"]["Time-Serie"].as_object().unwrap();
        assert_eq!(series.len(), 3);
        assert_eq!(series["1"]["Count"], 0);
        assert_eq!(series["0"]["Count"], 90);
        assert!(series["0"]["p50.00"].is_number());
        assert!(all["GET"].as_array().is_some_and(|a| !a.is_empty()));
        assert!(all["WAIT"].as_array().is_some_and(Vec::is_empty));
    }

    #[test]
    fn keys_keep_memtiers_order() {
        let text = String::from_utf8(export(&crate::tests::sample_record()).unwrap()).unwrap();
        let at = |k: &str| text.find(k).unwrap_or_else(|| panic!("{k}"));
        assert!(at("\"configuration\"") < at("\"run information\""));
        assert!(at("\"run information\"") < at("\"ALL STATS\""));
        assert!(at("\"Sets\"") < at("\"Gets\"") && at("\"Gets\"") < at("\"Totals\""));
    }

    #[test]
    fn the_compressed_histogram_is_in_microseconds() {
        let v = exported();
        let text = v["ALL STATS"]["Gets"]["Percentile Latencies"]["Histogram log format"]
            ["Compressed Histogram"]
            .as_str()
            .unwrap();
        let h = crate::hist::decode(text).unwrap();
        assert_eq!(h.len(), 100);
        assert_eq!(h.value_at_quantile(0.5), 10, "10,000 ns is 10 us");
    }

    #[test]
    fn ratios_are_in_lowest_terms() {
        assert_eq!(ratio(0.05, 0.95), "1:19");
        assert_eq!(ratio(1.0, 0.0), "1:0");
        assert_eq!(ratio(0.0, 0.0), "0:0");
    }

    #[test]
    fn a_run_without_a_window_is_refused() {
        let mut r = crate::tests::sample_record();
        r.run = None;
        assert!(matches!(
            export(&r),
            Err(ExportError::NoWindow { run: 7, .. })
        ));
    }
}
