//! What kvbench reads (issue 36, item 1): a property file written with a
//! byte-order mark is read as its author meant, and an experiment file
//! that expands to many cells can be interrupted while it is planned.

use crate::util::{Sandbox, SMALL};
use std::time::{Duration, Instant};

/// Before: the mark became part of the first key, so `recordcount` was an
/// unknown property and 100,000 records were loaded instead of 1,000.
#[test]
fn a_property_file_with_a_byte_order_mark_is_read_as_written() {
    let sb = Sandbox::new();
    std::fs::write(
        sb.path().join("bom.properties"),
        b"\xef\xbb\xbfrecordcount=1000\nreadproportion=1\nupdateproportion=0\n",
    )
    .expect("write");
    let mut args = vec!["run", "--system", "redis", "-P", "bom.properties", "--json"];
    // SMALL without its --records: the file's count must win.
    args.extend(SMALL.iter().skip(2));
    let rec = sb.json(&args);
    assert_eq!(
        rec["load"]["completed"].as_u64(),
        Some(1000),
        "{}",
        rec["load"]
    );
    assert_eq!(rec["config"]["records"].as_u64(), Some(1000));
}

/// Before: `-p db=foo`, a YCSB client setting a file may well carry,
/// printed a warning, where docs/workloads.md promises a note.
#[test]
fn a_ycsb_client_setting_gets_a_note_not_a_warning() {
    let sb = Sandbox::new();
    let mut args = vec![
        "run",
        "--system",
        "redis",
        "--workload",
        "read-heavy",
        "-p",
        "db=foo",
        "--json",
    ];
    args.extend_from_slice(SMALL);
    let out = sb.kvbench().args(&args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("note: -p: db: "), "{stderr}");
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains("warning") && !l.contains("client-bound")),
        "{stderr}"
    );
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    // A busy machine (the tests run in parallel) may add the client-bound
    // warning, which is about the machine, not the property file.
    let about_the_file = rec["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter(|w| w["kind"] != "client-bound")
        .count();
    assert_eq!(about_the_file, 0, "{}", rec["warnings"]);
}

/// Before: planning a file of 10^6 cells ran for minutes and ignored
/// Ctrl-C. Now the file needs `max_cells` to be that large, and planning
/// stops within a second of the signal, with exit 130 and one line.
#[test]
fn planning_a_large_experiment_stops_at_ctrl_c() {
    let sb = Sandbox::new();
    let clients: Vec<String> = (1..=100).map(|c| c.to_string()).collect();
    std::fs::write(
        sb.path().join("large.toml"),
        format!(
            "name = \"large\"\nmax_cells = 30000\nsystems = [\"redis\", \"valkey\", \"memcached\"]\n\
             workloads = [\"read-heavy\", \"balanced\", \"write-heavy\"]\n\
             [sweep]\nclients = [{}]\npipeline = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]\nthreads = [1, 2, 3]\n",
            clients.join(", ")
        ),
    )
    .expect("write");
    let mut child = sb.spawn(&["experiment", "plan", "large.toml"]);
    std::thread::sleep(Duration::from_millis(400));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "27,000 cells take longer than 0.4 s to plan"
    );
    let (status, took) = ctrl_c(&mut child);
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(took < Duration::from_secs(1), "stopped after {took:?}");
    assert!(stderr.contains("kvbench: interrupted while "), "{stderr}");
}

/// The JSON `child` printed, once it has ended with exit 0.
fn succeeded(child: std::process::Child) -> serde_json::Value {
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Sends `child` a SIGINT and waits (at most 5 s) for it to end: how it
/// ended, and how long after the signal.
fn ctrl_c(child: &mut std::process::Child) -> (std::process::ExitStatus, Duration) {
    let signalled = Instant::now();
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return (s, signalled.elapsed());
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(5),
            "still running 5 s after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `kvbench ARGS` with `input` on its standard input (`None`: a pipe kept
/// open and never written); the child and the pipe's writing end.
fn with_stdin(
    sb: &Sandbox,
    args: &[&str],
    input: Option<&[u8]>,
) -> (std::process::Child, Option<std::process::ChildStdin>) {
    use std::io::Write;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kvbench"))
        .args(args)
        .current_dir(sb.path())
        .env("TMPDIR", sb.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kvbench starts");
    let mut pipe = child.stdin.take();
    if let Some(bytes) = input {
        let mut p = pipe.take().expect("stdin");
        // A refused input may close the pipe before all of it is written.
        let _ = p.write_all(bytes);
    }
    (child, pipe)
}

/// `-` names standard input, read when asked for (issue 36, item 1):
/// `-P -` runs the piped properties (the workload named `stdin`), and
/// `experiment plan -` plans a piped file; empty input and input over the
/// bound are one line and exit 2; input that never ends stops at Ctrl-C
/// within a second, exit 130, nothing stored.
#[test]
fn standard_input_is_read_when_asked_bounded_and_interruptible() {
    let sb = Sandbox::new();
    let mut args = vec!["run", "--system", "redis", "-P", "-", "--json"];
    args.extend(SMALL.iter().skip(2));
    let (child, _) = with_stdin(
        &sb,
        &args,
        Some(b"recordcount=700\nreadproportion=1\nupdateproportion=0\n"),
    );
    let rec = succeeded(child);
    assert_eq!(rec["config"]["records"].as_u64(), Some(700));
    assert_eq!(rec["config"]["workload"], "stdin");

    let plan = b"name = \"piped\"\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\n";
    let (child, _) = with_stdin(&sb, &["experiment", "plan", "-", "--json"], Some(plan));
    let p = succeeded(child);
    assert_eq!(p["cells"].as_array().map(Vec::len), Some(1), "{p}");

    let huge = vec![b'#'; (1 << 20) + 1];
    for (input, says) in [
        (&b""[..], "standard input: empty"),
        (&huge[..], "standard input: over 1048576 bytes"),
    ] {
        let (child, _) = with_stdin(&sb, &["run", "--system", "redis", "-P", "-"], Some(input));
        let out = child.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }

    let (mut child, _open) = with_stdin(&sb, &["run", "--system", "redis", "-P", "-"], None);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().expect("wait").is_none(),
        "it waits for its input"
    );
    let (status, took) = ctrl_c(&mut child);
    assert_eq!(status.code(), Some(130));
    assert!(took < Duration::from_secs(1), "{took:?}");
    let runs = sb.json(&["runs", "--json"]);
    assert_eq!(
        runs.as_array().map(Vec::len),
        Some(1),
        "only the first run stored: {runs}"
    );
}

/// A password file may be a pipe (`--password-file <(pass show redis)`):
/// its first line is the password, stored nowhere; a pipe nobody writes to
/// stops at Ctrl-C within a second, exit 130, nothing stored (issue 36,
/// item 1). Devices and lines without an end are refused (catalogue.rs).
#[test]
fn a_password_file_may_be_a_pipe_and_one_never_written_stops_at_ctrl_c() {
    const PASSWORD: &str = "pipe-pw-7d1";
    let server = crate::targets::Redis::start(&format!("port {{port}}\nrequirepass {PASSWORD}"));
    let sb = Sandbox::new();
    let fifo = sb.path().join("pw");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let target = format!("127.0.0.1:{}", server.port);
    let mut args = vec![
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--target",
        &target,
        "--password-file",
        "pw",
        "--cleanup",
        "--json",
    ];
    args.extend(SMALL);
    let child = sb.spawn(&args);
    // Blocks until kvbench opens the pipe to read.
    std::fs::write(&fifo, format!("{PASSWORD}\n")).expect("write the pipe");
    let rec = succeeded(child);
    assert_eq!(rec["status"], "ok", "{rec}");
    assert!(
        !rec.to_string().contains(PASSWORD),
        "the password is stored"
    );

    let mut child = sb.spawn(&args);
    std::thread::sleep(Duration::from_millis(500));
    let (status, after) = ctrl_c(&mut child);
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(after < Duration::from_secs(1), "{after:?} after Ctrl-C");
    let runs = sb.stdout(&["runs", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&runs).expect("runs JSON");
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{runs}");
}
