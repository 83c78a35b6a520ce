//! The private directories of the servers kvbench starts, named
//! `kvbench-<pid>-<what>-XXXXXX` in the temporary directory. The pid lets a
//! later kvbench tell what a killed one left behind (its owner is gone) from
//! what a running one still uses, and remove it together with any server
//! process still working in it.
//!
//! A directory whose owner pid is alive is never touched, even when the pid
//! now belongs to another program: better a leftover than someone else's
//! files removed.

use std::io;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const PREFIX: &str = "kvbench-";

/// A new private directory for `what` (`redis`, `twemproxy`, ...), removed
/// when the guard drops.
///
/// # Errors
/// When the temporary directory cannot be written.
pub(crate) fn create(what: &str) -> io::Result<TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}-{what}-", std::process::id()))
        .tempdir()
}

/// Removes the directories of kvbench processes that no longer run, after
/// killing any process of this user still running inside one (a server whose
/// `PR_SET_PDEATHSIG` did not reach it), and returns what it removed.
pub fn remove_leftovers() -> Vec<PathBuf> {
    let me = std::process::id();
    remove_where(|pid| pid != me && !crate::process::alive(pid))
}

/// Removes this process's own directories (for an exit that skips
/// destructors: a second Ctrl-C). Its servers die with it anyway.
pub fn remove_own() -> Vec<PathBuf> {
    let me = std::process::id();
    remove_where(|pid| pid == me)
}

/// Kills (SIGKILL) every server process of this kvbench, leaving their
/// directories for the code that started them to reap and remove: a second
/// Ctrl-C wants the run over now, and a dead server ends it at once.
pub fn kill_own() {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if owner(&path) == Some(me) && mine(&path) {
            kill_inside(&path);
        }
    }
}

fn remove_where(owner_matches: impl Fn(u32) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let Some(pid) = owner(&path) else { continue };
        if !owner_matches(pid) || !mine(&path) {
            continue;
        }
        kill_inside(&path);
        if std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// The owner pid of a directory named as [`create`] names them.
fn owner(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, what) = rest.split_once('-')?;
    if what.is_empty() {
        return None;
    }
    pid.parse().ok()
}

/// A directory of this user (never another user's, whatever its name).
fn mine(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && m.uid() == uid)
}

/// SIGKILLs every process of this user whose working directory is `dir`
/// (kvbench starts each server inside its directory).
fn kill_inside(dir: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    for p in procs.flatten() {
        if !std::fs::metadata(p.path()).is_ok_and(|m| m.uid() == uid) {
            continue;
        }
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cwd) = std::fs::read_link(p.path().join("cwd")) else {
            // Another user's process, or gone: not ours to look at.
            continue;
        };
        if cwd == dir {
            // SAFETY: kill has no memory-safety preconditions. The pid was
            // just seen running in our leftover directory.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn names_carry_the_owner() {
        let d = create("redis").expect("temp dir");
        assert_eq!(owner(d.path()), Some(std::process::id()));
        assert_eq!(owner(Path::new("/tmp/kvbench-12-redis-abc")), Some(12));
        assert_eq!(owner(Path::new("/tmp/kvbench-redis-abc")), None);
        assert_eq!(owner(Path::new("/tmp/kvbench-12-")), None);
        assert_eq!(owner(Path::new("/tmp/other-12-redis")), None);
    }

    #[test]
    fn a_dead_owners_directory_and_the_process_inside_are_removed() {
        // A pid that is surely gone: a child that has exited and been reaped.
        let mut gone = Command::new("true").spawn().expect("spawn true");
        let dead = gone.id();
        gone.wait().expect("wait");
        let dir = std::env::temp_dir().join(format!("{PREFIX}{dead}-test-{}", std::process::id()));
        std::fs::create_dir(&dir).expect("create");
        std::fs::write(dir.join("server.log"), "x").expect("write");
        let mut sleeper = Command::new("sleep")
            .arg("30")
            .current_dir(&dir)
            .spawn()
            .expect("spawn sleep");
        let kept = create("live").expect("own dir");

        let removed = remove_leftovers();

        let status = sleeper.wait().expect("wait sleep");
        assert!(removed.contains(&dir), "{removed:?}");
        assert!(!dir.exists());
        assert!(!status.success(), "the process inside was killed");
        assert!(kept.path().exists(), "a live owner's directory stays");
    }
}
