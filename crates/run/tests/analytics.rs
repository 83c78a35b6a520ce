//! Paper D's runs driven as a library, without the command line: settings
//! built as data, private servers started and stopped by the run, ranks
//! checked against the reference, the record stored, nothing shown.

use kvbench_model::RunStatus;
use kvbench_run::analytics::lookup::{self, LookupSettings};
use kvbench_run::analytics::pagerank::{self, PagerankSettings};
use kvbench_run::analytics::{graph, GraphSpec, TOLERANCE};
use kvbench_run::view::Silent;
use kvbench_run::UsageError;
use kvbench_store::Store;

fn rmat(source: &str) -> GraphSpec {
    GraphSpec {
        source: source.into(),
        scale: 1.0,
        seed: 7,
    }
}

fn pagerank_settings(impls: &[&str]) -> PagerankSettings {
    PagerankSettings {
        graph: rmat("rmat:2000:10000"),
        impls: impls.iter().map(|s| s.to_string()).collect(),
        iterations: 4,
        damping: 0.85,
        drivers: Some(2),
        spark_master: "local[2]".into(),
    }
}

#[test]
fn pagerank_runs_each_implementation_checks_and_stores_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut store = Store::open(&dir.path().join("a.db")).expect("a store");
    let s = pagerank_settings(&["reference", "memcached", "redis-lua"]);
    let finished = pagerank::run(&s, &mut store, &Silent).expect("runs");
    assert!(finished.unsaved.is_none());
    let record = finished.saved().expect("stored");
    assert_eq!(record.status, RunStatus::Ok);
    assert_eq!(record.graph.nodes, 2000);
    assert_eq!(record.settings.tolerance, Some(TOLERANCE));
    let names: Vec<&str> = record
        .pagerank
        .iter()
        .map(|r| r.implementation.as_str())
        .collect();
    assert_eq!(names, ["reference", "memcached", "redis-lua"]);
    for r in &record.pagerank {
        assert!(r.max_relative_error <= TOLERANCE, "{}", r.implementation);
        assert_eq!(r.map_s.len(), 4, "{}", r.implementation);
        if r.implementation != "reference" {
            // A private server was loaded: it holds the graph, and was asked.
            assert!(r.memory_bytes.unwrap_or(0) > 0, "{}", r.implementation);
            assert!(r.requests.unwrap_or(0) > 0, "{}", r.implementation);
        }
    }
    let id = record.id.expect("an id");
    let back = store.get_analytics(id).expect("read back");
    assert_eq!(back.pagerank.len(), 3);
    assert_eq!(back.pagerank[1].requests, record.pagerank[1].requests);
}

#[test]
fn a_failing_implementation_is_stored_failed_with_what_finished_before() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut store = Store::open(&dir.path().join("a.db")).expect("a store");
    let s = pagerank_settings(&["reference", "no-such-store"]);
    let err = pagerank::run(&s, &mut store, &Silent).expect_err("an unknown implementation fails");
    assert!(format!("{err:#}").contains("no-such-store"), "{err:#}");
    let stored = store.list_analytics(None).expect("listed");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].status, RunStatus::Failed);
    assert!(stored[0]
        .failure
        .as_deref()
        .unwrap_or("")
        .contains("no-such-store"));
    assert_eq!(stored[0].pagerank.len(), 1, "the reference finished first");
}

#[test]
fn lookups_answer_every_key_and_their_percentiles_are_ordered() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut store = Store::open(&dir.path().join("a.db")).expect("a store");
    let s = LookupSettings {
        graph: rmat("rmat:2000:10000"),
        impls: vec!["redis".into(), "memcached".into()],
        count: 50,
        spark_master: "local[2]".into(),
        setget_s: Some(1.0),
    };
    // No lookups asked, or a set/get window of no time: bad input, refused
    // before any server starts.
    for (bad, says) in [
        (
            LookupSettings {
                count: 0,
                ..s.clone()
            },
            "--count",
        ),
        (
            LookupSettings {
                setget_s: Some(0.0),
                ..s.clone()
            },
            "--setget",
        ),
    ] {
        let err = lookup::run(&bad, &mut store, &Silent).expect_err(says);
        assert!(err.downcast_ref::<UsageError>().is_some(), "{err:#}");
        assert!(err.to_string().contains(says), "{err}");
    }
    assert!(store.list_analytics(None).expect("listed").is_empty());
    let record = lookup::run(&s, &mut store, &Silent)
        .expect("runs")
        .saved()
        .expect("stored");
    assert_eq!(record.lookups.len(), 2);
    for l in &record.lookups {
        assert_eq!(l.count, 50);
        assert!(l.setup_s > 0.0, "{}: loaded first", l.implementation);
        assert!(
            0.0 < l.p50_us && l.p50_us <= l.p99_us && l.p99_us <= l.max_us,
            "{l:?}"
        );
        // The set/get window followed on the same loaded server: the
        // paper's drivers, half gets and half sets, and the server's CPU
        // time split into its own and the kernel's.
        let sg = l.setget.as_ref().expect("set/get ran");
        let drivers = if l.implementation == "memcached" {
            5
        } else {
            6
        };
        assert_eq!(sg.drivers, drivers, "{}", l.implementation);
        assert!((1.0..3.0).contains(&sg.seconds), "{sg:?}");
        let ops = sg.ops();
        assert!(ops > 1000, "{sg:?}");
        let gets = sg.gets as f64 / ops as f64;
        assert!((0.45..0.55).contains(&gets), "half are gets: {sg:?}");
        let (user, system) = (
            sg.server_user_s.expect("user time"),
            sg.server_system_s.expect("system time"),
        );
        assert!(
            user >= 0.0 && system >= 0.0 && user + system > 0.0,
            "{sg:?}"
        );
        assert!(sg.client_cpu_s > 0.0, "{sg:?}");
    }
    let back = store
        .get_analytics(record.id.expect("an id"))
        .expect("read back");
    assert_eq!(back.lookups, record.lookups, "set/get stored exactly");
    assert_eq!(back.settings.setget_s, Some(1.0));
}

#[test]
fn a_graph_spec_that_cannot_be_built_is_a_usage_error_naming_its_flag() {
    for (spec, says) in [
        (rmat("rmat:0:10"), "--graph rmat:0:10"),
        (rmat("rmat:ten"), "expected rmat:NODES:EDGES"),
        (rmat("synthetic:facebook"), "unknown graph"),
        (rmat("/no/such/edges.txt"), "--graph"),
        (
            GraphSpec {
                scale: 0.0,
                ..rmat("synthetic:google")
            },
            "--scale",
        ),
    ] {
        let err = graph(&spec).expect_err(&spec.source);
        assert!(err.downcast_ref::<UsageError>().is_some(), "{err:#}");
        assert!(err.to_string().contains(says), "{err}");
    }
    let (g, description) = graph(&rmat("rmat:500:2000")).expect("builds");
    assert_eq!(g.nodes(), 500);
    assert!(description.contains("seed 7"), "{description}");
}
