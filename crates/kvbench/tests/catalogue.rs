//! The catalogue of bad inputs (issue 15, item 6): flags, YCSB property
//! files, experiment files, hosts, passwords and databases, each checked for
//! one line on stderr that names the culprit, the documented exit code, and
//! afterwards the results database still valid (SQLite's integrity check)
//! with the run stored before still listed. A password given in a URL is
//! never echoed.

use crate::util::{Sandbox, SMALL};

/// One bad input: the command line, the files it needs, what its one line
/// must name, and the exit code.
struct Case {
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    mentions: &'static str,
    code: i32,
}

const fn bad(args: &'static [&'static str], mentions: &'static str) -> Case {
    bad_env(args, &[], mentions)
}

const fn bad_env(
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    mentions: &'static str,
) -> Case {
    Case {
        args,
        env,
        mentions,
        code: 2,
    }
}

/// The settings of a quick run (for cases refused before it starts).
const QUICK: &[&str] = &[
    R,
    "--system",
    "redis",
    "--workload",
    "balanced",
    "--records",
    "100",
    "--operations",
    "100",
];

/// Files the cases read, written into the sandbox first.
const FILES: &[(&str, &[u8])] = &[
    ("long.pw", &[b'a'; 5000]),
    ("binary.properties", b"\x7fELF\x02\x01\x01\x00\x00\x00recordcount=5\n"),
    ("letters.properties", b"readproportion=abc\n"),
    ("huge.properties", b"recordcount=99999999999999\n"),
    ("dist.properties", b"requestdistribution=bogus\n"),
    ("syntax.toml", b"name = \"x\"\nsystems = [\"redis\"\n"),
    ("unknown-key.toml", b"name = \"x\"\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\ncolour = 3\n"),
    ("mongo.toml", b"name = \"x\"\nsystems = [\"mongo\"]\nworkloads = [\"read-heavy\"]\n"),
    ("iterations.toml", b"name = \"x\"\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\niterations = 0\n"),
    ("clients.toml", b"name = \"x\"\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\n[sweep]\nclients = [0]\n"),
    ("nameless.toml", b"name = \" \"\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\n"),
    ("text.db", b"these are my notes, not a database\n"),
    ("other.json", b"{\"format\": \"something else\"}\n"),
    ("empty.properties", b""),
    (
        "dup-clients.toml",
        b"name = \"d\"\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\n[sweep]\nclients = [1, 4, 1]\n",
    ),
    (
        "dup-systems.toml",
        b"name = \"d\"\nsystems = [\"redis\", \"redis\"]\nworkloads = [\"read-heavy\"]\n",
    ),
    (
        "dup-workloads.toml",
        b"name = \"d\"\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\", \"read-heavy\"]\n",
    ),
    (
        "many-cells.toml",
        b"name = \"m\"\nsystems = [\"redis\", \"memcached\"]\nworkloads = [\"read-heavy\"]\niterations = 100\n[sweep]\nclients = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\npipeline = [1, 2, 3, 4, 5, 6]\n",
    ),
    (
        "max-cells.toml",
        b"name = \"m\"\nmax_cells = 0\nsystems = [\"redis\"]\nworkloads = [\"read-heavy\"]\n",
    ),
    ("comments.properties", b"# only a comment\n\n"),
];

/// Named pipes the cases read (nobody writes to them: a read would block).
const PIPES: &[&str] = &["pipe.properties", "pipe.toml", "pipe.json"];

const R: &str = "run";

const CASES: &[Case] = &[
    // Flags.
    bad(&[R, "--system", "mongo", "--workload", "balanced"], "mongo"),
    bad(&[R, "--system", "redis", "--workload", "heavy"], "heavy"),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--records",
            "0",
        ],
        "--records",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--records",
            "-5",
        ],
        "--records",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--records",
            "18446744073709551616",
        ],
        "--records",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--pipeline",
            "100000000",
        ],
        "--pipeline",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--threads",
            "1000",
        ],
        "--threads",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--clients",
            "100000",
        ],
        "--clients",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--rate",
            "1e12",
        ],
        "--rate",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--field-length",
            "4294967295",
        ],
        "--field-length",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--duration",
            "0s",
        ],
        "--duration",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--duration",
            "8days",
        ],
        "--duration",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--timeout",
            "0s",
        ],
        "--timeout",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--stall",
            "2h",
        ],
        "--stall",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--max-retries",
            "16",
        ],
        "--max-retries",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--reconnect-backoff",
            "1s-10ms",
        ],
        "--reconnect-backoff",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--failed-keys",
            "keys.txt",
            "--workers",
            "2",
        ],
        "--failed-keys cannot be used with --workers",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--warmup",
            "soon",
        ],
        "--warmup",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--seed",
            "abc",
        ],
        "--seed",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--topology",
            "ring",
        ],
        "ring",
    ),
    bad(
        &[
            R,
            "--system",
            "memcached",
            "--workload",
            "balanced",
            "--topology",
            "cluster",
        ],
        "cluster",
    ),
    bad(
        &[
            R,
            "--system",
            "memcached",
            "--workload",
            "balanced",
            "--topology",
            "sentinel",
        ],
        "has no Sentinel",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--topology",
            "sentinel",
            "--nodes",
            "1",
        ],
        "--nodes counts the master and its replicas",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "redis-sentinel://127.0.0.1:1",
        ],
        "needs the group's name",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--fault",
            "kill:1@1s",
        ],
        "there are 1 data nodes",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--fault",
            "failover@1s",
        ],
        "a failover needs --topology sentinel",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--duration",
            "5s",
            "--fault",
            "pause:0:1s@5s",
        ],
        "comes after the 5s window",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "127.0.0.1:1",
            "--fault",
            "kill:0@1s",
        ],
        "never on a --target",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--fault",
            "pause:0@1s",
        ],
        "a pause needs its length",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--io",
            "uring",
            "--rate",
            "1000",
        ],
        "--io",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "read-heavy",
            "--no-load",
        ],
        "--no-load",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--server-cpus",
            "99",
        ],
        "--server-cpus",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--metrics-listen",
            "nowhere",
        ],
        "--metrics-listen",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--server-args",
            "--port 7000",
        ],
        "--port",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--link-rate",
            "1gbit",
        ],
        "--link-rate",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--records",
            "100000000",
            "--field-length",
            "1000000",
            "--field-count",
            "1",
        ],
        "memory",
    ),
    // YCSB property files and -p.
    bad(
        &[R, "--system", "redis", "-P", "missing.properties"],
        "missing.properties",
    ),
    bad(
        &[R, "--system", "redis", "-P", "binary.properties"],
        "binary.properties",
    ),
    bad(
        &[R, "--system", "redis", "-P", "letters.properties"],
        "readproportion",
    ),
    bad(
        &[R, "--system", "redis", "-P", "huge.properties"],
        "recordcount",
    ),
    bad(
        &[R, "--system", "redis", "-P", "dist.properties"],
        "requestdistribution",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "-p",
            "fieldcount=0",
        ],
        "fieldcount",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "-p",
            "fieldcount",
        ],
        "fieldcount",
    ),
    // Experiment files.
    bad(&["experiment", "run", "missing.toml"], "missing.toml"),
    bad(&["experiment", "run", "syntax.toml"], "syntax.toml"),
    bad(&["experiment", "run", "unknown-key.toml"], "colour"),
    bad(&["experiment", "run", "mongo.toml"], "mongo"),
    bad(&["experiment", "run", "iterations.toml"], "iterations"),
    bad(&["experiment", "run", "clients.toml"], "clients"),
    bad(&["experiment", "plan", "nameless.toml"], "name"),
    // Hosts.
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "256.1.1.1:6379",
        ],
        "256.1.1.1",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "redis://127.0.0.1:1",
        ],
        "127.0.0.1:1",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "ftp://127.0.0.1:6379",
        ],
        "ftp",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "redis://127.0.0.1:port",
        ],
        "port",
    ),
    bad(
        &[
            R,
            "--system",
            "memcached",
            "--workload",
            "balanced",
            "--target",
            "redis-cluster://127.0.0.1:1",
        ],
        "redis-cluster",
    ),
    // Passwords.
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "redis://app:hunter2secret@127.0.0.1:1",
        ],
        "127.0.0.1:1",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--target",
            "redis://127.0.0.1:1",
            "--password-env",
            "KVBENCH_CATALOGUE_UNSET",
        ],
        "KVBENCH_CATALOGUE_UNSET",
    ),
    // Databases.
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--db",
            "text.db",
        ],
        "text.db",
    ),
    bad(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--db",
            "no/such/dir/k.db",
        ],
        "no/such/dir/k.db",
    ),
    bad(&["runs", "--db", "text.db"], "text.db"),
    bad(&["runs", "--status", "foo"], "--status"),
    bad(&["show", "999"], "999"),
    bad(&["import", "other.json"], "other.json"),
    // Issue 36: special files, empty files, late settings.
    bad(
        &[R, "--system", "redis", "-P", "pipe.properties"],
        "pipe.properties: not a regular file (a named pipe)",
    ),
    bad(
        &[R, "--system", "redis", "-P", "."],
        ".: not a regular file (a directory)",
    ),
    bad(
        &[R, "--system", "redis", "-P", "/dev/zero"],
        "/dev/zero: not a regular file (a character device)",
    ),
    bad(
        &[R, "--system", "redis", "-P", "empty.properties"],
        "empty.properties: no property in the file",
    ),
    bad(
        &[R, "--system", "redis", "-P", "comments.properties"],
        "comments.properties: no property in the file",
    ),
    bad(
        &["experiment", "run", "pipe.toml"],
        "pipe.toml: not a regular file (a named pipe)",
    ),
    bad(
        &["experiment", "plan", "/dev/zero"],
        "/dev/zero: not a regular file",
    ),
    bad(
        &["import", "pipe.json"],
        "pipe.json: not a regular file (a named pipe)",
    ),
    bad_env(QUICK, &[("KVBENCH_DB_WAIT", "10s")], "KVBENCH_DB_WAIT=\"10s\""),
    bad(
        &["experiment", "plan", "dup-clients.toml"],
        "dup-clients.toml:5:18: sweep.clients: 1 is listed twice",
    ),
    bad(
        &["experiment", "run", "dup-systems.toml"],
        "systems: 'redis' is listed twice",
    ),
    bad(
        &["experiment", "plan", "dup-workloads.toml"],
        "workloads: 'read-heavy' is listed twice",
    ),
    bad(
        &["compare", "--systems", "redis,memcached,redis", "--clients", "1"],
        "--systems: 'redis' is listed twice",
    ),
    bad(
        &["compare", "--systems", "redis", "--clients", "1,8,1"],
        "--clients: '1' is listed twice",
    ),
    bad(
        &["experiment", "run", "many-cells.toml"],
        "max_cells: the file expands to 12000 cells, more than the 10000 allowed; shorten a sweep list, or raise the bound with max_cells = 12000",
    ),
    bad(&["experiment", "plan", "max-cells.toml"], "max_cells: "),
    bad(
        &["export", "--format", "csv", "--output", "."],
        "--output .: a directory; name a file",
    ),
    bad(
        &[
            "compare",
            "--systems",
            "redis,memcached",
            "--clients",
            "1",
            "--server-bin",
            "/usr/bin/redis-server",
        ],
        "--server-bin: one binary for --systems redis,memcached",
    ),
    bad_env(
        &[
            R,
            "--system",
            "redis",
            "--workload",
            "balanced",
            "--workers",
            "2",
        ],
        &[("KVBENCH_PYTHON", "/nonexistent/python3")],
        "--workers: cannot run /nonexistent/python3",
    ),
    bad_env(
        &["compare", "--systems", "redis", "--clients", "1"],
        &[("KVBENCH_DB_WAIT", "-1")],
        "KVBENCH_DB_WAIT",
    ),
    bad(&["delete", "999", "--yes"], "999"),
    // Secrets and a worker's task: bounded, and never from a device.
    bad(
        &[
            R, "--system", "redis", "--workload", "balanced", "--target", "127.0.0.1:1",
            "--password-file", "/dev/zero",
        ],
        "--password-file /dev/zero: a character device; a secret is read from a regular file or a pipe",
    ),
    bad(
        &[
            R, "--system", "redis", "--workload", "balanced", "--target", "127.0.0.1:1",
            "--password-file", "long.pw",
        ],
        "--password-file long.pw: no line end in its first 4096 bytes",
    ),
    bad_env(
        &[
            R, "--system", "redis", "--workload", "balanced", "--target", "127.0.0.1:1",
            "--password-env", "KVBENCH_CATALOGUE_LINES",
        ],
        &[("KVBENCH_CATALOGUE_LINES", "first\nsecond")],
        "--password-env KVBENCH_CATALOGUE_LINES: not one line",
    ),
    bad_env(
        &[R, "--system", "aerospike", "--workload", "balanced"],
        &[("KVBENCH_AEROSPIKE_BIN", "/dev/zero")],
        "/dev/zero does not exist or is not an executable file",
    ),
    bad(
        &["worker", "--task", "/dev/zero", "--slice", "0/1"],
        "--task /dev/zero: not a regular file (a character device)",
    ),
];

#[test]
fn every_bad_input_gets_one_line_its_exit_code_and_loses_nothing() {
    let _serial = crate::util::timing_sensitive();
    let sb = Sandbox::new();
    let mut first = vec![
        "run",
        "--system",
        "redis",
        "--workload",
        "balanced",
        "--seed",
        "3",
    ];
    first.extend_from_slice(SMALL);
    sb.kvbench().args(&first).assert().success();
    for (name, body) in FILES {
        std::fs::write(sb.path().join(name), body).expect("write");
    }
    for name in PIPES {
        let made = std::process::Command::new("mkfifo")
            .arg(sb.path().join(name))
            .status()
            .expect("mkfifo");
        assert!(made.success(), "mkfifo {name}");
    }
    assert!(CASES.len() >= 89, "{} cases", CASES.len());
    let mut failures = Vec::new();
    for case in CASES {
        let out = sb
            .kvbench()
            .args(case.args)
            .env_remove("KVBENCH_CATALOGUE_UNSET")
            .envs(case.env.iter().copied())
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let ok = out.status.code() == Some(case.code)
            && lines.len() == 1
            && lines[0].contains(case.mentions)
            && !stderr.contains("hunter2secret")
            && !stderr.contains("panicked");
        if !ok {
            failures.push(format!(
                "{:?}: exit {:?} (want {}), {} lines, wanted '{}': {stderr}",
                case.args,
                out.status.code(),
                case.code,
                lines.len(),
                case.mentions
            ));
        }
        let runs = sb.json(&["runs", "--json"]);
        assert_eq!(
            runs.as_array().map(Vec::len),
            Some(1),
            "after {:?} the earlier run is listed alone",
            case.args
        );
    }
    let conn = rusqlite::Connection::open(sb.db()).expect("open");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(check, "ok");
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
    println!(
        "{} bad inputs: each one line, its exit code, nothing lost",
        CASES.len()
    );
}
