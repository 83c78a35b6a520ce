//! YCSB compatibility through the command line: YCSB's own workload files
//! run unchanged on both systems, and Memcached refuses scans up front. How
//! each operation reaches the server is the engine's own test
//! (crates/engine/tests/ycsb.rs).

use crate::util::Sandbox;
use std::path::PathBuf;

fn workload_file(letter: char) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../tests/ycsb-workloads/workload{letter}"))
}

fn completed(rec: &serde_json::Value, op: &str) -> u64 {
    rec["run"]["ops"]
        .as_array()
        .and_then(|ops| ops.iter().find(|o| o["op"] == op))
        .and_then(|o| o["completed"].as_u64())
        .unwrap_or(0)
}

#[test]
fn ycsb_workload_files_run_unchanged_on_redis_and_memcached() {
    let sb = Sandbox::new();
    // The kinds of operation each of YCSB's workloads issues.
    let expect: [(char, &[&str]); 6] = [
        ('a', &["read", "update"]),
        ('b', &["read", "update"]),
        ('c', &["read"]),
        ('d', &["read", "insert"]),
        ('e', &["scan", "insert"]),
        ('f', &["read", "read_modify_write"]),
    ];
    for system in ["redis", "memcached"] {
        for (letter, kinds) in expect {
            let file = workload_file(letter);
            let out = sb
                .kvbench()
                .args(["run", "--system", system, "-P"])
                .arg(&file)
                .args([
                    "-p",
                    "recordcount=2000",
                    "-p",
                    "operationcount=4000",
                    "--warmup",
                    "0s",
                    "--seed",
                    "5",
                    "--json",
                    "--quiet",
                ])
                .output()
                .expect("runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            if system == "memcached" && letter == 'e' {
                assert_eq!(out.status.code(), Some(2), "{stderr}");
                assert!(
                    stderr.contains("scan"),
                    "memcached must refuse scans clearly: {stderr}"
                );
                assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
                continue;
            }
            assert!(out.status.success(), "{system} workload{letter}: {stderr}");
            assert!(
                !stderr.contains("unknown"),
                "{system} workload{letter} warned: {stderr}"
            );
            let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(
                rec["status"], "ok",
                "{system} workload{letter}: {}",
                rec["marks"]
            );
            assert_eq!(rec["run"]["completed"], 4000, "{system} workload{letter}");
            assert_eq!(rec["run"]["errors"], 0);
            for k in kinds {
                assert!(
                    completed(&rec, k) > 0,
                    "{system} workload{letter} issued no {k}: {}",
                    rec["run"]["ops"]
                );
            }
            let props = rec["config"]["workload_properties"]
                .as_array()
                .expect("properties recorded");
            assert!(
                props.iter().any(|p| p[0] == "requestdistribution"),
                "{props:?}"
            );
        }
    }
}
