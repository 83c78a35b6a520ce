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
use crate::timer::Timer;
use kvbench_connect::AsyncStream;
use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

/// What a connection task shares with its worker.
pub(crate) struct Shared {
    pub timeout: Duration,
    pub recorder: Rc<RefCell<Recorder>>,
    /// Measured completions of this worker, read by the progress display.
    pub progress: Arc<AtomicU64>,
    pub stop: Arc<AtomicBool>,
}

/// Runs the client until it is done or the stop flag is set. A connection
/// that fails fails the requests in flight on it (as errors, never as
/// latencies) and its node's later operations; the client goes on with its
/// other nodes, and never ends the phase for other clients.
pub(crate) async fn run(mut socks: Vec<AsyncStream>, mut client: Client, shared: Shared) {
    let mut timer: Option<Timer> = None;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            client.stop_sending();
        }
        client.fill(Instant::now(), &mut shared.recorder.borrow_mut());
        for (lane, sock) in socks.iter_mut().enumerate() {
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
                fail(&mut client, lane, &shared, ErrorKind::Io, &msg);
                continue;
            }
            client.wbuf(lane).clear();
        }
        if client.is_done() {
            return;
        }
        if !client.awaiting_any() {
            // Nothing in flight: wait for the next slot or retry.
            if let Some(t) = earliest(client.schedule_next(), client.next_retry()) {
                timer.get_or_insert_with(Timer::new).sleep_until(t).await;
            }
            continue;
        }

        let wake = earliest(client.next_slot(), client.next_retry());
        let ready = tokio::time::timeout(shared.timeout, async {
            let read = read_any(&mut socks, &mut client);
            match wake {
                Some(t) => tokio::select! {
                    r = read => Some(r),
                    _ = timer.get_or_insert_with(Timer::new).sleep_until(t) => None,
                },
                None => Some(read.await),
            }
        })
        .await;
        let (lane, read) = match ready {
            Ok(None) => continue, // a slot is due: go and send it
            Ok(Some(r)) => r,
            Err(_) => {
                let msg = format!("timeout: no reply within {:?}", shared.timeout);
                for lane in 0..socks.len() {
                    if client.awaiting(lane) {
                        fail(&mut client, lane, &shared, ErrorKind::Timeout, &msg);
                    }
                }
                continue;
            }
        };
        let n = match read {
            Ok(0) => {
                let msg = "connection closed by server";
                fail(&mut client, lane, &shared, ErrorKind::Closed, msg);
                continue;
            }
            Ok(n) => n,
            Err(e) => {
                let msg = format!("read failed: {e}");
                fail(&mut client, lane, &shared, ErrorKind::Io, &msg);
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
            ReadResult::Failed(kind, msg) => fail(&mut client, lane, &shared, kind, &msg),
        }
    }
}

/// Reads from the first lane that awaits replies and has bytes, into that
/// lane's read space; returns the lane and how many bytes came (0: closed).
/// Reading, not just waiting for readiness, is what TLS needs: a TLS
/// stream can hold decrypted bytes the socket no longer signals.
async fn read_any(
    socks: &mut [AsyncStream],
    client: &mut Client,
) -> (usize, std::io::Result<usize>) {
    std::future::poll_fn(|cx| {
        for (lane, sock) in socks.iter_mut().enumerate() {
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
    })
    .await
}

/// The earlier of two optional instants.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn fail(client: &mut Client, lane: usize, shared: &Shared, kind: ErrorKind, message: &str) {
    client.fail_lane(lane, kind, message, &mut shared.recorder.borrow_mut());
}
