//! The servers kvbench can start, behind one [`Server`] type.

mod memcached;
mod redis;

use crate::ports::free_port;
use crate::process::ServerProcess;
use crate::TargetError;
use kvbench_model::{Probe, Setting, SystemKind};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a server gets to answer its first request.
const READY_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts at start, for the rare port taken between our probe and the bind.
const START_ATTEMPTS: usize = 3;

/// What to start.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Which server.
    pub system: SystemKind,
    /// Binary to run; found on PATH when `None`.
    pub binary: Option<PathBuf>,
    /// Memory limit in MB, where the server has one (Memcached `-m`); `None` keeps the default.
    pub memory_limit_mb: Option<u64>,
    /// Further arguments, recorded as settings with reason "user".
    pub extra_args: Vec<String>,
}

/// A server's own account of its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVersion {
    /// Version string (`7.0.15`, `1.6.18`).
    pub version: String,
    /// Memory allocator, when the server reports it (Redis `mem_allocator`).
    pub allocator: Option<String>,
}

/// A started server. Dropping it stops the process.
#[derive(Debug)]
pub struct Server {
    system: SystemKind,
    addr: SocketAddr,
    settings: Vec<Setting>,
    process: ServerProcess,
}

/// Finds the server binary: the explicit path, or the system's binary on PATH.
///
/// # Errors
/// [`TargetError::BinaryNotFound`] naming the package to install, or
/// [`TargetError::NoSuchBinary`] for an explicit path that does not exist.
pub fn find_binary(system: SystemKind, explicit: Option<&Path>) -> Result<PathBuf, TargetError> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(TargetError::NoSuchBinary(p.to_path_buf()))
        };
    }
    let (binary, package) = match system {
        SystemKind::Redis => ("redis-server", "redis-server"),
        SystemKind::Memcached => ("memcached", "memcached"),
    };
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(binary))
        .find(|p| p.is_file())
        .ok_or_else(|| TargetError::BinaryNotFound {
            binary: binary.into(),
            package: package.into(),
        })
}

impl Server {
    /// Starts a private server on a free loopback port and waits until it answers.
    ///
    /// # Errors
    /// [`TargetError`] when the binary is missing or the server does not come up
    /// (the message carries the tail of its log).
    pub fn start(spec: &ServerSpec) -> Result<Server, TargetError> {
        let binary = find_binary(spec.system, spec.binary.as_deref())?;
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            match Server::start_once(spec, &binary) {
                Ok(s) => return Ok(s),
                Err(e) if e.to_string().contains("in use") => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| TargetError::Start {
            binary: binary.display().to_string(),
            reason: "no free port".into(),
            log: String::new(),
        }))
    }

    fn start_once(spec: &ServerSpec, binary: &Path) -> Result<Server, TargetError> {
        let io = |what: &str| {
            let what = what.to_string();
            move |source| TargetError::Io { what, source }
        };
        let port = free_port().map_err(io("cannot find a free port"))?;
        let dir = tempfile::Builder::new()
            .prefix("kvbench-server-")
            .tempdir()
            .map_err(io("cannot create a temporary directory"))?;
        let (mut args, mut settings) = match spec.system {
            SystemKind::Redis => redis::args(port, dir.path()),
            SystemKind::Memcached => memcached::args(port, spec.memory_limit_mb),
        };
        for a in &spec.extra_args {
            args.push(a.clone());
            settings.push(Setting {
                name: a.clone(),
                value: String::new(),
                reason: "user".into(),
            });
        }
        let process = ServerProcess::spawn(binary, &args, dir)?;
        let mut server = Server {
            system: spec.system,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            settings,
            process,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), TargetError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.process.exited() {
                return Err(self.start_error(format!("exited at start ({status})")));
            }
            if self.ping().is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self.start_error(format!(
                    "no answer on {} within {READY_TIMEOUT:?}",
                    self.addr
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn start_error(&self, reason: String) -> TargetError {
        let tail = self.process.log_tail(3);
        TargetError::Start {
            binary: self.process.binary().display().to_string(),
            reason,
            log: if tail.is_empty() {
                String::new()
            } else {
                format!("; its log ends: {tail}")
            },
        }
    }

    fn ping(&self) -> Result<(), TargetError> {
        match self.system {
            SystemKind::Redis => redis::ping(self.addr),
            SystemKind::Memcached => memcached::version(self.addr).map(|_| ()),
        }
    }

    /// The server's address (always on 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Which server this is.
    pub fn system(&self) -> SystemKind {
        self.system
    }

    /// The binary that runs.
    pub fn binary(&self) -> &Path {
        self.process.binary()
    }

    /// Every setting that differs from the server's defaults, with the reason.
    pub fn settings(&self) -> &[Setting] {
        &self.settings
    }

    /// The server's CPU seconds so far (cheap: one `/proc` read, no request),
    /// for bracketing a measured window.
    pub fn cpu_seconds(&self) -> Option<f64> {
        crate::proc::cpu_seconds(self.pid())
    }

    /// Memory, items, evictions and CPU time now, labelled `stage`.
    ///
    /// # Errors
    /// [`TargetError::Probe`] when the server does not answer (e.g. it died).
    pub fn probe(&self, stage: &str) -> Result<Probe, TargetError> {
        let mut p = match self.system {
            SystemKind::Redis => redis::probe(self.addr)?,
            SystemKind::Memcached => memcached::probe(self.addr)?,
        };
        p.stage = stage.to_string();
        p.rss_bytes = crate::proc::rss_bytes(self.pid());
        p.cpu_seconds = crate::proc::cpu_seconds(self.pid());
        Ok(p)
    }

    /// Version and allocator as the server reports them.
    ///
    /// # Errors
    /// [`TargetError::Probe`] when the server does not answer.
    pub fn version(&self) -> Result<ServerVersion, TargetError> {
        match self.system {
            SystemKind::Redis => redis::version(self.addr),
            SystemKind::Memcached => memcached::version(self.addr),
        }
    }

    /// The server's own command counters: Redis `INFO commandstats` calls per
    /// command (`hgetall`, `hmset`, ...); Memcached `cmd_get`, `cmd_set`,
    /// `get_hits`, `get_misses`. Tests use them to check kvbench's counts.
    ///
    /// # Errors
    /// [`TargetError::Probe`] when the server does not answer.
    pub fn command_stats(&self) -> Result<Vec<(String, u64)>, TargetError> {
        match self.system {
            SystemKind::Redis => redis::command_stats(self.addr),
            SystemKind::Memcached => memcached::command_stats(self.addr),
        }
    }

    /// Stops the server and removes its directory.
    ///
    /// # Errors
    /// [`TargetError::Io`] when the process cannot be reaped.
    pub fn stop(mut self) -> Result<(), TargetError> {
        self.process.stop()
    }
}
