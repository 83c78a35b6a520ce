//! The tokio I/O loop of one client: writes what [`Client`] encodes on each
//! of its connections (one per node), reads replies into it, and reads the
//! clock once before each round of writes and once after each read. Every
//! request in a write shares that write's send time (it is when they left);
//! every reply in a read shares that read's arrival time (it is when kvbench
//! saw them).
//!
//! Open loop: a client with room in its pipeline also wakes at its next
//! slot, on a microsecond-precise [`Timer`]; a cluster client also wakes
//! when a parked request is due to be tried again.

use crate::client::{Client, ReadResult};
use crate::recorder::{ErrorKind, Recorder};
use crate::reopen::{reset_on_close, Opening, Reopener, Reopening};
use crate::timer::{earliest, Timer};
use kvbench_connect::AsyncStream;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

/// Why a node that joined mid-phase gets no connection.
pub(crate) const NO_JOIN: &str = "a node joined the cluster while the phase ran; lost connections are not reopened in this run (--no-reconnect, or a server kvbench started without --max-retries or --fault), so none was opened to it and its operations fail";

/// How often a client following a Sentinel group looks whether its
/// master has moved, when nothing else wakes it.
const FOLLOW_TICK: Duration = Duration::from_millis(50);

/// What a connection task shares with its worker.
pub(crate) struct Shared {
    pub timeout: Duration,
    pub recorder: Rc<RefCell<Recorder>>,
    /// Measured completions of this worker, read by the progress display.
    pub progress: Arc<AtomicU64>,
    pub stop: Arc<AtomicBool>,
    /// How lost connections are opened again (`None`: they are not).
    pub reopen: Option<Arc<Reopener>>,
}

/// Each lane's connection, and the way back of those that were lost.
struct Lanes {
    socks: Vec<Option<AsyncStream>>,
    lost: Vec<Option<Lost>>,
}

/// A lane whose connection was lost, on its way back.
struct Lost {
    state: Reopening,
    /// The attempt in progress.
    opening: Option<Opening>,
}

/// What the loop waited for.
enum Event {
    /// Bytes (or the end, or an error) on a lane.
    Read(usize, std::io::Result<usize>),
    /// An attempt to reopen a lane's connection ended.
    Opened(usize, Result<AsyncStream, kvbench_connect::ConnectError>),
    /// A slot, a parked request or a reopening attempt is due.
    Due,
}

/// Runs the client until it is done or the stop flag is set. A connection
/// that fails fails the requests in flight on it (as errors, never as
/// latencies); it is opened again after a backoff when lost connections
/// are reopened (its node's requests wait meanwhile), and otherwise its
/// node's later operations fail. The client goes on with its other nodes,
/// and never ends the phase for other clients.
pub(crate) async fn run(socks: Vec<AsyncStream>, mut client: Client, shared: Shared) {
    let mut lanes = Lanes {
        lost: socks.iter().map(|_| None).collect(),
        socks: socks.into_iter().map(Some).collect(),
    };
    let mut timer: Option<Timer> = None;
    let follow = shared.reopen.as_ref().and_then(|r| r.follow.clone());
    let mut moves_seen = 0;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            client.stop_sending();
        }
        if let Some(master) = follow.as_ref().and_then(|f| f.moved(&mut moves_seen)) {
            lanes.leave_old_master(&mut client, master, &shared);
        }
        client.fill(Instant::now(), &mut shared.recorder.borrow_mut());
        if client.lanes() > lanes.socks.len() {
            lanes.join_new(&mut client, &shared);
        }
        for lane in 0..lanes.socks.len() {
            let Some(sock) = lanes.socks[lane].as_mut() else {
                continue;
            };
            if client.lane_dead(lane) || client.wbuf(lane).is_empty() {
                continue;
            }
            // TLS may keep the last records of a write buffered: flush sends
            // them (for plain TCP it does nothing).
            let sent = async {
                sock.write_all(client.wbuf(lane)).await?;
                sock.flush().await
            };
            if let Err(e) = sent.await {
                let msg = format!("write failed: {e}");
                lanes.lose(&mut client, lane, &shared, ErrorKind::Io, &msg);
                continue;
            }
            client.wbuf(lane).clear();
        }
        if client.is_done() {
            return;
        }
        let mut reopen_due = None;
        if let Some(r) = shared
            .reopen
            .as_ref()
            .filter(|_| lanes.lost.iter().any(Option::is_some))
        {
            let now = Instant::now();
            for (lane, l) in lanes.lost.iter_mut().enumerate() {
                let Some(l) = l.as_mut().filter(|l| l.opening.is_none()) else {
                    continue;
                };
                if l.state.due <= now {
                    l.opening = Some(r.open_async(lane, client.lane_addr(lane)));
                } else {
                    reopen_due = earliest(reopen_due, Some(l.state.due));
                }
            }
        }
        let opening = lanes.lost.iter().flatten().any(|l| l.opening.is_some());
        let awaiting = client.awaiting_any();
        // Nothing in flight: wait for the next slot, retry or reopening.
        let next = if awaiting {
            client.next_slot()
        } else {
            client.schedule_next()
        };
        let mut wake = earliest(earliest(next, client.next_retry()), reopen_due);
        if follow.is_some() {
            wake = earliest(wake, Some(Instant::now() + FOLLOW_TICK));
        }
        if !awaiting && !opening && wake.is_none() {
            continue;
        }
        let wait = async {
            let event = next_event(&mut lanes, &mut client);
            match wake {
                Some(t) => tokio::select! {
                    e = event => e,
                    _ = timer.get_or_insert_with(Timer::new).sleep_until(t) => Event::Due,
                },
                None => event.await,
            }
        };
        // Only requests in flight time out; parked ones and reopening
        // have their own limits.
        let event = if awaiting {
            match tokio::time::timeout(shared.timeout, wait).await {
                Ok(e) => e,
                Err(_) => {
                    let msg = format!("timeout: no reply within {:?}", shared.timeout);
                    for lane in 0..lanes.socks.len() {
                        if client.awaiting(lane) {
                            let kind = ErrorKind::Timeout;
                            lanes.lose(&mut client, lane, &shared, kind, &msg);
                        }
                    }
                    continue;
                }
            }
        } else {
            wait.await
        };
        let (lane, read) = match event {
            Event::Due => continue, // a slot is due: go and send it
            Event::Opened(lane, opened) => {
                lanes.reopened(&mut client, lane, opened, &shared);
                continue;
            }
            Event::Read(lane, read) => (lane, read),
        };
        let n = match read {
            Ok(0) => {
                let msg = "connection closed by server";
                lanes.lose(&mut client, lane, &shared, ErrorKind::Closed, msg);
                continue;
            }
            Ok(n) => n,
            Err(e) => {
                let msg = format!("read failed: {e}");
                lanes.lose(&mut client, lane, &shared, ErrorKind::Io, &msg);
                continue;
            }
        };
        let arrived = Instant::now();
        let result = client.on_read(lane, n, arrived, &mut shared.recorder.borrow_mut());
        match result {
            ReadResult::Progress(done) if done > 0 => {
                shared.progress.fetch_add(done, Ordering::Relaxed);
            }
            ReadResult::Progress(_) => {}
            ReadResult::Failed(kind, msg) => lanes.lose(&mut client, lane, &shared, kind, &msg),
        }
    }
}

/// The next read on a lane that awaits replies, or the end of an attempt
/// to reopen a lane.
async fn next_event(lanes: &mut Lanes, client: &mut Client) -> Event {
    std::future::poll_fn(|cx| {
        if let Poll::Ready((lane, r)) = poll_reads(cx, &mut lanes.socks, client) {
            return Poll::Ready(Event::Read(lane, r));
        }
        for (lane, l) in lanes.lost.iter_mut().enumerate() {
            if let Some(f) = l.as_mut().and_then(|l| l.opening.as_mut()) {
                if let Poll::Ready(r) = f.as_mut().poll(cx) {
                    return Poll::Ready(Event::Opened(lane, r));
                }
            }
        }
        Poll::Pending
    })
    .await
}

impl Lanes {
    /// `lane`'s connection failed: fails what was in flight on it, closes
    /// it, and starts its way back when lost connections are reopened.
    fn lose(
        &mut self,
        client: &mut Client,
        lane: usize,
        shared: &Shared,
        kind: ErrorKind,
        message: &str,
    ) {
        let mut rec = shared.recorder.borrow_mut();
        client.fail_lane(lane, kind, message, &mut rec);
        if let Some(AsyncStream::Plain(s)) = self.socks[lane].take() {
            reset_on_close(&s);
        }
        if let (Some(r), false) = (&shared.reopen, client.lane_gone(lane)) {
            self.lost[lane] = Some(Lost {
                state: r.begin(lane, rec.lost_connections, Instant::now()),
                opening: None,
            });
        }
    }

    /// Lanes for nodes that joined the cluster (see `Client::grow_lanes`):
    /// each gets its first connection as a lost one is reopened, at once;
    /// without reopening, none, and its operations fail.
    fn join_new(&mut self, client: &mut Client, shared: &Shared) {
        let now = Instant::now();
        let mut rec = shared.recorder.borrow_mut();
        while self.socks.len() < client.lanes() {
            let lane = self.socks.len();
            self.socks.push(None);
            match &shared.reopen {
                Some(r) => self.lost.push(Some(Lost {
                    state: r.join(lane, rec.connections, now),
                    opening: None,
                })),
                None => {
                    self.lost.push(None);
                    client.give_up(lane, NO_JOIN, now, &mut rec);
                }
            }
        }
    }

    /// The sentinels have announced a new master: every connection to
    /// another server is given up (its requests in flight fail as
    /// `closed`) and opened again, to the new master.
    fn leave_old_master(&mut self, client: &mut Client, master: SocketAddr, shared: &Shared) {
        for lane in 0..self.socks.len() {
            let Some(s) = &self.socks[lane] else {
                continue;
            };
            if s.peer_addr().ok() != Some(master) {
                let msg = format!("the master moved to {master} (+switch-master)");
                self.lose(client, lane, shared, ErrorKind::Closed, &msg);
            }
        }
    }

    /// An attempt to reopen `lane` ended: the lane is back, or waits for
    /// the next attempt, or is given up.
    fn reopened(
        &mut self,
        client: &mut Client,
        lane: usize,
        opened: Result<AsyncStream, kvbench_connect::ConnectError>,
        shared: &Shared,
    ) {
        let now = Instant::now();
        let mut rec = shared.recorder.borrow_mut();
        let (Some(r), Some(l)) = (&shared.reopen, self.lost[lane].as_mut()) else {
            return;
        };
        l.opening = None;
        match opened {
            Ok(s) => {
                self.socks[lane] = Some(s);
                self.lost[lane] = None;
                client.lane_up(lane, now, &mut rec);
            }
            Err(e) => {
                let addr = r.addr_for(lane, client.lane_addr(lane));
                if let Some(why) = r.attempt_failed(&mut l.state, addr, &e.to_string(), now) {
                    self.lost[lane] = None;
                    client.give_up(lane, &why, now, &mut rec);
                }
            }
        }
    }
}

/// Reads from the first lane that awaits replies and has bytes, into that
/// lane's read space; returns the lane and how many bytes came (0: closed).
/// Reading, not just waiting for readiness, is what TLS needs: a TLS
/// stream can hold decrypted bytes the socket no longer signals.
fn poll_reads(
    cx: &mut std::task::Context<'_>,
    socks: &mut [Option<AsyncStream>],
    client: &mut Client,
) -> Poll<(usize, std::io::Result<usize>)> {
    for (lane, sock) in socks.iter_mut().enumerate() {
        let Some(sock) = sock.as_mut() else {
            continue;
        };
        if client.awaiting(lane) {
            let mut buf = ReadBuf::new(client.read_space(lane));
            match Pin::new(&mut *sock).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) => return Poll::Ready((lane, Ok(buf.filled().len()))),
                Poll::Ready(Err(e)) => return Poll::Ready((lane, Err(e))),
                Poll::Pending => {}
            }
        }
    }
    Poll::Pending
}
