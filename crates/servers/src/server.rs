//! The [`Server`] guard: starts a private server, waits until it answers,
//! probes it, and stops it (explicitly or on drop).
//!
//! It must not trust an answer it cannot attribute: every query checks that
//! the pid the server reports is the pid of the child it started, so a stray
//! process on a recycled port can never be measured by mistake.

use crate::ports::{self, Attempt};
use crate::process::{log_tail, Ending, ProcessGuard};
use crate::system::{Peer, Role};
use crate::{find_binary, probe, system, Host, ServerError, ServerSpec};
use kvbench_model::{Probe, Setting, SystemKind};
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// How long a server gets to answer after it was spawned.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
const READY_POLL: Duration = Duration::from_millis(20);
/// Per-query timeout while waiting for readiness (the loop retries).
const READY_QUERY_TIMEOUT: Duration = Duration::from_millis(500);
/// Per-query timeout for probes; a server this slow to answer INFO is not in a
/// state worth measuring anyway.
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest a read at a window's edge waits (the latency split's
/// counters): a server answers `INFO` in well under a millisecond.
const EDGE_TIMEOUT: Duration = Duration::from_millis(250);
/// Log lines quoted in error messages.
const LOG_TAIL_LINES: usize = 20;

/// The server's own account of what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVersion {
    /// What it calls itself: `redis`, `valkey` (INFO `server_name`, or a
    /// `valkey_version` field), `memcached`.
    pub name: Option<String>,
    /// `valkey_version` or `redis_version` / Memcached `version`.
    pub version: String,
    /// Redis `mem_allocator` (`jemalloc-5.3.0`, `libc`); `None` for Memcached.
    pub allocator: Option<String>,
}

impl ServerVersion {
    pub(crate) fn from_snapshot(snap: system::Snapshot) -> Result<ServerVersion, String> {
        let version = snap
            .version
            .filter(|v| !v.is_empty())
            .ok_or_else(|| "the server did not report its version".to_string())?;
        Ok(ServerVersion {
            name: snap.name,
            version,
            allocator: snap.allocator,
        })
    }
}

/// A running private server. Dropping it stops the process (SIGTERM, then
/// SIGKILL after 3 s), reaps it, and removes its temporary directory; the
/// process is also killed by the kernel if kvbench dies.
pub struct Server {
    system: SystemKind,
    binary: PathBuf,
    addr: SocketAddr,
    settings: Vec<Setting>,
    log_path: PathBuf,
    dir_path: PathBuf,
    process: ProcessGuard,
    /// The command line, to start it again in place ([`Server::restart`]).
    args: Vec<String>,
    /// Its network namespace, open, for the same reason.
    netns: Option<std::fs::File>,
    /// Removed after the process has stopped (`Drop` runs before fields drop).
    dir: Option<TempDir>,
}

impl Server {
    /// Starts a private server and returns once it answers (at most 5 s).
    ///
    /// On failure nothing is left behind: the process is stopped, the
    /// temporary directory removed, and the error quotes the server's log.
    pub fn start(spec: &ServerSpec) -> Result<Server, ServerError> {
        Self::start_on(spec, &Host::loopback())
    }

    /// [`Server::start`] on `host`: in its network namespace, bound to its
    /// address.
    ///
    /// # Errors
    /// As [`Server::start`], or the namespace cannot be opened.
    pub fn start_on(spec: &ServerSpec, host: &Host) -> Result<Server, ServerError> {
        Self::start_as(spec, Role::Single, host)
    }

    /// [`Server::start_on`] for a server with a `role`.
    pub(crate) fn start_as(
        spec: &ServerSpec,
        role: Role,
        host: &Host,
    ) -> Result<Server, ServerError> {
        let binary = find_binary(spec.system, spec.binary.as_deref())?;
        // Refuse bad extra arguments before spawning anything.
        system::user_settings(spec.system, &spec.extra_args)?;
        ports::retry_taken(|| Self::start_once(spec, role, host, &binary))
    }

    fn start_once(
        spec: &ServerSpec,
        role: Role,
        host: &Host,
        binary: &Path,
    ) -> Result<Server, Attempt> {
        let io = |what: String| {
            move |source: std::io::Error| Attempt::Failed(ServerError::Io { what, source })
        };
        // Free on loopback, so also in a fresh namespace, where nothing listens.
        let port = ports::free_loopback_port().map_err(io("pick a free loopback port".into()))?;
        let netns = host.open_netns().map_err(Attempt::Failed)?;
        let dir = crate::workdir::create(&spec.system.to_string())
            .map_err(io("create a temporary directory".into()))?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let as_root = unsafe { libc::geteuid() } == 0;
        let addr = SocketAddr::from((host.ip(), port));
        let launch =
            system::launch(spec, role, addr, dir.path(), as_root).map_err(Attempt::Failed)?;
        let log_path = dir.path().join("server.log");
        let process =
            ProcessGuard::spawn(binary, &launch.args, dir.path(), &log_path, netns.as_ref())
                .map_err(io(format!("start {}", binary.display())))?;
        let server = Server {
            system: spec.system,
            binary: binary.to_path_buf(),
            addr,
            settings: launch.settings,
            log_path,
            dir_path: dir.path().to_path_buf(),
            process,
            args: launch.args,
            netns,
            dir: Some(dir),
        };
        // On error `server` drops here: stopped, reaped, directory removed.
        server.wait_ready()?;
        Ok(server)
    }

    /// Polls until the server answers *as our child* (the pid it reports is
    /// the one we spawned), it exits, or [`READY_TIMEOUT`] passes.
    fn wait_ready(&self) -> Result<(), Attempt> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut last: String;
        loop {
            if let Some(status) = self.process.exit_status() {
                let log_tail = self.log_tail();
                let port_taken = log_tail
                    .to_ascii_lowercase()
                    .contains("address already in use");
                let err = ServerError::StartFailed {
                    system: self.system,
                    reason: format!("it exited during start-up ({status})"),
                    log_tail,
                };
                return Err(Attempt::of(err, port_taken));
            }
            match system::identify(self.system, Peer::plain(self.addr), READY_QUERY_TIMEOUT) {
                Ok(pid) if pid == self.pid() => return Ok(()),
                // Our child will fail to bind and exit; the next loop sees it.
                Ok(pid) => {
                    last = format!("{} is answered by another process (pid {pid})", self.addr)
                }
                Err(e) => last = e,
            }
            if Instant::now() >= deadline {
                return Err(Attempt::Failed(ServerError::StartFailed {
                    system: self.system,
                    reason: format!(
                        "no answer on {} within {} s (last attempt: {last})",
                        self.addr,
                        READY_TIMEOUT.as_secs()
                    ),
                    log_tail: self.log_tail(),
                }));
            }
            std::thread::sleep(READY_POLL);
        }
    }

    /// Stops the server as an operator restarting it would (Redis saves
    /// its data and exits, `SHUTDOWN SAVE`; other systems get SIGTERM),
    /// waits `down`, and starts it again in place: same binary, command
    /// line, port, directory (so a Redis reloads what it saved) and
    /// namespace. Returns once it answers as our child again.
    ///
    /// # Errors
    /// When it does not stop, or does not come back.
    pub fn restart(&self, down: Duration) -> Result<(), ServerError> {
        self.ensure_running()?;
        if !system::of(self.system).stop_saving(Peer::plain(self.addr), QUERY_TIMEOUT) {
            self.process.signal_running(libc::SIGTERM);
        }
        self.process.wait_exit(crate::process::TERM_GRACE);
        std::thread::sleep(down);
        let io = |what: &str| {
            let what = format!("{what} {} again", self.binary.display());
            move |source| ServerError::Io { what, source }
        };
        let command = crate::process::server_command(
            &self.binary,
            &self.args,
            &self.dir_path,
            &self.log_path,
        )
        .map_err(io("prepare"))?;
        self.process
            .respawn(command, self.netns.as_ref())
            .map_err(io("start"))?;
        self.wait_ready().map_err(|a| match a {
            Attempt::PortTaken(e) | Attempt::Failed(e) => e,
        })
    }

    /// Stops the process for `pause` (SIGSTOP, then SIGCONT): it holds its
    /// connections and answers nothing meanwhile, as a server stalled by
    /// its host does.
    ///
    /// # Errors
    /// When the process has exited.
    pub fn pause(&self, pause: Duration) -> Result<(), ServerError> {
        if !self.process.signal_running(libc::SIGSTOP) {
            return self.ensure_running();
        }
        std::thread::sleep(pause);
        self.process.signal_running(libc::SIGCONT);
        Ok(())
    }

    /// Kills the process outright (SIGKILL), as a crash would; it stays
    /// down (reported by [`Server::exited`]).
    ///
    /// # Errors
    /// When the process had already exited.
    pub fn kill(&self) -> Result<(), ServerError> {
        if self.process.signal_running(libc::SIGKILL) {
            self.process.wait_exit(crate::process::TERM_GRACE);
            return Ok(());
        }
        self.ensure_running()
    }

    /// The address the server listens on (loopback, or its namespace's).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Which server this is.
    pub fn system(&self) -> SystemKind {
        self.system
    }

    /// The binary that was started.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// Every setting that differs from the server's defaults, with the reason.
    pub fn settings(&self) -> &[Setting] {
        &self.settings
    }

    /// The server's private temporary directory (its working directory; holds
    /// the log). Removed when the server stops.
    pub fn dir(&self) -> &Path {
        &self.dir_path
    }

    /// The file that receives the server's stdout and stderr.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// How the process ended, when it has (crash, or killed from outside);
    /// `None` while it runs.
    pub fn exited(&self) -> Option<String> {
        self.process.exit_status().map(|s| s.to_string())
    }

    /// The server's CPU seconds so far (user + system, all threads), from one
    /// `/proc` read and no request, for bracketing a measured window. 10 ms
    /// resolution (clock ticks). `None` once the process has exited.
    pub fn cpu_seconds(&self) -> Option<f64> {
        self.cpu_times().map(|t| t.user_s + t.system_s)
    }

    /// As [`Server::cpu_seconds`], split into user and system time: how
    /// much of the server's work was the kernel's (its network stack).
    pub fn cpu_times(&self) -> Option<probe::CpuTimes> {
        // Checked first: after the child is reaped its pid may belong to
        // someone else.
        if self.process.exit_status().is_some() {
            return None;
        }
        probe::cpu_times(self.pid()).ok()
    }

    /// A snapshot of the server's resource use. RSS and CPU time come from
    /// `/proc` (CPU in 10 ms ticks, all threads) and are read first, so the
    /// probe query's own cost lands after them; memory, items and evictions
    /// come from the server (Redis `INFO`: `used_memory`, `db0` keys,
    /// `evicted_keys`; Memcached `stats`: `bytes`, `curr_items`, `evictions`).
    /// A field that cannot be read is `None`; a server that does not answer,
    /// or is not our child, is an error.
    pub fn probe(&self, stage: &str) -> Result<Probe, ServerError> {
        self.ensure_running()?;
        let rss_bytes = probe::rss_bytes(self.pid()).ok();
        let cpu_seconds = probe::cpu_seconds(self.pid()).ok();
        let snap = system::of(self.system)
            .snapshot(Peer::plain(self.addr), QUERY_TIMEOUT)
            .map_err(|m| self.query_failed(m))?;
        self.check_pid(snap.pid)?;
        Ok(snap.probe(stage, rss_bytes, cpu_seconds))
    }

    /// What the server says it is: name, version and (Redis family) memory
    /// allocator.
    pub fn version(&self) -> Result<ServerVersion, ServerError> {
        let snap = system::of(self.system)
            .snapshot(Peer::plain(self.addr), QUERY_TIMEOUT)
            .map_err(|m| self.query_failed(m))?;
        self.check_pid(snap.pid)?;
        ServerVersion::from_snapshot(snap).map_err(|m| self.query_failed(m))
    }

    /// Per-command counters from the server, to cross-check the client's
    /// counts. Redis: `calls` of every command in `INFO commandstats`
    /// (`("hgetall", 3)`; the probes' own `info` calls are included).
    /// Memcached: `cmd_get`, `cmd_set`, `get_hits`, `get_misses` from `stats`.
    pub fn command_stats(&self) -> Result<Vec<(String, u64)>, ServerError> {
        let (pid, stats) = system::of(self.system)
            .command_stats(Peer::plain(self.addr), QUERY_TIMEOUT)
            .map_err(|m| self.query_failed(m))?;
        self.check_pid(pid)?;
        Ok(stats)
    }

    /// Every command's calls, execution time and latency histogram since
    /// the server started (`None`: the system keeps none, as memcached).
    /// Read at a window's edges, so it waits [`EDGE_TIMEOUT`] at most: a
    /// stalled server leaves the split unknown rather than the run late.
    ///
    /// # Errors
    /// When the server does not answer in time.
    pub fn command_times(&self) -> Result<Option<kvbench_model::CommandTimes>, ServerError> {
        system::of(self.system)
            .command_times(Peer::plain(self.addr), EDGE_TIMEOUT)
            .map_err(|m| self.query_failed(m))
    }

    /// Everything the server reports about itself, as key/value pairs: Redis
    /// `INFO all`; Memcached `stats` plus `stats settings` (keys prefixed
    /// `settings.`, e.g. `settings.maxbytes`).
    pub fn info(&self) -> Result<BTreeMap<String, String>, ServerError> {
        let sys = system::of(self.system);
        let map = sys
            .info(Peer::plain(self.addr), QUERY_TIMEOUT)
            .map_err(|m| self.query_failed(m))?;
        self.check_pid(map.get(sys.pid_key()).and_then(|p| p.parse().ok()))?;
        Ok(map)
    }

    /// Stops the server and removes its directory, reporting anything unclean:
    /// it had already exited (so later measurements are suspect), it needed
    /// SIGKILL, it exited with a failure status, or the directory could not be
    /// removed. The process is stopped and reaped in every case.
    pub fn stop(mut self) -> Result<(), ServerError> {
        let ending = self.process.shutdown();
        // Read before the directory (which holds the log) goes away.
        let tail = match ending {
            Ending::Terminated(s) if clean_exit(s) => String::new(),
            _ => self.log_tail(),
        };
        let removed = self.dir.take().map_or(Ok(()), TempDir::close);
        let stop_err = |message: String| ServerError::Stop {
            system: self.system,
            pid: self.pid(),
            message: format!("{message}\n--- last lines of the server log ---\n{tail}"),
        };
        match ending {
            Ending::Terminated(s) if clean_exit(s) => {}
            Ending::Terminated(s) => {
                return Err(stop_err(format!("it exited with {s} after SIGTERM")))
            }
            Ending::ExitedBefore(s) => {
                return Err(stop_err(format!(
                    "it had already exited ({s}) before it was asked to stop"
                )))
            }
            Ending::Killed(s) => {
                return Err(stop_err(format!(
                    "it ignored SIGTERM for {} s and was killed with SIGKILL ({s})",
                    crate::process::TERM_GRACE.as_secs()
                )))
            }
            Ending::WaitFailed => {
                return Err(stop_err(
                    "waiting for it failed (reaped elsewhere?)".to_string(),
                ))
            }
        }
        removed.map_err(|source| ServerError::Io {
            what: format!("remove temporary directory {}", self.dir_path.display()),
            source,
        })
    }

    fn ensure_running(&self) -> Result<(), ServerError> {
        match self.process.exit_status() {
            Some(status) => Err(self.exited_error(status.to_string())),
            None => Ok(()),
        }
    }

    fn exited_error(&self, status: String) -> ServerError {
        ServerError::Exited {
            system: self.system,
            pid: self.pid(),
            status,
            log_tail: self.log_tail(),
        }
    }

    /// A failed query, explained by the process's death when that is the cause.
    fn query_failed(&self, message: String) -> ServerError {
        match self.process.exit_status() {
            Some(status) => self.exited_error(status.to_string()),
            None => ServerError::Query {
                system: self.system,
                addr: self.addr,
                message,
            },
        }
    }

    fn check_pid(&self, reported: Option<u32>) -> Result<(), ServerError> {
        match reported {
            Some(pid) if pid == self.pid() => Ok(()),
            Some(pid) => Err(self.query_failed(format!(
                "answered by pid {pid}, not by the server under test (pid {})",
                self.pid()
            ))),
            None => Err(self.query_failed("the server did not report its pid".to_string())),
        }
    }

    fn log_tail(&self) -> String {
        log_tail(&self.log_path, LOG_TAIL_LINES)
    }
}

/// Exit 0, or death by the SIGTERM we sent (servers without a handler).
fn clean_exit(status: std::process::ExitStatus) -> bool {
    status.success() || status.signal() == Some(libc::SIGTERM)
}

impl Drop for Server {
    fn drop(&mut self) {
        // Stop before `dir` (a field) is dropped and removed.
        self.process.shutdown();
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("system", &self.system)
            .field("addr", &self.addr)
            .field("pid", &self.pid())
            .field("binary", &self.binary)
            .field("dir", &self.dir_path)
            .finish()
    }
}
