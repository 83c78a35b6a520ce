//! Every `kvbench` command in README.md and docs/*.md run as a user would
//! run it, scaled down, and its exit code checked (issue 36, item 4).
//!
//! tests/docs.rs only parses each command; this runs it. The substitutions
//! that make a minute's run a second's, and that aim a command at a host
//! this machine may not reach at a server of the same kind the test starts
//! on loopback, are the ones docs/reliability.md lists ("The documentation
//! is run"): a change here changes that list. A command that names run ids
//! runs against a copy of a store seeded with 12 runs, an experiment and 4
//! analytics runs, so every command sees the same store whatever ran before
//! it.

use crate::doc_commands::{commands, documents, root, DocCommand};
use crate::targets::{make_certs, Redis};
use crate::util::Sandbox;
use kvbench_model::SystemKind;
use kvbench_servers::{Cluster, SentinelGroup, ServerSpec};
use std::any::Any;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SPARK_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/python");
const PASSWORD: &str = "kvb-Doc-Pw-5c1e";
/// A command still running after this long is a hang.
const LIMIT: Duration = Duration::from_secs(300);
const RECORDS: u64 = 1000;
const CACHE_RECORDS: u64 = 20_000;
const CLIENTS: u64 = 4;

/// Commands another test already runs as the runner would (same scale),
/// by how their arguments begin: the file and test that run them. They are
/// not run twice (each takes 20 to 60 s on 2 cores); the test checks that
/// the named test still exists.
const RUN_ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "reproduce anthony2016",
        "reproduce.rs",
        "paper_a_at_a_tiny_scale_gives_every_finding_a_verdict",
    ),
    (
        "reproduce sadat2019",
        "reproduce.rs",
        "paper_b_at_a_tiny_scale_gives_every_finding_a_verdict_or_a_reason",
    ),
    (
        "reproduce altoros",
        "reproduce.rs",
        "paper_c_at_a_tiny_scale_runs_all_three_loads_and_judges_every_finding",
    ),
    (
        "reproduce zhang2014",
        "analytics.rs",
        "reproduce_zhang2014_runs_stores_and_judges_the_paper",
    ),
    (
        "run --system aerospike --target aerospike://",
        "aerospike.rs",
        "a_remote_aerospike_is_run_refused_when_full_and_its_password_kept_out",
    ),
];

/// What a documented command must do when run here.
#[derive(Debug, PartialEq)]
enum Expect {
    /// Exit 0; exit 3 (a run marked invalid, saying why) is accepted from
    /// a command that measures, as a tiny run on a busy machine may be.
    Success,
    /// Exit 2 with this text on stderr: what the docs promise where the
    /// command's precondition (a terminal, an asd, privileges) is missing.
    Refused(String),
}

/// A documented command as it runs here.
struct Plan {
    args: Vec<String>,
    env: Vec<(String, String)>,
    expect: Expect,
    /// Servers started for it (dropped, so stopped, after it).
    guards: Vec<Box<dyn Any>>,
}

fn ms(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// Each count at most `most`, repeats dropped, in their order (`1,4,8`
/// at most 4 is `1,4`).
fn capped(counts: impl Iterator<Item = u64>, most: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for n in counts.map(|n| n.min(most)) {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn min_list(v: &str, most: u64) -> String {
    let counts = v.split(',').filter_map(|n| n.trim().parse::<u64>().ok());
    capped(counts, most)
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn min_num(v: &str, most: f64) -> String {
    match v.parse::<f64>() {
        Ok(x) if x > most => most.to_string(),
        _ => v.to_string(),
    }
}

/// An experiment file copied into `dir` at the same relative path, its
/// dataset, windows, iterations and client counts cut down.
fn scaled_experiment(relative: &str, dir: &Path) -> String {
    let text = std::fs::read_to_string(root().join(relative)).expect("experiment file");
    let mut doc: toml::Table = toml::from_str(&text).expect("experiment TOML");
    doc.insert("iterations".into(), toml::Value::Integer(1));
    if let Some(t) = doc.get_mut("dataset").and_then(toml::Value::as_table_mut) {
        t.insert("records".into(), toml::Value::Integer(RECORDS as i64));
    }
    let run = doc
        .entry("run")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let Some(t) = run.as_table_mut() {
        t.insert("warmup".into(), toml::Value::String("100ms".into()));
        t.insert("duration".into(), toml::Value::String("300ms".into()));
    }
    if let Some(t) = doc.get_mut("sweep").and_then(toml::Value::as_table_mut) {
        if let Some(clients) = t.get("clients").and_then(toml::Value::as_array) {
            let counts = clients
                .iter()
                .filter_map(toml::Value::as_integer)
                .filter_map(|c| u64::try_from(c).ok());
            let cut = capped(counts, CLIENTS)
                .into_iter()
                .map(|c| toml::Value::Integer(c as i64))
                .collect();
            t.insert("clients".into(), toml::Value::Array(cut));
        }
    }
    let to = dir.join(relative);
    std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
    std::fs::write(&to, toml::to_string(&doc).expect("TOML")).expect("write");
    relative.to_string()
}

/// A server of the URL's kind on loopback, and the URL that reaches it.
fn local_target(url: &str, plan: &mut Plan) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("redis", url));
    let user = rest
        .split_once('@')
        .map(|(u, _)| u.split(':').next().unwrap_or(u).to_string());
    match scheme {
        "redis" => {
            let server = Redis::start("port {port}");
            let url = format!("redis://127.0.0.1:{}", server.port);
            plan.guards.push(Box::new(server));
            url
        }
        "rediss" => {
            let certs = tempfile::tempdir().expect("dir");
            let (ca, cert, key) = make_certs(certs.path(), "doc");
            let user = user.unwrap_or_else(|| "default".into());
            let server = Redis::start(&format!(
                "port 0\ntls-port {{port}}\ntls-cert-file {}\ntls-key-file {}\n\
                 tls-ca-cert-file {}\ntls-auth-clients no\nuser default off\n\
                 user {user} on >{PASSWORD} ~* &* +@all",
                cert.display(),
                key.display(),
                ca.display()
            ));
            let url = format!("rediss://{user}@127.0.0.1:{}", server.port);
            plan.args
                .extend(["--tls-ca".into(), ca.display().to_string()]);
            plan.guards.push(Box::new(server));
            plan.guards.push(Box::new(certs));
            url
        }
        "redis-cluster" => {
            let cluster =
                Cluster::start(&ServerSpec::new(SystemKind::Redis), 3, 0).expect("cluster");
            let url = format!("redis-cluster://{}", cluster.seeds()[0]);
            plan.guards.push(Box::new(cluster));
            url
        }
        "redis-sentinel" => {
            let group = SentinelGroup::start_on(
                &ServerSpec::new(SystemKind::Redis),
                2,
                kvbench_servers::Hosts::Loopback,
            )
            .expect("a Sentinel group");
            let sentinels: Vec<String> = group
                .sentinel_addrs()
                .iter()
                .map(ToString::to_string)
                .collect();
            let url = format!("redis-sentinel://{}/{}", sentinels.join(","), group.group());
            plan.guards.push(Box::new(group));
            url
        }
        other => panic!("{other}:// targets: no local server for them here"),
    }
}

/// The test that already runs `c` (see [`RUN_ELSEWHERE`]), checked to
/// exist.
fn run_elsewhere(c: &DocCommand) -> Option<String> {
    let line = c.args.join(" ");
    let (_, file, test) = RUN_ELSEWHERE.iter().find(|(p, _, _)| line.starts_with(p))?;
    let source = std::fs::read_to_string(root().join("crates/kvbench/tests").join(file))
        .expect("test source");
    assert!(
        source.contains(&format!("fn {test}(")),
        "{}: the test said to run it, {file}::{test}, is gone",
        c.place
    );
    Some(format!("{}::{test}", file.trim_end_matches(".rs")))
}

/// `c` scaled down and aimed at loopback, in sandbox `sb`.
fn plan(c: &DocCommand, sb: &Sandbox) -> Plan {
    let mut plan = Plan {
        args: Vec::new(),
        env: vec![("KVBENCH_PYTHON".into(), SPARK_PYTHON.into())],
        expect: Expect::Success,
        guards: Vec::new(),
    };
    let args = &c.args;
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    let sub = args.first().map(String::as_str).unwrap_or_default();
    let sub2 = args.get(1).map(String::as_str).unwrap_or_default();
    let paper = (sub == "reproduce").then_some(sub2);
    // A share of the data as a memory limit needs some MB of data to be
    // above a server's own baseline (docs/metrics.md).
    let records = if has("--max-memory") {
        CACHE_RECORDS
    } else {
        RECORDS
    };
    // One factor for the window and the times of the faults in it.
    let (duration, factor) = match value("--duration").map(humantime::parse_duration) {
        Some(Ok(d)) if paper.is_none() => {
            let to = (d / 10).clamp(Duration::from_millis(300), Duration::from_secs(2));
            (Some(to), to.as_secs_f64() / d.as_secs_f64())
        }
        _ => (None, 1.0),
    };
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        let Some(v) = args.get(i + 1).map(String::as_str) else {
            plan.args.push(flag.into());
            break;
        };
        let scaled = match flag {
            "--duration" => duration.map(ms),
            "--fault" => v.rsplit_once('@').and_then(|(what, at)| {
                let at = humantime::parse_duration(at).ok()?;
                Some(format!("{what}@{}", ms(at.mul_f64(factor))))
            }),
            "--records" => Some(min_num(v, records as f64)),
            "--key-maximum" => Some(min_num(v, (RECORDS - 1) as f64)),
            "--count" => Some(min_num(v, 20.0)),
            "--setget" => Some(min_num(v, 1.0)),
            "--threads" | "--workers" => Some(min_num(v, 2.0)),
            "--iterations" => Some("1".into()),
            "--clients" | "--with-clients" => Some(min_list(v, CLIENTS)),
            "--scale" => Some(min_num(
                v,
                if paper == Some("zhang2014") {
                    0.003
                } else {
                    0.001
                },
            )),
            "-p" => Some(match v.split_once('=') {
                Some((k @ ("recordcount" | "operationcount"), n)) => {
                    format!("{k}={}", min_num(n, RECORDS as f64))
                }
                _ => v.into(),
            }),
            "-P" => Some(root().join(v).display().to_string()),
            "--server-bin" => Some(
                kvbench_servers::find_binary(SystemKind::Redis, None)
                    .expect("redis-server on PATH")
                    .display()
                    .to_string(),
            ),
            "--spark-master" => Some("local[2]".into()),
            "--spark-conf" => Some(match v.split_once('=') {
                Some((k @ "spark.driver.host", _)) => format!("{k}=127.0.0.1"),
                _ => v.into(),
            }),
            "--target" => Some(local_target(v, &mut plan)),
            "--password-env" => {
                plan.env.push((v.into(), PASSWORD.into()));
                None
            }
            "--db" if v.starts_with("postgres://") => {
                let db = kvbench_store::testing::database();
                let url = db.location().to_string();
                plan.guards.push(Box::new(db));
                Some(url)
            }
            "--graph" if !v.starts_with("synthetic:") && !v.starts_with("rmat:") => {
                // A SNAP edge list of the same name: a ring of 50 pages.
                let mut text = String::from("# FromNodeId\tToNodeId\n");
                for n in 0..50 {
                    text.push_str(&format!("{n}\t{}\n{n}\t{}\n", (n + 1) % 50, (n + 7) % 50));
                }
                std::fs::write(sb.path().join(v), text).expect("edge list");
                None
            }
            "--file" | "run" if v.ends_with(".toml") => Some(scaled_experiment(v, sb.path())),
            _ => None,
        };
        if let Some(s) = scaled {
            plan.args.extend([flag.to_string(), s]);
            i += 2;
        } else {
            plan.args.push(flag.into());
            i += 1;
        }
    }
    let out = &mut plan.args;
    let add = |out: &mut Vec<String>, flag: &str, v: &str| {
        if !out.iter().any(|a| a == flag) {
            out.extend([flag.to_string(), v.to_string()]);
        }
    };
    match (sub, paper) {
        ("run" | "compare" | "findmax", _) => {
            if !has("--duration") && !has("--operations") && !has("-P") {
                add(out, "--duration", "300ms");
            }
            let memtier_like = value("--workload")
                .is_some_and(|w| w.contains('/') && !w.starts_with("ycsb/"))
                || value("--workload") == Some("memtier");
            if !has("--records") && !has("-P") && !memtier_like {
                add(out, "--records", &records.to_string());
            }
            add(out, "--warmup", "100ms");
            if !has("--json") {
                out.push("--quiet".into());
            }
        }
        (_, Some("zhang2014")) => add(out, "--scale", "0.003"),
        (_, Some(_)) => {
            add(out, "--scale", "0.001");
            add(out, "--duration", "300ms");
            add(out, "--warmup", "100ms");
            add(out, "--iterations", "1");
            if sub2 != "altoros" {
                add(out, "--clients", "1,4");
            }
        }
        ("analytics", _) if value("--graph").is_some_and(|g| g.starts_with("synthetic:")) => {
            add(out, "--scale", "0.001")
        }
        _ => {}
    }
    if sub == "delete" && !has("--yes") {
        plan.expect = Expect::Refused("--yes".into());
    }
    let aerospike = value("--system") == Some("aerospike");
    if aerospike && std::env::var_os("KVBENCH_AEROSPIKE_BIN").is_none_or(|v| v.is_empty()) {
        plan.expect = Expect::Refused("KVBENCH_AEROSPIKE_BIN".into());
    }
    if has("--netns") {
        let link = kvbench_servers::Link {
            rate_bits: None,
            delay: value("--link-delay")
                .and_then(|d| humantime::parse_duration(d).ok())
                .unwrap_or_default(),
        };
        if let Err(e) = kvbench_servers::netns::preflight(link) {
            let said = e.to_string();
            plan.expect = Expect::Refused(said.lines().next().unwrap_or_default().to_string());
        }
    }
    plan
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// The seeded store: runs 1 to 12 (a compare: 2 systems x 3 workloads x 2
/// client counts), 10 to 12 labelled `scratch`; the client-sweep
/// experiment; analytics runs 1 to 4 (PageRank twice, lookups twice).
fn seed() -> Sandbox {
    let sb = Sandbox::new();
    let file = scaled_experiment("experiments/client-sweep.toml", sb.path());
    let compare = "compare --systems redis,memcached --workloads read-heavy,balanced,write-heavy \
                   --clients 1,2 --records 1000 --duration 300ms --warmup 100ms --quiet";
    let mut steps: Vec<Vec<String>> = vec![
        words(compare),
        words("label 10-12 --add scratch"),
        words(&format!("experiment run {file} --quiet")),
    ];
    for (what, impls) in [
        ("pagerank", "reference,redis"),
        ("pagerank", "reference,memcached"),
        ("lookup --count 20", "redis"),
        ("lookup --count 20", "memcached"),
    ] {
        steps.push(words(&format!(
            "analytics {what} --graph synthetic:google --scale 0.001 --impl {impls}"
        )));
    }
    for args in &steps {
        let out = sb.kvbench().args(args).output().expect("kvbench runs");
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "seeding: kvbench {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    sb
}

/// Copies the seeded store (its WAL files too, if any) into `to`.
fn copy_store(from: &Sandbox, to: &Sandbox) {
    for suffix in ["", "-wal", "-shm"] {
        let name = format!("kvbench.db{suffix}");
        let src = from.path().join(&name);
        if src.exists() {
            std::fs::copy(&src, to.path().join(&name)).expect("copy store");
        }
    }
}

/// What a command did: its exit code, stdout, stderr and time.
struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `plan` in `sb`; `None` for a hang (killed after [`LIMIT`]).
fn execute(plan: &Plan, sb: &Sandbox) -> Option<Outcome> {
    let started = Instant::now();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("kvbench"))
        .args(&plan.args)
        .current_dir(sb.path())
        .env("TMPDIR", sb.tmp())
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvbench starts");
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(Outcome {
                code: status.code(),
                stdout: out.join().unwrap_or_default(),
                stderr: err.join().unwrap_or_default(),
                took: started.elapsed(),
            });
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the outcome is what `expect` asks; the reason when not.
fn judge(expect: &Expect, measures: bool, o: &Outcome) -> Result<(), String> {
    let invalid = o.stderr.contains("invalid") || o.stdout.contains("invalid");
    match (expect, o.code) {
        (Expect::Success, Some(0)) => Ok(()),
        (Expect::Success, Some(3)) if measures && invalid => Ok(()),
        (Expect::Refused(text), Some(2)) if o.stderr.contains(text.as_str()) => Ok(()),
        _ => Err(format!(
            "expected {expect:?}, got exit {:?}: {}",
            o.code,
            o.stderr.trim()
        )),
    }
}

#[test]
fn every_documented_command_runs_scaled_down_with_the_documented_exit_code() {
    let all: Vec<DocCommand> = documents()
        .iter()
        .flat_map(|d| commands(d, &mut 0))
        .collect();
    let seeded = {
        let _serial = crate::util::timing_sensitive();
        seed()
    };
    let mut seen: Vec<Vec<String>> = Vec::new();
    let (mut ran, mut same, mut elsewhere) = (0, 0, 0);
    let mut failed = Vec::new();
    for c in &all {
        if let Some(test) = run_elsewhere(c) {
            println!("{}: kvbench {}: run by {test}", c.place, c.args.join(" "));
            elsewhere += 1;
            continue;
        }
        let sb = Sandbox::new();
        copy_store(&seeded, &sb);
        let _serial = crate::util::timing_sensitive();
        let plan = plan(c, &sb);
        // A second copy of a command (the docs repeat a few, some with
        // another window or flags in another order) runs once; a relative
        // --db names a fresh store either way.
        let key: Vec<String> = {
            let mut k = plan.args.clone();
            for flag in ["--db", "--duration"] {
                if let Some(i) = k.iter().position(|a| a == flag) {
                    if k.get(i + 1).is_some_and(|d| !d.contains("://")) {
                        k.drain(i..i + 2);
                    }
                }
            }
            k.sort();
            k
        };
        if plan.guards.is_empty() && seen.contains(&key) {
            same += 1;
            continue;
        }
        seen.push(key);
        let measures = matches!(
            c.args.first().map(String::as_str),
            Some("run" | "compare" | "findmax" | "reproduce" | "experiment")
        );
        ran += 1;
        match execute(&plan, &sb) {
            None => failed.push(format!(
                "{}: kvbench {}\n    ran as: kvbench {}\n    still running after {LIMIT:?}",
                c.place,
                c.args.join(" "),
                plan.args.join(" ")
            )),
            Some(o) => {
                println!(
                    "{}: exit {:?} in {:.1} s: kvbench {}",
                    c.place,
                    o.code,
                    o.took.as_secs_f64(),
                    plan.args.join(" ")
                );
                if let Err(why) = judge(&plan.expect, measures, &o) {
                    failed.push(format!(
                        "{}: kvbench {}\n    ran as: kvbench {}\n    {why}",
                        c.place,
                        c.args.join(" "),
                        plan.args.join(" ")
                    ));
                }
            }
        }
        drop(plan);
    }
    println!(
        "{ran} documented commands run, {same} repeats of them, {elsewhere} run by other tests"
    );
    assert!(ran > 50, "only {ran} commands ran");
    assert!(
        elsewhere <= RUN_ELSEWHERE.len() * 3,
        "{elsewhere} run elsewhere"
    );
    assert!(
        failed.is_empty(),
        "{} of {ran} documented commands did not do what the docs say:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
