//! The report from constructed runs whose answers are known: who wins
//! where, which places are ties, and that every figure file is a real
//! picture with its title, axis labels and units.

use crate::cells::Source;
use crate::page::{render, Input};
use crate::takeaways;
use hdrhistogram::Histogram;
use kvbench_model::{OpKind, RunRecord};

/// A stored-looking run: `system` at `clients` on `workload`, `throughput`
/// ops/s, reads whose latencies spread around `median_us`.
fn run(
    id: i64,
    system: &str,
    workload: &str,
    clients: u32,
    throughput: f64,
    median_us: u64,
) -> RunRecord {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
    for i in 0..5_000u64 {
        h.record(median_us * 1000 / 2 + i * median_us / 5)
            .expect("in range");
    }
    let hist = kvbench_stats::hist::encode_histogram(&h);
    let lat = kvbench_stats::hist::summarize(&h);
    let series: Vec<serde_json::Value> = (0..4)
        .map(|s| {
            serde_json::json!({"second": s, "op": "read", "completed": throughput as u64,
                "errors": 0, "p50_us": lat.p50_us, "p99_us": lat.p99_us, "p999_us": lat.p999_us})
        })
        .collect();
    let mb = |x: f64| (x * 1024.0 * 1024.0) as u64;
    let base = if system == "redis" { 10.0 } else { 5.0 };
    serde_json::from_value(serde_json::json!({
        "id": id, "started_at": "2026-11-23T00:00:00Z", "finished_at": "2026-11-23T00:00:05Z",
        "status": "ok", "failure": null, "marks": [], "warnings": [],
        "config": {
            "system": system, "workload": workload, "records": 10000, "operations": 0,
            "duration_s": 4.0, "field_count": 10, "field_length": 100,
            "read_proportion": 1.0, "update_proportion": 0.0,
            "insert_proportion": 0.0, "request_distribution": "uniform",
            "clients": clients, "pipeline": 1, "threads": 1, "load_clients": 1,
            "load_pipeline": 1, "warmup_s": 1.0, "seed": id as u64, "seed_source": "user",
            "server_settings": [{"name": "save", "value": "\"\"", "reason": "no snapshots"}],
            "server_binary": "/usr/bin/x"
        },
        "environment": {
            "host": "h", "kernel": "6.1", "cpu_model": "cpu", "cores": 2,
            "memory_bytes": 1u64 << 34, "server_version": "1.0", "server_allocator": null,
            "kvbench_version": "0.1.0", "git_revision": null
        },
        "load": null,
        "run": {
            "duration_s": 4.0, "completed": (throughput * 4.0) as u64, "errors": 0,
            "throughput": throughput,
            "ops": [{"op": "read", "completed": (throughput * 4.0) as u64, "misses": 0, "errors": 0,
                     "throughput": throughput, "latency": lat, "histogram": hist}],
            "error_samples": [], "errors_by_kind": [], "series": series,
            "offered_rate": null, "redirects_moved": 0, "redirects_ask": 0, "retries": 0, "nodes": []
        },
        "probes": [
            {"stage": "before_load", "rss_bytes": mb(base), "server_memory_bytes": null, "cpu_seconds": null, "items": null, "evictions": null},
            {"stage": "after_load", "rss_bytes": mb(base + 9.54 * if system == "redis" { 1.445 } else { 1.066 }), "server_memory_bytes": null, "cpu_seconds": null, "items": null, "evictions": null},
            {"stage": "after_run", "rss_bytes": mb(base + 15.0), "server_memory_bytes": null, "cpu_seconds": null, "items": null, "evictions": null}
        ],
        "cpu": {"server_seconds": 1.0, "server_us_per_op": 5.0, "client_seconds": 1.0, "client_us_per_op": 3.0}
    }))
    .expect("a record")
}

/// Iterations of one cell: one run per throughput in `tputs`.
fn cell(
    next: &mut i64,
    system: &str,
    workload: &str,
    clients: u32,
    tputs: &[f64],
    key: &str,
) -> Vec<Source> {
    tputs
        .iter()
        .enumerate()
        .map(|(block, &t)| {
            *next += 1;
            Source {
                record: run(
                    *next,
                    system,
                    workload,
                    clients,
                    t,
                    if system == "redis" { 80 } else { 60 },
                ),
                cell_key: Some(format!("{key}-{system}-{workload}-{clients}")),
                cell_index: Some(*next as u32),
                block: Some(block as u32 + 1),
            }
        })
        .collect()
}

/// Two systems, two workloads, two client counts: every kind of verdict.
fn sources() -> Vec<Source> {
    let mut n = 0;
    let mut v = Vec::new();
    // Iterated: memcached clearly ahead at 1 client, overlapping at 8.
    v.extend(cell(
        &mut n,
        "redis",
        "iterated",
        1,
        &[100_000.0, 102_000.0, 98_000.0],
        "a",
    ));
    v.extend(cell(
        &mut n,
        "memcached",
        "iterated",
        1,
        &[150_000.0, 152_000.0, 148_000.0],
        "a",
    ));
    v.extend(cell(
        &mut n,
        "redis",
        "iterated",
        8,
        &[100_000.0, 130_000.0, 70_000.0],
        "a",
    ));
    v.extend(cell(
        &mut n,
        "memcached",
        "iterated",
        8,
        &[120_000.0, 150_000.0, 88_000.0],
        "a",
    ));
    // Paired: within 1% of each other in every block, although each
    // side's iterations spread by 30%.
    v.extend(cell(
        &mut n,
        "redis",
        "paired-equal",
        1,
        &[100_000.0, 130_000.0, 70_000.0],
        "c",
    ));
    v.extend(cell(
        &mut n,
        "memcached",
        "paired-equal",
        1,
        &[101_000.0, 131_000.0, 70_500.0],
        "c",
    ));
    // Single runs: within 5% is a tie, 20% apart is not.
    v.extend(cell(&mut n, "redis", "single-runs", 1, &[100_000.0], "b"));
    v.extend(cell(
        &mut n,
        "memcached",
        "single-runs",
        1,
        &[103_000.0],
        "b",
    ));
    v.extend(cell(&mut n, "redis", "single-runs", 8, &[240_000.0], "b"));
    v.extend(cell(
        &mut n,
        "memcached",
        "single-runs",
        8,
        &[200_000.0],
        "b",
    ));
    v
}

fn verdict<'a>(
    vs: &'a [takeaways::Verdict],
    workload: &str,
    clients: u32,
) -> &'a takeaways::Verdict {
    vs.iter()
        .find(|v| v.workload == workload && v.clients == clients)
        .expect("a verdict there")
}

#[test]
fn the_matrix_judges_paired_blocks_and_names_equal_and_undecided_places() {
    let cells = crate::cells::group(&sources()).expect("cells");
    assert_eq!(cells.len(), 10);
    let rule = takeaways::Rule::default();
    let vs = takeaways::matrix(&cells, &rule);
    assert_eq!(vs.len(), 5);

    let v = verdict(&vs, "iterated", 1);
    assert_eq!(v.winner.as_deref(), Some("memcached 1.0"));
    assert_eq!(v.call(), kvbench_stats::paired::Call::Ahead);
    assert_eq!(v.clients_band, "few");
    assert!((v.margin - 0.5).abs() < 0.01, "{}", v.margin);
    let iv = v.throughput.interval.expect("an interval");
    assert_eq!(
        (iv.n, iv.method),
        (3, kvbench_stats::paired::Method::StudentT)
    );

    // Each side spreads 30% over its blocks, so their own intervals
    // overlap; their ratio is steady (1.20, 1.15, 1.26): ahead.
    let v = verdict(&vs, "iterated", 8);
    assert_eq!(v.winner.as_deref(), Some("memcached 1.0"), "{v:?}");
    assert_eq!(v.clients_band, "many");
    let (lo, _) = v.throughput.interval.expect("an interval").change_bounds();
    assert!(lo > 0.05, "{v:?}");

    let v = verdict(&vs, "paired-equal", 1);
    assert_eq!(v.call(), kvbench_stats::paired::Call::Equal, "{v:?}");
    assert_eq!(v.winner, None);
    assert!(v.note.contains("equal within ±5%"), "{}", v.note);

    // Single runs give no interval: undecided, however far apart.
    for clients in [1, 8] {
        let v = verdict(&vs, "single-runs", clients);
        assert_eq!(v.call(), kvbench_stats::paired::Call::Undecided, "{v:?}");
        assert_eq!(v.winner, None);
        assert!(v.note.contains("single runs"), "{}", v.note);
    }
    let v = verdict(&vs, "single-runs", 8);
    assert_eq!(v.leader, "redis 1.0");
    assert!((v.margin - 0.2).abs() < 1e-9);

    // Server CPU per operation is judged beside throughput: the
    // constructed runs all cost 5 us, so the pair is equal.
    let v = verdict(&vs, "iterated", 1);
    let cpu = v.server_cpu.as_ref().expect("a CPU verdict");
    assert_eq!(cpu.decision.call, kvbench_stats::paired::Call::Equal);

    let words = takeaways::summary(&vs).join(" ");
    assert!(
        words.contains("memcached 1.0 had the highest throughput in 2 of 5 places"),
        "{words}"
    );
    assert!(words.contains("1 place was equal within ±5%"), "{words}");
    assert!(words.contains("2 places are undecided"), "{words}");
    // A margin of 1% leaves the equal pair undecided.
    let strict = takeaways::Rule {
        margin: 0.005,
        looks: 1,
    };
    let vs = takeaways::matrix(&cells, &strict);
    let v = verdict(&vs, "paired-equal", 1);
    assert_eq!(v.call(), kvbench_stats::paired::Call::Undecided, "{v:?}");
    // A margin under 1% is written as it is, never rounded to 0%.
    assert!(v.note.contains("undecided at ±0.5%"), "{}", v.note);
    assert_eq!(takeaways::margin_text(0.05), "5%");
    assert_eq!(takeaways::margin_text(0.001), "0.1%");
}

#[test]
fn iterations_are_summarised_and_percentiles_come_from_every_request() {
    let cells = crate::cells::group(&sources()).expect("cells");
    let c = cells
        .iter()
        .find(|c| c.system == "redis" && c.workload == "iterated" && c.clients == 8)
        .expect("the cell");
    assert_eq!(c.throughput.n, 3);
    assert!((c.throughput.mean - 100_000.0).abs() < 1e-6);
    assert!(
        c.flags.contains(&crate::cells::Flag::Noisy),
        "{:?}",
        c.flags
    );
    let read = &c.ops[0];
    assert_eq!(read.op, OpKind::Read);
    assert_eq!(read.merged.count, 15_000);
    // Memory: what the data costs beyond its raw size, as constructed.
    let o = takeaways::overhead(c).expect("an overhead");
    assert!((o - 0.445).abs() < 0.01, "{o}");
}

#[test]
fn every_figure_is_a_titled_labelled_picture_in_both_formats() {
    let input = Input {
        title: "constructed".into(),
        sources: sources(),
        experiment_file: Some("name = \"constructed\"".into()),
        commands: vec!["kvbench report --experiment constructed --out x".into()],
        generated_at: "2026-11-23T00:00:00Z".into(),
        paper: None,
        rule: takeaways::Rule::default(),
    };
    let r = render(&input).expect("renders");
    let file = |name: &str| -> &[u8] {
        &r.files
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} written"))
            .1
    };
    let figures = crate::figures::build(
        &crate::cells::group(&input.sources).expect("cells"),
        &input.sources,
    );
    let kinds: Vec<_> = figures.iter().map(|f| f.kind).collect();
    use crate::figure::FigureKind::*;
    for k in [Throughput, Latency, Spectrum, TimeSeries, Memory, Cpu] {
        assert!(kinds.contains(&k), "no {k:?} figure in {kinds:?}");
    }
    // Open loop and topologies have no data here, so no figure.
    assert!(!kinds.contains(&LatencyThroughput) && !kinds.contains(&Topologies));
    for f in &figures {
        assert!(!f.title.is_empty());
        let svg = std::str::from_utf8(file(&format!("figures/{}.svg", f.id))).expect("utf-8");
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{}: {e}", f.id));
        let text: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        let has = |t: &str| text.iter().any(|x| x.contains(t));
        assert!(has(&f.title), "{}: no title", f.id);
        assert!(has(&f.x.label), "{}: no x label", f.id);
        for p in &f.panels {
            assert!(has(&p.y.label), "{}: no y label {}", f.id, p.y.label);
            assert!(
                p.y.label.contains('(') && p.y.label.ends_with(')'),
                "{}: y label without a unit: {}",
                f.id,
                p.y.label
            );
        }
        let png = file(&format!("figures/{}.png", f.id));
        let decoder = png::Decoder::new(std::io::Cursor::new(png));
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("a frame");
        assert_eq!(info.width, crate::plot::WIDTH, "{}", f.id);
        assert!(info.height >= 300, "{}", f.id);
        let px = info.color_type.samples();
        let mut colours: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
        colours.sort_unstable();
        colours.dedup();
        assert!(colours.len() > 20, "{}: {} colours", f.id, colours.len());
    }
    let html = std::str::from_utf8(file("index.html")).expect("utf-8");
    assert_eq!(html.matches("<figure").count(), figures.len());
    assert!(!html.contains("<script"), "no script");
    // Nothing to fetch: no source, link, import or url() that leaves the
    // file (the SVG namespace's URL is a name, not a request).
    for fetch in [
        "src=\"http",
        "href=\"http",
        "href=\"//",
        "@import",
        "url(http",
        "<link",
    ] {
        assert!(!html.contains(fetch), "the page fetches: {fetch}");
    }
    assert!(
        html.contains("memcached 1.0") && html.contains("+50%"),
        "the matrix"
    );
    assert!(
        html.contains("name = &quot;constructed&quot;"),
        "the experiment file, escaped"
    );
    let md = std::str::from_utf8(file("report.md")).expect("utf-8");
    assert_eq!(md.matches("](figures/").count(), figures.len());
    assert!(md.contains("| iterated | single |"), "{md}");
}

#[test]
fn merged_percentiles_are_those_of_every_request_not_averages() {
    // A fast iteration (every read 100 us) and a slow one (10 ms).
    let point = |ns: u64| {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
        h.record_n(ns, 100).expect("in range");
        h
    };
    let sources: Vec<Source> = [100_000u64, 10_000_000]
        .iter()
        .enumerate()
        .map(|(i, &ns)| {
            let mut r = run(i as i64 + 1, "redis", "w", 1, 100.0, 100);
            let h = point(ns);
            if let Some(p) = r.run.as_mut() {
                p.ops[0].histogram = kvbench_stats::hist::encode_histogram(&h);
                p.ops[0].latency = kvbench_stats::hist::summarize(&h);
            }
            Source {
                record: r,
                cell_key: Some("k".into()),
                cell_index: Some(0),
                block: None,
            }
        })
        .collect();
    let cells = crate::cells::group(&sources).expect("cells");
    assert_eq!(cells.len(), 1);
    let read = &cells[0].ops[0];
    assert_eq!(read.merged.count, 200);
    let mut both = point(100_000);
    both.add(point(10_000_000)).expect("adds");
    assert_eq!(
        read.merged,
        kvbench_stats::hist::summarize(&both),
        "as if recorded in one histogram"
    );
    // The median of all requests is the fast ones' 100 us, not the mean of
    // the two medians (about 5 ms), which is what the iterations' own p50s
    // average to.
    assert!(
        (read.merged.p50_us - 100.0).abs() < 1.0,
        "{}",
        read.merged.p50_us
    );
    assert!(
        (read.p50_us.mean - 5050.0).abs() < 10.0,
        "{}",
        read.p50_us.mean
    );
}

#[test]
fn clusters_and_rate_sweeps_get_their_own_figures() {
    let mut sources = Vec::new();
    let mut id = 0;
    for (topology, nodes) in [("single", 1), ("cluster", 3)] {
        for clients in [1, 8] {
            for system in ["redis", "valkey"] {
                id += 1;
                let mut r = run(
                    id,
                    system,
                    "w",
                    clients,
                    50_000.0 * clients as f64 / 4.0,
                    70,
                );
                r.config.topology =
                    serde_json::from_value(serde_json::json!(topology)).expect("kind");
                r.config.nodes = nodes;
                sources.push(Source {
                    record: r,
                    cell_key: None,
                    cell_index: None,
                    block: None,
                });
            }
        }
    }
    // An open-loop rate sweep: achieved 10k, 20k, 29k at offered 10k, 20k, 40k
    // (the last overloaded).
    for (rate, achieved) in [
        (10_000.0, 10_000.0),
        (20_000.0, 20_000.0),
        (40_000.0, 29_000.0),
    ] {
        id += 1;
        let mut r = run(id, "redis", "w", 8, achieved, 50 + achieved as u64 / 100);
        r.config.rate = Some(rate);
        if rate > 30_000.0 {
            r.marks.push(
                kvbench_model::Finding::Overloaded {
                    cause: kvbench_model::mark::Overload::Rate {
                        achieved: 29_000.0,
                        offered: 40_000.0,
                    },
                    worker: None,
                }
                .into(),
            );
        }
        sources.push(Source {
            record: r,
            cell_key: None,
            cell_index: None,
            block: None,
        });
    }
    let cells = crate::cells::group(&sources).expect("cells");
    let figures = crate::figures::build(&cells, &sources);
    use crate::figure::FigureKind;
    let topo = figures
        .iter()
        .find(|f| f.kind == FigureKind::Topologies)
        .expect("a single-vs-cluster figure");
    let names: Vec<&str> = topo.panels[0]
        .series
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with("cluster of 3 masters")),
        "{names:?}"
    );
    assert!(topo.panels[0].series.iter().filter(|s| s.dashed).count() == 2);

    let lt = figures
        .iter()
        .find(|f| f.kind == FigureKind::LatencyThroughput)
        .expect("a latency-throughput figure");
    let p99 = lt.panels[0]
        .series
        .iter()
        .find(|s| s.name.ends_with("p99"))
        .expect("p99 line");
    let xs: Vec<f64> = p99.points.iter().map(|p| p.x).collect();
    assert_eq!(
        xs,
        vec![10_000.0, 20_000.0, 29_000.0],
        "at the achieved throughput"
    );
    assert_eq!(p99.points[2].flags, vec!["overloaded".to_string()]);
    assert!(lt.flag_notes().iter().any(|n| n.contains("overloaded")));
    // Open-loop cells are not in the closed-loop matrix.
    let vs = takeaways::matrix(&cells, &takeaways::Rule::default());
    assert!(
        vs.iter()
            .all(|v| v.topology == "single" || v.topology == "3 nodes"),
        "{vs:?}"
    );
    assert_eq!(vs.len(), 4);
    // The multi-node place names the topology with the system.
    assert!(vs.iter().filter(|v| v.topology == "3 nodes").all(|v| v
        .ranking
        .iter()
        .all(|(n, _)| n.ends_with("cluster of 3 masters"))));
}

#[test]
fn a_papers_findings_are_checked_against_the_cells() {
    let paper: crate::paper::Paper = serde_json::from_value(serde_json::json!({
        "paper": "constructed", "experiment": "x", "hardware": "h", "substitutions": ["s"],
        "reasons": {"throughput": "fewer cores", "multi_node": "one machine", "memory": "newer versions"},
        "finding": [
            {"id": "W1", "source": "Fig. 1", "claim": "memcached wins", "kind": "winner",
             "workload": "iterated", "topology": "single", "clients": "few", "system": "memcached"},
            {"id": "W2", "source": "Fig. 1", "claim": "memcached wins", "kind": "winner",
             "workload": "iterated", "topology": "single", "clients": 8, "system": "memcached"},
            {"id": "W3", "source": "Fig. 2", "claim": "memcached wins", "kind": "winner",
             "workload": "single-runs", "topology": "single", "clients": "many", "system": "memcached"},
            {"id": "R1", "source": "Fig. 2", "claim": "redis 1.1-1.3x", "kind": "ratio",
             "workload": "single-runs", "topology": "single", "clients": "many",
             "system": "redis", "other": "memcached", "low": 1.1, "high": 1.3},
            {"id": "O1", "source": "Table 1", "claim": "redis +44.5%", "kind": "overhead",
             "workload": "iterated", "topology": "single", "system": "redis", "low": 0.3, "high": 0.6},
            {"id": "M1", "source": "Table 1", "claim": "in a cluster", "kind": "winner",
             "workload": "iterated", "topology": "multi", "system": "redis"},
            {"id": "X1", "source": "Table 2", "claim": "redis scales 2-3x from 1 to 8 clients",
             "kind": "ratio", "workload": "single-runs", "topology": "single", "clients": 8,
             "other_clients": 1, "system": "redis", "low": 2.0, "high": 3.0},
            {"id": "X2", "source": "Table 2", "claim": "memcached scales at least 2x",
             "kind": "ratio", "workload": "single-runs", "topology": "single", "clients": 8,
             "other_clients": "few", "system": "memcached", "low": 2.0},
            {"id": "X3", "source": "Table 3", "claim": "reads alone 2x those of another workload",
             "kind": "ratio", "workload": "single-runs", "topology": "single", "clients": 8,
             "ops": ["read"], "other_workload": "iterated", "system": "redis", "low": 2.0, "high": 3.0},
            {"id": "X4", "source": "Table 3", "claim": "a cluster over a single server",
             "kind": "ratio", "workload": "iterated", "topology": "multi", "other_topology": "single",
             "system": "redis", "low": 1.5},
            {"id": "X5", "source": "Table 3", "claim": "at pipeline 50", "kind": "ratio",
             "workload": "iterated", "topology": "single", "pipeline": 50, "other_pipeline": 1,
             "system": "redis", "low": 1.5},
            {"id": "X6", "source": "Table 4", "claim": "redis 1.5x from 1 to 8 clients",
             "kind": "ratio", "workload": "iterated", "topology": "single", "clients": 8,
             "other_clients": 1, "system": "redis", "low": 1.5},
            {"id": "O2", "source": "Table 1", "claim": "redis +44.5% (many clients)", "kind": "overhead",
             "workload": "iterated", "topology": "single", "clients": "many", "system": "redis",
             "low": 0.3, "high": 0.6}
        ]
    }))
    .expect("a paper");
    // As on a server kept for a sweep: only the first cell of the place
    // (1 client) was loaded, so only it has load probes.
    let mut srcs = sources();
    for s in &mut srcs {
        let c = &s.record.config;
        if c.workload == "iterated" && c.clients == 8 {
            s.record.probes.retain(|p| !p.stage.ends_with("load"));
        }
    }
    let cells = crate::cells::group(&srcs).expect("cells");
    let out = crate::paper::evaluate(&paper, &cells);
    use crate::paper::Verdict::*;
    let verdicts: Vec<_> = out.iter().map(|o| (o.id.as_str(), o.verdict)).collect();
    assert_eq!(
        verdicts,
        vec![
            ("W1", Agrees),
            // Separate intervals overlap, but memcached is ahead in each of
            // the 3 blocks: the paired ratio decides (the old rule called
            // it a tie).
            ("W2", Agrees),
            ("W3", Differs),
            // 1.20x of single runs lies in 1.1-1.3x, but single runs decide
            // only beyond the pass-to-pass spread (the old rule: agrees).
            ("R1", Inconclusive),
            ("O1", Agrees),
            ("M1", NotMeasured),
            ("X1", Agrees),
            // 1.94x of single runs against "at least 2x": neither way.
            ("X2", Inconclusive),
            ("X3", Agrees),
            ("X4", NotMeasured),
            ("X5", NotMeasured),
            ("X6", Inconclusive),
            ("O2", Agrees)
        ],
        "{out:#?}"
    );
    assert!(
        out[1]
            .measured
            .contains("memcached / redis = 1.20x [1.08, 1.34] (paired t over 3 blocks)"),
        "{}",
        out[1].measured
    );
    assert!(
        out[2]
            .measured
            .contains("redis 240,000, memcached 200,000 ops/s"),
        "{}",
        out[2].measured
    );
    assert!(
        out[2]
            .reason
            .starts_with("memcached is significantly behind redis; "),
        "{}",
        out[2].reason
    );
    assert!(out[3].reason.contains("--iterations"), "{}", out[3].reason);
    // Across places: the sides are named by what sets them apart.
    assert!(
        out[6]
            .measured
            .contains("8 clients / 1 client = 240,000 / 100,000 ops/s = 2.40x"),
        "{}",
        out[6].measured
    );
    assert!(
        out[7]
            .measured
            .contains("(paper: at least 2x, judged against above 1.90x)"),
        "{}",
        out[7].measured
    );
    // 1.00x, but 8 clients' iterations spread so widely that the interval
    // reaches 1.5: what would decide it is the iterations.
    assert!(
        out[11].reason.contains("iterations would likely decide it"),
        "{}",
        out[11].reason
    );
    // The likely reasons come from the paper's file.
    assert!(out[2].reason.ends_with("fewer cores"), "{}", out[2].reason);
    assert!(
        out[8]
            .measured
            .contains("single-runs / iterated = 240,000 / 100,000 ops/s"),
        "{}",
        out[8].measured
    );
}

/// A combined cell (`altoros/complex` at 1 client with `altoros/simple`
/// beside it) and the second workload's cell alone on the same server.
fn combined_sources() -> Vec<Source> {
    let mut n = 0;
    let mut v = cell(&mut n, "redis", "altoros/simple", 4, &[100_000.0], "alone");
    for clients in [1, 5] {
        let mut s = cell(
            &mut n,
            "redis",
            "altoros/complex",
            clients,
            &[20_010.0],
            "c",
        );
        let r = &mut s[0].record;
        r.config.records = 8;
        r.config.workload_properties = [
            ("kvbench.datamodel", "sortedsets"),
            ("kvbench.zset.members", "1000"),
            ("recordcount", "8"),
            ("readproportion", "0"),
            ("updateproportion", "0"),
            ("kvbench.zunionstoreproportion", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec();
        r.config.companion = Some(kvbench_model::Companion {
            workload: "altoros/simple".into(),
            clients: 4,
            pipeline: 1,
            records: 1000,
            workload_properties: [("fieldcount", "1"), ("fieldlength", "100")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .to_vec(),
        });
        let phase = r.run.as_mut().expect("a run phase");
        let mut simple = phase.ops[0].clone();
        simple.throughput = 20_000.0 / clients as f64;
        simple.with = true;
        phase.ops[0].op = OpKind::Union;
        phase.ops[0].throughput = 10.0 * clients as f64;
        phase.ops.push(simple);
        v.extend(s);
    }
    v
}

#[test]
fn a_combined_cell_is_set_beside_its_second_group_alone() {
    let cells = crate::cells::group(&combined_sources()).expect("cells");
    let workloads: Vec<&str> = cells.iter().map(|c| c.workload.as_str()).collect();
    assert_eq!(
        workloads,
        [
            "altoros/simple",
            "altoros/complex + altoros/simple",
            "altoros/complex + altoros/simple"
        ]
    );
    // Sorted sets are sized as the workload defines them, not as fields.
    assert!(
        cells[1].shape.starts_with("8 sorted sets of 1000 members"),
        "{}",
        cells[1].shape
    );
    assert_eq!(cells[1].dataset_bytes, 8 * 1000 * 16 + 1000 * 100);
    let rows = crate::combined::rows(&cells);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].main.workload, "altoros/complex");
    assert_eq!(
        (rows[0].main.throughput, rows[0].main.op.as_str()),
        (10.0, "zunionstore")
    );
    assert_eq!(
        (rows[0].with.throughput, rows[0].with.op.as_str()),
        (20_000.0, "read")
    );
    assert_eq!(
        rows[0].alone.as_ref().map(|a| a.throughput),
        Some(100_000.0)
    );
    assert_eq!(rows[0].slowdown(), Some(5.0));
    assert_eq!(rows[1].slowdown(), Some(25.0));

    let input = Input {
        title: "combined".into(),
        sources: combined_sources(),
        experiment_file: None,
        commands: Vec::new(),
        generated_at: "2026-11-23T00:00:00Z".into(),
        paper: None,
        rule: takeaways::Rule::default(),
    };
    let r = render(&input).expect("renders");
    let page = |name: &str| {
        let (_, bytes) = r.files.iter().find(|(n, _)| n == name).expect(name);
        String::from_utf8(bytes.clone()).expect("utf-8")
    };
    let html = page("index.html");
    assert!(html.contains("<h2>Combined runs</h2>"));
    assert!(html.contains("5.0x") && html.contains("25.0x"), "{html}");
    assert!(page("report.md").contains("| 100,000 | "));
    // The combined cells' throughput figure draws each group apart.
    let svg = page("figures/throughput-altoros-complex-altoros-simple-single.svg");
    // (The legend wraps long names.)
    assert!(svg.contains("redis 1.0: altoros/simple (second"), "{svg}");
    assert!(svg.contains("redis 1.0: altoros/complex\n"), "{svg}");
}

#[test]
fn a_winner_ranks_only_the_systems_the_paper_compared() {
    let paper = |systems: serde_json::Value| -> crate::paper::Paper {
        serde_json::from_value(serde_json::json!({
            "paper": "constructed", "experiment": "x", "hardware": "h", "substitutions": ["s"],
            "substitutions_scaled": ["fewer records"], "substitutions_full": ["single node only"],
            "systems": systems,
            "reasons": {"throughput": "t", "multi_node": "m", "memory": "v"},
            "finding": [
                {"id": "W", "source": "Fig. 2", "claim": "memcached wins", "kind": "winner",
                 "workload": "single-runs", "topology": "single", "clients": "many",
                 "system": "memcached"}
            ]
        }))
        .expect("a paper")
    };
    let cells = crate::cells::group(&sources()).expect("cells");
    let all = crate::paper::evaluate(&paper(serde_json::Value::Null), &cells);
    assert_eq!(all[0].verdict, crate::paper::Verdict::Differs, "{all:#?}");
    // Redis ran, but not in that paper: memcached has no rival left to rank.
    let theirs = crate::paper::evaluate(
        &paper(serde_json::json!(["memcached", "aerospike"])),
        &cells,
    );
    assert_eq!(
        theirs[0].verdict,
        crate::paper::Verdict::NotMeasured,
        "{theirs:#?}"
    );

    let mut p = paper(serde_json::Value::Null);
    p.at_scale(false);
    assert_eq!(p.substitutions, ["s", "fewer records"]);
    let mut p = paper(serde_json::Value::Null);
    p.at_scale(true);
    assert_eq!(p.substitutions, ["s", "single node only"]);
}

/// "Redis beats Memcached" (`other`) is a claim about two systems: a third
/// one ahead of both, run beside them, does not refute it; without `other`
/// the claim is that Redis leads everything measured.
#[test]
fn a_winner_with_other_compares_those_two_only() {
    let mut src = sources();
    let mut n = src.len() as i64 + 100;
    src.extend(cell(
        &mut n,
        "aerospike",
        "single-runs",
        8,
        &[300_000.0],
        "b",
    ));
    let cells = crate::cells::group(&src).expect("cells");
    let paper = |other: serde_json::Value| -> crate::paper::Paper {
        serde_json::from_value(serde_json::json!({
            "paper": "constructed", "experiment": "x", "hardware": "h", "substitutions": [],
            "reasons": {"throughput": "t", "multi_node": "m", "memory": "v"},
            "finding": [
                {"id": "W", "source": "Fig. 2", "claim": "redis beats memcached", "kind": "winner",
                 "workload": "single-runs", "topology": "single", "clients": "many",
                 "system": "redis", "other": other}
            ]
        }))
        .expect("a paper")
    };
    let pair = crate::paper::evaluate(&paper(serde_json::json!("memcached")), &cells);
    assert_eq!(pair[0].verdict, crate::paper::Verdict::Agrees, "{pair:#?}");
    assert!(
        pair[0].measured.contains("redis / memcached = 1.20x"),
        "{pair:#?}"
    );
    let all = crate::paper::evaluate(&paper(serde_json::Value::Null), &cells);
    assert_eq!(all[0].verdict, crate::paper::Verdict::Differs, "{all:#?}");
    assert!(
        all[0]
            .reason
            .starts_with("redis is significantly behind aerospike"),
        "{all:#?}"
    );

    // "1.1-1.6x less than the average of Redis and Aerospike": the mean of
    // the two (270,000) over memcached's 200,000.
    let mut p = paper(serde_json::Value::Null);
    p.findings = serde_json::from_value(serde_json::json!([
        {"id": "A", "source": "Sec. 4.1.1", "claim": "the others' average 1.1-1.6x memcached",
         "kind": "ratio", "workload": "single-runs", "topology": "single", "clients": "many",
         "system": "redis+aerospike", "system_average": ["redis", "aerospike"],
         "other": "memcached", "low": 1.1, "high": 1.6},
        {"id": "N", "source": "Sec. 1", "claim": "a cache of another kind", "kind": "ratio",
         "workload": "single-runs", "topology": "single", "system": "redis", "other": "memcached",
         "not_comparable": "serialised here, objects there"}
    ]))
    .expect("findings");
    let out = crate::paper::evaluate(&p, &cells);
    assert_eq!(out[0].verdict, crate::paper::Verdict::Agrees, "{out:#?}");
    assert!(
        out[0]
            .measured
            .starts_with("mean of redis and aerospike / memcached = 1.35x"),
        "{out:#?}"
    );
    assert_eq!(
        (out[1].verdict, out[1].reason.as_str()),
        (
            crate::paper::Verdict::NotComparable,
            "serialised here, objects there"
        )
    );
}

/// With nothing completed there is no cost per operation: "-", not 0.00,
/// which would read as free.
#[test]
fn cpu_per_operation_is_a_dash_when_nothing_completed() {
    let mut r = run(1, "redis", "read-heavy", 1, 1000.0, 100);
    r.cpu = Some(kvbench_model::CpuCost {
        server_seconds: Some(0.5),
        server_us_per_op: None,
        client_seconds: 0.25,
        client_us_per_op: None,
        canary: None,
    });
    let text = crate::text::run_summary(&r);
    let line = text
        .lines()
        .find(|l| l.starts_with("cpu in the window"))
        .expect("a cpu line");
    assert_eq!(line.matches("(- us/op)").count(), 2, "{line}");
    let json = serde_json::to_value(&r).expect("JSON");
    assert!(json["cpu"]["client_us_per_op"].is_null(), "{}", json["cpu"]);
}

/// The noise canary: a block whose loopback round trip was 5x the median
/// is named in the verdict, which is also given without it; the "Machine
/// noise" figure draws every run and marks that one.
#[test]
fn an_unusual_block_is_named_and_the_verdict_given_without_it() {
    let mut n = 0;
    let mut v = cell(
        &mut n,
        "redis",
        "w",
        1,
        &[100_000.0, 101_000.0, 99_000.0, 100_500.0],
        "n",
    );
    v.extend(cell(
        &mut n,
        "memcached",
        "w",
        1,
        &[120_000.0, 160_000.0, 119_000.0, 121_000.0],
        "n",
    ));
    v.extend(cell(
        &mut n,
        "valkey",
        "w",
        1,
        &[50_000.0, 50_000.0, 50_000.0, 50_000.0],
        "n",
    ));
    for s in &mut v {
        let block = s.block.unwrap_or(0);
        let rtt = if block == 2 {
            200.0
        } else {
            40.0 + block as f64
        };
        // Context switches depend on the cell: judged within it, Redis's
        // 10/s is not unusual beside the others' 1000/s.
        let switches = if s.record.config.system.as_str() == "redis" {
            10.0
        } else {
            1000.0
        };
        if let Some(c) = s.record.cpu.as_mut() {
            c.canary = Some(kvbench_model::Canary {
                base_rtt_us: Some(rtt),
                server_involuntary_per_s: Some(switches),
                ..Default::default()
            });
        }
    }
    let flags = crate::noise::unusual(&v);
    assert_eq!(flags.iter().filter(|f| f.is_some()).count(), 3, "{flags:?}");
    assert!(
        flags.iter().flatten().all(|f| f.starts_with("base RTT")),
        "{flags:?}"
    );
    assert!(
        flags[1].as_deref().unwrap_or("").contains("base RTT 200"),
        "{flags:?}"
    );
    let cells = crate::cells::group(&v).expect("cells");
    let vs = takeaways::matrix(&cells, &takeaways::Rule::default());
    let w = &vs[0];
    assert_eq!(w.unusual_blocks.len(), 1, "{w:?}");
    assert!(
        w.unusual_blocks[0].starts_with("block 2: base RTT"),
        "{w:?}"
    );
    let without = w.without_unusual.as_ref().expect("a verdict without it");
    assert_eq!(without.interval.expect("interval").n, 3);
    assert!(w.note.contains("machine unusual in block 2"), "{}", w.note);
    assert!(w.note.contains("without it: ahead"), "{}", w.note);
    let fig = crate::noise::figure(&v).expect("a noise figure");
    assert_eq!(fig.kind, crate::figure::FigureKind::Noise);
    let rtt = &fig.panels[0].series[0].points;
    assert_eq!(rtt.len(), 12);
    assert_eq!(rtt.iter().filter(|p| !p.flags.is_empty()).count(), 3);
    // A run is marked in the panels of the gauges that were unusual only:
    // the switches were usual in every run (each judged in its cell).
    let switches = fig.panels.last().expect("the switches panel");
    assert!(switches.y.label.starts_with("server involuntary switches"));
    assert!(
        switches.series[0].points.iter().all(|p| p.flags.is_empty()),
        "{:?}",
        switches.series[0].points
    );
    // Without canaries (runs stored before it existed): no figure, no marks.
    assert!(crate::noise::figure(&sources()).is_none());
}

/// Issue 36: a duration-bounded comparison's header said "0 operations per run".
#[test]
fn a_comparison_report_states_the_window_it_measured() {
    let mut runs = vec![run(1, "redis", "read-heavy", 1, 1000.0, 50)];
    let md = crate::markdown::comparison_report(&runs, 1);
    assert!(md.contains("; a 4 s window per run;"), "{md}");
    assert!(!md.contains("0 operations per run"), "{md}");
    runs[0].config.duration_s = None;
    runs[0].config.operations = 5000;
    let md = crate::markdown::comparison_report(&runs, 1);
    assert!(md.contains("; 5000 operations per run;"), "{md}");
}

/// A run with an outage gets a figure of its 100-ms steps: throughput and
/// failures, the first failure and each fault caused marked, in SVG.
#[test]
fn a_run_with_an_outage_gets_a_figure_of_its_steps() {
    let mut r = run(7, "redis", "w", 4, 10_000.0, 100);
    let mut steps = vec![[1_000u64, 0, 100_000]; 10];
    steps.push([400, 4, 100_000]);
    steps.extend(vec![[0, 0, 0]; 9]);
    steps.extend(vec![[1_000, 0, 900_000_000]; 20]);
    r.run.as_mut().expect("a run").outage = Some(kvbench_model::Outage {
        first_failure_s: 1.04,
        unavailable_s: Some(0.96),
        recovery_s: Some(0.96),
        baseline_ops_s: Some(10_000.0),
        failed: 4,
        peak_latency_us: Some(900_000.0),
        steps,
    });
    let fault = |spec: &str, error: Option<String>| kvbench_model::InjectedFault {
        spec: spec.into(),
        target: "127.0.0.1:7000".into(),
        at_s: 1.0,
        lasted_s: Some(1.0),
        error,
    };
    r.run.as_mut().expect("a run").faults = vec![
        fault("restart:0:1s@1s", None),
        fault("pause:1:1s@1s", Some("there are 1 data nodes".into())),
    ];
    let sources = alone(r);
    let cells = crate::cells::group(&sources).expect("cells");
    let figures = crate::figures::build(&cells, &sources);
    let f = figures
        .iter()
        .find(|f| f.id == "outage-run-7")
        .expect("an outage figure");
    let rates = &f.panels[0].series[0].points;
    assert_eq!(rates.len(), 40);
    assert_eq!((rates[5].y, rates[15].y), (10_000.0, 0.0), "ops/s per step");
    let marker = &f.panels[0].series[1];
    assert!(marker.dashed && marker.points.iter().all(|p| p.x == 1.04));
    // The fault caused is drawn where it happened; the one that failed is not.
    assert_eq!(f.panels[0].series.len(), 3);
    let fault = &f.panels[0].series[2];
    assert_eq!(fault.name, "fault restart:0:1s@1s");
    assert!(fault.dashed && fault.points.iter().all(|p| p.x == 1.0));
    let failed: f64 = f.panels[1].series[0].points.iter().map(|p| p.y).sum();
    assert_eq!(failed, 4.0);
    assert!(f.caption.contains("Unavailable 0.96 s"), "{}", f.caption);
    let palette = crate::plot::Palette::for_figures(&figures);
    let svg = crate::plot::svg(f, &palette).expect("drawn");
    assert!(svg.contains("first failure") && svg.contains("Failed per 100 ms"));
}

/// A run with a fault the clients rode out says so in words (no outage to
/// measure is the result), and each fault is listed with when it came and
/// how long it lasted, or why it was not caused.
#[test]
fn faults_are_listed_and_an_outage_of_none_is_said() {
    let mut r = run(7, "redis", "w", 4, 10_000.0, 100);
    let run = r.run.as_mut().expect("a run");
    run.faults = vec![
        kvbench_model::InjectedFault {
            spec: "restart:0@2s".into(),
            target: "127.0.0.1:7000".into(),
            at_s: 2.0,
            lasted_s: Some(0.04),
            error: None,
        },
        kvbench_model::InjectedFault {
            spec: "kill:0@9s".into(),
            target: String::new(),
            at_s: 9.0,
            lasted_s: None,
            error: Some("the window ended before it was due".into()),
        },
    ];
    let text = crate::text::outage_lines(run);
    assert!(text.contains("outage: none; no request failed"), "{text}");
    assert!(
        text.contains("fault restart:0@2s: caused 2.00 s into the window on 127.0.0.1:7000, over after 0.04 s"),
        "{text}"
    );
    assert!(
        text.contains("fault kill:0@9s: not caused: the window ended"),
        "{text}"
    );
    run.faults.clear();
    assert_eq!(
        crate::text::outage_lines(run),
        "",
        "no fault, no outage: nothing"
    );
}

#[test]
fn flags_are_the_kinds_of_marks_and_warnings_not_their_first_words() {
    use crate::cells::Flag;
    use kvbench_model::{Finding, MarkKind};
    let mut r = run(1, "redis", "w", 8, 100_000.0, 50);
    // The sentence begins with another kind's name: the kind decides.
    r.warnings.push(
        Finding::NoProbe {
            error: "client-bound: a server's own words".into(),
        }
        .into(),
    );
    // A sentence without a kind word before its colon still has a kind.
    r.warnings.push(
        Finding::Clamped {
            latencies: 3,
            limit_s: 60.0,
        }
        .into(),
    );
    let sources = alone(r);
    let cells = crate::cells::group(&sources).expect("cells");
    assert_eq!(
        cells[0].flags,
        vec![Flag::Mark(MarkKind::NoProbe), Flag::Mark(MarkKind::Clamped)]
    );
    assert!(!cells[0].flags.iter().any(|f| f.doubts_a_verdict()));
    assert_eq!(cells[0].flag_names(), vec!["no-probe", "clamped"]);
}

/// One run as the only source, outside any experiment.
fn alone(record: RunRecord) -> Vec<Source> {
    vec![Source {
        record,
        cell_key: None,
        cell_index: None,
        block: None,
    }]
}
