//! The report of a real small experiment (three systems, two workloads,
//! three client counts, two iterations), written by `experiment run` and by
//! `kvbench report`, opened in headless Chromium: no console error, no
//! request to any network, every figure there; every PNG a real picture,
//! every SVG well-formed with a title and labelled axes.

use crate::browser::{check_page, png_size};
use crate::util::Sandbox;
use std::path::Path;

const EXPERIMENT: &str = r#"
name = "report-small"
seed = 5
iterations = 2
reload = "once-per-system"
systems = ["redis", "valkey", "memcached"]
workloads = ["read-heavy", "balanced"]
[dataset]
records = 2000
field_count = 2
field_length = 100
[run]
warmup = "100ms"
duration = "300ms"
[sweep]
clients = [1, 2, 4]
"#;

/// Every figure file of `dir`: its SVG parses as XML, names its title and
/// axes, and its PNG is the same size class and has many colours.
fn figures_are_pictures(dir: &Path) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir(dir.join("figures")).expect("figures/") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("svg") {
            continue;
        }
        n += 1;
        let svg = std::fs::read_to_string(&path).expect("svg");
        let doc = roxmltree::Document::parse(&svg)
            .unwrap_or_else(|e| panic!("{} is not well-formed: {e}", path.display()));
        let texts: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert!(
            texts
                .iter()
                .any(|t| t.contains(':') || t.starts_with("Server memory")),
            "{}: no title",
            path.display()
        );
        assert!(
            texts
                .iter()
                .filter(|t| t.contains(" (") && t.ends_with(')'))
                .count()
                >= 2,
            "{}: axis labels with units: {texts:?}",
            path.display()
        );
        let png = std::fs::read(path.with_extension("png")).expect("png beside the svg");
        let (w, h) = png_size(&png);
        assert!(w >= 900 && h >= 300, "{}: {w}x{h}", path.display());
        assert!(
            png.len() > 10_000,
            "{}: {} bytes",
            path.display(),
            png.len()
        );
    }
    n
}

#[test]
fn a_small_experiments_report_opens_clean_in_a_browser_with_every_figure() {
    let sb = Sandbox::new();
    std::fs::write(sb.path().join("small.toml"), EXPERIMENT).expect("file");
    let out = sb
        .kvbench()
        .args([
            "experiment",
            "run",
            "small.toml",
            "--quiet",
            "--report-dir",
            "rep",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Exit 0, or 3 when this busy machine marked some cell (noisy, unstable):
    // the report is written either way.
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "{:?} {stderr}",
        out.status
    );
    assert!(
        stderr.contains("rep/index.html"),
        "the path is printed: {stderr}"
    );
    let dir = sb.path().join("rep");
    let svgs = figures_are_pictures(&dir);
    // Per workload: throughput, read and update latency, two spectra, CPU;
    // and one memory figure.
    assert!(svgs >= 11, "{svgs} figures");

    let md = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    assert_eq!(md.matches("](figures/").count(), svgs, "every PNG linked");
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    assert!(
        html.contains("[run]") && html.contains("report-small"),
        "the experiment file is in it"
    );
    assert!(
        html.contains("kvbench experiment run FILE"),
        "the command that measures again"
    );

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-small.png");
    let page = check_page(
        &dir.join("index.html"),
        &[
            "figure svg",
            "figcaption",
            "table.takeaways tr",
            "#reproducibility",
        ],
        Some(&shot),
    );
    assert!(page.console_errors.is_empty(), "{:?}", page.console_errors);
    assert!(
        page.network_requests.is_empty(),
        "{:?}",
        page.network_requests
    );
    let count = |sel: &str| {
        page.counts
            .iter()
            .find(|(s, _)| s == sel)
            .map_or(0, |(_, n)| *n)
    };
    assert_eq!(count("figure svg"), svgs, "every figure inline");
    assert_eq!(count("figcaption"), svgs);
    // A header row and one row per workload and topology.
    assert_eq!(count("table.takeaways tr"), 3);
    assert_eq!(count("#reproducibility"), 1);
    let (w, h) = png_size(&page.screenshot_png);
    assert!(w == 1280 && h > 2000, "screenshot {w}x{h}");
    assert!(shot.exists(), "the screenshot is kept as an artifact");

    // The same report again from the database, as JSON for a program.
    let v = sb.json(&[
        "report",
        "--experiment",
        "report-small",
        "--out",
        "again",
        "--json",
    ]);
    assert_eq!(v["report"]["runs"], 36, "{v}");
    assert_eq!(v["report"]["cells"], 18);
    assert_eq!(v["report"]["figures"].as_array().map(Vec::len), Some(svgs));
    assert_eq!(v["report"]["takeaways"].as_array().map(Vec::len), Some(4));
}

#[test]
fn a_report_of_nothing_or_nowhere_is_bad_input() {
    let sb = Sandbox::new();
    // No database.
    sb.kvbench()
        .args(["report", "--out", "r"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--db"));
    // A database, and an experiment it does not hold.
    sb.kvbench()
        .args([
            "run",
            "--system",
            "redis",
            "--workload",
            "read-heavy",
            "--records",
            "500",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
            "--quiet",
        ])
        .assert()
        .code(predicates::ord::lt(4));
    sb.kvbench()
        .args(["report", "--experiment", "nope", "--out", "r"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--experiment 'nope'"));
    // An --out below a file.
    std::fs::write(sb.path().join("file"), "x").expect("file");
    sb.kvbench()
        .args(["report", "--out", "file/r"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--out file/r"));
    // The single run, by default (--last).
    sb.kvbench()
        .args(["report", "--out", "r"])
        .assert()
        .success();
    assert!(sb.path().join("r/index.html").exists());
}
