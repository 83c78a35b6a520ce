//! Scale-out (`run --workers N`): the run phase from N kvbench processes
//! started as Spark barrier tasks in `local[N]`, against a real Redis. What
//! the workers send together must be exactly what one process sends for the
//! same seed, and their merge exactly what the server counted; a worker that
//! dies fails the run, named, with nothing merged.

use crate::util::{alive, private_redis, processes, Sandbox};
use kvbench_servers::Server;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

const SPARK_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/python");

/// The server's per-command calls since `CONFIG RESETSTAT`, without the
/// commands kvbench's probes and this test send.
fn data_commands(server: &Server) -> BTreeMap<String, u64> {
    server
        .command_stats()
        .expect("command stats")
        .into_iter()
        // `info` probes, `ping` the target check's connections (as many as
        // the run holds), `config` the test's own reset.
        .filter(|(name, _)| {
            !matches!(
                name.as_str(),
                "info" | "ping" | "config|resetstat" | "config"
            )
        })
        .filter(|(name, _)| !name.starts_with("config"))
        .collect()
}

fn reset_stats(server: &Server) {
    let out = Command::new("redis-cli")
        .args([
            "-p",
            &server.addr().port().to_string(),
            "CONFIG",
            "RESETSTAT",
        ])
        .output()
        .expect("redis-cli");
    assert!(out.status.success(), "{out:?}");
}

fn run(sb: &Sandbox, url: &str, extra: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let mut args = vec![
        "run",
        "--system",
        "redis",
        "--workload",
        "read-heavy",
        "--target",
        url,
        "--records",
        "2000",
        "--operations",
        "6000",
        "--clients",
        "8",
        "--seed",
        "7",
        "--warmup",
        "0s",
        "--quiet",
        "--json",
    ];
    args.extend(extra);
    with_spark(sb, &args)
}

/// kvbench with `args`, with PySpark at hand: its exit code, its JSON
/// (null when there is none) and its stderr.
fn with_spark(sb: &Sandbox, args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let out = sb
        .kvbench()
        .args(args)
        .env("KVBENCH_PYTHON", SPARK_PYTHON)
        .output()
        .expect("kvbench runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), json, stderr)
}

/// A scaled-out phase's workers: how many, and their completed operations summed.
fn workers_completed(phase: &serde_json::Value) -> (usize, u64) {
    let workers = phase["scale_out"]["workers"]
        .as_array()
        .expect("the phase's workers");
    let sum = workers
        .iter()
        .map(|w| w["completed"].as_u64().expect("completed"))
        .sum();
    (workers.len(), sum)
}

fn completed(rec: &serde_json::Value, op: &str) -> u64 {
    crate::util::op(rec, op)["completed"]
        .as_u64()
        .expect("completed")
}

#[test]
fn four_workers_send_what_one_process_sends_and_merge_to_the_servers_counts() {
    let _heavy = crate::util::timing_sensitive();
    let server = private_redis();
    let url = format!("redis://{}", server.addr());
    let sb = Sandbox::new();
    // Load once, from 4 workers too; both measured runs then read and
    // update the same records.
    let (code, loaded, err) = run(&sb, &url, &["--workers", "4", "--load-clients", "4"]);
    assert!(matches!(code, Some(0) | Some(3)), "{err}");
    assert_eq!(loaded["load"]["completed"].as_u64(), Some(2000), "{err}");
    assert_eq!(
        loaded["load"]["scale_out"]["workers"]
            .as_array()
            .map(Vec::len),
        Some(4)
    );
    let keys = server.info().expect("info")["db0"].clone();
    assert!(keys.starts_with("keys=2000,"), "{keys}");

    reset_stats(&server);
    let (code, one, err) = run(&sb, &url, &["--no-load"]);
    assert_eq!(code, Some(0), "{err}");
    let by_one = data_commands(&server);

    reset_stats(&server);
    let (code, four, err) = run(&sb, &url, &["--no-load", "--workers", "4"]);
    assert!(matches!(code, Some(0) | Some(3)), "{err}");
    let by_four = data_commands(&server);

    // The union of the workers' streams is the single process's stream.
    assert!(!by_one.is_empty());
    assert_eq!(
        by_four, by_one,
        "per-command calls: four workers vs one process"
    );
    // The merged counts are what the server executed, kind by kind.
    let (reads, updates) = (completed(&four, "read"), completed(&four, "update"));
    assert_eq!(reads, completed(&one, "read"));
    assert_eq!(updates, completed(&one, "update"));
    assert_eq!(reads + updates, 6000);
    assert_eq!(by_four.values().sum::<u64>(), 6000, "{by_four:?}");
    assert_eq!(four["run"]["completed"].as_u64(), Some(6000));
    // Histograms were added, not averaged: the merged histogram holds every
    // worker's operations.
    for op in ["read", "update"] {
        let o = crate::util::op(&four, op);
        assert_eq!(
            o["latency"]["count"].as_u64(),
            o["completed"].as_u64(),
            "{op}"
        );
    }
    let so = &four["run"]["scale_out"];
    let workers = so["workers"].as_array().expect("workers");
    assert_eq!(workers.len(), 4);
    let sum: u64 = workers
        .iter()
        .map(|w| w["completed"].as_u64().expect("n"))
        .sum();
    assert_eq!(sum, 6000);
    for (i, w) in workers.iter().enumerate() {
        assert_eq!(w["worker"].as_u64(), Some(i as u64));
        assert_eq!(w["clients"].as_u64(), Some(2));
        assert!(w["client_cpu_seconds"].as_f64().expect("cpu") > 0.0);
        assert!(w["clock_rtt_ms"].as_f64().expect("rtt") < 50.0, "{w}");
    }
    assert_eq!(so["spark_master"], "local[4]");
    assert!(so["spark_startup_s"].as_f64().expect("startup") > 0.0);
    let spread = so["start_spread_ms"].as_f64().expect("spread");
    assert!((0.0..1000.0).contains(&spread), "{spread}");
    assert_eq!(four["config"]["scale_out"]["workers"].as_u64(), Some(4));
    // The client CPU of the run is the workers' sum.
    let cpu: f64 = workers
        .iter()
        .map(|w| w["client_cpu_seconds"].as_f64().expect("cpu"))
        .sum();
    let stored = four["cpu"]["client_seconds"].as_f64().expect("client cpu");
    assert!((stored - cpu).abs() < 1e-9, "{stored} vs {cpu}");
    assert!(no_workers_left(), "a kvbench worker outlived its run");
}

/// Whether no `kvbench worker` process is running.
fn no_workers_left() -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = worker_pids(None);
        if left.is_empty() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Running `kvbench worker` processes, of one slice when given.
fn worker_pids(slice: Option<&str>) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|p| alive(p.pid))
        .filter(|p| {
            let cmdline = std::fs::read(format!("/proc/{}/cmdline", p.pid)).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            let is_worker = args.len() > 2 && args[0].ends_with(b"kvbench") && args[1] == b"worker";
            is_worker && slice.is_none_or(|s| args.contains(&s.as_bytes()))
        })
        .map(|p| p.pid)
        .collect()
}

/// Waits (at most 120 s: Spark starts first) until at least `n` workers
/// (of one slice when given) run, and returns their pids.
fn wait_for_workers(slice: Option<&str>, n: usize) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let pids = worker_pids(slice);
        if pids.len() >= n {
            return pids;
        }
        assert!(
            Instant::now() < deadline,
            "{n} workers {slice:?} never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A 60 s `run --workers` against `url` in the background, its JSON on
/// stdout. One load client: the load runs as worker 0/1, so a worker `I/N`
/// with N > 1 is one of the run phase's.
fn spawn_workers(sb: &Sandbox, url: &str, clients: u32, workers: u32) -> std::process::Child {
    let (clients, workers) = (clients.to_string(), workers.to_string());
    sb.spawn_env(
        &[
            "run",
            "--system",
            "redis",
            "--workload",
            "read-heavy",
            "--target",
            url,
            "--records",
            "1000",
            "--load-clients",
            "1",
            "--clients",
            &clients,
            "--workers",
            &workers,
            "--duration",
            "60s",
            "--json",
        ],
        &[("KVBENCH_PYTHON", SPARK_PYTHON)],
    )
}

#[test]
fn a_killed_worker_fails_the_run_names_it_and_nothing_is_merged() {
    let _heavy = crate::util::timing_sensitive();
    let server = private_redis();
    let url = format!("redis://{}", server.addr());
    let sb = Sandbox::new();
    let child = spawn_workers(&sb, &url, 4, 4);
    // Wait for worker 2, let the window begin, then kill it.
    let victim = wait_for_workers(Some("2/4"), 1)[0];
    std::thread::sleep(Duration::from_secs(4));
    let killed_at = Instant::now();
    // SAFETY: a signal to a process this test's kvbench started.
    unsafe {
        libc::kill(victim as libc::pid_t, libc::SIGKILL);
    }
    let out = child.wait_with_output().expect("kvbench ends");
    let took = killed_at.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The others were stopped, not left to run out their 60 s window.
    assert!(
        took < Duration::from_secs(30),
        "took {took:?} after the kill: {stderr} {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let rec: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the failed run as JSON");
    assert_eq!(rec["status"], "failed");
    let failure = rec["failure"].as_str().expect("failure");
    assert!(
        failure.contains("worker 2: kvbench worker 2/4"),
        "{failure}"
    );
    assert!(failure.contains("killed by signal 9"), "{failure}");
    assert!(failure.contains("the other 3 were stopped"), "{failure}");
    assert!(
        rec["run"].is_null(),
        "a merged result was kept: {}",
        rec["run"]
    );
    // Stored as a failed run, without a run phase.
    let id = rec["id"].as_i64().expect("id").to_string();
    let shown = sb.json(&[
        "show",
        &id,
        "--json",
        "--db",
        sb.db().to_str().expect("utf-8"),
    ]);
    assert_eq!(shown["status"], "failed");
    assert!(shown["run"].is_null());
    assert!(no_workers_left(), "a kvbench worker outlived its run");
}

#[test]
fn an_interrupted_scaled_out_run_stops_spark_and_every_worker() {
    let _heavy = crate::util::timing_sensitive();
    let server = private_redis();
    let url = format!("redis://{}", server.addr());
    let sb = Sandbox::new();
    let child = spawn_workers(&sb, &url, 2, 2);
    wait_for_workers(None, 2);
    std::thread::sleep(Duration::from_secs(4));
    let asked = Instant::now();
    // SAFETY: a signal to the kvbench this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = child.wait_with_output().expect("kvbench ends");
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "took {:?} to stop",
        asked.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the run as JSON");
    assert_eq!(rec["status"], "failed");
    assert!(rec["run"].is_null(), "{}", rec["run"]);
    assert!(no_workers_left(), "a kvbench worker outlived its run");
}

/// `compare` passes `--workers` to every cell as the `run` flag it is; the
/// number of workers is part of the cell, so the same comparison without
/// them is another experiment, not a stored one.
#[test]
fn compare_runs_each_cell_from_workers() {
    let _heavy = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let compare = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            "--systems",
            "redis",
            "--workloads",
            "read-heavy",
            "--clients",
            "4",
            "--records",
            "500",
            "--operations",
            "2000",
            "--warmup",
            "0s",
            "--quiet",
            "--json",
        ];
        args.extend(extra);
        let (code, runs, stderr) = with_spark(&sb, &args);
        assert!(matches!(code, Some(0) | Some(3)), "{stderr}");
        let runs = runs.as_array().expect("runs").clone();
        assert_eq!(runs.len(), 1, "{runs:?}");
        runs.into_iter().next().expect("one run")
    };
    let split = compare(&["--workers", "2"]);
    assert_eq!(split["config"]["scale_out"]["workers"].as_u64(), Some(2));
    assert_eq!(workers_completed(&split["run"]), (2, 2000));
    assert_eq!(split["run"]["completed"].as_u64(), Some(2000));

    let whole = compare(&[]);
    assert!(
        whole["config"]["scale_out"].is_null(),
        "{}",
        whole["config"]
    );
    assert_ne!(whole["id"], split["id"], "measured, not the stored cell");
}

/// A TLS target with mutual TLS and an ACL password: the workers get the
/// certificates as text in their task and the key and password from their
/// environment, never on a command line or in the task.
#[test]
fn workers_reach_a_mutual_tls_target_with_a_password() {
    let _heavy = crate::util::timing_sensitive();
    let certs = tempfile::tempdir().expect("dir");
    let (ca, cert, key) = crate::targets::make_certs(certs.path(), "w");
    let password = "kvb-Worker-Secret-31";
    let server = crate::targets::Redis::start(&format!(
        "port 0\ntls-port {{port}}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\ntls-auth-clients yes\nuser default off\nuser app on >{password} ~* &* +@all",
        cert.display(),
        key.display(),
        ca.display()
    ));
    let sb = Sandbox::new();
    let url = format!("rediss://app@127.0.0.1:{}", server.port);
    let (ca, cert, key) = (
        ca.display().to_string(),
        cert.display().to_string(),
        key.display().to_string(),
    );
    let args = [
        "run",
        "--system",
        "redis",
        "--workload",
        "read-heavy",
        "--target",
        &url,
        "--password-env",
        "KVB_TEST_PW",
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--cleanup",
        "--records",
        "500",
        "--operations",
        "2000",
        "--clients",
        "4",
        "--workers",
        "2",
        "--warmup",
        "0s",
        "--quiet",
        "--json",
    ];
    let out = sb
        .kvbench()
        .args(args)
        .env("KVBENCH_PYTHON", SPARK_PYTHON)
        .env("KVB_TEST_PW", password)
        .output()
        .expect("kvbench runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "{stdout}\n{stderr}"
    );
    let rec: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(rec["run"]["completed"].as_u64(), Some(2000), "{stdout}");
    assert_eq!(workers_completed(&rec["run"]), (2, 2000));
    // The load went through a worker too, over the same TLS.
    assert_eq!(
        rec["load"]["scale_out"]["workers"].as_array().map(Vec::len),
        Some(2),
        "{}",
        rec["load"]
    );
    let key_text = std::fs::read_to_string(&key).expect("key");
    let key_body = key_text.lines().nth(1).expect("a PEM body line");
    for text in [&stdout, &stderr] {
        assert!(!text.contains(password), "the password was printed");
        assert!(!text.contains(key_body), "the TLS key was printed");
    }
}

/// `--with` beside workers: the second group runs in the driver and starts
/// at the workers' agreed instant, so the groups overlap. If it started on
/// its own (before Spark's start-up was over), its window would end before
/// the workers' began and their SETs would not slow down.
#[test]
fn a_with_group_runs_in_the_workers_window() {
    let _heavy = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let simple = [
        "run",
        "--system",
        "redis",
        "--workload",
        "altoros/simple",
        "--key-maximum",
        "9999",
        "--clients",
        "2",
        "--pipeline",
        "4",
        "--workers",
        "2",
        "--duration",
        "3s",
        "--warmup",
        "500ms",
        "--quiet",
        "--json",
    ];
    let sets = |rec: &serde_json::Value| {
        crate::util::op(rec, "update")["throughput"]
            .as_f64()
            .expect("SETs per second")
    };
    let (code, alone, err) = with_spark(&sb, &simple);
    assert!(matches!(code, Some(0) | Some(3)), "{err}");
    let mut args = simple.to_vec();
    args.extend([
        "--with",
        "zunionstore",
        "--with-clients",
        "2",
        "--with-property",
        "kvbench.zset.members=5000",
    ]);
    let (code, both, err) = with_spark(&sb, &args);
    assert!(matches!(code, Some(0) | Some(3)), "{err}");
    assert_eq!(both["config"]["companion"]["workload"], "zunionstore");
    let unions = crate::util::op(&both, "zunionstore");
    assert!(
        unions["completed"].as_u64().expect("n") > 0,
        "{}",
        both["run"]
    );
    assert_eq!(unions["with"], true);
    assert_eq!(workers_completed(&both["run"]).0, 2);
    let (before, after) = (sets(&alone), sets(&both));
    assert!(
        after < before / 2.0,
        "SETs from 2 workers: {before:.0}/s alone, {after:.0}/s beside the unions"
    );
}

/// YCSB D from workers: each inserts into a block of its own, so no record
/// is written twice (the server holds every load and every insert) and
/// reads, which choose among the loaded records and the worker's own
/// acknowledged inserts, never miss; `--cleanup` finds every block.
#[test]
fn workers_insert_into_blocks_of_their_own() {
    let _heavy = crate::util::timing_sensitive();
    let ycsb_d = |url: &str, extra: &[&str]| {
        let sb = Sandbox::new();
        let mut args = vec![
            "run",
            "--system",
            "redis",
            "--workload",
            "ycsb/d",
            "--target",
            url,
            "--records",
            "1000",
            "--operations",
            "4000",
            "--clients",
            "4",
            "--workers",
            "2",
            "--seed",
            "7",
            "--warmup",
            "0s",
            "--quiet",
            "--json",
        ];
        args.extend(extra);
        let (code, rec, err) = with_spark(&sb, &args);
        assert!(matches!(code, Some(0) | Some(3)), "{err}");
        rec
    };
    let server = private_redis();
    let rec = ycsb_d(&format!("redis://{}", server.addr()), &[]);
    let inserts = completed(&rec, "insert");
    let reads = crate::util::op(&rec, "read");
    assert!(inserts > 100, "YCSB D inserts 5%: {inserts}");
    assert_eq!(inserts + completed(&rec, "read"), 4000);
    assert_eq!(reads["misses"].as_u64(), Some(0), "{reads}");
    assert_eq!(workers_completed(&rec["run"]), (2, 4000));
    let keys = server.info().expect("info")["db0"].clone();
    let want = format!("keys={},", 1000 + inserts);
    assert!(keys.starts_with(&want), "{keys}: want {want}");

    let server = private_redis();
    ycsb_d(&format!("redis://{}", server.addr()), &["--cleanup"]);
    assert!(
        !server.info().expect("info").contains_key("db0"),
        "--cleanup left keys: {:?}",
        server.info().expect("info").get("db0")
    );
}

/// Every process under `root`, itself excluded.
fn descendants(root: u32) -> Vec<u32> {
    let all = processes();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(all.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
        i += 1;
    }
    found.split_off(1)
}

#[test]
fn a_killed_driver_takes_spark_and_every_worker_with_it() {
    let _heavy = crate::util::timing_sensitive();
    let server = private_redis();
    let url = format!("redis://{}", server.addr());
    let sb = Sandbox::new();
    let mut child = spawn_workers(&sb, &url, 2, 2);
    wait_for_workers(Some("1/2"), 1);
    // The Spark job (Python, its JVM, Spark's Python workers) and the
    // kvbench workers under it.
    let below = descendants(child.id());
    let workers = worker_pids(None);
    assert!(
        workers.iter().all(|w| below.contains(w)),
        "workers {workers:?} are not under the driver: {below:?}"
    );
    // SIGKILL: no destructor, no signal handler runs in the driver.
    child.kill().expect("SIGKILL the driver");
    child.wait().expect("reap the driver");
    let killed_at = Instant::now();
    let deadline = killed_at + Duration::from_secs(30);
    loop {
        let left: Vec<u32> = below.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still running 30 s after the driver was killed: {left:?} (of a 60 s window)"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!(
        "everything under the driver ended {:?} after it was killed",
        killed_at.elapsed()
    );
}

#[test]
fn what_workers_cannot_split_is_refused_before_anything_starts() {
    let sb = Sandbox::new();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--clients", "2", "--workers", "4"],
            "more workers than the 2 --clients",
        ),
        (
            &["--workers", "4", "--spark-master", "local[2]"],
            "local[2] has 2 task slots",
        ),
        (&["--workers", "0"], "--workers must be between 1 and"),
        (&["--workers", "2", "--spark-conf", "nokey"], "--spark-conf"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["run", "--system", "redis"];
        if !extra.contains(&"--clients") {
            args.extend(["--clients", "8"]);
        }
        if !extra.contains(&"--workload") {
            args.extend(["--workload", "read-heavy"]);
        }
        args.extend(extra);
        let out = sb
            .kvbench()
            .args(&args)
            .env("KVBENCH_PYTHON", SPARK_PYTHON)
            .output()
            .expect("kvbench runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!sb.db().exists(), "nothing is stored for bad input");
}
