//! One client connection: keep up to `pipeline` requests in flight and time
//! each request from its own send (closed loop) or its own intended send
//! (open loop) to its own reply.
//!
//! Both RESP and the memcache text protocol answer in request order on a
//! connection, so a FIFO of in-flight requests maps replies to requests.
//! The clock is read once before each write and once after each read: every
//! request in a write shares that write's send time (it is when they left),
//! every reply in a read shares that read's arrival time (it is when kvbench
//! saw them). Buffers start small and grow to the largest batch once, so
//! 10,000 idle connections cost little memory and the steady state
//! allocates nothing.

use crate::driver::{Driver, Outcome};
use crate::recorder::{ErrorKind, Recorder};
use crate::schedule::Schedule;
use crate::timer::Timer;
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

/// Initial read buffer; grows (rarely) for replies larger than this.
const READ_BUF: usize = 4 * 1024;

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
    /// When the clock (closed loop) or the schedule (open loop) passes this instant.
    Until(Instant),
}

/// Everything a connection task needs besides its socket.
pub(crate) struct ConnPlan {
    pub driver: Rc<Driver>,
    pub source: Source,
    pub pipeline: usize,
    /// Requests sent (closed loop) or scheduled (open loop) before this
    /// instant are warm-up: sent and awaited, never counted.
    pub measure_from: Instant,
    pub limit: Limit,
    /// `Some` for open loop: when each request is meant to be sent.
    pub schedule: Option<Schedule>,
    pub timeout: Duration,
    pub recorder: Rc<RefCell<Recorder>>,
    /// Measured completions of this worker, read by the progress display.
    pub progress: Arc<AtomicU64>,
    pub stop: Arc<AtomicBool>,
}

struct InFlight {
    kind: OpKind,
    /// Open loop: the schedule's instant. Closed loop: equal to `sent`.
    intended: Instant,
    sent: Instant,
    measured: bool,
}

/// Runs the loop until the limit is reached, the stop flag is set or the
/// connection fails. Failures are recorded as errors of the requests in
/// flight; they never end the phase for other connections.
pub(crate) async fn run(mut sock: TcpStream, mut plan: ConnPlan) {
    let mut wbuf: Vec<u8> = Vec::new();
    let mut rbuf: Vec<u8> = vec![0; READ_BUF];
    let mut key: Vec<u8> = Vec::with_capacity(32);
    let (mut start, mut end) = (0usize, 0usize);
    let mut inflight: VecDeque<InFlight> = VecDeque::with_capacity(plan.pipeline);
    let mut measured_sent = 0u64;
    let mut sending = true;
    let deadline = match plan.limit {
        Limit::Until(t) => Some(t),
        Limit::Operations(_) => None,
    };
    let mut timer = plan.schedule.as_ref().map(|_| Timer::new());

    loop {
        if sending && plan.stop.load(Ordering::Relaxed) {
            sending = false;
        }
        // Fill the pipeline with every request that is due. The send time is
        // read once, before the write.
        if sending && inflight.len() < plan.pipeline {
            let now = Instant::now();
            let first_new = inflight.len();
            while inflight.len() < plan.pipeline {
                let intended = match &plan.schedule {
                    Some(s) if s.next() > now => break,
                    Some(s) => s.next(),
                    None => now,
                };
                if deadline.is_some_and(|d| intended >= d) {
                    sending = false;
                    break;
                }
                let measured = intended >= plan.measure_from;
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
                    intended,
                    sent: now,
                    measured,
                });
                measured_sent += u64::from(measured);
                if let Some(s) = plan.schedule.as_mut() {
                    s.advance();
                }
            }
            if inflight.len() > first_new {
                if let Err(e) = sock.write_all(&wbuf).await {
                    fail_all(
                        &plan,
                        &mut inflight,
                        ErrorKind::Io,
                        &format!("write failed: {e}"),
                    );
                    return;
                }
                wbuf.clear();
            }
        }
        if inflight.is_empty() {
            if !sending {
                return;
            }
            // Open loop with nothing in flight: wait for the next slot.
            if let (Some(s), Some(timer)) = (&plan.schedule, timer.as_mut()) {
                timer.sleep_until(s.next()).await;
            }
            continue;
        }

        // Make room, then read whatever has arrived. In open loop, also wake
        // for the next slot if the pipeline has room for it.
        if end == rbuf.len() {
            if start > 0 {
                rbuf.copy_within(start..end, 0);
                end -= start;
                start = 0;
            } else {
                rbuf.resize(rbuf.len() * 2, 0);
            }
        }
        let next_slot = match &plan.schedule {
            Some(s) if sending && inflight.len() < plan.pipeline => Some(s.next()),
            _ => None,
        };
        let read = tokio::time::timeout(plan.timeout, async {
            match (next_slot, timer.as_mut()) {
                (Some(t), Some(timer)) => tokio::select! {
                    r = sock.read(&mut rbuf[end..]) => Some(r),
                    _ = timer.sleep_until(t) => None,
                },
                _ => Some(sock.read(&mut rbuf[end..]).await),
            }
        })
        .await;
        let n = match read {
            Ok(None) => continue, // a slot is due: go and send it
            Ok(Some(Ok(0))) => {
                fail_all(
                    &plan,
                    &mut inflight,
                    ErrorKind::Closed,
                    "connection closed by server",
                );
                return;
            }
            Ok(Some(Ok(n))) => n,
            Ok(Some(Err(e))) => {
                fail_all(
                    &plan,
                    &mut inflight,
                    ErrorKind::Io,
                    &format!("read failed: {e}"),
                );
                return;
            }
            Err(_) => {
                let msg = format!("timeout: no reply within {:?}", plan.timeout);
                fail_all(&plan, &mut inflight, ErrorKind::Timeout, &msg);
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
                    let Some(req) = inflight.pop_front() else {
                        break;
                    };
                    if req.measured && deadline.is_none_or(|d| arrived <= d) {
                        let ns = |from: Instant| {
                            arrived.saturating_duration_since(from).as_nanos() as u64
                        };
                        if plan.schedule.is_some() {
                            let lag =
                                req.sent.saturating_duration_since(req.intended).as_nanos() as u64;
                            rec.record_scheduled(
                                req.kind,
                                outcome,
                                req.intended,
                                ns(req.intended),
                                ns(req.sent),
                                lag,
                                arrived,
                            );
                        } else {
                            rec.record(req.kind, outcome, ns(req.sent), arrived);
                        }
                        done += u64::from(outcome == Outcome::Ok);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    drop(rec);
                    fail_all(
                        &plan,
                        &mut inflight,
                        ErrorKind::Protocol,
                        &format!("protocol error: {e}"),
                    );
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

/// Counts every measured request still in flight as failed with `kind`;
/// warm-up failures are noted but not counted.
fn fail_all(plan: &ConnPlan, inflight: &mut VecDeque<InFlight>, kind: ErrorKind, message: &str) {
    let now = Instant::now();
    let mut rec = plan.recorder.borrow_mut();
    for req in inflight.drain(..) {
        if req.measured {
            rec.record_failure(req.kind, 1, kind, message, now);
        }
    }
    rec.note_error(message);
    rec.failed_connections += 1;
}
