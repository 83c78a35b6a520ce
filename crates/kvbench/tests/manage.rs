//! Managing stored results on runs made by real servers: labels set at run
//! time and afterwards, filtering by them, deleting runs (every row of them,
//! nothing else, all or nothing), and `diff` of two runs and of two cells of
//! an experiment with several iterations.

use crate::bad_input::assert_usage_error;
use crate::experiment::SWEEP;
use crate::util::{Sandbox, SMALL};
use serde_json::{json, Value};

/// `kvbench run` of a small balanced workload, with `extra` flags; the record.
fn run(sb: &Sandbox, system: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", "--system", system, "--workload", "balanced"];
    args.extend_from_slice(SMALL);
    args.extend_from_slice(&["--seed", "5", "--json"]);
    args.extend_from_slice(extra);
    sb.json(&args)
}

fn id(rec: &Value) -> i64 {
    rec["id"].as_i64().expect("id")
}

/// The ids `runs --json ARGS` lists, newest first.
fn listed(sb: &Sandbox, args: &[&str]) -> Vec<i64> {
    let mut all = vec!["runs", "--json"];
    all.extend_from_slice(args);
    let rows = sb.json(&all);
    rows.as_array()
        .expect("array")
        .iter()
        .map(|r| r["id"].as_i64().expect("id"))
        .collect()
}

fn labels_of(sb: &Sandbox, id: i64) -> Value {
    sb.json(&["show", &id.to_string(), "--json"])["labels"].clone()
}

#[test]
fn labels_are_stored_shown_filtered_and_changed() {
    let sb = Sandbox::new();
    let a = id(&run(
        &sb,
        "redis",
        &["--label", "env=ci", "--label", "fast"],
    ));
    let b = id(&run(&sb, "redis", &["--label", "env=laptop"]));
    assert_eq!(labels_of(&sb, a), json!({"env": "ci", "fast": ""}));
    assert_eq!(listed(&sb, &["--label", "env"]), [b, a]);
    assert_eq!(listed(&sb, &["--label", "env=ci"]), [a]);
    assert_eq!(listed(&sb, &["--label", "env", "--label", "fast"]), [a]);
    assert_eq!(listed(&sb, &["--label", "fast=x"]), Vec::<i64>::new());

    // Listed with the runs, in the table and the JSON.
    let rows = sb.json(&["runs", "--json"]);
    assert_eq!(rows[0]["labels"], json!({"env": "laptop"}));
    let table = sb.stdout(&["runs"]);
    assert!(
        table.contains("fast, env=ci") || table.contains("env=ci, fast"),
        "{table}"
    );
    let shown = sb.stdout(&["show", &a.to_string()]);
    assert!(shown.contains("labels: env=ci, fast"), "{shown}");

    // Changed afterwards: set, replaced, removed, on several runs at once.
    let ids = format!("{a},{b}");
    let changed = sb.json(&[
        "label",
        &ids,
        "--add",
        "note=a = b",
        "--add",
        "env=prod",
        "--remove",
        "fast",
        "--json",
    ]);
    assert_eq!(changed.as_array().map(Vec::len), Some(2));
    for run in [a, b] {
        assert_eq!(labels_of(&sb, run), json!({"env": "prod", "note": "a = b"}));
    }

    // Bad labels are one line naming the flag, exit 2, and change nothing.
    assert_usage_error(
        &sb,
        &["label", &a.to_string(), "--add", "a b"],
        "--add 'a b'",
    );
    assert_usage_error(
        &sb,
        &["label", &a.to_string(), "--remove", "k=v"],
        "--remove 'k=v'",
    );
    assert_usage_error(&sb, &["label", &format!("{a},999"), "--add", "x"], "999");
    assert_eq!(labels_of(&sb, a), json!({"env": "prod", "note": "a = b"}));
    let mut bad = vec!["run", "--system", "redis", "--workload", "balanced"];
    bad.extend_from_slice(&["--label", "=x"]);
    assert_usage_error(&sb, &bad, "--label '=x'");
    assert_eq!(listed(&sb, &[]).len(), 2, "a bad --label stores no run");
}

/// Rows per table that hold run `id`: every table with a run_id column.
fn rows_of(sb: &Sandbox, id: i64) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(sb.db()).expect("open db");
    let tables: Vec<String> = conn
        .prepare(
            "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c
             WHERE m.type = 'table' AND c.name = 'run_id' ORDER BY m.name",
        )
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut out: Vec<(String, i64)> = tables
        .into_iter()
        .map(|t| {
            let sql = format!("SELECT count(*) FROM {t} WHERE run_id = ?1");
            let n = conn.query_row(&sql, [id], |r| r.get(0)).expect("count");
            (t, n)
        })
        .collect();
    let n = conn
        .query_row("SELECT count(*) FROM runs WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .expect("count");
    out.push(("runs".into(), n));
    out
}

#[test]
fn delete_removes_every_row_of_a_run_and_nothing_else() {
    let sb = Sandbox::new();
    let a = id(&run(&sb, "memcached", &["--label", "scratch"]));
    let b = id(&run(&sb, "memcached", &["--label", "keep"]));
    let rows_b = rows_of(&sb, b);
    // The run has rows in every table, labels included, or this proves little.
    for table in [
        "op_results",
        "histograms",
        "interval_histograms",
        "probes",
        "run_labels",
        "runs",
    ] {
        assert!(
            rows_b.iter().any(|(t, n)| t == table && *n > 0),
            "{table}: {rows_b:?}"
        );
    }
    let before_a = rows_of(&sb, a);

    // Without --yes and without a terminal: the list, exit 2, nothing deleted.
    let out = sb
        .kvbench()
        .args(["delete", &a.to_string()])
        .write_stdin("")
        .output()
        .expect("delete");
    assert_eq!(out.status.code(), Some(2));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains("would be deleted") && listing.contains("scratch"),
        "{listing}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert_eq!(rows_of(&sb, a), before_a);

    // An unknown id, alone or among stored ones: exit 2 naming it, nothing deleted.
    assert_usage_error(&sb, &["delete", "999", "--yes"], "999");
    assert_usage_error(&sb, &["delete", &a.to_string(), "998", "--yes"], "998");
    assert_usage_error(&sb, &["delete", "--label", "nothing", "--yes"], "nothing");
    assert_eq!(rows_of(&sb, a), before_a);

    let out = sb.stdout(&["delete", "--label", "scratch", "--yes"]);
    assert!(out.contains("deleted 1 run(s)"), "{out}");
    let gone = rows_of(&sb, a);
    assert!(gone.iter().all(|(_, n)| *n == 0), "{gone:?}");
    assert_eq!(rows_of(&sb, b), rows_b, "the other run is untouched");
    assert_eq!(listed(&sb, &[]), [b]);
    assert_usage_error(&sb, &["show", &a.to_string()], &a.to_string());
}

/// A `diff --json` metric row.
fn metric<'a>(d: &'a Value, op: &str, name: &str) -> &'a Value {
    d["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["op"] == op && m["metric"] == name)
        .unwrap_or_else(|| panic!("no {op} {name} in {d}"))
}

#[test]
fn diff_names_the_differing_configuration_and_the_metric_deltas() {
    let sb = Sandbox::new();
    let a = run(&sb, "redis", &["--clients", "1"]);
    let b = run(&sb, "redis", &["--clients", "4", "--label", "wide"]);
    let (ia, ib) = (id(&a).to_string(), id(&b).to_string());
    let d = sb.json(&["diff", &ia, &ib, "--json"]);
    assert_eq!(
        d["config"],
        json!([{"field": "clients", "a": 1, "b": 4}]),
        "same seed and flags otherwise: only clients differs"
    );
    assert_eq!(d["environment"], json!([]));
    assert_eq!(d["labels"], json!([{"field": "wide", "b": ""}]));
    assert_eq!(d["a"]["runs"], json!([id(&a)]));
    for (op, phase_op) in [("total", None), ("read", Some(0)), ("update", Some(1))] {
        let m = metric(&d, op, "throughput");
        let stored = |rec: &Value| match phase_op {
            None => rec["run"]["throughput"].as_f64().expect("throughput"),
            Some(i) => rec["run"]["ops"][i]["throughput"]
                .as_f64()
                .expect("op throughput"),
        };
        let (ta, tb) = (stored(&a), stored(&b));
        assert_eq!(m["a"]["mean"].as_f64(), Some(ta), "{op}");
        assert_eq!(m["b"]["mean"].as_f64(), Some(tb), "{op}");
        assert!((m["change"].as_f64().expect("change") - (tb - ta) / ta).abs() < 1e-12);
        assert!(
            m["a"]["ci95"].is_null() && m["interval"].is_null() && m["call"].is_null(),
            "{m}"
        );
    }
    let p99 = metric(&d, "read", "p99_us");
    assert_eq!(p99["a"]["mean"], a["run"]["ops"][0]["latency"]["p99_us"]);
    for name in ["p50_us", "p999_us", "mean_us"] {
        assert!(metric(&d, "update", name)["b"]["mean"].is_f64());
    }

    let text = sb.stdout(&["diff", &ia, &ib]);
    assert!(text.contains("single run, no interval"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["clients", "1", "4"]),
        "{text}"
    );
    assert!(text.contains("environment: the same"), "{text}");
    assert_usage_error(&sb, &["diff", &ia, "999"], "999");
}

#[test]
fn diff_of_experiment_cells_uses_every_iteration_and_experiments_are_labelled_and_deleted() {
    let sb = Sandbox::new();
    // Three iterations of two cells (1 and 2 clients).
    let cells = SWEEP
        .replace("name = \"tiny\"", "name = \"cells\"\niterations = 3")
        .replace("pipeline = [1, 4]", "");
    std::fs::write(sb.path().join("cells.toml"), cells).expect("write");
    let runs = sb.json(&[
        "experiment",
        "run",
        "cells.toml",
        "--quiet",
        "--json",
        "--label",
        "sweep=1",
    ]);
    let runs = runs.as_array().expect("records");
    assert_eq!(runs.len(), 6);
    assert!(runs.iter().all(|r| r["labels"] == json!({"sweep": "1"})));
    // Iterations are outermost: cells alternate 1, 2, 1, 2, ...
    let of = |clients: u64| -> Vec<&Value> {
        runs.iter()
            .filter(|r| r["config"]["clients"] == clients)
            .collect()
    };
    let (one, two) = (of(1), of(2));
    let d = sb.json(&[
        "diff",
        &id(one[1]).to_string(),
        &id(two[2]).to_string(),
        "--json",
    ]);
    assert_eq!(
        d["a"]["runs"],
        json!(one.iter().map(|r| id(r)).collect::<Vec<_>>())
    );
    assert_eq!(
        d["b"]["runs"],
        json!(two.iter().map(|r| id(r)).collect::<Vec<_>>())
    );
    assert_eq!(d["a"]["experiment"], "cells");
    let m = metric(&d, "total", "throughput");
    for (side, cell) in [("a", &one), ("b", &two)] {
        // Mean, deviation and Student's t interval, computed here by hand.
        let xs: Vec<f64> = cell
            .iter()
            .map(|r| r["run"]["throughput"].as_f64().expect("t"))
            .collect();
        let mean = xs.iter().sum::<f64>() / 3.0;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.3027 * sd / 3f64.sqrt();
        let e = &m[side];
        assert_eq!(e["n"], 3);
        assert!((e["mean"].as_f64().expect("mean") - mean).abs() < 1e-6 * mean);
        assert!((e["sd"].as_f64().expect("sd") - sd).abs() < 1e-6 * mean);
        let lo = e["ci95"][0].as_f64().expect("lo");
        let hi = e["ci95"][1].as_f64().expect("hi");
        assert!(
            (lo - (mean - half)).abs() < 1e-6 * mean && (hi - (mean + half)).abs() < 1e-6 * mean
        );
    }
    // The change B / A: Welch's interval over the two cells' 3 runs each,
    // and a call that agrees with it against ±5%.
    let iv = &m["interval"];
    assert_eq!(
        (iv["n"].clone(), iv["method"].clone()),
        (json!(3), json!("welch"))
    );
    let (lo, hi) = (
        iv["lo_log"].as_f64().expect("lo"),
        iv["hi_log"].as_f64().expect("hi"),
    );
    let edge = 1.05f64.ln();
    let want = if lo > edge {
        "ahead"
    } else if hi < -edge {
        "behind"
    } else if lo >= -edge && hi <= edge {
        "equal"
    } else {
        "undecided"
    };
    assert_eq!(m["call"], json!(want), "{m}");
    let text = sb.stdout(&["diff", &id(one[0]).to_string(), &id(two[0]).to_string()]);
    assert!(
        text.contains("mean of 3 iterations") && text.contains(" ± "),
        "{text}"
    );

    // Two iterations of the same cell: compared as single runs, with a note.
    let d = sb.json(&[
        "diff",
        &id(one[0]).to_string(),
        &id(one[1]).to_string(),
        "--json",
    ]);
    assert_eq!(d["a"]["runs"], json!([id(one[0])]));
    assert!(d["notes"].to_string().contains("same cell"), "{d}");

    // Labels and deletion by experiment reach every run of it.
    sb.stdout(&["label", "--experiment", "cells", "--add", "paper=A"]);
    assert_eq!(listed(&sb, &["--label", "paper=A"]).len(), 6);
    assert_usage_error(&sb, &["delete", "--experiment", "nope", "--yes"], "nope");
    let out = sb.stdout(&["delete", "--experiment", "cells", "--yes"]);
    assert!(out.contains("deleted 6 run(s)"), "{out}");
    assert_eq!(listed(&sb, &[]), Vec::<i64>::new());
}
