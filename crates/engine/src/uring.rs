//! An io_uring I/O loop for closed-loop connections: one worker thread
//! drives all its connections through one ring, so the sends and receives
//! of many connections cost one `io_uring_enter` instead of a `write`, a
//! `read` and an `epoll_wait` each. At one request per connection that is
//! where a client's CPU goes.
//!
//! The protocol logic is [`Client`]'s, exactly as in the tokio loop
//! (`conn.rs`); only the I/O differs. Memory rules the kernel imposes:
//! - a send reads from `Conn::sending`, swapped out of `Client::wbuf`, so
//!   the client may keep encoding (follow-up steps) while a send is in flight;
//! - a receive writes into the client's read buffer, which is only resized
//!   (in `read_space`) when no receive is in flight;
//! - the loop returns only when no operation is in flight, so no buffer is
//!   freed under the kernel.

use crate::client::{Client, ReadResult};
use crate::cpu::thread_cpu_seconds;
use crate::recorder::{ErrorKind, Recorder};
use io_uring::{opcode, types, IoUring};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `IORING_RECVSEND_POLL_FIRST` (Linux 5.19+; ignored by older kernels).
const RECVSEND_POLL_FIRST: u16 = 1;
const WRITE: u64 = 0;
const READ: u64 = 1;
/// How often the loop wakes without completions, to check timeouts and Ctrl-C.
const TICK: Duration = Duration::from_millis(100);

/// True when this kernel lets this process create a ring.
pub fn available() -> bool {
    IoUring::new(2).is_ok()
}

struct Conn {
    sock: TcpStream,
    client: Client,
    sending: Vec<u8>,
    sent: usize,
    writing: bool,
    reading: bool,
    /// When the connection last received bytes (or started waiting for them).
    last_progress: Instant,
    failed: bool,
}

/// What the loop shares with its worker.
pub(crate) struct Env<'a> {
    pub timeout: Duration,
    pub progress: &'a AtomicU64,
    pub stop: &'a AtomicBool,
    pub measure_from: Instant,
}

/// Runs every connection to completion. Returns the thread's CPU time at
/// the window's start (for the busy share), when the window was reached.
///
/// # Errors
/// A message when the ring cannot be set up or the kernel refuses it.
pub(crate) fn run(
    conns: Vec<(TcpStream, Client)>,
    env: &Env<'_>,
    rec: &mut Recorder,
) -> Result<Option<(Instant, f64)>, String> {
    let n = conns.len();
    let entries = (2 * n + 8).next_power_of_two().min(4096) as u32;
    // One thread submits and reaps (SINGLE_ISSUER), so completion work can
    // wait until the thread asks for events (DEFER_TASKRUN, Linux 6.1+)
    // instead of interrupting it; older kernels get a plain ring.
    let mut ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))
        .map_err(|e| format!("cannot set up io_uring: {e}"))?;
    let now = Instant::now();
    let mut conns: Vec<Conn> = conns
        .into_iter()
        .map(|(sock, client)| Conn {
            sock,
            client,
            sending: Vec::new(),
            sent: 0,
            writing: false,
            reading: false,
            last_progress: now,
            failed: false,
        })
        .collect();
    let mut in_flight = 0usize;
    let mut cpu_start = None;
    let mut dirty: Vec<usize> = (0..n).collect();
    let mut next_sweep = now + TICK;
    let mut stopped = false;

    loop {
        let now = Instant::now();
        if cpu_start.is_none() && now >= env.measure_from {
            cpu_start = Some((now, thread_cpu_seconds()));
        }
        if !stopped && env.stop.load(Ordering::Relaxed) {
            stopped = true;
            for (i, c) in conns.iter_mut().enumerate() {
                c.client.stop_sending();
                dirty.push(i);
            }
        }
        if now >= next_sweep {
            next_sweep = now + TICK;
            for (i, c) in conns.iter_mut().enumerate() {
                if c.reading
                    && !c.failed
                    && now.saturating_duration_since(c.last_progress) > env.timeout
                {
                    let msg = format!("timeout: no reply within {:?}", env.timeout);
                    fail(c, ErrorKind::Timeout, &msg, rec);
                    dirty.push(i);
                }
            }
        }
        // Give every connection that changed something to send and a buffer to receive into.
        for i in dirty.drain(..) {
            let c = &mut conns[i];
            if c.failed {
                continue;
            }
            if !c.writing {
                c.client.fill(now);
                if !c.client.wbuf.is_empty() {
                    std::mem::swap(&mut c.sending, &mut c.client.wbuf);
                    c.sent = 0;
                    push(&mut ring, send(c, i))?;
                    c.writing = true;
                    in_flight += 1;
                }
            }
            if !c.reading && c.client.awaiting() {
                c.last_progress = now;
                let space = c.client.read_space();
                let e = opcode::Recv::new(
                    types::Fd(c.sock.as_raw_fd()),
                    space.as_mut_ptr(),
                    space.len() as u32,
                )
                // The reply cannot be there yet: the request just left.
                // Arm the poll at once instead of trying a receive that
                // would fail first.
                .ioprio(RECVSEND_POLL_FIRST)
                .build()
                .user_data(tag(i, READ));
                push(&mut ring, e)?;
                c.reading = true;
                in_flight += 1;
            }
        }
        if in_flight == 0 {
            return Ok(cpu_start);
        }

        let ts = types::Timespec::new().nsec(TICK.as_nanos() as u32);
        let args = types::SubmitArgs::new().timespec(&ts);
        match ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) => {}
            Err(e) => return Err(format!("io_uring_enter failed: {e}")),
        }
        let arrived = Instant::now();
        let completions: Vec<(u64, i32)> = ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        let mut done = 0u64;
        for (data, res) in completions {
            in_flight -= 1;
            let i = (data >> 1) as usize;
            let c = &mut conns[i];
            dirty.push(i);
            if data & 1 == WRITE {
                c.writing = false;
                if c.failed {
                    continue;
                }
                if res < 0 {
                    let msg = format!("write failed: {}", std::io::Error::from_raw_os_error(-res));
                    fail(c, ErrorKind::Io, &msg, rec);
                    continue;
                }
                c.sent += res as usize;
                if c.sent < c.sending.len() {
                    push(&mut ring, send(c, i))?;
                    c.writing = true;
                    in_flight += 1;
                } else {
                    c.sending.clear();
                }
            } else {
                c.reading = false;
                if c.failed {
                    continue;
                }
                match res {
                    0 => fail(c, ErrorKind::Closed, "connection closed by server", rec),
                    r if r < 0 => {
                        let msg = format!("read failed: {}", std::io::Error::from_raw_os_error(-r));
                        fail(c, ErrorKind::Io, &msg, rec);
                    }
                    r => {
                        c.last_progress = arrived;
                        match c.client.on_read(r as usize, arrived, rec) {
                            ReadResult::Progress(n) => done += n,
                            ReadResult::Failed(kind, msg) => fail(c, kind, &msg, rec),
                        }
                    }
                }
            }
        }
        if done > 0 {
            env.progress.fetch_add(done, Ordering::Relaxed);
        }
    }
}

fn tag(i: usize, kind: u64) -> u64 {
    ((i as u64) << 1) | kind
}

fn send(c: &Conn, i: usize) -> io_uring::squeue::Entry {
    let rest = &c.sending[c.sent..];
    opcode::Send::new(
        types::Fd(c.sock.as_raw_fd()),
        rest.as_ptr(),
        rest.len() as u32,
    )
    .build()
    .user_data(tag(i, WRITE))
}

/// Queues `e`, submitting first when the submission queue is full.
fn push(ring: &mut IoUring, e: io_uring::squeue::Entry) -> Result<(), String> {
    loop {
        // SAFETY: every buffer an entry points to lives in `conns`, which
        // outlives the ring's use of it (see the module documentation).
        if unsafe { ring.submission().push(&e) }.is_ok() {
            return Ok(());
        }
        ring.submit()
            .map_err(|err| format!("io_uring submit failed: {err}"))?;
    }
}

/// Fails a connection: its operations in flight become errors, and the
/// socket is shut down so the kernel completes whatever is still queued on it.
fn fail(c: &mut Conn, kind: ErrorKind, message: &str, rec: &mut Recorder) {
    c.client.fail_all(kind, message, rec);
    c.failed = true;
    let _ = c.sock.shutdown(std::net::Shutdown::Both);
}
