//! Spawns a server process (or any long-lived child, such as the Spark
//! job of a scaled-out run) and guarantees it ends: the child is in its own
//! process group, dies with kvbench (`PR_SET_PDEATHSIG`), and is always reaped.
//!
//! It must not know any server's arguments or protocol, and must never signal
//! a pid after reaping it (the kernel may have given the number to someone else).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a server gets to exit after SIGTERM before SIGKILL.
pub(crate) const TERM_GRACE: Duration = Duration::from_secs(3);
const WAIT_POLL: Duration = Duration::from_millis(10);

/// How a server process ended, once [`ProcessGuard::shutdown`] has run.
#[derive(Debug, Clone, Copy)]
pub enum Ending {
    /// It had exited before we asked it to stop (crash, or killed from outside).
    ExitedBefore(ExitStatus),
    /// It exited after SIGTERM, within the grace period.
    Terminated(ExitStatus),
    /// It ignored SIGTERM for [`TERM_GRACE`] and was SIGKILLed.
    Killed(ExitStatus),
    /// Waiting failed (someone else reaped it, e.g. SIGCHLD set to SIG_IGN).
    WaitFailed,
}

struct State {
    child: Child,
    /// Set once the child has been reaped; from then on it is never signalled.
    status: Option<ExitStatus>,
    ending: Option<Ending>,
}

/// Owns a running child. Dropping it does nothing by itself: the owner calls
/// [`ProcessGuard::shutdown`] (from `Drop`), so the order of shutdown and
/// temporary-directory removal stays explicit.
pub struct ProcessGuard {
    /// The running child's pid (a restart replaces the child).
    pid: AtomicU32,
    state: Mutex<State>,
}

pub(crate) struct SpawnRequest {
    command: Command,
    reply: mpsc::Sender<io::Result<Child>>,
}

/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, not
/// the process. Servers may be started from short-lived threads (scoped
/// threads, tokio's blocking pool), so every fork happens on one dedicated
/// thread that lives as long as the process.
fn spawn_on_spawner_thread(command: Command) -> io::Result<Child> {
    let (reply, answer) = mpsc::channel();
    spawner()?
        .send(SpawnRequest { command, reply })
        .map_err(|_| io::Error::other("the spawner thread has stopped"))?;
    answer
        .recv()
        .map_err(|_| io::Error::other("the spawner thread has stopped"))?
}

/// The spawner thread's queue, starting the thread on first use. A thread
/// stays in the network namespace it was created in, so `netns.rs` calls
/// this before moving its own thread into a run's client namespace.
pub(crate) fn spawner() -> io::Result<mpsc::Sender<SpawnRequest>> {
    static SPAWNER: Mutex<Option<mpsc::Sender<SpawnRequest>>> = Mutex::new(None);
    let mut slot = SPAWNER.lock().unwrap_or_else(|p| p.into_inner());
    Ok(match slot.as_ref() {
        Some(s) => s.clone(),
        None => {
            let (tx, rx) = mpsc::channel::<SpawnRequest>();
            std::thread::Builder::new()
                .name("kvbench-spawner".into())
                .spawn(move || {
                    for mut req in rx {
                        let result = req.command.spawn();
                        if let Err(mpsc::SendError(Ok(mut orphan))) = req.reply.send(result) {
                            // The requester is gone; do not leave its server running.
                            let _ = orphan.kill();
                            let _ = orphan.wait();
                        }
                    }
                })?;
            *slot = Some(tx.clone());
            tx
        }
    })
}

impl ProcessGuard {
    /// Starts `program args` in `cwd`, stdin from /dev/null, stdout and stderr
    /// appended to `log`, as [`ProcessGuard::start`] does. With `netns` (an
    /// open `/run/netns/NAME`), it joins that network namespace before exec.
    pub(crate) fn spawn(
        program: &Path,
        args: &[String],
        cwd: &Path,
        log: &Path,
        netns: Option<&File>,
    ) -> io::Result<Self> {
        Self::start_in(server_command(program, args, cwd, log)?, netns)
    }

    /// Starts `command` (its stdio as the caller set it) in its own process
    /// group, so a terminal's Ctrl-C reaches kvbench only, which then stops
    /// the child in order, and with SIGKILL as its parent-death signal, so
    /// it cannot outlive a kvbench that is killed outright. A child that
    /// forks (Spark's JVM and its workers) takes its group with it when
    /// [`ProcessGuard::shutdown`] runs; after a SIGKILL of kvbench only the
    /// child itself is killed, and whatever it started must end with it.
    ///
    /// # Errors
    /// When the command cannot be started.
    pub fn start(command: Command) -> io::Result<Self> {
        Self::start_in(command, None)
    }

    /// Its own process group, the network namespace, and death with kvbench.
    fn prepare(command: &mut Command, netns: Option<&File>) {
        command.process_group(0);
        let parent = std::process::id() as libc::pid_t;
        // The file was opened before the fork (opening is not
        // async-signal-safe); it is close-on-exec and outlives the spawn,
        // which blocks until the child has exec'd.
        let netns = netns.map(|f| f.as_raw_fd());
        // SAFETY: the closure runs between fork and exec and only makes
        // async-signal-safe calls (setns, prctl, getppid) without allocating.
        unsafe {
            command.pre_exec(move || {
                if let Some(fd) = netns {
                    if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
                // kvbench may have died between fork and prctl; then the
                // signal will never come, so refuse to exec.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }

    fn start_in(mut command: Command, netns: Option<&File>) -> io::Result<Self> {
        Self::prepare(&mut command, netns);
        let child = spawn_on_spawner_thread(command)?;
        Ok(ProcessGuard {
            pid: AtomicU32::new(child.id()),
            state: Mutex::new(State {
                child,
                status: None,
                ending: None,
            }),
        })
    }

    /// Starts `command` as [`ProcessGuard::start_in`] does, in place of a
    /// child that has exited and been reaped (a server restarted on
    /// purpose): from then on this guard owns and stops the new one.
    ///
    /// # Errors
    /// When the old child is still running, or the command cannot start.
    pub(crate) fn respawn(&self, mut command: Command, netns: Option<&File>) -> io::Result<()> {
        let mut st = self.lock();
        if reap_if_exited(&mut st).is_err() || st.status.is_none() {
            return Err(io::Error::other("the process to replace has not exited"));
        }
        Self::prepare(&mut command, netns);
        let child = spawn_on_spawner_thread(command)?;
        self.pid.store(child.id(), Ordering::Release);
        *st = State {
            child,
            status: None,
            ending: None,
        };
        Ok(())
    }

    /// Waits up to `grace` for the child to exit by itself (after being
    /// asked to), then SIGKILLs it; reaps it either way. Unlike
    /// [`ProcessGuard::shutdown`] this is not final: the guard may be
    /// given a new child with [`ProcessGuard::respawn`].
    pub(crate) fn wait_exit(&self, grace: Duration) -> Option<ExitStatus> {
        let mut st = self.lock();
        let deadline = Instant::now() + grace;
        while st.status.is_none() {
            match st.child.try_wait() {
                Ok(Some(status)) => st.status = Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(WAIT_POLL),
                Ok(None) => {
                    signal(self.pid(), libc::SIGKILL);
                    st.status = st.child.wait().ok();
                    break;
                }
                Err(_) => break,
            }
        }
        st.status
    }

    /// Sends `sig` to the child while it runs (a pause, a kill); false once
    /// it has exited (its pid may be someone else's).
    pub(crate) fn signal_running(&self, sig: libc::c_int) -> bool {
        let mut st = self.lock();
        if reap_if_exited(&mut st).is_err() || st.status.is_some() {
            return false;
        }
        signal(self.pid(), sig);
        true
    }

    /// The child's stdout, when it was piped and not taken before.
    pub fn take_stdout(&self) -> Option<ChildStdout> {
        self.lock().child.stdout.take()
    }

    /// Waits until the child exits by itself and reaps it.
    ///
    /// # Errors
    /// When waiting fails (someone else reaped it).
    pub fn wait(&self) -> io::Result<ExitStatus> {
        let mut st = self.lock();
        if let Some(status) = st.status {
            return Ok(status);
        }
        let status = st.child.wait()?;
        st.status = Some(status);
        Ok(status)
    }

    /// The child's pid (also its process group's id).
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock must not stop us from
        // stopping the server.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The exit status if the child has exited (reaping it), else `None`.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        let mut st = self.lock();
        // A wait failure is recorded in `ending`; the status stays unknown.
        let _ = reap_if_exited(&mut st);
        st.status
    }

    /// Stops the child: SIGTERM to its process group, up to [`TERM_GRACE`] of
    /// polling, then SIGKILL and a blocking wait. Idempotent: later calls
    /// return the first call's result.
    pub fn shutdown(&self) -> Ending {
        let mut st = self.lock();
        if let Some(ending) = st.ending {
            return ending;
        }
        let ending = match reap_if_exited(&mut st) {
            Ok(()) if st.status.is_some() => {
                st.status.map_or(Ending::WaitFailed, Ending::ExitedBefore)
            }
            Err(()) => Ending::WaitFailed,
            Ok(()) => self.terminate(&mut st),
        };
        st.ending = Some(ending);
        ending
    }

    fn terminate(&self, st: &mut State) -> Ending {
        signal(self.pid(), libc::SIGTERM);
        // A stopped server (SIGSTOP, a debugger's) acts on SIGTERM only
        // once it runs again.
        signal(self.pid(), libc::SIGCONT);
        let deadline = Instant::now() + TERM_GRACE;
        loop {
            match st.child.try_wait() {
                Ok(Some(status)) => {
                    st.status = Some(status);
                    return Ending::Terminated(status);
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(WAIT_POLL),
                Ok(None) => break,
                Err(_) => return Ending::WaitFailed,
            }
        }
        signal(self.pid(), libc::SIGKILL);
        match st.child.wait() {
            Ok(status) => {
                st.status = Some(status);
                Ending::Killed(status)
            }
            Err(_) => Ending::WaitFailed,
        }
    }
}

/// `program args` in `cwd`, stdin from /dev/null, stdout and stderr
/// appended to `log`.
pub(crate) fn server_command(
    program: &Path,
    args: &[String],
    cwd: &Path,
    log: &Path,
) -> io::Result<Command> {
    let out = File::options().create(true).append(true).open(log)?;
    let err = out.try_clone()?;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    Ok(command)
}

/// Reaps the child if it has exited. `Err` when waiting itself fails, after
/// which the pid must not be signalled any more.
fn reap_if_exited(st: &mut State) -> Result<(), ()> {
    if st.status.is_some() || st.ending.is_some() {
        return Ok(());
    }
    match st.child.try_wait() {
        Ok(Some(status)) => {
            st.status = Some(status);
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(_) => {
            st.ending = Some(Ending::WaitFailed);
            Err(())
        }
    }
}

/// Signals the child's process group (which also reaches anything it forked),
/// falling back to the pid alone if the group is gone. Only called while the
/// child is unreaped, so the pid (and the group id, equal to it) is still ours.
fn signal(pid: u32, sig: libc::c_int) {
    let pid = pid as libc::pid_t;
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        if libc::kill(-pid, sig) != 0 {
            libc::kill(pid, sig);
        }
    }
}

/// The last `lines` lines of the log (at most the last 16 KiB of it), for
/// error messages; never fails, since it is only ever used to explain a failure.
pub(crate) fn log_tail(log: &Path, lines: usize) -> String {
    const MAX: u64 = 16 * 1024;
    let read = || -> io::Result<String> {
        let mut file = File::open(log)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(MAX)))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    match read() {
        Ok(text) => {
            let all: Vec<&str> = text.trim_end().lines().collect();
            let tail = all[all.len().saturating_sub(lines)..].join("\n");
            if tail.is_empty() {
                "(the server printed nothing)".to_string()
            } else {
                tail
            }
        }
        Err(e) => format!("(log {} unreadable: {e})", log.display()),
    }
}

/// Whether `pid` is a running (not zombie) process.
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("log");
        std::fs::write(&log, "a\nb\nc\nd\n").expect("write");
        assert_eq!(log_tail(&log, 2), "c\nd");
        assert!(log_tail(&dir.path().join("missing"), 2).contains("unreadable"));
    }

    #[test]
    fn a_process_that_ignores_sigterm_is_killed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("log");
        let args = vec![
            "-c".to_string(),
            "trap '' TERM; echo up; exec sleep 30".to_string(),
        ];
        let guard = ProcessGuard::spawn(Path::new("/bin/sh"), &args, dir.path(), &log, None)
            .expect("spawn");
        // Give the shell time to install its trap.
        let start = Instant::now();
        while !log_tail(&log, 1).contains("up") && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(guard.exit_status().is_none());
        let t = Instant::now();
        let ending = guard.shutdown();
        assert!(matches!(ending, Ending::Killed(_)), "{ending:?}");
        assert!(t.elapsed() >= TERM_GRACE);
        assert!(matches!(guard.shutdown(), Ending::Killed(_)));
    }
}
