//! Per-worker measurement state: one latency histogram and outcome counters
//! per operation kind, merged across workers when the phase ends. The
//! completed operations' latencies are kept by the per-second series, which
//! adds each finished second into the window's histogram
//! ([`SeriesRecorder::latencies`]), so each is recorded once.
//!
//! Latencies are recorded in nanoseconds with a trackable range of 1 ns to
//! 60 s at 3 significant digits: values below 2,048 ns are exact and every
//! larger value is within 0.1%. A value above 60 s is clamped to 60 s and
//! counted in [`Recorder::clamped`] so a report can say so rather than
//! silently lose it.
//!
//! A worker thread owns its recorder; connection tasks on that thread share
//! it through a `RefCell`, so recording takes no lock and no atomic.

use crate::outage::Timeline;
use crate::outcome::{run_histogram, Outcome};
pub use crate::outcome::{ErrorKind, MAX_LATENCY_NS};
use crate::retry::MAX_FAILED_KEYS;
use crate::series::SeriesRecorder;
use hdrhistogram::Histogram;
use kvbench_model::{ErrorReplies, OpKind, OpResult, PhaseResult};
use std::borrow::Cow;
use std::time::Instant;

// The stored form of histograms is shared with the report, which reads
// them back without the engine.
pub use kvbench_stats::hist::{decode_histogram, encode_histogram, merge_encoded, summarize};

/// Error messages kept per phase for the record; the counts keep the rest.
const MAX_ERROR_SAMPLES: usize = 5;
/// Distinct first words of error replies kept per phase; later words are
/// counted under the last entry, `other`.
const MAX_ERROR_WORDS: usize = 16;
/// The longest error reply text kept.
const MAX_ERROR_TEXT: usize = 200;

/// Counters and histograms for one worker (or, after merging, one phase).
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Open loop only: actual send → reply, and intended → actual send.
    open: Option<OpenLoopHistograms>,
    /// Open loop only: whether the schedule lag grew over the window.
    pub lag_trend: LagTrend,
    completed: [u64; OpKind::COUNT],
    misses: [u64; OpKind::COUNT],
    /// The misses' latency, per kind; allocated at a kind's first miss (a
    /// run without misses pays nothing for it).
    miss_hist: Vec<Option<Histogram<u64>>>,
    /// Cache-aside: the application's latency per kind (a hit's, or a
    /// miss's with the backend's penalty); allocated when first used.
    app_hist: Vec<Option<Histogram<u64>>>,
    /// Cache-aside: sets of records reads missed, answered and failed.
    pub fills: [u64; 2],
    /// Cache-aside: how late each fill was sent after its penalty ended.
    fill_lateness: Option<Histogram<u64>>,
    errors: [u64; OpKind::COUNT],
    /// Values above [`MAX_LATENCY_NS`] that were clamped.
    pub clamped: u64,
    /// Connections that ended early on an error (warm-up included): the load
    /// was lighter than asked from then on, so the run cannot be clean.
    pub failed_connections: u64,
    /// Connections lost and not given up: reopened, or being reopened
    /// when the phase ended (see `reopen.rs`).
    pub lost_connections: u64,
    /// Lost connections opened again, in total and per node (lane index).
    pub reconnects: u64,
    /// Per node (lane index): lost connections opened again.
    pub node_reconnects: Vec<u64>,
    /// Per 100 ms of the window: what the outage figures come from.
    pub timeline: Timeline,
    /// `--failed-keys`: the keys of measured requests that finally failed
    /// (`None`: not kept), at most [`MAX_FAILED_KEYS`].
    pub failed_keys: Option<Vec<Vec<u8>>>,
    /// Failed keys beyond that bound, counted only.
    pub failed_keys_dropped: u64,
    /// Connections the clients opened (one per client and node; 0 when a
    /// client library keeps its own pool), so a failure can say how many of
    /// them failed.
    pub connections: u64,
    /// Per node (lane index): measured replies and measured errors (error
    /// replies, and requests failed or not sent because the node's
    /// connection had failed).
    pub node_counts: Vec<[u64; 2]>,
    /// Measured requests answered `MOVED` and sent again to the slot's
    /// new node (never counted as completed).
    pub moved: u64,
    /// Measured requests answered `ASK` and sent again, after `ASKING`, to
    /// the node importing the slot.
    pub asked: u64,
    /// Measured requests sent again after waiting out a `CLUSTERDOWN` or
    /// `TRYAGAIN` reply or a lost connection (never counted as completed).
    pub retried: u64,
    /// The reply time of the last measured operation (ops-bound windows end there).
    pub last_reply: Option<Instant>,
    /// Waits longer than this without a reply on a connection with
    /// requests outstanding are stalls (0: none are counted).
    pub stall_threshold_ns: u64,
    /// Measured waits above the threshold.
    pub stalls: u64,
    /// The longest of them.
    pub longest_stall_ns: u64,
    error_samples: Vec<String>,
    error_kinds: [u64; ErrorKind::COUNT],
    error_replies: Vec<ErrorReplies>,
    /// The per-second view of the window.
    pub series: SeriesRecorder,
}

#[derive(Debug, Clone)]
struct OpenLoopHistograms {
    service: Vec<Histogram<u64>>,
    lag: Vec<Histogram<u64>>,
}

/// Mean schedule lag of requests intended in the window's first and last
/// tenth: a lag that keeps growing means the client or server cannot keep
/// up with the schedule, even when the final rate looks close.
#[derive(Debug, Clone, Copy, Default)]
pub struct LagTrend {
    first_until: Option<Instant>,
    last_from: Option<Instant>,
    first: (f64, u64),
    last: (f64, u64),
}

impl LagTrend {
    /// Watches requests intended before `first_until` and after `last_from`.
    pub fn new(first_until: Instant, last_from: Instant) -> LagTrend {
        LagTrend {
            first_until: Some(first_until),
            last_from: Some(last_from),
            ..LagTrend::default()
        }
    }

    fn add(&mut self, intended: Instant, lag_ns: u64) {
        if self.first_until.is_some_and(|t| intended < t) {
            self.first.0 += lag_ns as f64;
            self.first.1 += 1;
        } else if self.last_from.is_some_and(|t| intended >= t) {
            self.last.0 += lag_ns as f64;
            self.last.1 += 1;
        }
    }

    fn merge(&mut self, o: &LagTrend) {
        self.first_until = self.first_until.or(o.first_until);
        self.last_from = self.last_from.or(o.last_from);
        self.first.0 += o.first.0;
        self.first.1 += o.first.1;
        self.last.0 += o.last.0;
        self.last.1 += o.last.1;
    }

    /// Mean lag in microseconds of the first and the last tenth.
    pub fn means_us(&self) -> Option<(f64, f64)> {
        if self.first.1 == 0 || self.last.1 == 0 {
            return None;
        }
        Some((
            self.first.0 / self.first.1 as f64 / 1000.0,
            self.last.0 / self.last.1 as f64 / 1000.0,
        ))
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            open: None,
            lag_trend: LagTrend::default(),
            completed: [0; OpKind::COUNT],
            misses: [0; OpKind::COUNT],
            miss_hist: vec![None; OpKind::COUNT],
            app_hist: vec![None; OpKind::COUNT],
            fills: [0; 2],
            fill_lateness: None,
            errors: [0; OpKind::COUNT],
            clamped: 0,
            failed_connections: 0,
            lost_connections: 0,
            reconnects: 0,
            node_reconnects: Vec::new(),
            timeline: Timeline::default(),
            failed_keys: None,
            failed_keys_dropped: 0,
            connections: 0,
            node_counts: Vec::new(),
            moved: 0,
            asked: 0,
            retried: 0,
            last_reply: None,
            stall_threshold_ns: 0,
            stalls: 0,
            longest_stall_ns: 0,
            error_samples: Vec::new(),
            error_kinds: [0; ErrorKind::COUNT],
            error_replies: Vec::new(),
            series: SeriesRecorder::default(),
        }
    }
}

impl Recorder {
    /// A recorder whose operations follow a schedule: it also keeps service
    /// time and schedule lag.
    pub fn open_loop(trend: LagTrend) -> Recorder {
        let hists = || (0..OpKind::COUNT).map(|_| run_histogram()).collect();
        Recorder {
            open: Some(OpenLoopHistograms {
                service: hists(),
                lag: hists(),
            }),
            lag_trend: trend,
            ..Recorder::default()
        }
    }

    fn clamp(&mut self, ns: u64) -> u64 {
        self.clamp_n(ns, 1)
    }

    /// [`Recorder::clamp`] for `n` latencies of `ns`.
    fn clamp_n(&mut self, ns: u64, n: u64) -> u64 {
        if ns > MAX_LATENCY_NS {
            self.clamped += n;
            MAX_LATENCY_NS
        } else {
            ns.max(1)
        }
    }

    /// Records one measured reply. Only [`Outcome::Ok`] enters the histogram.
    #[inline]
    pub fn record(&mut self, kind: OpKind, outcome: Outcome, latency_ns: u64, replied: Instant) {
        let i = kind.index();
        match outcome {
            Outcome::Ok => return self.record_ok_n(kind, latency_ns, 1, replied),
            Outcome::Miss => {
                self.misses[i] += 1;
                let v = self.clamp(latency_ns);
                let _ = self.miss_hist[i]
                    .get_or_insert_with(run_histogram)
                    .record(v);
                self.series.missed(kind, replied);
            }
            Outcome::Error => {
                self.errors[i] += 1;
                self.error_kinds[ErrorKind::ErrorReply as usize] += 1;
                self.series.error(kind, 1, replied);
            }
        }
        self.note_reply(replied);
    }

    /// `n` measured successes of `kind`, each after `latency_ns`, all
    /// replied at `replied`: exactly what `n` calls of
    /// [`Recorder::record`] with [`Outcome::Ok`] record, at the cost of
    /// one (see `client::runs`).
    #[inline]
    pub fn record_ok_n(&mut self, kind: OpKind, latency_ns: u64, n: u64, replied: Instant) {
        self.completed[kind.index()] += n;
        let v = self.clamp_n(latency_ns, n);
        // The series keeps the latency, for its second and the window.
        let since = self.series.completed_n(kind, v, n, replied);
        self.timeline.completed_n(v, n, since);
        self.note_reply(replied);
    }

    #[inline]
    fn note_reply(&mut self, replied: Instant) {
        if self.last_reply.is_none_or(|t| replied > t) {
            self.last_reply = Some(replied);
        }
    }

    /// Cache-aside: the application's latency of one measured operation.
    #[inline]
    pub fn record_app(&mut self, kind: OpKind, latency_ns: u64) {
        let v = self.clamp(latency_ns);
        let _ = self.app_hist[kind.index()]
            .get_or_insert_with(run_histogram)
            .record(v);
    }

    /// Cache-aside: how long after its penalty ended a fill was sent.
    #[inline]
    pub fn record_fill_lateness(&mut self, late_ns: u64) {
        let v = self.clamp(late_ns);
        let _ = self
            .fill_lateness
            .get_or_insert_with(run_histogram)
            .record(v);
    }

    /// Cache-aside: a measured fill's reply (its latency, the store's
    /// write time, is not kept).
    #[inline]
    pub fn record_fill(&mut self, outcome: Outcome) {
        self.fills[usize::from(outcome == Outcome::Error)] += 1;
    }

    /// Records one measured reply of a scheduled (open-loop) request: the
    /// response time goes into the main histogram, service time and lag
    /// into their own.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn record_scheduled(
        &mut self,
        kind: OpKind,
        outcome: Outcome,
        intended: Instant,
        response_ns: u64,
        service_ns: u64,
        lag_ns: u64,
        replied: Instant,
    ) {
        self.record(kind, outcome, response_ns, replied);
        self.lag_trend.add(intended, lag_ns);
        if outcome == Outcome::Ok {
            let (s, l) = (self.clamp(service_ns), lag_ns.clamp(1, MAX_LATENCY_NS));
            if let Some(open) = self.open.as_mut() {
                let _ = open.service[kind.index()].record(s);
                let _ = open.lag[kind.index()].record(l);
            }
        }
    }

    /// Records a completed read whose values were not the ones written
    /// (`dataintegrity`): an error of kind `integrity`, never timed.
    pub fn record_integrity_failure(&mut self, kind: OpKind, message: &str, at: Instant) {
        self.errors[kind.index()] += 1;
        self.error_kinds[ErrorKind::Integrity as usize] += 1;
        self.series.error(kind, 1, at);
        self.note_error(message);
        self.last_reply = Some(self.last_reply.map_or(at, |t| t.max(at)));
    }

    /// Counts `n` requests of `kind` that failed without a reply, keeping the
    /// first few messages.
    pub fn record_failure(
        &mut self,
        kind: OpKind,
        n: u64,
        error: ErrorKind,
        message: &str,
        at: Instant,
    ) {
        self.errors[kind.index()] += n;
        self.error_kinds[error as usize] += n;
        self.series.error(kind, n, at);
        if matches!(
            error,
            ErrorKind::Timeout | ErrorKind::Closed | ErrorKind::Io
        ) {
            self.timeline.failed(n, at);
        }
        self.note_error(message);
    }

    /// True when the keys of failed requests are kept.
    #[inline]
    pub fn keeps_failed_keys(&self) -> bool {
        self.failed_keys.is_some()
    }

    /// Keeps the key of a measured request that finally failed.
    pub fn note_failed_key(&mut self, key: &[u8]) {
        if let Some(keys) = self.failed_keys.as_mut() {
            if keys.len() < MAX_FAILED_KEYS {
                keys.push(key.to_vec());
            } else {
                self.failed_keys_dropped += 1;
            }
        }
    }

    /// Counts a lost connection to `node` that was opened again.
    pub fn count_reconnect(&mut self, node: usize) {
        self.reconnects += 1;
        if node >= self.node_reconnects.len() {
            self.node_reconnects.resize(node + 1, 0);
        }
        self.node_reconnects[node] += 1;
    }

    fn node(&mut self, node: usize) -> &mut [u64; 2] {
        if node >= self.node_counts.len() {
            self.node_counts.resize(node + 1, [0; 2]);
        }
        &mut self.node_counts[node]
    }

    /// Counts a measured reply from `node` (`error`: an error reply).
    #[inline]
    pub fn count_node_reply(&mut self, node: usize, error: bool) {
        let c = self.node(node);
        c[0] += 1;
        c[1] += u64::from(error);
    }

    /// Counts `n` measured successful replies from `node`.
    #[inline]
    pub fn count_node_replies(&mut self, node: usize, n: u64) {
        self.node(node)[0] += n;
    }

    /// Counts a measured request for `node` that failed without a reply.
    pub fn count_node_error(&mut self, node: usize) {
        self.node(node)[1] += 1;
    }

    /// Counts one redirected request (`ask`: an `ASK`, else a `MOVED`).
    pub fn count_redirect(&mut self, ask: bool) {
        if ask {
            self.asked += 1;
        } else {
            self.moved += 1;
        }
    }

    /// Counts one request sent again after waiting (see `retried`).
    pub fn count_retry(&mut self) {
        self.retried += 1;
    }

    /// Keeps an error message for the record, deduplicated and bounded.
    pub fn note_error(&mut self, message: &str) {
        if self.error_samples.len() < MAX_ERROR_SAMPLES
            && !self.error_samples.iter().any(|m| m == message)
        {
            self.error_samples.push(message.to_string());
        }
    }

    /// Counts an error reply by its first word (when `measured`), keeping
    /// the first text of each word, also from the warm-up, where a refusal
    /// such as Redis's `max number of clients reached` usually comes
    /// (cold path: taken only on errors).
    pub fn note_error_reply(&mut self, text: &[u8], measured: bool) {
        let text = &text[..text.len().min(MAX_ERROR_TEXT)];
        let word_end = text
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(text.len());
        let word = String::from_utf8_lossy(&text[..word_end]);
        self.add_error_replies(&word, u64::from(measured), || {
            String::from_utf8_lossy(text).into_owned()
        });
    }

    fn add_error_replies(&mut self, word: &str, n: u64, first: impl FnOnce() -> String) {
        if let Some(e) = self.error_replies.iter_mut().find(|e| e.word == word) {
            e.count += n;
            return;
        }
        if self.error_replies.len() + 1 < MAX_ERROR_WORDS {
            self.error_replies.push(ErrorReplies {
                word: word.to_string(),
                count: n,
                first: first(),
            });
            return;
        }
        match self.error_replies.iter_mut().find(|e| e.word == "other") {
            Some(e) => e.count += n,
            None => self.error_replies.push(ErrorReplies {
                word: "other".into(),
                count: n,
                first: first(),
            }),
        }
    }

    /// Folds another worker's measurements into this one (the series are
    /// merged separately, by [`SeriesRecorder::merge`]).
    pub fn merge(&mut self, other: &Recorder) {
        if let Some(theirs) = &other.open {
            let mine = self.open.get_or_insert_with(|| {
                let hists = || (0..OpKind::COUNT).map(|_| run_histogram()).collect();
                OpenLoopHistograms {
                    service: hists(),
                    lag: hists(),
                }
            });
            for i in 0..OpKind::COUNT {
                let _ = mine.service[i].add(&theirs.service[i]);
                let _ = mine.lag[i].add(&theirs.lag[i]);
            }
        }
        self.lag_trend.merge(&other.lag_trend);
        for (k, n) in self.error_kinds.iter_mut().zip(other.error_kinds) {
            *k += n;
        }
        self.series.add_latencies_of(&other.series);
        for i in 0..OpKind::COUNT {
            for (mine, theirs) in [
                (&mut self.miss_hist[i], &other.miss_hist[i]),
                (&mut self.app_hist[i], &other.app_hist[i]),
            ] {
                if let Some(theirs) = theirs {
                    let _ = mine.get_or_insert_with(run_histogram).add(theirs);
                }
            }
            self.completed[i] += other.completed[i];
            self.misses[i] += other.misses[i];
            self.errors[i] += other.errors[i];
        }
        self.clamped += other.clamped;
        self.failed_connections += other.failed_connections;
        self.lost_connections += other.lost_connections;
        self.reconnects += other.reconnects;
        if self.node_reconnects.len() < other.node_reconnects.len() {
            self.node_reconnects.resize(other.node_reconnects.len(), 0);
        }
        for (mine, theirs) in self.node_reconnects.iter_mut().zip(&other.node_reconnects) {
            *mine += theirs;
        }
        self.timeline.merge(&other.timeline);
        if let Some(theirs) = &other.failed_keys {
            self.failed_keys.get_or_insert_with(Vec::new);
            for k in theirs {
                self.note_failed_key(k);
            }
        }
        self.failed_keys_dropped += other.failed_keys_dropped;
        self.connections += other.connections;
        if self.node_counts.len() < other.node_counts.len() {
            self.node_counts.resize(other.node_counts.len(), [0; 2]);
        }
        for (mine, theirs) in self.node_counts.iter_mut().zip(&other.node_counts) {
            mine[0] += theirs[0];
            mine[1] += theirs[1];
        }
        self.moved += other.moved;
        self.fills[0] += other.fills[0];
        self.fills[1] += other.fills[1];
        if let Some(theirs) = &other.fill_lateness {
            let _ = self
                .fill_lateness
                .get_or_insert_with(run_histogram)
                .add(theirs);
        }
        self.asked += other.asked;
        self.retried += other.retried;
        self.stalls += other.stalls;
        self.longest_stall_ns = self.longest_stall_ns.max(other.longest_stall_ns);
        self.last_reply = match (self.last_reply, other.last_reply) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        for m in &other.error_samples {
            self.note_error(m);
        }
        for e in &other.error_replies {
            self.add_error_replies(&e.word, e.count, || e.first.clone());
        }
    }

    /// Adds what another process measured, from its stored form: the
    /// histograms decoded and added (exact: the same bounds and precision),
    /// the counts summed. Scale-out merges its workers with this, so one
    /// process's numbers and several processes' come from the same
    /// [`to_phase_result`](Self::to_phase_result).
    ///
    /// # Errors
    /// A message naming the operation whose histogram cannot be decoded.
    pub fn absorb(&mut self, part: &PhaseResult) -> Result<(), String> {
        let add = |into: &mut Histogram<u64>, text: &str, what: &str| -> Result<(), String> {
            if text.is_empty() {
                return Ok(());
            }
            let h = decode_histogram(text).map_err(|e| format!("{what}: {e}"))?;
            into.add(&h)
                .map_err(|e| format!("{what}: cannot add histograms: {e:?}"))
        };
        for op in &part.ops {
            let i = op.op.index();
            let name = op.op.as_str();
            if !op.histogram.is_empty() {
                let h = decode_histogram(&op.histogram).map_err(|e| format!("{name}: {e}"))?;
                self.series
                    .add_latencies(op.op, &h)
                    .map_err(|e| format!("{name}: cannot add histograms: {e:?}"))?;
            }
            if let Some(miss) = &op.miss_histogram {
                add(
                    self.miss_hist[i].get_or_insert_with(run_histogram),
                    miss,
                    name,
                )?;
            }
            if let Some(app) = &op.app_histogram {
                add(
                    self.app_hist[i].get_or_insert_with(run_histogram),
                    app,
                    name,
                )?;
            }
            if let (Some(service), Some(lag)) = (&op.service_histogram, &op.lag_histogram) {
                let open = self.open.get_or_insert_with(|| {
                    let hists = || (0..OpKind::COUNT).map(|_| run_histogram()).collect();
                    OpenLoopHistograms {
                        service: hists(),
                        lag: hists(),
                    }
                });
                add(&mut open.service[i], service, name)?;
                add(&mut open.lag[i], lag, name)?;
            }
            self.completed[i] += op.completed;
            self.misses[i] += op.misses;
            self.errors[i] += op.errors;
        }
        for (name, n) in &part.errors_by_kind {
            if let Some(k) = ErrorKind::ALL.iter().find(|k| k.as_str() == name) {
                self.error_kinds[*k as usize] += n;
            }
        }
        self.moved += part.redirects_moved;
        self.fills[0] += part.fills;
        self.fills[1] += part.fill_errors;
        self.asked += part.redirects_ask;
        self.retried += part.retries;
        self.reconnects += part.reconnects;
        for m in &part.error_samples {
            self.note_error(m);
        }
        for e in &part.error_replies {
            self.add_error_replies(&e.word, e.count, || e.first.clone());
        }
        Ok(())
    }

    /// A connection with a measured request outstanding waited `ns` for
    /// its next reply: a stall when that is above the threshold.
    #[inline]
    pub fn note_wait(&mut self, ns: u64) {
        if self.stall_threshold_ns > 0 && ns > self.stall_threshold_ns {
            self.stalls += 1;
            self.longest_stall_ns = self.longest_stall_ns.max(ns);
        }
    }

    /// Failed measured operations of every kind.
    pub fn errors_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Misses (a read of a key that is not there) of every kind.
    pub fn misses_total(&self) -> u64 {
        self.misses.iter().sum()
    }

    /// Completed operations of every kind.
    pub fn completed(&self) -> u64 {
        self.completed.iter().sum()
    }

    /// The latency histogram of one kind (nanoseconds): response time in open loop.
    pub fn histogram(&self, kind: OpKind) -> Cow<'_, Histogram<u64>> {
        self.series.latencies(kind)
    }

    /// Open loop: the service-time histogram of one kind.
    pub fn service_histogram(&self, kind: OpKind) -> Option<&Histogram<u64>> {
        self.open.as_ref().map(|o| &o.service[kind.index()])
    }

    /// Open loop: the schedule-lag histogram of one kind.
    pub fn lag_histogram(&self, kind: OpKind) -> Option<&Histogram<u64>> {
        self.open.as_ref().map(|o| &o.lag[kind.index()])
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
                let hist = self.series.latencies(k);
                OpResult {
                    op: k,
                    completed: self.completed[i],
                    misses: self.misses[i],
                    errors: self.errors[i],
                    throughput: per_s(self.completed[i]),
                    latency: summarize(&hist),
                    histogram: encode_histogram(&hist),
                    per_pipeline: None,
                    service: self.open.as_ref().map(|o| summarize(&o.service[i])),
                    service_histogram: self.open.as_ref().map(|o| encode_histogram(&o.service[i])),
                    lag: self.open.as_ref().map(|o| summarize(&o.lag[i])),
                    lag_histogram: self.open.as_ref().map(|o| encode_histogram(&o.lag[i])),
                    miss_latency: self.miss_hist[i].as_ref().map(summarize),
                    miss_histogram: self.miss_hist[i].as_ref().map(encode_histogram),
                    app_latency: self.app_hist[i].as_ref().map(summarize),
                    app_histogram: self.app_hist[i].as_ref().map(encode_histogram),
                    with: false,
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
            error_replies: self.error_replies.clone(),
            errors_by_kind: ErrorKind::ALL
                .iter()
                .filter(|k| self.error_kinds[**k as usize] > 0)
                .map(|k| (k.as_str().to_string(), self.error_kinds[*k as usize]))
                .collect(),
            series: Vec::new(),
            offered_rate: None,
            redirects_moved: self.moved,
            fills: self.fills[0],
            fill_errors: self.fills[1],
            fill_lateness: self.fill_lateness.as_ref().map(summarize),
            redirects_ask: self.asked,
            retries: self.retried,
            reconnects: self.reconnects,
            outage: self.timeline.outage(window_s),
            faults: Vec::new(),
            nodes: Vec::new(),
            cache: None,
            server_time: None,
            scale_out: None,
        }
    }
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
    fn absorbing_stored_parts_gives_what_merging_the_recorders_gives() {
        let t = Instant::now();
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        for i in 0..500u64 {
            a.record(OpKind::Read, Outcome::Ok, 1_000 + i * 37, t);
            b.record(OpKind::Read, Outcome::Ok, 900_000 + i * 1013, t);
            b.record(OpKind::Update, Outcome::Ok, 5_000 + i, t);
        }
        a.record(OpKind::Read, Outcome::Miss, 3_000, t);
        b.record(OpKind::Update, Outcome::Error, 3_000, t);
        b.note_error("ERR boom");
        let mut absorbed = Recorder::default();
        for part in [&a, &b] {
            absorbed.absorb(&part.to_phase_result(2.0)).expect("absorb");
        }
        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(absorbed.to_phase_result(2.0), merged.to_phase_result(2.0));
        assert!(Recorder::default()
            .absorb(&PhaseResult {
                ops: vec![OpResult {
                    histogram: "not a histogram".into(),
                    ..merged.to_phase_result(1.0).ops[0].clone()
                }],
                ..merged.to_phase_result(1.0)
            })
            .is_err());
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
        let text = encode_histogram(&r.histogram(OpKind::Update));
        let back = decode_histogram(&text).expect("decodes");
        assert_eq!(back, *r.histogram(OpKind::Update));
    }
}
