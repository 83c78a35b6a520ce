//! What the engine measures when the server is slow or stalls: per-request
//! latency under pipelining, and open-loop response times that include a
//! stall while service times do not (no coordinated omission).

use crate::fake_server::{within_attempts, SlowServer};
use crate::load::{load, phase_config, spec, start};
use kvbench_engine::{run_phase, Arrival, Observer, PhaseConfig, PhaseKind, Rate, Silent, Window};
use kvbench_model::{OpKind, SystemKind};
use kvbench_workload::keys::KeyNamer;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn config(
    addr: std::net::SocketAddr,
    kind: PhaseKind,
    clients: u32,
    pipeline: u32,
    read: f64,
) -> PhaseConfig {
    let spec = spec(1_000, 2, 20, read);
    PhaseConfig {
        keys: KeyNamer::default(),
        threads: 2,
        seed: 1,
        ..phase_config(addr, SystemKind::Redis, &spec, kind, clients, pipeline)
    }
}

#[test]
fn pipelined_requests_are_timed_one_by_one() {
    let _serial = crate::serial::timing_sensitive();
    // The server answers each command 20 ms after the previous one, so four
    // pipelined requests sent together complete at about 20, 40, 60, 80 ms.
    // Timing the batch would give 80 ms for all four.
    let delay = Duration::from_millis(20);
    let server = SlowServer::start(delay);
    let kind = PhaseKind::Run {
        warmup: Duration::ZERO,
        window: Window::Operations(4),
        rate: None,
    };
    let cfg = config(server.addr, kind, 1, 4, 0.0);
    within_attempts(3, || {
        let out = run_phase(&cfg, &Silent, &Arc::new(AtomicBool::new(false))).expect("runs");
        let h = out.recorder.histogram(OpKind::Update);
        assert_eq!(h.len(), 4);
        let ms = |ns: u64| ns as f64 / 1e6;
        let mut values: Vec<f64> = h
            .iter_recorded()
            .map(|v| ms(v.value_iterated_to()))
            .collect();
        values.sort_by(f64::total_cmp);
        for (i, v) in values.iter().enumerate() {
            let expect = 20.0 * (i + 1) as f64;
            if *v < expect - 0.5 || *v >= expect + 10.0 {
                return Err(format!(
                    "request {i}: {v} ms, expected about {expect} ms (all: {values:?})"
                ));
            }
        }
        Ok(())
    });
}

/// Sends the instant the window opens to the stalling thread.
struct WindowStart(mpsc::Sender<Instant>);
impl Observer for WindowStart {
    fn window_started(&self) {
        let _ = self.0.send(Instant::now());
    }
}

#[test]
fn open_loop_response_time_includes_a_server_stall_and_service_time_does_not() {
    let _serial = crate::serial::timing_sensitive();
    let server = start(SystemKind::Redis, None);
    let pid = server.pid() as i32;
    let sp = spec(1_000, 2, 20, 1.0);
    load(&server, &sp, 3);
    let rate = 10_000.0;
    let window = Duration::from_secs(10);
    let kind = PhaseKind::Run {
        warmup: Duration::from_millis(500),
        window: Window::Duration(window),
        rate: Some(Rate {
            ops_per_s: rate,
            arrival: Arrival::Uniform,
        }),
    };
    let cfg = PhaseConfig {
        spec: sp,
        ..config(server.addr(), kind, 4, 8, 1.0)
    };
    let (tx, rx) = mpsc::channel();
    let runner = std::thread::spawn(move || {
        run_phase(&cfg, &WindowStart(tx), &Arc::new(AtomicBool::new(false))).expect("runs")
    });
    let opened = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("window opened");
    std::thread::sleep((opened + Duration::from_secs(4)).saturating_duration_since(Instant::now()));
    // SAFETY: signals to the server process this test started.
    let stopped = Instant::now();
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_secs(1));
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let stall = stopped.elapsed().as_secs_f64();
    let out = runner.join().expect("run thread");

    let read = out
        .result
        .ops
        .iter()
        .find(|o| o.op == OpKind::Read)
        .expect("reads");
    // Requests meant for the stall wait until it ends: of the rate x window
    // requests, those intended in the stall's first (stall - x) seconds take
    // longer than x. So p99 = stall - 0.01 x window, p99.9 = stall - 0.001 x window.
    let w = window.as_secs_f64();
    let expect_p99 = (stall - 0.01 * w) * 1e6;
    let expect_p999 = (stall - 0.001 * w) * 1e6;
    let service = read
        .service
        .as_ref()
        .expect("open loop records service time");
    eprintln!(
        "stall {stall:.3} s: response p99 {:.0} us (expected {expect_p99:.0}), p99.9 {:.0} us (expected {expect_p999:.0}); service p99.9 {:.0} us",
        read.latency.p99_us, read.latency.p999_us, service.p999_us
    );
    let near = |got: f64, want: f64| (got - want).abs() <= 0.10 * want;
    assert!(
        near(read.latency.p99_us, expect_p99),
        "p99 {} us, expected {expect_p99:.0} us +-10%",
        read.latency.p99_us
    );
    assert!(
        near(read.latency.p999_us, expect_p999),
        "p99.9 {} us, expected {expect_p999:.0} us +-10%",
        read.latency.p999_us
    );
    // Only the few requests in flight when the server stopped (4 connections
    // x 8 = 32 of 100,000, under 0.1%) waited through it.
    assert!(
        service.p999_us < 0.05 * stall * 1e6,
        "service p99.9 {} us should not show the {stall:.3} s stall",
        service.p999_us
    );
    let lag = read.lag.as_ref().expect("open loop records lag");
    assert!(
        lag.max_us > 0.5 * stall * 1e6,
        "the requests due during the stall were sent late: max lag {} us",
        lag.max_us
    );
    assert_eq!(out.result.offered_rate, Some(rate));
    // The per-second series shows the stall as a second with almost nothing completed.
    let per_second: Vec<u64> = out
        .result
        .series
        .iter()
        .filter(|p| p.op == OpKind::Read)
        .map(|p| p.completed)
        .collect();
    assert!(per_second.len() >= 10, "{per_second:?}");
    assert!(
        per_second.iter().any(|&n| (n as f64) < 0.2 * rate),
        "no stalled second in {per_second:?}"
    );
}
