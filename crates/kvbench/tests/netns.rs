//! `--netns`: every server in a network namespace of its own, the client in
//! another, joined through a bridge by shaped links; and nothing left
//! behind, not even by a kvbench killed with SIGKILL.
//!
//! These tests need root and iproute2; without them they print a SKIP line
//! and pass. Where the kernel has no netem, the delay is left out (with a
//! SKIP line) and the rest still runs.

use crate::bad_input::assert_usage_error;
use crate::util::{alive, wait_for_children, Sandbox, SMALL};
use kvbench_servers::netns::{kvbench_namespaces, preflight};
use kvbench_servers::{Link, NetnsError};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Why these tests cannot run here, printed as a SKIP line.
pub(crate) fn skipped(test: &str) -> bool {
    match preflight(Link::default()) {
        Ok(()) => false,
        Err(e) => {
            println!("SKIP {test}: {e}");
            true
        }
    }
}

/// A sandbox and a clean-up guard; `None` (after a SKIP line) where
/// namespaces cannot be made.
fn prepare(test: &str) -> Option<(Sandbox, Cleanup)> {
    (!skipped(test)).then(|| (Sandbox::new(), Cleanup::default()))
}

/// `--link-rate 1gbit --link-delay 50us`, without the delay where the
/// kernel lacks netem.
fn link_args(test: &str) -> Vec<&'static str> {
    let wanted = Link {
        rate_bits: Some(1_000_000_000),
        delay: Duration::from_micros(50),
    };
    match preflight(wanted) {
        Ok(()) => vec!["--link-rate", "1gbit", "--link-delay", "50us"],
        Err(e @ NetnsError::NoNetem { .. }) => {
            println!("SKIP {test} --link-delay 50us (1gbit links only): {e}");
            vec!["--link-rate", "1gbit"]
        }
        Err(e) => panic!("{e}"),
    }
}

/// The namespaces of kvbench process `pid`.
fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("kvb-{pid}-");
    kvbench_namespaces()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// Kills the kvbench processes a test still runs and removes every
/// namespace of the kvbench processes it started, also when an assertion
/// fails.
#[derive(Default)]
struct Cleanup {
    owners: Vec<u32>,
    running: Vec<Child>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for child in &mut self.running {
            let _ = child.kill();
            let _ = child.wait();
        }
        for &pid in &self.owners {
            for ns in namespaces_of(pid) {
                let _ = Command::new("ip").args(["netns", "del", &ns]).status();
            }
        }
    }
}

fn kvbench(sb: &Sandbox, args: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("kvbench"));
    c.args(args)
        .args(["--db"])
        .arg(sb.db())
        .current_dir(sb.path())
        .env("TMPDIR", sb.tmp());
    c
}

impl Cleanup {
    /// Starts kvbench with `args`, its pid recorded for clean-up.
    fn spawn(&mut self, sb: &Sandbox, args: &[&str]) -> Child {
        let child = kvbench(sb, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kvbench");
        self.owners.push(child.id());
        child
    }
}

/// Runs kvbench to the end.
fn run_to_end(sb: &Sandbox, cleanup: &mut Cleanup, args: &[&str]) -> (u32, Output) {
    let child = cleanup.spawn(sb, args);
    let pid = child.id();
    (pid, child.wait_with_output().expect("kvbench runs"))
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn setting<'a>(rec: &'a serde_json::Value, name: &str) -> &'a str {
    rec["config"]["server_settings"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == name))
        .and_then(|s| s["value"].as_str())
        .unwrap_or_else(|| panic!("no setting {name}: {rec}"))
}

/// `kvbench run --netns` to the end on `system` and `topology`, whose run
/// must be ok with no errors and leave no namespace behind; its record.
fn run_in_namespaces(
    sb: &Sandbox,
    cleanup: &mut Cleanup,
    deployment: [&str; 3],
    links: &[&str],
) -> serde_json::Value {
    let [system, topology, nodes] = deployment;
    let mut args = vec![
        "run",
        "--system",
        system,
        "--topology",
        topology,
        "--nodes",
        nodes,
        "--workload",
        "read-heavy",
        "--netns",
        "--json",
    ];
    args.extend_from_slice(links);
    args.extend_from_slice(SMALL);
    let (pid, out) = run_to_end(sb, cleanup, &args);
    let rec = json_of(&out);
    assert_eq!(rec["status"], "ok", "{deployment:?}: {rec}");
    assert_eq!(rec["load"]["errors"], 0, "{deployment:?}: {rec}");
    assert_eq!(rec["run"]["errors"], 0, "{deployment:?}: {rec}");
    assert_eq!(namespaces_of(pid), Vec::<String>::new(), "left behind");
    rec
}

/// Aerospike's mesh across namespaces: each node binds its namespace's
/// address and seeds the others' there (needs an asd as well as root).
#[test]
fn an_aerospike_cluster_in_namespaces_runs_clean_and_leaves_nothing() {
    let test = "an_aerospike_cluster_in_namespaces_runs_clean_and_leaves_nothing";
    if crate::aerospike::binary(test).is_none() {
        return;
    }
    let Some((sb, mut cleanup)) = prepare(test) else {
        return;
    };
    let links = link_args(test);
    let rec = run_in_namespaces(&sb, &mut cleanup, ["aerospike", "cluster", "3"], &links);
    assert_eq!(rec["load"]["completed"], 2000);
    assert_eq!(rec["run"]["completed"], 4000);
    let nodes = rec["probes"][1]["nodes"]
        .as_array()
        .expect("per-node probes");
    let mut addrs: Vec<&str> = nodes.iter().filter_map(|n| n["addr"].as_str()).collect();
    addrs.sort_unstable();
    addrs.dedup();
    assert_eq!(addrs.len(), 3, "{nodes:?}");
    assert!(addrs.iter().all(|a| !a.starts_with("127.")), "{addrs:?}");
    let items: u64 = nodes.iter().filter_map(|n| n["items"].as_u64()).sum();
    assert_eq!(items, 2000, "every record on one node: {nodes:?}");
}

#[test]
fn a_cluster_in_namespaces_over_shaped_links_runs_clean_and_leaves_nothing() {
    let test = "a_cluster_in_namespaces_over_shaped_links_runs_clean_and_leaves_nothing";
    let Some((sb, mut cleanup)) = prepare(test) else {
        return;
    };
    let links = link_args(test);
    let rec = run_in_namespaces(&sb, &mut cleanup, ["redis", "cluster", "3"], &links);
    assert_eq!(rec["load"]["completed"], 2000);
    assert_eq!(rec["run"]["completed"], 4000);
    assert_eq!(rec["config"]["netns"]["link_rate_bits"], 1_000_000_000u64);
    // Every node is in its own namespace, on its own private address, and
    // announces that address to the others.
    let nodes = rec["probes"][0]["nodes"]
        .as_array()
        .expect("per-node probes");
    let addrs: Vec<&str> = nodes.iter().filter_map(|n| n["addr"].as_str()).collect();
    assert_eq!(addrs.len(), 3, "{rec}");
    assert!(addrs.iter().all(|a| a.starts_with("10.")), "{addrs:?}");
    assert!(setting(&rec, "cluster-announce-ip").starts_with("10."));
    assert!(setting(&rec, "bind").starts_with("10."));
}

#[test]
fn every_other_topology_runs_in_namespaces() {
    let Some((sb, mut cleanup)) = prepare("every_other_topology_runs_in_namespaces") else {
        return;
    };
    for system_topology in [
        ["memcached", "single", "1"],
        ["memcached", "pool", "2"],
        ["redis", "twemproxy", "2"],
    ] {
        run_in_namespaces(
            &sb,
            &mut cleanup,
            system_topology,
            &["--link-rate", "1gbit"],
        );
    }
}

#[test]
fn a_run_that_fails_in_namespaces_leaves_nothing() {
    let Some((sb, mut cleanup)) = prepare("a_run_that_fails_in_namespaces_leaves_nothing") else {
        return;
    };
    let mut args = vec!["run", "--system", "redis", "--workload", "read-heavy"];
    args.extend([
        "--netns",
        "--link-rate",
        "1gbit",
        "--server-bin",
        "/bin/false",
    ]);
    args.extend_from_slice(SMALL);
    let (pid, out) = run_to_end(&sb, &mut cleanup, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did not start"), "{stderr}");
    assert_eq!(namespaces_of(pid), Vec::<String>::new(), "left behind");
}

/// Not the `ip` and `tc` commands kvbench runs meanwhile.
fn is_redis_server(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "redis-server")
}

#[test]
fn namespaces_of_a_sigkilled_kvbench_are_removed_by_the_next_and_its_servers_die() {
    let test = "namespaces_of_a_sigkilled_kvbench_are_removed_by_the_next_and_its_servers_die";
    let Some((sb, mut cleanup)) = prepare(test) else {
        return;
    };
    let child = cleanup.spawn(
        &sb,
        &[
            "run",
            "--system",
            "redis",
            "--topology",
            "cluster",
            "--nodes",
            "3",
            "--workload",
            "balanced",
            "--records",
            "1000",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--netns",
            "--link-rate",
            "1gbit",
            "--quiet",
        ],
    );
    let killed = child.id();
    cleanup.running.push(child);
    let servers = wait_for_children(killed, 3, is_redis_server);
    // Into the run: the cluster formed, the records loaded.
    std::thread::sleep(Duration::from_secs(3));
    let mut child = cleanup.running.pop().expect("the child");
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let left = namespaces_of(killed);
    // hub, client, three nodes
    assert_eq!(left.len(), 5, "{left:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers.iter().any(|&s| alive(s)) {
        assert!(
            Instant::now() < deadline,
            "servers {servers:?} outlived their kvbench"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // Any later kvbench start with --netns clears them.
    run_in_namespaces(&sb, &mut cleanup, ["redis", "single", "1"], &[]);
    assert_eq!(namespaces_of(killed), Vec::<String>::new());
}

#[test]
fn netns_flags_are_checked_before_anything_starts() {
    let test = "netns_flags_are_checked_before_anything_starts";
    let sb = Sandbox::new();
    let base = ["run", "--system", "redis", "--workload", "read-heavy"];
    let with =
        |extra: &[&'static str]| -> Vec<&str> { base.iter().chain(extra).copied().collect() };
    assert_usage_error(&sb, &with(&["--link-rate", "1gbit"]), "add --netns");
    assert_usage_error(&sb, &with(&["--link-delay", "50us"]), "add --netns");
    let out = sb
        .kvbench()
        .args(with(&["--netns", "--link-rate", "fast"]))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'fast' is not a rate like 1gbit"));
    if skipped(test) {
        return;
    }
    assert_usage_error(
        &sb,
        &with(&["--netns", "--target", "127.0.0.1:6379"]),
        "--netns with --target",
    );
    // Root without the two capabilities is refused like a user.
    let setpriv = Command::new("setpriv")
        .args(["--inh-caps=-net_admin,-sys_admin"])
        .args(["--bounding-set=-net_admin,-sys_admin", "--"])
        .arg(assert_cmd::cargo::cargo_bin("kvbench"))
        .args(with(&["--netns"]))
        .current_dir(sb.path())
        .env("TMPDIR", sb.tmp())
        .output();
    match setpriv {
        Ok(out) if out.status.code() != Some(127) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
            assert!(stderr.contains("--netns needs root"), "{stderr}");
        }
        _ => println!("SKIP {test} without capabilities: setpriv (util-linux) is missing"),
    }
    assert!(!sb.db().exists(), "nothing is stored for bad input");
}

/// `--fault drop:0:1s@1s` (issue 33, item 5): the server is cut off the
/// run's network for a second, 1 s into a 4-s window (its link down, every
/// packet dropped, nothing reset). The connections stall and resume when
/// the link is back, as TCP does: no request fails, the stall shows as
/// latency of a second or more, and the fault is recorded as lasting the
/// second it was asked to. Needs root (SKIP otherwise).
#[test]
fn a_dropped_link_stalls_the_run_for_its_span_without_failing_it() {
    let test = "a_dropped_link_stalls_the_run_for_its_span_without_failing_it";
    let Some((sb, mut cleanup)) = prepare(test) else {
        return;
    };
    let args = [
        "run",
        "--system",
        "redis",
        "--workload",
        "read-heavy",
        "--records",
        "500",
        "--duration",
        "4s",
        "--warmup",
        "0s",
        "--clients",
        "2",
        "--netns",
        "--fault",
        "drop:0:1s@1s",
        "--stall",
        "0",
        "--json",
        "--quiet",
    ];
    let (pid, out) = run_to_end(&sb, &mut cleanup, &args);
    assert_eq!(out.status.code(), Some(3), "marked by the fault");
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let run = &rec["run"];
    let fault = &run["faults"][0];
    assert!(fault["error"].is_null(), "{fault}");
    let lasted = fault["lasted_s"].as_f64().expect("lasted_s");
    assert!((1.0..1.5).contains(&lasted), "{fault}");
    assert_eq!(run["errors"], 0, "{run}");
    let max_us = (run["ops"].as_array().expect("ops").iter())
        .filter_map(|o| o["latency"]["max_us"].as_f64())
        .fold(0.0, f64::max);
    assert!(max_us >= 900_000.0, "the cut shows as latency: {max_us} us");
    assert_eq!(namespaces_of(pid), Vec::<String>::new(), "left behind");
    println!("drop: lasted {lasted:.3} s, highest latency {max_us:.0} us");
}
