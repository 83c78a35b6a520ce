//! Issue 35, item 4: where a request's time goes. The server's own time
//! per command (INFO commandstats and LATENCY HISTOGRAM at the window's
//! edges) beside kvbench's latency, on real servers.

use crate::util::{run_record, Sandbox};
use kvbench_model::OpKind;

/// The acceptance of item 4 for Redis: the server time of GET is below
/// the client's latency, and what is left (kvbench, kernels, loopback)
/// is at least the bare loopback round trip measured in the same run. One
/// connection without pipelining, so each request pays a whole round trip.
/// The server's calls in the window match kvbench's requests.
#[test]
fn redis_get_server_time_is_below_the_client_latency_by_at_least_the_loopback_floor() {
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let rec = run_record(
        &sb,
        &[
            "--system",
            "redis",
            "--workload",
            "memtier",
            "--ratio",
            "1:1",
            "--records",
            "5000",
            "--clients",
            "1",
            "--duration",
            "2s",
            "--warmup",
            "500ms",
        ],
    );
    let r = rec.run.as_ref().expect("run");
    let t = r.server_time.as_ref().expect("server time");
    assert_eq!(t.method, "LATENCY HISTOGRAM and INFO commandstats");
    let floor = t.base_rtt_us.expect("loopback floor measured");
    let get = t
        .splits
        .iter()
        .find(|s| s.op == OpKind::Read)
        .unwrap_or_else(|| panic!("no read split: {t:?}"));
    assert_eq!(get.commands, ["get"]);
    assert!(
        get.server_mean_us > 0.0 && get.server_mean_us < get.client_mean_us,
        "{get:?}"
    );
    assert!(
        get.client_network_mean_us >= floor,
        "client and network {} us, loopback floor {floor} us",
        get.client_network_mean_us
    );
    assert!((0.9..=1.1).contains(&get.calls_per_request), "{get:?}");
    let read = r.ops.iter().find(|o| o.op == OpKind::Read).expect("reads");
    let calls = t
        .commands
        .iter()
        .find(|c| c.name == "get")
        .expect("get")
        .calls;
    let requests = read.completed + read.misses;
    // The counters are read a moment after the window opens and closes
    // (on the phase's coordinator), a few requests' worth at this rate.
    assert!(
        calls.abs_diff(requests) <= 20,
        "the server ran {calls} GETs in the window, kvbench counted {requests}"
    );
    let c = t.commands.iter().find(|c| c.name == "get").expect("get");
    assert!(
        c.p50_us.is_some_and(|p| p >= 1.0) && c.p99_us >= c.p50_us,
        "{c:?}"
    );
    assert!(t
        .splits
        .iter()
        .any(|s| s.op == OpKind::Update && s.commands == ["set"]));
    println!(
        "GET: client {:.1} us = server {:.2} us + client and network {:.1} us (loopback floor {floor:.1} us)",
        get.client_mean_us, get.server_mean_us, get.client_network_mean_us
    );
    let shown = sb.kvbench().args(["show", "1"]).output().expect("show");
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("latency split (means; server time from LATENCY HISTOGRAM"),
        "{text}"
    );
}

/// A cluster's masters are summed; memcached keeps no per-command time,
/// so its runs have none (not zeros).
#[test]
fn a_cluster_is_split_over_its_masters_and_memcached_has_no_server_time() {
    let sb = Sandbox::new();
    let common = [
        "--workload",
        "ycsb/a",
        "--records",
        "3000",
        "--duration",
        "1s",
        "--warmup",
        "0s",
    ];
    let mut args = vec![
        "--system",
        "valkey",
        "--topology",
        "cluster",
        "--nodes",
        "3",
    ];
    args.extend(common);
    let rec = run_record(&sb, &args);
    let t = rec
        .run
        .as_ref()
        .and_then(|r| r.server_time.as_ref())
        .expect("server time");
    let names: Vec<&str> = t
        .splits
        .iter()
        .flat_map(|s| s.commands.iter().map(String::as_str))
        .collect();
    assert!(
        names.contains(&"hgetall") && names.contains(&"hmset"),
        "{t:?}"
    );
    for s in &t.splits {
        assert!((0.9..=1.1).contains(&s.calls_per_request), "{s:?}");
    }
    let mut args = vec!["--system", "memcached"];
    args.extend(common);
    let rec = run_record(&sb, &args);
    assert!(rec.run.as_ref().is_some_and(|r| r.server_time.is_none()));
}
