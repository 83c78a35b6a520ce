//! An experiment stopped the hard ways: SIGKILL, two SIGINTs in quick
//! succession, and `timeout`. Every cell finished before the stop stays
//! stored and unchanged, the next start runs only the rest and removes what
//! the stopped one left behind, and no server outlives kvbench.

use crate::util::{alive, children_of, Sandbox};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Three 1-second cells on one local Redis, each with its own server.
const THREE: &str = r#"
name = "stoppable"
seed = 9
systems = ["redis"]
workloads = ["read-heavy"]

[dataset]
records = 500
field_count = 2
field_length = 20

[run]
warmup = "100ms"
duration = "1s"

[sweep]
clients = [1, 2, 3]
"#;

/// The sandbox's own temporary directory, given to kvbench as TMPDIR, so
/// its servers' directories are seen here and nowhere else.
fn tmp(sb: &Sandbox) -> PathBuf {
    sb.tmp()
}

fn leftovers(t: &Path) -> Vec<String> {
    std::fs::read_dir(t)
        .expect("read tmp")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn start(sb: &Sandbox, file: &str) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("kvbench"))
        .current_dir(sb.path())
        .env("TMPDIR", tmp(sb))
        .args(["experiment", "run", file, "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kvbench")
}

/// The run ids of the plan's finished cells, in plan order (`None`: to run).
fn finished(sb: &Sandbox, file: &str) -> Vec<Option<i64>> {
    let p = sb.json(&["experiment", "plan", file, "--json"]);
    p["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .map(|c| c["finished_run"].as_i64())
        .collect()
}

fn run_json(sb: &Sandbox, id: i64) -> serde_json::Value {
    sb.json(&["show", &id.to_string(), "--json"])
}

/// Waits until the plan shows `n` finished cells; returns the server pids
/// kvbench has then (its children).
fn wait_for_finished(sb: &Sandbox, file: &str, n: usize, kvbench: u32) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if sb.db().exists() && finished(sb, file).iter().flatten().count() >= n {
            // The next cell's server: started right after the save.
            let t = Instant::now() + Duration::from_secs(10);
            loop {
                let c = children_of(kvbench);
                if !c.is_empty() || Instant::now() > t {
                    return c;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        assert!(Instant::now() < deadline, "{n} cells not stored in 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn assert_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            Instant::now() < deadline,
            "servers {pids:?} outlived kvbench"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs the rest and checks the result equals an uninterrupted run's: every
/// cell finished, those finished before the stop unchanged.
fn resume_and_check(sb: &Sandbox, file: &str, before: &[Option<i64>]) {
    let kept: Vec<(i64, serde_json::Value)> = before
        .iter()
        .flatten()
        .map(|&id| (id, run_json(sb, id)))
        .collect();
    let out = sb
        .kvbench()
        .env("TMPDIR", tmp(sb))
        .args(["experiment", "run", file, "--quiet"])
        .output()
        .expect("experiment run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = finished(sb, file);
    assert_eq!(after.len(), 3);
    assert!(after.iter().all(Option::is_some), "every cell: {after:?}");
    for (i, b) in before.iter().enumerate() {
        if b.is_some() {
            assert_eq!(after[i], *b, "cell {i} was not run again");
        }
    }
    for (id, v) in kept {
        assert_eq!(run_json(sb, id), v, "run {id} unchanged");
    }
    let clients: Vec<u64> = after
        .iter()
        .flatten()
        .map(|&id| run_json(sb, id)["config"]["clients"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(clients, [1, 2, 3], "the uninterrupted cell list");
    assert!(leftovers(&tmp(sb)).is_empty(), "{:?}", leftovers(&tmp(sb)));
}

#[test]
fn sigkill_loses_only_the_cell_in_progress_and_the_next_start_cleans_up() {
    let sb = Sandbox::new();
    std::fs::write(sb.path().join("e.toml"), THREE).expect("write");
    let mut child = start(&sb, "e.toml");
    let pid = child.id();
    let servers = wait_for_finished(&sb, "e.toml", 1, pid);
    assert!(!servers.is_empty(), "a server for the second cell");
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    assert_gone(&servers);
    let left = leftovers(&tmp(&sb));
    assert!(
        left.iter()
            .any(|n| n.starts_with(&format!("kvbench-{pid}-"))),
        "a killed kvbench leaves its server's directory: {left:?}"
    );
    let before = finished(&sb, "e.toml");
    assert!(before[0].is_some() && before[2].is_none(), "{before:?}");
    resume_and_check(&sb, "e.toml", &before);
}

#[test]
fn two_quick_sigints_keep_every_finished_cell() {
    let sb = Sandbox::new();
    std::fs::write(sb.path().join("e.toml"), THREE).expect("write");
    let mut child = start(&sb, "e.toml");
    let pid = child.id();
    let servers = wait_for_finished(&sb, "e.toml", 1, pid);
    for _ in 0..2 {
        let sent = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        std::thread::sleep(Duration::from_millis(30));
    }
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130), "interrupted");
    assert_gone(&servers);
    let before = finished(&sb, "e.toml");
    assert!(before[0].is_some(), "{before:?}");
    resume_and_check(&sb, "e.toml", &before);
}

#[test]
fn under_timeout_every_finished_cell_is_stored() {
    let sb = Sandbox::new();
    std::fs::write(sb.path().join("e.toml"), THREE).expect("write");
    // `timeout` sends SIGTERM when its time is up; the same signal sent to
    // it by hand, once a cell is stored, makes the test independent of how
    // fast this machine runs a cell.
    let mut timeout = Command::new("timeout")
        .args(["-s", "TERM", "600"])
        .arg(assert_cmd::cargo::cargo_bin("kvbench"))
        .args(["experiment", "run", "e.toml", "--quiet"])
        .current_dir(sb.path())
        .env("TMPDIR", tmp(&sb))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("timeout kvbench");
    let deadline = Instant::now() + Duration::from_secs(10);
    let kvbench = loop {
        if let Some(&k) = children_of(timeout.id()).first() {
            break k;
        }
        assert!(Instant::now() < deadline, "timeout started no kvbench");
        std::thread::sleep(Duration::from_millis(20));
    };
    let servers = wait_for_finished(&sb, "e.toml", 1, kvbench);
    let sent = Command::new("kill")
        .args(["-TERM", &timeout.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let status = timeout.wait().expect("wait");
    assert!(!status.success(), "stopped, not finished");
    assert_gone(&servers);
    let before = finished(&sb, "e.toml");
    assert!(before[0].is_some() && before[2].is_none(), "{before:?}");
    assert!(
        leftovers(&tmp(&sb)).is_empty(),
        "a stop by SIGTERM cleans up after itself: {:?}",
        leftovers(&tmp(&sb))
    );
    resume_and_check(&sb, "e.toml", &before);
}
