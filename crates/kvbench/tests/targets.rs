//! Remote targets (`--target URL`): TLS and AUTH against a redis-server the
//! test starts with certificates it makes, one clear line and exit 2 for
//! each way of not getting in, the safety flags on a server holding a key
//! kvbench did not write, remote clusters and pools, and a password that
//! appears nowhere kvbench writes.

use crate::util::{Sandbox, SMALL};
use kvbench_model::SystemKind;
use kvbench_servers::{Cluster, Pool, ServerSpec};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PASSWORD: &str = "kvb-Secret-7f3a9";

/// A redis-server the test started itself (kvbench's own starter refuses
/// `--port` and TLS options): stopped when dropped, also on failure.
pub(crate) struct Redis {
    child: Child,
    pub(crate) port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl Redis {
    /// redis-server on loopback with `config` lines appended; waits until
    /// the port accepts connections.
    pub(crate) fn start(config: &str) -> Redis {
        let dir = tempfile::tempdir().expect("dir");
        let port = free_port();
        let conf = dir.path().join("redis.conf");
        std::fs::write(
            &conf,
            format!(
                "bind 127.0.0.1\nsave \"\"\nappendonly no\ndir {}\n{config}\n",
                dir.path().display()
            )
            .replace("{port}", &port.to_string()),
        )
        .expect("write config");
        let child = Command::new("redis-server")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on PATH");
        let r = Redis {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }

    fn plain() -> Redis {
        Redis::start("port {port}")
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

/// One RESP command on a plain connection, the reply as text.
fn cmd(addr: SocketAddr, args: &[&str]) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(req.as_bytes()).expect("send");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let n = s.read(&mut chunk).expect("reply");
        buf.extend_from_slice(&chunk[..n]);
        if let Ok(Some(_)) = kvbench_proto::resp::parse_value(&buf) {
            break;
        }
        assert!(n > 0, "closed");
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn dbsize(addr: SocketAddr) -> u64 {
    let reply = cmd(addr, &["DBSIZE"]);
    reply.trim().trim_start_matches(':').parse().expect(&reply)
}

/// A CA, and a server certificate for 127.0.0.1 signed by it, made with
/// openssl in `dir`; returns (ca.pem, server.pem, server.key).
pub(crate) fn make_certs(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let p = |f: &str| dir.join(format!("{name}-{f}"));
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl on PATH");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let s = |p: &PathBuf| p.display().to_string();
    let (ca_key, ca, key, csr, cert, ext) = (
        p("ca.key"),
        p("ca.pem"),
        p("server.key"),
        p("server.csr"),
        p("server.pem"),
        p("ext.cnf"),
    );
    std::fs::write(&ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\n").expect("ext");
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        &format!("/CN=kvbench test CA {name}"),
        "-keyout",
        &s(&ca_key),
        "-out",
        &s(&ca),
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        &s(&key),
        "-out",
        &s(&csr),
    ]);
    run(&[
        "x509",
        "-req",
        "-in",
        &s(&csr),
        "-CA",
        &s(&ca),
        "-CAkey",
        &s(&ca_key),
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        &s(&ext),
        "-out",
        &s(&cert),
    ]);
    (ca, cert, key)
}

/// Runs kvbench; returns (exit code, stdout, stderr).
fn kvbench(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut c = sb.kvbench();
    c.args(args).arg("--db").arg(sb.db());
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("kvbench runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_one_line_exit_2(outcome: (Option<i32>, String, String), mentions: &[&str]) {
    let (code, stdout, stderr) = outcome;
    assert_eq!(code, Some(2), "stdout {stdout} stderr {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr}");
    for m in mentions {
        assert!(lines[0].contains(m), "'{}' should mention '{m}'", lines[0]);
    }
    assert!(!stderr.contains(PASSWORD), "{stderr}");
}

#[test]
fn tls_and_acl_auth_run_and_every_way_of_not_getting_in_is_one_line_and_exit_2() {
    // Servers and clusters of its own: kept apart from the timing tests.
    let _serial = crate::util::timing_sensitive();
    let certs = tempfile::tempdir().expect("dir");
    let (ca, cert, key) = make_certs(certs.path(), "good");
    let (other_ca, _, _) = make_certs(certs.path(), "other");
    let server = Redis::start(&format!(
        "port 0\ntls-port {{port}}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\ntls-auth-clients no\nuser default off\nuser app on >{PASSWORD} ~* &* +@all",
        cert.display(),
        key.display(),
        ca.display()
    ));
    let sb = Sandbox::new();
    let url = format!("rediss://app@127.0.0.1:{}", server.port);
    let ca = ca.display().to_string();
    let env = [("KVB_TEST_PW", PASSWORD)];
    let common = [
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--target",
        &url,
    ];

    // In: TLS verified against the test CA, AUTH as an ACL user, with a
    // password from the environment; the run is valid and on the tokio loop.
    let mut args = common.to_vec();
    args.extend([
        "--password-env",
        "KVB_TEST_PW",
        "--tls-ca",
        &ca,
        "--cleanup",
        "--json",
    ]);
    args.extend(SMALL);
    let (code, stdout, stderr) = kvbench(&sb, &args, &env);
    assert_eq!(code, Some(0), "stdout {stdout}\nstderr {stderr}");
    let rec: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(rec["status"], "ok", "{stdout}");
    // Stored redacted: that a password was used, never which.
    let stored = format!("rediss://app:***@127.0.0.1:{}", server.port);
    assert_eq!(rec["config"]["target"], stored.as_str());
    assert_eq!(rec["config"]["io"], "tokio");
    assert_eq!(rec["config"]["cleanup"], true);
    assert!(
        rec["run"]["completed"].as_u64().unwrap_or(0) >= 4000,
        "{stdout}"
    );
    assert_eq!(rec["run"]["errors"], 0);

    // A password file works too, and a report of it holds no password.
    let pw_file = sb.path().join("pw");
    std::fs::write(&pw_file, format!("{PASSWORD}\n")).expect("pw file");
    let report = sb.path().join("report.md");
    let mut args = vec!["compare", "--systems", "redis", "--workloads", "read-heavy"];
    args.extend([
        "--clients",
        "2",
        "--target",
        &url,
        "--tls-ca",
        &ca,
        "--cleanup",
    ]);
    args.extend(["--password-file", pw_file.to_str().expect("utf-8")]);
    args.extend(["--report", report.to_str().expect("utf-8"), "--json"]);
    args.extend(SMALL);
    let (code, stdout2, stderr2) = kvbench(&sb, &args, &[]);
    assert_eq!(code, Some(0), "stdout {stdout2}\nstderr {stderr2}");

    // The same target from an experiment file: TLS and where the password
    // comes from are keys of the target; the password itself never is.
    std::fs::write(
        sb.path().join("remote.toml"),
        format!(
            r#"
name = "remote"
systems = ["redis"]
workloads = ["read-heavy"]
[[targets]]
system = "redis"
url = "{url}"
cleanup = true
password_env = "KVB_TEST_PW"
tls_ca = "{ca}"
[dataset]
records = 500
[run]
warmup = "50ms"
operations = 1000
"#
        ),
    )
    .expect("experiment file");
    let (code, stdout3, stderr3) = kvbench(
        &sb,
        &["experiment", "run", "remote.toml", "--quiet", "--json"],
        &env,
    );
    assert_eq!(code, Some(0), "stdout {stdout3}\nstderr {stderr3}");
    let runs: serde_json::Value = serde_json::from_str(&stdout3).expect("json");
    assert_eq!(runs[0]["status"], "ok", "{stdout3}");
    assert_eq!(runs[0]["config"]["target"], stored.as_str());
    assert_eq!(runs[0]["config"]["cleanup"], true);

    // The password is nowhere: database file, stdout, stderr, JSON, Markdown.
    let db = std::fs::read(sb.db()).expect("db");
    let md = std::fs::read_to_string(&report).expect("report");
    let shown = kvbench(&sb, &["show", "1", "--json"], &[]);
    for (what, text) in [
        ("database", String::from_utf8_lossy(&db).into_owned()),
        ("stdout", stdout + &stdout2 + &stdout3),
        ("stderr", stderr + &stderr2 + &stderr3),
        ("show --json", shown.1),
        ("report", md),
    ] {
        assert!(!text.contains(PASSWORD), "the password is in the {what}");
    }

    // Out, each with one line and exit 2: a wrong CA, a wrong password, a
    // refused port, an unreachable host.
    let mut args = common.to_vec();
    args.extend(["--password-env", "KVB_TEST_PW"]);
    let other = other_ca.display().to_string();
    let mut wrong_ca = args.clone();
    wrong_ca.extend(["--tls-ca", &other]);
    assert_one_line_exit_2(
        kvbench(&sb, &wrong_ca, &env),
        &[
            "rediss://app:***@127.0.0.1",
            "TLS handshake failed",
            "UnknownIssuer",
        ],
    );
    let mut with_ca = args.clone();
    with_ca.extend(["--tls-ca", &ca]);
    assert_one_line_exit_2(
        kvbench(&sb, &with_ca, &[("KVB_TEST_PW", "not-the-password")]),
        &["AUTH as user 'app' refused", "WRONGPASS"],
    );
    let refused = format!("redis://127.0.0.1:{}", free_port());
    let bare = |target: &str| {
        let args = [
            "run",
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            target,
        ];
        kvbench(&sb, &args, &[])
    };
    assert_one_line_exit_2(bare(&refused), &[&refused, "refused"]);
    assert_one_line_exit_2(bare(&url), &["user 'app' needs a password"]);
    unreachable_host_is_one_line_and_exit_2(&sb);
    // None of the refusals stored a run: the three that ran are all there is.
    let (_, runs, _) = kvbench(&sb, &["runs", "--json"], &[]);
    let runs: serde_json::Value = serde_json::from_str(&runs).expect("runs json");
    assert_eq!(runs.as_array().map(Vec::len), Some(3), "{runs}");
}

/// An unreachable host, without sending anything off the machine: kvbench
/// runs inside a network namespace the test makes, with no routes at all.
fn unreachable_host_is_one_line_and_exit_2(sb: &Sandbox) {
    let ns = format!("kvbtest-unreach-{}", std::process::id());
    let made = Command::new("ip").args(["netns", "add", &ns]).output();
    if !made.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipping the unreachable-host case: cannot create a network namespace (not root?)"
        );
        return;
    }
    struct Ns(String);
    impl Drop for Ns {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
        }
    }
    let _ns = Ns(ns.clone());
    let out = Command::new("ip")
        .args(["netns", "exec", &ns])
        .arg(assert_cmd::cargo::cargo_bin("kvbench"))
        .args(["run", "--system", "redis", "--workload", "balanced"])
        .args(["--target", "redis://10.255.0.1:6379", "--db"])
        .arg(sb.db())
        .env("TMPDIR", sb.tmp())
        .output()
        .expect("ip netns exec");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_one_line_exit_2(
        (out.status.code(), String::new(), stderr),
        &["10.255.0.1:6379", "unreachable"],
    );
}

#[test]
fn a_foreign_key_is_never_loaded_over_or_deleted_and_cleanup_removes_exactly_ours() {
    // Servers and clusters of its own: kept apart from the timing tests.
    let _serial = crate::util::timing_sensitive();
    let server = Redis::plain();
    let addr: SocketAddr = format!("127.0.0.1:{}", server.port).parse().expect("addr");
    assert!(cmd(addr, &["SET", "theirs", "keep me"]).starts_with("+OK"));
    let sb = Sandbox::new();
    let url = server.url();
    // Inserts and YCSB's scan index, so cleanup has run inserts and index
    // entries to find as well as the loaded records.
    let base = [
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--target",
        &url,
        "-p",
        "insertproportion=0.2",
        "-p",
        "updateproportion=0.3",
        "-p",
        "kvbench.redis.index=ycsb",
    ];

    let mut refused = base.to_vec();
    refused.extend(SMALL);
    assert_one_line_exit_2(
        kvbench(&sb, &refused, &[]),
        &["already holds 1 keys", "--allow-existing"],
    );
    assert_eq!(dbsize(addr), 1, "nothing was written");

    let mut allowed = base.to_vec();
    allowed.extend(["--allow-existing", "--cleanup", "--json"]);
    allowed.extend(SMALL);
    let (code, stdout, stderr) = kvbench(&sb, &allowed, &[]);
    assert_eq!(code, Some(0), "stdout {stdout}\nstderr {stderr}");
    let rec: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let inserts = crate::util::op(&rec, "insert")["completed"]
        .as_u64()
        .unwrap_or(0);
    assert!(inserts > 0, "the run inserted: {stdout}");
    assert_eq!(cmd(addr, &["GET", "theirs"]), "$7\r\nkeep me\r\n");
    assert_eq!(dbsize(addr), 1, "only the foreign key is left");

    // --flush is the only way kvbench deletes what it did not write.
    let mut flushed = base.to_vec();
    flushed.extend(["--flush", "--cleanup"]);
    flushed.extend(SMALL);
    let (code, stdout, stderr) = kvbench(&sb, &flushed, &[]);
    assert_eq!(code, Some(0), "stdout {stdout}\nstderr {stderr}");
    assert_eq!(dbsize(addr), 0);
}

/// `kvbench run --system SYSTEM --workload balanced --target URL --cleanup`,
/// small, which must succeed; its record.
fn run_on(sb: &Sandbox, system: &str, url: &str) -> serde_json::Value {
    let mut args = vec!["run", "--system", system, "--workload", "balanced"];
    args.extend(["--target", url, "--cleanup", "--json"]);
    args.extend(SMALL);
    let (code, stdout, stderr) = kvbench(sb, &args, &[]);
    assert_eq!(code, Some(0), "stdout {stdout}\nstderr {stderr}");
    serde_json::from_str(&stdout).expect("json")
}

fn probe_at(rec: &serde_json::Value, stage: &str) -> serde_json::Value {
    rec["probes"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["stage"] == stage))
        .cloned()
        .unwrap_or_else(|| panic!("no {stage} probe"))
}

#[test]
fn a_remote_cluster_and_a_remote_pool_are_found_probed_per_node_and_cleaned() {
    // Servers and clusters of its own: kept apart from the timing tests.
    let _serial = crate::util::timing_sensitive();
    let cluster = Cluster::start(&ServerSpec::new(SystemKind::Redis), 3, 0).expect("cluster");
    let seeds = cluster.seeds();
    let sb = Sandbox::new();
    let rec = run_on(&sb, "redis", &format!("redis-cluster://{}", seeds[0]));
    assert_eq!(rec["config"]["topology"], "cluster");
    assert_eq!(rec["config"]["nodes"], 3, "masters found from one seed");
    assert_eq!(rec["run"]["errors"], 0);
    let after_load = probe_at(&rec, "after_load");
    assert_eq!(after_load["nodes"].as_array().map(Vec::len), Some(3));
    assert_eq!(after_load["items"], 2000, "{after_load}");
    for addr in &seeds {
        assert_eq!(dbsize(*addr), 0, "{addr} cleaned");
    }
    cluster.stop().expect("stop cluster");

    let pool = Pool::start(&ServerSpec::new(SystemKind::Memcached), 2).expect("pool");
    let nodes: Vec<String> = pool.addrs().iter().map(ToString::to_string).collect();
    let rec = run_on(
        &sb,
        "memcached",
        &format!("memcached://{}", nodes.join(",")),
    );
    assert_eq!(rec["config"]["topology"], "pool");
    assert_eq!(rec["run"]["nodes"].as_array().map(Vec::len), Some(2));
    let after_run = probe_at(&rec, "after_run");
    assert_eq!(after_run["items"], 2000, "{after_run}");
    for node in pool.nodes() {
        assert_eq!(
            node.probe("after").expect("probe").items,
            Some(0),
            "cleaned"
        );
    }
    pool.stop().expect("stop pool");
}

/// A lost TLS connection is reopened the same way it was opened (TLS
/// verified against the CA, AUTH as the ACL user): a `rediss://` target
/// whose server kills every client connection mid-run (`CLIENT KILL TYPE
/// normal`, sent by redis-cli over TLS) finishes its window on reopened
/// connections, with the kills counted as `closed` and the reconnects
/// counted (issue 33, item 1).
#[test]
fn a_tls_target_that_drops_its_clients_is_reconnected_over_tls() {
    let _serial = crate::util::timing_sensitive();
    let certs = tempfile::tempdir().expect("dir");
    let (ca, cert, key) = make_certs(certs.path(), "good");
    let server = Redis::start(&format!(
        "port 0\ntls-port {{port}}\ntls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\ntls-auth-clients no\nuser default off\nuser app on >{PASSWORD} ~* &* +@all",
        cert.display(),
        key.display(),
        ca.display()
    ));
    let ca = ca.display().to_string();
    let port = server.port.to_string();
    let cli = |args: &[&str]| -> String {
        let out = Command::new("redis-cli")
            .args(["--tls", "--cacert", &ca, "-p", &port, "--user", "app"])
            .args(["--pass", PASSWORD, "--no-auth-warning"])
            .args(args)
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let sb = Sandbox::new();
    let url = format!("rediss://app@127.0.0.1:{port}");
    let args = [
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--target",
        &url,
        "--tls-ca",
        &ca,
        "--password-env",
        "KVB_TEST_PW",
        "--records",
        "500",
        "--duration",
        "4s",
        "--warmup",
        "0s",
        "--clients",
        "3",
        "--reconnect-backoff",
        "10ms-100ms",
        "--cleanup",
        "--json",
        "--quiet",
    ];
    let mut child = sb.spawn_env(&args, &[("KVB_TEST_PW", PASSWORD)]);
    let started = Instant::now();
    while !cli(&["INFO", "commandstats"]).contains("cmdstat_hgetall") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no read served"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    let killed: u64 = cli(&["CLIENT", "KILL", "TYPE", "normal"])
        .trim()
        .parse()
        .unwrap_or(0);
    assert!(killed >= 3, "{killed} connections killed");
    let status = child.wait().expect("kvbench ends");
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read");
    assert_eq!(status.code(), Some(3), "finished, marked: {stdout}");
    let rec: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let run = &rec["run"];
    assert!(
        (run["duration_s"].as_f64().unwrap_or(0.0) - 4.0).abs() < 0.01,
        "{run}"
    );
    assert!(run["reconnects"].as_u64().unwrap_or(0) >= 3, "{run}");
    assert_eq!(rec["config"]["io"], "tokio");
    let last: u64 = (run["series"].as_array().expect("series").iter())
        .filter(|p| p["second"] == 3)
        .map(|p| p["completed"].as_u64().unwrap_or(0))
        .sum();
    assert!(last > 0, "no operation after the kill: {run}");
    assert!(!stdout.contains(PASSWORD));
}
