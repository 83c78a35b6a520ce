//! Per-second time series of the measured window.
//!
//! Each worker keeps one small histogram per operation kind for the current
//! second (by reply time). When a reply lands in a later second, the finished
//! second is serialized (HdrHistogram V2: a few hundred bytes for a second's
//! worth of similar values) and the histograms are reset, so a long run costs
//! little memory. At the end the phase merges every worker's seconds by
//! index, so percentiles are exact merges, never averages of percentiles.
//! Each merged second keeps its histogram (`SeriesPoint::histogram`), which
//! the store keeps apart from the phase JSON and `kvbench export --format
//! hlog` writes as one interval of an HdrHistogram interval log.

use crate::recorder::{encode_histogram, MAX_LATENCY_NS};
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use kvbench_model::{OpKind, SeriesPoint};
use std::collections::BTreeMap;
use std::time::Instant;

/// Two significant digits (1% precision) suffice for a per-second view and
/// keep each interval histogram small; the phase totals keep three.
const SIGFIG: u8 = 2;

fn interval_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGFIG).expect("valid histogram bounds")
}

/// One finished second of one worker.
#[derive(Debug, Clone)]
struct Second {
    index: u32,
    completed: [u64; OpKind::COUNT],
    errors: [u64; OpKind::COUNT],
    hist: [Vec<u8>; OpKind::COUNT],
}

/// All workers' counts and histograms for one second.
struct MergedSecond {
    completed: [u64; OpKind::COUNT],
    errors: [u64; OpKind::COUNT],
    hist: Vec<Histogram<u64>>,
}

impl Default for MergedSecond {
    fn default() -> Self {
        MergedSecond {
            completed: [0; OpKind::COUNT],
            errors: [0; OpKind::COUNT],
            hist: (0..OpKind::COUNT).map(|_| interval_histogram()).collect(),
        }
    }
}

/// A worker's series recorder.
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    origin: Option<Instant>,
    current: u32,
    completed: [u64; OpKind::COUNT],
    errors: [u64; OpKind::COUNT],
    hist: Vec<Histogram<u64>>,
    done: Vec<Second>,
}

impl Default for SeriesRecorder {
    fn default() -> Self {
        SeriesRecorder {
            origin: None,
            current: 0,
            completed: [0; OpKind::COUNT],
            errors: [0; OpKind::COUNT],
            hist: (0..OpKind::COUNT).map(|_| interval_histogram()).collect(),
            done: Vec::new(),
        }
    }
}

impl SeriesRecorder {
    /// Sets the instant the window opened; seconds count from it.
    pub fn set_origin(&mut self, origin: Instant) {
        self.origin = Some(origin);
    }

    #[inline]
    fn second_of(&self, at: Instant) -> u32 {
        let origin = self.origin.unwrap_or(at);
        // Whole seconds: a field of the Duration, no 128-bit division per reply.
        at.saturating_duration_since(origin).as_secs() as u32
    }

    fn roll_to(&mut self, second: u32) {
        if second <= self.current {
            return;
        }
        self.flush();
        self.current = second;
    }

    /// Saves the current second if anything happened in it.
    pub fn flush(&mut self) {
        let any = self.completed.iter().chain(&self.errors).any(|&n| n > 0);
        if any {
            let mut hist: [Vec<u8>; OpKind::COUNT] = Default::default();
            for (i, h) in self.hist.iter_mut().enumerate() {
                if !h.is_empty() {
                    // Serializing into a Vec cannot fail for a valid histogram.
                    let _ = V2Serializer::new().serialize(h, &mut hist[i]);
                    h.reset();
                }
            }
            self.done.push(Second {
                index: self.current,
                completed: self.completed,
                errors: self.errors,
                hist,
            });
        }
        self.completed = [0; OpKind::COUNT];
        self.errors = [0; OpKind::COUNT];
    }

    /// A completed operation, replied at `at`.
    #[inline]
    pub fn completed(&mut self, kind: OpKind, latency_ns: u64, at: Instant) {
        self.roll_to(self.second_of(at));
        self.completed[kind.index()] += 1;
        let _ = self.hist[kind.index()].record(latency_ns.clamp(1, MAX_LATENCY_NS));
    }

    /// A failed operation, noticed at `at`.
    pub fn error(&mut self, kind: OpKind, n: u64, at: Instant) {
        self.roll_to(self.second_of(at));
        self.errors[kind.index()] += n;
    }

    /// Merges every worker's seconds into series points, ordered by second and
    /// operation kind. Seconds with no activity for a kind that was active in
    /// the run appear with zero completions, so a stall shows as a gap of zeros.
    pub fn merge(workers: &mut [SeriesRecorder]) -> Vec<SeriesPoint> {
        let mut by_second: BTreeMap<u32, MergedSecond> = BTreeMap::new();
        let mut active = [false; OpKind::COUNT];
        for w in workers.iter_mut() {
            w.flush();
            for s in &w.done {
                let entry = by_second.entry(s.index).or_default();
                for kind in OpKind::ALL {
                    let i = kind.index();
                    entry.completed[i] += s.completed[i];
                    entry.errors[i] += s.errors[i];
                    active[i] |= s.completed[i] + s.errors[i] > 0;
                    if !s.hist[i].is_empty() {
                        if let Ok(h) =
                            Deserializer::new().deserialize::<u64, _>(&mut s.hist[i].as_slice())
                        {
                            let _ = entry.hist[i].add(&h);
                        }
                    }
                }
            }
        }
        let Some(&last) = by_second.keys().next_back() else {
            return Vec::new();
        };
        let us = |h: &Histogram<u64>, q: f64| {
            if h.is_empty() {
                0.0
            } else {
                h.value_at_quantile(q) as f64 / 1000.0
            }
        };
        let empty = interval_histogram();
        let mut out = Vec::new();
        for second in 0..=last {
            for kind in OpKind::ALL {
                let i = kind.index();
                if !active[i] {
                    continue;
                }
                let (completed, errors, h) = match by_second.get(&second) {
                    Some(m) => (m.completed[i], m.errors[i], &m.hist[i]),
                    None => (0, 0, &empty),
                };
                out.push(SeriesPoint {
                    second,
                    op: kind,
                    completed,
                    errors,
                    p50_us: us(h, 0.5),
                    p99_us: us(h, 0.99),
                    p999_us: us(h, 0.999),
                    // Kept whole so the second can be exported as an interval
                    // histogram; an empty second stores nothing.
                    histogram: if h.is_empty() {
                        String::new()
                    } else {
                        encode_histogram(h)
                    },
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds_merge_across_workers_and_gaps_show_as_zero() {
        let t0 = Instant::now();
        let mut a = SeriesRecorder::default();
        let mut b = SeriesRecorder::default();
        a.set_origin(t0);
        b.set_origin(t0);
        for i in 0..100 {
            a.completed(OpKind::Read, 1_000 + i, t0 + Duration::from_millis(10));
            b.completed(OpKind::Read, 9_000_000, t0 + Duration::from_millis(20));
        }
        // Nothing in second 1; a burst with an error in second 2.
        a.completed(OpKind::Read, 5_000, t0 + Duration::from_millis(2_100));
        b.error(OpKind::Read, 3, t0 + Duration::from_millis(2_200));
        let pts = SeriesRecorder::merge(&mut [a, b]);
        assert_eq!(pts.len(), 3, "{pts:?}");
        assert_eq!((pts[0].second, pts[0].completed), (0, 200));
        assert!((pts[0].p50_us - 1.1).abs() < 0.2, "{}", pts[0].p50_us);
        assert!(pts[0].p99_us > 8_000.0);
        assert_eq!((pts[1].second, pts[1].completed, pts[1].errors), (1, 0, 0));
        assert_eq!((pts[2].second, pts[2].completed, pts[2].errors), (2, 1, 3));
        // Each second keeps its merged histogram, and its percentiles are
        // the ones the point reports; a second without completions keeps none.
        let h0 = crate::recorder::decode_histogram(&pts[0].histogram).expect("second 0");
        assert_eq!(h0.len(), 200);
        assert_eq!(h0.value_at_quantile(0.99) as f64 / 1000.0, pts[0].p99_us);
        assert!(pts[1].histogram.is_empty());
        let h2 = crate::recorder::decode_histogram(&pts[2].histogram).expect("second 2");
        assert_eq!((h2.len(), h2.sigfig()), (1, SIGFIG));
    }
}
