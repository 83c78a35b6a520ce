//! `kvbench-efficiency`: how much client CPU kvbench spends per operation,
//! next to the standard tools, on the same server in the same run.
//!
//! For each system it starts ONE private server (kvbench-servers's `Server`)
//! and runs, case after case, kvbench and then the other tool
//! (`redis-benchmark` for Redis, `memaslap`/`memcaslap` for Memcached) on a
//! 50/50 GET/SET mix of 100-byte values over 100,000 keys:
//!
//! - (a) 1 connection,
//! - (b) 50 connections, no pipelining,
//! - (c) 50 connections, 16 requests in flight per connection.
//!
//! Two rules make the numbers comparable:
//!
//! - **Operations are counted by the server**, never taken from a tool's own
//!   report: Redis `INFO` command statistics (the data commands only, so the
//!   tools' own `INFO`/`CONFIG` calls and our two `INFO` probes drop out),
//!   Memcached `stats` `cmd_get + cmd_set`, read immediately before and after
//!   the tool runs.
//! - **Client CPU is the tool process's whole rusage** (user + system, all
//!   threads), read with `wait4` when it is reaped: start-up, connection set-up
//!   and shutdown included, nothing sampled.
//!
//! It ends with one line per case, `case <a|b|c> <redis|memcached> ratio <R>`,
//! where R = kvbench's client CPU per operation / the other tool's.

mod bare;
mod case;
mod cluster;
mod memtier;

use anyhow::{anyhow, bail, Context, Result};
use case::Tool;
use kvbench_servers::{Protocol, Server, ServerSpec, SystemKind};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The kvbench workload preset used for every kvbench run. `getset` is plain
/// GET/SET of one 100-byte value (the shape of redis-benchmark's test);
/// `balanced` with one 100-byte field is the fallback for builds without it
/// (Redis: HGETALL/HMSET on one-field hashes; Memcached: get/set of a small
/// JSON object). Overridable with `--workload`.
const KVBENCH_WORKLOAD: &str = "getset";
/// Keys in the data set (kvbench `--records`, redis-benchmark `-r`).
const RECORDS: u64 = 100_000;
/// Value size in bytes (kvbench `--field-length` with one field,
/// redis-benchmark `-d`, memaslap's value size).
const VALUE_BYTES: u64 = 100;
/// memaslap key length: about kvbench's (`user` + a 64-bit hash in decimal).
const MEMASLAP_KEY_BYTES: u64 = 24;
/// Memcached's memory limit: memaslap writes a new key with every set, so
/// the item count grows by half the operations of each memaslap run; this
/// keeps every item resident (evictions are checked anyway).
const MEMCACHED_MB: u64 = 2048;
/// Client threads for every tool: redis-benchmark's default is one, so
/// kvbench and memaslap run with one too; the server gets the other core.
const THREADS: u32 = 1;
/// Repetitions of each case by default: pairs run back to back, and the
/// case's ratio is the median of the pairs' ratios, so that one pair
/// disturbed by the shared machine does not decide it.
const DEFAULT_REPEAT: u32 = 5;

#[derive(Debug, Clone, Copy)]
struct Case {
    name: char,
    conns: u32,
    pipeline: u32,
    /// Operations by default: enough that process start-up is negligible,
    /// small enough that the whole run (five repetitions) takes about ten
    /// minutes on 2 cores.
    default_ops: u64,
}

const CASES: [Case; 3] = [
    Case {
        name: 'a',
        conns: 1,
        pipeline: 1,
        default_ops: 150_000,
    },
    Case {
        name: 'b',
        conns: 50,
        pipeline: 1,
        default_ops: 1_000_000,
    },
    Case {
        name: 'c',
        conns: 50,
        pipeline: 16,
        default_ops: 2_000_000,
    },
];

const USAGE: &str = "\
kvbench-efficiency: client CPU per operation, kvbench vs redis-benchmark / memaslap

Usage: kvbench-efficiency [OPTIONS]

Starts one private redis-server (and one memcached), and runs on it, one case
after another, kvbench and the other tool on 50/50 GET/SET, 100-byte values,
100,000 keys: (a) 1 connection, (b) 50 connections, (c) 50 connections with
pipeline 16. Operations are counted by the server, client CPU with wait4.
Ends with one line per case: `case <a|b|c> <redis|memcached> ratio <R>`.

`kvbench-efficiency cluster --help`: the cluster case (kvbench's client CPU
per operation on a 3-master Redis Cluster over the same on one Redis).

Options:
  --kvbench PATH          kvbench binary (default: `kvbench` next to this binary)
  --redis-benchmark PATH  (default: redis-benchmark on PATH)
  --memaslap PATH         (default: memcaslap, else memaslap, on PATH)
  --systems LIST          redis,memcached (default both)
  --cases LIST            a,b,c (default all)
  --ops N | a=N,b=N,c=N   operations per case and tool (default a=150000,
                          b=1000000, c=2000000); rounded down to even
  --workload NAME         kvbench workload (default getset)
  --repeat N              run each case as N pairs of kvbench and the other
                          tool back to back (kvbench first in odd pairs,
                          second in even ones); the ratio is the median of
                          the pairs' ratios (default 5)
  --bare LIST             cases in which each repetition also runs the bare
                          client (kvbench's I/O without kvbench: the floor
                          under any client's CPU per operation), between the
                          two tools: a,b,c or none (default b,c)
  --memtier PATH          also run memtier_benchmark in every case, after the
                          other tool (default: $MEMTIER when set; none is
                          installed here, docs/performance.md says how to
                          build one); adds `case X SYSTEM memtier ratio R`,
                          R = kvbench / memtier_benchmark
  -h, --help              this text

The bare client alone (what each pair of cases b and c runs as `bare`):
  kvbench-efficiency bare --proto redis|memcached --target HOST:PORT --ops N
    --conns C --pipeline P --records R --value-bytes B

A repetition that fails (a tool or the server) runs again, at most twice; a
case whose every repetition failed prints `ratio -` with the reason. kvbench's exit 3
is kept when its only marks say the window was unstable (CPU per operation
stands; the marks are printed).

Exit status: 0 all measured; 1 a case had no pair measured, or the server
failed to start (the ratio lines come first); 2 bad arguments. The same for `bare`: 1 when the run fails
(an error reply, a refused connection, a stall of 10 s).";

struct Opts {
    kvbench: PathBuf,
    redis_benchmark: PathBuf,
    memaslap: Option<PathBuf>,
    systems: Vec<SystemKind>,
    cases: Vec<Case>,
    workload: String,
    repeat: u32,
    /// Cases whose repetitions also run the bare client.
    bare: Vec<char>,
    /// memtier_benchmark, when the user has one.
    memtier: Option<PathBuf>,
}

fn main() {
    // The bare client runs in a child process of its own, so that its CPU
    // is measured exactly as the tools' is.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("bare") {
        let a = match bare::parse(&args[1..]) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("kvbench-efficiency bare: {e:#}");
                std::process::exit(2);
            }
        };
        match bare::run(&a) {
            Ok(n) => println!("bare client: {n} replies"),
            Err(e) => {
                eprintln!("kvbench-efficiency bare: {e:#}");
                std::process::exit(1);
            }
        }
        return;
    }
    if args.first().map(String::as_str) == Some("cluster") {
        let a = match cluster::parse(&args[1..]) {
            Ok(Some(a)) => a,
            Ok(None) => {
                println!("{}", cluster::usage());
                return;
            }
            Err(e) => {
                eprintln!("kvbench-efficiency cluster: {e:#}");
                std::process::exit(2);
            }
        };
        if let Err(e) = cluster::run(&a) {
            eprintln!("kvbench-efficiency cluster: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    let opts = match parse_args(std::env::args().skip(1).collect()) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("kvbench-efficiency: {e:#}\n(see --help)");
            std::process::exit(2);
        }
    };
    match run(&opts) {
        Ok(()) => {}
        Err(e) => {
            let _ = io::stdout().flush();
            // One line: the context chain joined, newlines flattened.
            let msg = format!("{e:#}").replace('\n', " | ");
            eprintln!("kvbench-efficiency: error: {msg}");
            std::process::exit(1);
        }
    }
}

fn parse_args(args: Vec<String>) -> Result<Option<Opts>> {
    let mut kvbench = None;
    let mut redis_benchmark = PathBuf::from("redis-benchmark");
    let mut memaslap = None;
    let mut systems = vec![SystemKind::Redis, SystemKind::Memcached];
    let mut case_names: Vec<char> = CASES.iter().map(|c| c.name).collect();
    let mut ops: BTreeMap<char, u64> = CASES.iter().map(|c| (c.name, c.default_ops)).collect();
    let mut workload = KVBENCH_WORKLOAD.to_string();
    let mut repeat = DEFAULT_REPEAT;
    let mut bare_cases = vec!['b', 'c'];
    let mut memtier = None;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if flag == "-h" || flag == "--help" {
            return Ok(None);
        }
        let mut value = || -> Result<String> {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| anyhow!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--kvbench" => kvbench = Some(PathBuf::from(value()?)),
            "--redis-benchmark" => redis_benchmark = PathBuf::from(value()?),
            "--memaslap" => memaslap = Some(PathBuf::from(value()?)),
            "--memtier" => memtier = Some(PathBuf::from(value()?)),
            "--workload" => workload = value()?,
            "--repeat" => {
                let v = value()?;
                repeat =
                    v.trim().parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                        anyhow!("--repeat: expected a whole number >= 1, got `{v}`")
                    })?;
            }
            "--bare" => {
                let v = value()?;
                bare_cases = if v.trim() == "none" {
                    Vec::new()
                } else {
                    case_list("--bare", &v, "a, b, c, none")?
                };
            }
            "--systems" => {
                systems = value()?
                    .split(',')
                    .map(|s| match s.trim().parse::<SystemKind>() {
                        Ok(k @ (SystemKind::Redis | SystemKind::Memcached)) => Ok(k),
                        _ => Err(anyhow!(
                            "--systems: unknown system `{s}` (redis, memcached)"
                        )),
                    })
                    .collect::<Result<_>>()?;
            }
            "--cases" => case_names = case_list("--cases", &value()?, "a, b, c")?,
            "--ops" => {
                let v = value()?;
                if let Ok(n) = v.trim().parse::<u64>() {
                    ops.values_mut().for_each(|o| *o = n);
                } else {
                    for part in v.split(',') {
                        let (c, n) = part.split_once('=').ok_or_else(|| {
                            anyhow!("--ops: expected N or a=N,b=N,c=N, got `{v}`")
                        })?;
                        let c = case_letter(c)
                            .ok_or_else(|| anyhow!("--ops: unknown case `{}`", c.trim()))?;
                        let n: u64 = n
                            .trim()
                            .parse()
                            .map_err(|_| anyhow!("--ops: `{n}` is not a number"))?;
                        ops.insert(c, n);
                    }
                }
            }
            other => bail!("unknown argument `{other}`"),
        }
    }
    let mut cases = Vec::new();
    for case in CASES.iter().filter(|c| case_names.contains(&c.name)) {
        // redis-benchmark runs N/2 SETs then N/2 GETs: N must be even.
        let n = ops[&case.name] / 2 * 2;
        if n < 2 * u64::from(case.conns) {
            bail!(
                "--ops: case {} needs at least {} operations",
                case.name,
                2 * case.conns
            );
        }
        cases.push(Case {
            default_ops: n,
            ..*case
        });
    }
    let kvbench = match kvbench {
        Some(p) => p,
        None => sibling("kvbench")?,
    };
    Ok(Some(Opts {
        kvbench,
        redis_benchmark,
        memaslap,
        systems,
        cases,
        workload,
        repeat,
        bare: bare_cases,
        memtier: memtier::locate(memtier),
    }))
}

/// The case named `s` (`a`, `b` or `c`; surrounding spaces ignored).
fn case_letter(s: &str) -> Option<char> {
    match s.trim() {
        c @ ("a" | "b" | "c") => c.chars().next(),
        _ => None,
    }
}

/// A comma-separated list of cases given to `flag`; `names` is what the
/// error lists as accepted.
fn case_list(flag: &str, v: &str, names: &str) -> Result<Vec<char>> {
    v.split(',')
        .map(|s| {
            case_letter(s).ok_or_else(|| anyhow!("{flag}: unknown case `{}` ({names})", s.trim()))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Running a tool and measuring its CPU exactly

/// A finished child process.
struct ToolRun {
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    /// `exit status N`, `killed by signal N` or `wait status 0x..`.
    status: String,
    /// The exit code, when the tool exited.
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl ToolRun {
    fn success(&self) -> bool {
        self.code == Some(0)
    }

    fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }

    /// The last non-empty line of stderr (else stdout), for error messages.
    fn last_words(&self) -> String {
        [&self.stderr, &self.stdout]
            .iter()
            .flat_map(|s| {
                s.split(['\n', '\r'])
                    .map(str::trim)
                    .rfind(|l| !l.is_empty())
            })
            .next()
            .unwrap_or("no output")
            .to_string()
    }
}

/// Spawns `program args`, with stdout/stderr to files in `dir` (a pipe could
/// fill up while we sit in wait4), and reaps it with `wait4` to get its own
/// rusage: user + system time of all its threads, microsecond resolution.
/// Wall time runs from just before the spawn to just after the reap.
fn run_tool(program: &Path, args: &[String], dir: &Path, label: &str) -> Result<ToolRun> {
    let out_path = dir.join(format!("{label}.stdout"));
    let err_path = dir.join(format!("{label}.stderr"));
    let out = std::fs::File::create(&out_path)
        .with_context(|| format!("create {}", out_path.display()))?;
    let err = std::fs::File::create(&err_path)
        .with_context(|| format!("create {}", err_path.display()))?;
    let start = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .with_context(|| format!("start {}", program.display()))?;
    let pid = libc::pid_t::try_from(child.id()).context("child pid out of range")?;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; wait4 fills it on success.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a c_int and a rusage; pid is our child,
        // which nothing else waits for (`child` is never waited on).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e).with_context(|| format!("wait4 for {}", program.display()));
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    // Already reaped: dropping `Child` neither waits nor kills.
    drop(child);
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let (status_text, code) = if libc::WIFEXITED(status) {
        let code = libc::WEXITSTATUS(status);
        (format!("exit status {code}"), Some(code))
    } else if libc::WIFSIGNALED(status) {
        (format!("killed by signal {}", libc::WTERMSIG(status)), None)
    } else {
        (format!("wait status {status:#x}"), None)
    };
    Ok(ToolRun {
        wall_s,
        user_s: tv(usage.ru_utime),
        sys_s: tv(usage.ru_stime),
        status: status_text,
        code,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    })
}

// ---------------------------------------------------------------------------
// Counting operations at the server

/// What the server counted between two snapshots.
#[derive(Debug, Default)]
struct ServerCount {
    /// Data operations: Redis data commands (everything but the
    /// administrative ones below), Memcached `cmd_get + cmd_set`.
    ops: u64,
    /// Per data command.
    by_cmd: BTreeMap<String, u64>,
    /// Redis: other commands (INFO, CONFIG, ...; includes one of our two INFO
    /// probes). Memcached: 0.
    other: u64,
    /// Reads that found nothing: Redis `keyspace_misses`, Memcached `get_misses`.
    misses: u64,
    /// Redis `total_error_replies`; Memcached: not counted (0).
    errors: u64,
    /// `evicted_keys` / `evictions`.
    evictions: u64,
}

/// Redis commands that are not data operations (first part of a
/// `cmdstat_` name, before any `|` subcommand).
const REDIS_NON_DATA: &[&str] = &[
    "info", "config", "ping", "client", "hello", "select", "command", "dbsize", "flushall",
    "flushdb", "debug", "memory", "time", "echo", "auth", "quit", "reset", "slowlog", "latency",
    "lastsave", "save", "bgsave", "module", "acl", "cluster", "role", "monitor", "readonly",
];

impl ServerCount {
    /// Adds another server's count (a cluster's masters).
    fn add(&mut self, o: ServerCount) {
        self.ops += o.ops;
        for (k, v) in o.by_cmd {
            *self.by_cmd.entry(k).or_default() += v;
        }
        self.other += o.other;
        self.misses += o.misses;
        self.errors += o.errors;
        self.evictions += o.evictions;
    }
}

fn num(map: &BTreeMap<String, String>, key: &str) -> u64 {
    map.get(key)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn redis_calls(map: &BTreeMap<String, String>) -> BTreeMap<String, u64> {
    map.iter()
        .filter_map(|(k, v)| kvbench_servers::cmdstat(k, v, "calls"))
        .map(|(name, calls)| (name.to_string(), calls))
        .collect()
}

fn count(
    system: SystemKind,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> ServerCount {
    let d = |key: &str| num(after, key).saturating_sub(num(before, key));
    match system.protocol() {
        Protocol::Resp => {
            // A command is counted after it ran, so the INFO that took
            // `before` is in the delta and the one that took `after` is not.
            let total = d("total_commands_processed");
            let (b, a) = (redis_calls(before), redis_calls(after));
            let mut by_cmd = BTreeMap::new();
            for (name, calls) in &a {
                let delta = calls.saturating_sub(b.get(name).copied().unwrap_or(0));
                let base = name.split('|').next().unwrap_or(name);
                if delta > 0 && !REDIS_NON_DATA.contains(&base) {
                    by_cmd.insert(name.clone(), delta);
                }
            }
            let ops: u64 = by_cmd.values().sum();
            ServerCount {
                ops,
                other: total.saturating_sub(ops),
                by_cmd,
                misses: d("keyspace_misses"),
                errors: d("total_error_replies"),
                evictions: d("evicted_keys"),
            }
        }
        Protocol::Memcache => {
            let (gets, sets) = (d("cmd_get"), d("cmd_set"));
            ServerCount {
                ops: gets + sets,
                by_cmd: [("get".to_string(), gets), ("set".to_string(), sets)].into(),
                other: 0,
                misses: d("get_misses"),
                errors: 0,
                evictions: d("evictions"),
            }
        }
        Protocol::Aerospike => unreachable!("{ONLY_TWO}"),
    }
}

/// `--systems` admits only these two: the references this benchmark runs
/// beside kvbench are redis-benchmark and memaslap.
const ONLY_TWO: &str = "the efficiency benchmark runs Redis and Memcached only";

// ---------------------------------------------------------------------------
// One measurement: a tool run bracketed by two server snapshots

struct Measurement {
    tool: &'static str,
    threads: u32,
    /// Operations the tool was asked for.
    asked: u64,
    count: ServerCount,
    run: ToolRun,
    notes: Vec<String>,
}

impl Measurement {
    fn cpu_per_million(&self) -> f64 {
        self.run.cpu_s() / self.count.ops as f64 * 1e6
    }

    /// User and system CPU seconds per million operations (the kernel's
    /// `wait4` split): a client's own work is user time, the I/O it asks
    /// of the kernel system time.
    fn split_per_million(&self) -> (f64, f64) {
        let per = |s: f64| s / self.count.ops as f64 * 1e6;
        (per(self.run.user_s), per(self.run.sys_s))
    }
}

struct Ctx<'a> {
    opts: &'a Opts,
    /// Where the operations are counted: one server, or every master of a
    /// cluster (`cluster`), whose counts are summed.
    servers: Vec<&'a Server>,
    cluster: bool,
    dir: &'a Path,
    memaslap: Option<&'a Path>,
}

impl Ctx<'_> {
    fn system(&self) -> SystemKind {
        self.server().system()
    }

    /// The server, or a cluster's first master (its seed).
    fn server(&self) -> &Server {
        self.servers[0]
    }

    /// kvbench's `--target`.
    fn target(&self) -> String {
        if self.cluster {
            let seeds: Vec<String> = self.servers.iter().map(|s| s.addr().to_string()).collect();
            format!("redis-cluster://{}", seeds.join(","))
        } else {
            self.server().addr().to_string()
        }
    }

    fn snapshot(&self) -> Result<Vec<BTreeMap<String, String>>> {
        self.servers
            .iter()
            .map(|s| s.info().map_err(anyhow::Error::from))
            .collect()
    }

    fn measure_tool(&self, tool: Tool, case: &Case) -> Result<Measurement> {
        match tool {
            Tool::Kvbench => self.kvbench(case),
            Tool::Bare => self.bare(case),
            Tool::Other => match self.system().protocol() {
                Protocol::Resp => self.redis_benchmark(case),
                Protocol::Memcache => self.memaslap(case),
                Protocol::Aerospike => unreachable!("{ONLY_TWO}"),
            },
            Tool::Memtier => self.memtier(case),
        }
    }

    /// Runs one tool between two server snapshots. Fails, naming the tool
    /// and case, when the tool fails or the server counted nothing.
    fn measure(
        &self,
        case: &Case,
        tool: &'static str,
        program: &Path,
        args: &[String],
        threads: u32,
    ) -> Result<Measurement> {
        let sys = self.system();
        let what = format!("{tool} (case {} {sys})", case.name);
        let before = self
            .snapshot()
            .with_context(|| format!("{what}: {sys} INFO/stats before the run"))?;
        let run = run_tool(
            program,
            args,
            self.dir,
            &format!("{}-{sys}-{tool}", case.name),
        )
        .with_context(|| format!("{what} could not be run"))?;
        let after = self
            .snapshot()
            .with_context(|| format!("{what}: {sys} INFO/stats after the run"))?;
        // CPU per operation is what this bench measures, and a window whose
        // throughput held two levels or drifted (kvbench's `unstable` marks,
        // exit 3) still measured it: the run counts, its marks printed.
        let stability_only = (tool == "kvbench" && run.code == Some(3))
            .then(|| stability_marks(&run.stdout))
            .flatten();
        if let Some(marks) = &stability_only {
            for m in marks {
                println!("      {what}: kept (CPU per operation stands): {m}");
            }
        }
        if !run.success() && stability_only.is_none() {
            let mut why = run.last_words();
            if tool == "kvbench" {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&run.stdout) {
                    if let Some(f) = v.get("failure").and_then(|f| f.as_str()) {
                        why = f.to_string();
                    } else if let Some(m) = v
                        .get("marks")
                        .filter(|m| m.as_array().is_some_and(|a| !a.is_empty()))
                    {
                        why = format!("run marked invalid: {m}");
                    }
                }
            }
            bail!("{what} failed ({}): {why}", run.status);
        }
        let mut total = ServerCount::default();
        for (b, a) in before.iter().zip(&after) {
            total.add(count(sys, b, a));
        }
        let count = total;
        if count.ops == 0 {
            bail!(
                "{what}: the server counted no operations (tool said: {})",
                run.last_words()
            );
        }
        Ok(Measurement {
            tool,
            threads,
            asked: case.default_ops,
            count,
            run,
            notes: Vec::new(),
        })
    }

    fn kvbench_args(&self, case: Option<&Case>) -> Vec<String> {
        let db = self.dir.join("kv.db");
        let mut a: Vec<String> = vec![
            "run".into(),
            "--system".into(),
            self.system().to_string(),
            "--target".into(),
            self.target(),
            "--workload".into(),
            self.opts.workload.clone(),
            "--records".into(),
            RECORDS.to_string(),
            "--field-count".into(),
            "1".into(),
            "--field-length".into(),
            VALUE_BYTES.to_string(),
        ];
        match case {
            None => a.extend(["--operations", "1", "--clients", "1"].map(String::from)),
            Some(c) => {
                let threads = THREADS.min(c.conns);
                // A cluster client's pipeline spans its connection to every
                // master: this many in flight per connection, as memtier's.
                let masters = u32::try_from(self.servers.len()).unwrap_or(1);
                a.extend([
                    "--no-load".to_string(),
                    "--operations".into(),
                    c.default_ops.to_string(),
                    "--clients".into(),
                    c.conns.to_string(),
                    "--pipeline".into(),
                    (c.pipeline * masters).to_string(),
                    "--threads".into(),
                    threads.to_string(),
                    "--json".into(),
                ]);
            }
        }
        a.extend(["--warmup", "0s", "--quiet", "--db"].map(String::from));
        a.push(db.display().to_string());
        a
    }

    /// Loads the 100,000 records once, with kvbench (not measured).
    fn load(&self) -> Result<f64> {
        let args = self.kvbench_args(None);
        let run = run_tool(
            &self.opts.kvbench,
            &args,
            self.dir,
            &format!("load-{}", self.system()),
        )
        .with_context(|| format!("kvbench load ({}) could not be run", self.system()))?;
        if !run.success() {
            bail!(
                "kvbench load ({}) failed ({}): {}",
                self.system(),
                run.status,
                run.last_words()
            );
        }
        Ok(run.wall_s)
    }

    /// Fills redis-benchmark's key space (`key:000000000000`..`key:000000099999`)
    /// before any measured run, so its GETs find values as kvbench's do
    /// (not measured): 1,000,000 random SETs leave about 0.005% of the
    /// 100,000 keys unset. Returns the keys in db0 afterwards.
    fn preload_redis_benchmark(&self) -> Result<u64> {
        let addr = self.server().addr();
        let args: Vec<String> = [
            "-h",
            &addr.ip().to_string(),
            "-p",
            &addr.port().to_string(),
            "-c",
            "50",
            "-n",
            "1000000",
            "-P",
            "16",
            "-t",
            "set",
            "-d",
            &VALUE_BYTES.to_string(),
            "-r",
            &RECORDS.to_string(),
            "-q",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        let run = run_tool(
            &self.opts.redis_benchmark,
            &args,
            self.dir,
            "preload-redis-benchmark",
        )
        .context("redis-benchmark preload could not be run")?;
        if !run.success() {
            bail!(
                "redis-benchmark preload failed ({}): {}",
                run.status,
                run.last_words()
            );
        }
        let info = self
            .server()
            .info()
            .context("redis INFO after the redis-benchmark preload")?;
        Ok(info
            .get("db0")
            .and_then(|v| v.split(',').find_map(|kv| kv.strip_prefix("keys=")))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0))
    }

    fn kvbench(&self, case: &Case) -> Result<Measurement> {
        let threads = THREADS.min(case.conns);
        let args = self.kvbench_args(Some(case));
        let mut m = self.measure(case, "kvbench", &self.opts.kvbench, &args, threads)?;
        let v: serde_json::Value = serde_json::from_str(&m.run.stdout).with_context(|| {
            format!(
                "kvbench (case {} {}): its --json output is not JSON",
                case.name,
                self.system()
            )
        })?;
        let f = |path: &[&str]| {
            let mut x = &v;
            for p in path {
                x = x.get(*p)?;
            }
            x.as_f64()
        };
        let mut note = String::from("kvbench's own report:");
        if let Some(t) = f(&["run", "throughput"]) {
            let _ = write!(note, " run.throughput {t:.0} ops/s");
        }
        if let (Some(c), Some(d)) = (f(&["run", "completed"]), f(&["run", "duration_s"])) {
            let _ = write!(note, ", {c:.0} completed in {d:.2} s");
        }
        if let Some(c) = f(&["cpu", "client_seconds"]) {
            let _ = write!(
                note,
                ", in-window CPU {c:.2} s (getrusage), {:.2} s outside the window",
                m.run.cpu_s() - c
            );
        }
        m.notes.push(note);
        for w in v
            .get("warnings")
            .and_then(|w| w.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(w) = w["text"].as_str() {
                m.notes.push(format!("kvbench warning: {w}"));
            }
        }
        Ok(m)
    }

    /// The bare client (see `bare.rs`) on this server and case.
    fn bare(&self, case: &Case) -> Result<Measurement> {
        let exe = std::env::current_exe().context("locate this binary for the bare client")?;
        let proto = match self.system().protocol() {
            Protocol::Resp => "redis",
            Protocol::Memcache => "memcached",
            Protocol::Aerospike => unreachable!("{ONLY_TWO}"),
        };
        let args: Vec<String> = [
            "bare",
            "--proto",
            proto,
            "--target",
            &self.server().addr().to_string(),
            "--ops",
            &case.default_ops.to_string(),
            "--conns",
            &case.conns.to_string(),
            "--pipeline",
            &case.pipeline.to_string(),
            "--records",
            &RECORDS.to_string(),
            "--value-bytes",
            &VALUE_BYTES.to_string(),
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        self.measure(case, "bare", &exe, &args, 1)
    }

    fn redis_benchmark(&self, case: &Case) -> Result<Measurement> {
        let addr = self.server().addr();
        let args: Vec<String> = vec![
            "-h".into(),
            addr.ip().to_string(),
            "-p".into(),
            addr.port().to_string(),
            "-c".into(),
            case.conns.to_string(),
            "-n".into(),
            (case.default_ops / 2).to_string(),
            "-P".into(),
            case.pipeline.to_string(),
            "-t".into(),
            "set,get".into(),
            "-d".into(),
            VALUE_BYTES.to_string(),
            "-r".into(),
            RECORDS.to_string(),
            "-q".into(),
        ];
        let mut m = self.measure(
            case,
            "redis-benchmark",
            &self.opts.redis_benchmark,
            &args,
            1,
        )?;
        // Its own summary lines: `SET: 72124.05 requests per second, p50=...`.
        let own: Vec<String> = m
            .run
            .stdout
            .split(['\r', '\n'])
            .filter_map(|l| {
                let (test, rest) = l.trim().split_once(": ")?;
                let rps = rest
                    .strip_suffix(" requests per second")
                    .or_else(|| rest.split_once(" requests per second,").map(|p| p.0))?;
                Some(format!("{test} {rps} req/s"))
            })
            .collect();
        if !own.is_empty() {
            m.notes.push(format!(
                "redis-benchmark's own report: {} (SET phase, then GET phase)",
                own.join(", ")
            ));
        }
        Ok(m)
    }

    fn memaslap(&self, case: &Case) -> Result<Measurement> {
        let program = self.memaslap.unwrap_or(Path::new("memcaslap"));
        let cfg = self.dir.join("memaslap.cfg");
        // Key and value sizes fixed, set:get 50:50 (cmd type 0 = set, 1 = get).
        let text = format!(
            "key\n{k} {k} 1\nvalue\n{v} {v} 1\ncmd\n0 0.5\n1 0.5\n",
            k = MEMASLAP_KEY_BYTES,
            v = VALUE_BYTES
        );
        std::fs::write(&cfg, text).with_context(|| format!("write {}", cfg.display()))?;
        let threads = THREADS.min(case.conns);
        // Each connection cycles over its own window of keys: together about
        // 100,000. memaslap takes the window only with a K/M suffix.
        let window_k = (RECORDS / 1000).div_ceil(u64::from(case.conns));
        let args: Vec<String> = vec![
            "-s".into(),
            self.server().addr().to_string(),
            "-F".into(),
            cfg.display().to_string(),
            "-T".into(),
            threads.to_string(),
            "-c".into(),
            case.conns.to_string(),
            "-x".into(),
            case.default_ops.to_string(),
            "-w".into(),
            format!("{window_k}k"),
        ];
        let mut m = self.measure(case, "memaslap", program, &args, threads)?;
        if let Some(line) = m.run.stdout.lines().find(|l| l.starts_with("Run time:")) {
            m.notes
                .push(format!("memaslap's own report: {}", line.trim()));
        }
        Ok(m)
    }

    fn memtier_program(&self) -> Result<&Path> {
        self.opts
            .memtier
            .as_deref()
            .ok_or_else(|| anyhow!("no memtier_benchmark: pass --memtier PATH or set MEMTIER"))
    }

    fn memtier_shape(&self, conns: u32, pipeline: u32) -> memtier::Shape<'static> {
        let addr = self.server().addr();
        memtier::Shape {
            protocol: match self.system().protocol() {
                Protocol::Memcache => "memcache_text",
                _ => "redis",
            },
            host: addr.ip().to_string(),
            port: addr.port(),
            cluster: self.cluster,
            conns,
            pipeline,
            records: RECORDS,
            value_bytes: VALUE_BYTES,
        }
    }

    fn memtier(&self, case: &Case) -> Result<Measurement> {
        let shape = self.memtier_shape(case.conns, case.pipeline);
        let args = shape.run_args(case.default_ops);
        let mut m = self.measure(case, "memtier", self.memtier_program()?, &args, 1)?;
        m.asked = shape.asked(case.default_ops);
        if let Some(line) = m.run.stdout.lines().find(|l| l.starts_with("Totals")) {
            let own: Vec<&str> = line.split_whitespace().take(2).collect();
            m.notes.push(format!(
                "memtier_benchmark's own report: {} ops/s",
                own.get(1).unwrap_or(&"?")
            ));
        }
        Ok(m)
    }

    /// Fills memtier's key space (not measured), as redis-benchmark's is.
    fn fill_memtier(&self) -> Result<()> {
        let program = self.memtier_program()?;
        let run = run_tool(
            program,
            &self.memtier_shape(1, 64).fill_args(),
            self.dir,
            &format!("fill-memtier-{}", self.system()),
        )
        .context("memtier_benchmark fill could not be run")?;
        if !run.success() {
            bail!(
                "memtier_benchmark fill failed ({}): {}",
                run.status,
                run.last_words()
            );
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Output

fn table_header() {
    println!(
        "{:<4} {:<16} {:>5} {:>4} {:>3} {:>11} {:>8} {:>11} {:>12} {:>12} {:>8}",
        "case",
        "tool",
        "conns",
        "pipe",
        "thr",
        "ops(server)",
        "wall s",
        "ops/s(wall)",
        "client CPU s",
        "CPU s/1M ops",
        "misses"
    );
}

fn print_row(case: &Case, rep: u32, m: &Measurement) {
    println!(
        "{:<4} {:<16} {:>5} {:>4} {:>3} {:>11} {:>8.2} {:>11.0} {:>12.2} {:>12.2} {:>8}",
        format!("{}{rep}", case.name),
        m.tool,
        case.conns,
        case.pipeline,
        m.threads,
        m.count.ops,
        m.run.wall_s,
        m.count.ops as f64 / m.run.wall_s,
        m.run.cpu_s(),
        m.cpu_per_million(),
        m.count.misses
    );
    let cmds: Vec<String> = m
        .count
        .by_cmd
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let mut server = format!(
        "       server counted: {}; other commands {}; errors {}; evictions {}; CPU user {:.2} s + sys {:.2} s",
        cmds.join(", "),
        m.count.other,
        m.count.errors,
        m.count.evictions,
        m.run.user_s,
        m.run.sys_s
    );
    if m.count.ops.abs_diff(m.asked) * 100 > m.asked {
        let _ = write!(
            server,
            "; WARNING: asked for {} operations, the server counted {}",
            m.asked, m.count.ops
        );
    }
    println!("{server}");
    for n in &m.notes {
        println!("       {n}");
    }
    let _ = io::stdout().flush();
}

/// `name` in this binary's directory (where cargo puts kvbench beside it).
fn sibling(name: &str) -> Result<PathBuf> {
    std::env::current_exe()
        .context("locate this binary")?
        .parent()
        .map(|d| d.join(name))
        .ok_or_else(|| anyhow!("no directory for this binary; pass --kvbench"))
}

/// The median of `xs` (the mean of the middle two for an even count).
fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => xs[n / 2],
        _ => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// The median of `xs`, when there is one.
fn median_of(mut xs: Vec<f64>) -> Option<f64> {
    (!xs.is_empty()).then(|| median(&mut xs))
}

/// A case's last lines.
struct Final {
    case: char,
    system: SystemKind,
    outcome: Outcome,
    kvbench_bare: Option<f64>,
    /// kvbench / memtier_benchmark.
    memtier: Option<f64>,
}

enum Outcome {
    Ratio(f64),
    Skipped(String),
    /// Every pair failed, even after its retries: the last reason.
    Failed(String),
}

/// The marks of a kvbench `--json` record when every one of them is a
/// stability mark (`unstable: ...`); `None` when there is another (errors,
/// misses, a cut-short window...) or the output is not a record.
pub(crate) fn stability_marks(stdout: &str) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(stdout).ok()?;
    if v.get("failure").is_some_and(|f| !f.is_null()) {
        return None;
    }
    let marks = v.get("marks")?.as_array()?;
    let unstable = marks.iter().all(|m| m["kind"] == "unstable");
    let texts: Vec<String> = marks
        .iter()
        .map(|m| m["text"].as_str().map(String::from))
        .collect::<Option<_>>()?;
    (!marks.is_empty() && unstable).then_some(texts)
}

fn tool_version(program: &Path, arg: &str) -> String {
    Command::new(program)
        .arg(arg)
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.stdout).to_string()
                + &String::from_utf8_lossy(&o.stderr);
            text.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("?")
                .to_string()
        })
        .unwrap_or_else(|| "not runnable".to_string())
}

fn find_memaslap(opts: &Opts) -> Option<PathBuf> {
    if let Some(p) = &opts.memaslap {
        return Some(p.clone());
    }
    let path = std::env::var_os("PATH")?;
    ["memcaslap", "memaslap"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn run(opts: &Opts) -> Result<()> {
    if !opts.kvbench.is_file() {
        bail!(
            "kvbench binary {} not found: build it (cargo build --release -p kvbench) or pass --kvbench PATH",
            opts.kvbench.display()
        );
    }
    let memaslap = find_memaslap(opts);
    print_preamble(opts, memaslap.as_deref())?;
    let dir = tempfile::Builder::new()
        .prefix("kvbench-efficiency-")
        .tempdir()
        .context("create a temporary directory")?;
    let mut finals: Vec<Final> = Vec::new();
    for &system in &opts.systems {
        finals.extend(run_system(opts, system, dir.path(), memaslap.as_deref())?);
    }
    println!();
    println!("load average at end: {}", loadavg());
    print_finals(&finals);
    let failed = finals
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Failed(_)))
        .count();
    if failed > 0 {
        bail!("{failed} case(s) had no repetition measured (their lines above say why)");
    }
    Ok(())
}

/// What the run measures, with what, and how: the lines before the first
/// system's table.
fn print_preamble(opts: &Opts, memaslap: Option<&Path>) -> Result<()> {
    let env = kvbench_servers::machine_environment();
    println!("kvbench efficiency: client CPU per operation, kvbench vs redis-benchmark / memaslap");
    println!(
        "machine: {} ({} cores visible), {:.1} GiB RAM, kernel {}, host {}",
        env.cpu_model,
        env.cores,
        env.memory_bytes as f64 / (1u64 << 30) as f64,
        env.kernel,
        env.host
    );
    println!("load average at start: {}", loadavg());
    println!(
        "kvbench:         {} ({})",
        opts.kvbench.display(),
        tool_version(&opts.kvbench, "--version")
    );
    if opts.systems.contains(&SystemKind::Redis) {
        println!(
            "redis-benchmark: {} ({})",
            opts.redis_benchmark.display(),
            tool_version(&opts.redis_benchmark, "--version")
        );
    }
    if opts.systems.contains(&SystemKind::Memcached) {
        match memaslap {
            Some(p) => println!("memaslap:        {} ({})", p.display(), tool_version(p, "-V")),
            None => bail!("memaslap not found (memcaslap or memaslap on PATH; apt-get install libmemcached-tools) or pass --memaslap PATH"),
        }
    }
    if let Some(p) = &opts.memtier {
        println!("memtier:         {}", memtier::describe(p)?);
    }
    println!(
        "workload: 50/50 GET/SET, {VALUE_BYTES}-byte values, {RECORDS} keys; kvbench --workload {} --field-count 1 --field-length {VALUE_BYTES}",
        opts.workload
    );
    let cases: Vec<String> = opts
        .cases
        .iter()
        .map(|c| {
            format!(
                "({}) {} conn, pipeline {}, {} ops",
                c.name, c.conns, c.pipeline, c.default_ops
            )
        })
        .collect();
    println!("cases: {}", cases.join("; "));
    println!(
        "every tool runs {THREADS} client thread; each case runs {} pair(s), kvbench first in odd pairs, the other tool first in even ones; the case's ratio is the median of the pairs' ratios",
        opts.repeat
    );
    if !opts.bare.is_empty() {
        let cases: Vec<String> = opts.bare.iter().map(char::to_string).collect();
        println!(
            "cases {}: each pair also runs the bare client (kvbench's I/O without kvbench's work: the floor) between the two tools",
            cases.join(", ")
        );
    }
    println!("ops = data operations counted by the server; wall s includes the tool's start-up and exit;");
    println!("client CPU s = user + system time of the tool process (wait4 rusage, all threads, whole process).");
    Ok(())
}

/// Starts one private server of `system`, loads it, and runs every case
/// against it.
fn run_system(
    opts: &Opts,
    system: SystemKind,
    dir: &Path,
    memaslap: Option<&Path>,
) -> Result<Vec<Final>> {
    let spec = ServerSpec {
        system,
        binary: None,
        memory_limit_mb: (system == SystemKind::Memcached).then_some(MEMCACHED_MB),
        eviction: None,
        extra_args: Vec::new(),
    };
    let server = Server::start(&spec).with_context(|| format!("start {system}"))?;
    let version = server
        .version()
        .with_context(|| format!("{system} version"))?;
    println!();
    println!(
        "== {system} {}{} at {} (pid {}), one server for every case and both tools ==",
        version.version,
        version
            .allocator
            .map(|a| format!(" ({a})"))
            .unwrap_or_default(),
        server.addr(),
        server.pid()
    );
    let settings: Vec<String> = server
        .settings()
        .iter()
        .map(|s| {
            if s.value.is_empty() {
                format!("{} \"\"", s.name)
            } else {
                format!("{} {}", s.name, s.value)
            }
        })
        .collect();
    if !settings.is_empty() {
        println!("settings: {}", settings.join(", "));
    }
    let ctx = Ctx {
        opts,
        servers: vec![&server],
        cluster: false,
        dir,
        memaslap,
    };
    let load_s = ctx.load()?;
    println!("loaded {RECORDS} records with kvbench in {load_s:.2} s (not measured)");
    if system == SystemKind::Redis {
        let keys = ctx.preload_redis_benchmark()?;
        println!(
            "filled redis-benchmark's key space with 1,000,000 random SETs (not measured): db0 now holds {keys} keys"
        );
    }
    if opts.memtier.is_some() {
        ctx.fill_memtier()?;
        println!(
            "filled memtier_benchmark's key space (memtier-1 .. memtier-{RECORDS}) once (not measured)"
        );
    }
    table_header();
    let finals = opts
        .cases
        .iter()
        .map(|case| run_case(&ctx, system, case))
        .collect();
    server.stop().with_context(|| format!("stop {system}"))?;
    Ok(finals)
}

/// One case's pairs against `system`'s server, and what they came to.
fn run_case(ctx: &Ctx<'_>, system: SystemKind, case: &Case) -> Final {
    let opts = ctx.opts;
    // memaslap cannot pipeline: the case runs without it, and its
    // line says so.
    let no_other = (system == SystemKind::Memcached && case.pipeline > 1).then(|| {
        format!(
            "memaslap cannot pipeline (each connection waits for its reply; -d only batches GETs into one multi-get), so pipeline {} has no memaslap equivalent",
            case.pipeline
        )
    });
    let mut tools = vec![Tool::Kvbench];
    if opts.bare.contains(&case.name) {
        tools.push(Tool::Bare);
    }
    if no_other.is_none() {
        tools.push(Tool::Other);
    }
    if opts.memtier.is_some() {
        tools.push(Tool::Memtier);
    }
    let f = case::run(ctx, case, &tools, opts.repeat);
    // With the other tool in every measured repetition, no ratio
    // means no repetition was measured.
    let outcome = match (f.other, no_other) {
        (Some((m, _, _)), _) => Outcome::Ratio(m),
        (None, Some(why)) if f.measured > 0 || tools.len() == 1 => {
            println!("  ->  case {} {system}: {why}", case.name);
            Outcome::Skipped(why)
        }
        _ => Outcome::Failed(f.failure.unwrap_or_else(|| "no repetition measured".into())),
    };
    Final {
        case: case.name,
        system,
        outcome,
        kvbench_bare: f.kvbench_bare,
        memtier: f.memtier,
    }
}

/// The closing lines, one per case and system, that scripts read.
fn print_finals(finals: &[Final]) {
    println!("ratio = kvbench client CPU per operation / the other tool's, median over the repetitions (goals: (b) <= 0.5, (c) <= 0.7)");
    for f in finals {
        let (case, system) = (f.case, f.system);
        match &f.outcome {
            Outcome::Ratio(r) => println!("case {case} {system} ratio {r:.2}"),
            Outcome::Skipped(why) => println!("case {case} {system} skipped: {why}"),
            Outcome::Failed(why) => {
                println!("case {case} {system} ratio - (every repetition failed: {why})")
            }
        }
        if let Some(kb) = f.kvbench_bare {
            println!("case {case} {system} kvbench/bare {kb:.3}");
        }
        if let Some(km) = f.memtier {
            println!("case {case} {system} memtier ratio {km:.2}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::stability_marks;

    #[test]
    fn only_a_run_marked_unstable_and_nothing_else_is_kept() {
        let unstable = r#"{"failure":null,"marks":[{"kind":"unstable","text":"unstable: per-second throughput drifted from 90000 to 70000 ops/s"}]}"#;
        assert_eq!(
            stability_marks(unstable),
            Some(vec![
                "unstable: per-second throughput drifted from 90000 to 70000 ops/s".to_string()
            ])
        );
        for not_kept in [
            r#"{"failure":null,"marks":[{"kind":"unstable","text":"unstable: x"},{"kind":"errors","text":"errors: 3 operations failed (3 io)"}]}"#,
            r#"{"failure":"every connection failed","marks":[{"kind":"unstable","text":"unstable: x"}]}"#,
            r#"{"failure":null,"marks":[]}"#,
            r#"{"marks":"unstable: x"}"#,
            // A sentence that begins like the kind is not the kind.
            r#"{"failure":null,"marks":[{"kind":"stall","text":"unstable: x"}]}"#,
            "not JSON",
        ] {
            assert_eq!(stability_marks(not_kept), None, "{not_kept}");
        }
    }
}
