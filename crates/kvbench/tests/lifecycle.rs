//! Servers kvbench starts never outlive it: not after a run, not after a
//! failure, not after Ctrl-C. And a finished run is always stored.

use crate::util::{alive, children_of, Sandbox, SMALL};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn run_stores_the_result_and_stops_the_server() {
    let sb = Sandbox::new();
    for system in ["redis", "memcached"] {
        let mut args = vec![
            "run",
            "--system",
            system,
            "--workload",
            "read-heavy",
            "--seed",
            "3",
            "--json",
        ];
        args.extend_from_slice(SMALL);
        let out = sb.kvbench().args(&args).output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        assert_eq!(rec["status"], "ok", "{rec}");
        assert_eq!(rec["config"]["seed"], 3);
        assert_eq!(rec["load"]["completed"], 2000);
        assert_eq!(rec["run"]["completed"], 4000);
        assert!(rec["environment"]["server_version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()));
        assert_eq!(rec["probes"].as_array().map(Vec::len), Some(3));
        let settings = rec["config"]["server_settings"]
            .as_array()
            .expect("settings");
        assert!(
            !settings.is_empty(),
            "deviations from defaults are recorded"
        );
        let id = rec["id"].as_i64().expect("id");
        // The stored copy is the printed one.
        let shown = sb
            .kvbench()
            .args(["show", &id.to_string(), "--json"])
            .output()
            .expect("show");
        let stored: serde_json::Value = serde_json::from_slice(&shown.stdout).expect("JSON");
        assert_eq!(stored, rec);
    }
    let list = sb.kvbench().args(["runs"]).output().expect("runs");
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.contains("redis") && text.contains("memcached"),
        "{text}"
    );
}

/// Starts `kvbench run` for a minute on `system` in the background and
/// returns it with the pid of the server it started, once that exists.
fn start_long_run(sb: &Sandbox, system: &str) -> (std::process::Child, u32) {
    let kvbench = assert_cmd::cargo::cargo_bin("kvbench");
    let child = std::process::Command::new(kvbench)
        .args([
            "run",
            "--system",
            system,
            "--workload",
            "balanced",
            "--records",
            "1000",
        ])
        .args([
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--quiet",
            "--timeout",
            "2s",
        ])
        .current_dir(sb.path())
        .env("TMPDIR", sb.tmp())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    let server = loop {
        if let Some(p) = children_of(child.id()).into_iter().next() {
            break p;
        }
        assert!(Instant::now() < deadline, "no server started");
        std::thread::sleep(Duration::from_millis(50));
    };
    // Let it reach the measured window.
    std::thread::sleep(Duration::from_millis(1500));
    (child, server)
}

/// The newest stored run, as JSON.
fn newest_run(sb: &Sandbox) -> serde_json::Value {
    let out = sb
        .kvbench()
        .args(["runs", "--json"])
        .output()
        .expect("runs");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    rows[0].clone()
}

#[test]
fn ctrl_c_stops_the_server_and_stores_the_run_as_interrupted() {
    let sb = Sandbox::new();
    let (mut child, server) = start_long_run(&sb, "redis");
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    assert!(!alive(server), "server {server} still running after Ctrl-C");
    let run = newest_run(&sb);
    assert_eq!(run["status"], "failed");
    assert!(
        run["failure"]
            .as_str()
            .is_some_and(|f| f.contains("interrupted")),
        "{run}"
    );
}

#[test]
fn a_server_killed_mid_run_fails_the_run_and_it_is_stored() {
    let sb = Sandbox::new();
    let (mut child, server) = start_long_run(&sb, "memcached");
    // SAFETY: kill(2) on the server our child started.
    unsafe { libc::kill(server as i32, libc::SIGKILL) };
    let status = child.wait().expect("wait");
    assert_ne!(
        status.code(),
        Some(0),
        "a run whose server died is not a success"
    );
    assert_ne!(newest_run(&sb)["status"], "ok");
}

/// Right after a run with as many connections as Redis allows, the server
/// may not have seen every close yet and refuses one more client; the probe
/// after the run must wait for the slot, not fail the run. Here `maxclients
/// 1` and one held connection stand in for 10,000 benchmark connections.
#[test]
fn a_probe_waits_while_redis_is_at_maxclients() {
    let server = kvbench_servers::Server::start(&kvbench_servers::ServerSpec {
        system: kvbench_servers::SystemKind::Redis,
        binary: None,
        memory_limit_mb: None,
        eviction: None,
        extra_args: vec!["--maxclients".into(), "1".into()],
    })
    .expect("server starts");
    let held = std::net::TcpStream::connect(server.addr()).expect("connect");
    // The server has registered the held client once it answers it.
    let mut probe_conn = &held;
    std::io::Write::write_all(&mut probe_conn, b"PING\r\n").expect("ping");
    let mut pong = [0u8; 7];
    std::io::Read::read_exact(&mut probe_conn, &mut pong).expect("pong");
    assert_eq!(&pong, b"+PONG\r\n");
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(held);
    });
    let started = Instant::now();
    let probe = server.probe("after_run");
    closer.join().expect("closer");
    let probe = probe.expect("the probe waits for the held client to go");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "the probe could only succeed after the close ({:?})",
        started.elapsed()
    );
    assert!(probe.server_memory_bytes.is_some());
}
