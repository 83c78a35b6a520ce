//! A report's files from a real SQLite store: bad selections are usage
//! errors naming what was asked, nothing half-written; an analytics report
//! is written whole with `index.html` last and its figures beside it.

use kvbench_model::analytics::{
    AnalyticsKind, AnalyticsRecord, AnalyticsSettings, GraphInfo, PagerankResult,
};
use kvbench_model::{Environment, RunStatus};
use kvbench_pages::{prepare, write, write_analytics, Framing, Selection};
use kvbench_run::UsageError;
use kvbench_store::{Location, Store};

fn usage_text(e: &anyhow::Error) -> String {
    e.downcast_ref::<UsageError>()
        .map(|u| u.0.clone())
        .unwrap_or_else(|| panic!("a usage error, got: {e:#}"))
}

fn pagerank_record() -> AnalyticsRecord {
    AnalyticsRecord {
        id: None,
        kind: AnalyticsKind::Pagerank,
        started_at: "2026-11-28T10:00:00Z".into(),
        finished_at: "2026-11-28T10:01:00Z".into(),
        status: RunStatus::Ok,
        failure: None,
        graph: GraphInfo {
            source: "rmat:1000:5000".into(),
            description: "rmat:1000:5000 (R-MAT, seed 1)".into(),
            scale: 1.0,
            seed: 1,
            nodes: 1000,
            edges: 5000,
            dangling: 10,
        },
        settings: AnalyticsSettings {
            implementations: vec!["reference".into(), "redis".into()],
            iterations: Some(10),
            damping: Some(0.85),
            drivers: None,
            count: None,
            setget_s: None,
            spark_master: "local[2]".into(),
            tolerance: Some(1e-6),
        },
        environment: Environment::default(),
        pagerank: ["reference", "redis"]
            .iter()
            .map(|name| PagerankResult {
                implementation: (*name).into(),
                load_s: 0.1,
                map_s: vec![0.01; 10],
                reduce_s: vec![0.01; 10],
                iterations_s: 0.2,
                memory_bytes: Some(1_000_000),
                server_cpu_s: None,
                client_cpu_s: None,
                requests: None,
                max_relative_error: 1e-12,
                detail: String::new(),
            })
            .collect(),
        lookups: Vec::new(),
    }
}

#[test]
fn bad_selections_are_usage_errors_naming_what_was_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Location::from(dir.path().join("k.db").as_path());
    let store = Store::open_location(&db).expect("store");
    let out = dir.path().join("rep");
    prepare(&out).expect("prepare");
    let e = write(
        &store,
        &db,
        &Selection::Ids(vec![99]),
        &out,
        Framing::default(),
    )
    .err()
    .expect("no run 99");
    assert!(usage_text(&e).contains("no run with id 99"), "{e}");
    let e = write(
        &store,
        &db,
        &Selection::Ids(Vec::new()),
        &out,
        Framing::default(),
    )
    .err()
    .expect("empty");
    assert!(usage_text(&e).contains("the selection is empty"), "{e}");
    let e = write(
        &store,
        &db,
        &Selection::Experiment("nope".into()),
        &out,
        Framing::default(),
    )
    .err()
    .expect("no experiment");
    assert!(usage_text(&e).contains("--experiment 'nope'"), "{e}");
    let e = write_analytics(&store, &db, &[7], &out, None, None, false)
        .err()
        .expect("no analytics run 7");
    assert!(usage_text(&e).contains("--analytics"), "{e}");
    assert!(
        !out.join("index.html").exists(),
        "nothing written for a bad selection"
    );
    // A directory that cannot be made: a file is in the way.
    std::fs::write(dir.path().join("file"), b"x").expect("write");
    let e = prepare(&dir.path().join("file/rep")).expect_err("not a dir");
    assert!(usage_text(&e).starts_with("--out "), "{e}");
}

#[test]
fn an_analytics_report_is_written_whole_with_its_index_last() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Location::from(dir.path().join("k.db").as_path());
    let mut store = Store::open_location(&db).expect("store");
    let id = store.save_analytics(&pagerank_record()).expect("save");
    let out = dir.path().join("rep");
    prepare(&out).expect("prepare");
    let w =
        write_analytics(&store, &db, &[id], &out, Some("t".into()), None, false).expect("written");
    assert_eq!(
        w.files.last().and_then(|p| p.file_name()),
        Some(std::ffi::OsStr::new("index.html")),
        "index.html last: {:?}",
        w.files
    );
    for f in &w.files {
        assert!(f.exists(), "{}", f.display());
    }
    assert!(!w.summary.figures.is_empty());
    for id in &w.summary.figures {
        assert!(out.join(format!("figures/{id}.svg")).exists(), "{id}");
    }
    let html = std::fs::read_to_string(out.join("index.html")).expect("index");
    assert!(
        html.contains(&format!("kvbench report --analytics {id} --db ")),
        "the command that repeats it"
    );
}
