//! The outage as the clients saw it. A restart, a failover or a dropped
//! connection shows in a run as requests that failed without a reply (lost
//! with their connection, timed out, or never sent because their node was
//! down); what a user of the store needs to know is how long it was
//! unavailable and how long throughput took to come back, not only how
//! many requests failed.
//!
//! Each worker counts, per 100 ms of the window (a *step*), the operations
//! completed, the requests failed without a reply and the highest latency
//! completed; the phase adds the workers' steps by index (and keeps the
//! earliest failure's exact instant), and [`Outage::from_steps`] derives
//! the figures docs/metrics.md defines. Besides failures without a reply,
//! the "not now" error replies count (`LOADING` while a restarted server
//! reads its data back, `READONLY`, `MASTERDOWN`, `CLUSTERDOWN`,
//! `TRYAGAIN`): the store is not available yet. Other error replies do
//! not: a server that answers `ERR` or `OOM` is available, and refusing.

use kvbench_model::Outage;
use std::time::{Duration, Instant};

/// Length of a step in nanoseconds.
pub const STEP_NS: u64 = 100_000_000;
/// Steps per second.
const STEPS_PER_S: u64 = 1_000_000_000 / STEP_NS;
/// The baseline needs this many steps before the first failure.
const BASELINE_STEPS: usize = 5;
/// Recovery is judged over this many steps.
const RECOVERY_STEPS: usize = 5;
/// Recovered: throughput back to this share of the baseline.
const RECOVERED: f64 = 0.9;

/// One worker's steps.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    origin: Option<Instant>,
    /// Per step: completed, failed without a reply, highest latency (ns).
    steps: Vec<[u64; 3]>,
    /// When the first request failed without a reply, ns after the origin.
    first_failure_ns: Option<u64>,
}

impl Timeline {
    /// Steps count from `origin` (the window's start).
    pub fn set_origin(&mut self, origin: Instant) {
        self.origin = Some(origin);
    }

    /// The step `since` the window's start falls in.
    #[inline]
    fn step(&mut self, since: Duration) -> Option<&mut [u64; 3]> {
        // Seconds and the sub-second part: no 128-bit division per reply.
        let i = since.as_secs() * STEPS_PER_S + u64::from(since.subsec_nanos()) / STEP_NS;
        let i = usize::try_from(i).ok()?;
        if i >= self.steps.len() {
            self.grow(i);
        }
        self.steps.get_mut(i)
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        // A second at a time, so a long window grows ten times a second
        // at most once.
        self.steps.resize(i + STEPS_PER_S as usize, [0; 3]);
    }

    /// An operation completed `since` the window's start, after `latency_ns`.
    #[inline]
    pub fn completed(&mut self, latency_ns: u64, since: Duration) {
        self.completed_n(latency_ns, 1, since);
    }

    /// `n` operations completed at once, each after `latency_ns`.
    #[inline]
    pub fn completed_n(&mut self, latency_ns: u64, n: u64, since: Duration) {
        if let Some(s) = self.step(since) {
            s[0] += n;
            s[2] = s[2].max(latency_ns);
        }
    }

    /// `n` requests failed without a reply at `at`.
    pub fn failed(&mut self, n: u64, at: Instant) {
        let Some(since) = self.origin.and_then(|o| at.checked_duration_since(o)) else {
            return;
        };
        let Some(s) = self.step(since) else {
            return;
        };
        s[1] += n;
        let ns = u64::try_from(since.as_nanos()).unwrap_or(u64::MAX);
        self.first_failure_ns = Some(self.first_failure_ns.map_or(ns, |f| f.min(ns)));
    }

    /// Adds another worker's steps (same origin).
    pub fn merge(&mut self, other: &Timeline) {
        self.add_steps(&other.steps, other.first_failure_ns);
    }

    /// The steps so far (completed, failed, highest latency in ns).
    pub fn steps(&self) -> &[[u64; 3]] {
        &self.steps
    }

    /// When the first request failed without a reply, ns into the window.
    pub fn first_failure_ns(&self) -> Option<u64> {
        self.first_failure_ns
    }

    /// Adds the steps of another process that ran the same window
    /// (scale-out: step `k` of each is the same wall-clock 100 ms).
    pub fn add_steps(&mut self, steps: &[[u64; 3]], first_failure_ns: Option<u64>) {
        if self.steps.len() < steps.len() {
            self.steps.resize(steps.len(), [0; 3]);
        }
        for (mine, theirs) in self.steps.iter_mut().zip(steps) {
            mine[0] += theirs[0];
            mine[1] += theirs[1];
            mine[2] = mine[2].max(theirs[2]);
        }
        if let Some(f) = first_failure_ns {
            self.first_failure_ns = Some(self.first_failure_ns.map_or(f, |m| m.min(f)));
        }
    }

    /// The outage of a window of `window_s` seconds, when any request
    /// failed without a reply in it.
    pub fn outage(&self, window_s: f64) -> Option<Outage> {
        let first = self.first_failure_ns?;
        let keep = ((window_s * STEPS_PER_S as f64).ceil() as usize).min(self.steps.len());
        Outage::from_steps(self.steps[..keep].to_vec(), first as f64 / 1e9)
    }
}

/// Derives the outage figures from the steps (see docs/metrics.md,
/// "Outage"); `None` when no step has a failure.
pub trait FromSteps: Sized {
    /// The figures of `steps`, the first failure `first_failure_s` after
    /// the window's start.
    fn from_steps(steps: Vec<[u64; 3]>, first_failure_s: f64) -> Option<Self>;
}

impl FromSteps for Outage {
    fn from_steps(steps: Vec<[u64; 3]>, first_failure_s: f64) -> Option<Outage> {
        let f = steps.iter().position(|s| s[1] > 0)?;
        let l = steps.iter().rposition(|s| s[1] > 0)?;
        let step_s = STEP_NS as f64 / 1e9;
        let failed = steps.iter().map(|s| s[1]).sum();
        let baseline = (f >= BASELINE_STEPS)
            .then(|| steps[..f].iter().map(|s| s[0]).sum::<u64>() as f64 / (f as f64 * step_s));
        // Back: the first step after the last failure in which anything completed.
        let back = (l + 1..steps.len()).find(|&i| steps[i][0] > 0);
        let since_first = |i: usize| (i as f64 * step_s - first_failure_s).max(0.0);
        let recovered = match (baseline, back) {
            (Some(rate), Some(b)) if rate > 0.0 => (b..steps.len())
                .take_while(|&i| i + RECOVERY_STEPS <= steps.len())
                .find(|&i| {
                    let n: u64 = steps[i..i + RECOVERY_STEPS].iter().map(|s| s[0]).sum();
                    n as f64 >= RECOVERED * rate * RECOVERY_STEPS as f64 * step_s
                }),
            _ => None,
        };
        let peak_until = recovered.map_or(steps.len(), |r| (r + RECOVERY_STEPS).min(steps.len()));
        let peak = steps[f..peak_until]
            .iter()
            .map(|s| s[2])
            .max()
            .filter(|&m| m > 0);
        Some(Outage {
            first_failure_s,
            unavailable_s: back.map(since_first),
            recovery_s: recovered.map(since_first),
            baseline_ops_s: baseline,
            failed,
            peak_latency_us: peak.map(|ns| ns as f64 / 1e3),
            steps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1,000 ops/s for 2 s, nothing for 1 s after a failure at 2.05 s,
    /// then 500 ops/s for 0.5 s and 1,000 ops/s again.
    fn restart() -> Timeline {
        let t0 = Instant::now();
        let mut t = Timeline::default();
        t.set_origin(t0);
        let ms = |m: u64| t0 + Duration::from_millis(m);
        for m in (0..2050).chain(3050..6000) {
            if (3050..3550).contains(&m) && m % 2 == 1 {
                continue;
            }
            let latency = if m < 3100 { 200_000 } else { 100_000 };
            t.completed(latency, ms(m) + Duration::from_micros(1) - t0);
        }
        t.failed(4, ms(2050));
        t
    }

    #[test]
    fn a_restart_gives_its_unavailability_and_recovery() {
        let o = restart().outage(6.0).expect("an outage");
        assert_eq!(o.failed, 4);
        assert!((o.first_failure_s - 2.05).abs() < 1e-6);
        let rate = o.baseline_ops_s.expect("a baseline");
        assert!((rate - 1000.0).abs() < 1.0, "{rate}");
        // Back in the step that starts at 3.0 s (completions from 3.05 s).
        let down = o.unavailable_s.expect("back");
        assert!((down - 0.95).abs() < 1e-9, "{down}");
        // 500 ops/s until 3.55 s: 90% over 0.5 s first holds from 3.5 s.
        let rec = o.recovery_s.expect("recovered");
        assert!((rec - 1.45).abs() < 1e-9, "{rec}");
        assert_eq!(o.peak_latency_us, Some(200.0));
        assert_eq!(o.steps.len(), 60);
    }

    #[test]
    fn workers_add_up_step_by_step_and_keep_the_earliest_failure() {
        let mut a = restart();
        let mut b = Timeline::default();
        b.set_origin(a.origin.expect("set"));
        b.failed(1, a.origin.expect("set") + Duration::from_millis(1500));
        a.merge(&b);
        let o = a.outage(6.0).expect("an outage");
        assert_eq!(o.failed, 5);
        assert!((o.first_failure_s - 1.5).abs() < 1e-6);
        // Another process's steps merge to the same figures.
        let mut c = Timeline::default();
        c.add_steps(a.steps(), a.first_failure_ns());
        assert_eq!(c.outage(6.0), Some(o));
    }

    #[test]
    fn no_failure_no_outage_and_an_early_one_has_no_baseline() {
        let t0 = Instant::now();
        let mut t = Timeline::default();
        t.set_origin(t0);
        for m in 0..1000 {
            t.completed(1000, Duration::from_millis(m));
        }
        assert_eq!(t.outage(1.0), None);
        t.failed(1, t0 + Duration::from_millis(250));
        let o = t.outage(1.0).expect("an outage");
        assert_eq!((o.baseline_ops_s, o.recovery_s), (None, None));
        assert!(o.unavailable_s.is_some());
    }

    #[test]
    fn a_store_that_never_comes_back_has_no_end() {
        let t0 = Instant::now();
        let mut t = Timeline::default();
        t.set_origin(t0);
        for m in 0..1000 {
            t.completed(1000, Duration::from_millis(m));
        }
        t.failed(2, t0 + Duration::from_millis(1000));
        t.failed(2, t0 + Duration::from_millis(1900));
        let o = t.outage(2.0).expect("an outage");
        assert_eq!((o.unavailable_s, o.recovery_s), (None, None));
        assert_eq!(o.peak_latency_us, None);
    }
}
