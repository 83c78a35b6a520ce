//! `--server-cpus` and `--client-cpus` place the server's threads and
//! kvbench's workers, as the kernel reports them while the run goes on, and
//! are recorded; a CPU kvbench may not use is bad input.

use crate::util::{wait_for_children, Sandbox};
use std::time::{Duration, Instant};

/// `Cpus_allowed_list` of every thread of `pid` whose name starts with
/// `prefix`.
fn placements(pid: u32, prefix: &str) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| {
            let dir = t.path();
            let name = std::fs::read_to_string(dir.join("comm")).ok()?;
            if !name.starts_with(prefix) {
                return None;
            }
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_string())
        })
        .collect()
}

#[test]
fn servers_and_workers_run_where_they_were_placed_and_it_is_recorded() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return; // Needs two CPUs to tell the placements apart.
    }
    let sb = Sandbox::new();
    let child = sb.spawn(&[
        "run",
        "--system",
        "redis",
        "--workload",
        "read-heavy",
        "--records",
        "2000",
        "--duration",
        "3s",
        "--warmup",
        "500ms",
        "--clients",
        "2",
        "--quiet",
        "--json",
        "--server-cpus",
        "0",
        "--client-cpus",
        "1",
    ]);
    let kvbench = child.id();
    let server = wait_for_children(kvbench, 1, |_| true)[0];
    // Sample while the workers exist (they live for the phases only).
    let (mut server_seen, mut workers_seen) = (Vec::new(), Vec::new());
    let until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < until && workers_seen.is_empty() {
        server_seen = placements(server, "");
        workers_seen = placements(kvbench, "kvbench-worker");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("kvbench ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !server_seen.is_empty() && server_seen.iter().all(|c| c == "0"),
        "server threads: {server_seen:?}"
    );
    assert!(
        !workers_seen.is_empty() && workers_seen.iter().all(|c| c == "1"),
        "worker threads: {workers_seen:?}"
    );
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(rec["config"]["server_cpus"], "0");
    assert_eq!(rec["config"]["client_cpus"], "1");
}

#[test]
fn a_cpu_kvbench_may_not_use_is_bad_input() {
    let sb = Sandbox::new();
    let out = sb
        .kvbench()
        .args(["run", "--system", "redis", "--workload", "read-heavy"])
        .args(["--server-cpus", "4000"])
        .output()
        .expect("kvbench runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--server-cpus 4000") && err.contains("not available"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
