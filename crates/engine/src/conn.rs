//! One client connection in a closed loop: keep up to `pipeline` requests in
//! flight, time each request from its own send to its own reply.
//!
//! Both RESP and the memcache text protocol answer in request order on a
//! connection, so a FIFO of (kind, send time) pairs maps replies to requests.
//! The clock is read once before each write and once after each read: every
//! request in a write shares that write's send time (it is when they left),
//! every reply in a read shares that read's arrival time (it is when kvbench
//! saw them). Buffers are allocated once per connection; the steady state
//! allocates nothing.

use crate::driver::{Driver, Outcome};
use crate::recorder::Recorder;
use kvbench_model::OpKind;
use kvbench_workload::{Op, OpStream, Rng};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Where a connection's operations come from.
pub(crate) enum Source {
    /// The load phase: insert record numbers `next, next+step, ...` below `end`.
    Load {
        next: u64,
        step: u64,
        end: u64,
        rng: Rng,
    },
    /// The run phase: draw from the workload's operation stream.
    Run { stream: OpStream },
}

impl Source {
    fn next_op(&mut self) -> Option<Op> {
        match self {
            Source::Load {
                next, step, end, ..
            } => {
                if *next >= *end {
                    return None;
                }
                let op = Op {
                    kind: OpKind::Insert,
                    keynum: *next,
                    field: None,
                };
                *next += *step;
                Some(op)
            }
            Source::Run { stream } => Some(stream.next_op()),
        }
    }

    fn rng(&mut self) -> &mut Rng {
        match self {
            Source::Load { rng, .. } => rng,
            Source::Run { stream } => stream.rng(),
        }
    }
}

/// When this connection stops sending.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Limit {
    /// After this many measured requests.
    Operations(u64),
    /// When the clock passes this instant.
    Until(Instant),
}

/// Everything a connection task needs besides its socket.
pub(crate) struct ConnPlan {
    pub driver: Rc<Driver>,
    pub source: Source,
    pub pipeline: usize,
    /// Requests sent before this instant are warm-up: sent and awaited, never counted.
    pub measure_from: Instant,
    pub limit: Limit,
    pub timeout: Duration,
    pub recorder: Rc<RefCell<Recorder>>,
    /// Measured completions of this worker, read by the progress display.
    pub progress: Arc<AtomicU64>,
    pub stop: Arc<AtomicBool>,
}

struct InFlight {
    kind: OpKind,
    sent: Instant,
    measured: bool,
}

/// Runs the closed loop until the limit is reached, the stop flag is set or
/// the connection fails. Failures are recorded as errors of the requests in
/// flight; they never end the phase for other connections.
pub(crate) async fn run(mut sock: TcpStream, mut plan: ConnPlan) {
    let mut wbuf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut rbuf: Vec<u8> = vec![0; 64 * 1024];
    let mut key: Vec<u8> = Vec::with_capacity(64);
    let (mut start, mut end) = (0usize, 0usize);
    let mut inflight: VecDeque<InFlight> = VecDeque::with_capacity(plan.pipeline);
    let mut measured_sent = 0u64;
    let mut sending = true;
    let deadline = match plan.limit {
        Limit::Until(t) => Some(t),
        Limit::Operations(_) => None,
    };

    loop {
        // Fill the pipeline. The send time is read once, before the write.
        if sending {
            if plan.stop.load(Ordering::Relaxed) {
                sending = false;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                sending = false;
            }
            let measured = now >= plan.measure_from;
            let first_new = inflight.len();
            while sending && inflight.len() < plan.pipeline {
                if let Limit::Operations(n) = plan.limit {
                    if measured && measured_sent >= n {
                        sending = false;
                        break;
                    }
                }
                let Some(op) = plan.source.next_op() else {
                    sending = false;
                    break;
                };
                plan.driver
                    .encode(&op, plan.source.rng(), &mut key, &mut wbuf);
                inflight.push_back(InFlight {
                    kind: op.kind,
                    sent: now,
                    measured,
                });
                if measured {
                    measured_sent += 1;
                }
            }
            if inflight.len() > first_new {
                if let Err(e) = sock.write_all(&wbuf).await {
                    fail_all(&plan, &mut inflight, &format!("write failed: {e}"));
                    return;
                }
                wbuf.clear();
            }
        }
        if inflight.is_empty() {
            return;
        }

        // Read whatever has arrived; one clock read for all replies in it.
        if end == rbuf.len() {
            if start > 0 {
                rbuf.copy_within(start..end, 0);
                end -= start;
                start = 0;
            } else {
                // A single reply larger than the buffer: grow (rare, cold).
                rbuf.resize(rbuf.len() * 2, 0);
            }
        }
        let n = match tokio::time::timeout(plan.timeout, sock.read(&mut rbuf[end..])).await {
            Ok(Ok(0)) => {
                fail_all(&plan, &mut inflight, "connection closed by server");
                return;
            }
            Ok(Ok(n)) => n,
            Ok(Err(e)) => {
                fail_all(&plan, &mut inflight, &format!("read failed: {e}"));
                return;
            }
            Err(_) => {
                let msg = format!("timeout: no reply within {:?}", plan.timeout);
                fail_all(&plan, &mut inflight, &msg);
                return;
            }
        };
        let arrived = Instant::now();
        end += n;

        let mut rec = plan.recorder.borrow_mut();
        let mut done = 0u64;
        while let Some(head) = inflight.front() {
            match plan.driver.classify(head.kind, &rbuf[start..end]) {
                Ok(Some((outcome, used))) => {
                    start += used;
                    let req = inflight.pop_front().expect("front exists");
                    let in_window = req.measured && deadline.is_none_or(|d| arrived <= d);
                    if in_window {
                        let ns = arrived.saturating_duration_since(req.sent).as_nanos() as u64;
                        rec.record(req.kind, outcome, ns, arrived);
                        if outcome == Outcome::Ok {
                            done += 1;
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    drop(rec);
                    fail_all(&plan, &mut inflight, &format!("protocol error: {e}"));
                    return;
                }
            }
        }
        drop(rec);
        if start == end {
            start = 0;
            end = 0;
        }
        if done > 0 {
            plan.progress.fetch_add(done, Ordering::Relaxed);
        }
    }
}

/// Counts every request still in flight as failed (only measured ones are
/// errors of the window; warm-up failures are noted but not counted).
fn fail_all(plan: &ConnPlan, inflight: &mut VecDeque<InFlight>, message: &str) {
    let mut rec = plan.recorder.borrow_mut();
    for req in inflight.drain(..) {
        if req.measured {
            rec.record_failure(req.kind, 1, message);
        }
    }
    rec.note_error(message);
    rec.failed_connections += 1;
}
