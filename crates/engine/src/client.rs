//! One client's protocol logic, without I/O: which requests to send, on
//! which of its connections, which request each reply answers, how long
//! each operation took.
//!
//! A client is one closed-loop user (a YCSB thread): at most `pipeline`
//! operations in flight. It has one connection (a [`Lane`]) per node of
//! the target: one for a single server, one per master of a cluster. Each
//! request goes on the lane of the node its key maps to ([`Router`]), so
//! requests to the same node are pipelined on one connection, and the
//! client's window is shared by all its lanes: the offered concurrency is
//! `clients x pipeline` in every topology.
//!
//! The I/O loop (`conn.rs`, `uring.rs`) owns the sockets and the clock
//! reads; it asks [`Client::fill`] for bytes to write, hands every read to
//! [`Client::on_read`] or [`Client::on_bytes`] with its lane, and writes
//! whatever any lane then has to send (follow-up steps and redirected
//! requests may land on any lane).
//!
//! Replies come back in request order on a connection, so a FIFO of pending
//! requests per lane maps replies to requests. Every request has its own
//! pending entry; an operation of several requests (an indexed insert's
//! `HMSET` and `ZADD`, a scan's record reads, which may go to different
//! nodes) shares a [`Group`] that completes when its last request does. A
//! read-modify-write and a scan send a second step after the first step's
//! reply (see `Driver`'s `Step`). An operation is timed from its first send
//! (closed loop) or its intended send (open loop) to its last reply, and
//! its outcome is the worst of its replies.
//!
//! A `MOVED` or `ASK` reply is not an outcome: the request is encoded again
//! for the node named (after `ASKING` for `ASK`), sent there, and counted as
//! a redirect; the operation's time still runs from its first send.
//!
//! Nor is a `CLUSTERDOWN` or `TRYAGAIN` reply, and a request for a node
//! whose connection was lost is not failed at once: the request is parked,
//! a refresh of the slot map is asked for, and it is routed again after a
//! backoff (1 ms, doubling to 100 ms), until it succeeds or the request
//! timeout has passed since its first send, when it fails. Every such retry
//! is counted apart, like a redirect.

use crate::driver::{Driver, Outcome, Step};
use crate::nanos;
use crate::recorder::{ErrorKind, Recorder};
use crate::retry::{retryable_reply, Retry};
use crate::route::slots::{self, Redirect};
use crate::route::Router;
use crate::runs::Runs;
use crate::schedule::Schedule;
use kvbench_model::OpKind;
use kvbench_proto::resp;
use kvbench_workload::{Op, OpStream, Rng};
use rand_core::SeedableRng;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Initial read buffer; grows (rarely) for replies larger than this.
const READ_BUF: usize = 4 * 1024;
/// A request redirected more often than this fails: the cluster is moving
/// its slot back and forth faster than the client can follow.
const MAX_REDIRECTS: u8 = 16;
/// Marks a pending request that belongs to no group.
const NO_GROUP: u32 = u32::MAX;
/// Why an operation for a node whose connection failed was not sent.
const NODE_DOWN: &str = "not sent: the connection to its node had failed";
/// Why a cluster request waited (see [`Parked`]).
const NODE_LOST: &str = "its node's connection was lost and no other node took its slot over";
/// Why a request waited for its node's connection to be reopened.
const NODE_REOPENING: &str = "its node's connection was lost and was not reopened";
/// Why a request for a node that joined the cluster mid-phase waits.
const NODE_JOINING: &str = "its node joined the cluster and no connection to it was opened";
const RETRY_LATER: &str = "the cluster answered CLUSTERDOWN or TRYAGAIN";
/// Seeds the generator that re-encodes redirected requests, so the
/// operation stream's own generator draws exactly what it would without
/// redirects.
const REDIRECT_SEED: u64 = 0x6b76_7265_6469_7200;
/// Why a request that failed waits to be sent again (`--max-retries`).
const RETRY_FAILED: &str = "it failed and waited to be sent again";
/// Why a cache-aside fill waits (`kvbench.mode=cache-aside`).
const CACHE_FILL: &str = "the backend's penalty before the set of a record the read missed";
/// Seeds the draws of cache-aside penalties (apart from the operations'
/// stream, so a run's operations do not depend on which reads missed).
const PENALTY_SEED: u64 = 0x6b76_7065_6e61_6c74;

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
    // Once per operation: kept inline with OpStream::next_op (see there).
    #[inline(always)]
    pub(crate) fn next_op(&mut self) -> Option<Op> {
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

    pub(crate) fn rng(&mut self) -> &mut Rng {
        match self {
            Source::Load { rng, .. } => rng,
            Source::Run { stream } => stream.rng(),
        }
    }

    /// Tells the run's insert counter that `keynum` is done with (YCSB
    /// acknowledges every insert once the store has answered, or failed).
    pub(crate) fn acknowledge_insert(&mut self, keynum: u64) {
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

impl Limit {
    /// The window's end, for a timed window.
    pub(crate) fn deadline(self) -> Option<Instant> {
        match self {
            Limit::Until(t) => Some(t),
            Limit::Operations(_) => None,
        }
    }

    /// Whether an operation answered at `arrived` counts: measured, and
    /// answered before the window's end.
    pub(crate) fn records(self, measured: bool, arrived: Instant) -> bool {
        measured && self.deadline().is_none_or(|d| arrived <= d)
    }
}

/// What a client with room in its window does next ([`admit`]).
pub(crate) enum Admit {
    /// Its next slot (open loop) is not due yet.
    Wait,
    /// It is done sending: the window or its operation count has ended.
    Stop,
    /// Send one operation, due at `intended`, in the window or not.
    Send { intended: Instant, measured: bool },
}

/// The rules every client (wire or library) sends by: an open loop sends
/// when its slot is due, and the operation is timed from that slot; the
/// window ends at its deadline on the wall clock too, so an open loop far
/// behind its schedule does not go on sending the slots it missed (at
/// --rate 1e12 that was never), and the overload check reports what was not
/// achieved. An operation is in the window if it was due in it or sent in
/// it: an open loop far behind its schedule sends, inside the window,
/// requests that were due before it; they are the window's load (their
/// latency still runs from when they were due), and leaving them out
/// reported 0 ops/s for a loop more than a warm-up behind.
#[inline]
pub(crate) fn admit(
    schedule: Option<&Schedule>,
    limit: Limit,
    measure_from: Instant,
    measured_sent: u64,
    now: Instant,
) -> Admit {
    let intended = match schedule {
        Some(s) if s.next() > now => return Admit::Wait,
        Some(s) => s.next(),
        None => now,
    };
    Gate::new(intended, limit, measure_from, now).admit(measured_sent)
}

/// What [`admit`] decides from the instants alone: the part a closed loop
/// judges once per [`Client::fill`], since every operation it sends there
/// is due and sent at the same `now`; only an operation-bounded window's
/// count moves between them.
#[derive(Clone, Copy)]
pub(crate) struct Gate {
    intended: Instant,
    limit: Limit,
    /// The window's deadline has passed.
    past_deadline: bool,
    measured: bool,
}

impl Gate {
    #[inline]
    pub(crate) fn new(
        intended: Instant,
        limit: Limit,
        measure_from: Instant,
        now: Instant,
    ) -> Gate {
        Gate {
            intended,
            limit,
            past_deadline: limit.deadline().is_some_and(|d| intended >= d || now >= d),
            measured: intended >= measure_from || now >= measure_from,
        }
    }

    /// The decision once `measured_sent` measured operations have been sent.
    #[inline]
    pub(crate) fn admit(self, measured_sent: u64) -> Admit {
        if self.past_deadline {
            return Admit::Stop;
        }
        if let Limit::Operations(n) = self.limit {
            if self.measured && measured_sent >= n {
                return Admit::Stop;
            }
        }
        Admit::Send {
            intended: self.intended,
            measured: self.measured,
        }
    }
}

/// Which request of an operation a pending entry is (what to encode again
/// when it is redirected, and which [`Step`] its reply answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The operation's first request ([`Driver::encode_first`]).
    Main,
    /// An indexed insert's `ZADD` ([`Driver::encode_index`]).
    Index,
    /// A read-modify-write's update.
    RmwWrite,
    /// One of a scan's record reads; the key is in `scan_keys[i]`.
    ScanRead(u32),
    /// Cache-aside: the set of the record a read missed, after the penalty.
    Fill,
}

impl Part {
    fn step(self) -> Step {
        match self {
            Part::Main | Part::Index => Step::First,
            Part::RmwWrite => Step::RmwWrite,
            Part::ScanRead(_) => Step::ScanRead,
            Part::Fill => Step::Fill,
        }
    }
}

/// A request waiting for its reply.
///
/// Instants are kept as nanoseconds since the client's `base`: 8 bytes
/// instead of 16 each, and a latency is one integer subtraction. At
/// pipeline 16 the entries of 50 connections no longer fit in the L1 cache
/// between a request's send and its reply, so each entry's size shows in
/// the client's CPU per operation.
#[derive(Debug, Clone, Copy)]
struct Pending {
    op: Op,
    /// Open loop: the schedule's instant; closed loop: the first send.
    intended_ns: u64,
    /// The operation's first send.
    sent_ns: u64,
    part: Part,
    /// The operation's [`Group`] when it has several requests in flight.
    group: u32,
    /// Times this request was redirected.
    redirects: u8,
    /// An `ASKING` was sent just before it: its `+OK` comes first.
    asking: bool,
    measured: bool,
    /// Low four bits: times it was parked (the exponent of its backoff);
    /// high four: times it failed and was sent again (`--max-retries`).
    /// One byte for both keeps the entry at 72 bytes (see above).
    waits: u8,
}

impl Pending {
    /// Times it was parked, at most 15.
    fn parked(&self) -> u32 {
        u32::from(self.waits & 0x0f)
    }

    /// Times it failed and was sent again, at most 15.
    fn failures(&self) -> u32 {
        u32::from(self.waits >> 4)
    }

    fn count_park(&mut self) {
        if self.waits & 0x0f < 0x0f {
            self.waits += 1;
        }
    }

    fn count_failure(&mut self) {
        if self.waits >> 4 < 0x0f {
            self.waits += 0x10;
        }
    }
}

/// A request waiting to be routed again (see the module documentation).
#[derive(Debug, Clone, Copy)]
struct Parked {
    due_ns: u64,
    /// When it began to wait: it fails once it has waited `--timeout`.
    since_ns: u64,
    p: Pending,
    /// What it is waiting out, for the failure if it times out.
    why: &'static str,
}

/// The requests of one operation that are in flight together.
#[derive(Debug, Clone, Copy)]
struct Group {
    parts_left: u32,
    outcome: Outcome,
}

/// One connection's share of a client.
pub(crate) struct Lane {
    /// Bytes to write; the I/O loop writes and clears them.
    pub wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    pending: VecDeque<Pending>,
    /// Its connection failed: nothing is sent on it until it is reopened.
    dead: bool,
    /// Its connection failed and will not be reopened (`--no-reconnect`, or
    /// reopening was given up): operations for its node fail at once, as a
    /// client library reports a dead server.
    gone: bool,
    /// A node that joined mid-phase whose first connection is not open
    /// yet: opening it is not a reconnect, and giving it up loses nothing.
    joining: bool,
    /// Replies arrived since the last [`Client::fill`]: the lane gets a
    /// write this round.
    touched: bool,
    /// Closed loop over several nodes: requests drawn for this lane while
    /// it had no write due, encoded (so the operation stream draws exactly
    /// what it would without holding) and sent with the lane's next write.
    held: Vec<u8>,
    /// The held requests, each with the end of its bytes in `held`.
    held_pending: VecDeque<(Pending, usize)>,
    /// When the last read brought replies (nanoseconds since the client's
    /// base): with the oldest request's send, the start of a wait.
    last_reply_ns: u64,
}

impl Lane {
    fn new(pipeline: usize) -> Lane {
        Lane {
            wbuf: Vec::new(),
            rbuf: vec![0; READ_BUF],
            start: 0,
            end: 0,
            pending: VecDeque::with_capacity(pipeline),
            dead: false,
            gone: false,
            joining: false,
            touched: false,
            held: Vec::new(),
            held_pending: VecDeque::with_capacity(pipeline),
            last_reply_ns: 0,
        }
    }

    /// True when the lane is written this round anyway, or must be (nothing
    /// in flight would otherwise bring it a reply and a write).
    #[inline]
    fn writes_now(&self) -> bool {
        self.touched || !self.wbuf.is_empty() || self.pending.is_empty()
    }

    /// Moves up to `max` held requests, oldest first, into the write
    /// buffer, sent at `now_ns`; returns how many.
    fn release(&mut self, max: usize, now_ns: u64) -> usize {
        let n = max.min(self.held_pending.len());
        if n == 0 {
            return 0;
        }
        let cut = self.held_pending[n - 1].1;
        if n == self.held_pending.len() && self.wbuf.is_empty() {
            std::mem::swap(&mut self.wbuf, &mut self.held);
        } else {
            self.wbuf.extend_from_slice(&self.held[..cut]);
            self.held.drain(..cut);
        }
        for (mut p, _) in self.held_pending.drain(..n) {
            p.sent_ns = now_ns;
            p.intended_ns = now_ns;
            self.pending.push_back(p);
        }
        for (_, end) in self.held_pending.iter_mut() {
            *end -= cut;
        }
        n
    }

    /// Free space to read into (compacting or growing the buffer as needed).
    fn read_space(&mut self) -> &mut [u8] {
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

    /// Copies `bytes` behind what the read buffer holds, making room the
    /// way a read does.
    fn append(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let space = self.read_space();
            let k = space.len().min(bytes.len());
            space[..k].copy_from_slice(&bytes[..k]);
            self.end += k;
            bytes = &bytes[k..];
        }
    }
}

/// One client's state.
pub(crate) struct Client {
    driver: Rc<Driver>,
    router: Rc<Router>,
    source: Source,
    pipeline: usize,
    measure_from: Instant,
    /// The origin of [`Pending`]'s instants: no later than the client's
    /// creation or its schedule's first slot, so every instant it records
    /// is at or after it.
    base: Instant,
    /// `base` on [`nanos`]'s scale.
    base_ns: i64,
    limit: Limit,
    schedule: Option<Schedule>,
    key: Vec<u8>,
    lanes: Vec<Lane>,
    /// Operations in flight (an operation of several requests counts once).
    ops: usize,
    measured_sent: u64,
    sending: bool,
    /// Why the operation being completed failed its integrity check.
    integrity_failure: Option<String>,
    groups: Vec<Group>,
    free_groups: Vec<u32>,
    /// Keys of scan reads in flight (kept to re-encode a redirected one),
    /// and the slots free for reuse, so steady state does not allocate.
    scan_keys: Vec<Vec<u8>>,
    free_scan_keys: Vec<u32>,
    /// Draws for requests encoded again after a redirect.
    redirect_rng: Rng,
    /// Closed loop over several nodes: a request for a lane that has no
    /// write due this round is held until the lane's next reply, so each
    /// lane keeps one write per read as a single connection does (without
    /// it, every read would refill all lanes with a few requests each: up
    /// to one write, and one packet, per node per read). At most
    /// `pipeline` requests are in flight, as always, and at most `pipeline`
    /// more are held.
    hold: bool,
    /// One node, found without a record's key: the first request of most
    /// operations is encoded with the key written straight into it
    /// ([`Driver::encode_first_named`]).
    keyless: bool,
    /// Closed loop without cache-aside: a successful one-request
    /// operation is recorded straight from its reply (see
    /// `process_replies`).
    closed_plain: bool,
    /// Operations held (counted in `ops` too).
    held: usize,
    /// Requests waiting to be routed again (their operations are in `ops`).
    parked: Vec<Parked>,
    /// How long after its first send a parked request gives up.
    timeout_ns: u64,
    /// Stopped by Ctrl-C: parked requests are not tried again.
    interrupted: bool,
    /// A lost connection is reopened by the I/O loop (`reopen.rs`): until
    /// then requests for its node wait instead of failing unsent.
    reopen: bool,
    /// How failed requests are retried, and parked ones wait (`retry.rs`).
    retry: Retry,
    /// Draws the jitter of parked requests' waits.
    jitter: u64,
    /// Where a finally failed request's key is written (`--failed-keys`).
    failed_key: Vec<u8>,
    /// Draws cache-aside penalties.
    penalty_rng: Rng,
    /// The successes of the read being processed, recorded in runs.
    runs: Runs,
}

/// What became of a scan's record reads.
enum ScanReads {
    /// The key list was empty: the scan is complete.
    None,
    /// Sent (some keys may have been left out, their nodes down).
    Sent,
    /// Every key's node is down: nothing was sent.
    AllDown,
}

/// What became of one reply.
struct Settled {
    /// Measured operations it completed successfully.
    done: u64,
    /// A followed master answered READONLY: the connection is reopened.
    demoted: bool,
}

/// What became of an error reply.
enum ErrorReply {
    /// Sent again (a redirect, a retry), or failed, there and then.
    Handled(Settled),
    /// The request fails with it.
    Fails { p: Pending, demoted: bool },
}

/// How a read went.
pub(crate) enum ReadResult {
    /// Replies were processed; this many measured operations completed.
    Progress(u64),
    /// The connection cannot be used any more.
    Failed(ErrorKind, String),
}

impl Client {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        driver: Rc<Driver>,
        router: Rc<Router>,
        source: Source,
        pipeline: usize,
        measure_from: Instant,
        limit: Limit,
        schedule: Option<Schedule>,
        timeout: Duration,
    ) -> Client {
        let now = Instant::now();
        let base = schedule.as_ref().map_or(now, |s| s.next().min(now));
        let hold = schedule.is_none() && router.nodes() > 1;
        Client {
            keyless: !router.routes_by_key(),
            closed_plain: schedule.is_none() && driver.cache_aside().is_none(),
            runs: Runs::default(),
            hold,
            held: 0,
            parked: Vec::new(),
            timeout_ns: timeout.as_nanos() as u64,
            interrupted: false,
            reopen: false,
            retry: Retry::default(),
            jitter: REDIRECT_SEED,
            failed_key: Vec::new(),
            lanes: (0..router.nodes()).map(|_| Lane::new(pipeline)).collect(),
            driver,
            router,
            source,
            pipeline,
            measure_from,
            base,
            base_ns: nanos::since_epoch(base),
            limit,
            schedule,
            key: Vec::with_capacity(32),
            ops: 0,
            measured_sent: 0,
            sending: true,
            integrity_failure: None,
            groups: Vec::new(),
            free_groups: Vec::new(),
            scan_keys: Vec::new(),
            free_scan_keys: Vec::new(),
            redirect_rng: Rng::seed_from_u64(REDIRECT_SEED),
            penalty_rng: Rng::seed_from_u64(PENALTY_SEED),
        }
    }

    /// Lost connections are reopened (see [`Client::fail_lane`]), and
    /// failed requests retried as `retry` says.
    pub(crate) fn reopening(mut self, on: bool, retry: Retry) -> Client {
        self.reopen = on;
        self.retry = retry;
        self
    }

    /// Sends `p`, which failed with `kind`, again later when it may still
    /// be retried (it is parked: `None`); else returns it, to be failed.
    fn retry_failed(&mut self, mut p: Pending, now_ns: u64) -> Option<Pending> {
        if p.failures() >= self.retry.max || self.interrupted {
            return Some(p);
        }
        p.count_failure();
        self.park(p, now_ns, RETRY_FAILED);
        None
    }

    /// Keeps the key of a measured request that finally failed, when
    /// `--failed-keys` asked for them.
    fn note_failed_key(&mut self, op: &Op, rec: &mut Recorder) {
        if rec.keeps_failed_keys() {
            self.driver.write_key(op, &mut self.failed_key);
            rec.note_failed_key(&self.failed_key);
        }
    }

    /// `t` as nanoseconds since `base` (0 for an earlier instant, which the
    /// choice of `base` rules out).
    #[inline]
    fn nanos(&self, t: Instant) -> u64 {
        nanos::between(self.base_ns, t)
    }

    fn deadline(&self) -> Option<Instant> {
        self.limit.deadline()
    }

    /// How many connections (lanes) this client has.
    pub(crate) fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// The bytes `lane` has to write; the I/O loop writes and clears them.
    #[inline]
    pub(crate) fn wbuf(&mut self, lane: usize) -> &mut Vec<u8> {
        &mut self.lanes[lane].wbuf
    }

    /// Stops sending new operations (those in flight still complete;
    /// parked requests fail at the next [`Client::fill`]).
    pub(crate) fn stop_sending(&mut self) {
        self.sending = false;
        self.interrupted = true;
    }

    /// Encodes every operation that is due at `now` while the pipeline has
    /// room, each into the lane of its node, and fails at once (in `rec`)
    /// each one whose node's connection has failed. Returns how many were
    /// sent.
    pub(crate) fn fill(&mut self, now: Instant, rec: &mut Recorder) -> usize {
        let cluster = match &*self.router {
            Router::Cluster(t) => {
                t.refresh_if_due(now);
                true
            }
            _ => false,
        };
        // A full pipeline with nothing parked or held: nothing to draw. At
        // one request per connection, every send's completion asks.
        if !cluster
            && (!self.sending || self.ops >= self.pipeline)
            && self.parked.is_empty()
            && !self.hold
        {
            return 0;
        }
        // Only a cluster gains nodes mid-phase.
        if cluster {
            self.grow_lanes();
        }
        let mut added = 0;
        let now_ns = self.nanos(now);
        // One handle for the loop: `self` is borrowed mutably inside it.
        let driver = self.driver.clone();
        if !self.parked.is_empty() {
            self.retry_parked(now, rec);
        }
        if self.hold {
            for l in self.lanes.iter_mut() {
                let room = self.pipeline.saturating_sub(self.ops - self.held);
                if room > 0 && !l.held_pending.is_empty() && l.writes_now() {
                    self.held -= l.release(room, now_ns);
                }
            }
        }
        let closed = self
            .schedule
            .is_none()
            .then(|| Gate::new(now, self.limit, self.measure_from, now));
        while self.sending && self.ops - self.held < self.pipeline && self.held < self.pipeline {
            let gate = match closed {
                Some(g) => g.admit(self.measured_sent),
                None => admit(
                    self.schedule.as_ref(),
                    self.limit,
                    self.measure_from,
                    self.measured_sent,
                    now,
                ),
            };
            let (intended, measured) = match gate {
                Admit::Wait => break,
                Admit::Stop => {
                    self.sending = false;
                    break;
                }
                Admit::Send { intended, measured } => (intended, measured),
            };
            let Some(op) = self.source.next_op() else {
                self.sending = false;
                break;
            };
            let intended_ns = if self.schedule.is_some() {
                self.nanos(intended)
            } else {
                now_ns
            };
            let p = Pending {
                op,
                intended_ns,
                sent_ns: now_ns,
                part: Part::Main,
                group: NO_GROUP,
                redirects: 0,
                asking: false,
                measured,
                waits: 0,
            };
            // One node, reached without the key (no cluster, no pool): what
            // most runs send has its key written straight into the request.
            let named = match self.lanes.first_mut() {
                Some(l) if self.keyless && !l.dead && !l.gone => {
                    let written = driver.encode_first_named(&op, self.source.rng(), &mut l.wbuf);
                    if written {
                        l.pending.push_back(p);
                    }
                    written
                }
                _ => false,
            };
            if !named && !self.send_keyed(&driver, p, now, now_ns, rec) {
                self.measured_sent += u64::from(measured);
                if let Some(s) = self.schedule.as_mut() {
                    s.advance();
                }
                continue;
            }
            self.ops += 1;
            self.measured_sent += u64::from(measured);
            added += 1;
            if let Some(s) = self.schedule.as_mut() {
                s.advance();
            }
        }
        for l in self.lanes.iter_mut() {
            l.touched = false;
        }
        // Drawn ahead: at most `pipeline` held, at most `pipeline` more in
        // flight or parked (more only after a lost connection parks the
        // requests held for it).
        debug_assert!(self.ops <= 2 * self.pipeline && self.held <= self.pipeline);
        added
    }

    /// Sends request `p` (its operation's first) the general way: its key
    /// written first, routed by it, with an indexed insert's second request
    /// beside it; or parks it while its node is down. False when its
    /// node is gone for good: the operation has failed (recorded here).
    fn send_keyed(
        &mut self,
        driver: &Driver,
        mut p: Pending,
        now: Instant,
        now_ns: u64,
        rec: &mut Recorder,
    ) -> bool {
        let op = p.op;
        // A record's plain read or write is routed by its name and the
        // name written once, into the request (docs/performance.md); the
        // key buffer is written for anything else, and for a failure's note.
        let name = driver.name_of(&op);
        let lane = match &name {
            Some(name) => self.router.node_of_name(name),
            None => {
                driver.write_key(&op, &mut self.key);
                self.router
                    .node_of(driver.first_request_key(&op, &self.key))
            }
        };
        let index_lane = driver
            .indexes_insert(&op)
            .then(|| self.router.node_of(driver.index_key()));
        debug_assert!(name.is_none() || index_lane.is_none());
        let cluster = self.router.redirects();
        if let Some(dead) = [Some(lane), index_lane]
            .into_iter()
            .flatten()
            .find(|&l| self.lanes[l].gone && !cluster)
        {
            if op.kind == OpKind::Insert {
                self.source.acknowledge_insert(op.keynum);
            }
            if p.measured {
                rec.count_node_error(dead);
                rec.record_failure(op.kind, 1, ErrorKind::Closed, NODE_DOWN, now);
                if name.is_some() {
                    driver.write_key(&op, &mut self.key);
                }
                rec.note_failed_key(&self.key);
            }
            return false;
        }
        let main_down = self.lanes[lane].dead;
        let hold =
            self.hold && index_lane.is_none() && !main_down && !self.lanes[lane].writes_now();
        if !main_down {
            let l = &mut self.lanes[lane];
            let buf = if hold { &mut l.held } else { &mut l.wbuf };
            match &name {
                Some(name) => driver.encode_first_as(&op, name, self.source.rng(), buf),
                None => driver.encode_first(&op, self.source.rng(), &self.key, buf),
            }
        }
        if let Some(index_lane) = index_lane {
            p.group = self.new_group(2);
            let index = Pending {
                part: Part::Index,
                ..p
            };
            if self.lanes[index_lane].dead {
                self.park(index, now_ns, self.lost_reason());
            } else {
                driver.encode_index(&self.key, &mut self.lanes[index_lane].wbuf);
                self.lanes[index_lane].pending.push_back(index);
            }
        }
        if main_down {
            self.park(p, now_ns, self.lost_reason());
        } else if hold {
            let l = &mut self.lanes[lane];
            l.held_pending.push_back((p, l.held.len()));
            self.held += 1;
        } else {
            self.lanes[lane].pending.push_back(p);
        }
        true
    }

    fn new_group(&mut self, parts: u32) -> u32 {
        let g = Group {
            parts_left: parts,
            outcome: Outcome::Ok,
        };
        match self.free_groups.pop() {
            Some(i) => {
                self.groups[i as usize] = g;
                i
            }
            None => {
                self.groups.push(g);
                (self.groups.len() - 1) as u32
            }
        }
    }

    /// Keeps a scan read's key; returns its slot.
    fn keep_scan_key(&mut self, key: &[u8]) -> u32 {
        match self.free_scan_keys.pop() {
            Some(i) => {
                let k = &mut self.scan_keys[i as usize];
                k.clear();
                k.extend_from_slice(key);
                i
            }
            None => {
                self.scan_keys.push(key.to_vec());
                (self.scan_keys.len() - 1) as u32
            }
        }
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
        !self.sending && self.ops == 0
    }

    /// True when requests on `lane` await replies.
    #[inline]
    pub(crate) fn awaiting(&self, lane: usize) -> bool {
        !self.lanes[lane].pending.is_empty()
    }

    /// True when any request awaits a reply.
    pub(crate) fn awaiting_any(&self) -> bool {
        self.lanes.iter().any(|l| !l.pending.is_empty())
    }

    /// Free space to read `lane`'s bytes into.
    pub(crate) fn read_space(&mut self, lane: usize) -> &mut [u8] {
        self.lanes[lane].read_space()
    }

    /// Processes `n` new bytes that arrived at `arrived` in `lane`'s read
    /// buffer (after [`Client::read_space`]): classifies every complete
    /// reply, records completed operations, and encodes any follow-up step
    /// or redirected request into the lanes' write buffers (its send time
    /// is `arrived`: the I/O loop writes it straight away).
    pub(crate) fn on_read(
        &mut self,
        lane: usize,
        n: usize,
        arrived: Instant,
        rec: &mut Recorder,
    ) -> ReadResult {
        // Another client of this worker may have routed a slot to a node
        // that joined: its lane must exist before any reply is routed on.
        self.grow_lanes();
        let l = &mut self.lanes[lane];
        l.end += n;
        // The buffer is lent out while replies are processed (a move of
        // three words), so they can be parsed where they lie.
        let rbuf = std::mem::take(&mut l.rbuf);
        let (start, end) = (l.start, l.end);
        let (result, used) = self.process(lane, &rbuf[start..end], arrived, rec);
        let l = &mut self.lanes[lane];
        l.rbuf = rbuf;
        l.start += used;
        if l.start == l.end {
            l.start = 0;
            l.end = 0;
        }
        result
    }

    /// Like [`Client::on_read`] for bytes received elsewhere (io_uring's
    /// provided buffers): complete replies are processed where they lie, and
    /// only an incomplete tail is copied to the read buffer to wait for the
    /// rest.
    pub(crate) fn on_bytes(
        &mut self,
        lane: usize,
        bytes: &[u8],
        arrived: Instant,
        rec: &mut Recorder,
    ) -> ReadResult {
        let l = &mut self.lanes[lane];
        if l.start < l.end {
            // A reply is already partly here: append to it.
            l.append(bytes);
            return self.on_read(lane, 0, arrived, rec);
        }
        let (result, used) = self.process(lane, bytes, arrived, rec);
        if matches!(result, ReadResult::Progress(_)) {
            self.lanes[lane].append(&bytes[used..]);
        }
        result
    }

    /// Processes the replies at the start of `buf`, received on `lane`;
    /// returns how it went and how many bytes the complete replies took.
    /// Their successes are recorded in runs (`runs.rs`), all before it
    /// returns.
    fn process(
        &mut self,
        lane: usize,
        buf: &[u8],
        arrived: Instant,
        rec: &mut Recorder,
    ) -> (ReadResult, usize) {
        self.runs.begin(arrived, lane);
        let out = self.process_replies(lane, buf, arrived, rec);
        self.runs.finish(rec);
        out
    }

    fn process_replies(
        &mut self,
        lane: usize,
        buf: &[u8],
        arrived: Instant,
        rec: &mut Recorder,
    ) -> (ReadResult, usize) {
        let mut pos = 0;
        let arrived_ns = self.nanos(arrived);
        let mut done = 0u64;
        let driver = self.driver.clone();
        let l = &mut self.lanes[lane];
        l.touched = true;
        // How long this connection went without a reply while a measured
        // request was outstanding (a stalled server shows here, not only
        // in the latencies of the requests that waited).
        if let Some(head) = l.pending.front() {
            if head.measured {
                rec.note_wait(arrived_ns.saturating_sub(head.sent_ns.max(l.last_reply_ns)));
            }
        }
        l.last_reply_ns = arrived_ns;
        // A followed master answered READONLY: it is a replica now, and the
        // connection is opened again to the master the sentinels announced
        // (redis-py's Sentinel connections do the same).
        let mut demoted = false;
        let protocol_error = |e: &dyn std::fmt::Display| {
            ReadResult::Failed(ErrorKind::Protocol, format!("protocol error: {e}"))
        };
        while let Some(head) = self.lanes[lane].pending.front() {
            if demoted {
                break;
            }
            if head.asking {
                match self.asking_reply(lane, &buf[pos..], arrived, arrived_ns, rec) {
                    Ok(Some((used, d))) => {
                        pos += used;
                        done += d;
                        continue;
                    }
                    Ok(None) => break,
                    Err(e) => return (protocol_error(&e), pos),
                }
            }
            let step = head.part.step();
            let (outcome, used) = match driver.classify_step(&head.op, step, &buf[pos..]) {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => return (protocol_error(&e), pos),
            };
            let reply = &buf[pos..pos + used];
            pos += used;
            // Nearly every reply of a closed loop: a one-request operation
            // answered. What `settle`, `complete_part` and `record_outcome`
            // would do, without their checks for what cannot be here (a
            // group, a scan, a cache-aside fill, an integrity failure, which
            // only an error reply leaves, a schedule), and without copying
            // the request out of its queue.
            if self.closed_plain
                && outcome == Outcome::Ok
                && head.group == NO_GROUP
                && head.part == Part::Main
                && driver.next_step(&head.op, step).is_none()
            {
                let (kind, keynum) = (head.op.kind, head.op.keynum);
                let (measured, sent_ns) = (head.measured, head.sent_ns);
                self.lanes[lane].pending.pop_front();
                self.op_done(kind, keynum);
                if measured {
                    self.runs.count_node_reply(lane, rec);
                }
                if self.limit.records(measured, arrived) {
                    let latency = arrived_ns.saturating_sub(sent_ns);
                    self.record_closed(kind, outcome, latency, arrived, rec);
                    done += 1;
                }
                continue;
            }
            let Some(p) = self.lanes[lane].pending.pop_front() else {
                break;
            };
            match self.settle(lane, p, outcome, reply, arrived, arrived_ns, rec) {
                Ok(s) => {
                    done += s.done;
                    demoted = s.demoted;
                }
                Err(failed) => return (failed, pos),
            }
        }
        if demoted {
            return (
                ReadResult::Failed(
                    ErrorKind::Closed,
                    "the master is a replica now (READONLY): reconnecting to the master the sentinels name".into(),
                ),
                pos,
            );
        }
        // An incomplete reply (or bytes nobody asked for) that has grown
        // past anything this workload can be sent: a server streaming
        // garbage must not fill kvbench's memory, up to RESP's 512 MiB a
        // connection.
        let waiting = buf.len() - pos;
        if waiting > driver.reply_limit() {
            return (
                ReadResult::Failed(
                    ErrorKind::Protocol,
                    format!(
                        "protocol error: {waiting} bytes of a reply not yet complete, more than the {} this workload's largest reply can take",
                        driver.reply_limit()
                    ),
                ),
                pos,
            );
        }
        (ReadResult::Progress(done), pos)
    }

    /// The `+OK` of the `ASKING` sent before the request at the head of
    /// `lane`, at the start of `buf`: returns the bytes it took and the
    /// measured operations it completed (the request fails when `ASKING`
    /// was refused); `None` while it is incomplete.
    #[cold]
    fn asking_reply(
        &mut self,
        lane: usize,
        buf: &[u8],
        arrived: Instant,
        arrived_ns: u64,
        rec: &mut Recorder,
    ) -> Result<Option<(usize, u64)>, kvbench_proto::DecodeError> {
        let Some(r) = resp::parse_reply(buf)? else {
            return Ok(None);
        };
        let pending = &mut self.lanes[lane].pending;
        let Some(head) = pending.front_mut() else {
            return Ok(Some((r.consumed, 0)));
        };
        head.asking = false;
        if r.kind == resp::ReplyKind::Status {
            return Ok(Some((r.consumed, 0)));
        }
        let p = *head;
        pending.pop_front();
        rec.note_error("ASKING was refused after an ASK redirect");
        let done = self.complete_part(&p, Outcome::Error, arrived, arrived_ns, rec);
        Ok(Some((r.consumed, done)))
    }

    /// Request `p`, answered on `lane` with `reply` classified as
    /// `outcome`: completes its operation, or sends what comes next
    /// (a redirect, a retry, a follow-up step, a cache-aside fill).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn settle(
        &mut self,
        lane: usize,
        p: Pending,
        outcome: Outcome,
        reply: &[u8],
        arrived: Instant,
        arrived_ns: u64,
        rec: &mut Recorder,
    ) -> Result<Settled, ReadResult> {
        // The error reply's request is its own copy (the reply may have
        // changed it): the success path goes on with `p` where it is, as
        // copying an entry just popped (in 16-byte pieces that straddle the
        // pieces it was stored in) stalls on every reply.
        if outcome == Outcome::Error {
            return match self.error_reply(lane, p, reply, arrived, arrived_ns, rec) {
                ErrorReply::Handled(s) => Ok(s),
                ErrorReply::Fails { p, demoted } => Ok(Settled {
                    done: self.complete_part(&p, outcome, arrived, arrived_ns, rec),
                    demoted,
                }),
            };
        }
        if p.measured {
            self.runs.count_node_reply(lane, rec);
        }
        let settled = |done| {
            Ok(Settled {
                done,
                demoted: false,
            })
        };
        // A follow-up step only after a successful first step.
        if outcome == Outcome::Ok && p.group == NO_GROUP {
            if let Some(next) = self.driver.next_step(&p.op, p.part.step()) {
                if let Some(done) = self.follow_up(p, next, reply, arrived, arrived_ns, rec)? {
                    return settled(done);
                }
            }
        }
        // Cache-aside: the miss is the store's answer, recorded now; the
        // operation goes on with the set of the record after the
        // backend's penalty.
        if let (Outcome::Miss, Part::Main, OpKind::Read, NO_GROUP) =
            (outcome, p.part, p.op.kind, p.group)
        {
            if let Some(penalty) = self.driver.cache_aside() {
                self.await_fill(p, penalty, arrived, arrived_ns, rec);
                return settled(0);
            }
        }
        settled(self.complete_part(&p, outcome, arrived, arrived_ns, rec))
    }

    /// An error reply to `p` on `lane`: a cluster's redirect or "try
    /// again" sends it again, a "not now" is retried when retries are on;
    /// otherwise it is counted and noted, and fails.
    #[cold]
    #[inline(never)]
    fn error_reply(
        &mut self,
        lane: usize,
        p: Pending,
        reply: &[u8],
        arrived: Instant,
        arrived_ns: u64,
        rec: &mut Recorder,
    ) -> ErrorReply {
        if self.router.redirects() {
            if let Some(r) = Redirect::parse(reply) {
                let done = match self.redirect(p, r, arrived_ns, rec) {
                    Some(failed) => {
                        self.complete_part(&failed, Outcome::Error, arrived, arrived_ns, rec)
                    }
                    None => 0,
                };
                return ErrorReply::Handled(Settled {
                    done,
                    demoted: false,
                });
            }
            if slots::asks_to_retry(reply) {
                self.park(p, arrived_ns, RETRY_LATER);
                return ErrorReply::Handled(Settled {
                    done: 0,
                    demoted: false,
                });
            }
        }
        let text = self.driver.error_text(reply);
        let demoted =
            self.router.follows().is_some() && text.is_some_and(|t| t.starts_with(b"READONLY"));
        // "Not now" (LOADING, READONLY, ...): sent again when retries are on.
        let p = match text {
            Some(t) if self.retry.max > 0 && retryable_reply(t) => {
                match self.retry_failed(p, arrived_ns) {
                    None => return ErrorReply::Handled(Settled { done: 0, demoted }),
                    Some(p) => p,
                }
            }
            _ => p,
        };
        if p.measured {
            rec.count_node_reply(lane, true);
        }
        if let Some(text) = text {
            let measured = self.limit.records(p.measured, arrived);
            rec.note_error_reply(text, measured);
            // "Not now" (LOADING after a restart): the store is not
            // available yet, which is the outage's business.
            if measured && retryable_reply(text) {
                rec.timeline.failed(1, arrived);
            }
        }
        // An error on a reply whose values are checked: tell an integrity
        // failure (with the key and field that differ) from an error reply.
        let (op, step) = (p.op, p.part.step());
        if self.driver.verifies(&op, step) {
            if let Err(why) = self.driver.verify(&op, reply) {
                self.integrity_failure = Some(why);
            }
        }
        ErrorReply::Fails { p, demoted }
    }

    /// Sends step `next` of `p`, whose first step succeeded with `reply`:
    /// a read-modify-write's write, or a scan's record reads. Returns the
    /// measured operations completed when that ended the operation here,
    /// `None` when it completes as it is (a scan of an empty range).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn follow_up(
        &mut self,
        p: Pending,
        next: Step,
        reply: &[u8],
        arrived: Instant,
        arrived_ns: u64,
        rec: &mut Recorder,
    ) -> Result<Option<u64>, ReadResult> {
        match next {
            Step::RmwWrite => {
                self.driver.write_key(&p.op, &mut self.key);
                let to = self.router.node_of(&self.key);
                if self.lanes[to].dead {
                    return Ok(Some(self.complete_part(
                        &p,
                        Outcome::Error,
                        arrived,
                        arrived_ns,
                        rec,
                    )));
                }
                self.driver.encode_rmw_write(
                    &p.op,
                    self.source.rng(),
                    &mut self.key,
                    &mut self.lanes[to].wbuf,
                );
                self.lanes[to].pending.push_back(Pending {
                    part: Part::RmwWrite,
                    ..p
                });
                Ok(Some(0))
            }
            Step::ScanRead => match self.send_scan_reads(p, reply) {
                Ok(ScanReads::None) => Ok(None),
                Ok(ScanReads::Sent) => Ok(Some(0)),
                Ok(ScanReads::AllDown) => Ok(Some(self.complete_part(
                    &p,
                    Outcome::Error,
                    arrived,
                    arrived_ns,
                    rec,
                ))),
                Err(e) => Err(ReadResult::Failed(
                    ErrorKind::Protocol,
                    format!("protocol error in a scan's key list: {e}"),
                )),
            },
            Step::First | Step::Fill => Ok(None),
        }
    }

    /// Cache-aside: read `p` missed. The miss is recorded as the store's
    /// answer, and the operation waits out the backend's penalty before
    /// the set of the record (its slot stays taken, as the application
    /// thread waits).
    #[inline(never)]
    fn await_fill(
        &mut self,
        p: Pending,
        penalty: kvbench_workload::cache_aside::Penalty,
        arrived: Instant,
        arrived_ns: u64,
        rec: &mut Recorder,
    ) {
        self.record_outcome(&p, Outcome::Miss, arrived, arrived_ns, rec);
        let wait = penalty.draw_ns(&mut self.penalty_rng);
        // The application's latency: the miss, then the backend's penalty
        // as modelled (kvbench's own delay in sending the set is measured
        // apart, as the fills' lateness).
        if self.limit.records(p.measured, arrived) {
            let from = self.start_ns(&p);
            rec.record_app(
                p.op.kind,
                arrived_ns.saturating_sub(from).saturating_add(wait),
            );
        }
        self.parked.push(Parked {
            due_ns: arrived_ns.saturating_add(wait),
            since_ns: arrived_ns,
            p: Pending {
                part: Part::Fill,
                ..p
            },
            why: CACHE_FILL,
        });
    }

    /// Sends one read per key in a scan's key list, each on its node's
    /// lane, as one group. A key whose node is down is not read, and fails
    /// the scan.
    fn send_scan_reads(
        &mut self,
        p: Pending,
        reply: &[u8],
    ) -> Result<ScanReads, kvbench_proto::DecodeError> {
        let driver = self.driver.clone();
        let (mut live, mut down) = (0u32, 0u32);
        driver.for_each_scan_key(reply, |key| {
            if self.lanes[self.router.node_of(key)].dead {
                down += 1;
            } else {
                live += 1;
            }
        })?;
        match (live, down) {
            (0, 0) => return Ok(ScanReads::None),
            (0, _) => return Ok(ScanReads::AllDown),
            _ => {}
        }
        let group = self.new_group(live);
        if down > 0 {
            self.groups[group as usize].outcome = Outcome::Error;
        }
        driver.for_each_scan_key(reply, |key| {
            let to = self.router.node_of(key);
            if self.lanes[to].dead {
                return;
            }
            let slot = self.keep_scan_key(key);
            driver.encode_scan_read(&p.op, key, &mut self.lanes[to].wbuf);
            self.lanes[to].pending.push_back(Pending {
                part: Part::ScanRead(slot),
                group,
                ..p
            });
        })?;
        Ok(ScanReads::Sent)
    }

    /// Sends a redirected request again, to the node the redirect names.
    /// Returns the request when it cannot be (an unknown node, or too many
    /// redirects), for the caller to fail.
    fn redirect(
        &mut self,
        mut p: Pending,
        r: Redirect,
        now_ns: u64,
        rec: &mut Recorder,
    ) -> Option<Pending> {
        let Router::Cluster(table) = &*self.router else {
            return Some(p);
        };
        let (to, addr) = match r {
            Redirect::Moved { slot, addr } => (table.moved(slot, addr), addr),
            Redirect::Ask { addr, .. } => (table.node_index(addr), addr),
        };
        if p.measured {
            rec.count_redirect(matches!(r, Redirect::Ask { .. }));
        }
        p.redirects = p.redirects.saturating_add(1);
        let Some(to) = to else {
            rec.note_error(&format!(
                "redirected to {addr}, past the most nodes a phase follows"
            ));
            return Some(p);
        };
        // A node that joined: its lane waits for its first connection.
        self.grow_lanes();
        if self.lanes[to].dead {
            // Down, or not yet opened (a node that joined): the request
            // waits for it, as any request for a node being reopened.
            if self.reopen && !self.lanes[to].gone {
                self.park(p, now_ns, NODE_JOINING);
                return None;
            }
            rec.note_error(&format!(
                "redirected to {addr}, whose connection had failed"
            ));
            return Some(p);
        }
        if p.redirects > MAX_REDIRECTS {
            rec.note_error(&format!(
                "a request was redirected more than {MAX_REDIRECTS} times"
            ));
            return Some(p);
        }
        p.asking = matches!(r, Redirect::Ask { .. });
        self.resend(p, to);
        None
    }

    /// Encodes request `p` again (after `ASKING` when `p.asking`) on lane
    /// `to`, and queues it there.
    fn resend(&mut self, p: Pending, to: usize) {
        let driver = self.driver.clone();
        let wbuf = &mut self.lanes[to].wbuf;
        if p.asking {
            resp::encode_command(wbuf, &[b"ASKING"]);
        }
        match p.part {
            Part::Main => {
                driver.write_key(&p.op, &mut self.key);
                driver.encode_first(&p.op, &mut self.redirect_rng, &self.key, wbuf);
            }
            Part::Index => {
                driver.write_key(&p.op, &mut self.key);
                driver.encode_index(&self.key, wbuf);
            }
            Part::RmwWrite => {
                driver.encode_rmw_write(&p.op, &mut self.redirect_rng, &mut self.key, wbuf);
            }
            Part::ScanRead(i) => driver.encode_scan_read(&p.op, &self.scan_keys[i as usize], wbuf),
            Part::Fill => driver.encode_fill(&p.op, &mut self.redirect_rng, &mut self.key, wbuf),
        }
        self.lanes[to].pending.push_back(p);
    }

    /// The node request `p` goes to now.
    fn route(&mut self, p: &Pending) -> usize {
        let driver = self.driver.clone();
        match p.part {
            Part::Main => {
                driver.write_key(&p.op, &mut self.key);
                self.router
                    .node_of(driver.first_request_key(&p.op, &self.key))
            }
            Part::Index => self.router.node_of(driver.index_key()),
            Part::RmwWrite | Part::Fill => {
                driver.write_key(&p.op, &mut self.key);
                self.router.node_of(&self.key)
            }
            Part::ScanRead(i) => self.router.node_of(&self.scan_keys[i as usize]),
        }
    }

    /// Parks request `p` (its backoff counted from `now_ns`) and asks for a
    /// refresh of the slot map.
    fn park(&mut self, p: Pending, now_ns: u64, why: &'static str) {
        self.park_since(p, now_ns, now_ns, why);
    }

    /// [`Client::park`] for a request that began to wait at `since_ns`.
    fn park_since(&mut self, mut p: Pending, now_ns: u64, since_ns: u64, why: &'static str) {
        if let Router::Cluster(t) = &*self.router {
            t.want_refresh();
        }
        let wait = self.retry.backoff.wait(p.parked(), &mut self.jitter);
        p.count_park();
        p.asking = false;
        self.parked.push(Parked {
            due_ns: now_ns + u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX),
            since_ns,
            p,
            why,
        });
    }

    /// Routes every parked request that is due again: sent when its node's
    /// connection is up, parked again when not, failed once it has waited
    /// for the timeout, or when the run is over.
    fn retry_parked(&mut self, now: Instant, rec: &mut Recorder) {
        let now_ns = self.nanos(now);
        let over = self.interrupted || self.deadline().is_some_and(|d| now >= d);
        let (due, waiting): (Vec<Parked>, Vec<Parked>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|q| over || q.due_ns <= now_ns);
        self.parked = waiting;
        for Parked {
            mut p,
            why,
            since_ns,
            due_ns,
        } in due
        {
            // A fill not yet sent when the run ends is the application's
            // business, not a failure of the store.
            if over && p.part == Part::Fill {
                self.ops -= 1;
                continue;
            }
            if over {
                self.complete_part(&p, Outcome::Error, now, now_ns, rec);
                continue;
            }
            if now_ns.saturating_sub(since_ns) > self.timeout_ns {
                let message = format!(
                    "timeout: waited {:?}: {why}",
                    Duration::from_nanos(self.timeout_ns)
                );
                self.fail_request(p, ErrorKind::Timeout, &message, now, rec);
                continue;
            }
            let to = self.route(&p);
            if self.lanes[to].gone && !self.router.redirects() {
                // Reopening was given up: no other node can take it.
                self.fail_request(p, ErrorKind::Closed, NODE_DOWN, now, rec);
                continue;
            }
            if self.lanes[to].dead {
                let why = if p.failures() > 0 {
                    why
                } else {
                    self.lost_reason()
                };
                self.park_since(p, now_ns, since_ns, why);
                continue;
            }
            if p.part == Part::Fill {
                // How late kvbench sends the set: its own delay, not the
                // application's.
                if self.limit.records(p.measured, now) {
                    rec.record_fill_lateness(now_ns.saturating_sub(due_ns));
                }
                p.sent_ns = now_ns;
            } else if p.measured {
                rec.count_retry();
            }
            self.resend(p, to);
        }
    }

    /// Why a request for a node whose connection is down waits.
    fn lost_reason(&self) -> &'static str {
        if self.router.redirects() {
            NODE_LOST
        } else {
            NODE_REOPENING
        }
    }

    /// True when requests are parked.
    pub(crate) fn has_parked(&self) -> bool {
        !self.parked.is_empty()
    }

    /// When the earliest parked request is due.
    pub(crate) fn next_retry(&self) -> Option<Instant> {
        self.parked
            .iter()
            .map(|p| p.due_ns)
            .min()
            .map(|ns| self.base + Duration::from_nanos(ns))
    }

    /// One request of an operation is answered with `outcome`: completes the
    /// operation when it was its last request. Returns 1 when a measured
    /// operation completed successfully.
    fn complete_part(
        &mut self,
        p: &Pending,
        outcome: Outcome,
        arrived: Instant,
        arrived_ns: u64,
        rec: &mut Recorder,
    ) -> u64 {
        if let Part::ScanRead(i) = p.part {
            self.free_scan_keys.push(i);
        }
        if p.part == Part::Fill {
            self.ops -= 1;
            if self.limit.records(p.measured, arrived) {
                rec.record_fill(outcome);
            }
            return 0;
        }
        let outcome = if p.group == NO_GROUP {
            outcome
        } else {
            let g = &mut self.groups[p.group as usize];
            g.outcome = worst(g.outcome, outcome);
            g.parts_left -= 1;
            if g.parts_left > 0 {
                return 0;
            }
            self.free_groups.push(p.group);
            g.outcome
        };
        self.op_done(p.op.kind, p.op.keynum);
        self.record_outcome(p, outcome, arrived, arrived_ns, rec)
    }

    /// An operation of `kind` on record `keynum` is complete: it leaves
    /// the requests in flight, and an insert is acknowledged. YCSB
    /// acknowledges an insert whatever its outcome (in a `finally`): an
    /// unacknowledged one would hide every later insert from reads.
    #[inline(always)]
    fn op_done(&mut self, kind: OpKind, keynum: u64) {
        self.ops -= 1;
        if kind == OpKind::Insert {
            self.source.acknowledge_insert(keynum);
        }
    }

    /// Records a closed loop's operation of `kind` answered with `outcome`
    /// after `latency_ns`: a success in the read's runs when it can join
    /// one, anything else in the recorder.
    #[inline(always)]
    fn record_closed(
        &mut self,
        kind: OpKind,
        outcome: Outcome,
        latency_ns: u64,
        arrived: Instant,
        rec: &mut Recorder,
    ) {
        if outcome != Outcome::Ok || !self.runs.add(kind, latency_ns, arrived, rec) {
            rec.record(kind, outcome, latency_ns, arrived);
        }
    }

    /// Where operation `p`'s latency starts: its intended send in open loop
    /// (response time), its send otherwise.
    #[inline]
    fn start_ns(&self, p: &Pending) -> u64 {
        if self.schedule.is_some() {
            p.intended_ns
        } else {
            p.sent_ns
        }
    }

    /// Records operation `p`'s `outcome` (when measured); returns 1 for a
    /// measured success.
    fn record_outcome(
        &mut self,
        p: &Pending,
        outcome: Outcome,
        arrived: Instant,
        arrived_ns: u64,
        rec: &mut Recorder,
    ) -> u64 {
        let integrity = self.integrity_failure.take();
        if !self.limit.records(p.measured, arrived) {
            return 0;
        }
        if integrity.is_some() || outcome == Outcome::Error {
            self.note_failed_key(&p.op, rec);
        }
        if let Some(why) = integrity {
            rec.record_integrity_failure(p.op.kind, &format!("integrity: {why}"), arrived);
            return 0;
        }
        let since = |from_ns: u64| arrived_ns.saturating_sub(from_ns);
        if self.schedule.is_some() {
            let lag = p.sent_ns.saturating_sub(p.intended_ns);
            rec.record_scheduled(
                p.op.kind,
                outcome,
                self.base + Duration::from_nanos(p.intended_ns),
                since(p.intended_ns),
                since(p.sent_ns),
                lag,
                arrived,
            );
        } else {
            self.record_closed(p.op.kind, outcome, since(p.sent_ns), arrived, rec);
        }
        // Cache-aside: a hit is the application's answer as it is.
        if outcome == Outcome::Ok
            && p.op.kind == OpKind::Read
            && self.driver.cache_aside().is_some()
        {
            rec.record_app(p.op.kind, since(self.start_ns(p)));
        }
        u64::from(outcome == Outcome::Ok)
    }

    /// `lane`'s connection failed: every measured operation with a request
    /// in flight on it fails with `kind` (warm-up failures are noted but not
    /// counted; they may have been executed). When lost connections are
    /// reopened and this one was lost (`Closed`, `Io`), requests not yet
    /// sent wait for it (parked); otherwise, and
    /// once reopening is given up ([`Client::give_up`]), operations for its
    /// node fail without being sent. The client stops when no lane is left.
    pub(crate) fn fail_lane(
        &mut self,
        lane: usize,
        kind: ErrorKind,
        message: &str,
        rec: &mut Recorder,
    ) {
        let now = Instant::now();
        let l = &mut self.lanes[lane];
        l.dead = true;
        // Reopened when the connection was lost (reset, closed); one that
        // timed out or spoke no protocol reaches a server that is there but
        // not answering properly, and reopening it would only repeat that.
        // With retries on, a timed-out connection is reopened too: its
        // requests are to be sent again.
        let lost = matches!(kind, ErrorKind::Closed | ErrorKind::Io)
            || (kind == ErrorKind::Timeout && self.retry.max > 0);
        l.gone = !self.reopen || !lost;
        l.wbuf.clear();
        l.held.clear();
        // A reply cut short by the loss must not be read as the start of
        // the next connection's first reply.
        (l.start, l.end) = (0, 0);
        self.held -= l.held_pending.len();
        let held: Vec<Pending> = l.held_pending.drain(..).map(|(p, _)| p).collect();
        let pending: Vec<Pending> = l.pending.drain(..).collect();
        let now_ns = self.nanos(now);
        let mut unsent = Vec::new();
        if self.router.redirects() || self.reopen {
            // Never sent: routed again once the slot map says where, or
            // once the connection is back.
            let why = self.lost_reason();
            for p in held {
                self.park(p, now_ns, why);
            }
        } else {
            unsent = held;
        }
        for p in pending {
            // In flight: failed, or sent again when retries are on.
            let Some(p) = self.retry_failed(p, now_ns) else {
                continue;
            };
            if p.measured {
                rec.count_node_error(lane);
            }
            self.fail_request(p, kind, message, now, rec);
        }
        for p in unsent {
            if p.measured {
                rec.count_node_error(lane);
            }
            self.fail_request(p, kind, message, now, rec);
        }
        if let Router::Cluster(t) = &*self.router {
            // Its slots may have gone to another node (a failover).
            t.want_refresh();
        }
        if self.lanes[lane].gone {
            rec.failed_connections += 1;
        } else {
            rec.lost_connections += 1;
        }
        self.stop_when_no_lane_is_left();
        rec.note_error(message);
    }

    /// Fails request `p` without a reply (`kind`): its operation fails
    /// once its other requests, if any, are answered.
    fn fail_request(
        &mut self,
        p: Pending,
        kind: ErrorKind,
        message: &str,
        now: Instant,
        rec: &mut Recorder,
    ) {
        if let Part::ScanRead(i) = p.part {
            self.free_scan_keys.push(i);
        }
        if p.group != NO_GROUP {
            let g = &mut self.groups[p.group as usize];
            g.outcome = Outcome::Error;
            g.parts_left -= 1;
            if g.parts_left > 0 {
                // The operation's other requests (on live lanes)
                // complete it, as an error.
                return;
            }
            self.free_groups.push(p.group);
        }
        self.ops -= 1;
        if p.op.kind == OpKind::Insert {
            self.source.acknowledge_insert(p.op.keynum);
        }
        if p.measured {
            rec.record_failure(p.op.kind, 1, kind, message, now);
            self.note_failed_key(&p.op, rec);
        }
    }

    fn stop_when_no_lane_is_left(&mut self) {
        if self.lanes.iter().all(|l| l.gone) {
            self.sending = false;
        }
    }

    /// Adds a lane for every node that joined the cluster since the last
    /// call (the router's node list is the phase's, shared by its
    /// workers). A new lane is down until the I/O loop has opened its
    /// first connection ([`Client::lane_up`]); its requests wait.
    #[inline]
    fn grow_lanes(&mut self) {
        let n = self.router.nodes();
        while self.lanes.len() < n {
            let mut l = Lane::new(self.pipeline);
            l.dead = true;
            l.joining = true;
            self.lanes.push(l);
        }
    }

    /// The address of the node behind `lane`, when the router knows it (a
    /// cluster's nodes, including those that joined).
    pub(crate) fn lane_addr(&self, lane: usize) -> Option<SocketAddr> {
        match &*self.router {
            Router::Cluster(t) => t.node_addr(lane),
            _ => None,
        }
    }

    /// `lane`'s connection is open (again, or for the first time for a
    /// node that joined): requests waiting for it are sent at the next
    /// [`Client::fill`].
    pub(crate) fn lane_up(&mut self, lane: usize, now: Instant, rec: &mut Recorder) {
        let l = &mut self.lanes[lane];
        l.dead = false;
        l.touched = false;
        if std::mem::take(&mut l.joining) {
            // A node that joined: its first connection, not a reconnect.
            rec.connections += 1;
        } else {
            rec.count_reconnect(lane);
        }
        self.wake_parked(now);
    }

    /// Makes every parked request due at `now`: its node's connection is
    /// back, or given up, and it goes (or fails) at the next fill.
    fn wake_parked(&mut self, now: Instant) {
        let now_ns = self.nanos(now);
        for q in self.parked.iter_mut() {
            q.due_ns = q.due_ns.min(now_ns);
        }
    }

    /// Opening `lane`'s connection was given up (`message` says why): again
    /// after a loss, or for the first time for a node that joined.
    /// Operations for its node fail from now on, as without reopening.
    pub(crate) fn give_up(&mut self, lane: usize, message: &str, now: Instant, rec: &mut Recorder) {
        let l = &mut self.lanes[lane];
        l.gone = true;
        if std::mem::take(&mut l.joining) {
            // Never opened: a connection that failed, not a lost one.
            rec.connections += 1;
        } else {
            rec.lost_connections = rec.lost_connections.saturating_sub(1);
        }
        self.wake_parked(now);
        rec.failed_connections += 1;
        rec.note_error(message);
        self.stop_when_no_lane_is_left();
    }

    /// True once `lane`'s connection will not be reopened.
    pub(crate) fn lane_gone(&self, lane: usize) -> bool {
        self.lanes[lane].gone
    }

    /// True once `lane`'s connection has failed.
    pub(crate) fn lane_dead(&self, lane: usize) -> bool {
        self.lanes[lane].dead
    }
}

/// The outcome of an operation of several replies: any error wins, then any miss.
fn worst(a: Outcome, b: Outcome) -> Outcome {
    match (a, b) {
        (Outcome::Error, _) | (_, Outcome::Error) => Outcome::Error,
        (Outcome::Miss, _) | (_, Outcome::Miss) => Outcome::Miss,
        _ => Outcome::Ok,
    }
}

#[cfg(test)]
mod tests {
    /// Every request in flight has a pending entry, and at pipeline 16 the
    /// entries of 50 connections no longer fit in L1 between a send and
    /// its reply: a field that grows the entry costs CPU on every reply.
    #[test]
    fn a_pending_request_stays_at_72_bytes() {
        assert!(std::mem::size_of::<super::Pending>() <= 72);
    }
}
