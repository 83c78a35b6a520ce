//! Many connections from one process: 10,000 concurrent connections to one
//! server, with kvbench's own peak RSS (not its server's) under 150 MB.

use crate::util::Sandbox;

#[test]
// The child is reaped with wait4 (to read its peak RSS), which std's Child
// cannot see.
#[allow(clippy::zombie_processes)]
fn ten_thousand_connections_fit_in_150_mb() {
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let mut child = sb.spawn(&[
        "run",
        "--system",
        "redis",
        "--workload",
        "read-heavy",
        "--records",
        "1000",
        "--field-count",
        "1",
        "--field-length",
        "100",
        "--clients",
        "10000",
        "--operations",
        "20000",
        "--warmup",
        "0s",
        "--quiet",
        "--json",
        "--timeout",
        "60s",
    ]);
    let pid = child.id() as libc::pid_t;
    // kvbench's own peak, apart from its servers (Redis holding 10,000
    // connections is the larger).
    let hwm = crate::util::peak_rss_kib(child.id());
    // Take the output pipes so the child never blocks on a full pipe, then
    // reap it with wait4 to get its peak RSS.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let mut status = 0;
    // SAFETY: wait4 on our own child, writing into locals.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(rc, pid);
    let stdout = out_reader.join().expect("stdout");
    let stderr = err_reader.join().expect("stderr");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "exit {status}: {stderr}"
    );
    let rec: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(rec["run"]["completed"], 20_000, "{}", rec["run"]);
    assert_eq!(rec["run"]["errors"], 0);
    let peak_mb = hwm.join().expect("VmHWM") as f64 / 1024.0;
    let with_children_mb = usage.ru_maxrss as f64 / 1024.0;
    eprintln!(
        "10,000 connections: kvbench peak RSS {peak_mb:.1} MiB (VmHWM; the largest of it and its servers: {with_children_mb:.1} MiB)"
    );
    assert!(peak_mb > 1.0, "VmHWM was read");
    assert!(
        peak_mb <= 150.0,
        "kvbench peak RSS {peak_mb:.0} MB with 10,000 connections"
    );
}
