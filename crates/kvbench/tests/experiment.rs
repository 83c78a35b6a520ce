//! Experiment files: the plan a file expands to, runs that are stored cell
//! by cell and resumed, and errors that name the file, line and key.

use crate::util::Sandbox;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A 2 x 2 sweep of tiny cells on one local Redis.
pub const SWEEP: &str = r#"
name = "tiny"
seed = 5
systems = ["redis"]
workloads = ["read-heavy"]

[dataset]
records = 500
field_count = 2
field_length = 20

[run]
warmup = "50ms"
operations = 500

[sweep]
clients = [1, 2]
pipeline = [1, 4]
"#;

fn write(sb: &Sandbox, name: &str, text: &str) -> String {
    std::fs::write(sb.path().join(name), text).expect("write experiment file");
    name.to_string()
}

fn plan(sb: &Sandbox, file: &str) -> serde_json::Value {
    sb.json(&["experiment", "plan", file, "--json"])
}

fn stored_runs(sb: &Sandbox) -> usize {
    if !sb.db().exists() {
        return 0;
    }
    let out = sb
        .kvbench()
        .args(["runs", "--json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("runs JSON");
    v.as_array().map_or(0, Vec::len)
}

fn run(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let mut all = vec!["experiment", "run"];
    all.extend_from_slice(args);
    all.push("--quiet");
    sb.kvbench().args(&all).output().expect("experiment run")
}

#[test]
fn plan_lists_the_cells_of_a_2x2_sweep_in_order() {
    let sb = Sandbox::new();
    let f = write(&sb, "tiny.toml", SWEEP);
    let p = plan(&sb, &f);
    let cells = p["cells"].as_array().expect("cells");
    let got: Vec<(u64, u64)> = cells
        .iter()
        .map(|c| {
            (
                c["clients"].as_u64().unwrap_or(0),
                c["pipeline"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(got, vec![(1, 1), (1, 4), (2, 1), (2, 4)]);
    for c in cells {
        assert_eq!(c["system"], "redis");
        assert_eq!(c["workload"], "read-heavy");
        assert!(c["finished_run"].is_null());
        assert_eq!(c["estimate_from"], "guess");
        assert_eq!(c["key"].as_str().map(str::len), Some(64));
    }
    // Nothing ran, and a plan creates no database.
    assert!(!sb.db().exists());
}

#[test]
fn a_second_run_skips_finished_cells_and_restart_adds_a_new_set() {
    let sb = Sandbox::new();
    let f = write(&sb, "tiny.toml", SWEEP);
    let out = run(&sb, &[&f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("ops/s"), "compare's table: {table}");
    assert_eq!(stored_runs(&sb), 4);
    let p = plan(&sb, &f);
    let cells = p["cells"].as_array().expect("cells");
    assert!(cells.iter().all(|c| c["finished_run"].is_i64()), "{p}");
    assert!(cells.iter().all(|c| c["estimate_from"] == "stored"), "{p}");

    let again = run(&sb, &[&f]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("4 of 4 cells already finished"), "{said}");
    assert_eq!(stored_runs(&sb), 4, "nothing ran again");

    let restart = run(&sb, &[&f, "--restart"]);
    assert!(
        restart.status.success(),
        "{}",
        String::from_utf8_lossy(&restart.stderr)
    );
    assert_eq!(stored_runs(&sb), 8, "a new set, the old one kept");
}

#[test]
fn a_bad_file_gives_one_line_naming_file_line_and_key() {
    let sb = Sandbox::new();
    let cases = [
        (
            "key.toml",
            SWEEP.replace("seed = 5", "seed = 5\nbogus = 1"),
            ":4:",
            "bogus",
        ),
        (
            "value.toml",
            SWEEP.replace("pipeline = [1, 4]", "pipeline = [1, 0]"),
            ":18:",
            "sweep.pipeline",
        ),
        (
            "system.toml",
            SWEEP.replace("[\"redis\"]", "[\"mysql\"]"),
            ":4:",
            "systems",
        ),
    ];
    for (name, text, line, key) in cases {
        let f = write(&sb, name, &text);
        for cmd in ["plan", "run"] {
            let out = sb
                .kvbench()
                .args(["experiment", cmd, &f])
                .output()
                .expect("runs");
            assert_eq!(out.status.code(), Some(2), "{name} {cmd}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(&format!("{name}{line}")), "{name}: {err}");
            assert!(err.contains(key), "{name}: {err}");
        }
    }
    assert_eq!(stored_runs(&sb), 0);
}

#[test]
fn an_interrupted_experiment_keeps_finished_cells_and_runs_only_the_rest() {
    let sb = Sandbox::new();
    let text = SWEEP
        .replace("operations = 500", "duration = \"1s\"")
        .replace("pipeline = [1, 4]", "pipeline = [1]")
        .replace("clients = [1, 2]", "clients = [1, 2, 3]");
    let f = write(&sb, "tiny.toml", &text);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kvbench"))
        .current_dir(sb.path())
        .args(["experiment", "run", &f, "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kvbench");
    let deadline = Instant::now() + Duration::from_secs(60);
    while stored_runs(&sb) == 0 {
        assert!(Instant::now() < deadline, "no cell stored in 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    let p = plan(&sb, &f);
    let cells = p["cells"].as_array().expect("cells");
    let finished = cells.iter().filter(|c| c["finished_run"].is_i64()).count();
    assert!((1..3).contains(&finished), "{p}");
    // Finished cells come first: the plan runs in order.
    assert!(cells[0]["finished_run"].is_i64());
    let before = stored_runs(&sb);
    let rest = run(&sb, &[&f]);
    assert!(
        rest.status.success(),
        "{}",
        String::from_utf8_lossy(&rest.stderr)
    );
    assert_eq!(stored_runs(&sb), before + (3 - finished));
    let p = plan(&sb, &f);
    assert!(p["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .all(|c| c["finished_run"].is_i64()));
}
