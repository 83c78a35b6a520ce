//! The analytics report from hand-made records: the paper's findings judged
//! by their rules (bounds, scaling, the client-bound case), and the page's
//! figures drawn and linked.

use super::*;
use crate::paper::Verdict;
use kvbench_model::analytics::*;
use kvbench_model::{Environment, RunStatus};

fn paper() -> Paper {
    toml::from_str(include_str!("../../../../papers/zhang2014.toml")).expect("zhang2014.toml")
}

fn result(implementation: &str, memory_mb: f64, server: f64, client: f64) -> PagerankResult {
    PagerankResult {
        implementation: implementation.into(),
        load_s: 1.0,
        map_s: vec![1.0; 10],
        reduce_s: vec![0.5; 10],
        iterations_s: 15.0,
        memory_bytes: Some((memory_mb * 1e6) as u64),
        server_cpu_s: Some(server * 15.0),
        client_cpu_s: Some(client * 15.0),
        requests: Some(1000),
        max_relative_error: 1e-12,
        detail: format!("{implementation} x"),
    }
}

fn lookup(implementation: &str, p50_us: f64) -> LookupResult {
    LookupResult {
        implementation: implementation.into(),
        count: 100,
        setup_s: 1.0,
        p50_us,
        p99_us: p50_us * 2.0,
        max_us: p50_us * 3.0,
        detail: String::new(),
        setget: None,
    }
}

/// A set/get window of 10 s with the server's `user` and `system` seconds.
fn setget(user: f64, system: f64) -> SetGetResult {
    SetGetResult {
        drivers: 6,
        seconds: 10.0,
        gets: 50_000,
        sets: 50_000,
        server_user_s: Some(user),
        server_system_s: Some(system),
        tick_s: 0.01,
        client_cpu_s: 6.0,
    }
}

fn record(id: i64, kind: AnalyticsKind, nodes: u32) -> AnalyticsRecord {
    AnalyticsRecord {
        id: Some(id),
        kind,
        started_at: "2026-11-25T10:00:00Z".into(),
        finished_at: "2026-11-25T10:06:00Z".into(),
        status: RunStatus::Ok,
        failure: None,
        graph: GraphInfo {
            source: "synthetic:google".into(),
            description: "synthetic:google".into(),
            scale: f64::from(nodes) / 875_713.0,
            seed: 1,
            nodes,
            edges: u64::from(nodes) * 6,
            dangling: 0,
        },
        settings: AnalyticsSettings {
            implementations: Vec::new(),
            iterations: Some(10),
            damping: Some(0.85),
            drivers: None,
            count: Some(100),
            setget_s: None,
            spark_master: "local[2]".into(),
            tolerance: Some(1e-6),
        },
        environment: Environment::default(),
        pagerank: Vec::new(),
        lookups: Vec::new(),
    }
}

fn verdicts(records: &[AnalyticsRecord]) -> Vec<(String, Verdict)> {
    findings::evaluate(&paper(), records)
        .into_iter()
        .map(|o| (o.id, o.verdict))
        .collect()
}

fn of(v: &[(String, Verdict)], id: &str) -> Verdict {
    v.iter()
        .find(|(i, _)| i == id)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("{id} in {v:?}"))
}

#[test]
fn the_papers_findings_are_judged_by_their_rules() {
    let mut pr = record(1, AnalyticsKind::Pagerank, 875_713);
    pr.pagerank = vec![
        result("reference", 33.0, 0.0, 0.0),
        // Twice the paper's 85 MB, the server busy, the drivers not.
        result("redis", 176.0, 0.96, 0.27),
        // Within the bounds of 135 MB, but the drivers above the server.
        result("memcached", 150.0, 0.6, 0.9),
        result("spark", 32.0, 0.0, 0.0),
    ];
    let mut lk = record(2, AnalyticsKind::Lookup, 875_713);
    lk.lookups = vec![
        lookup("redis", 66.0),
        lookup("memcached", 8.0),
        lookup("spark", 136_000.0),
    ];
    let v = verdicts(&[pr.clone(), lk.clone()]);
    assert_eq!(of(&v, "D1"), Verdict::Agrees, "redis server-bound");
    assert_eq!(of(&v, "D2"), Verdict::Differs, "memcached client-bound");
    assert_eq!(of(&v, "D3"), Verdict::Differs, "176 MB against 85 MB");
    assert_eq!(of(&v, "D4"), Verdict::Agrees, "150 MB against 135 MB");
    // PySpark's pickled cache is not Spark 0.8's object cache: not judged.
    assert_eq!(of(&v, "D5"), Verdict::NotComparable, "32 MB against 3.9 GB");
    assert_eq!(of(&v, "D6"), Verdict::Agrees);
    assert_eq!(of(&v, "D7"), Verdict::Agrees);
    let outcomes = findings::evaluate(&paper(), &[pr.clone(), lk.clone()]);
    let d2 = outcomes.iter().find(|o| o.id == "D2").expect("D2");
    assert!(d2.reason.contains("client side was the limit"), "{d2:?}");
    let d3 = outcomes.iter().find(|o| o.id == "D3").expect("D3");
    assert!(d3.measured.contains("2.07x"), "{}", d3.measured);

    // Lookups only 50 times slower than a GET differ; nothing measured is
    // "not measured".
    lk.lookups[2].p50_us = 66.0 * 50.0;
    assert_eq!(of(&verdicts(&[pr.clone(), lk]), "D6"), Verdict::Differs);
    assert_eq!(of(&verdicts(&[pr]), "D6"), Verdict::NotMeasured);
}

#[test]
fn set_get_agrees_only_with_the_server_busy_and_mostly_in_the_kernel() {
    let mut lk = record(2, AnalyticsKind::Lookup, 875_713);
    lk.lookups = vec![lookup("redis", 66.0), lookup("memcached", 8.0)];
    // Redis busy 95% of a core, 65% of it in the kernel.
    lk.lookups[0].setget = Some(setget(3.3, 6.2));
    // Memcached as busy, but 40% in the kernel: its own code dominates.
    lk.lookups[1].setget = Some(setget(5.7, 3.8));
    let outcomes = findings::evaluate(&paper(), std::slice::from_ref(&lk));
    let v = verdicts(std::slice::from_ref(&lk));
    assert_eq!(of(&v, "D8"), Verdict::Agrees);
    assert_eq!(of(&v, "D9"), Verdict::Differs);
    let d9 = outcomes.iter().find(|o| o.id == "D9").expect("D9");
    assert!(d9.reason.contains("own code"), "{d9:?}");
    assert!(
        d9.measured.contains("40% of it in the kernel"),
        "{}",
        d9.measured
    );
    for (user, system, want, why) in [
        (
            4.65,
            4.85,
            Verdict::Inconclusive,
            "51% in the kernel is within the run-to-run spread of half: the data cannot tell",
        ),
        (
            1.0,
            3.0,
            Verdict::Differs,
            "the server idle more than half the window: not the bottleneck, whatever its kernel share",
        ),
        (
            1.5,
            6.4,
            Verdict::Inconclusive,
            "busy within the run-to-run spread of 80% (79%, as measured here): not differs",
        ),
        (
            2.0,
            6.1,
            Verdict::Inconclusive,
            "busy just above 80%, within the spread: not agrees",
        ),
    ] {
        lk.lookups[0].setget = Some(setget(user, system));
        assert_eq!(
            of(&verdicts(std::slice::from_ref(&lk)), "D8"),
            want,
            "{why}"
        );
    }
    // No set/get window (or no CPU figures): not measured.
    lk.lookups[1].setget = None;
    lk.lookups[0].setget = Some(SetGetResult {
        server_system_s: None,
        ..setget(3.3, 6.2)
    });
    let v = verdicts(&[lk]);
    assert_eq!(of(&v, "D8"), Verdict::NotMeasured);
    assert_eq!(of(&v, "D9"), Verdict::NotMeasured);
}

#[test]
fn the_papers_memory_is_scaled_to_a_smaller_graph() {
    // A graph with a tenth of the nodes: the paper's 135 MB becomes 13.5.
    let mut pr = record(1, AnalyticsKind::Pagerank, 87_571);
    pr.pagerank = vec![result("memcached", 14.0, 1.0, 0.5)];
    let outcomes = findings::evaluate(&paper(), &[pr.clone()]);
    let d4 = outcomes.iter().find(|o| o.id == "D4").expect("D4");
    assert_eq!(d4.verdict, Verdict::Agrees, "{d4:?}");
    assert!(d4.measured.contains("13.5 MB"), "{}", d4.measured);
    pr.pagerank[0].memory_bytes = Some(140_000_000);
    assert_eq!(of(&verdicts(&[pr]), "D4"), Verdict::Differs);
}

#[test]
fn the_newest_record_is_judged() {
    let mut old = record(1, AnalyticsKind::Pagerank, 875_713);
    old.pagerank = vec![result("redis", 85.0, 0.9, 0.1)];
    let mut new = record(5, AnalyticsKind::Pagerank, 875_713);
    new.pagerank = vec![result("redis", 300.0, 0.9, 0.1)];
    assert_eq!(
        of(&verdicts(&[new.clone(), old.clone()]), "D3"),
        Verdict::Differs
    );
    assert_eq!(of(&verdicts(&[old, new]), "D3"), Verdict::Differs);
}

/// Paper D's Pokec graph run beside the Google graph: a newer record of
/// another dataset is shown, never judged against the Google figures, and
/// its memory figure has no paper series scaled to it.
#[test]
fn a_run_of_another_dataset_is_not_judged_against_the_papers_graph() {
    let mut google = record(1, AnalyticsKind::Pagerank, 875_713);
    google.pagerank = vec![result("redis", 176.0, 0.96, 0.27)];
    let mut pokec = record(5, AnalyticsKind::Pagerank, 1_632_803);
    pokec.graph.source = "synthetic:pokec".into();
    // 85 MB x 1.865 (the node ratio) would agree, were it judged.
    pokec.pagerank = vec![result("redis", 160.0, 0.96, 0.27)];
    let both = [google.clone(), pokec.clone()];
    let outcomes = findings::evaluate(&paper(), &both);
    let d3 = outcomes.iter().find(|o| o.id == "D3").expect("D3");
    assert_eq!(d3.verdict, Verdict::Differs, "{d3:?}");
    assert!(d3.measured.contains("176.0 MB"), "{}", d3.measured);
    assert_eq!(of(&verdicts(&[pokec.clone()]), "D3"), Verdict::NotMeasured);
    // The real file of the paper's size is the paper's graph whatever its name.
    let mut file = google;
    file.graph.source = "web-Google.txt".into();
    file.graph.edges = 5_105_039;
    assert_eq!(of(&verdicts(&[file]), "D3"), Verdict::Differs);
    let figs = figures::build(&both, Some(&paper()));
    let series = |id: &str| {
        figs.iter()
            .find(|f| f.id == id)
            .map(|f| f.panels[0].series.len())
            .unwrap_or_else(|| panic!("{id}"))
    };
    assert_eq!(series("graph-memory-1"), 2, "ours and the paper's");
    assert_eq!(series("graph-memory-5"), 1, "ours only");
}

#[test]
fn the_page_has_every_figure_with_the_papers_memory_beside_ours() {
    let mut pr = record(3, AnalyticsKind::Pagerank, 875_713);
    pr.pagerank = vec![
        result("reference", 33.0, 0.0, 0.0),
        result("redis", 176.0, 0.96, 0.27),
        result("redis-lua", 176.0, 0.99, 0.01),
        result("spark", 32.0, 0.0, 0.0),
    ];
    pr.pagerank[0].reduce_s = vec![0.0; 10];
    let mut lk = record(4, AnalyticsKind::Lookup, 875_713);
    lk.lookups = vec![lookup("redis", 66.0), lookup("spark", 136_000.0)];
    lk.lookups[0].setget = Some(setget(3.3, 6.2));
    lk.settings.setget_s = Some(10.0);
    let input = Input {
        title: "t".into(),
        records: vec![pr, lk],
        commands: vec!["kvbench report --analytics 3,4".into()],
        generated_at: "now".into(),
        paper: Some(paper()),
        judge: true,
    };
    let out = render(&input).expect("renders");
    assert_eq!(
        out.summary.figures,
        [
            "pagerank-iterations-3",
            "pagerank-steps-3",
            "graph-memory-3",
            "lookup-latency-4",
            "setget-cpu-4"
        ]
    );
    assert_eq!(out.summary.paper.len(), 9);
    let file = |name: &str| {
        out.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| String::from_utf8_lossy(b).to_string())
            .unwrap_or_else(|| panic!("{name}"))
    };
    for id in &out.summary.figures {
        let svg = file(&format!("figures/{id}.svg"));
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{id}: {e}"));
    }
    // The memory figure: ours for redis (one bar for redis and redis-lua),
    // spark and the reference's arrays, the paper's for redis and spark.
    let figs = figures::build(&input.records, input.paper.as_ref());
    let memory = figs
        .iter()
        .find(|f| f.id == "graph-memory-3")
        .expect("memory");
    assert_eq!(memory.categories, ["reference (arrays)", "redis", "spark"]);
    let ys = |i: usize| -> Vec<f64> {
        memory.panels[0].series[i]
            .points
            .iter()
            .map(|p| p.y)
            .collect()
    };
    assert_eq!(ys(0), [33.0, 176.0, 32.0]);
    assert_eq!(ys(1), [85.0, 3900.0]);
    let html = file("index.html");
    assert!(html.contains("D6"), "the findings table");
    assert!(html.contains("kvbench analytics pagerank --graph synthetic:google"));
    assert_eq!(html.matches("<figure").count(), 5);
    // Set/get: the table, the command that measures it again, and its
    // figure in CPU microseconds per operation (100,000 in 10 s): the
    // server's own code, the kernel, kvbench; Spark has no window.
    assert!(html.contains("Set/get throughput"), "the set/get table");
    assert!(html.contains("--setget 10"), "the command");
    let cpu = figs
        .iter()
        .find(|f| f.id == "setget-cpu-4")
        .expect("set/get figure");
    assert_eq!(cpu.panels[0].series.len(), 1, "redis only");
    let per_op: Vec<f64> = cpu.panels[0].series[0]
        .points
        .iter()
        .map(|p| (p.y * 10.0).round() / 10.0)
        .collect();
    assert_eq!(per_op, [33.0, 62.0, 60.0]);
    let md = file("report.md");
    assert!(md.contains("![PageRank: time of each iteration"), "{md}");
    assert!(
        md.contains("| redis | 6 | 10.0 | 100,000 | 10,000 | 95% | 65% | 60% |"),
        "{md}"
    );
}
