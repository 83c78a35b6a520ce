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

pub fn write(sb: &Sandbox, name: &str, text: &str) -> String {
    std::fs::write(sb.path().join(name), text).expect("write experiment file");
    name.to_string()
}

pub fn plan(sb: &Sandbox, file: &str) -> serde_json::Value {
    sb.json(&["experiment", "plan", file, "--json"])
}

/// `experiment plan` of `text` as bad.toml: exit 2 and its message.
pub fn plan_error(sb: &Sandbox, text: &str) -> String {
    let f = write(sb, "bad.toml", text);
    let out = sb
        .kvbench()
        .args(["experiment", "plan", &f])
        .output()
        .expect("plan");
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A planned cell's `kvbench run` flags, as one line.
pub fn run_args(cell: &serde_json::Value) -> String {
    cell["run_args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(|a| a.as_str())
        .collect::<Vec<_>>()
        .join(" ")
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

/// `{ name, optional = true }`: cells where the system's binary is found,
/// left out and named where it is not (paper A's Aerospike).
#[test]
fn an_optional_system_runs_where_its_binary_is_and_is_named_where_not() {
    let sb = Sandbox::new();
    let text = SWEEP.replace(
        r#"systems = ["redis"]"#,
        r#"systems = ["redis", { name = "aerospike", optional = true, server_bin = "no-such-asd" }, { name = "memcached", optional = true }]"#,
    );
    let f = write(&sb, "optional.toml", &text);
    let p = plan(&sb, &f);
    let mut systems: Vec<&str> = p["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .filter_map(|c| c["system"].as_str())
        .collect();
    // Blocks run each place's systems in a random order: compare the set.
    systems.sort_unstable();
    systems.dedup();
    assert_eq!(systems, ["memcached", "redis"]);
    let absent = p["absent"].to_string();
    assert!(absent.contains("aerospike: not run (optional)"), "{absent}");
    assert!(absent.contains("no-such-asd"), "{absent}");
    let out = sb
        .kvbench()
        .args(["experiment", "plan", &f])
        .output()
        .expect("plan");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("aerospike: not run (optional)"), "{text}");
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
        .env("TMPDIR", sb.tmp())
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

/// Two workloads x 2 client counts on one Redis, under `policy`.
fn shared(policy: &str, second: &str) -> String {
    format!(
        r#"
name = "shared"
seed = 5
reload = "{policy}"
systems = ["redis"]
workloads = ["read-heavy", {second}]

[dataset]
records = 500
field_count = 2
field_length = 20

[run]
warmup = "50ms"
operations = 500

[sweep]
clients = [1, 2]
"#
    )
}

/// The run id that loaded the server a run used, or `None` if it loaded its own.
fn loaded_by(r: &serde_json::Value) -> Option<i64> {
    r["environment"]["reused_server"]["loaded_by_run"].as_i64()
}

fn experiment_json(sb: &Sandbox, text: &str) -> Vec<serde_json::Value> {
    let f = write(sb, "shared.toml", text);
    let v = sb.json(&["experiment", "run", &f, "--quiet", "--json"]);
    let runs = v.as_array().expect("an array of runs").clone();
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert_ne!(r["status"], "failed", "{r}");
        let marks = r["marks"].to_string();
        assert!(
            !marks.contains("misses"),
            "every record still there: {marks}"
        );
    }
    runs
}

#[test]
fn per_workload_reload_shares_one_loaded_server_within_each_workload() {
    let sb = Sandbox::new();
    let runs = experiment_json(&sb, &shared("per-workload", "\"balanced\""));
    let id = |i: usize| runs[i]["id"].as_i64();
    assert!(runs[0]["load"].is_object() && loaded_by(&runs[0]).is_none());
    assert!(runs[1]["load"].is_null(), "no second load");
    assert_eq!(loaded_by(&runs[1]), id(0));
    assert_eq!(runs[1]["environment"]["reused_server"]["runs_before"], 1);
    // A new workload: a fresh server and load.
    assert!(runs[2]["load"].is_object() && loaded_by(&runs[2]).is_none());
    assert_eq!(loaded_by(&runs[3]), id(2));
    for r in &runs {
        assert_eq!(r["config"]["reload"], "per-workload");
    }
    let stages: Vec<&str> = runs[1]["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .filter_map(|p| p["stage"].as_str())
        .collect();
    assert_eq!(stages, ["before_run", "after_run"]);
}

#[test]
fn once_per_system_reload_shares_across_workloads_but_not_after_inserts() {
    let sb = Sandbox::new();
    let runs = experiment_json(&sb, &shared("once-per-system", "\"balanced\""));
    let first = runs[0]["id"].as_i64();
    assert!(loaded_by(&runs[0]).is_none());
    for (i, r) in runs.iter().enumerate().skip(1) {
        assert_eq!(loaded_by(r), first, "run {i} used the first server");
        assert_eq!(r["environment"]["reused_server"]["runs_before"], i);
    }

    // A workload that inserts changes the dataset: the cell after it loads again.
    let sb = Sandbox::new();
    let inserting = r#"{ preset = "read-heavy", properties = { readproportion = 0.9, updateproportion = 0, insertproportion = 0.1 } }"#;
    let runs = experiment_json(&sb, &shared("once-per-system", inserting));
    assert_eq!(loaded_by(&runs[1]), runs[0]["id"].as_i64());
    assert_eq!(loaded_by(&runs[2]), runs[0]["id"].as_i64());
    assert!(loaded_by(&runs[3]).is_none(), "reloaded after inserts");
    assert!(runs[3]["load"].is_object());
}

/// Mean, sample standard deviation and the 95% interval of the mean of
/// throughput and of read p99 per run, from kvbench's CSV export, computed
/// with Python's statistics module; Student's t quantile by integrating its
/// density (nothing shared with kvbench's own table).
const CSV_STATS: &str = r#"
import csv, json, math, statistics, sys
runs = {}
read_completed = 0
for row in csv.DictReader(open(sys.argv[1])):
    if row["phase"] != "run":
        continue
    r = runs.setdefault(row["run_id"], {"throughput": 0.0, "read_p99": None})
    r["throughput"] += float(row["throughput"])
    if row["op"] == "read":
        r["read_p99"] = float(row["p99_us"])
        read_completed += int(row["completed"])
def t975(df):
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    pdf = lambda t: c * (1 + t * t / df) ** (-(df + 1) / 2)
    def cdf(x, n=20000):
        h = x / n
        s = pdf(0) + pdf(x) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, n))
        return 0.5 + s * h / 3
    lo, hi = 0.0, 50.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) < 0.975: lo = mid
        else: hi = mid
    return (lo + hi) / 2
out = {"n": len(runs), "read_completed": read_completed}
for metric in ["throughput", "read_p99"]:
    xs = [r[metric] for r in runs.values()]
    m, sd = statistics.mean(xs), statistics.stdev(xs)
    half = t975(len(xs) - 1) * sd / math.sqrt(len(xs))
    out[metric] = {"mean": m, "sd": sd, "lo": m - half, "hi": m + half}
print(json.dumps(out))
"#;

#[test]
fn three_iterations_summarised_as_python_computes_them_from_the_csv_export() {
    let sb = Sandbox::new();
    let text = SWEEP
        .replace("seed = 5", "seed = 5\niterations = 3")
        .replace("operations = 500", "operations = 3000")
        .replace("clients = [1, 2]", "clients = [2]")
        .replace("pipeline = [1, 4]", "pipeline = [1]");
    let f = write(&sb, "iter.toml", &text);
    let out = run(&sb, &[&f]);
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("over iterations"), "{table}");

    let summary = sb.json(&["experiment", "summary", &f, "--json"]);
    let cells = summary.as_array().expect("cells");
    assert_eq!(cells.len(), 1, "one cell, three iterations: {summary}");
    let cell = &cells[0];
    assert_eq!(cell["runs"].as_array().map(Vec::len), Some(3));

    let csv = sb.path().join("iter.csv");
    let exported = sb
        .kvbench()
        .args([
            "export",
            "--format",
            "csv",
            "--experiment",
            "tiny",
            "--output",
        ])
        .arg(&csv)
        .output()
        .expect("export");
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let py = std::process::Command::new(crate::export::python())
        .args(["-c", CSV_STATS])
        .arg(&csv)
        .output()
        .expect("python runs");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let want: serde_json::Value = serde_json::from_slice(&py.stdout).expect("python's JSON");
    assert_eq!(want["n"], 3);

    let read = cell["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .find(|o| o["op"] == "read")
        .expect("reads");
    let close = |got: &serde_json::Value, want: &serde_json::Value, what: &str, rel: f64| {
        let (g, w) = (got.as_f64().expect(what), want.as_f64().expect(what));
        assert!(
            (g - w).abs() <= rel * w.abs().max(1e-9),
            "{what}: kvbench {g}, python {w}"
        );
    };
    for (got, key) in [
        (&cell["throughput"], "throughput"),
        (&read["p99_us"], "read_p99"),
    ] {
        let w = &want[key];
        close(&got["mean"], &w["mean"], &format!("{key} mean"), 1e-9);
        close(&got["sd"], &w["sd"], &format!("{key} sd"), 1e-9);
        // kvbench's t table has four decimals (4.3027 for 2 degrees of freedom).
        let half = |lo: &serde_json::Value, hi: &serde_json::Value| {
            (hi.as_f64().unwrap_or(f64::NAN) - lo.as_f64().unwrap_or(f64::NAN)) / 2.0
        };
        let (g, w) = (
            half(&got["ci95_low"], &got["ci95_high"]),
            half(&w["lo"], &w["hi"]),
        );
        assert!(
            (g - w).abs() <= 2e-5 * w.abs().max(1e-9),
            "{key} interval: kvbench +-{g}, python +-{w}"
        );
    }
    // Merged percentiles count every iteration's requests.
    assert_eq!(read["merged"]["count"], want["read_completed"], "{read}");
}

/// `compare` is a short way to write an experiment: stored as one, skipped
/// once stored, measured again with --restart; its report is replaced whole.
#[test]
fn compare_is_an_experiment_stored_once_and_its_report_is_replaced_whole() {
    let sb = Sandbox::new();
    let report = sb.path().join("report.md");
    std::fs::write(&report, "old report").expect("write");
    let args = |extra: &[&str]| {
        let mut v = vec![
            "compare",
            "--systems",
            "redis",
            "--workloads",
            "read-heavy",
            "--clients",
            "1,2",
            "--records",
            "500",
            "--operations",
            "500",
            "--warmup",
            "50ms",
            "--quiet",
            "--json",
            "--report",
            "report.md",
        ];
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let ids = |v: &serde_json::Value| -> Vec<i64> {
        v.as_array()
            .expect("runs")
            .iter()
            .filter_map(|r| r["id"].as_i64())
            .collect()
    };
    // Bad input: nothing runs and the old report stays.
    let bad = sb
        .kvbench()
        .args(args(&["--reload", "sometimes"]))
        .output()
        .expect("compare");
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(&report).expect("read"),
        "old report"
    );

    let a = args(&[]);
    let first = sb.json(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(ids(&first).len(), 2);
    let md = std::fs::read_to_string(&report).expect("read");
    assert!(md.contains("read-heavy"), "{md}");
    let leftovers: Vec<_> = std::fs::read_dir(sb.path())
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".kvbench-"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file left");

    let again = sb.kvbench().args(&a).output().expect("compare");
    assert!(again.status.success());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("2 of 2 cells already finished"), "{said}");
    let second: serde_json::Value = serde_json::from_slice(&again.stdout).expect("JSON");
    assert_eq!(ids(&second), ids(&first), "the stored runs, not new ones");

    let r = args(&["--restart"]);
    let third = sb.json(&r.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(ids(&third).len(), 2);
    assert!(
        ids(&third).iter().all(|i| !ids(&first).contains(i)),
        "measured again"
    );
    assert_eq!(stored_runs(&sb), 4);
}

/// Per-system server settings: an experiment file's `server_args` reach
/// the server and are recorded; one that would break isolation is refused.
#[test]
fn per_system_server_args_are_applied_recorded_and_checked() {
    let sb = Sandbox::new();
    let text = SWEEP
        .replace(
            "systems = [\"redis\"]",
            "systems = [{ name = \"redis\", server_args = [\"--hz\", \"25\"] }, \"memcached\"]",
        )
        .replace("clients = [1, 2]", "clients = [1]")
        .replace("pipeline = [1, 4]", "pipeline = [1]");
    let f = write(&sb, "args.toml", &text);
    let runs = sb.json(&["experiment", "run", &f, "--quiet", "--json"]);
    let runs = runs.as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let setting = |r: &serde_json::Value, name: &str| {
        r["config"]["server_settings"]
            .as_array()
            .expect("settings")
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
    };
    // Blocks run the systems in a random order.
    let (redis, other) = if runs[0]["config"]["system"] == "redis" {
        (&runs[0], &runs[1])
    } else {
        (&runs[1], &runs[0])
    };
    assert_eq!(
        redis["config"]["server_args"],
        serde_json::json!(["--hz", "25"])
    );
    let hz = setting(redis, "hz").expect("hz recorded");
    assert_eq!(
        (hz["value"].as_str(), hz["reason"].as_str()),
        (Some("25"), Some("user"))
    );
    // Only the system it was given for.
    assert!(
        other["config"]["server_args"].is_null(),
        "{}",
        other["config"]
    );

    let bad = SWEEP.replace(
        "systems = [\"redis\"]",
        "systems = [{ name = \"redis\", server_args = [\"--port\", \"6379\"] }]",
    );
    let err = plan_error(&sb, &bad);
    assert!(
        err.contains("bad.toml:4:") && err.contains("--server-args") && err.contains("port"),
        "{err}"
    );
}

/// Paper C's shape: one workload swept over pipeline depth, one over
/// clients, and one run beside a second client group.
const COMBINED: &str = r#"
name = "combined"
systems = ["redis"]
workloads = [
    { preset = "altoros/simple", records = 1000, sweep = { pipeline = [4, 50] } },
    { preset = "altoros/complex", records = 8, sweep = { clients = [1, 3] } },
    { preset = "altoros/complex", records = 8, sweep = { clients = [1, 3] }, properties = { "kvbench.zset.members" = 2000 }, with = { preset = "altoros/simple", clients = 4, pipeline = 4, records = 1000, properties = { fieldlength = 50 } } },
]

[load]
clients = 4

[run]
duration = "1s"

[sweep]
clients = [2]
"#;

#[test]
fn a_workload_has_its_own_sweep_records_and_second_client_group() {
    let sb = Sandbox::new();
    let f = write(&sb, "combined.toml", COMBINED);
    let p = plan(&sb, &f);
    let cells = p["cells"].as_array().expect("cells");
    let got: Vec<(&str, u64, u64)> = cells
        .iter()
        .map(|c| {
            (
                c["workload"].as_str().unwrap_or(""),
                c["clients"].as_u64().unwrap_or(0),
                c["pipeline"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("altoros/simple", 2, 4),
            ("altoros/simple", 2, 50),
            ("altoros/complex", 1, 1),
            ("altoros/complex", 3, 1),
            (
                "altoros/complex kvbench.zset.members=2000 + altoros/simple",
                1,
                1
            ),
            (
                "altoros/complex kvbench.zset.members=2000 + altoros/simple",
                3,
                1
            ),
        ]
    );
    let args = |i: usize| run_args(&cells[i]);
    assert!(args(0).contains("--records 1000"), "{}", args(0));
    assert!(args(2).contains("--records 8"), "{}", args(2));
    let with = args(5);
    for part in [
        "--with altoros/simple",
        "--with-clients 4",
        "--with-pipeline 4",
        "--with-property recordcount=1000",
        "--with-property fieldlength=50",
    ] {
        assert!(with.contains(part), "{part} not in {with}");
    }
    // A mistake inside `with` names the file, line and key.
    let bad = COMBINED.replace("clients = 4, pipeline", "client = 4, pipeline");
    let err = plan_error(&sb, &bad);
    assert!(
        err.contains("bad.toml:") && err.contains("workloads") && err.contains("client"),
        "{err}"
    );
}

/// Paper B ran its insert-heavy workloads for half the operations of the
/// others: a workload's own `operations` replaces `[run]`'s for it alone,
/// and cannot be given beside a timed window.
#[test]
fn a_workload_has_its_own_operation_count() {
    let sb = Sandbox::new();
    let text = r#"
name = "ops"
systems = ["redis"]
workloads = ["read-heavy", { preset = "balanced", operations = 300 }]

[run]
operations = 1000
"#;
    let f = write(&sb, "ops.toml", text);
    let p = plan(&sb, &f);
    let cells = p["cells"].as_array().expect("cells");
    let args = |i: usize| run_args(&cells[i]);
    assert!(args(0).contains("--operations 1000"), "{}", args(0));
    assert!(args(1).contains("--operations 300"), "{}", args(1));
    assert!(!args(1).contains("--operations 1000"), "{}", args(1));
    let timed = text.replace("operations = 1000", "duration = \"1s\"");
    let err = plan_error(&sb, &timed);
    assert!(
        err.contains("bad.toml:4:") && err.contains("workloads.operations"),
        "{err}"
    );
}

/// Exit code 3 must come with its reason: a cell marked invalid is named on
/// stderr as it ends, even with --quiet and --json (stdout stays JSON).
/// Here Redis may hold 4 MB of a 16 MB data set, so it evicts.
#[test]
fn an_invalid_cell_is_named_with_why_on_stderr_even_with_quiet_json() {
    let sb = Sandbox::new();
    let f = write(
        &sb,
        "evicts.toml",
        r#"
name = "evicts"
systems = [{ name = "redis", server_args = ["--maxmemory", "4mb", "--maxmemory-policy", "allkeys-random"] }]
workloads = ["read-heavy"]

[dataset]
records = 4000
field_count = 4
field_length = 1000

[run]
warmup = "50ms"
duration = "1s"

[sweep]
clients = [1]
"#,
    );
    let out = sb
        .kvbench()
        .args(["experiment", "run", &f, "--quiet", "--json"])
        .output()
        .expect("kvbench runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: run "))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("(redis read-heavy x1): invalid: ")
            && warnings[0].contains("evictions: the server evicted"),
        "{stderr}"
    );
    let runs: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("JSON alone on stdout");
    assert_eq!(runs[0]["status"], "invalid", "{runs}");
}

/// `[sweep] faults`: faults are an axis like any other ("none" is the cell
/// without one); a cell with a fault never shares a kept server, and a bad
/// fault names the file, line and key.
#[test]
fn faults_are_swept_like_any_other_axis() {
    let sb = Sandbox::new();
    let text = r#"
name = "faults"
systems = ["redis"]
workloads = ["read-heavy"]
reload = "per-workload"
[dataset]
records = 200
[run]
duration = "2s"
warmup = "0s"
max_retries = 3
[sweep]
faults = ["none", "restart:0@1s", "pause:0:200ms@1s"]
"#;
    let f = write(&sb, "faults.toml", text);
    let p = plan(&sb, &f);
    let cells = p["cells"].as_array().expect("cells");
    let args: Vec<String> = cells.iter().map(run_args).collect();
    assert_eq!(cells.len(), 3, "{args:?}");
    assert_eq!(args.iter().filter(|a| !a.contains("--fault")).count(), 1);
    for fault in ["--fault restart:0@1s", "--fault pause:0:200ms@1s"] {
        assert_eq!(
            args.iter().filter(|a| a.contains(fault)).count(),
            1,
            "{args:?}"
        );
    }
    let keys: std::collections::HashSet<&str> =
        cells.iter().filter_map(|c| c["key"].as_str()).collect();
    assert_eq!(keys.len(), 3, "each fault is its own cell");
    let e = plan_error(&sb, &text.replace("pause:0:200ms@1s", "pause:7:200ms@1s"));
    assert!(
        e.contains("bad.toml")
            && e.contains("sweep.faults")
            && e.contains("there are 1 data nodes"),
        "{e}"
    );
}

/// Two workloads of one preset, told apart by their properties (an
/// eviction study's skews), are stored under their labels, so listings and
/// reports keep them apart; a preset used once keeps its name.
#[test]
fn workloads_of_one_preset_are_stored_under_their_labels() {
    let sb = Sandbox::new();
    let text = r#"
name = "two"
systems = ["redis"]
workloads = [
    { preset = "getset", properties = { requestdistribution = "zipfian" } },
    { preset = "getset", properties = { requestdistribution = "uniform" } },
    "ycsb/c",
]
[dataset]
records = 500
[run]
operations = 500
warmup = "0s"
"#;
    let f = write(&sb, "two.toml", text);
    let out = sb
        .kvbench()
        .args(["experiment", "run", &f, "-q"])
        .output()
        .expect("kvbench");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = sb.json(&["runs", "--json"]);
    let mut names: Vec<String> = runs
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|r| r["workload"].as_str().map(String::from))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "getset requestdistribution=uniform",
            "getset requestdistribution=zipfian",
            "ycsb/c"
        ]
    );
}
