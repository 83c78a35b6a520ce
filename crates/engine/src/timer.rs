//! A microsecond-precise timer for open-loop schedules.
//!
//! tokio's timer wheel has millisecond granularity, which would add up to a
//! millisecond of schedule lag to every request; spinning instead would burn
//! the CPU the server under test needs. A `timerfd` armed at the absolute
//! monotonic instant and awaited through tokio's reactor wakes within
//! microseconds and costs nothing while waiting.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// One connection's timer.
pub struct Timer {
    fd: Option<AsyncFd<OwnedFd>>,
}

impl Default for Timer {
    fn default() -> Self {
        Timer::new()
    }
}

impl Timer {
    /// A new timer; if the kernel refuses a timerfd, waits fall back to tokio's timer.
    pub fn new() -> Timer {
        // SAFETY: timerfd_create has no memory arguments; the returned fd is
        // owned by the OwnedFd from here on.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        let fd = (raw >= 0)
            .then(|| unsafe { OwnedFd::from_raw_fd(raw) })
            // SAFETY: the AsyncFd owns the descriptor, so it stays open for as
            // long as it is registered and is deregistered before it closes.
            .and_then(|fd| unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok());
        Timer { fd }
    }

    /// Waits until `t`.
    pub async fn sleep_until(&mut self, t: Instant) {
        let Some(fd) = self.fd.as_mut() else {
            tokio::time::sleep_until(t.into()).await;
            return;
        };
        let now = Instant::now();
        if t <= now {
            return;
        }
        // Instant is CLOCK_MONOTONIC on Linux but has no public accessor:
        // arm the timer relative to a fresh reading of the same clock.
        let left = t - now;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: valid fd and a fully initialised itimerspec.
        let rc = unsafe {
            libc::timerfd_settime(fd.get_ref().as_raw_fd(), 0, &spec, std::ptr::null_mut())
        };
        if rc != 0 {
            tokio::time::sleep_until(t.into()).await;
            return;
        }
        loop {
            let Ok(mut guard) = fd.readable().await else {
                tokio::time::sleep_until(t.into()).await;
                return;
            };
            let mut expirations = [0u8; 8];
            // SAFETY: reading 8 bytes into an 8-byte buffer.
            let n = unsafe {
                libc::read(
                    guard.get_inner().as_raw_fd(),
                    expirations.as_mut_ptr().cast(),
                    8,
                )
            };
            if n == 8 {
                return;
            }
            guard.clear_ready();
            if Instant::now() >= t {
                return;
            }
        }
    }
}

/// The earlier of two optional instants (what an I/O loop wakes for first).
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn wakes_close_to_the_deadline() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let mut timer = Timer::new();
            let mut late = Vec::new();
            for _ in 0..50 {
                let t = Instant::now() + Duration::from_micros(300);
                timer.sleep_until(t).await;
                let now = Instant::now();
                assert!(now >= t, "woke early");
                late.push(now - t);
            }
            late.sort();
            // tokio's millisecond timer would wake a 300 us sleep about 700 us
            // late; the median copes with other tests loading the machine.
            let median = late[late.len() / 2];
            assert!(
                median < Duration::from_micros(300),
                "median lateness {median:?}"
            );
        });
    }
}
