//! Open-loop arrival schedules: when each request is *meant* to be sent.
//!
//! Latency in an open-loop run is measured from these intended instants, so
//! a server stall (or a client that falls behind) shows up in the response
//! times instead of silently lowering the request rate.

use kvbench_workload::Rng;
use rand_core::RngCore;
use std::time::{Duration, Instant};

/// How inter-arrival gaps are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Fixed gaps of exactly 1/rate.
    Uniform,
    /// Exponentially distributed gaps with mean 1/rate (a Poisson process).
    Poisson,
}

impl Arrival {
    /// The name used on the command line and in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
    }
}

/// The names of [`Arrival::as_str`], as a stored configuration or a
/// worker's task spells them.
impl std::str::FromStr for Arrival {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        [Arrival::Uniform, Arrival::Poisson]
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| format!("\"{s}\" is not uniform or poisson"))
    }
}

/// One connection's schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    next: Instant,
    mean_gap_ns: f64,
    arrival: Arrival,
    rng: Rng,
    /// Fractional nanoseconds carried between uniform gaps, so a rate that
    /// does not divide a second exactly does not drift.
    carry: f64,
}

impl Schedule {
    /// A schedule of `rate` requests per second starting near `start`.
    /// Connection `index` of `of` is offset by `index/of` of a gap so that
    /// uniform schedules of many connections interleave instead of firing
    /// together.
    pub fn new(
        start: Instant,
        rate: f64,
        arrival: Arrival,
        rng: Rng,
        index: usize,
        of: usize,
    ) -> Schedule {
        let mean_gap_ns = 1e9 / rate;
        let offset = mean_gap_ns * index as f64 / of.max(1) as f64;
        let mut s = Schedule {
            next: start,
            mean_gap_ns,
            arrival,
            rng,
            carry: offset,
        };
        let whole = s.take_whole();
        s.next += Duration::from_nanos(whole);
        if arrival == Arrival::Poisson {
            s.advance();
        }
        s
    }

    fn take_whole(&mut self) -> u64 {
        let whole = self.carry.floor();
        self.carry -= whole;
        whole as u64
    }

    /// The intended send time of the next request.
    #[inline]
    pub fn next(&self) -> Instant {
        self.next
    }

    /// Moves to the following request's intended time.
    #[inline]
    pub fn advance(&mut self) {
        let gap = match self.arrival {
            Arrival::Uniform => self.mean_gap_ns,
            Arrival::Poisson => {
                // Inverse transform of a uniform draw in (0, 1].
                let u = ((self.rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                -u.ln() * self.mean_gap_ns
            }
        };
        self.carry += gap;
        let whole = self.take_whole();
        self.next += Duration::from_nanos(whole);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn uniform_gaps_are_exact_and_do_not_drift() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 3.0, Arrival::Uniform, Rng::seed_from_u64(1), 0, 1);
        for _ in 0..3_000 {
            s.advance();
        }
        // 3,000 gaps of 1/3 s is 1,000 s, to the nanosecond.
        let d = s.next() - t0;
        assert!((d.as_secs_f64() - 1000.0).abs() < 1e-6, "{d:?}");
    }

    #[test]
    fn poisson_mean_gap_matches_the_rate() {
        let t0 = Instant::now();
        let mut s = Schedule::new(t0, 1000.0, Arrival::Poisson, Rng::seed_from_u64(9), 0, 1);
        let start = s.next();
        for _ in 0..100_000 {
            s.advance();
        }
        let mean_ms = (s.next() - start).as_secs_f64() * 1000.0 / 100_000.0;
        assert!((mean_ms - 1.0).abs() < 0.02, "mean gap {mean_ms} ms");
    }

    #[test]
    fn connections_interleave() {
        let t0 = Instant::now();
        let a = Schedule::new(t0, 100.0, Arrival::Uniform, Rng::seed_from_u64(1), 0, 4);
        let b = Schedule::new(t0, 100.0, Arrival::Uniform, Rng::seed_from_u64(1), 2, 4);
        assert_eq!(b.next() - a.next(), Duration::from_millis(5));
    }
}
