//! `--db postgres://...`: the shared store. The same runs stored in SQLite
//! and in PostgreSQL (a real server the test starts as its own child) read
//! back identically through every exporter, and an experiment runs, resumes
//! and reports from PostgreSQL as it does from a file.

use crate::util::{Sandbox, SMALL};
use std::path::Path;

fn kvbench(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.kvbench().args(args).output().expect("kvbench runs");
    assert!(
        out.status.success(),
        "kvbench {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Wraps a stored run as the file `kvbench import` takes (what kvbench
/// writes when a save fails), so the very same record goes to the other store.
fn as_unsaved(sb: &Sandbox, db: &str, id: u32, dir: &Path) -> String {
    let record: serde_json::Value = serde_json::from_str(&kvbench(
        sb,
        &["show", &id.to_string(), "--json", "--db", db],
    ))
    .expect("record");
    let file = dir.join(format!("run-{id}.json"));
    let body = serde_json::json!({
        "format": "kvbench-unsaved-run-1",
        "db": db,
        "reason": "copied by the test",
        "cell": null,
        "record": record,
    });
    std::fs::write(&file, serde_json::to_vec(&body).expect("json")).expect("write");
    file.to_str().expect("utf-8").to_string()
}

#[test]
fn runs_stored_in_sqlite_and_in_postgres_export_identically() {
    let pg = kvbench_store::testing::database();
    let url = pg.location().to_string();
    let sb = Sandbox::new();
    let sqlite = sb.db();
    let sqlite = sqlite.to_str().expect("utf-8");
    for (system, workload) in [("redis", "balanced"), ("memcached", "read-heavy")] {
        let mut args = vec![
            "run",
            "--system",
            system,
            "--workload",
            workload,
            "--db",
            sqlite,
        ];
        args.extend(SMALL);
        kvbench(&sb, &args);
    }
    let files: Vec<String> = (1..=2)
        .map(|id| as_unsaved(&sb, sqlite, id, sb.path()))
        .collect();
    let mut import = vec!["import", "--db", &url];
    import.extend(files.iter().map(String::as_str));
    kvbench(&sb, &import);
    for format in ["json", "csv"] {
        let from = |db: &str| {
            kvbench(
                &sb,
                &["export", "--format", format, "--runs", "1,2", "--db", db],
            )
        };
        assert_eq!(from(&url), from(sqlite), "export --format {format}");
    }
    let listed = |db: &str| kvbench(&sb, &["runs", "--json", "--db", db]);
    assert_eq!(listed(&url), listed(sqlite));
}

#[test]
fn an_experiment_runs_resumes_and_reports_from_postgres() {
    let pg = kvbench_store::testing::database();
    let url = pg.location().to_string();
    let sb = Sandbox::new();
    let file = sb.path().join("tiny.toml");
    std::fs::write(
        &file,
        "name = \"tiny\"\nseed = 1\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\n\
         [dataset]\nrecords = 500\n[run]\nwarmup = \"50ms\"\nduration = \"300ms\"\n\
         [sweep]\nclients = [1, 2]\n",
    )
    .expect("write");
    let file = file.to_str().expect("utf-8");
    kvbench(&sb, &["experiment", "run", file, "--db", &url, "--quiet"]);
    let again = kvbench(
        &sb,
        &["experiment", "run", file, "--db", &url, "--quiet", "--json"],
    );
    let runs: serde_json::Value =
        serde_json::from_str(&kvbench(&sb, &["runs", "--json", "--db", &url])).expect("runs");
    assert_eq!(
        runs.as_array().map(Vec::len),
        Some(2),
        "resumed, not run again: {again}"
    );
    let out = sb.path().join("report");
    kvbench(
        &sb,
        &[
            "report",
            "--experiment",
            "tiny",
            "--db",
            &url,
            "--out",
            out.to_str().expect("utf-8"),
        ],
    );
    assert!(out.join("index.html").exists());
    // The password-free URL is what the store is known by; a wrong one is
    // one line naming the database, without the password.
    let bad = format!(
        "postgres://kvbench:hunter2@127.0.0.1:{}/nosuchdb",
        pg.server().port()
    );
    let o = sb
        .kvbench()
        .args(["runs", "--db", &bad])
        .output()
        .expect("kvbench runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    assert!(err.contains("nosuchdb"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
