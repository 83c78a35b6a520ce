//! Bad input: one clear line on stderr, exit code 2, and no run stored.

use crate::util::{Sandbox, SMALL};
use predicates::prelude::*;

pub fn assert_usage_error(sb: &Sandbox, args: &[&str], mentions: &str) {
    let out = sb.kvbench().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "args {args:?}: stderr {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected, got: {stderr}");
    assert!(
        lines[0].contains(mentions),
        "'{}' should mention '{mentions}'",
        lines[0]
    );
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn assert_nothing_stored(sb: &Sandbox) {
    if sb.db().exists() {
        sb.kvbench()
            .args(["runs", "--db"])
            .arg(sb.db())
            .assert()
            .success()
            .stdout(predicate::str::contains("no runs stored"));
    }
}

#[test]
fn unknown_system() {
    let sb = Sandbox::new();
    assert_usage_error(
        &sb,
        &["run", "--system", "mongo", "--workload", "balanced"],
        "unknown system 'mongo'",
    );
    assert_nothing_stored(&sb);
}

#[test]
fn unknown_workload() {
    let sb = Sandbox::new();
    assert_usage_error(
        &sb,
        &["run", "--system", "redis", "--workload", "heavy"],
        "unknown workload 'heavy'",
    );
    assert_nothing_stored(&sb);
}

#[test]
fn zero_records() {
    let sb = Sandbox::new();
    assert_usage_error(
        &sb,
        &[
            "run",
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--records",
            "0",
        ],
        "records",
    );
    assert_nothing_stored(&sb);
}

#[test]
fn missing_server_binary_names_the_package() {
    let sb = Sandbox::new();
    let kvbench = assert_cmd::cargo::cargo_bin("kvbench");
    for (system, package) in [
        ("redis", "apt-get install redis-server"),
        ("memcached", "apt-get install memcached"),
        ("valkey", "scripts/setup"),
    ] {
        let out = std::process::Command::new(&kvbench)
            .args([
                "run",
                "--system",
                system,
                "--workload",
                "balanced",
                "--quiet",
            ])
            .current_dir(sb.path())
            .env("TMPDIR", sb.tmp())
            .env("PATH", sb.path()) // nothing on this PATH
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(package), "{stderr}");
    }
    assert_nothing_stored(&sb);
}

#[test]
fn unwritable_db_path() {
    let sb = Sandbox::new();
    let mut args: Vec<&str> = vec![
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--db",
        "/nonexistent-dir/x/kvbench.db",
    ];
    args.extend_from_slice(SMALL);
    assert_usage_error(&sb, &args, "/nonexistent-dir/x/kvbench.db");
    // A path below a regular file cannot be created even by root.
    std::fs::write(sb.path().join("afile"), b"").expect("write");
    let below = sb.path().join("afile/kvbench.db");
    let below = below.to_string_lossy().to_string();
    let mut args: Vec<&str> = vec![
        "run",
        "--system",
        "memcached",
        "--workload",
        "balanced",
        "--db",
        &below,
    ];
    args.extend_from_slice(SMALL);
    assert_usage_error(&sb, &args, "afile/kvbench.db");
}

#[test]
fn zero_clients_and_bad_durations() {
    let sb = Sandbox::new();
    assert_usage_error(
        &sb,
        &[
            "run",
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--clients",
            "0",
        ],
        "--clients",
    );
    // clap's own errors are one line too.
    assert_usage_error(
        &sb,
        &[
            "run",
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--warmup",
            "soon",
        ],
        "'soon' is not a duration",
    );
    assert_nothing_stored(&sb);
}

#[test]
fn show_unknown_id() {
    let sb = Sandbox::new();
    let mut args: Vec<&str> = vec![
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--seed",
        "1",
    ];
    args.extend_from_slice(SMALL);
    sb.kvbench().args(&args).assert().success();
    assert_usage_error(&sb, &["show", "999"], "no run with id 999");
}

#[test]
fn malformed_property_file_names_file_line_and_property() {
    let sb = Sandbox::new();
    let file = sb.path().join("mywork");
    std::fs::write(&file, "# mine\nrecordcount=100\nreadproportion=0.9x\n").expect("write");
    let path = file.to_string_lossy().to_string();
    assert_usage_error(
        &sb,
        &["run", "--system", "redis", "-P", &path],
        &format!("{path}: line 3: readproportion"),
    );
    assert_usage_error(
        &sb,
        &["run", "--system", "redis", "-P", "/no/such/workload"],
        "/no/such/workload",
    );
    assert_nothing_stored(&sb);
}

#[test]
fn unknown_property_is_a_warning_that_names_it_and_is_recorded() {
    let sb = Sandbox::new();
    let file = sb.path().join("mywork");
    std::fs::write(
        &file,
        "recordcount=500\noperationcount=500\nreadproprtion=0.5\n",
    )
    .expect("write");
    let out = sb
        .kvbench()
        .args(["run", "--system", "redis", "-P"])
        .arg(&file)
        .args(["--warmup", "0s", "--json", "--quiet"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("readproprtion") && stderr.contains("line 3"),
        "{stderr}"
    );
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let warnings = rec["warnings"].to_string();
    assert!(warnings.contains("readproprtion"), "{warnings}");
}
