//! Shared insert counters: YCSB's `CounterGenerator`, and its
//! `AcknowledgedCounterGenerator`, which publishes as "latest" only keys whose
//! inserts have completed. Both are meant to be shared between clients
//! (behind an `Arc`), as YCSB shares one between its threads. No I/O.

use super::DistError;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Values that may be acknowledged ahead of the oldest unacknowledged one,
/// as YCSB's `AcknowledgedCounterGenerator.WINDOW_SIZE` (2^20).
pub const WINDOW_SIZE: u64 = 1 << 20;
const WINDOW_MASK: u64 = WINDOW_SIZE - 1;

/// A counter whose last value bounds which keys may be read: the basis of
/// YCSB's `latest` distribution and of CoreWorkload's rejection of keys not
/// yet inserted.
pub trait LastValue: Send + Sync {
    /// The largest key known to exist, or `None` when there is none.
    fn last_value(&self) -> Option<u64>;
}

/// Hands out consecutive values from a start, to any number of clients at
/// once (YCSB's `CounterGenerator`; the load phase's key sequence).
#[derive(Debug)]
pub struct CounterGenerator {
    next: AtomicU64,
}

impl CounterGenerator {
    /// A counter whose first value is `countstart`.
    pub fn new(countstart: u64) -> Self {
        CounterGenerator {
            next: AtomicU64::new(countstart),
        }
    }

    /// The next value; every call, from any client, gets a different one.
    #[inline]
    pub fn next_value(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The value most recently handed out (YCSB: `counter - 1`), or `None`
    /// before the first when the counter started at 0.
    pub fn last_value(&self) -> Option<u64> {
        self.next.load(Ordering::Relaxed).checked_sub(1)
    }

    /// The value the next call will hand out: every value below it (and at
    /// or above the start) has been handed out.
    pub fn peek_next(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }
}

impl LastValue for CounterGenerator {
    fn last_value(&self) -> Option<u64> {
        CounterGenerator::last_value(self)
    }
}

/// The run phase's insert-key sequence (YCSB's
/// `AcknowledgedCounterGenerator`): values are handed out like a
/// [`CounterGenerator`]'s, but [`last_value`](Self::last_value) only moves
/// past a value once it and every value before it have been acknowledged,
/// i.e. their inserts completed. Reads therefore never ask for a key whose
/// insert is still in flight.
///
/// Acknowledgements land in a window of [`WINDOW_SIZE`] slots; whichever
/// acknowledging client wins a try-lock sweeps the contiguous acknowledged
/// run forward. Unlike YCSB's, a client that loses the try-lock to a sweep
/// that already passed its slot retries after that sweep ends, so the last
/// value never lags behind a completed insert.
pub struct AcknowledgedCounterGenerator {
    counter: CounterGenerator,
    window: Box<[AtomicBool]>,
    sweeping: AtomicBool,
    /// YCSB's `limit + 1`: the oldest value not known to be acknowledged.
    first_unacked: AtomicU64,
}

impl AcknowledgedCounterGenerator {
    /// A counter whose first value is `countstart`; values below it count as
    /// acknowledged (CoreWorkload starts it at the record count).
    pub fn new(countstart: u64) -> Self {
        AcknowledgedCounterGenerator {
            counter: CounterGenerator::new(countstart),
            window: (0..WINDOW_SIZE).map(|_| AtomicBool::new(false)).collect(),
            sweeping: AtomicBool::new(false),
            first_unacked: AtomicU64::new(countstart),
        }
    }

    /// The next value to insert.
    #[inline]
    pub fn next_value(&self) -> u64 {
        self.counter.next_value()
    }

    /// The value the next insert will get: the inserts handed out so far are
    /// exactly `countstart..issued_until()`.
    pub fn issued_until(&self) -> u64 {
        self.counter.peek_next()
    }

    /// The largest value below which every value has been acknowledged
    /// (YCSB's `limit`), or `None` when nothing has been.
    pub fn last_value(&self) -> Option<u64> {
        self.first_unacked.load(Ordering::SeqCst).checked_sub(1)
    }

    /// Records that the insert of `value` completed (successfully or not, as
    /// CoreWorkload acknowledges in a `finally`).
    ///
    /// Fails, as YCSB throws, when `value` would reuse a window slot still
    /// held by an older unacknowledged value; and also when it was already
    /// acknowledged, which YCSB would silently take as a value one window on.
    pub fn acknowledge(&self, value: u64) -> Result<(), DistError> {
        let first = self.first_unacked.load(Ordering::SeqCst);
        if value < first || value - first >= WINDOW_SIZE {
            return Err(DistError::Acknowledge { value });
        }
        if self.slot(value).swap(true, Ordering::SeqCst) {
            return Err(DistError::Acknowledge { value });
        }
        // All orderings here are SeqCst: a client whose try-lock fails must
        // be sure the sweeper's re-check after unlocking sees its slot.
        loop {
            if self
                .sweeping
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                return Ok(());
            }
            let mut index = self.first_unacked.load(Ordering::SeqCst);
            loop {
                let slot = self.slot(index);
                if !slot.load(Ordering::SeqCst) {
                    break;
                }
                slot.store(false, Ordering::SeqCst);
                index += 1;
            }
            self.first_unacked.store(index, Ordering::SeqCst);
            self.sweeping.store(false, Ordering::SeqCst);
            if !self.slot(index).load(Ordering::SeqCst) {
                return Ok(());
            }
        }
    }

    #[inline]
    fn slot(&self, value: u64) -> &AtomicBool {
        &self.window[(value & WINDOW_MASK) as usize]
    }
}

impl LastValue for AcknowledgedCounterGenerator {
    fn last_value(&self) -> Option<u64> {
        AcknowledgedCounterGenerator::last_value(self)
    }
}

impl fmt::Debug for AcknowledgedCounterGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AcknowledgedCounterGenerator")
            .field("next", &self.counter.next.load(Ordering::Relaxed))
            .field("last_value", &self.last_value())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counter_hands_out_consecutive_values() {
        let c = CounterGenerator::new(0);
        assert_eq!(c.last_value(), None);
        assert_eq!(c.next_value(), 0);
        assert_eq!(c.next_value(), 1);
        assert_eq!(c.last_value(), Some(1));
    }

    #[test]
    fn limit_moves_only_over_contiguous_acknowledgements() {
        let c = AcknowledgedCounterGenerator::new(100);
        assert_eq!(c.last_value(), Some(99));
        let (a, b, d) = (c.next_value(), c.next_value(), c.next_value());
        assert_eq!((a, b, d), (100, 101, 102));
        c.acknowledge(b).unwrap();
        assert_eq!(c.last_value(), Some(99));
        c.acknowledge(d).unwrap();
        assert_eq!(c.last_value(), Some(99));
        c.acknowledge(a).unwrap();
        assert_eq!(c.last_value(), Some(102));
        assert_eq!(AcknowledgedCounterGenerator::new(0).last_value(), None);
    }

    #[test]
    fn refuses_double_and_out_of_window_acknowledgements() {
        let c = AcknowledgedCounterGenerator::new(0);
        c.acknowledge(0).unwrap();
        assert!(c.acknowledge(0).is_err());
        c.acknowledge(5).unwrap();
        assert!(c.acknowledge(5).is_err());
        assert!(c.acknowledge(1 + WINDOW_SIZE).is_err());
        assert!(c.acknowledge(WINDOW_SIZE).is_ok());
        assert_eq!(c.last_value(), Some(0));
    }

    #[test]
    fn concurrent_acknowledgements_all_land() {
        let c = Arc::new(AcknowledgedCounterGenerator::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    for _ in 0..50_000 {
                        let v = c.next_value();
                        c.acknowledge(v).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(c.last_value(), Some(199_999));
    }
}
