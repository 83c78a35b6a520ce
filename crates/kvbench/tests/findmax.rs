//! findmax on a local Redis: the rate it returns meets the objective in a
//! separate open-loop run, and a rate 10% higher does not; every step is
//! stored as a run of its experiment; bad objectives are refused.

use crate::util::{timing_sensitive, Sandbox};

/// Reads only (the run's one histogram is then what findmax judges), of
/// 4 kB records, over links shaped to 10 Mbit/s (`--netns`): the link
/// carries about 310 replies a second, far below what the CPUs manage. On
/// this shared 2-vCPU VM a CPU-bound limit moved by 20-30% between searches
/// a minute apart (the machine's own states, see docs/metrics.md,
/// "Stability"), so no 10% margin could separate it reliably; the link's
/// limit is the same every time (two searches: 314 passed twice, 328
/// failed twice), so the test is about findmax and not about the VM.
const SHAPE: &[&str] = &[
    "--system",
    "redis",
    "--workload",
    "read-heavy",
    "-p",
    "readproportion=1",
    "-p",
    "updateproportion=0",
    "--records",
    "500",
    "--field-count",
    "4",
    "--field-length",
    "1000",
    "--clients",
    "4",
    "--warmup",
    "300ms",
    "--duration",
    "1s",
    "--seed",
    "11",
    "--netns",
    "--link-rate",
    "10mbit",
    "--quiet",
];

/// Above the link's rate the queue grows through the window and the
/// median reaches tens of milliseconds; below it, it stays under 1 ms.
const SLO: &str = "p50=5ms";

fn meets(sb: &Sandbox, rate: f64) -> bool {
    let mut args = SHAPE.to_vec();
    let rate = format!("{rate:.0}");
    args.extend(["--rate", &rate, "--json"]);
    let out = sb.kvbench().arg("run").args(&args).output().expect("run");
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("run JSON");
    let marks = rec["marks"].to_string();
    let ops = rec["run"]["ops"].as_array().expect("ops");
    assert_eq!(ops.len(), 1, "reads only");
    let p50 = ops[0]["latency"]["p50_us"]
        .as_f64()
        .unwrap_or(f64::INFINITY);
    rec["status"] != "failed"
        && !marks.contains("overloaded")
        && !marks.contains("errors")
        && p50 <= 5_000.0
}

#[test]
fn the_rate_found_meets_the_objective_and_ten_percent_more_does_not() {
    if crate::netns::skipped("findmax over a shaped link") {
        return;
    }
    let _serial = timing_sensitive();
    let sb = Sandbox::new();
    let mut args = vec!["findmax", "--slo", SLO, "--json"];
    args.extend_from_slice(SHAPE);
    let report = sb.json(&args);
    let best = report["max_rate"].as_f64().expect("a rate was found");
    assert!(
        report["stop"]
            .as_str()
            .unwrap_or("")
            .starts_with("converged"),
        "{report}"
    );
    let steps = report["steps"].as_array().expect("steps");
    assert!(steps.len() >= 4, "{report}");
    // The curve is stored: one run per step, under the experiment's name.
    let name = report["experiment"].as_str().expect("name");
    let exported = sb.json(&["export", "--format", "json", "--experiment", name]);
    assert_eq!(
        exported.as_array().map(Vec::len),
        Some(steps.len()),
        "every step stored"
    );
    let rates: Vec<Option<f64>> = exported
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["config"]["rate"].as_f64())
        .collect();
    let walked: Vec<Option<f64>> = steps.iter().map(|s| s["rate"].as_f64()).collect();
    assert_eq!(rates, walked, "stored runs are the steps, in order");

    // A separate run at the rate found meets the objective, and one 10%
    // higher does not; findmax judges a rate by the majority of up to three
    // probes, and so does this test.
    let passes = (0..3).filter(|_| meets(&sb, best)).count();
    assert!(
        passes >= 2,
        "{best:.0} ops/s met {SLO} in only {passes} of 3 runs"
    );
    let higher = best * 1.1;
    let fails = (0..3).filter(|_| !meets(&sb, higher)).count();
    assert!(
        fails >= 2,
        "{higher:.0} ops/s met {SLO} in {} of 3 runs",
        3 - fails
    );
}

#[test]
fn bad_objectives_and_bounds_are_refused_before_anything_runs() {
    let sb = Sandbox::new();
    for (flags, names) in [
        (vec!["--slo", "p99"], "--slo"),
        (vec!["--slo", "q99=1ms"], "--slo"),
        (vec!["--slo", "p100=1ms"], "--slo"),
        (vec!["--slo", "p99=fast"], "--slo"),
        (vec!["--slo", "p99=1ms", "--precision", "0"], "--precision"),
        (vec!["--slo", "p99=1ms", "--rate", "1000"], "--rate"),
        (
            vec![
                "--slo",
                "p99=1ms",
                "--min-rate",
                "5000",
                "--max-rate",
                "100",
            ],
            "--min-rate",
        ),
    ] {
        let mut args = vec!["findmax"];
        args.extend(flags.iter());
        args.extend_from_slice(SHAPE);
        let out = sb.kvbench().args(&args).output().expect("findmax");
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(names), "{flags:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!sb.db().exists(), "nothing stored");
}
