//! The tokio I/O loop of one connection: writes what [`Client`] encodes,
//! reads replies into it, and reads the clock once before each write and
//! once after each read. Every request in a write shares that write's send
//! time (it is when they left); every reply in a read shares that read's
//! arrival time (it is when kvbench saw them).
//!
//! Open loop: a connection with room in its pipeline also wakes at its next
//! slot, on a microsecond-precise [`Timer`].

use crate::client::{Client, ReadResult};
use crate::recorder::{ErrorKind, Recorder};
use crate::timer::Timer;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What a connection task shares with its worker.
pub(crate) struct Shared {
    pub timeout: Duration,
    pub recorder: Rc<RefCell<Recorder>>,
    /// Measured completions of this worker, read by the progress display.
    pub progress: Arc<AtomicU64>,
    pub stop: Arc<AtomicBool>,
}

/// Runs the connection until the client is done, the stop flag is set or the
/// connection fails. Failures are recorded as errors of the operations in
/// flight; they never end the phase for other connections.
pub(crate) async fn run(mut sock: TcpStream, mut client: Client, shared: Shared) {
    let mut timer = client.schedule_next().map(|_| Timer::new());
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            client.stop_sending();
        }
        client.fill(Instant::now());
        if !client.wbuf.is_empty() {
            if let Err(e) = sock.write_all(&client.wbuf).await {
                fail(
                    &mut client,
                    &shared,
                    ErrorKind::Io,
                    &format!("write failed: {e}"),
                );
                return;
            }
            client.wbuf.clear();
        }
        if client.is_done() {
            return;
        }
        if !client.awaiting() {
            // Open loop with nothing in flight: wait for the next slot.
            if let (Some(t), Some(timer)) = (client.schedule_next(), timer.as_mut()) {
                timer.sleep_until(t).await;
            }
            continue;
        }

        let next_slot = client.next_slot();
        let space = client.read_space();
        let read = tokio::time::timeout(shared.timeout, async {
            match (next_slot, timer.as_mut()) {
                (Some(t), Some(timer)) => tokio::select! {
                    r = sock.read(space) => Some(r),
                    _ = timer.sleep_until(t) => None,
                },
                _ => Some(sock.read(space).await),
            }
        })
        .await;
        let n = match read {
            Ok(None) => continue, // a slot is due: go and send it
            Ok(Some(Ok(0))) => {
                fail(
                    &mut client,
                    &shared,
                    ErrorKind::Closed,
                    "connection closed by server",
                );
                return;
            }
            Ok(Some(Ok(n))) => n,
            Ok(Some(Err(e))) => {
                fail(
                    &mut client,
                    &shared,
                    ErrorKind::Io,
                    &format!("read failed: {e}"),
                );
                return;
            }
            Err(_) => {
                let msg = format!("timeout: no reply within {:?}", shared.timeout);
                fail(&mut client, &shared, ErrorKind::Timeout, &msg);
                return;
            }
        };
        let arrived = Instant::now();
        let result = client.on_read(n, arrived, &mut shared.recorder.borrow_mut());
        match result {
            ReadResult::Progress(done) if done > 0 => {
                shared.progress.fetch_add(done, Ordering::Relaxed);
            }
            ReadResult::Progress(_) => {}
            ReadResult::Failed(kind, msg) => {
                fail(&mut client, &shared, kind, &msg);
                return;
            }
        }
    }
}

fn fail(client: &mut Client, shared: &Shared, kind: ErrorKind, message: &str) {
    client.fail_all(kind, message, &mut shared.recorder.borrow_mut());
}
