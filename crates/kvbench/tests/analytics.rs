//! `kvbench analytics pagerank` end to end on a generated graph of 10,000
//! nodes: every implementation (the client-side drivers over Redis, Valkey
//! and Memcached, Lua inside Redis and Valkey, Spark in local mode) loads
//! it, runs ten iterations and gives each node's rank within 1e-6 of the
//! reference's, on real servers and a real Spark.

use crate::util::Sandbox;

#[test]
fn every_implementation_matches_the_reference_on_10000_nodes() {
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let impls = "reference,redis,redis-lua,valkey,valkey-lua,memcached,spark";
    let out = sb
        .kvbench()
        .env(
            "KVBENCH_PYTHON",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/python"),
        )
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
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let results = results.as_array().expect("array");
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
        .env(
            "KVBENCH_PYTHON",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../.venv/bin/python"),
        )
        .args([
            "analytics",
            "lookup",
            "--graph",
            "rmat:2000:10000",
            "--impl",
            "redis,memcached,spark",
            "--count",
            "100",
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
    let results: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
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
}
