//! Per-second time series of the measured window.
//!
//! Each worker keeps one histogram per operation kind for the current
//! second (by reply time), at the phase's precision. When a reply lands in a
//! later second, the finished second is added into the worker's histogram of
//! the whole window ([`SeriesRecorder::latencies`]: each latency is recorded
//! once, not once per second and once per window, and the sum is exact),
//! then reduced to two significant digits and serialized (HdrHistogram V2: a
//! few hundred bytes for a second's worth of similar values), and the
//! histograms are reset, so a long run costs little memory. At the end the
//! phase merges every worker's seconds by index, so percentiles are exact
//! merges, never averages of percentiles.
//! Each merged second keeps its histogram (`SeriesPoint::histogram`), which
//! the store keeps apart from the phase JSON and `kvbench export --format
//! hlog` writes as one interval of an HdrHistogram interval log.
//!
//! While the phase runs, each finished second is also sent to the
//! coordinator thread ([`LiveSeconds`]), which merges the workers' copies and
//! hands the caller one [`SecondStats`] per second (the live view). A worker
//! sends once per second, when its second rolls over (or when its ticker
//! rolls it while it waits), never per request.

use crate::events::{OpSecond, SecondStats};
use crate::outcome::{run_histogram, MAX_LATENCY_NS};
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use kvbench_model::{OpKind, SeriesPoint};
use kvbench_stats::hist::encode_histogram;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

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
    misses: [u64; OpKind::COUNT],
    errors: [u64; OpKind::COUNT],
    hist: [Vec<u8>; OpKind::COUNT],
}

/// All workers' counts and histograms for one second.
struct MergedSecond {
    completed: [u64; OpKind::COUNT],
    misses: [u64; OpKind::COUNT],
    errors: [u64; OpKind::COUNT],
    hist: Vec<Histogram<u64>>,
}

impl Default for MergedSecond {
    fn default() -> Self {
        MergedSecond {
            completed: [0; OpKind::COUNT],
            misses: [0; OpKind::COUNT],
            errors: [0; OpKind::COUNT],
            hist: (0..OpKind::COUNT).map(|_| interval_histogram()).collect(),
        }
    }
}

impl MergedSecond {
    /// Adds one worker's second; returns the kinds it had any activity for.
    fn add(&mut self, s: &Second) -> [bool; OpKind::COUNT] {
        let mut active = [false; OpKind::COUNT];
        for (i, on) in active.iter_mut().enumerate() {
            self.completed[i] += s.completed[i];
            self.misses[i] += s.misses[i];
            self.errors[i] += s.errors[i];
            *on = s.completed[i] + s.misses[i] + s.errors[i] > 0;
            if !s.hist[i].is_empty() {
                if let Ok(h) = Deserializer::new().deserialize::<u64, _>(&mut s.hist[i].as_slice())
                {
                    let _ = self.hist[i].add(&h);
                }
            }
        }
        active
    }
}

/// A percentile of an interval histogram in microseconds (0 when empty).
fn quantile_us(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.value_at_quantile(q) as f64 / 1000.0
    }
}

/// What a worker sends the coordinator when its second rolls over.
#[derive(Debug)]
pub(crate) struct LiveMsg {
    worker: usize,
    /// The worker records nothing more for seconds before this one
    /// (`u32::MAX`: it has finished).
    reached: u32,
    /// The second it just finished, if anything happened in it.
    second: Option<Second>,
}

/// Where a worker's finished seconds go while the phase runs.
#[derive(Debug, Clone)]
pub(crate) struct LiveSink {
    worker: usize,
    tx: Sender<LiveMsg>,
}

impl LiveSink {
    pub(crate) fn new(worker: usize, tx: Sender<LiveMsg>) -> LiveSink {
        LiveSink { worker, tx }
    }
}

/// A worker's series recorder.
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    origin: Option<Instant>,
    current: u32,
    completed: [u64; OpKind::COUNT],
    misses: [u64; OpKind::COUNT],
    errors: [u64; OpKind::COUNT],
    /// The current second's latencies per kind, at the phase's precision;
    /// allocated at a kind's first reply (14 kinds at about 220 KB each
    /// would be mostly unused).
    hist: Vec<Option<Histogram<u64>>>,
    /// The finished seconds' latencies per kind: with `hist`, the window's.
    total: Vec<Option<Histogram<u64>>>,
    /// A finished second reduced to the series' two digits before storing.
    reduced: Histogram<u64>,
    done: Vec<Second>,
    live: Option<LiveSink>,
    /// The last reply instant seen and its offset from the origin: the
    /// replies of one read share their instant, so the offset (a
    /// subtraction of two timespecs, 37 instructions) is taken once per
    /// read rather than once per reply.
    last: Option<(Instant, Duration)>,
}

impl Default for SeriesRecorder {
    fn default() -> Self {
        SeriesRecorder {
            origin: None,
            current: 0,
            completed: [0; OpKind::COUNT],
            misses: [0; OpKind::COUNT],
            errors: [0; OpKind::COUNT],
            hist: vec![None; OpKind::COUNT],
            total: vec![None; OpKind::COUNT],
            reduced: interval_histogram(),
            done: Vec::new(),
            live: None,
            last: None,
        }
    }
}

impl SeriesRecorder {
    /// Sets the instant the window opened; seconds count from it.
    pub fn set_origin(&mut self, origin: Instant) {
        self.origin = Some(origin);
        self.last = None;
    }

    #[inline]
    fn second_of(&self, at: Instant) -> u32 {
        let origin = self.origin.unwrap_or(at);
        // Whole seconds: a field of the Duration, no 128-bit division per reply.
        at.saturating_duration_since(origin).as_secs() as u32
    }

    /// Also sends each finished second to `sink` (the live view).
    pub(crate) fn set_live(&mut self, sink: LiveSink) {
        self.live = Some(sink);
    }

    #[inline]
    fn roll_to(&mut self, second: u32) {
        if second > self.current {
            self.advance(second);
        }
    }

    /// Once per second: saves the finished second and tells the live view.
    #[cold]
    #[inline(never)]
    fn advance(&mut self, second: u32) {
        let finished = self.take_current();
        self.publish(&finished, second);
        self.done.extend(finished);
        self.current = second;
    }

    /// Rolls over to the second of `now` when it has begun: called by a
    /// worker's ticker, so a worker that gets no reply (a stalled server)
    /// still finishes its seconds on time for the live view.
    pub fn tick(&mut self, now: Instant) {
        if self.origin.is_some_and(|o| now >= o) {
            self.roll_to(self.second_of(now));
        }
    }

    /// The worker is done: saves the current second and tells the live
    /// view that nothing more comes from this worker.
    pub fn finish(&mut self) {
        let finished = self.take_current();
        self.publish(&finished, u32::MAX);
        self.done.extend(finished);
    }

    fn publish(&self, finished: &Option<Second>, reached: u32) {
        if let Some(sink) = &self.live {
            // The coordinator may be gone (the phase failed); nothing to do then.
            let _ = sink.tx.send(LiveMsg {
                worker: sink.worker,
                reached,
                second: finished.clone(),
            });
        }
    }

    /// The current second, if anything happened in it; resets the counts.
    fn take_current(&mut self) -> Option<Second> {
        let any = self
            .completed
            .iter()
            .chain(&self.misses)
            .chain(&self.errors)
            .any(|&n| n > 0);
        let out = any.then(|| {
            let mut hist: [Vec<u8>; OpKind::COUNT] = Default::default();
            for (i, h) in self.hist.iter_mut().enumerate() {
                let Some(h) = h.as_mut().filter(|h| !h.is_empty()) else {
                    continue;
                };
                // Same bounds and precision: adding cannot fail.
                let _ = self.total[i].get_or_insert_with(run_histogram).add(&*h);
                // Three digits' buckets nest inside two digits' (both are
                // powers of two wide), so each count lands where recording
                // its latency at two digits would have put it.
                self.reduced.reset();
                for v in h.iter_recorded() {
                    let _ = self
                        .reduced
                        .record_n(v.value_iterated_to(), v.count_at_value());
                }
                // Serializing into a Vec cannot fail for a valid histogram.
                let _ = V2Serializer::new().serialize(&self.reduced, &mut hist[i]);
                h.reset();
            }
            Second {
                index: self.current,
                completed: self.completed,
                misses: self.misses,
                errors: self.errors,
                hist,
            }
        });
        self.completed = [0; OpKind::COUNT];
        self.misses = [0; OpKind::COUNT];
        self.errors = [0; OpKind::COUNT];
        out
    }

    /// Saves the current second if anything happened in it.
    pub fn flush(&mut self) {
        let finished = self.take_current();
        self.done.extend(finished);
    }

    /// A completed operation, replied at `at`; returns how long after the
    /// window's start that was (the outage's steps count from it too, and
    /// reading it once per reply is cheaper than twice).
    #[inline]
    pub fn completed(&mut self, kind: OpKind, latency_ns: u64, at: Instant) -> Duration {
        self.completed_n(kind, latency_ns, 1, at)
    }

    /// `n` completed operations of one latency, all replied at `at`
    /// (exactly `n` calls of [`SeriesRecorder::completed`]).
    #[inline]
    pub fn completed_n(&mut self, kind: OpKind, latency_ns: u64, n: u64, at: Instant) -> Duration {
        let since = match self.last {
            Some((t, since)) if t == at => since,
            _ => {
                let since = at.saturating_duration_since(self.origin.unwrap_or(at));
                self.last = Some((at, since));
                since
            }
        };
        // Whole seconds: a field of the Duration, no 128-bit division per reply.
        self.roll_to(since.as_secs() as u32);
        self.completed[kind.index()] += n;
        let _ = self.hist[kind.index()]
            .get_or_insert_with(run_histogram)
            .record_n(latency_ns.clamp(1, MAX_LATENCY_NS), n);
        since
    }

    /// The window's latencies of `kind` so far: the finished seconds' and
    /// the current one's (borrowed when the current second has none).
    pub fn latencies(&self, kind: OpKind) -> Cow<'_, Histogram<u64>> {
        let i = kind.index();
        let current = self.hist[i].as_ref().filter(|h| !h.is_empty());
        match (&self.total[i], current) {
            (Some(t), None) => Cow::Borrowed(t),
            (None, Some(c)) => Cow::Borrowed(c),
            (Some(t), Some(c)) => {
                let mut sum = t.clone();
                // Same bounds and precision: adding cannot fail.
                let _ = sum.add(c);
                Cow::Owned(sum)
            }
            (None, None) => Cow::Owned(run_histogram()),
        }
    }

    /// Adds another worker's window latencies (its finished seconds and
    /// its current one) to this one's.
    pub fn add_latencies_of(&mut self, other: &SeriesRecorder) {
        for (i, mine) in self.total.iter_mut().enumerate() {
            for h in [&other.total[i], &other.hist[i]].into_iter().flatten() {
                if !h.is_empty() {
                    // Same bounds and precision: adding cannot fail.
                    let _ = mine.get_or_insert_with(run_histogram).add(h);
                }
            }
        }
    }

    /// Adds `h` (the phase's precision) to the window's latencies of `kind`.
    ///
    /// # Errors
    /// hdrhistogram's, when `h`'s values do not fit.
    pub fn add_latencies(
        &mut self,
        kind: OpKind,
        h: &Histogram<u64>,
    ) -> Result<(), hdrhistogram::AdditionError> {
        if h.is_empty() {
            return Ok(());
        }
        self.total[kind.index()]
            .get_or_insert_with(run_histogram)
            .add(h)
    }

    /// A read that found no record, replied at `at` (counted per second for
    /// the hit ratio; its latency is not in the second's histogram).
    #[inline]
    pub fn missed(&mut self, kind: OpKind, at: Instant) {
        self.roll_to(self.second_of(at));
        self.misses[kind.index()] += 1;
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
                let added = by_second.entry(s.index).or_default().add(s);
                for (a, b) in active.iter_mut().zip(added) {
                    *a |= b;
                }
            }
        }
        points(&by_second, active)
    }

    /// Merges the stored series of several processes that ran one phase
    /// together (scale-out): their seconds count from one common start, so
    /// second `k` of each is the same wall-clock second; counts are added
    /// and histograms merged exactly, as [`merge`](Self::merge) does for
    /// threads.
    ///
    /// # Errors
    /// A message when a stored second's histogram cannot be decoded.
    pub fn merge_points(parts: &[&[SeriesPoint]]) -> Result<Vec<SeriesPoint>, String> {
        let mut by_second: BTreeMap<u32, MergedSecond> = BTreeMap::new();
        let mut active = [false; OpKind::COUNT];
        for p in parts.iter().flat_map(|part| part.iter()) {
            let i = p.op.index();
            active[i] = true;
            let m = by_second.entry(p.second).or_default();
            m.completed[i] += p.completed;
            m.misses[i] += p.misses;
            m.errors[i] += p.errors;
            if !p.histogram.is_empty() {
                let h = kvbench_stats::hist::decode_histogram(&p.histogram)
                    .map_err(|e| format!("second {} of {}: {e}", p.second, p.op.as_str()))?;
                m.hist[i].add(&h).map_err(|e| {
                    format!(
                        "second {} of {}: cannot add: {e:?}",
                        p.second,
                        p.op.as_str()
                    )
                })?;
            }
        }
        Ok(points(&by_second, active))
    }
}

/// The merged seconds as series points, every second from 0 to the last
/// for every kind that was active.
fn points(
    by_second: &BTreeMap<u32, MergedSecond>,
    active: [bool; OpKind::COUNT],
) -> Vec<SeriesPoint> {
    let Some(&last) = by_second.keys().next_back() else {
        return Vec::new();
    };
    let us = quantile_us;
    let empty = interval_histogram();
    let mut out = Vec::new();
    for second in 0..=last {
        for kind in OpKind::ALL {
            let i = kind.index();
            if !active[i] {
                continue;
            }
            let (completed, misses, errors, h) = match by_second.get(&second) {
                Some(m) => (m.completed[i], m.misses[i], m.errors[i], &m.hist[i]),
                None => (0, 0, 0, &empty),
            };
            out.push(SeriesPoint {
                second,
                op: kind,
                completed,
                misses,
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

/// How long the live view waits for a worker that has not finished a
/// second before it reports the second without that worker's share.
const LIVE_GRACE: Duration = Duration::from_secs(2);

/// The coordinator's side of the live view: merges the seconds the workers
/// send and releases each one when every worker is past it.
pub(crate) struct LiveSeconds {
    rx: Receiver<LiveMsg>,
    origin: Instant,
    /// Per worker: it sends nothing more for seconds before this.
    reached: Vec<u32>,
    pending: BTreeMap<u32, MergedSecond>,
    /// The next second to release.
    next: u32,
    /// Seconds in a time-bound window (none is released past it).
    limit: Option<u32>,
    /// The window's length once known (the last second may be short).
    window: Option<Duration>,
    active: [bool; OpKind::COUNT],
}

impl LiveSeconds {
    /// The live view of `workers` workers whose seconds count from
    /// `origin`, over a window of `window` when it is time-bound.
    pub(crate) fn new(
        rx: Receiver<LiveMsg>,
        workers: usize,
        origin: Instant,
        window: Option<Duration>,
    ) -> LiveSeconds {
        LiveSeconds {
            rx,
            origin,
            reached: vec![0; workers],
            pending: BTreeMap::new(),
            next: 0,
            limit: window.map(|d| d.as_secs_f64().ceil() as u32),
            window,
            active: [false; OpKind::COUNT],
        }
    }

    fn drain(&mut self) {
        while let Ok(m) = self.rx.try_recv() {
            if let Some(r) = self.reached.get_mut(m.worker) {
                *r = (*r).max(m.reached);
            }
            if let Some(s) = m.second {
                if s.index >= self.next {
                    self.pending.entry(s.index).or_default().add(&s);
                }
            }
        }
    }

    /// The seconds that are complete at `now`: every worker is past them,
    /// or they ended more than [`LIVE_GRACE`] ago. While every worker has
    /// stopped, [`LiveSeconds::rest`] releases the rest.
    pub(crate) fn ready(&mut self, now: Instant) -> Vec<SecondStats> {
        self.drain();
        let through = self.reached.iter().copied().min().unwrap_or(0);
        let mut out = Vec::new();
        while through != u32::MAX && self.limit.is_none_or(|l| self.next < l) {
            let due = self.origin + Duration::from_secs(u64::from(self.next) + 1) + LIVE_GRACE;
            if self.next >= through && now < due {
                break;
            }
            out.push(self.release());
        }
        out
    }

    /// Every second not released yet, once the workers have stopped, up to
    /// the last one with activity; `window` is the window's final length.
    pub(crate) fn rest(&mut self, window: Duration) -> Vec<SecondStats> {
        self.drain();
        self.window = Some(window);
        let mut out = Vec::new();
        while let Some(&last) = self.pending.keys().next_back() {
            if self.next > last {
                break;
            }
            out.push(self.release());
        }
        out
    }

    /// Releases second `next` (zeros when nothing arrived for it).
    fn release(&mut self) -> SecondStats {
        let second = self.next;
        self.next += 1;
        let m = self.pending.remove(&second).unwrap_or_default();
        let mut all = interval_histogram();
        let mut ops = Vec::new();
        for kind in OpKind::ALL {
            let i = kind.index();
            self.active[i] |= m.completed[i] + m.errors[i] > 0;
            if !self.active[i] {
                continue;
            }
            let _ = all.add(&m.hist[i]);
            ops.push(OpSecond {
                op: kind,
                completed: m.completed[i],
                errors: m.errors[i],
                p50_us: quantile_us(&m.hist[i], 0.5),
                p99_us: quantile_us(&m.hist[i], 0.99),
            });
        }
        let length_s = self.window.map_or(1.0, |w| {
            (w.as_secs_f64() - f64::from(second)).clamp(0.0, 1.0)
        });
        SecondStats {
            second,
            length_s,
            completed: m.completed.iter().sum(),
            errors: m.errors.iter().sum(),
            p50_us: quantile_us(&all, 0.5),
            p99_us: quantile_us(&all, 0.99),
            ops,
        }
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
        let h0 = kvbench_stats::hist::decode_histogram(&pts[0].histogram).expect("second 0");
        assert_eq!(h0.len(), 200);
        assert_eq!(h0.value_at_quantile(0.99) as f64 / 1000.0, pts[0].p99_us);
        assert!(pts[1].histogram.is_empty());
        let h2 = kvbench_stats::hist::decode_histogram(&pts[2].histogram).expect("second 2");
        assert_eq!((h2.len(), h2.sigfig()), (1, SIGFIG));
    }

    /// Each latency is recorded once, at three digits; the stored seconds
    /// (reduced to two) and the window's histogram (the seconds added) must
    /// be what recording every latency into a two-digit histogram per
    /// second and a three-digit one for the window gives, bucket for bucket,
    /// over the whole range, the clamp's ceiling included.
    #[test]
    fn seconds_and_the_window_equal_recording_each_latency_twice() {
        let t0 = Instant::now();
        let mut r = SeriesRecorder::default();
        r.set_origin(t0);
        let mut window = run_histogram();
        let mut by_second: Vec<Histogram<u64>> = (0..4).map(|_| interval_histogram()).collect();
        // A deterministic spread of latencies: 1 ns to 60 s, dense at the
        // bucket edges where a reduction would go wrong first.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut values: Vec<u64> = (0..40)
            .flat_map(|shift| {
                let p = 1u64 << shift;
                [p.saturating_sub(1), p, p + 1]
            })
            .collect();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(1 + (x >> (x % 40)) % MAX_LATENCY_NS);
        }
        values.push(MAX_LATENCY_NS);
        // What recording twice gives: every latency into the window's
        // histogram and into its second's (the n-th value goes to second n % 4).
        for (n, &v) in values.iter().enumerate() {
            let v = v.clamp(1, MAX_LATENCY_NS);
            let _ = (window.record(v), by_second[n % 4].record(v));
        }
        // The recorder gets the seconds in order: all of second 0, then 1, ...
        for second in 0..4u64 {
            let at = t0 + Duration::from_millis(second * 1_000 + 500);
            for (n, &v) in values.iter().enumerate() {
                if (n % 4) as u64 == second {
                    r.completed(OpKind::Read, v.clamp(1, MAX_LATENCY_NS), at);
                }
            }
            if second == 2 {
                // Before the last second is finished, the window so far
                // includes the current second.
                let mut so_far = run_histogram();
                for h in &by_second[..3] {
                    for v in h.iter_recorded() {
                        let _ = so_far.record_n(v.value_iterated_to(), v.count_at_value());
                    }
                }
                assert_eq!(r.latencies(OpKind::Read).len(), so_far.len());
            }
        }
        assert_eq!(*r.latencies(OpKind::Read), window);
        let pts = SeriesRecorder::merge(&mut [r.clone()]);
        assert_eq!(pts.len(), 4);
        for (p, want) in pts.iter().zip(&by_second) {
            let got = kvbench_stats::hist::decode_histogram(&p.histogram).expect("a second");
            assert_eq!(&got, want, "second {}", p.second);
            assert_eq!(p.histogram, encode_histogram(want), "second {}", p.second);
        }
        // Merged into another worker's: the window adds, finished or not.
        let mut other = SeriesRecorder::default();
        other.set_origin(t0);
        other.completed(OpKind::Read, 777, t0);
        let mut sum = window.clone();
        let _ = sum.record(777);
        other.add_latencies_of(&r);
        assert_eq!(*other.latencies(OpKind::Read), sum);
        assert!(other.latencies(OpKind::Update).is_empty());
    }

    #[test]
    fn stored_series_of_processes_merge_as_the_threads_would() {
        let t0 = Instant::now();
        let make = |offset: u64| {
            let mut r = SeriesRecorder::default();
            r.set_origin(t0);
            for i in 0..50 {
                r.completed(
                    OpKind::Read,
                    1_000 * (i + offset),
                    t0 + Duration::from_millis(10),
                );
                r.completed(OpKind::Update, 700 + i, t0 + Duration::from_millis(1_500));
            }
            r.error(OpKind::Update, 2, t0 + Duration::from_millis(2_500));
            r
        };
        let (a, b) = (make(1), make(400));
        let threads = SeriesRecorder::merge(&mut [a.clone(), b.clone()]);
        let parts = [
            SeriesRecorder::merge(&mut [a]),
            SeriesRecorder::merge(&mut [b]),
        ];
        let refs: Vec<&[SeriesPoint]> = parts.iter().map(Vec::as_slice).collect();
        assert_eq!(SeriesRecorder::merge_points(&refs).expect("merge"), threads);
    }

    #[test]
    fn the_live_view_releases_a_second_once_every_worker_is_past_it() {
        let t0 = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        let mut live = LiveSeconds::new(rx, 2, t0, None);
        let mut w: Vec<SeriesRecorder> = (0..2)
            .map(|i| {
                let mut r = SeriesRecorder::default();
                r.set_origin(t0);
                r.set_live(LiveSink::new(i, tx.clone()));
                r
            })
            .collect();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        for i in 0..100 {
            w[0].completed(OpKind::Read, 1_000 + i, ms(100));
            w[1].completed(OpKind::Update, 50_000, ms(200));
        }
        w[1].error(OpKind::Update, 2, ms(300));
        // Worker 0 is past second 0, worker 1 is not yet.
        w[0].completed(OpKind::Read, 1_000, ms(1_100));
        assert!(live.ready(ms(1_200)).is_empty());
        // Worker 1's ticker rolls it over although it got no reply.
        w[1].tick(ms(1_050));
        let got = live.ready(ms(1_200));
        assert_eq!(got.len(), 1, "{got:?}");
        let s0 = &got[0];
        assert_eq!((s0.second, s0.completed, s0.errors), (0, 200, 2));
        assert_eq!(s0.length_s, 1.0);
        assert_eq!(s0.ops.len(), 2);
        assert_eq!((s0.ops[0].op, s0.ops[0].completed), (OpKind::Read, 100));
        assert_eq!(s0.ops[1].errors, 2);
        assert!((s0.ops[1].p50_us - 50.0).abs() < 0.5, "{s0:?}");
        // Over both kinds: half the replies took about 1 us, half 50 us.
        assert!(s0.p50_us < 2.0 && s0.p99_us == s0.ops[1].p99_us, "{s0:?}");
        // A worker that never gets past second 1 holds it back for 2 s only.
        assert!(live.ready(ms(3_900)).is_empty());
        let late = live.ready(ms(4_000));
        assert_eq!(late.len(), 1);
        assert_eq!((late[0].second, late[0].completed), (1, 0));
        // The stopped workers' last seconds come out at the end; the last
        // one is as long as the window's remainder. The stored series says
        // the same as the live view.
        w[0].completed(OpKind::Read, 3_000, ms(2_300));
        for r in w.iter_mut() {
            r.finish();
        }
        let rest = live.rest(Duration::from_millis(2_500));
        assert_eq!(rest.len(), 1, "{rest:?}");
        assert_eq!((rest[0].second, rest[0].completed), (2, 1));
        assert_eq!(rest[0].length_s, 0.5);
        assert_eq!(rest[0].throughput(), 2.0);
        let stored = SeriesRecorder::merge(&mut w);
        let first: u64 = stored
            .iter()
            .filter(|p| p.second == 0)
            .map(|p| p.completed)
            .sum();
        assert_eq!(first, s0.completed);
        let read0 = stored
            .iter()
            .find(|p| p.second == 0 && p.op == OpKind::Read);
        assert_eq!(read0.map(|p| p.p99_us), Some(s0.ops[0].p99_us));
    }
}
