//! Against real servers (redis-server and memcached on PATH): start, probe,
//! write, stop, and the failure paths. Every server is held by a `Server`
//! guard, so a failing assertion still stops it.

use kvbench_proto::{memcache_text, resp};
use kvbench_servers::{find_binary, Server, ServerError, ServerSpec, SystemKind};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn start(system: SystemKind) -> Server {
    Server::start(&ServerSpec::new(system)).unwrap_or_else(|e| panic!("start {system}: {e}"))
}

/// `system` with its own binary, or (KeyDB, which no package installs)
/// Redis's in its place, as `--server-bin` would give it.
fn start_any(system: SystemKind) -> Server {
    let mut spec = ServerSpec::new(system);
    if system == SystemKind::Keydb && find_binary(system, None).is_err() {
        spec.binary = Some(find_binary(SystemKind::Redis, None).expect("redis-server"));
    }
    Server::start(&spec).unwrap_or_else(|e| panic!("start {system}: {e}"))
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    s
}

/// Sends all commands in one write and reads one reply per command.
fn redis_pipeline(addr: SocketAddr, commands: &[Vec<Vec<u8>>]) -> Vec<resp::Value> {
    let mut out = Vec::new();
    for c in commands {
        let args: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
        resp::encode_command(&mut out, &args);
    }
    let mut stream = connect(addr);
    stream.write_all(&out).expect("send");
    let (mut buf, mut replies, mut chunk) = (Vec::new(), Vec::new(), [0u8; 65536]);
    while replies.len() < commands.len() {
        match resp::parse_value(&buf).expect("valid RESP") {
            Some((value, used)) => {
                replies.push(value);
                buf.drain(..used);
            }
            None => {
                let n = stream.read(&mut chunk).expect("receive");
                assert!(n > 0, "server closed the connection");
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    }
    replies
}

fn redis(addr: SocketAddr, args: &[&str]) -> resp::Value {
    let cmd = vec![args.iter().map(|a| a.as_bytes().to_vec()).collect()];
    redis_pipeline(addr, &cmd).remove(0)
}

fn memcached_set_many(addr: SocketAddr, count: usize, size: usize) {
    let mut out = Vec::new();
    let value = vec![b'v'; size];
    for i in 0..count {
        memcache_text::encode_set(&mut out, format!("key:{i}").as_bytes(), 0, 0, &value);
    }
    let mut stream = connect(addr);
    stream.write_all(&out).expect("send");
    let (mut buf, mut stored, mut chunk) = (Vec::new(), 0, [0u8; 65536]);
    while stored < count {
        match memcache_text::parse_reply(&buf).expect("valid reply") {
            Some(r) => {
                assert_eq!(r.kind, memcache_text::McReplyKind::Stored);
                stored += 1;
                buf.drain(..r.consumed);
            }
            None => {
                let n = stream.read(&mut chunk).expect("receive");
                assert!(n > 0, "server closed the connection");
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    }
}

/// True once the pid is gone (reaped). A zombie still counts as present.
fn pid_gone(pid: u32) -> bool {
    // SAFETY: signal 0 only checks existence.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

fn assert_cleaned_up(pid: u32, dir: &Path) {
    assert!(pid_gone(pid), "pid {pid} still exists");
    assert!(!dir.exists(), "{} still exists", dir.display());
}

fn setting<'a>(server: &'a Server, name: &str) -> Option<&'a str> {
    server
        .settings()
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.value.as_str())
}

#[test]
fn redis_probe_sees_writes() {
    let server = start(SystemKind::Redis);
    let (pid, dir) = (server.pid(), server.dir().to_path_buf());
    assert!(dir.exists());
    assert_eq!(server.addr().ip().to_string(), "127.0.0.1");

    assert_eq!(setting(&server, "save"), Some(""));
    assert_eq!(setting(&server, "appendonly"), Some("no"));
    assert_eq!(setting(&server, "bind"), Some("127.0.0.1"));
    assert_eq!(setting(&server, "dir"), dir.to_str());
    assert_eq!(setting(&server, "port"), None);
    // The server really runs with them.
    let save = redis(server.addr(), &["CONFIG", "GET", "save"]);
    assert_eq!(
        save,
        resp::Value::Array(vec![
            resp::Value::Bulk(b"save".to_vec()),
            resp::Value::Bulk(Vec::new())
        ])
    );
    let aof = redis(server.addr(), &["CONFIG", "GET", "appendonly"]);
    assert_eq!(
        aof,
        resp::Value::Array(vec![
            resp::Value::Bulk(b"appendonly".to_vec()),
            resp::Value::Bulk(b"no".to_vec())
        ])
    );

    let version = server.version().expect("version");
    assert!(!version.version.is_empty());
    let allocator = version.allocator.expect("redis names its allocator");
    assert!(
        allocator.contains("jemalloc") || allocator.contains("libc"),
        "{allocator}"
    );

    let before = server.probe("before_load").expect("probe");
    assert_eq!(before.stage, "before_load");
    assert!(before.rss_bytes.expect("rss") > 0);
    assert!(before.cpu_seconds.expect("cpu") >= 0.0);
    assert_eq!(before.items, Some(0));
    assert_eq!(before.evictions, Some(0));

    let sets: Vec<Vec<Vec<u8>>> = (0..1000)
        .map(|i| {
            vec![
                b"SET".to_vec(),
                format!("key:{i}").into_bytes(),
                vec![b'x'; 1024],
            ]
        })
        .collect();
    for reply in redis_pipeline(server.addr(), &sets) {
        assert_eq!(reply, resp::Value::Status("OK".into()));
    }

    let after = server.probe("after_load").expect("probe");
    assert_eq!(after.items, Some(1000));
    assert!(
        after.server_memory_bytes.expect("used_memory")
            > before.server_memory_bytes.expect("used_memory") + 1_000_000
    );
    assert!(after.rss_bytes.expect("rss") > 0);
    assert!(after.cpu_seconds.expect("cpu") >= before.cpu_seconds.expect("cpu"));
    assert!(server.cpu_seconds().expect("cpu") >= after.cpu_seconds.expect("cpu"));

    let stats = server.command_stats().expect("commandstats");
    assert!(stats.contains(&("set".to_string(), 1000)), "{stats:?}");
    let info = server.info().expect("info");
    assert_eq!(info.get("process_id"), Some(&pid.to_string()));

    drop(server);
    assert_cleaned_up(pid, &dir);
}

#[test]
fn memcached_probe_sees_writes() {
    let server = start(SystemKind::Memcached);
    let (pid, dir) = (server.pid(), server.dir().to_path_buf());

    assert_eq!(setting(&server, "-m"), Some("64"));
    assert_eq!(setting(&server, "-U"), Some("0"));
    assert_eq!(setting(&server, "-l"), Some("127.0.0.1"));
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert_eq!(setting(&server, "-u"), root.then_some("root"));
    let info = server.info().expect("info");
    assert_eq!(
        info.get("settings.maxbytes").map(String::as_str),
        Some("67108864")
    );
    assert_eq!(info.get("settings.udpport").map(String::as_str), Some("0"));

    let version = server.version().expect("version");
    assert!(!version.version.is_empty());
    assert_eq!(version.allocator, None);

    let before = server.probe("before_load").expect("probe");
    assert!(before.rss_bytes.expect("rss") > 0);
    assert_eq!(before.items, Some(0));
    assert_eq!(before.server_memory_bytes, Some(0));

    memcached_set_many(server.addr(), 500, 1000);

    let after = server.probe("after_load").expect("probe");
    assert_eq!(after.items, Some(500));
    assert!(after.server_memory_bytes.expect("bytes") >= 500 * 1000);
    assert_eq!(after.evictions, Some(0));
    let stats = server.command_stats().expect("stats");
    assert!(stats.contains(&("cmd_set".to_string(), 500)), "{stats:?}");

    server.stop().expect("clean stop");
    assert_cleaned_up(pid, &dir);
}

#[test]
fn memory_limit_reaches_the_server() {
    let spec = ServerSpec {
        memory_limit_mb: Some(32),
        ..ServerSpec::new(SystemKind::Memcached)
    };
    let server = Server::start(&spec).expect("start");
    let info = server.info().expect("info");
    assert_eq!(
        info.get("settings.maxbytes").map(String::as_str),
        Some("33554432")
    );

    let spec = ServerSpec {
        memory_limit_mb: Some(32),
        ..ServerSpec::new(SystemKind::Redis)
    };
    let redis_server = Server::start(&spec).expect("start");
    assert_eq!(setting(&redis_server, "maxmemory"), Some("32mb"));
    assert_eq!(
        redis_server
            .info()
            .expect("info")
            .get("maxmemory")
            .map(String::as_str),
        Some("33554432")
    );
}

#[test]
fn explicit_stop_of_redis_is_clean() {
    let server = start(SystemKind::Redis);
    let (pid, dir) = (server.pid(), server.dir().to_path_buf());
    server.stop().expect("clean stop");
    assert_cleaned_up(pid, &dir);
}

#[test]
fn a_server_killed_from_outside_is_reported_not_measured() {
    // Aerospike is not a `Server` (it starts from a configuration file, and
    // has tests of its own in aerospike.rs).
    for system in SystemKind::ALL
        .into_iter()
        .filter(|s| *s != SystemKind::Aerospike)
    {
        let server = start_any(system);
        let (pid, dir) = (server.pid(), server.dir().to_path_buf());
        // SAFETY: pid is our own unreaped child.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) }, 0);
        std::thread::sleep(Duration::from_millis(100));
        let err = server
            .probe("after_run")
            .expect_err("probe of a dead server");
        assert!(matches!(err, ServerError::Exited { .. }), "{err}");
        assert_eq!(server.cpu_seconds(), None);
        assert!(server.version().is_err());
        assert!(server.command_stats().is_err());
        let t = Instant::now();
        let err = server.stop().expect_err("unclean stop");
        assert!(err.to_string().contains("already exited"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_cleaned_up(pid, &dir);

        // And the same through Drop.
        let server = start_any(system);
        let (pid, dir) = (server.pid(), server.dir().to_path_buf());
        // SAFETY: as above.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        let t = Instant::now();
        drop(server);
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_cleaned_up(pid, &dir);
    }
}

#[test]
fn missing_binary_names_the_package() {
    for (system, package) in [
        (SystemKind::Redis, "redis-server"),
        (SystemKind::Memcached, "memcached"),
    ] {
        let spec = ServerSpec {
            binary: Some(PathBuf::from("/nonexistent/kvbench-server")),
            ..ServerSpec::new(system)
        };
        match Server::start(&spec) {
            Err(e @ ServerError::BinaryNotFound { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(&format!("apt-get install {package}")), "{msg}");
                assert!(msg.contains("/nonexistent/kvbench-server"), "{msg}");
            }
            other => panic!("expected BinaryNotFound, got {other:?}"),
        }
    }
}

#[test]
fn concurrent_servers_get_different_ports_and_outlive_their_starting_thread() {
    // Started on threads that end before the servers are used: the parent-death
    // signal must not fire when the starting thread exits.
    let servers: Vec<Server> = std::thread::scope(|s| {
        let handles: Vec<_> = [
            SystemKind::Redis,
            SystemKind::Redis,
            SystemKind::Memcached,
            SystemKind::Memcached,
        ]
        .into_iter()
        .map(|system| s.spawn(move || start(system)))
        .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("start thread"))
            .collect()
    });
    let mut ports: Vec<u16> = servers.iter().map(|s| s.addr().port()).collect();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), servers.len());
    std::thread::sleep(Duration::from_millis(200));
    for server in &servers {
        server.probe("after_threads").expect("still running");
    }
}

#[test]
fn extra_args_are_recorded_and_applied() {
    let spec = ServerSpec {
        extra_args: vec!["--hz".into(), "20".into()],
        ..ServerSpec::new(SystemKind::Redis)
    };
    let server = Server::start(&spec).expect("start");
    let hz = server
        .settings()
        .iter()
        .find(|s| s.name == "hz")
        .expect("hz recorded");
    assert_eq!((hz.value.as_str(), hz.reason.as_str()), ("20", "user"));
    assert_eq!(
        server.info().expect("info").get("hz").map(String::as_str),
        Some("20")
    );
}

#[test]
fn extra_args_that_break_isolation_are_refused() {
    let spec = ServerSpec {
        extra_args: vec!["--bind".into(), "0.0.0.0".into()],
        ..ServerSpec::new(SystemKind::Redis)
    };
    let err = Server::start(&spec).expect_err("refused");
    assert!(
        matches!(err, ServerError::ForbiddenArgument { .. }),
        "{err}"
    );
    let spec = ServerSpec {
        extra_args: vec!["-d".into()],
        ..ServerSpec::new(SystemKind::Memcached)
    };
    assert!(matches!(
        Server::start(&spec),
        Err(ServerError::ForbiddenArgument { .. })
    ));
}

#[test]
fn start_failure_quotes_the_log() {
    let spec = ServerSpec {
        extra_args: vec!["--no-such-directive".into(), "1".into()],
        ..ServerSpec::new(SystemKind::Redis)
    };
    let err = Server::start(&spec).expect_err("redis refuses unknown directives");
    let msg = err.to_string();
    assert!(matches!(err, ServerError::StartFailed { .. }), "{msg}");
    assert!(msg.contains("no-such-directive"), "{msg}");
}

const HELPER_ENV: &str = "KVBENCH_TARGET_PDEATHSIG_HELPER";

/// Not a test on its own: run by `server_dies_with_kvbench` in a child process.
#[test]
#[ignore = "helper process for server_dies_with_kvbench"]
fn pdeathsig_helper() {
    if std::env::var_os(HELPER_ENV).is_none() {
        return;
    }
    let server = start(SystemKind::Redis);
    println!("KVBENCH_HELPER {} {}", server.pid(), server.dir().display());
    std::io::stdout().flush().expect("flush");
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn server_dies_with_kvbench() {
    use std::io::BufRead;
    let mut helper = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "pdeathsig_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_ENV, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn helper");
    let stdout = helper.stdout.take().expect("piped stdout");
    let line = std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // libtest prints "test pdeathsig_helper ... " before the marker.
        .find_map(|l| Some(l.split_once("KVBENCH_HELPER ")?.1.to_string()));
    helper.kill().expect("SIGKILL the helper");
    helper.wait().expect("reap the helper");
    let line = line.expect("helper started a server");
    let mut words = line.split_whitespace();
    let pid: u32 = words.next().and_then(|p| p.parse().ok()).expect("pid");
    let dir = PathBuf::from(words.next().expect("dir"));

    // The orphan is re-parented; dead but not yet reaped by init counts as dead.
    let dead = |pid: u32| match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !dead(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let died = dead(pid);
    if !died {
        // SAFETY: we just checked it is the orphaned server; do not leak it.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    // A SIGKILLed kvbench cannot remove its temporary directory; clean it here.
    let _ = std::fs::remove_dir_all(&dir);
    assert!(died, "server pid {pid} survived the death of kvbench");
}

#[test]
fn server_can_be_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Server>();
    send_sync::<ServerError>();
}

/// Issue 32: a server of the Redis family is one entry in the model's
/// system list and one in servers' family table. KeyDB's entry runs any
/// RESP binary it is given; what the binary says it is stays its own.
#[test]
fn a_redis_family_sibling_runs_the_binary_it_is_given() {
    let redis = find_binary(SystemKind::Redis, None).expect("redis-server");
    let server = Server::start(&ServerSpec {
        binary: Some(redis.clone()),
        ..ServerSpec::new(SystemKind::Keydb)
    })
    .expect("keydb's entry starts redis-server");
    assert_eq!(
        (server.system(), server.binary()),
        (SystemKind::Keydb, redis.as_path())
    );
    let v = server.version().expect("INFO");
    assert_eq!(v.name.as_deref(), Some("redis"), "{v:?}");
    let reply = redis_pipeline(server.addr(), &[vec![b"PING".to_vec()]]);
    assert_eq!(reply, vec![resp::Value::Status("PONG".into())]);
    server.stop().expect("clean stop");
    if std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("keydb-server").exists()))
    {
        return;
    }
    let e = find_binary(SystemKind::Keydb, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("keydb-server not found") && e.contains("--server-bin"),
        "{e}"
    );
}
