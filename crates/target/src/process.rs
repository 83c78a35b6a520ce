//! A server child process that is always stopped.
//!
//! The server runs in the foreground as kvbench's child (never daemonized: a
//! daemon is re-parented and escapes every guard), in its own process group
//! (a Ctrl-C in the terminal reaches kvbench, which then stops the server in
//! order instead of the server dying mid-probe), and with
//! `PR_SET_PDEATHSIG = SIGKILL` so that it dies even if kvbench is killed
//! outright. The parent-death signal fires when the *thread* that spawned the
//! server exits, so spawn from a thread that outlives the server (the main
//! thread, or a test's own thread).

use crate::TargetError;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// How long a server gets to exit after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// A running server process; dropping it stops the process and removes its
/// temporary directory.
#[derive(Debug)]
pub struct ServerProcess {
    child: Option<Child>,
    pid: u32,
    binary: PathBuf,
    log: PathBuf,
    // Declared last so the directory outlives the process that writes in it.
    dir: TempDir,
}

impl ServerProcess {
    /// Starts `binary args` with output to `server.log` in `dir`.
    ///
    /// # Errors
    /// [`TargetError::Io`] when the log cannot be created or the process spawned.
    pub fn spawn(
        binary: &Path,
        args: &[String],
        dir: TempDir,
    ) -> Result<ServerProcess, TargetError> {
        let log = dir.path().join("server.log");
        let io = |what: &str| {
            let what = what.to_string();
            move |source| TargetError::Io { what, source }
        };
        let out = File::create(&log).map_err(io("cannot create the server log"))?;
        let err = out
            .try_clone()
            .map_err(io("cannot create the server log"))?;
        let mut cmd = Command::new(binary);
        cmd.args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: only async-signal-safe calls (setpgid, prctl, getppid)
        // between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::setpgid(0, 0);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                // The parent may have died before prctl took effect.
                if libc::getppid() == 1 {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(io(&format!("cannot start {}", binary.display())))?;
        Ok(ServerProcess {
            pid: child.id(),
            child: Some(child),
            binary: binary.to_path_buf(),
            log,
            dir,
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The binary that was started.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The private temporary directory the server runs in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `Some(status)` once the process has exited (it is then reaped).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// The last `n` lines of the server's output, for error messages.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..].join(" | ")
    }

    /// Stops the server: SIGTERM, then SIGKILL after a grace period, and
    /// reaps it so no zombie is left. Stopping twice is harmless.
    ///
    /// # Errors
    /// [`TargetError::Io`] when the process cannot be waited for.
    pub fn stop(&mut self) -> Result<(), TargetError> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if child.try_wait().ok().flatten().is_some() {
            return Ok(());
        }
        // SAFETY: kill(2) on our own child's pid, which is not yet reaped and
        // so cannot have been reused.
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        child.wait().map(|_| ()).map_err(|source| TargetError::Io {
            what: format!("cannot reap server {}", self.pid),
            source,
        })
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
