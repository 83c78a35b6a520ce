//! The live view: `--metrics-listen` scraped during a real run and parsed
//! as the Prometheus text exposition format (by the Prometheus project's
//! Python client, which scripts/setup installs into .venv, and by a strict
//! line check here), the per-second lines on a non-terminal stderr, and
//! `--quiet`.

use crate::bad_input::assert_usage_error;
use crate::export::python;
use crate::util::{timing_sensitive, Sandbox};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

const DATA: &[&str] = &[
    "--records",
    "2000",
    "--field-count",
    "4",
    "--field-length",
    "50",
];

/// A loopback port nothing listens on (now).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `GET /metrics`: the status line, the headers (lowercase names) and the
/// body; `None` while nothing listens.
fn scrape(port: u16) -> Option<(String, BTreeMap<String, String>, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or("").to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some((status, headers, body.to_string()))
}

/// Parses each body with prometheus_client's text parser; per body, its
/// families with their samples.
const PARSE: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for body in json.load(sys.stdin):
    out.append([{
        "name": f.name, "type": f.type, "help": f.documentation,
        "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples],
    } for f in text_string_to_metric_families(body)])
print(json.dumps(out))
"#;

fn parse_in_python(bodies: &[String]) -> Vec<Value> {
    let mut child = std::process::Command::new(python())
        .args(["-c", PARSE])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python starts");
    let input = serde_json::to_vec(bodies).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().expect("python runs");
    assert!(
        out.status.success(),
        "prometheus_client could not parse a scrape (is it installed? run scripts/setup): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).expect("the parser's JSON")
}

fn is_name(n: &str) -> bool {
    let mut chars = n.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// The text format, strictly: every family once, `# HELP` then `# TYPE`
/// then its samples; names and labels well formed, label values escaped,
/// values numbers, a line feed after every line.
fn check_strictly(body: &str) {
    assert!(body.ends_with('\n') && !body.contains('\r'), "{body:?}");
    let mut seen = HashSet::new();
    let mut family: Option<(String, String)> = None;
    let mut lines = body.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP name text");
            assert!(is_name(name) && !help.is_empty(), "{line}");
            assert!(seen.insert(name.to_string()), "{name} declared twice");
            let ty = lines.next().expect("TYPE after HELP");
            let t = ty
                .strip_prefix(&format!("# TYPE {name} "))
                .unwrap_or_else(|| panic!("'{ty}' should declare {name}'s type"));
            assert!(["gauge", "counter"].contains(&t), "{ty}");
            family = Some((name.to_string(), t.to_string()));
            continue;
        }
        assert!(!line.starts_with('#'), "a stray comment: {line}");
        let (name, kind) = family.clone().expect("a sample after its TYPE");
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        value
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("'{value}' is not a number: {line}"));
        let (sample, labels) = match series.split_once('{') {
            Some((n, l)) => (n, l.strip_suffix('}').expect("closing brace")),
            None => (series, ""),
        };
        assert_eq!(sample, name, "{line}");
        if kind == "counter" {
            assert!(name.ends_with("_total"), "{name}");
        }
        // key="value" pairs, comma-separated; inside a value only \\, \" and \n.
        let mut rest = labels;
        while !rest.is_empty() {
            let (key, after) = rest.split_once("=\"").expect("key=\"value\"");
            assert!(is_name(key) && !key.starts_with("__"), "{line}");
            let mut chars = after.char_indices();
            let end = loop {
                match chars.next().expect("an unterminated label value") {
                    (_, '\\') => {
                        let (_, e) = chars.next().expect("an escape");
                        assert!(['\\', '"', 'n'].contains(&e), "{line}");
                    }
                    (i, '"') => break i,
                    (_, '\n') => panic!("a raw line feed: {line}"),
                    _ => {}
                }
            };
            rest = &after[end + 1..];
            rest = rest.strip_prefix(',').unwrap_or(rest);
        }
    }
}

fn family<'a>(families: &'a Value, name: &str) -> Option<&'a Value> {
    families
        .as_array()?
        .iter()
        .find(|f| f["name"].as_str() == Some(name))
}

/// The samples named `name` whose labels include `want`.
fn samples<'a>(families: &'a Value, name: &str, want: &[(&str, &str)]) -> Vec<&'a Value> {
    families
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["samples"].as_array())
        .flatten()
        .filter(|s| s["name"].as_str() == Some(name))
        .filter(|s| want.iter().all(|(k, v)| s["labels"][k].as_str() == Some(v)))
        .collect()
}

fn value(families: &Value, name: &str, want: &[(&str, &str)]) -> Option<f64> {
    samples(families, name, want)
        .first()
        .and_then(|s| s["value"].as_f64())
}

/// Reads a child's pipe to the end on a thread (so it never blocks on a
/// full pipe while the test scrapes).
fn drain(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let mut pipe = pipe;
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

#[test]
fn the_metrics_endpoint_is_scraped_during_a_run_and_parses_as_the_text_format() {
    let _serial = timing_sensitive();
    let sb = Sandbox::new();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut args = vec![
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--clients",
        "2",
        "--duration",
        "4s",
        "--warmup",
        "500ms",
        "--quiet",
        "--json",
        "--metrics-listen",
        &listen,
    ];
    args.extend_from_slice(DATA);
    let mut child = sb.spawn(&args);
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut bodies = Vec::new();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "kvbench did not finish");
        if let Some((line, headers, body)) = scrape(port) {
            assert_eq!(line, "HTTP/1.1 200 OK");
            assert_eq!(
                headers.get("content-type").map(String::as_str),
                Some("text/plain; version=0.0.4; charset=utf-8")
            );
            assert_eq!(headers.get("content-length"), Some(&body.len().to_string()));
            bodies.push(body);
        }
        std::thread::sleep(Duration::from_millis(150));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    assert!(
        matches!(status.code(), Some(0 | 3)),
        "exit {status}: {stderr}"
    );
    // The listener went with the process.
    assert!(scrape(port).is_none(), "still listening after the exit");
    for body in &bodies {
        check_strictly(body);
    }
    let parsed = parse_in_python(&bodies);
    let redis = [("system", "redis"), ("workload", "balanced")];
    let measuring: Vec<&Value> = parsed
        .iter()
        .filter(|f| value(f, "kvbench_state", &[("state", "measuring")]) == Some(1.0))
        .collect();
    assert!(
        measuring.len() >= 5,
        "{} of {} scrapes while measuring",
        measuring.len(),
        bodies.len()
    );
    for f in &parsed {
        let info = samples(f, "kvbench_cell_info", &redis);
        assert_eq!(
            info.len(),
            1,
            "the cell's labels name the system and workload"
        );
        assert_eq!(info[0]["labels"]["clients"], "2");
        assert_eq!(value(f, "kvbench_cells", &[]), Some(1.0));
        let states: f64 = samples(f, "kvbench_state", &[])
            .iter()
            .filter_map(|s| s["value"].as_f64())
            .sum();
        assert_eq!(states, 1.0, "exactly one state at a time");
        // The parser names a counter's family without its _total.
        assert_eq!(family(f, "kvbench_completed").unwrap()["type"], "counter");
    }
    // Throughput becomes positive while measuring, and the completed
    // counter only grows.
    let tput: Vec<f64> = measuring
        .iter()
        .filter_map(|f| {
            value(
                f,
                "kvbench_throughput_ops_per_second",
                &[redis[0], redis[1], ("op", "all")],
            )
        })
        .collect();
    assert!(tput.iter().any(|&t| t > 0.0), "{tput:?}");
    let completed: Vec<f64> = parsed
        .iter()
        .filter_map(|f| value(f, "kvbench_completed_total", &redis))
        .collect();
    assert!(completed.windows(2).all(|w| w[0] <= w[1]), "{completed:?}");
    assert!(completed.last().is_some_and(|&c| c > 0.0), "{completed:?}");

    // Each scraped second says what the stored series says of it.
    let rec: Value = serde_json::from_str(&stdout).expect("the run as JSON");
    let mut stored: BTreeMap<u64, f64> = BTreeMap::new();
    for p in rec["run"]["series"].as_array().unwrap() {
        *stored.entry(p["second"].as_u64().unwrap()).or_default() +=
            p["completed"].as_f64().unwrap();
    }
    let mut compared = 0;
    for f in &parsed {
        let (Some(n), Some(t)) = (
            value(f, "kvbench_window_second", &redis),
            value(f, "kvbench_throughput_ops_per_second", &[("op", "all")]),
        ) else {
            continue;
        };
        assert_eq!(stored.get(&(n as u64 - 1)), Some(&t), "second {n}");
        let p99 = value(f, "kvbench_latency_p99_seconds", &[("op", "all")]).unwrap();
        let p50 = value(f, "kvbench_latency_p50_seconds", &[("op", "all")]).unwrap();
        assert!(0.0 < p50 && p50 <= p99 && p99 < 1.0, "{p50} {p99}");
        compared += 1;
    }
    assert!(compared >= 3, "{compared} scrapes had a finished second");
}

/// `  run 3s  41,230 ops/s  p50 112 us  p99 480 us  errors 0` as (end of
/// the second in s, ops/s, p50, p99, errors).
fn second_line(line: &str) -> Option<(f64, f64, f64, f64, u64)> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let num = |s: &str| s.replace(',', "").parse::<f64>().ok();
    match t.as_slice() {
        ["run", at, ops, "ops/s", "p50", p50, "us", "p99", p99, "us", "errors", errors] => Some((
            num(at.strip_suffix('s')?)?,
            num(ops)?,
            num(p50)?,
            num(p99)?,
            errors.replace(',', "").parse().ok()?,
        )),
        _ => None,
    }
}

#[test]
fn a_log_gets_one_line_per_second_and_quiet_gets_none() {
    let _serial = timing_sensitive();
    let sb = Sandbox::new();
    let mut args = vec![
        "run",
        "--system",
        "memcached",
        "--workload",
        "read-heavy",
        "--clients",
        "2",
        "--duration",
        "3s",
        "--warmup",
        "200ms",
        "--json",
    ];
    args.extend_from_slice(DATA);
    // stderr is a pipe here, not a terminal: no bar, but the lines.
    let out = sb.kvbench().args(&args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{stderr}");
    let lines: Vec<(f64, f64, f64, f64, u64)> = stderr
        .lines()
        .filter(|l| l.contains("ops/s"))
        .map(|l| second_line(l).unwrap_or_else(|| panic!("'{l}' is not a per-second line")))
        .collect();
    assert_eq!(
        lines.len(),
        3,
        "one line per second of a 3 s window: {stderr}"
    );
    let rec: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut stored = [0.0; 3];
    for p in rec["run"]["series"].as_array().unwrap() {
        stored[p["second"].as_u64().unwrap() as usize] += p["completed"].as_f64().unwrap();
    }
    for (i, (at, ops, p50, p99, errors)) in lines.iter().enumerate() {
        assert_eq!(*at, i as f64 + 1.0, "{stderr}");
        assert_eq!(*ops, stored[i], "second {}: {stderr}", i + 1);
        assert!(0.0 < *p50 && p50 <= p99, "{stderr}");
        assert_eq!(*errors, 0);
    }

    // An operation-bound window ends inside a second: its last line gives
    // that part's rate and where it ended. Each cell of a sweep is named
    // before its lines.
    let mut sweep = vec![
        "compare",
        "--systems",
        "redis",
        "--workloads",
        "read-heavy",
        "--clients",
        "1,2",
        // Enough for a window of a few tenths of a second even at 100,000
        // ops/s: the last line's end must read above 0.0 s.
        "--operations",
        "30000",
        "--warmup",
        "100ms",
        "--json",
    ];
    sweep.extend_from_slice(DATA);
    let out = sb.kvbench().args(&sweep).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{stderr}");
    // compare is an experiment: its cells are named as experiment run names them.
    let first = stderr
        .find("cell 1/2: #0 redis single read-heavy x1")
        .expect(&stderr);
    let second = stderr
        .find("cell 2/2: #1 redis single read-heavy x2")
        .expect(&stderr);
    for part in [&stderr[first..second], &stderr[second..]] {
        let mut ends: Vec<f64> = part.lines().filter_map(second_line).map(|l| l.0).collect();
        assert!(!ends.is_empty(), "{stderr}");
        let last = ends.pop().unwrap();
        assert!(ends.iter().enumerate().all(|(i, &e)| e == i as f64 + 1.0));
        assert!(
            last > ends.len() as f64 && last <= ends.len() as f64 + 1.0,
            "{stderr}"
        );
    }

    // --quiet: nothing of it.
    let quiet: Vec<&str> = args.iter().copied().chain(["--quiet"]).collect();
    let out = sb.kvbench().args(&quiet).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{stderr}");
    assert!(!stderr.contains("ops/s"), "{stderr}");
}

#[test]
fn a_bad_metrics_listen_is_bad_input_before_anything_starts() {
    let sb = Sandbox::new();
    let run = |addr: &str| -> Vec<String> {
        [
            "run",
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--metrics-listen",
            addr,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for bad in ["localhost", "127.0.0.1", "127.0.0.1:99999", "metrics:9464"] {
        let args = run(bad);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_usage_error(
            &sb,
            &args,
            &format!("--metrics-listen {bad}: not an address"),
        );
    }
    // A port in use, by run, compare and experiment run.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let args = run(&addr);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_usage_error(
        &sb,
        &args,
        &format!("--metrics-listen {addr}: cannot listen"),
    );
    assert_usage_error(
        &sb,
        &["compare", "--systems", "redis", "--metrics-listen", &addr],
        "--metrics-listen",
    );
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/client-sweep.toml"
    );
    assert_usage_error(
        &sb,
        &["experiment", "run", file, "--metrics-listen", &addr],
        "--metrics-listen",
    );
    // Nothing ran: no run stored.
    if sb.db().exists() {
        let runs = sb.stdout(&["runs", "--json"]);
        assert_eq!(runs.trim(), "[]", "{runs}");
    }
}
