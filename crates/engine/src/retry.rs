//! Retrying failed requests (`--max-retries`). YCSB does not retry, and
//! neither does kvbench by default: a retry hides a failure inside a longer
//! latency. Applications do retry, though, and what a store's restart or
//! failover costs them is the latency of requests that waited it out, not
//! a count of errors; with retries on, that is what the run measures.
//!
//! A request that fails without a reply (its connection lost or timed out)
//! or is answered `LOADING`, `READONLY`, `TRYAGAIN`, `MASTERDOWN` or
//! `CLUSTERDOWN` (the server is there but cannot serve it yet) is parked
//! and sent again after the retry backoff, up to `max` times; its latency
//! still runs from its first send (from its slot, in open loop), it is
//! counted once, as what its last attempt gave, and each resend is counted
//! in `run.retries`. Any other error reply is final: retrying `ERR` or
//! `OOM` repeats it.

use crate::reopen::Backoff;

/// How failed requests are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Times a request is sent again after failing (0: never).
    pub max: u32,
    /// The wait before each resend, doubling from `min` to `max`, with
    /// jitter (also the wait of a request parked for a cluster's
    /// `CLUSTERDOWN` or for a connection being reopened).
    pub backoff: Backoff,
    /// Keep the keys of the measured requests that finally failed
    /// (`--failed-keys`), up to [`MAX_FAILED_KEYS`].
    pub keep_failed_keys: bool,
}

/// The most failed keys a phase keeps; later ones are only counted.
pub const MAX_FAILED_KEYS: usize = 1_000_000;

impl Retry {
    /// The wait before a parked request is tried again, when nothing says
    /// otherwise: 1 ms doubling to 100 ms.
    pub const DEFAULT_BACKOFF: Backoff = Backoff {
        min: std::time::Duration::from_millis(1),
        max: std::time::Duration::from_millis(100),
    };
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            max: 0,
            backoff: Retry::DEFAULT_BACKOFF,
            keep_failed_keys: false,
        }
    }
}

/// True for an error reply that says "not now" rather than "no": the first
/// word of `text` (the reply without its `-`).
pub fn retryable_reply(text: &[u8]) -> bool {
    let word = text.split(|&b| b == b' ').next().unwrap_or_default();
    matches!(
        word,
        b"LOADING" | b"READONLY" | b"TRYAGAIN" | b"MASTERDOWN" | b"CLUSTERDOWN"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_replies_that_say_not_now_are_retried() {
        for yes in [
            &b"LOADING Redis is loading the dataset in memory"[..],
            b"READONLY You can't write against a read only replica.",
            b"TRYAGAIN Multiple keys request during rehashing of slot",
            b"MASTERDOWN Link with MASTER is down",
            b"CLUSTERDOWN The cluster is down",
        ] {
            assert!(retryable_reply(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b"ERR unknown command"[..],
            b"OOM command not allowed when used memory > 'maxmemory'.",
            b"SERVER_ERROR out of memory storing object",
            b"LOADINGX",
            b"",
        ] {
            assert!(!retryable_reply(no), "{}", String::from_utf8_lossy(no));
        }
        assert_eq!(Retry::default().max, 0, "YCSB does not retry");
    }
}
