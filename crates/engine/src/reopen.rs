//! Reopening lost connections. Real deployments restart, fail over and drop
//! connections, and a client library opens the connection again; a
//! benchmark that gives a lost connection up ends its run at the first
//! restart and cannot measure what clients saw of it.
//!
//! A lost connection (reset or closed by the server) fails the requests in
//! flight on it; its lane is then *down*: requests for its node
//! wait (parked, see `client.rs`) instead of failing unsent, and the I/O
//! loop opens the connection again after a backoff that doubles from
//! `min` to `max`, with jitter, so that many connections lost together do
//! not come back in one burst. A lane that has not been reopened for as
//! long as the request timeout is given up (as without reopening), so a
//! server that never comes back cannot hold a phase open for longer than
//! one timeout.

use crate::route::sentinel::Sentinel;
use crate::EngineError;
use kvbench_connect::{Access, AsyncStream, ConnectError};
use std::future::Future;
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a worker opens its lost connections again: the same way they were
/// opened (TLS, AUTH, SELECT), to the same node.
pub(crate) struct Reopener {
    /// Each lane's node.
    pub addrs: Vec<SocketAddr>,
    /// A Sentinel group's master, wherever it was last announced (a
    /// failover moves it).
    pub follow: Option<Arc<Sentinel>>,
    pub access: Arc<Access>,
    /// One attempt's limit (connect, TLS, AUTH/SELECT together).
    pub connect_timeout: Duration,
    pub backoff: Backoff,
    /// A lane down for this long is given up (the request timeout).
    pub give_up: Duration,
}

/// An attempt of the tokio loop in progress.
pub(crate) type Opening = Pin<Box<dyn Future<Output = Result<AsyncStream, ConnectError>>>>;

impl Reopener {
    /// Where `lane`'s connection goes now: a Sentinel group's master as
    /// last announced, or the node the client's router names (`routed`: a
    /// cluster's, including a node that joined), or the lane's node.
    pub(crate) fn addr_for(&self, lane: usize, routed: Option<SocketAddr>) -> Option<SocketAddr> {
        match &self.follow {
            Some(s) => Some(s.master()),
            None => routed.or_else(|| self.addrs.get(lane).copied()),
        }
    }

    /// One attempt to open `lane`'s connection (to [`Reopener::addr_for`]),
    /// for the tokio loop.
    pub(crate) fn open_async(self: &Arc<Self>, lane: usize, routed: Option<SocketAddr>) -> Opening {
        let me = self.clone();
        let addr = self.addr_for(lane, routed);
        Box::pin(async move {
            let addr = addr.ok_or_else(no_address)?;
            kvbench_connect::open_async(addr, &me.access, me.connect_timeout).await
        })
    }

    /// One attempt to open `lane`'s connection, for the io_uring loop: on
    /// a thread of its own, so the ring's other connections go on; the
    /// socket (or why there is none) arrives on the receiver.
    pub(crate) fn open_plain(
        self: &Arc<Self>,
        lane: usize,
        routed: Option<SocketAddr>,
    ) -> Receiver<Result<TcpStream, String>> {
        let (tx, rx) = mpsc::channel();
        let Some(addr) = self.addr_for(lane, routed) else {
            let _ = tx.send(Err(no_address().to_string()));
            return rx;
        };
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("kvbench-reopen".into())
            .spawn(move || {
                let opened =
                    open_for_ring(addr, &me.access, me.connect_timeout).map_err(|e| e.to_string());
                // The loop may have ended meanwhile; the socket is then closed.
                let _ = tx.send(opened);
            });
        if let Err(e) = spawned {
            let (tx, rx2) = mpsc::channel();
            let _ = tx.send(Err(format!("cannot start a thread to reconnect: {e}")));
            return rx2;
        }
        rx
    }

    /// The way back of a connection lost at `now`; `seed` (the worker's
    /// losses so far, with the lane) spreads connections lost together.
    pub(crate) fn begin(&self, lane: usize, seed: u64, now: Instant) -> Reopening {
        Reopening::new(&self.backoff, now, seed ^ ((lane as u64) << 32))
    }

    /// The first connection to `lane`, a node that joined the cluster
    /// while the phase ran: tried at once, then as a lost one.
    pub(crate) fn join(&self, lane: usize, seed: u64, now: Instant) -> Reopening {
        let mut r = self.begin(lane, seed, now);
        r.due = now;
        r.joining = true;
        r
    }

    /// An attempt to open a connection to `addr` failed at `now` (`last`
    /// says why): the message to give it up with once it has been down for
    /// the request timeout, or `None` to try again at `state.due`.
    pub(crate) fn attempt_failed(
        &self,
        state: &mut Reopening,
        addr: Option<SocketAddr>,
        last: &str,
        now: Instant,
    ) -> Option<String> {
        (state.failed(&self.backoff, now, self.give_up) == Next::GiveUp).then(|| {
            let to = addr.map_or_else(|| "its node".to_string(), |a| a.to_string());
            let what = if state.joining {
                "opening the first connection to a node that joined,"
            } else {
                "reopening the connection to"
            };
            format!(
                "gave up {what} {to} after {}: {last}",
                humantime::format_duration(self.give_up)
            )
        })
    }
}

/// Why an attempt for a lane whose node has no known address fails at once.
fn no_address() -> ConnectError {
    ConnectError::Io {
        addr: ([0, 0, 0, 0], 0).into(),
        step: "find the node's address",
        source: std::io::Error::other("no address for this lane"),
    }
}

/// Opens a connection the ring can drive, first or reopened: plain TCP
/// (only rustls can produce a TLS connection's bytes, on the tokio loop),
/// without the set-up timeouts (the ring does its own waiting).
pub(crate) fn open_for_ring(
    addr: SocketAddr,
    access: &Access,
    timeout: Duration,
) -> Result<TcpStream, EngineError> {
    let s = kvbench_connect::open(addr, access, timeout)
        .map_err(EngineError::connect(addr))?
        .into_plain()
        .ok_or_else(|| EngineError::Config("TLS connections need --io tokio".into()))?;
    s.set_read_timeout(None)
        .and_then(|()| s.set_write_timeout(None))
        .map_err(|e| EngineError::Connect {
            addr,
            message: e.to_string(),
        })?;
    Ok(s)
}

/// How long to wait before each attempt to reopen a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The wait before the first attempt (before jitter).
    pub min: Duration,
    /// The longest wait between attempts (before jitter).
    pub max: Duration,
}

impl Backoff {
    /// 10 ms doubling to 1 s, as memtier_benchmark's and most client
    /// libraries' defaults are of this order.
    pub const DEFAULT: Backoff = Backoff {
        min: Duration::from_millis(10),
        max: Duration::from_secs(1),
    };

    /// The wait before attempt `attempt` (0-based): `min · 2^attempt`, at
    /// most `max`, of which the first half is fixed and the second drawn
    /// from `rng` ("equal jitter": never shorter than half the step, so the
    /// server is not hammered, and spread over the other half).
    pub fn wait(&self, attempt: u32, rng: &mut u64) -> Duration {
        let step = self
            .min
            .saturating_mul(1u32 << attempt.min(20))
            .min(self.max)
            .max(Duration::from_micros(1));
        let half = step / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX).max(1);
        half + Duration::from_nanos(next(rng) % nanos)
    }

    /// Parses `MIN-MAX` as the command line writes it (`10ms-1s`).
    ///
    /// # Errors
    /// One line naming what is wrong.
    pub fn parse(text: &str) -> Result<Backoff, String> {
        let (a, b) = text
            .split_once('-')
            .ok_or_else(|| format!("\"{text}\" is not MIN-MAX (for example 10ms-1s)"))?;
        let parse = |s: &str| {
            humantime::parse_duration(s.trim()).map_err(|e| format!("\"{s}\" in \"{text}\": {e}"))
        };
        let (min, max) = (parse(a)?, parse(b)?);
        if min.is_zero() {
            return Err(format!("\"{text}\": the first wait must be above zero"));
        }
        if max < min {
            return Err(format!("\"{text}\": MAX is below MIN"));
        }
        Ok(Backoff { min, max })
    }
}

impl std::fmt::Display for Backoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}",
            humantime::format_duration(self.min),
            humantime::format_duration(self.max)
        )
    }
}

/// Makes closing `sock` reset the connection (SO_LINGER 0). kvbench closes
/// a connection it gave up on (a timeout, a reply it cannot read) before
/// reopening it; a normal close would leave the client's port in TIME_WAIT
/// for a minute at every loss, and a server that keeps timing out would
/// use up the local port range. When the server closed first, TIME_WAIT is
/// on its side and this changes nothing.
pub(crate) fn reset_on_close(sock: &impl std::os::fd::AsRawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket, and a pointer to a linger of the size given.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            std::ptr::addr_of!(linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// xorshift64*: jitter needs spread, not quality, and must not touch the
/// workload's generators (the operation stream stays what its seed says).
fn next(state: &mut u64) -> u64 {
    let mut x = *state | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The way back of one lost connection.
#[derive(Debug, Clone)]
pub(crate) struct Reopening {
    attempts: u32,
    /// When the next attempt may start.
    pub due: Instant,
    /// When the connection was lost.
    since: Instant,
    rng: u64,
    /// A node that joined: its first connection, not a lost one.
    pub joining: bool,
}

/// What a failed attempt leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Try again at `Reopening::due`.
    Retry,
    /// The connection has been down for as long as the request timeout.
    GiveUp,
}

impl Reopening {
    /// A connection lost at `now`; `seed` spreads the jitter of connections
    /// lost together.
    pub(crate) fn new(backoff: &Backoff, now: Instant, seed: u64) -> Reopening {
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x6b76_7265_6f70_656e;
        let due = now + backoff.wait(0, &mut rng);
        Reopening {
            attempts: 0,
            due,
            since: now,
            rng,
            joining: false,
        }
    }

    /// An attempt failed at `now`: when to try again, or to give up once
    /// the connection has been down for `give_up` (the next attempt would
    /// start later than that).
    pub(crate) fn failed(&mut self, backoff: &Backoff, now: Instant, give_up: Duration) -> Next {
        self.attempts += 1;
        let due = now + backoff.wait(self.attempts, &mut self.rng);
        if due.saturating_duration_since(self.since) > give_up {
            return Next::GiveUp;
        }
        self.due = due;
        Next::Retry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_min_to_max_with_half_of_each_step_fixed() {
        let b = Backoff::parse("10ms-1s").expect("parses");
        assert_eq!(b, Backoff::DEFAULT);
        let mut rng = 7;
        for (attempt, step_ms) in [
            (0, 10u64),
            (1, 20),
            (3, 80),
            (6, 640),
            (7, 1000),
            (30, 1000),
        ] {
            for _ in 0..200 {
                let w = b.wait(attempt, &mut rng);
                let step = Duration::from_millis(step_ms);
                assert!(w >= step / 2 && w < step, "attempt {attempt}: {w:?}");
            }
        }
    }

    #[test]
    fn jitter_spreads_connections_lost_together() {
        let b = Backoff::DEFAULT;
        let now = Instant::now();
        let dues: std::collections::BTreeSet<Instant> =
            (0..50).map(|i| Reopening::new(&b, now, i).due).collect();
        assert!(
            dues.len() > 45,
            "{} distinct first attempts of 50",
            dues.len()
        );
    }

    #[test]
    fn a_connection_down_longer_than_the_timeout_is_given_up() {
        let b = Backoff::parse("100ms-100ms").expect("parses");
        let t0 = Instant::now();
        let mut r = Reopening::new(&b, t0, 1);
        let give_up = Duration::from_millis(350);
        let mut now = r.due;
        let mut tries = 0;
        while r.failed(&b, now, give_up) == Next::Retry {
            tries += 1;
            now = r.due;
            assert!(now.saturating_duration_since(t0) <= give_up);
        }
        assert!(
            (2..=6).contains(&tries),
            "{tries} attempts in 350 ms at 50-100 ms each"
        );
    }

    #[test]
    fn bad_backoffs_are_refused_in_one_line() {
        for bad in ["10ms", "0s-1s", "1s-10ms", "x-1s"] {
            let e = Backoff::parse(bad).expect_err(bad);
            assert!(e.contains(bad) || e.contains("MIN-MAX"), "{e}");
        }
        assert_eq!(Backoff::DEFAULT.to_string(), "10ms-1s");
    }
}
