//! `kvbench analytics pagerank` end to end on a generated graph of 10,000
//! nodes: every implementation (the client-side drivers over Redis, Valkey
//! and Memcached, Lua inside Redis and Valkey, Spark in local mode) loads
//! it, runs ten iterations and gives each node's rank within 1e-6 of the
//! reference's, on real servers and a real Spark; the results are stored,
//! listed and drawn by the report (checked in a real Chromium), and a
//! failure keeps what finished before it. `kvbench reproduce zhang2014`
//! runs and judges the paper at a small scale.

use crate::util::Sandbox;

/// The project's Python, with PySpark (`scripts/setup --analytics`).
const SPARK_PYTHON: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/python");

#[test]
fn every_implementation_matches_the_reference_on_10000_nodes() {
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let impls = "reference,redis,redis-lua,valkey,valkey-lua,memcached,spark";
    let out = sb
        .kvbench()
        .env("KVBENCH_PYTHON", SPARK_PYTHON)
        .args([
            "analytics",
            "pagerank",
            "--graph",
            "rmat:10000:50000",
            "--impl",
            impls,
            "--json",
            "-q",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(record["id"], 1, "stored: {stderr}");
    assert_eq!(record["status"], "ok");
    assert_eq!(record["graph"]["nodes"], 10_000);
    let results = record["pagerank"].as_array().expect("array");
    let names: Vec<&str> = results
        .iter()
        .filter_map(|r| r["implementation"].as_str())
        .collect();
    assert_eq!(names.join(","), impls);
    for r in results {
        let name = r["implementation"].as_str().unwrap_or_default();
        let err = r["max_relative_error"].as_f64().unwrap_or(1.0);
        assert!(err <= 1e-6, "{name}: {err}");
        assert_eq!(r["map_s"].as_array().map(Vec::len), Some(10), "{name}");
        if name != "reference" {
            assert!(r["load_s"].as_f64().unwrap_or(0.0) > 0.0, "{name}");
            assert!(
                r["memory_bytes"].as_u64().unwrap_or(0) > 0,
                "{name}: {}",
                r["memory_bytes"]
            );
        }
        if !["reference", "spark"].contains(&name) {
            assert!(r["requests"].as_u64().unwrap_or(0) > 0, "{name}");
            assert!(r["server_cpu_s"].as_f64().unwrap_or(0.0) > 0.0, "{name}");
        }
    }

    // Stored exactly as printed, listed, and drawn.
    let listed = sb
        .kvbench()
        .args(["analytics", "list", "--json"])
        .output()
        .expect("lists");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    assert_eq!(listed, serde_json::json!([record]));
    let text = sb
        .kvbench()
        .args(["analytics", "list"])
        .output()
        .expect("lists");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("pagerank") && text.contains("rmat:10000:50000") && text.contains("spark "),
        "{text}"
    );
    drop(_serial);
    let out = sb
        .kvbench()
        .args(["report", "--analytics", "1", "--out", "rep", "--json"])
        .output()
        .expect("reports");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = sb.path().join("rep/index.html");
    let shot = sb.path().join("rep/shot.png");
    let page =
        crate::browser::check_page(&index, &["figure svg", "#pagerank table tr"], Some(&shot));
    assert!(page.console_errors.is_empty(), "{:?}", page.console_errors);
    assert!(
        page.network_requests.is_empty(),
        "{:?}",
        page.network_requests
    );
    assert_eq!(
        page.counts[0],
        ("figure svg".to_string(), 3),
        "time, steps, memory"
    );
    assert_eq!(
        page.counts[1],
        ("#pagerank table tr".to_string(), 8),
        "a header and seven implementations"
    );
    assert!(std::fs::metadata(&shot)
        .map(|m| m.len() > 10_000)
        .unwrap_or(false));
    for fig in [
        "pagerank-iterations-1",
        "pagerank-steps-1",
        "graph-memory-1",
    ] {
        for ext in ["svg", "png"] {
            assert!(
                sb.path().join(format!("rep/figures/{fig}.{ext}")).exists(),
                "{fig}.{ext}"
            );
        }
    }
}

/// A system that fails stores the run failed, with what finished before it.
#[test]
fn a_failed_implementation_keeps_what_finished_before_it() {
    // PageRank and the report's drawing load the machine: not beside a
    // timing-sensitive test.
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    // A PATH with redis-server and no memcached.
    let bin = sb.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    let redis = which("redis-server");
    std::os::unix::fs::symlink(&redis, bin.join("redis-server")).expect("link");
    let out = sb
        .kvbench()
        .env("PATH", &bin)
        .args([
            "analytics",
            "pagerank",
            "--graph",
            "rmat:1000:5000",
            "--impl",
            "reference,redis,memcached",
            "-q",
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("memcached"), "{err}");
    let listed = sb
        .kvbench()
        .args(["analytics", "list", "--json"])
        .output()
        .expect("lists");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    let r = &listed[0];
    assert_eq!(r["status"], "failed", "{listed}");
    assert!(
        r["failure"].as_str().unwrap_or("").contains("memcached"),
        "{r}"
    );
    let names: Vec<&str> = r["pagerank"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["implementation"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["reference", "redis"]);

    // A failed run is drawn with what it has, and says it failed.
    sb.kvbench()
        .args(["report", "--analytics", "1", "--out", "rep"])
        .assert()
        .success();
    let html = std::fs::read_to_string(sb.path().join("rep/index.html")).expect("index.html");
    assert!(html.contains("failed: "), "the failure is shown");
    for (args, says) in [
        (&["--analytics", "7"][..], "no analytics run with id 7"),
        (&["--analytics", "x"], "--analytics 'x'"),
        (&["--analytics", "1", "--file", "f.toml"], "--file"),
    ] {
        let out = sb
            .kvbench()
            .arg("report")
            .args(args)
            .args(["--out", "rep2"])
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

fn which(name: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} on PATH"))
}

/// Paper D at a small scale: the three analytics runs stored (PageRank and
/// lookups with set/get on the Google graph's size, PageRank on the Pokec
/// graph's),
/// every finding judged (none "not measured") on the Google graph's runs,
/// and the random gets agree with the paper (a Spark job per lookup, far
/// slower than a GET).
#[test]
fn reproduce_zhang2014_runs_stores_and_judges_the_paper() {
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let out = sb
        .kvbench()
        .env("KVBENCH_PYTHON", SPARK_PYTHON)
        .args([
            "reproduce",
            "zhang2014",
            "--scale",
            "0.003",
            "--out",
            "rep",
            "--json",
        ])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["analytics_runs"], serde_json::json!([1, 2, 3]), "{v}");
    let findings = v["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 9, "{v}");
    for f in findings {
        assert_ne!(f["verdict"], "not_measured", "{f}");
    }
    for id in ["D6", "D7"] {
        let f = findings.iter().find(|f| f["id"] == id).expect(id);
        assert_eq!(f["verdict"], "agrees", "{f}");
    }
    let html = std::fs::read_to_string(sb.path().join("rep/index.html")).expect("index.html");
    assert!(html.contains("Paper vs kvbench") && html.contains("Random gets"));
    // The set/get window ran on each store after its lookups, with the
    // server's CPU split for D8 and D9.
    assert!(html.contains("Set/get throughput"), "the set/get table");
    for id in ["D8", "D9"] {
        let f = findings.iter().find(|f| f["id"] == id).expect(id);
        let measured = f["measured"].as_str().unwrap_or_default();
        assert!(measured.contains("in the kernel"), "{f}");
    }
    assert_eq!(
        v["report"]["figures"],
        serde_json::json!([
            "pagerank-iterations-1",
            "pagerank-steps-1",
            "pagerank-iterations-3",
            "pagerank-steps-3",
            "graph-memory-1",
            "graph-memory-3",
            "lookup-latency-2",
            "setget-cpu-2"
        ]),
        "time and steps of each graph, their memory, the lookups, set/get's CPU"
    );
    assert_eq!(html.matches("<figure").count(), 8);
    assert!(
        html.contains("synthetic:pokec"),
        "the Pokec graph's run is shown"
    );
    // The stored runs judged again without measuring: the same verdicts;
    // without --judge no findings, and --judge needs --analytics.
    let again = |extra: &[&str]| {
        let report = ["report", "--analytics", "1-3", "--out", "again", "--json"];
        sb.json(&[&report[..], extra].concat())
    };
    let judged = again(&["--judge"]);
    let verdicts = |f: &serde_json::Value| -> Vec<(String, String)> {
        f.as_array()
            .expect("findings")
            .iter()
            .map(|f| (f["id"].to_string(), f["verdict"].to_string()))
            .collect()
    };
    assert_eq!(verdicts(&judged["findings"]), verdicts(&v["findings"]));
    assert_eq!(again(&[])["findings"], serde_json::json!([]));
    let alone = sb
        .kvbench()
        .args(["report", "--runs", "1", "--judge", "--out", "x"])
        .output()
        .expect("runs");
    assert_eq!(alone.status.code(), Some(2), "--judge needs --analytics");
}

#[test]
fn bad_analytics_input_is_one_line_and_exit_2() {
    let sb = Sandbox::new();
    std::fs::write(sb.path().join("g.txt"), "1\t2\n3\tx\n").expect("write");
    for (args, mentions) in [
        (&["--graph", "synthetic:facebook"][..], "synthetic:facebook"),
        (&["--graph", "rmat:10:1000"], "rmat:10:1000"),
        (&["--graph", "g.txt"], "g.txt: line 2"),
        (&["--graph", "missing.txt"], "missing.txt"),
        (&["--impl", "mongo"], "--impl mongo"),
        (&["--scale", "0"], "--scale"),
        (&["--iterations", "0"], "--iterations"),
        (&["--damping", "1"], "--damping"),
    ] {
        let out = sb
            .kvbench()
            .args(["analytics", "pagerank"])
            .args(args)
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(mentions), "{args:?}: {err}");
    }
}

/// Paper D's random get: 100 single-key lookups on each system, every
/// answer checked; a lookup on a cached Spark RDD is a job, far slower
/// than a GET on the stores.
#[test]
fn lookups_are_answered_right_and_a_spark_job_costs_more_than_a_get() {
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let out = sb
        .kvbench()
        .env("KVBENCH_PYTHON", SPARK_PYTHON)
        .args([
            "analytics",
            "lookup",
            "--graph",
            "rmat:2000:10000",
            "--impl",
            "redis,memcached,spark",
            "--count",
            "100",
            "--setget",
            "1",
            "--json",
            "-q",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let results = &record["lookups"];
    let p50 = |name: &str| {
        let r = results
            .as_array()
            .and_then(|a| a.iter().find(|r| r["implementation"] == name))
            .unwrap_or_else(|| panic!("{name} in {results}"));
        assert_eq!(r["count"], 100, "{name}");
        r["p50_us"].as_f64().unwrap_or(0.0)
    };
    let (redis, memcached, spark) = (p50("redis"), p50("memcached"), p50("spark"));
    assert!(redis > 0.0 && memcached > 0.0, "{redis} {memcached}");
    assert!(
        spark > 10.0 * redis.max(memcached),
        "spark {spark} us, redis {redis}, memcached {memcached}"
    );
    // --setget: a window on each store after its lookups (an RDD takes no
    // set), recorded with the setting.
    for r in results.as_array().expect("lookups") {
        let name = r["implementation"].as_str().unwrap_or_default();
        let sg = &r["setget"];
        if name == "spark" {
            assert!(sg.is_null(), "{r}");
        } else {
            assert!(sg["gets"].as_u64().unwrap_or(0) > 0, "{r}");
            assert!(sg["sets"].as_u64().unwrap_or(0) > 0, "{r}");
            assert!(sg["server_system_s"].as_f64().is_some(), "{r}");
        }
    }
    assert_eq!(record["settings"]["setget_s"], 1.0);
}

#[test]
fn a_set_get_window_out_of_range_is_refused_before_anything_runs() {
    let sb = Sandbox::new();
    for bad in ["0", "nan", "1e9"] {
        let out = sb
            .kvbench()
            .args([
                "analytics",
                "lookup",
                "--graph",
                "rmat:200:1000",
                "--setget",
                bad,
            ])
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.lines().count(), 1, "{bad}: {err}");
        assert!(err.contains("--setget"), "{bad}: {err}");
    }
}
