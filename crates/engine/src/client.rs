//! One connection's protocol logic, without I/O: which requests to send,
//! which request each reply answers, how long each operation took.
//!
//! The I/O loop (`conn.rs`) owns the socket and the clock reads; it asks
//! [`Client::fill`] for bytes to write, hands every read to
//! [`Client::on_read`], and writes whatever follow-up requests that produced.
//! Keeping the logic here makes it testable without sockets and lets another
//! I/O backend drive the same state.
//!
//! Replies come back in request order on a connection, so a FIFO of pending
//! requests maps replies to operations. Most operations are one request and
//! one reply; an indexed insert is two commands sent together (two replies);
//! a read-modify-write and a Redis scan send a second step after the first
//! step's reply (see `Driver`'s `Step`). An operation is timed from its first
//! send (closed loop) or its intended send (open loop) to its last reply,
//! and its outcome is the worst of its replies.

use crate::driver::{Driver, Outcome, Step};
use crate::recorder::{ErrorKind, Recorder};
use crate::schedule::Schedule;
use kvbench_model::OpKind;
use kvbench_workload::{Op, OpStream, Rng};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

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
    /// The run phase: draw from the workload's operation stream (boxed: it
    /// is much larger than the load variant).
    Run { stream: Box<OpStream> },
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
                let op = Op::insert(*next);
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

    /// Tells the run's insert counter that `keynum` is done with (YCSB
    /// acknowledges every insert once the store has answered, or failed).
    fn acknowledge_insert(&mut self, keynum: u64) {
        if let Source::Run { stream } = self {
            // A refused acknowledgement (outside the counter's window) only
            // delays when later reads may pick this key; it is not an error
            // of the measured operation.
            let _ = stream.acknowledge_insert(keynum);
        }
    }
}

/// When this connection stops sending.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Limit {
    /// After this many measured operations.
    Operations(u64),
    /// When the clock (closed loop) or the schedule (open loop) passes this instant.
    Until(Instant),
}

/// A request (or a group of requests sent together) waiting for replies.
///
/// Instants are kept as nanoseconds since the client's `base`: 8 bytes
/// instead of 16 each, and a latency is one integer subtraction. At
/// pipeline 16 the entries of 50 connections no longer fit in the L1 cache
/// between a request's send and its reply, so each entry's size shows in
/// the client's CPU per operation.
struct Pending {
    op: Op,
    /// Open loop: the schedule's instant; closed loop: the first send.
    intended_ns: u64,
    /// The operation's first send.
    sent_ns: u64,
    replies_left: u32,
    step: Step,
    measured: bool,
    outcome: Outcome,
}

/// One connection's state.
pub(crate) struct Client {
    driver: Rc<Driver>,
    source: Source,
    pipeline: usize,
    measure_from: Instant,
    /// The origin of [`Pending`]'s instants: no later than the client's
    /// creation or its schedule's first slot, so every instant it records
    /// is at or after it.
    base: Instant,
    limit: Limit,
    schedule: Option<Schedule>,
    key: Vec<u8>,
    /// Bytes to write; the I/O loop writes and clears them.
    pub wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    pending: VecDeque<Pending>,
    /// Operations in flight (a multi-request operation counts once).
    ops: usize,
    measured_sent: u64,
    sending: bool,
    /// Why the operation being completed failed its integrity check.
    integrity_failure: Option<String>,
}

/// How a read went.
pub(crate) enum ReadResult {
    /// Replies were processed; this many measured operations completed.
    Progress(u64),
    /// The connection cannot be used any more.
    Failed(ErrorKind, String),
}

impl Client {
    pub(crate) fn new(
        driver: Rc<Driver>,
        source: Source,
        pipeline: usize,
        measure_from: Instant,
        limit: Limit,
        schedule: Option<Schedule>,
    ) -> Client {
        let now = Instant::now();
        let base = schedule.as_ref().map_or(now, |s| s.next().min(now));
        Client {
            driver,
            source,
            pipeline,
            measure_from,
            base,
            limit,
            schedule,
            key: Vec::with_capacity(32),
            wbuf: Vec::new(),
            rbuf: vec![0; READ_BUF],
            start: 0,
            end: 0,
            pending: VecDeque::with_capacity(pipeline),
            ops: 0,
            measured_sent: 0,
            sending: true,
            integrity_failure: None,
        }
    }

    /// `t` as nanoseconds since `base` (0 for an earlier instant, which the
    /// choice of `base` rules out).
    #[inline]
    fn nanos(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
    }

    fn deadline(&self) -> Option<Instant> {
        match self.limit {
            Limit::Until(t) => Some(t),
            Limit::Operations(_) => None,
        }
    }

    /// Stops sending new operations (those in flight still complete).
    pub(crate) fn stop_sending(&mut self) {
        self.sending = false;
    }

    /// Encodes every operation that is due at `now` while the pipeline has
    /// room. Returns how many were added to [`Client::wbuf`].
    pub(crate) fn fill(&mut self, now: Instant) -> usize {
        let mut added = 0;
        let now_ns = self.nanos(now);
        while self.sending && self.ops < self.pipeline {
            let intended = match &self.schedule {
                Some(s) if s.next() > now => break,
                Some(s) => s.next(),
                None => now,
            };
            if self.deadline().is_some_and(|d| intended >= d) {
                self.sending = false;
                break;
            }
            let measured = intended >= self.measure_from;
            if let Limit::Operations(n) = self.limit {
                if measured && self.measured_sent >= n {
                    self.sending = false;
                    break;
                }
            }
            let Some(op) = self.source.next_op() else {
                self.sending = false;
                break;
            };
            self.driver
                .encode(&op, self.source.rng(), &mut self.key, &mut self.wbuf);
            let intended_ns = if self.schedule.is_some() {
                self.nanos(intended)
            } else {
                now_ns
            };
            self.pending.push_back(Pending {
                op,
                intended_ns,
                sent_ns: now_ns,
                replies_left: reply_count(self.driver.replies(&op)),
                step: Step::First,
                measured,
                outcome: Outcome::Ok,
            });
            self.ops += 1;
            self.measured_sent += u64::from(measured);
            added += 1;
            if let Some(s) = self.schedule.as_mut() {
                s.advance();
            }
        }
        added
    }

    /// Open loop: the next slot, when the pipeline has room for it.
    pub(crate) fn next_slot(&self) -> Option<Instant> {
        match &self.schedule {
            Some(s) if self.sending && self.ops < self.pipeline => Some(s.next()),
            _ => None,
        }
    }

    /// Open loop: the next slot even when nothing can be sent now.
    pub(crate) fn schedule_next(&self) -> Option<Instant> {
        self.schedule
            .as_ref()
            .filter(|_| self.sending)
            .map(Schedule::next)
    }

    /// True when nothing is in flight and nothing more will be sent.
    pub(crate) fn is_done(&self) -> bool {
        !self.sending && self.pending.is_empty()
    }

    /// True when requests await replies.
    pub(crate) fn awaiting(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Free space to read into (compacting or growing the buffer as needed).
    pub(crate) fn read_space(&mut self) -> &mut [u8] {
        if self.end == self.rbuf.len() {
            if self.start > 0 {
                self.rbuf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                // A single reply larger than the buffer: grow (rare, cold).
                self.rbuf.resize(self.rbuf.len() * 2, 0);
            }
        }
        &mut self.rbuf[self.end..]
    }

    /// Processes `n` new bytes that arrived at `arrived` in the read buffer
    /// (after [`Client::read_space`]): classifies every complete reply,
    /// records completed operations, and encodes any follow-up step into
    /// [`Client::wbuf`] (its send time is `arrived`: the I/O loop writes it
    /// straight away).
    pub(crate) fn on_read(&mut self, n: usize, arrived: Instant, rec: &mut Recorder) -> ReadResult {
        self.end += n;
        // The buffer is lent out while replies are processed (a move of
        // three words), so they can be parsed where they lie.
        let rbuf = std::mem::take(&mut self.rbuf);
        let (result, used) = self.process(&rbuf[self.start..self.end], arrived, rec);
        self.rbuf = rbuf;
        self.start += used;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        result
    }

    /// Like [`Client::on_read`] for bytes received elsewhere (io_uring's
    /// provided buffers): complete replies are processed where they lie, and
    /// only an incomplete tail is copied to the read buffer to wait for the
    /// rest.
    pub(crate) fn on_bytes(
        &mut self,
        bytes: &[u8],
        arrived: Instant,
        rec: &mut Recorder,
    ) -> ReadResult {
        if self.start < self.end {
            // A reply is already partly here: append to it.
            self.append(bytes);
            return self.on_read(0, arrived, rec);
        }
        let (result, used) = self.process(bytes, arrived, rec);
        if matches!(result, ReadResult::Progress(_)) {
            self.append(&bytes[used..]);
        }
        result
    }

    /// Copies `bytes` behind what the read buffer holds, making room the
    /// way a read does ([`Client::read_space`]: compact, or grow).
    fn append(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let space = self.read_space();
            let k = space.len().min(bytes.len());
            space[..k].copy_from_slice(&bytes[..k]);
            self.end += k;
            bytes = &bytes[k..];
        }
    }

    /// Processes the replies at the start of `buf`; returns how it went and
    /// how many bytes the complete replies took.
    fn process(&mut self, buf: &[u8], arrived: Instant, rec: &mut Recorder) -> (ReadResult, usize) {
        let mut pos = 0;
        let deadline = self.deadline();
        let arrived_ns = self.nanos(arrived);
        let mut done = 0u64;
        while let Some(head) = self.pending.front() {
            let (op, step) = (head.op, head.step);
            let (outcome, used) = match self.driver.classify_step(&op, step, &buf[pos..]) {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    return (
                        ReadResult::Failed(ErrorKind::Protocol, format!("protocol error: {e}")),
                        pos,
                    )
                }
            };
            let reply = pos..pos + used;
            pos += used;
            // An error on a reply whose values are checked: tell an integrity
            // failure (with the key and field that differ) from an error reply.
            if outcome == Outcome::Error && self.driver.verifies(&op, step) {
                if let Err(why) = self.driver.verify(&op, &buf[reply.clone()]) {
                    self.integrity_failure = Some(why);
                }
            }
            let Some(head) = self.pending.front_mut() else {
                break;
            };
            head.replies_left -= 1;
            head.outcome = worst(head.outcome, outcome);
            if head.replies_left > 0 {
                continue;
            }
            let Some(p) = self.pending.pop_front() else {
                break;
            };
            // A follow-up step only after a successful first step.
            let next = match (p.outcome, self.driver.next_step(&p.op, p.step)) {
                (Outcome::Ok, Some(next)) => Some(next),
                _ => None,
            };
            if let Some(next) = next {
                let replies = match next {
                    Step::RmwWrite => {
                        self.driver.encode_rmw_write(
                            &p.op,
                            self.source.rng(),
                            &mut self.key,
                            &mut self.wbuf,
                        );
                        1
                    }
                    Step::ScanRead => {
                        match self
                            .driver
                            .encode_scan_reads(&p.op, &buf[reply], &mut self.wbuf)
                        {
                            Ok(n) => n,
                            Err(e) => {
                                return (
                                    ReadResult::Failed(
                                        ErrorKind::Protocol,
                                        format!("protocol error in a scan's key list: {e}"),
                                    ),
                                    pos,
                                )
                            }
                        }
                    }
                    Step::First => 0,
                };
                if replies > 0 {
                    self.pending.push_back(Pending {
                        step: next,
                        replies_left: reply_count(replies),
                        ..p
                    });
                    continue;
                }
            }
            // The operation is complete.
            self.ops -= 1;
            // YCSB acknowledges an insert whatever its outcome (in a
            // `finally`): an unacknowledged one would hide every later
            // insert from reads.
            if p.op.kind == OpKind::Insert {
                self.source.acknowledge_insert(p.op.keynum);
            }
            let integrity = self.integrity_failure.take();
            if p.measured && deadline.is_none_or(|d| arrived <= d) {
                if let Some(why) = integrity {
                    rec.record_integrity_failure(p.op.kind, &format!("integrity: {why}"), arrived);
                    continue;
                }
                let since = |from_ns: u64| arrived_ns.saturating_sub(from_ns);
                if self.schedule.is_some() {
                    let lag = p.sent_ns.saturating_sub(p.intended_ns);
                    rec.record_scheduled(
                        p.op.kind,
                        p.outcome,
                        self.base + Duration::from_nanos(p.intended_ns),
                        since(p.intended_ns),
                        since(p.sent_ns),
                        lag,
                        arrived,
                    );
                } else {
                    rec.record(p.op.kind, p.outcome, since(p.sent_ns), arrived);
                }
                done += u64::from(p.outcome == Outcome::Ok);
            }
        }
        (ReadResult::Progress(done), pos)
    }

    /// Counts every measured operation still in flight as failed with `kind`
    /// (warm-up failures are noted but not counted) and stops the client.
    pub(crate) fn fail_all(&mut self, kind: ErrorKind, message: &str, rec: &mut Recorder) {
        let now = Instant::now();
        let pending: Vec<Pending> = self.pending.drain(..).collect();
        for p in pending {
            if p.op.kind == OpKind::Insert {
                self.source.acknowledge_insert(p.op.keynum);
            }
            if p.measured {
                rec.record_failure(p.op.kind, 1, kind, message, now);
            }
        }
        self.ops = 0;
        self.sending = false;
        rec.note_error(message);
        rec.failed_connections += 1;
    }
}

/// A reply count as [`Pending`] keeps it (no operation expects 4 billion replies).
fn reply_count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The outcome of an operation of several replies: any error wins, then any miss.
fn worst(a: Outcome, b: Outcome) -> Outcome {
    match (a, b) {
        (Outcome::Error, _) | (_, Outcome::Error) => Outcome::Error,
        (Outcome::Miss, _) | (_, Outcome::Miss) => Outcome::Miss,
        _ => Outcome::Ok,
    }
}
