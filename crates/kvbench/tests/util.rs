//! Helpers shared by the integration tests.

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A scratch directory and the kvbench command, run inside it.
pub struct Sandbox {
    pub dir: TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let sb = Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        };
        std::fs::create_dir_all(sb.tmp()).expect("sandbox tmp");
        sb
    }

    /// The sandbox's own temporary directory, every kvbench's TMPDIR here:
    /// its servers' directories are made in it, and a kvbench cleans up only
    /// what a killed one left in it, so a test never sees (or removes) what
    /// another test, or anything else on the machine, left in /tmp.
    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("kvbench.db")
    }

    /// `kvbench ARGS` with the working directory in the sandbox.
    pub fn kvbench(&self) -> Command {
        let mut c = Command::cargo_bin("kvbench").expect("kvbench binary");
        c.current_dir(self.dir.path()).env("TMPDIR", self.tmp());
        c
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `kvbench ARGS` started in the background, stdout and stderr piped
    /// (for tests that act on it, or its servers, while it runs).
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.spawn_env(args, &[])
    }

    /// [`Sandbox::spawn`] with these environment variables set too.
    pub fn spawn_env(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("kvbench"))
            .args(args)
            .current_dir(self.dir.path())
            .env("TMPDIR", self.tmp())
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kvbench starts")
    }

    /// `kvbench ARGS`, which must succeed; its stdout.
    pub fn stdout(&self, args: &[&str]) -> String {
        let out = self.kvbench().args(args).output().expect("kvbench runs");
        assert!(
            out.status.success(),
            "kvbench {args:?} exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 on stdout")
    }

    /// `kvbench ARGS`, which must succeed or end with exit code 3 (a run
    /// marked invalid: a reproduction at a tiny scale on a machine busy
    /// with the rest of the suite may see a server stall); its stdout
    /// parsed as JSON. Exit 3 must name each invalid run and why on stderr.
    pub fn json_allowing_invalid(&self, args: &[&str]) -> serde_json::Value {
        let out = self.kvbench().args(args).output().expect("kvbench runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {}
            Some(3) => {
                assert!(stderr.contains("): invalid: "), "exit 3 says why: {stderr}");
                eprintln!("kvbench {args:?} exited 3 (accepted):\n{stderr}");
            }
            code => panic!("kvbench {args:?} exited {code:?}: {stderr}"),
        }
        serde_json::from_slice(&out.stdout).expect("JSON on stdout")
    }

    /// `kvbench ARGS`, which must succeed; its stdout parsed as JSON.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.stdout(args)).expect("JSON on stdout")
    }
}

/// Small, quick settings shared by CLI runs.
pub const SMALL: &[&str] = &[
    "--records",
    "2000",
    "--operations",
    "4000",
    "--field-count",
    "4",
    "--field-length",
    "50",
    "--warmup",
    "100ms",
    "--quiet",
];

/// A process as `/proc/PID/stat` shows it.
pub struct Proc {
    pub pid: u32,
    /// `R`, `S`, `Z`, ...
    pub state: char,
    pub ppid: u32,
    pub pgrp: u32,
}

/// `/proc/PID/stat`, when the process exists.
pub fn proc_stat(pid: u32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the parenthesised command (which may hold spaces and parens):
    // state, ppid, pgrp, ...
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Proc {
        pid,
        state,
        ppid,
        pgrp,
    })
}

/// Every process on the machine.
pub fn processes() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter_map(proc_stat)
        .collect()
}

/// Every pid whose parent is `parent`.
pub fn children_of(parent: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|p| p.ppid == parent)
        .map(|p| p.pid)
        .collect()
}

/// Waits (at most 30 s) until `parent` has `n` children that `keep`
/// accepts, and returns them.
pub fn wait_for_children(parent: u32, n: usize, keep: impl Fn(u32) -> bool) -> Vec<u32> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let found: Vec<u32> = children_of(parent)
            .into_iter()
            .filter(|&c| keep(c))
            .collect();
        if found.len() == n {
            return found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "pid {parent} has {} of {n} children: {found:?}",
            found.len()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// True while `/proc/<pid>` exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|p| p.state != 'Z')
}

pub use crate::serial::timing_sensitive;

/// Operation `name` (`read`, `command1`, ...) of the run phase of a run
/// printed with `--json`.
pub fn op<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["run"]["ops"]
        .as_array()
        .and_then(|ops| ops.iter().find(|o| o["op"] == name))
        .unwrap_or_else(|| panic!("no {name} in {}", v["run"]))
}

/// A private Redis with its defaults, as a server kvbench did not start
/// (a `--target`); the guard stops it.
pub fn private_redis() -> kvbench_servers::Server {
    kvbench_servers::Server::start(&kvbench_servers::ServerSpec {
        system: kvbench_model::SystemKind::Redis,
        binary: None,
        memory_limit_mb: None,
        eviction: None,
        extra_args: Vec::new(),
    })
    .expect("redis starts")
}

/// Process `pid`'s peak RSS (the kernel's VmHWM, in KiB), read until the
/// process is gone. It is the process's own, apart from its children (wait4's
/// ru_maxrss would be the largest of it and the children it waited for).
pub fn peak_rss_kib(pid: u32) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut peak_kb = 0u64;
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let Some(kb) = status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            else {
                break; // a zombie has no memory lines
            };
            peak_kb = peak_kb.max(kb);
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        peak_kb
    })
}

/// `kvbench run ARGS --json -q` in `sb`: its output, whatever its exit.
fn run_json(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    sb.kvbench()
        .arg("run")
        .args(args)
        .args(["--json", "-q"])
        .output()
        .expect("kvbench runs")
}

/// `kvbench run ARGS --json -q` in `sb`, which must succeed; its record.
pub fn run_record(sb: &Sandbox, args: &[&str]) -> kvbench_model::RunRecord {
    let out = run_json(sb, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a run record")
}

/// As [`run_record`] for a test whose figures are counts that do not depend
/// on timing (hits, misses, evictions): the run may also end marked invalid
/// (exit 3) when its only marks are `unstable`, since a shared machine can
/// halve per-second throughput within a window without changing what was
/// counted. Any other mark still fails the test, and so does any other exit.
pub fn run_record_counting(sb: &Sandbox, args: &[&str]) -> kvbench_model::RunRecord {
    let out = run_json(sb, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0) | Some(3)),
        "{args:?}: exit {code:?}: {stderr}"
    );
    let rec: kvbench_model::RunRecord = serde_json::from_slice(&out.stdout).expect("a run record");
    let only_unstable = rec
        .marks
        .iter()
        .all(|m| m.kind() == kvbench_model::MarkKind::Unstable);
    match code {
        Some(0) => assert_eq!(rec.status.as_str(), "ok", "{:?}", rec.marks),
        _ => {
            assert!(
                rec.status.as_str() == "invalid" && !rec.marks.is_empty() && only_unstable,
                "{args:?}: exit 3 with marks other than unstable: {:?}",
                rec.marks
            );
            eprintln!("accepted, as the figures are counts: {stderr}");
        }
    }
    rec
}
