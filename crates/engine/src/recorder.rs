//! Per-worker measurement state: one latency histogram and outcome counters
//! per operation kind, merged across workers when the phase ends.
//!
//! Latencies are recorded in nanoseconds with a trackable range of 1 ns to
//! 60 s at 3 significant digits: values below 2,048 ns are exact and every
//! larger value is within 0.1%. A value above 60 s is clamped to 60 s and
//! counted in [`Recorder::clamped`] so a report can say so rather than
//! silently lose it.
//!
//! A worker thread owns its recorder; connection tasks on that thread share
//! it through a `RefCell`, so recording takes no lock and no atomic.

use crate::driver::Outcome;
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use kvbench_model::{LatencySummary, OpKind, OpResult, PhaseResult};
use std::time::Instant;

/// Highest latency the histograms track, in nanoseconds (60 s).
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;
const SIGFIG: u8 = 3;
/// Error messages kept per phase for the record; the counts keep the rest.
const MAX_ERROR_SAMPLES: usize = 5;

/// Counters and histograms for one worker (or, after merging, one phase).
#[derive(Debug, Clone)]
pub struct Recorder {
    hist: Vec<Histogram<u64>>,
    completed: [u64; OpKind::COUNT],
    misses: [u64; OpKind::COUNT],
    errors: [u64; OpKind::COUNT],
    /// Values above [`MAX_LATENCY_NS`] that were clamped.
    pub clamped: u64,
    /// Connections that ended early on an error (warm-up included): the load
    /// was lighter than asked from then on, so the run cannot be clean.
    pub failed_connections: u64,
    /// The reply time of the last measured operation (ops-bound windows end there).
    pub last_reply: Option<Instant>,
    error_samples: Vec<String>,
}

fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts; failure here is a
    // programming error, not an input error.
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGFIG).expect("valid histogram bounds")
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            hist: (0..OpKind::COUNT).map(|_| new_histogram()).collect(),
            completed: [0; OpKind::COUNT],
            misses: [0; OpKind::COUNT],
            errors: [0; OpKind::COUNT],
            clamped: 0,
            failed_connections: 0,
            last_reply: None,
            error_samples: Vec::new(),
        }
    }
}

impl Recorder {
    /// Records one measured reply. Only [`Outcome::Ok`] enters the histogram.
    #[inline]
    pub fn record(&mut self, kind: OpKind, outcome: Outcome, latency_ns: u64, replied: Instant) {
        let i = kind.index();
        match outcome {
            Outcome::Ok => {
                self.completed[i] += 1;
                let v = if latency_ns > MAX_LATENCY_NS {
                    self.clamped += 1;
                    MAX_LATENCY_NS
                } else {
                    latency_ns.max(1)
                };
                // Cannot fail: v is inside the histogram's bounds.
                let _ = self.hist[i].record(v);
            }
            Outcome::Miss => self.misses[i] += 1,
            Outcome::Error => self.errors[i] += 1,
        }
        if self.last_reply.is_none_or(|t| replied > t) {
            self.last_reply = Some(replied);
        }
    }

    /// Counts `n` requests of `kind` that failed without a reply (timeout,
    /// reset), keeping the first few messages.
    pub fn record_failure(&mut self, kind: OpKind, n: u64, message: &str) {
        self.errors[kind.index()] += n;
        self.note_error(message);
    }

    /// Keeps an error message for the record, deduplicated and bounded.
    pub fn note_error(&mut self, message: &str) {
        if self.error_samples.len() < MAX_ERROR_SAMPLES
            && !self.error_samples.iter().any(|m| m == message)
        {
            self.error_samples.push(message.to_string());
        }
    }

    /// Folds another worker's measurements into this one.
    pub fn merge(&mut self, other: &Recorder) {
        for i in 0..OpKind::COUNT {
            // Same bounds on both sides, so adding cannot fail.
            let _ = self.hist[i].add(&other.hist[i]);
            self.completed[i] += other.completed[i];
            self.misses[i] += other.misses[i];
            self.errors[i] += other.errors[i];
        }
        self.clamped += other.clamped;
        self.failed_connections += other.failed_connections;
        self.last_reply = match (self.last_reply, other.last_reply) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        for m in &other.error_samples {
            self.note_error(m);
        }
    }

    /// Completed operations of every kind.
    pub fn completed(&self) -> u64 {
        self.completed.iter().sum()
    }

    /// The latency histogram of one kind (nanoseconds).
    pub fn histogram(&self, kind: OpKind) -> &Histogram<u64> {
        &self.hist[kind.index()]
    }

    /// Summarises into the stored form, with `window_s` the measured window's length.
    pub fn to_phase_result(&self, window_s: f64) -> PhaseResult {
        let per_s = |n: u64| {
            if window_s > 0.0 {
                n as f64 / window_s
            } else {
                0.0
            }
        };
        let ops: Vec<OpResult> = OpKind::ALL
            .iter()
            .filter(|k| {
                let i = k.index();
                self.completed[i] + self.misses[i] + self.errors[i] > 0
            })
            .map(|&k| {
                let i = k.index();
                OpResult {
                    op: k,
                    completed: self.completed[i],
                    misses: self.misses[i],
                    errors: self.errors[i],
                    throughput: per_s(self.completed[i]),
                    latency: summarize(&self.hist[i]),
                    histogram: encode_histogram(&self.hist[i]),
                }
            })
            .collect();
        let completed = self.completed();
        PhaseResult {
            duration_s: window_s,
            completed,
            errors: self.errors.iter().sum(),
            throughput: per_s(completed),
            ops,
            error_samples: self.error_samples.clone(),
        }
    }
}

/// Percentiles of a nanosecond histogram, in microseconds.
pub fn summarize(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    LatencySummary {
        count: h.len(),
        min_us: us(h.min()),
        mean_us: h.mean() / 1000.0,
        p50_us: us(h.value_at_quantile(0.50)),
        p95_us: us(h.value_at_quantile(0.95)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
    }
}

/// HdrHistogram V2 (uncompressed) bytes, base64: readable by every
/// HdrHistogram implementation, so stored runs can be re-analysed elsewhere.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Serialising into a Vec cannot fail for a valid histogram.
    let _ = V2Serializer::new().serialize(h, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Inverse of [`encode_histogram`].
///
/// # Errors
/// A message when the text is not base64 or not a V2 histogram.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram is not HdrHistogram V2: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ok_outcomes_are_timed_and_counted_as_completed() {
        let mut r = Recorder::default();
        let t = Instant::now();
        r.record(OpKind::Read, Outcome::Ok, 50_000, t);
        r.record(OpKind::Read, Outcome::Miss, 60_000, t);
        r.record(OpKind::Update, Outcome::Error, 70_000, t);
        let p = r.to_phase_result(1.0);
        assert_eq!(p.completed, 1);
        assert_eq!(p.errors, 1);
        let read = &p.ops[0];
        assert_eq!((read.completed, read.misses, read.latency.count), (1, 1, 1));
        assert!((read.latency.p50_us - 50.0).abs() < 0.1);
        assert_eq!(p.ops[1].completed, 0);
        assert_eq!(p.ops[1].latency.count, 0);
    }

    #[test]
    fn merge_adds_counts_and_histograms() {
        let t = Instant::now();
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        for i in 0..100 {
            a.record(OpKind::Read, Outcome::Ok, 1_000 + i, t);
            b.record(OpKind::Read, Outcome::Ok, 2_000_000 + i, t);
        }
        a.merge(&b);
        let h = a.histogram(OpKind::Read);
        assert_eq!(h.len(), 200);
        assert_eq!(a.completed(), 200);
        assert!(h.max() >= 2_000_000);
    }

    #[test]
    fn values_beyond_range_are_clamped_and_counted() {
        let mut r = Recorder::default();
        r.record(
            OpKind::Read,
            Outcome::Ok,
            MAX_LATENCY_NS * 2,
            Instant::now(),
        );
        assert_eq!(r.clamped, 1);
        assert_eq!(r.histogram(OpKind::Read).len(), 1);
    }

    #[test]
    fn histogram_text_round_trips() {
        let mut r = Recorder::default();
        for v in [1_000u64, 20_000, 3_000_000] {
            r.record(OpKind::Update, Outcome::Ok, v, Instant::now());
        }
        let text = encode_histogram(r.histogram(OpKind::Update));
        let back = decode_histogram(&text).expect("decodes");
        assert_eq!(&back, r.histogram(OpKind::Update));
    }
}
