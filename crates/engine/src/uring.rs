//! An io_uring I/O loop for closed-loop connections: one worker thread
//! drives all its connections through one ring, so the sends and receives
//! of many connections cost one `io_uring_enter` instead of a `write`, a
//! `read` and an `epoll_wait` each. At one request per connection that is
//! where a client's CPU goes.
//!
//! Per operation the ring does as little as the kernel allows:
//! - one multishot receive per connection stays armed for the whole run and
//!   fills buffers from a provided-buffer ring ([`BufRing`]), so no receive
//!   is submitted, and no poll armed or removed, per reply;
//! - sockets are registered with the ring (fixed files), so no file
//!   reference is taken and dropped per send and per receive;
//! - completion work waits until the thread asks for events
//!   (`DEFER_TASKRUN`) instead of interrupting it.
//!
//! The protocol logic is [`Client`]'s, exactly as in the tokio loop
//! (`conn.rs`); only the I/O differs. Memory rules the kernel imposes:
//! - a send reads from `Conn::sending`, swapped out of `Client::wbuf`, so
//!   the client may keep encoding (follow-up steps) while a send is in flight;
//! - receives write only into the provided buffers, which the loop parses
//!   from (copying an incomplete tail) and hands back;
//! - the loop returns only when no operation is in flight (armed receives
//!   are cancelled once their connection is done), and unregisters the
//!   buffers before freeing them, so nothing is freed under the kernel.

use crate::bufring::{self, BufRing};
use crate::client::{Client, ReadResult};
use crate::cpu::thread_cpu_seconds;
use crate::recorder::{ErrorKind, Recorder};
use crate::reopen::{reset_on_close, Reopener, Reopening};
use crate::route::sentinel::Sentinel;
use crate::timer::earliest;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a completion is for (the low two bits of its user data).
const WRITE: u64 = 0;
const READ: u64 = 1;
const CANCEL: u64 = 2;
/// How often the loop wakes without completions, to check timeouts and Ctrl-C.
const TICK: Duration = Duration::from_millis(100);
/// How often it looks for the end of an attempt to reopen a connection.
const REOPEN_POLL: Duration = Duration::from_millis(2);
/// Size of one provided receive buffer: a few replies of the usual sizes;
/// a larger reply simply spans several buffers.
const RECV_BUF: usize = 4096;
/// At most this many provided buffers per ring (4 MiB at 4 KiB each). Every
/// buffer is handed back in the loop iteration that filled it, so the ring
/// only needs to cover the replies of one iteration; when it runs dry a
/// receive ends with `ENOBUFS` and is armed again, nothing is lost.
const MAX_RECV_BUFS: usize = 1024;

/// True when this kernel lets this process create a ring with everything
/// the loop uses: provided-buffer rings (Linux 5.19) and multishot
/// receives (Linux 6.0).
pub fn available() -> bool {
    // Asked once per cell when an experiment is planned: probed once.
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(probe)
}

fn probe() -> bool {
    kernel_at_least(6, 0)
        && IoUring::new(2).is_ok_and(|ring| {
            BufRing::new(&ring, 1, RECV_BUF).is_ok_and(|mut b| {
                b.unregister(&ring);
                true
            })
        })
}

/// The running kernel's version is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: uname fills the struct we pass.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return false;
    }
    let release: String = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8 as char)
        .collect();
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

/// One connection: lane `lane` of client `client`.
struct Conn {
    sock: TcpStream,
    client: usize,
    lane: usize,
    sending: Vec<u8>,
    sent: usize,
    writing: bool,
    /// A multishot receive is armed (until a completion without `MORE`).
    reading: bool,
    /// When the connection last received bytes (or started waiting for them).
    last_progress: Instant,
    failed: bool,
    /// A cancel of its receive is in flight.
    cancelling: bool,
    /// Lost, and on its way back (see `reopen.rs`).
    lost: Option<Lost>,
    /// Done, or failed for good: nothing more is done with it.
    finished: bool,
    /// Named by its descriptor, not a registered slot: a connection to a
    /// node that joined mid-phase (the registered table has no room).
    raw: bool,
}

/// The first connection of a lane for a node that joined the cluster
/// mid-phase, on its way (see `Client::grow_lanes`).
struct Joining {
    client: usize,
    lane: usize,
    state: Reopening,
    attempt: Option<Receiver<Result<TcpStream, String>>>,
}

/// A lost connection on its way back.
struct Lost {
    state: Reopening,
    /// The attempt in progress, on a thread of its own.
    attempt: Option<Receiver<Result<TcpStream, String>>>,
}

impl Conn {
    fn new(sock: TcpStream, client: usize, lane: usize, now: Instant, raw: bool) -> Conn {
        Conn {
            sock,
            client,
            lane,
            sending: Vec::new(),
            sent: 0,
            writing: false,
            reading: false,
            last_progress: now,
            failed: false,
            cancelling: false,
            lost: None,
            finished: false,
            raw,
        }
    }

    /// Nothing the ring does still refers to its socket.
    fn idle(&self) -> bool {
        !self.reading && !self.writing && !self.cancelling
    }
}

/// What the loop shares with its worker.
pub(crate) struct Env<'a> {
    pub timeout: Duration,
    pub progress: &'a AtomicU64,
    pub stop: &'a AtomicBool,
    pub measure_from: Instant,
    /// How lost connections are opened again (`None`: they are not).
    pub reopen: Option<Arc<Reopener>>,
}

/// How entries name a connection's socket.
#[derive(Clone, Copy)]
enum Files {
    /// Registered with the ring: index `i` is connection `i`.
    Fixed,
    /// Plain descriptors (registration refused, e.g. by RLIMIT_NOFILE).
    Raw,
}

/// Runs every connection to completion. Returns the thread's CPU time at
/// the window's start (for the busy share), when the window was reached.
///
/// # Errors
/// A message when the ring cannot be set up or the kernel refuses it.
pub(crate) fn run(
    clients: Vec<(Vec<TcpStream>, Client)>,
    env: &Env<'_>,
    rec: &mut Recorder,
) -> Result<Option<(Instant, f64)>, String> {
    let n: usize = clients.iter().map(|(s, _)| s.len()).sum();
    let (mut ring, mut bufs) = setup(n)?;
    let result = drive(&mut ring, &mut bufs, clients, env, rec);
    // Every receive has ended (drive returns only then, or on a ring
    // failure, when `bufs` stays registered and is leaked by its Drop).
    if result.is_ok() {
        bufs.unregister(&ring);
    }
    // The ring holds a reference to every registered socket, and a ring is
    // torn down asynchronously after it is dropped: release the sockets now,
    // so they are closed when this returns and the server sees the clients
    // go before anything is asked of it next (a probe may need a free slot).
    let _ = ring.submitter().unregister_files();
    result
}

/// The ring and the provided receive buffers the loop uses for `n`
/// connections. Public so that `bench/efficiency`'s bare client, which
/// measures the floor under this loop, sets up exactly the same ring.
///
/// # Errors
/// A message when the kernel refuses the ring or the buffers.
pub fn setup(n: usize) -> Result<(IoUring, BufRing), String> {
    // Sends and receive (re-)arms, plus a cancel each at the end.
    let entries = (2 * n + 8).next_power_of_two().min(4096) as u32;
    // One thread submits and reaps (SINGLE_ISSUER), so completion work can
    // wait until the thread asks for events (DEFER_TASKRUN, Linux 6.1+)
    // instead of interrupting it; older kernels get a plain ring.
    let ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_cqsize(entries * 4)
        .build(entries)
        .or_else(|_| IoUring::new(entries))
        .map_err(|e| format!("cannot set up io_uring: {e}"))?;
    let nbufs = (2 * n).next_power_of_two().clamp(16, MAX_RECV_BUFS) as u16;
    let bufs = BufRing::new(&ring, nbufs, RECV_BUF)
        .map_err(|e| format!("cannot register io_uring receive buffers: {e}"))?;
    Ok((ring, bufs))
}

/// Runs the loop over `input`'s clients until none has an operation in
/// flight; see [`Loop`].
fn drive(
    ring: &mut IoUring,
    bufs: &mut BufRing,
    input: Vec<(Vec<TcpStream>, Client)>,
    env: &Env<'_>,
    rec: &mut Recorder,
) -> Result<Option<(Instant, f64)>, String> {
    Loop::new(ring, bufs, input, env, rec).run()
}

/// The loop's state between iterations. Each iteration: notice what
/// changed without a completion (Ctrl-C, a failover, due retries,
/// timeouts), advance connections on their way back, queue every dirty
/// client's sends and receives, then submit, wait and handle completions.
struct Loop<'a, 'e> {
    ring: &'a mut IoUring,
    bufs: &'a mut BufRing,
    env: &'a Env<'e>,
    rec: &'a mut Recorder,
    files: Files,
    clients: Vec<Client>,
    conns: Vec<Conn>,
    /// Each client's connections, by lane (`None` while a lane for a node
    /// that joined waits for its first connection).
    lane_conn: Vec<Vec<Option<usize>>>,
    joining: Vec<Joining>,
    in_flight: usize,
    /// Sends queued since the last submission: their completions arrive at
    /// once (a send to a socket with buffer space completes inline), so the
    /// wait asks for one completion more, which is what the loop waits for.
    sends_queued: usize,
    /// Clients with something to do: their lanes' sends, receives, ends.
    dirty: Vec<usize>,
    /// Which clients a completion already put in `dirty` this round: a
    /// connection's send and its reply often complete in one wait, and a
    /// client queued twice fills twice.
    queued: Vec<bool>,
    was_awaiting: Vec<bool>,
    completions: Vec<(u64, i32, u32)>,
    next_sweep: Instant,
    stopped: bool,
    /// When the earliest parked request of any client is due (cluster retries).
    retry_at: Option<Instant>,
    /// Connections on their way back, when the next attempt is due, and
    /// whether one is under way (then the loop looks for its end often).
    reopening: usize,
    reopen_at: Option<Instant>,
    attempting: bool,
    /// A Sentinel group's master, followed across failovers.
    follow: Option<Arc<Sentinel>>,
    moves_seen: u64,
}

impl<'a, 'e> Loop<'a, 'e> {
    fn new(
        ring: &'a mut IoUring,
        bufs: &'a mut BufRing,
        input: Vec<(Vec<TcpStream>, Client)>,
        env: &'a Env<'e>,
        rec: &'a mut Recorder,
    ) -> Self {
        let now = Instant::now();
        let mut lane_conn: Vec<Vec<Option<usize>>> = Vec::with_capacity(input.len());
        let mut clients = Vec::with_capacity(input.len());
        let mut conns: Vec<Conn> = Vec::new();
        for (ci, (socks, client)) in input.into_iter().enumerate() {
            let mut lanes = Vec::with_capacity(socks.len());
            for (lane, sock) in socks.into_iter().enumerate() {
                lanes.push(Some(conns.len()));
                conns.push(Conn::new(sock, ci, lane, now, false));
            }
            lane_conn.push(lanes);
            clients.push(client);
        }
        let fds: Vec<i32> = conns.iter().map(|c| c.sock.as_raw_fd()).collect();
        let files = match ring.submitter().register_files(&fds) {
            Ok(()) => Files::Fixed,
            Err(_) => Files::Raw,
        };
        Loop {
            ring,
            bufs,
            env,
            rec,
            files,
            dirty: (0..clients.len()).collect(),
            queued: vec![true; clients.len()],
            completions: Vec::with_capacity(4 * conns.len() + 8),
            clients,
            conns,
            lane_conn,
            joining: Vec::new(),
            in_flight: 0,
            sends_queued: 0,
            was_awaiting: Vec::new(),
            next_sweep: now + TICK,
            stopped: false,
            retry_at: None,
            reopening: 0,
            reopen_at: None,
            attempting: false,
            follow: env.reopen.as_ref().and_then(|r| r.follow.clone()),
            moves_seen: 0,
        }
    }

    /// Returns the thread's CPU time at the window's start, when reached.
    fn run(mut self) -> Result<Option<(Instant, f64)>, String> {
        let mut cpu_start = None;
        loop {
            let now = Instant::now();
            if cpu_start.is_none() && now >= self.env.measure_from {
                cpu_start = Some((now, thread_cpu_seconds()));
            }
            self.notice(now);
            if self.reopening > 0 {
                self.reopen(now);
            }
            self.queue(now)?;
            // The next parked request, reopening attempt, or look at one under way.
            let wake = earliest(self.retry_at, self.reopen_at);
            let mut wait = wake.map_or(TICK, |t| t.saturating_duration_since(now).min(TICK));
            if self.attempting {
                wait = wait.min(REOPEN_POLL);
            }
            if self.in_flight == 0 {
                if wake.is_none() && self.reopening == 0 {
                    return Ok(cpu_start);
                }
                // Every request left is parked, or waits for its connection.
                std::thread::sleep(wait);
                continue;
            }
            self.submit_and_wait(wait)?;
            let arrived = Instant::now();
            let done = self.complete(arrived)?;
            if done > 0 {
                self.env.progress.fetch_add(done, Ordering::Relaxed);
            }
        }
    }

    /// What changed without a completion: Ctrl-C, a followed master that
    /// moved, parked requests that are due, and connections that waited
    /// past the timeout.
    fn notice(&mut self, now: Instant) {
        if !self.stopped && self.env.stop.load(Ordering::Relaxed) {
            self.stopped = true;
            for (ci, c) in self.clients.iter_mut().enumerate() {
                c.stop_sending();
                self.dirty.push(ci);
            }
        }
        let moved = self
            .follow
            .as_ref()
            .and_then(|f| f.moved(&mut self.moves_seen));
        if let Some(master) = moved {
            // Connections to the old master are given up and reopened
            // to the new one (see `route/sentinel.rs`).
            let msg = format!("the master moved to {master} (+switch-master)");
            for c in self.conns.iter_mut() {
                if !c.failed && !c.finished && c.sock.peer_addr().ok() != Some(master) {
                    let ci = c.client;
                    let client = &mut self.clients[ci];
                    self.reopening += fail(c, client, ErrorKind::Closed, &msg, self.rec, self.env);
                    self.dirty.push(ci);
                }
            }
        }
        if self.retry_at.is_some_and(|t| now >= t) {
            self.retry_at = None;
            let clients = &self.clients;
            self.dirty
                .extend((0..clients.len()).filter(|&ci| clients[ci].has_parked()));
        }
        if now >= self.next_sweep {
            self.next_sweep = now + TICK;
            // A worker waiting for replies still finishes its seconds on time.
            self.rec.series.tick(now);
            let timeout = self.env.timeout;
            for c in self.conns.iter_mut() {
                if !c.failed
                    && self.clients[c.client].awaiting(c.lane)
                    && now.saturating_duration_since(c.last_progress) > timeout
                {
                    let ci = c.client;
                    let msg = format!("timeout: no reply within {timeout:?}");
                    let client = &mut self.clients[ci];
                    self.reopening += fail(c, client, ErrorKind::Timeout, &msg, self.rec, self.env);
                    self.dirty.push(ci);
                }
            }
        }
    }

    /// Advances every connection on its way back: lost ones, and the first
    /// connections of lanes for nodes that joined.
    fn reopen(&mut self, now: Instant) {
        self.reopen_at = None;
        self.attempting = false;
        let Some(r) = self.env.reopen.as_ref() else {
            return;
        };
        for i in 0..self.conns.len() {
            self.reopen_lost(i, r, now);
        }
        if !self.joining.is_empty() {
            let mut joins = Joins {
                conns: &mut self.conns,
                lane_conn: &mut self.lane_conn,
                clients: &mut self.clients,
                rec: self.rec,
                dirty: &mut self.dirty,
                now,
            };
            let (ended, due, under_way) = joins.advance(&mut self.joining, r);
            self.reopening -= ended;
            self.reopen_at = earliest(self.reopen_at, due);
            self.attempting |= under_way;
        }
    }

    /// Connection `i`, if lost: starts its next attempt when due, or takes
    /// in the one that ended (the connection is back, or given up).
    fn reopen_lost(&mut self, i: usize, r: &Arc<Reopener>, now: Instant) {
        let c = &mut self.conns[i];
        let idle = c.idle();
        let Some(l) = c.lost.as_mut() else {
            return;
        };
        let client = &mut self.clients[c.client];
        if client.is_done() {
            // Nothing left to send on it.
            c.lost = None;
            self.reopening -= 1;
            self.dirty.push(c.client);
            return;
        }
        let Some(attempt) = &l.attempt else {
            if now >= l.state.due && idle {
                l.attempt = Some(r.open_plain(c.lane, client.lane_addr(c.lane)));
                self.attempting = true;
            } else {
                self.reopen_at = earliest(self.reopen_at, Some(l.state.due));
            }
            return;
        };
        let opened = match attempt.try_recv() {
            Err(TryRecvError::Empty) => {
                self.attempting = true;
                return;
            }
            Err(TryRecvError::Disconnected) => Err("the attempt ended without a word".into()),
            Ok(Ok(sock)) => match self.files {
                Files::Fixed if !c.raw => self
                    .ring
                    .submitter()
                    .register_files_update(i as u32, &[sock.as_raw_fd()])
                    .map(|_| sock)
                    .map_err(|e| format!("cannot register the new socket: {e}")),
                _ => Ok(sock),
            },
            Ok(Err(e)) => Err(e),
        };
        l.attempt = None;
        match opened {
            Ok(sock) => {
                // The old socket closes here, the ring no longer holding it.
                c.sock = sock;
                c.failed = false;
                c.sending.clear();
                c.sent = 0;
                c.last_progress = now;
                c.lost = None;
                self.reopening -= 1;
                client.lane_up(c.lane, now, self.rec);
                self.dirty.push(c.client);
            }
            Err(e) => {
                let addr = r.addr_for(c.lane, client.lane_addr(c.lane));
                if let Some(why) = r.attempt_failed(&mut l.state, addr, &e, now) {
                    c.lost = None;
                    c.finished = true;
                    self.reopening -= 1;
                    client.give_up(c.lane, &why, now, self.rec);
                    self.dirty.push(c.client);
                }
            }
        }
    }

    /// Gives every lane of a client that changed something to send, a
    /// receive armed while it awaits replies, and a cancel once the
    /// client is done (a lane may get requests again until then).
    fn queue(&mut self, now: Instant) -> Result<(), String> {
        let mut dirty = std::mem::take(&mut self.dirty);
        for ci in dirty.drain(..) {
            self.queued[ci] = false;
            self.queue_client(ci, now)?;
        }
        // Nothing above adds to `dirty`: keep its allocation.
        self.dirty = dirty;
        Ok(())
    }

    fn queue_client(&mut self, ci: usize, now: Instant) -> Result<(), String> {
        let client = &mut self.clients[ci];
        self.was_awaiting.clear();
        self.was_awaiting
            .extend((0..client.lanes()).map(|l| client.awaiting(l)));
        client.fill(now, self.rec);
        if let Some(t) = client.next_retry() {
            self.retry_at = Some(self.retry_at.map_or(t, |r| r.min(t)));
        }
        // Nodes that joined the cluster: lanes wait for a connection.
        while self.lane_conn[ci].len() < client.lanes() {
            let lane = self.lane_conn[ci].len();
            self.lane_conn[ci].push(None);
            match &self.env.reopen {
                Some(r) => {
                    self.joining.push(Joining {
                        client: ci,
                        lane,
                        state: r.join(lane, self.rec.connections, now),
                        attempt: None,
                    });
                    self.reopening += 1;
                    self.reopen_at = Some(now);
                }
                None => client.give_up(lane, crate::conn::NO_JOIN, now, self.rec),
            }
        }
        for i in self.lane_conn[ci].iter().flatten().copied() {
            let c = &mut self.conns[i];
            if c.finished {
                continue;
            }
            if c.failed {
                // Its receive ends (the socket is shut down); cancel it
                // too, so the socket is free to be replaced.
                if c.reading && !c.cancelling {
                    push(self.ring, cancel(i))?;
                    c.cancelling = true;
                    self.in_flight += 1;
                }
                if c.lost.is_none() {
                    c.finished = true;
                }
                continue;
            }
            if !c.writing {
                let wbuf = client.wbuf(c.lane);
                if !wbuf.is_empty() {
                    std::mem::swap(&mut c.sending, wbuf);
                    c.sent = 0;
                    push(self.ring, send(c, i, self.files))?;
                    c.writing = true;
                    self.in_flight += 1;
                    self.sends_queued += 1;
                }
            }
            if client.awaiting(c.lane) {
                if !self.was_awaiting.get(c.lane).copied().unwrap_or(true) {
                    c.last_progress = now;
                }
                if !c.reading {
                    push(self.ring, recv(c, i, self.files))?;
                    c.reading = true;
                    self.in_flight += 1;
                }
            }
            if client.is_done() {
                c.finished = true;
                if c.reading && !c.cancelling {
                    push(self.ring, cancel(i))?;
                    self.in_flight += 1;
                }
            }
        }
        Ok(())
    }

    /// Submits what is queued and waits up to `wait` for completions.
    fn submit_and_wait(&mut self, wait: Duration) -> Result<(), String> {
        self.bufs.publish();
        let ts = types::Timespec::new().nsec(wait.as_nanos() as u32);
        let args = types::SubmitArgs::new().timespec(&ts);
        // Without this, a batch of sends would return at once with their own
        // completions and cost a second system call to wait for the replies.
        let want = (self.sends_queued + 1).min(self.in_flight);
        self.sends_queued = 0;
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(format!("io_uring_enter failed: {e}")),
        }
    }

    /// Handles every completion that arrived; returns how many measured
    /// operations completed.
    fn complete(&mut self, arrived: Instant) -> Result<u64, String> {
        let mut completions = std::mem::take(&mut self.completions);
        completions.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        let mut done = 0u64;
        let mut result = Ok(());
        for &(data, res, flags) in &completions {
            let i = (data >> 2) as usize;
            let ci = self.conns[i].client;
            if !self.queued[ci] {
                self.queued[ci] = true;
                self.dirty.push(ci);
            }
            match data & 3 {
                WRITE => {
                    if let Err(e) = self.sent(i, res) {
                        result = Err(e);
                        break;
                    }
                }
                READ => done += self.received(i, res, flags, arrived),
                _ => {
                    // CANCEL: its receive reports for itself.
                    self.in_flight -= 1;
                    self.conns[i].cancelling = false;
                }
            }
        }
        completions.clear();
        self.completions = completions;
        result.map(|()| done)
    }

    /// A send on connection `i` completed with `res`: the rest of its
    /// bytes are sent again, or the connection failed.
    fn sent(&mut self, i: usize, res: i32) -> Result<(), String> {
        self.in_flight -= 1;
        let c = &mut self.conns[i];
        c.writing = false;
        if c.failed {
            return Ok(());
        }
        if res < 0 {
            let msg = format!("write failed: {}", std::io::Error::from_raw_os_error(-res));
            let client = &mut self.clients[c.client];
            self.reopening += fail(c, client, ErrorKind::Io, &msg, self.rec, self.env);
            return Ok(());
        }
        c.sent += res as usize;
        if c.sent < c.sending.len() {
            push(self.ring, send(c, i, self.files))?;
            c.writing = true;
            self.in_flight += 1;
            self.sends_queued += 1;
        } else {
            c.sending.clear();
        }
        Ok(())
    }

    /// A receive on connection `i` completed with `res`: its bytes go to
    /// the client, or the connection failed (or the receive is armed again
    /// when still needed). Returns how many measured operations completed.
    fn received(&mut self, i: usize, res: i32, flags: u32, arrived: Instant) -> u64 {
        let c = &mut self.conns[i];
        let client = &mut self.clients[c.client];
        if !cqueue::more(flags) {
            self.in_flight -= 1;
            c.reading = false;
        }
        if res > 0 {
            let Some(bid) = cqueue::buffer_select(flags) else {
                let msg = "receive completed without a buffer";
                self.reopening += fail(c, client, ErrorKind::Io, msg, self.rec, self.env);
                return 0;
            };
            let mut done = 0;
            if !c.failed {
                c.last_progress = arrived;
                let bytes = self.bufs.buffer(bid, res as usize);
                match client.on_bytes(c.lane, bytes, arrived, self.rec) {
                    ReadResult::Progress(n) => done = n,
                    ReadResult::Failed(kind, msg) => {
                        self.reopening += fail(c, client, kind, &msg, self.rec, self.env)
                    }
                }
            }
            self.bufs.give_back(bid);
            return done;
        }
        if c.failed {
            return 0;
        }
        let why = match -res {
            // Cancelled at the end, or out of buffers: armed again if still needed.
            libc::ECANCELED | libc::ENOBUFS => return 0,
            0 if c.finished => return 0,
            0 => (ErrorKind::Closed, "connection closed by server".to_string()),
            libc::EINVAL => (
                ErrorKind::Io,
                "the kernel refused a multishot receive (needs Linux 6.0): use --io tokio"
                    .to_string(),
            ),
            e => (
                ErrorKind::Io,
                format!("read failed: {}", std::io::Error::from_raw_os_error(e)),
            ),
        };
        self.reopening += fail(c, client, why.0, &why.1, self.rec, self.env);
        0
    }
}

/// A cancel of connection `i`'s armed receive.
fn cancel(i: usize) -> squeue::Entry {
    opcode::AsyncCancel::new(tag(i, READ))
        .build()
        .user_data(tag(i, CANCEL))
}

fn tag(i: usize, kind: u64) -> u64 {
    ((i as u64) << 2) | kind
}

/// How an entry names a socket.
enum Target {
    Fixed(types::Fixed),
    Fd(types::Fd),
}

/// How an entry names connection `i`'s socket.
fn target(c: &Conn, i: usize, files: Files) -> Target {
    match files {
        Files::Fixed if !c.raw => Target::Fixed(types::Fixed(i as u32)),
        _ => Target::Fd(types::Fd(c.sock.as_raw_fd())),
    }
}

/// What the first connections of lanes for nodes that joined touch.
struct Joins<'a> {
    conns: &'a mut Vec<Conn>,
    lane_conn: &'a mut [Vec<Option<usize>>],
    clients: &'a mut [Client],
    rec: &'a mut Recorder,
    dirty: &'a mut Vec<usize>,
    now: Instant,
}

impl Joins<'_> {
    /// Starts the attempts that are due and takes in those that ended: a
    /// connection becomes a connection of the loop (named by its
    /// descriptor), a lane given up fails its operations. Returns how many
    /// joins ended, when the next attempt is due, and whether one is under
    /// way.
    fn advance(
        &mut self,
        joining: &mut Vec<Joining>,
        r: &Arc<Reopener>,
    ) -> (usize, Option<Instant>, bool) {
        let (mut ended, mut due, mut under_way) = (0, None, false);
        joining.retain_mut(|j| {
            let client = &mut self.clients[j.client];
            if client.is_done() {
                ended += 1;
                return false;
            }
            let routed = client.lane_addr(j.lane);
            let Some(attempt) = &j.attempt else {
                if self.now >= j.state.due {
                    j.attempt = Some(r.open_plain(j.lane, routed));
                    under_way = true;
                } else {
                    due = earliest(due, Some(j.state.due));
                }
                return true;
            };
            let opened = match attempt.try_recv() {
                Err(TryRecvError::Empty) => {
                    under_way = true;
                    return true;
                }
                Err(TryRecvError::Disconnected) => Err("the attempt ended without a word".into()),
                Ok(opened) => opened,
            };
            j.attempt = None;
            match opened {
                Ok(sock) => {
                    self.lane_conn[j.client][j.lane] = Some(self.conns.len());
                    self.conns
                        .push(Conn::new(sock, j.client, j.lane, self.now, true));
                    client.lane_up(j.lane, self.now, self.rec);
                }
                Err(e) => {
                    match r.attempt_failed(&mut j.state, r.addr_for(j.lane, routed), &e, self.now) {
                        Some(why) => client.give_up(j.lane, &why, self.now, self.rec),
                        None => {
                            due = earliest(due, Some(j.state.due));
                            return true;
                        }
                    }
                }
            }
            self.dirty.push(j.client);
            ended += 1;
            false
        });
        (ended, due, under_way)
    }
}

fn send(c: &Conn, i: usize, files: Files) -> squeue::Entry {
    let rest = &c.sending[c.sent..];
    let (ptr, len) = (rest.as_ptr(), rest.len() as u32);
    let e = match target(c, i, files) {
        Target::Fixed(f) => opcode::Send::new(f, ptr, len).build(),
        Target::Fd(f) => opcode::Send::new(f, ptr, len).build(),
    };
    e.user_data(tag(i, WRITE))
}

/// A multishot receive for connection `i`, into the provided buffers.
fn recv(c: &Conn, i: usize, files: Files) -> squeue::Entry {
    let e = match target(c, i, files) {
        Target::Fixed(f) => opcode::RecvMulti::new(f, bufring::GROUP).build(),
        Target::Fd(f) => opcode::RecvMulti::new(f, bufring::GROUP).build(),
    };
    e.user_data(tag(i, READ))
}

/// Queues `e`, submitting first when the submission queue is full.
#[inline(always)]
fn push(ring: &mut IoUring, e: squeue::Entry) -> Result<(), String> {
    loop {
        // SAFETY: every buffer an entry points to lives in `conns` or the
        // buffer ring, which outlive the ring's use of them (see the module
        // documentation).
        if unsafe { ring.submission().push(&e) }.is_ok() {
            return Ok(());
        }
        ring.submit()
            .map_err(|err| format!("io_uring submit failed: {err}"))?;
    }
}

/// Fails a connection (one lane of its client): the requests in flight on
/// it become errors, and the socket is shut down so the kernel completes
/// whatever is still queued on it. Returns 1 when it is to be reopened
/// (its node's requests wait meanwhile), 0 when its node's later
/// operations fail unsent.
fn fail(
    c: &mut Conn,
    client: &mut Client,
    kind: ErrorKind,
    message: &str,
    rec: &mut Recorder,
    env: &Env<'_>,
) -> usize {
    client.fail_lane(c.lane, kind, message, rec);
    c.failed = true;
    reset_on_close(&c.sock);
    let _ = c.sock.shutdown(std::net::Shutdown::Both);
    match (&env.reopen, client.lane_gone(c.lane), &c.lost) {
        (Some(r), false, None) => {
            c.lost = Some(Lost {
                state: r.begin(c.lane, rec.lost_connections, Instant::now()),
                attempt: None,
            });
            1
        }
        _ => 0,
    }
}
