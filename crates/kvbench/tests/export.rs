//! `kvbench export` on runs stored by real servers: every format carries the
//! stored numbers, the interval logs read back in an independent
//! HdrHistogram implementation (the PyPI package `hdrhistogram`, which
//! scripts/setup installs into .venv), and bad input is one line and exit 2.

use crate::bad_input::assert_usage_error;
use crate::util::{Sandbox, SMALL};
use hdrhistogram::Histogram;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Runs `kvbench run ARGS --json` with the small settings and returns the record.
fn run(sb: &Sandbox, args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--seed", "5", "--json"]);
    sb.json(&all)
}

fn small_run(sb: &Sandbox, system: &str) -> Value {
    let mut args = vec!["--system", system, "--workload", "balanced"];
    args.extend_from_slice(SMALL);
    run(sb, &args)
}

fn export(sb: &Sandbox, args: &[&str]) -> Vec<u8> {
    let out = sb
        .kvbench()
        .arg("export")
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "export {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `kvbench export --format FORMAT --runs ID --dir DIR`, which prints nothing.
fn export_to_dir(sb: &Sandbox, format: &str, id: i64, dir: &Path) {
    let id = id.to_string();
    let dir = dir.to_str().unwrap();
    let stdout = export(sb, &["--format", format, "--runs", &id, "--dir", dir]);
    assert!(stdout.is_empty(), "{}", String::from_utf8_lossy(&stdout));
}

fn show(sb: &Sandbox, id: i64) -> Value {
    let out = export(sb, &["--format", "json", "--runs", &id.to_string()]);
    let all: Value = serde_json::from_slice(&out).expect("JSON");
    all[0].clone()
}

fn decode(text: &str) -> Histogram<u64> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .expect("base64");
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("histogram")
}

fn ops(rec: &Value, phase: &str) -> Vec<Value> {
    rec[phase]["ops"].as_array().cloned().unwrap_or_default()
}

#[test]
fn csv_and_json_exports_round_trip_the_stored_numbers() {
    let sb = Sandbox::new();
    let redis = small_run(&sb, "redis");
    let memcached = small_run(&sb, "memcached");
    let ids = [&redis, &memcached].map(|r| r["id"].as_i64().expect("id"));

    // JSON: the records exactly as `show --json` prints them.
    let json: Value = serde_json::from_slice(&export(&sb, &["--format", "json"])).expect("JSON");
    for (i, id) in ids.iter().enumerate() {
        let shown = sb
            .kvbench()
            .args(["show", &id.to_string(), "--json"])
            .output()
            .expect("show");
        let shown: Value = serde_json::from_slice(&shown.stdout).expect("JSON");
        assert_eq!(json[i], shown);
    }

    // CSV: one row per run, phase and op; every number as stored.
    let csv = export(
        &sb,
        &[
            "--format",
            "csv",
            "--runs",
            &format!("{}-{}", ids[0], ids[1]),
        ],
    );
    let mut reader = csv::Reader::from_reader(csv.as_slice());
    let header = reader.headers().expect("header").clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    let col = |row: &csv::StringRecord, name: &str| -> String {
        let i = header.iter().position(|h| h == name).expect(name);
        row[i].to_string()
    };
    let mut checked = 0;
    for (rec, id) in [(&redis, ids[0]), (&memcached, ids[1])] {
        for phase in ["load", "run"] {
            for op in ops(rec, phase) {
                let row = rows
                    .iter()
                    .find(|r| {
                        col(r, "run_id") == id.to_string()
                            && col(r, "phase") == phase
                            && col(r, "op") == op["op"].as_str().unwrap()
                    })
                    .unwrap_or_else(|| panic!("no row for run {id} {phase} {}", op["op"]));
                for (column, stored) in [
                    ("completed", &op["completed"]),
                    ("misses", &op["misses"]),
                    ("errors", &op["errors"]),
                    ("throughput", &op["throughput"]),
                    ("p50_us", &op["latency"]["p50_us"]),
                    ("p95_us", &op["latency"]["p95_us"]),
                    ("p99_us", &op["latency"]["p99_us"]),
                    ("p999_us", &op["latency"]["p999_us"]),
                    ("max_us", &op["latency"]["max_us"]),
                    ("mean_us", &op["latency"]["mean_us"]),
                    ("phase_duration_s", &rec[phase]["duration_s"]),
                ] {
                    let got: f64 = col(row, column).parse().expect(column);
                    assert_eq!(Some(got), stored.as_f64(), "run {id} {phase} {column}");
                }
                for (column, stored) in [
                    (
                        "system",
                        rec["config"]["system"].as_str().unwrap().to_string(),
                    ),
                    ("status", rec["status"].as_str().unwrap().to_string()),
                    ("clients", rec["config"]["clients"].to_string()),
                    ("seed", rec["config"]["seed"].to_string()),
                    ("records", rec["config"]["records"].to_string()),
                    ("topology", "single".to_string()),
                ] {
                    assert_eq!(col(row, column), stored, "run {id} {column}");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(rows.len(), checked, "one row per run, phase and op");

    // --output: written whole, replacing what was there, readable, no
    // temporary left behind.
    let out = sb.path().join("runs.csv");
    std::fs::write(&out, "old").unwrap();
    let stdout = export(&sb, &["--format", "csv", "--output", out.to_str().unwrap()]);
    assert!(stdout.is_empty());
    let written = std::fs::read(&out).unwrap();
    assert_eq!(written, export(&sb, &["--format", "csv"]));
    let leftovers: Vec<PathBuf> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".kvbench-export-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The project's virtual environment, where scripts/setup installs the PyPI
/// `hdrhistogram` package.
pub(crate) fn python() -> PathBuf {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: run scripts/setup (it installs the Python HdrHistogram there)",
        py.display()
    );
    py
}

/// Reads one .hlog with the Python `hdrh` package and prints, per interval,
/// its start, length, count, p50/p99/p99.9 and every recorded bucket.
const READ_HLOG: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 60_000_000_000, 2))
out = []
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    out.append({
        "start_ms": h.get_start_time_stamp(),
        "end_ms": h.get_end_time_stamp(),
        "count": h.get_total_count(),
        "p50": h.get_value_at_percentile(50.0),
        "p99": h.get_value_at_percentile(99.0),
        "p999": h.get_value_at_percentile(99.9),
        "buckets": [[v.value_iterated_to, v.count_at_value_iterated_to]
                    for v in h.get_recorded_iterator()],
    })
print(json.dumps({"start_time": reader.get_start_time_sec(), "intervals": out}))
"#;

#[test]
fn hlog_files_read_back_in_python_with_the_stored_counts_and_percentiles() {
    let sb = Sandbox::new();
    // Open loop at a light rate for 2.5 s: three intervals, the last half long.
    let args = [
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--rate",
        "2000",
        "--duration",
        "2500ms",
        "--clients",
        "2",
        "--records",
        "2000",
        "--field-count",
        "4",
        "--field-length",
        "50",
        "--warmup",
        "100ms",
        "--quiet",
    ];
    let rec = run(&sb, &args);
    let id = rec["id"].as_i64().unwrap();
    let dir = sb.path().join("hdr");
    export_to_dir(&sb, "hlog", id, &dir);
    let started = humantime::parse_rfc3339_weak(rec["started_at"].as_str().unwrap())
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let mut compared = 0;
    for phase in ["load", "run"] {
        let series: Vec<Value> = rec[phase]["series"].as_array().cloned().unwrap_or_default();
        for op in ops(&rec, phase) {
            let name = op["op"].as_str().unwrap();
            let file = dir.join(format!("run-{id}-{phase}-{name}.hlog"));
            let out = std::process::Command::new(python())
                .args(["-c", READ_HLOG])
                .arg(&file)
                .output()
                .expect("python runs");
            assert!(
                out.status.success(),
                "{}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let read: Value = serde_json::from_slice(&out.stdout).expect("python's JSON");
            assert_eq!(read["start_time"].as_f64(), Some(started), "StartTime");
            let intervals = read["intervals"].as_array().unwrap();
            let points: Vec<&Value> = series.iter().filter(|p| p["op"] == op["op"]).collect();
            assert_eq!(
                intervals.len(),
                points.len(),
                "{phase}/{name}: one interval per second"
            );
            if phase == "run" {
                assert!(points.len() >= 3, "a 2.5 s window has three seconds");
            }
            let mut total = 0;
            for (interval, point) in intervals.iter().zip(&points) {
                let second = point["second"].as_u64().unwrap();
                let at = format!("{phase}/{name} second {second}");
                let start = interval["start_ms"].as_f64().unwrap() / 1000.0;
                assert_eq!(start, started + second as f64, "{at}: start");
                let count = interval["count"].as_u64().unwrap();
                assert_eq!(count, point["completed"].as_u64().unwrap(), "{at}: count");
                total += count;
                let Some(stored) = point["histogram"].as_str() else {
                    assert_eq!(count, 0, "{at}: no histogram stored, none read");
                    continue;
                };
                // The same buckets with the same counts, so any percentile
                // agrees under any rule...
                let h = decode(stored);
                let buckets: Vec<(u64, u64)> = h
                    .iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect();
                let theirs: Vec<(u64, u64)> = interval["buckets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| (b[0].as_u64().unwrap(), b[1].as_u64().unwrap()))
                    .collect();
                assert_eq!(theirs, buckets, "{at}: buckets");
                // ...and the stored percentiles are Python's wherever the two
                // rank rules agree (Rust takes ceil(q*n), Python rounds).
                for (key, stored_us, q) in [
                    ("p50", &point["p50_us"], 0.5),
                    ("p99", &point["p99_us"], 0.99),
                    ("p999", &point["p999_us"], 0.999),
                ] {
                    let n = count as f64;
                    if (q * n).ceil() != (q * n + 0.5).floor().max(1.0) {
                        continue;
                    }
                    let theirs = interval[key].as_u64().unwrap() as f64 / 1000.0;
                    assert_eq!(Some(theirs), stored_us.as_f64(), "{at}: {key}");
                    compared += 1;
                }
            }
            assert_eq!(
                total,
                op["completed"].as_u64().unwrap(),
                "{phase}/{name}: total"
            );
        }
    }
    assert!(compared >= 6, "only {compared} percentiles compared");
}

#[test]
fn hgrm_and_memtier_json_carry_the_stored_histograms() {
    let sb = Sandbox::new();
    let rec = small_run(&sb, "redis");
    let id = rec["id"].as_i64().unwrap();
    let dir = sb.path().join("hgrm");
    export_to_dir(&sb, "hgrm", id, &dir);
    for op in ops(&rec, "run") {
        let name = op["op"].as_str().unwrap();
        let text = std::fs::read_to_string(dir.join(format!("run-{id}-run-{name}.hgrm"))).unwrap();
        let h = decode(op["histogram"].as_str().unwrap());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        let mut rows = 0;
        for line in lines.iter().skip(2).take_while(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // Microseconds with 3 decimals: exactly the nanoseconds.
            let ns = (f[0].parse::<f64>().unwrap() * 1000.0).round() as u64;
            let total: u64 = f[2].parse().unwrap();
            assert_eq!(h.highest_equivalent(ns), ns, "{line}: a bucket's top");
            assert_eq!(h.count_between(0, ns), total, "{line}: values at or below");
            let percentile: f64 = f[1].parse().unwrap();
            assert!(
                total as f64 / h.len() as f64 >= percentile - 1e-12,
                "{line}"
            );
            rows += 1;
        }
        assert!(rows > 10, "{text}");
        let footer = lines[lines.len() - 2];
        assert_eq!(
            footer,
            format!(
                "#[Max     = {:>12.3}, Total count    = {:>12}]",
                op["latency"]["max_us"].as_f64().unwrap(),
                op["completed"].as_u64().unwrap()
            )
        );
    }

    let memtier: Value = serde_json::from_slice(&export(
        &sb,
        &["--format", "memtier-json", "--runs", &id.to_string()],
    ))
    .expect("JSON");
    let all = &memtier["ALL STATS"];
    let read = ops(&rec, "run")
        .into_iter()
        .find(|o| o["op"] == "read")
        .unwrap();
    let gets = &all["Gets"];
    assert_eq!(
        gets["Count"].as_u64(),
        Some(read["completed"].as_u64().unwrap() + read["misses"].as_u64().unwrap())
    );
    let window = rec["run"]["duration_s"].as_f64().unwrap();
    let hits = gets["Hits/sec"].as_f64().unwrap();
    assert!((hits - read["completed"].as_f64().unwrap() / window).abs() < 1e-9);
    for (key, stored) in [
        ("p50.00", "p50_us"),
        ("p99.00", "p99_us"),
        ("p99.90", "p999_us"),
    ] {
        let ms = gets["Percentile Latencies"][key].as_f64().unwrap();
        let us = read["latency"][stored].as_f64().unwrap();
        assert!(
            (ms * 1000.0 - us).abs() < 1e-9 * us,
            "{key}: {ms} ms vs {us} us"
        );
    }
    for group in ["Sets", "Gets", "Waits", "Totals"] {
        for key in [
            "Count",
            "Ops/sec",
            "Hits/sec",
            "Misses/sec",
            "Latency",
            "Average Latency",
            "Min Latency",
            "Max Latency",
            "KB/sec",
            "Time-Serie",
            "Percentile Latencies",
        ] {
            assert!(all[group].get(key).is_some(), "{group} has no {key}");
        }
    }
    assert_eq!(
        all["Totals"]["Count"].as_u64(),
        rec["run"]["completed"]
            .as_u64()
            .map(|c| c + read["misses"].as_u64().unwrap())
    );
    assert_eq!(memtier["run information"]["Format version"], 2);
    assert!(memtier["configuration"]["clients"].is_u64());
}

#[test]
fn bad_export_input_is_one_line_and_exit_2() {
    let sb = Sandbox::new();
    let db = sb.db();
    // An empty database: every id is unknown.
    kvbench_store::Store::open(&db).expect("creates");
    let db = db.to_str().unwrap();
    assert_usage_error(
        &sb,
        &["export", "--format", "csv", "--runs", "3", "--db", db],
        "no run with id 3",
    );
    assert_usage_error(
        &sb,
        &["export", "--format", "csv", "--runs", "3-x", "--db", db],
        "--runs '3-x'",
    );
    assert_usage_error(
        &sb,
        &["export", "--format", "csv", "--runs", "9-5", "--db", db],
        "backwards",
    );
    let file = sb.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_file = file.join("hdr");
    assert_usage_error(
        &sb,
        &[
            "export",
            "--format",
            "hlog",
            "--dir",
            under_file.to_str().unwrap(),
            "--db",
            db,
        ],
        "--dir",
    );
    assert_usage_error(
        &sb,
        &[
            "export",
            "--format",
            "csv",
            "--output",
            under_file.to_str().unwrap(),
            "--db",
            db,
        ],
        "--output",
    );
    assert_usage_error(&sb, &["export", "--format", "hgrm", "--db", db], "--dir");
    assert_usage_error(
        &sb,
        &["export", "--format", "memtier-json", "--db", db],
        "describes one run",
    );
}

#[test]
fn a_run_stored_before_interval_histograms_is_named_when_hlog_is_asked() {
    let sb = Sandbox::new();
    let rec = small_run(&sb, "memcached");
    // The same run as a kvbench before schema version 4 stored it.
    let mut old: kvbench_model::RunRecord = serde_json::from_value(show(&sb, 1)).unwrap();
    for phase in [old.load.as_mut(), old.run.as_mut()].into_iter().flatten() {
        for point in &mut phase.series {
            point.histogram.clear();
        }
    }
    let id = kvbench_store::Store::open(&sb.db())
        .unwrap()
        .save_run(&old)
        .unwrap();
    assert_eq!(rec["id"], 1);
    let dir = sb.path().join("hdr");
    assert_usage_error(
        &sb,
        &[
            "export",
            "--format",
            "hlog",
            "--runs",
            &id.to_string(),
            "--dir",
            dir.to_str().unwrap(),
        ],
        &format!("run {id} has no per-second histograms"),
    );
    // Every other format still exports it.
    export_to_dir(&sb, "hgrm", id, &dir);
}
