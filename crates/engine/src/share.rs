//! One process's share of a phase that several processes run together
//! (scale-out): which of the phase's clients it runs, and when its window
//! starts.
//!
//! A share keeps every client's identity from the whole phase: client `i`
//! draws from the same seed, owns the same key slice, the same operation
//! quota and the same open-loop schedule as client `i` of one process
//! running every client. So the processes' operation streams together are
//! the single process's stream, and their histograms can be added exactly.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Clients `i` with `i % count == index`: one worker's slice of the clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    /// This worker, from 0.
    pub index: u32,
    /// Workers in all.
    pub count: u32,
}

impl Slice {
    /// Every client: one process runs the phase alone.
    pub const WHOLE: Slice = Slice { index: 0, count: 1 };

    /// Whether client `i` is this slice's.
    pub fn holds(self, client: usize) -> bool {
        client % self.count as usize == self.index as usize
    }

    /// How many of `clients` this slice runs.
    pub fn clients_of(self, clients: u32) -> u32 {
        (0..clients as usize).filter(|&i| self.holds(i)).count() as u32
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Slice {
    type Err = String;

    /// `I/N`, 0 ≤ I < N.
    fn from_str(s: &str) -> Result<Slice, String> {
        let bad = || format!("\"{s}\" is not a slice I/N with 0 <= I < N");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Slice { index, count })
    }
}

/// Asks for the common start once every connection is open; `Err` gives
/// up the phase with that reason.
pub type StartSignal = Arc<dyn Fn() -> Result<SystemTime, String> + Send + Sync>;

/// When the phase's clients start sending (the warm-up begins then).
#[derive(Clone, Default)]
pub enum StartAt {
    /// As soon as every connection is open.
    #[default]
    Now,
    /// At this wall-clock instant, or at once if it has passed.
    At(SystemTime),
    /// At the instant the signal returns, asked once every connection is
    /// open: a coordinator can gather all processes first, so slow
    /// connection set-up in one does not eat into another's window.
    Signalled(StartSignal),
}

impl fmt::Debug for StartAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartAt::Now => f.write_str("Now"),
            StartAt::At(t) => write!(f, "At({t:?})"),
            StartAt::Signalled(_) => f.write_str("Signalled"),
        }
    }
}

/// A process's share of a phase.
#[derive(Debug, Clone, Default)]
pub struct Share {
    /// Its clients.
    pub slice: Slice,
    /// Its start.
    pub start: StartAt,
}

impl Default for Slice {
    fn default() -> Slice {
        Slice::WHOLE
    }
}

impl StartAt {
    /// Waits for the start and returns it as a monotonic instant beside the
    /// wall-clock time read when it came (what the coordinator compares
    /// across processes).
    pub(crate) fn wait(&self) -> Result<(Instant, SystemTime), String> {
        let at = match self {
            StartAt::Now => return Ok((Instant::now(), SystemTime::now())),
            StartAt::At(t) => *t,
            StartAt::Signalled(signal) => signal()?,
        };
        // The wall clock only names the instant; the wait itself is on the
        // monotonic clock, so a clock step during it cannot stretch it.
        let ahead = at
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO);
        // A plain sleep: Linux wakes it within tens of microseconds on an
        // idle CPU, and spinning would take the CPU from the other workers
        // that must wake at the same instant on a shared machine.
        let until = Instant::now() + ahead;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left);
        }
        Ok((Instant::now(), SystemTime::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_partition_the_clients() {
        let clients = 10;
        let mut seen = vec![0; clients];
        for index in 0..4 {
            let s = Slice { index, count: 4 };
            for (i, n) in seen.iter_mut().enumerate() {
                *n += u32::from(s.holds(i));
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
        assert_eq!(Slice { index: 1, count: 4 }.clients_of(10), 3);
        assert_eq!(Slice { index: 3, count: 4 }.clients_of(10), 2);
        assert_eq!(Slice::WHOLE.clients_of(10), 10);
    }

    #[test]
    fn slices_parse_and_refuse() {
        assert_eq!("2/4".parse(), Ok(Slice { index: 2, count: 4 }));
        assert_eq!(Slice { index: 2, count: 4 }.to_string(), "2/4");
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            assert!(bad.parse::<Slice>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_start_in_the_future_is_waited_for_and_a_past_one_is_not() {
        let at = SystemTime::now() + Duration::from_millis(30);
        let (_, wall) = StartAt::At(at).wait().expect("start");
        let late = wall.duration_since(at).expect("not before the instant");
        assert!(late < Duration::from_millis(20), "{late:?} late");
        let past = SystemTime::now() - Duration::from_secs(5);
        let t0 = Instant::now();
        StartAt::At(past).wait().expect("start");
        assert!(t0.elapsed() < Duration::from_millis(50));
        let failed = StartAt::Signalled(Arc::new(|| Err("no start".into())));
        assert_eq!(failed.wait().err().as_deref(), Some("no start"));
    }
}
