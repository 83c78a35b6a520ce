//! `--metrics-listen ADDR`: the live figures in the Prometheus text
//! exposition format (version 0.0.4), served at `GET /metrics` by one small
//! thread, so an existing Prometheus and Grafana can watch a long
//! experiment. The format is written here rather than with a client
//! library: it is a dozen gauges, and a library would bring a registry and
//! an HTTP stack for them.
//!
//! The listener is bound before any server starts, so a bad address or a
//! port in use is bad input (exit 2) and nothing runs. The thread is never
//! joined: it dies with the process and never delays the exit.

use crate::exit::UsageError;
use kvbench_engine::SecondStats;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A scrape that has not sent its request (or taken the answer) in this
/// long is dropped, so one stuck client cannot stop the others.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;

/// What kvbench is doing, as `kvbench_state` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    /// Between cells, or before the first.
    #[default]
    Idle,
    /// Starting the servers, connecting.
    Starting,
    /// The load phase.
    Loading,
    /// The run phase's warm-up (not counted).
    Warmup,
    /// The measured window.
    Measuring,
}

impl State {
    const ALL: [State; 5] = [
        State::Idle,
        State::Starting,
        State::Loading,
        State::Warmup,
        State::Measuring,
    ];

    fn as_str(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Starting => "starting",
            State::Loading => "loading",
            State::Warmup => "warmup",
            State::Measuring => "measuring",
        }
    }
}

/// The cell in progress: the labels of every per-cell series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellLabels {
    pub system: String,
    pub workload: String,
    pub topology: String,
    pub clients: u32,
    pub pipeline: u32,
    /// The cell's number in its command (an experiment's cell index).
    pub cell: String,
    pub iteration: u32,
}

/// Everything a scrape reports.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub state: State,
    pub cell: Option<CellLabels>,
    /// The measured window's last finished second, of the current cell.
    pub second: Option<SecondStats>,
    /// Measured operations completed so far by the current cell.
    pub completed: u64,
    /// Measured operations that failed so far in the current cell.
    pub errors: u64,
    /// Cells of the command, run or skipped.
    pub cells: u64,
    /// Cells finished (skipped ones included).
    pub cells_done: u64,
    /// Estimated seconds until the command is done, when known.
    pub eta_s: Option<f64>,
}

/// The running endpoint: the figures it serves, shared with the scrapes.
#[derive(Debug, Clone)]
pub struct Metrics {
    state: Arc<Mutex<Snapshot>>,
    addr: SocketAddr,
}

impl Metrics {
    /// Binds `text` (HOST:PORT, e.g. 127.0.0.1:9464) and starts serving.
    ///
    /// # Errors
    /// [`UsageError`] naming `--metrics-listen` when `text` is not an
    /// address or cannot be bound (port in use, address not local).
    pub fn listen(text: &str) -> Result<Metrics, UsageError> {
        let bad = |why: String| UsageError(format!("--metrics-listen {text}: {why}"));
        let addr: SocketAddr = text.parse().map_err(|_| {
            bad("not an address like 127.0.0.1:9464 (an IP address and a port)".into())
        })?;
        let listener = TcpListener::bind(addr).map_err(|e| bad(format!("cannot listen: {e}")))?;
        let addr = listener.local_addr().unwrap_or(addr);
        let state = Arc::new(Mutex::new(Snapshot {
            cells: 1,
            ..Snapshot::default()
        }));
        let shared = state.clone();
        std::thread::Builder::new()
            .name("kvbench-metrics".into())
            .spawn(move || serve(&listener, &shared))
            .map_err(|e| bad(format!("cannot start its thread: {e}")))?;
        Ok(Metrics { state, addr })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The figures, to change them.
    pub fn lock(&self) -> MutexGuard<'_, Snapshot> {
        // A scrape never panics while holding the lock; if one did, its
        // figures are still whole.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn serve(listener: &TcpListener, state: &Mutex<Snapshot>) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        // One scrape at a time: a scrape is a few kilobytes, and the
        // timeouts bound how long one can hold the others up.
        let _ = answer(conn, state);
    }
}

/// Reads one request and answers it; the connection is then closed.
fn answer(mut conn: TcpStream, state: &Mutex<Snapshot>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    conn.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let n = conn.read(&mut buf)?;
        if n == 0 || head.len() + n > MAX_REQUEST {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut parts = line.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let snapshot = state.lock().unwrap_or_else(|p| p.into_inner()).clone();
            (
                "200 OK",
                "text/plain; version=0.0.4; charset=utf-8",
                render(&snapshot),
            )
        }
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "kvbench serves its figures at /metrics\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET /metrics\n".to_string(),
        ),
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != "HEAD" {
        out.push_str(&body);
    }
    conn.write_all(out.as_bytes())?;
    conn.flush()
}

/// A label value as the text format writes it: backslash, double quote
/// and line feed escaped.
fn label_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A sample value: the text format's float, with its names for the
/// special values.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// Microseconds (whole nanoseconds, as the histograms keep them) in
/// seconds, written without a binary fraction's noise (0.000143359).
fn seconds(us: f64) -> f64 {
    (us * 1e3).round() / 1e9
}

/// The exposition text under construction: one family at a time.
struct Text(String);

impl Text {
    /// `# HELP` and `# TYPE` of a family (the help has no backslash or
    /// line feed, so it needs no escaping).
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        debug_assert!(!help.contains(['\\', '\n']));
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, String)], value: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", label_value(v));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {}", number(value));
    }
}

/// One operation kind's (or all kinds') figures of a second.
struct OpRow {
    op: &'static str,
    throughput: f64,
    errors: u64,
    p50_us: f64,
    p99_us: f64,
}

/// The snapshot in the text exposition format 0.0.4.
pub fn render(s: &Snapshot) -> String {
    let mut t = Text(String::with_capacity(4096));
    t.family(
        "kvbench_state",
        "gauge",
        "What kvbench is doing: 1 for the current state, 0 for the others.",
    );
    for st in State::ALL {
        let v = f64::from(u8::from(st == s.state));
        t.sample("kvbench_state", &[("state", st.as_str().into())], v);
    }
    t.family(
        "kvbench_cells",
        "gauge",
        "Cells (runs) of this command, finished or not.",
    );
    t.sample("kvbench_cells", &[], s.cells as f64);
    t.family(
        "kvbench_cells_done",
        "gauge",
        "Cells of this command finished, those found already stored included.",
    );
    t.sample("kvbench_cells_done", &[], s.cells_done as f64);
    if let Some(eta) = s.eta_s {
        t.family(
            "kvbench_eta_seconds",
            "gauge",
            "Estimated seconds until every cell of the command has run.",
        );
        t.sample("kvbench_eta_seconds", &[], eta);
    }
    let Some(cell) = &s.cell else {
        return t.0;
    };
    let labels = vec![
        ("system", cell.system.clone()),
        ("workload", cell.workload.clone()),
        ("clients", cell.clients.to_string()),
        ("cell", cell.cell.clone()),
        ("iteration", cell.iteration.to_string()),
    ];
    let mut info = labels.clone();
    info.push(("topology", cell.topology.clone()));
    info.push(("pipeline", cell.pipeline.to_string()));
    t.family(
        "kvbench_cell_info",
        "gauge",
        "The cell in progress or last run, as labels; the value is always 1.",
    );
    t.sample("kvbench_cell_info", &info, 1.0);
    t.family(
        "kvbench_completed_total",
        "counter",
        "Operations completed in the measured window of the cell so far.",
    );
    t.sample("kvbench_completed_total", &labels, s.completed as f64);
    t.family(
        "kvbench_errors_total",
        "counter",
        "Operations failed in the measured window of the cell so far (as of its last finished second).",
    );
    t.sample("kvbench_errors_total", &labels, s.errors as f64);
    let Some(sec) = &s.second else {
        return t.0;
    };
    // One series per operation kind and one for all of them.
    let mut rows = vec![OpRow {
        op: "all",
        throughput: sec.throughput(),
        errors: sec.errors,
        p50_us: sec.p50_us,
        p99_us: sec.p99_us,
    }];
    for op in &sec.ops {
        rows.push(OpRow {
            op: op.op.as_str(),
            throughput: if sec.length_s > 0.0 {
                op.completed as f64 / sec.length_s
            } else {
                0.0
            },
            errors: op.errors,
            p50_us: op.p50_us,
            p99_us: op.p99_us,
        });
    }
    t.family(
        "kvbench_window_second",
        "gauge",
        "Which second of the measured window the per-second figures (kvbench_throughput_ops_per_second, kvbench_second_errors, kvbench_latency_*) are from (1 is the first).",
    );
    t.sample(
        "kvbench_window_second",
        &labels,
        f64::from(sec.second) + 1.0,
    );
    type Figure = fn(&OpRow) -> f64;
    let per_op: [(&str, &str, Figure); 4] = [
        (
            "kvbench_throughput_ops_per_second",
            "Operations completed per second in the window's last finished second.",
            |r| r.throughput,
        ),
        (
            "kvbench_second_errors",
            "Operations failed in the window's last finished second.",
            |r| r.errors as f64,
        ),
        (
            "kvbench_latency_p50_seconds",
            "Median latency of the operations completed in the window's last finished second.",
            |r| seconds(r.p50_us),
        ),
        (
            "kvbench_latency_p99_seconds",
            "99th percentile latency of the operations completed in the window's last finished second.",
            |r| seconds(r.p99_us),
        ),
    ];
    for (name, help, figure) in per_op {
        t.family(name, "gauge", help);
        for r in &rows {
            let mut l = labels.clone();
            l.push(("op", r.op.to_string()));
            t.sample(name, &l, figure(r));
        }
    }
    t.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvbench_engine::OpSecond;
    use kvbench_model::OpKind;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label_value(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(label_value("x\ny"), "x\\ny");
    }

    #[test]
    fn a_snapshot_renders_every_family_once_with_its_help_and_type() {
        let s = Snapshot {
            state: State::Measuring,
            cell: Some(CellLabels {
                system: "redis".into(),
                workload: "odd\"name".into(),
                topology: "single".into(),
                clients: 8,
                pipeline: 1,
                cell: "3".into(),
                iteration: 1,
            }),
            second: Some(SecondStats {
                second: 2,
                length_s: 1.0,
                completed: 1000,
                errors: 1,
                p50_us: 100.0,
                p99_us: 250.0,
                ops: vec![OpSecond {
                    op: OpKind::Read,
                    completed: 1000,
                    errors: 1,
                    p50_us: 100.0,
                    p99_us: 250.0,
                }],
            }),
            completed: 3000,
            errors: 1,
            cells: 4,
            cells_done: 2,
            eta_s: Some(12.5),
        };
        let text = render(&s);
        assert!(text.ends_with('\n'));
        assert!(
            text.contains("kvbench_state{state=\"measuring\"} 1\n"),
            "{text}"
        );
        assert!(text.contains(
            "kvbench_throughput_ops_per_second{system=\"redis\",workload=\"odd\\\"name\",clients=\"8\",cell=\"3\",iteration=\"1\",op=\"read\"} 1000\n"
        ), "{text}");
        assert!(text.contains("op=\"all\"} 0.00025\n"), "{text}");
        let mut families = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let name = rest.split(' ').next().unwrap();
                assert!(!families.contains(&name), "{name} twice");
                families.push(name);
            }
        }
        assert_eq!(families.len(), 12, "{families:?}");
    }
}
