//! Verdicts from paired blocks, on real servers: two Redis servers that
//! differ in nothing measurable (an A/A pair) are never called "ahead", and
//! the same pair with one server paused half of every 50 ms is found
//! behind, with the true direction. The slowed server runs from a link to
//! redis-server named `redis-slow`, so the pauses find it by its process
//! name whatever port kvbench gives it.

use crate::util::{processes, timing_sensitive, Sandbox};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Plain Redis against Redis from `redis-slow` with `--hz 10` (its
/// default, so the label differs and nothing else does), one CPU for
/// servers and client as the demo has them.
fn file(cpu: usize) -> String {
    format!(
        r#"
name = "verdicts"
seed = 30
iterations = 4
reload = "once-per-system"
server_cpus = "{cpu}"
client_cpus = "{cpu}"
systems = ["redis", {{ name = "redis", server_bin = "./redis-slow", server_args = ["--hz", "10"] }}]
workloads = ["read-heavy"]

[dataset]
records = 2000
field_count = 2
field_length = 20

[run]
warmup = "200ms"
duration = "1s"

[sweep]
clients = [1]
"#
    )
}

fn redis_server() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("redis-server"))
        .find(|p| p.exists())
        .expect("redis-server on PATH")
}

/// Processes whose name is `redis-slow`.
fn slow_pids() -> Vec<i32> {
    processes()
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{}/comm", p.pid))
                .is_ok_and(|c| c.trim() == "redis-slow")
        })
        .map(|p| p.pid as i32)
        .collect()
}

/// Pauses every `redis-slow` for 25 ms of every 50 ms until `stop`.
fn duty_cycle(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let pids = slow_pids();
            for &p in &pids {
                // SAFETY: signals to a process this test's kvbench started.
                unsafe { libc::kill(p, libc::SIGSTOP) };
            }
            std::thread::sleep(Duration::from_millis(25));
            for &p in &pids {
                // SAFETY: as above; a stopped server always gets its SIGCONT.
                unsafe { libc::kill(p, libc::SIGCONT) };
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        for p in slow_pids() {
            // SAFETY: as above.
            unsafe { libc::kill(p, libc::SIGCONT) };
        }
    })
}

/// Runs the file and returns the report's one takeaway.
fn verdict(sb: &Sandbox, restart: bool) -> serde_json::Value {
    let mut args = vec![
        "experiment",
        "run",
        "verdicts.toml",
        "--quiet",
        "--no-report",
    ];
    if restart {
        args.push("--restart");
    }
    let out = sb.kvbench().args(&args).output().expect("experiment run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("verdicts ("), "the verdicts' table: {text}");
    let report = sb.json(&[
        "report",
        "--experiment",
        "verdicts",
        "--out",
        &sb.path().join("report").to_string_lossy(),
        "--json",
    ]);
    let vs = report["report"]["takeaways"]
        .as_array()
        .expect("takeaways")
        .clone();
    assert_eq!(vs.len(), 1, "{vs:?}");
    vs[0].clone()
}

#[test]
fn an_a_a_pair_is_never_ahead_and_a_slowed_server_is_found_behind() {
    let _timing = timing_sensitive();
    let sb = Sandbox::new();
    std::os::unix::fs::symlink(redis_server(), sb.path().join("redis-slow"))
        .expect("link redis-slow");
    let cpu = 0;
    std::fs::write(sb.path().join("verdicts.toml"), file(cpu)).expect("write file");

    // A/A: equal or undecided, never ahead.
    let aa = verdict(&sb, false);
    let call = aa["throughput"]["decision"]["call"].as_str().unwrap_or("");
    assert!(
        call == "equal" || call == "undecided",
        "A/A called {call}: {aa}"
    );
    assert!(aa["winner"].is_null(), "{aa}");
    let iv = &aa["throughput"]["interval"];
    assert_eq!(iv["n"], 4, "paired over the 4 blocks: {aa}");
    assert_eq!(iv["method"], "student_t");

    // Every run carries the machine's canary.
    let run = sb.json(&["show", "1", "--json"]);
    let c = &run["cpu"]["canary"];
    assert!(c["base_rtt_us"].as_f64().is_some_and(|r| r > 0.0), "{c}");
    assert!(c["server_involuntary_per_s"].as_f64().is_some(), "{c}");
    let busy = c["client_cpu_per_wall"].as_f64().unwrap_or(-1.0);
    assert!(busy > 0.0 && busy <= 2.5, "{c}");
    let steal = c["steal"].as_f64().unwrap_or(-1.0);
    assert!((0.0..=1.0).contains(&steal), "{c}");

    // A/B: the paused server is behind, by far more than the margin.
    let stop = Arc::new(AtomicBool::new(false));
    let pauser = duty_cycle(stop.clone());
    let ab = verdict(&sb, true);
    stop.store(true, Ordering::Relaxed);
    pauser.join().expect("the pausing thread");
    assert_eq!(ab["throughput"]["decision"]["call"], "ahead", "{ab}");
    let winner = ab["winner"].as_str().unwrap_or("");
    assert!(!winner.contains("--hz"), "the plain server wins: {ab}");
    assert!(
        ab["runner_up"].as_str().unwrap_or("").contains("--hz 10"),
        "{ab}"
    );
    let lo = ab["throughput"]["interval"]["lo_log"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(lo > 1.05f64.ln(), "{ab}");
}

/// An experiment file's `[verdicts]`: blocks are added only while a place
/// is undecided, up to `max_blocks`, and the rule is recorded in every run;
/// a setting that belongs to `until_decided` without it is one line, exit 2.
#[test]
fn a_file_can_ask_for_blocks_until_decided() {
    let _timing = timing_sensitive();
    let sb = Sandbox::new();
    let text = file(0)
        .replace("iterations = 4\n", "")
        .replace(
            "[dataset]",
            "[verdicts]\nuntil_decided = true\nmax_blocks = 4\nmargin = 0.5\n\n[dataset]",
        )
        .replace("duration = \"1s\"", "duration = \"300ms\"")
        .replace("warmup = \"200ms\"", "warmup = \"50ms\"");
    std::fs::write(sb.path().join("seq.toml"), &text).expect("write file");
    std::os::unix::fs::symlink(redis_server(), sb.path().join("redis-slow"))
        .expect("link redis-slow");
    let out = sb
        .kvbench()
        .args(["experiment", "run", "seq.toml", "--no-report"])
        .output()
        .expect("experiment run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("until-decided: 3 blocks: "), "{err}");
    let runs = sb.json(&["runs", "--json"]);
    let runs = runs.as_array().expect("runs");
    // Two systems, 3 blocks, then (a ±0.5% margin is rarely met in 3
    // blocks) one more block up to the maximum of 4.
    assert!(runs.len() == 6 || runs.len() == 8, "{} runs", runs.len());
    if runs.len() == 8 {
        assert!(err.contains("until-decided: 4 blocks: "), "{err}");
    }
    let first = sb.json(&["show", "1", "--json"]);
    assert_eq!(
        first["config"]["verdict"],
        serde_json::json!({"margin": 0.005, "looks": 2}),
        "3 and 4 blocks: two looks"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("at 97.50%"), "the corrected level: {text}");

    // A budget smaller than the first blocks: said before they start, and
    // no block is added after them.
    let out = sb
        .kvbench()
        .args([
            "compare",
            "--systems",
            "redis,memcached",
            "--workloads",
            "read-heavy",
            "--clients",
            "1",
            "--records",
            "500",
            "--duration",
            "200ms",
            "--warmup",
            "0s",
            "--until-decided",
            "--budget",
            "1s",
            "--max-blocks",
            "4",
            "--db",
            "budget.db",
        ])
        .output()
        .expect("compare");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("more than the budget of 1s"), "{err}");
    // After them: the place was decided, or no block fits the budget
    // (which one depends on the measured ratio; either way none is added).
    assert!(
        err.contains("would pass the budget") || err.contains("1 of 1 places decided"),
        "{err}"
    );
    let runs = sb.json(&["runs", "--json", "--db", "budget.db"]);
    assert_eq!(
        runs.as_array().map(Vec::len),
        Some(6),
        "3 blocks of 2 systems"
    );

    let bad = file(0).replace("[dataset]", "[verdicts]\nmax_blocks = 4\n\n[dataset]");
    std::fs::write(sb.path().join("bad.toml"), bad).expect("write file");
    let out = sb
        .kvbench()
        .args(["experiment", "plan", "bad.toml"])
        .output()
        .expect("plan");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml:")
            && err.contains("verdicts.max_blocks")
            && err.contains("until_decided"),
        "{err}"
    );
}
