//! Successful replies of one read, counted in runs and recorded together.
//!
//! Every reply parsed from one read arrived at the same instant, and the
//! requests of one write went out at the same instant, so a pipelined
//! connection's replies come in runs of one kind and one latency (in case
//! (c) of `bench/efficiency`, 16 replies a read, half reads and half
//! updates). Recording a run once, with its count, instead of each reply
//! saves hdrhistogram's and the per-second series' work per reply; what
//! is recorded is exactly what recording each reply records (the test
//! below holds every histogram and counter to that). The node's reply
//! counter is added to once per read the same way.

use crate::recorder::Recorder;
use kvbench_model::OpKind;
use std::time::Instant;

/// The runs of one read: open between [`Runs::begin`] and [`Runs::finish`].
#[derive(Debug, Default)]
pub(crate) struct Runs {
    /// While open: the instant every counted reply arrived.
    at: Option<Instant>,
    /// Per kind: the latency and count of the run being counted.
    runs: [(u64, u64); OpKind::COUNT],
    /// The kinds with a run (bit [`OpKind::index`]).
    open: u16,
    /// The node (lane) the read came from, and its measured successful
    /// replies so far: one count for the node's reply counter per read.
    node: usize,
    replies: u64,
}

const _: () = assert!(OpKind::COUNT <= u16::BITS as usize);

impl Runs {
    /// Opens the runs of a read from `node` whose replies arrived at `at`.
    #[inline]
    pub(crate) fn begin(&mut self, at: Instant, node: usize) {
        debug_assert!(self.at.is_none() && self.open == 0 && self.replies == 0);
        self.at = Some(at);
        self.node = node;
    }

    /// Counts a measured successful reply from `node` (recorded at once
    /// when no runs are open, or they are another node's).
    #[inline]
    pub(crate) fn count_node_reply(&mut self, node: usize, rec: &mut Recorder) {
        if self.at.is_some() && node == self.node {
            self.replies += 1;
        } else {
            rec.count_node_reply(node, false);
        }
    }

    /// Counts one measured success of `kind` that took `latency_ns` and
    /// arrived at `arrived`. False when no runs are open for that instant:
    /// the caller records it itself.
    #[inline]
    pub(crate) fn add(
        &mut self,
        kind: OpKind,
        latency_ns: u64,
        arrived: Instant,
        rec: &mut Recorder,
    ) -> bool {
        let at = match self.at {
            Some(at) if at == arrived => at,
            _ => return false,
        };
        let i = kind.index();
        let bit = 1u16 << i;
        let run = &mut self.runs[i];
        if self.open & bit != 0 {
            if run.0 == latency_ns {
                run.1 += 1;
                return true;
            }
            rec.record_ok_n(kind, run.0, run.1, at);
        }
        *run = (latency_ns, 1);
        self.open |= bit;
        true
    }

    /// Records every open run and closes them.
    #[inline]
    pub(crate) fn finish(&mut self, rec: &mut Recorder) {
        let Some(at) = self.at.take() else {
            return;
        };
        if self.replies > 0 {
            rec.count_node_replies(self.node, std::mem::take(&mut self.replies));
        }
        let mut open = std::mem::take(&mut self.open);
        while open != 0 {
            let i = open.trailing_zeros() as usize;
            open &= open - 1;
            let (latency_ns, n) = self.runs[i];
            rec.record_ok_n(OpKind::ALL[i], latency_ns, n, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Outcome;
    use crate::series::SeriesRecorder;
    use kvbench_model::{PhaseResult, SeriesPoint};
    use std::time::Duration;

    type Report = (
        PhaseResult,
        Vec<SeriesPoint>,
        Vec<[u64; 3]>,
        u64,
        Option<Instant>,
    );

    /// Everything a recorder reports: the phase (counts, histograms), the
    /// seconds, the outage steps, the clamped count and the last reply.
    fn report(mut r: Recorder) -> Report {
        let phase = r.to_phase_result(100.0);
        let points = SeriesRecorder::merge(std::slice::from_mut(&mut r.series));
        (
            phase,
            points,
            r.timeline.steps().to_vec(),
            r.clamped,
            r.last_reply,
        )
    }

    /// Feeds the same replies to a recorder one by one and through runs
    /// (several reads, kinds interleaved, latencies repeating and not,
    /// one past the histograms' top, reads across a second's end) and
    /// compares everything the recorder reports.
    #[test]
    fn runs_record_exactly_what_each_reply_would() {
        let origin = Instant::now();
        let mut each = Recorder::default();
        let mut runs_rec = Recorder::default();
        for r in [&mut each, &mut runs_rec] {
            r.series.set_origin(origin);
            r.timeline.set_origin(origin);
        }
        let mut runs = Runs::default();
        let kinds = [
            OpKind::Read,
            OpKind::Update,
            OpKind::Insert,
            OpKind::Command8,
        ];
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for read in 0..400u64 {
            // Four reads a second over 100 s: seconds roll over between reads.
            let at = origin + Duration::from_millis(250 * read + 1);
            let node = (next() % 3) as usize;
            runs.begin(at, node);
            for _ in 0..(next() % 40) {
                let kind = kinds[(next() % 4) as usize];
                let latency = match next() % 5 {
                    0 => u64::MAX / 2,
                    1 | 2 => 40_000,
                    _ => 1 + next() % 1_000_000,
                };
                each.record(kind, Outcome::Ok, latency, at);
                assert!(runs.add(kind, latency, at, &mut runs_rec));
                each.count_node_reply(node, false);
                runs.count_node_reply(node, &mut runs_rec);
            }
            // Another instant is not counted in these runs, nor another
            // node's reply.
            assert!(!runs.add(OpKind::Read, 5, at + Duration::from_nanos(1), &mut runs_rec));
            each.count_node_reply(3, false);
            runs.count_node_reply(3, &mut runs_rec);
            runs.finish(&mut runs_rec);
        }
        // Closed: nothing is counted.
        assert!(!runs.add(OpKind::Read, 5, origin, &mut runs_rec));
        each.count_node_reply(1, false);
        runs.count_node_reply(1, &mut runs_rec);
        assert_eq!(each.node_counts, runs_rec.node_counts);
        assert!(each.node_counts.iter().all(|c| c[0] > 300));
        let (want, got) = (report(each), report(runs_rec));
        assert!(want.0.ops.iter().map(|o| o.completed).sum::<u64>() > 3000);
        assert!(want.1.len() > 100 && want.3 > 0);
        assert_eq!(want, got);
    }
}
