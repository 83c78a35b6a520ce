//! Test support: a throwaway PostgreSQL server, started by the test process
//! as its own child, so that the PostgreSQL backend is tested against the
//! real thing. Built for this crate's tests, and for other crates' tests
//! with the `test-support` feature:
//!
//! ```toml
//! [dev-dependencies]
//! kvbench-store = { workspace = true, features = ["test-support"] }
//! ```
//!
//! [`database`] gives each test a fresh, empty database on a server shared
//! by the tests that run at the same time; the server stops when the last
//! of them drops its [`TestDatabase`] (also when a test panics), and if the
//! test process dies, a watchdog shell stops it too.
//!
//! The server binaries (`initdb`, `postgres`) are taken from `PATH`, else
//! from the newest `/usr/lib/postgresql/*/bin`. Without them the tests fail,
//! saying to run `scripts/setup`, which installs them: a skipped backend
//! would look like a tested one. As root (initdb refuses root) the server
//! runs as the user `nobody`.

use crate::Location;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The superuser of the test cluster (trust authentication, loopback only).
pub const USER: &str = "kvbench";

/// How long the server may take to accept connections.
const START_WAIT: Duration = Duration::from_secs(60);

/// How long it may take to shut down before it is killed.
const STOP_WAIT: Duration = Duration::from_secs(30);

/// A PostgreSQL server in a temporary directory, listening on 127.0.0.1 at
/// a free port. Dropping it stops the server (fast shutdown: clients are
/// disconnected) and removes the directory.
#[derive(Debug)]
pub struct PgServer {
    dir: PathBuf,
    port: u16,
    /// The watchdog shell: it runs `postgres` and stops it when its stdin
    /// (this pipe) closes, which is also what happens when we die.
    child: Child,
    watchdog: Option<ChildStdin>,
}

/// A fresh database on a running [`PgServer`], which stays up while this
/// lives.
#[derive(Debug)]
pub struct TestDatabase {
    server: Arc<PgServer>,
    location: Location,
}

impl TestDatabase {
    /// The database, for [`crate::Store::open_location`].
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The server it lives on.
    pub fn server(&self) -> &PgServer {
        &self.server
    }
}

/// A fresh, empty database on the shared test server, started if no test
/// holds it. Panics (with the server's log) when it cannot be started.
pub fn database() -> TestDatabase {
    let server = shared();
    let location = server.create_database();
    TestDatabase { server, location }
}

/// The test server that the running tests share, started when none is up.
pub fn shared() -> Arc<PgServer> {
    static SHARED: Mutex<Weak<PgServer>> = Mutex::new(Weak::new());
    let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(server) = slot.upgrade() {
        return server;
    }
    let server = Arc::new(PgServer::start());
    *slot = Arc::downgrade(&server);
    server
}

/// `initdb` and `postgres`: on `PATH`, else in the newest
/// `/usr/lib/postgresql/*/bin`.
///
/// # Errors
/// A message saying what to install when they are not found.
pub fn binaries() -> Result<(PathBuf, PathBuf), String> {
    find_binaries(
        std::env::var_os("PATH").as_deref(),
        Path::new("/usr/lib/postgresql"),
    )
}

/// [`binaries`] with the search path and Debian's versions directory given.
fn find_binaries(
    path: Option<&std::ffi::OsStr>,
    versions_dir: &Path,
) -> Result<(PathBuf, PathBuf), String> {
    let on_path = |name: &str| {
        path.and_then(|path| {
            std::env::split_paths(path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    };
    if let (Some(initdb), Some(postgres)) = (on_path("initdb"), on_path("postgres")) {
        return Ok((initdb, postgres));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(versions_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("postgres").is_file())
                .then_some((version, bin))
        })
        .collect();
    versions.sort();
    match versions.pop() {
        Some((_, bin)) => Ok((bin.join("initdb"), bin.join("postgres"))),
        None => Err(format!(
            "PostgreSQL server binaries not found: no initdb and postgres on PATH nor in \
             {}/*/bin. Run scripts/setup, which installs Debian's postgresql-15 (CI does), \
             or put them on PATH.",
            versions_dir.display()
        )),
    }
}

/// The uid and gid to run the server as when we are root: `nobody`'s.
fn unprivileged() -> Option<(u32, u32)> {
    let root = std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false);
    if !root {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let ids = passwd.lines().find_map(|line| {
        let f: Vec<&str> = line.split(':').collect();
        (f.first() == Some(&"nobody") && f.len() > 3)
            .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
            .flatten()
    });
    Some(ids.unwrap_or((65_534, 65_534)))
}

fn as_user(cmd: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        // std drops supplementary groups too when it changes the uid.
        cmd.uid(uid).gid(gid);
    }
    cmd
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free TCP port on 127.0.0.1")
}

fn read_log(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut f) = File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    text
}

/// A new, empty directory for the cluster, usable by `user`.
fn make_dir(user: Option<(u32, u32)>) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    // /tmp, not $TMPDIR: nobody must be able to reach it.
    let base = if user.is_some() {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    };
    remove_stale(&base);
    let dir = base.join(format!(
        "kvbench-pg-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
            .unwrap_or_else(|e| panic!("cannot chown {} to {uid}: {e}", dir.display()));
    }
    dir
}

/// Removes the directories of test processes that died without cleaning
/// up (their watchdogs already stopped the servers).
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("kvbench-pg-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = |pid: &str| Path::new("/proc").join(pid.trim()).exists();
        let postmaster = std::fs::read_to_string(entry.path().join("data/postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().map(str::to_string));
        if !alive(&pid.to_string()) && !postmaster.is_some_and(|p| alive(&p)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl PgServer {
    /// Initialises a cluster in a new temporary directory and starts it;
    /// panics with a clear message (and the server's log) when it cannot.
    pub fn start() -> PgServer {
        let (initdb, postgres) = binaries().unwrap_or_else(|e| panic!("{e}"));
        let user = unprivileged();
        let dir = make_dir(user);
        let data = dir.join("data");
        let out = as_user(&mut Command::new(&initdb), user)
            .current_dir(&dir)
            .args([
                "-A",
                "trust",
                "-U",
                USER,
                "--no-sync",
                "--no-locale",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(&data)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", initdb.display()));
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            panic!(
                "{} failed ({}):\n{}{}",
                initdb.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // A port found free may be taken before postgres binds it: try again.
        let mut last_log = String::new();
        for _ in 0..3 {
            match PgServer::launch(&postgres, &dir, &data, user) {
                Ok(server) => return server,
                Err(log) => last_log = log,
            }
            if !last_log.contains("could not bind") && !last_log.contains("in use") {
                break;
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        panic!(
            "PostgreSQL ({}) did not start; its log:\n{last_log}",
            postgres.display()
        );
    }

    /// Starts `postgres` under the watchdog shell and waits until it
    /// accepts connections; on failure stops it and returns its log.
    fn launch(
        postgres: &Path,
        dir: &Path,
        data: &Path,
        user: Option<(u32, u32)>,
    ) -> Result<PgServer, String> {
        let port = free_port();
        let log_path = dir.join("postgres.log");
        let log = File::create(&log_path).map_err(|e| format!("cannot create log: {e}"))?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        // fd 3 keeps the pipe for the watcher: an asynchronous list's stdin
        // is /dev/null. When the pipe closes (we dropped it, or died), the
        // watcher stops the server; the shell exits when the server does.
        let script = r#"exec 3<&0
"$@" 3<&- </dev/null &
pid=$!
(read _ <&3; kill -INT "$pid" 2>/dev/null) &
wait "$pid""#;
        let child = as_user(&mut Command::new("/bin/sh"), user)
            .current_dir(dir)
            .arg("-c")
            .arg(script)
            .arg("kvbench-pg-watchdog")
            .arg(postgres)
            .arg("-D")
            .arg(data)
            .arg("-k")
            .arg(dir)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-p",
                &port.to_string(),
                "-F",
            ])
            .stdin(Stdio::piped())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", postgres.display()))?;
        let mut server = PgServer {
            dir: dir.to_path_buf(),
            port,
            watchdog: None,
            child,
        };
        server.watchdog = server.child.stdin.take();
        let started = Instant::now();
        loop {
            if server.connect("postgres").is_ok() {
                return Ok(server);
            }
            let exited = matches!(server.child.try_wait(), Ok(Some(_)));
            if exited || started.elapsed() > START_WAIT {
                server.stop();
                let mut text = read_log(&log_path);
                if !exited {
                    text.push_str(&format!(
                        "\n(not accepting connections after {} s)",
                        START_WAIT.as_secs()
                    ));
                }
                // The directory is still needed by another attempt.
                std::mem::forget(server);
                return Err(text);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The port it listens on, at 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` on this server, as user [`USER`].
    pub fn url(&self, name: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{name}", self.port)
    }

    /// A client connected to database `name`.
    ///
    /// # Errors
    /// As `postgres::Client::connect`.
    pub fn connect(&self, name: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Client::connect(&self.url(name), postgres::NoTls)
    }

    /// Creates a new, empty database and returns where it is.
    pub fn create_database(&self) -> Location {
        static N: AtomicU64 = AtomicU64::new(0);
        static CREATING: Mutex<()> = Mutex::new(());
        let name = format!("kvbench_test_{}", N.fetch_add(1, Ordering::Relaxed));
        let _one_at_a_time = CREATING.lock().unwrap_or_else(|p| p.into_inner());
        let mut client = self
            .connect("postgres")
            .unwrap_or_else(|e| panic!("cannot connect to the test server: {e}"));
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
        Location::parse(&self.url(&name)).expect("the test server's URL is valid")
    }

    /// Stops the server: closes the watchdog's pipe (a fast shutdown),
    /// waits, and kills what is left after [`STOP_WAIT`].
    fn stop(&mut self) {
        drop(self.watchdog.take());
        let started = Instant::now();
        while started.elapsed() < STOP_WAIT {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The postmaster's pid is the first line of postmaster.pid.
        let pid = std::fs::read_to_string(self.dir.join("data").join("postmaster.pid"))
            .ok()
            .and_then(|t| t.lines().next().map(str::to_string));
        if let Some(pid) = pid {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::io::stderr().flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_binaries_say_to_run_setup() {
        let empty = std::env::temp_dir().join("kvbench-no-such-dir");
        let err = find_binaries(Some(empty.as_os_str()), &empty).unwrap_err();
        assert!(
            err.contains("run scripts/setup") || err.contains("Run scripts/setup"),
            "{err}"
        );
        assert!(err.contains("initdb"), "{err}");
    }

    #[test]
    fn the_newest_debian_version_is_chosen_after_path() {
        let dir = std::env::temp_dir().join(format!("kvbench-pgbins-{}", std::process::id()));
        for v in ["9", "15", "13"] {
            let bin = dir.join(v).join("bin");
            std::fs::create_dir_all(&bin).expect("creates");
            for name in ["initdb", "postgres"] {
                std::fs::write(bin.join(name), "").expect("writes");
            }
        }
        let found = find_binaries(None, &dir).expect("finds");
        assert_eq!(found.0, dir.join("15/bin/initdb"));
        let on_path = find_binaries(Some(dir.join("9/bin").as_os_str()), &dir).expect("finds");
        assert_eq!(on_path.1, dir.join("9/bin/postgres"));
        std::fs::remove_dir_all(&dir).expect("removes");
    }
}
