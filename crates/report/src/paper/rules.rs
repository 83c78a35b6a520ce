//! The rules that turn a measured quantity into a verdict on a paper's
//! claim, kept apart from how findings find their cells (check.rs) so each
//! rule is tested on constructed numbers.
//!
//! The rules are symmetric: a claim "agrees" only when the measured
//! quantity's whole 95% interval lies inside the paper's range (widened by
//! the paper file's stated tolerance), "differs" only when the whole
//! interval lies outside it, and is "inconclusive" otherwise, with how many
//! blocks or iterations would likely decide it. Noise therefore moves a
//! finding towards "inconclusive", never towards either answer. Every
//! quantity is a ratio, judged in logs, where 2x and 0.5x are equally far
//! from 1.

use kvbench_stats::paired::{self, Method, RatioInterval};

/// The spread between single runs of one cell minutes apart on the 2-vCPU
/// development VM: the largest per-cell CV `bench/stability/run` measured
/// with the scheduler's placement (17.8%, docs/experiments.md). A ratio of
/// single runs is given `ratio / (1 + S) .. ratio * (1 + S)` as its
/// interval, so single runs agree or differ only by more than that.
pub const PASS_TO_PASS_SPREAD: f64 = 0.18;

/// How close two memory figures of single runs are taken to be measurable:
/// a server's resident set after the same load and run differs from run to
/// run by allocator and page rounding, not by the machine's noise.
pub const MEMORY_RESOLUTION: f64 = 0.01;

/// The tolerance a paper's ranges are widened by when its file names none:
/// the report's equivalence margin (differences under 5% are "equal").
pub const DEFAULT_TOLERANCE: f64 = paired::DEFAULT_MARGIN;

/// What an estimate's interval rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Basis {
    /// A 95% interval over blocks or runs (paired t, BCa or Welch),
    /// kept whole for projecting the blocks that would decide it.
    Interval(RatioInterval),
    /// Single runs: the point widened by [`PASS_TO_PASS_SPREAD`].
    SingleRuns,
    /// Memory of single runs: the point widened by [`MEMORY_RESOLUTION`].
    Memory,
}

/// A measured ratio with its 95% interval, in logs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The point estimate (mean log ratio).
    pub point: f64,
    /// The interval's bounds.
    pub lo: f64,
    /// See `lo`.
    pub hi: f64,
    /// What the interval rests on.
    pub basis: Basis,
}

impl Estimate {
    /// From an interval over blocks or runs.
    pub fn interval(iv: RatioInterval) -> Estimate {
        Estimate {
            point: iv.mean_log,
            lo: iv.lo_log,
            hi: iv.hi_log,
            basis: Basis::Interval(iv),
        }
    }

    /// A ratio of single runs (`ratio` > 0).
    pub fn single_runs(ratio: f64) -> Estimate {
        Self::widened(ratio, PASS_TO_PASS_SPREAD, Basis::SingleRuns)
    }

    /// A ratio of single runs' memory.
    pub fn memory(ratio: f64) -> Estimate {
        Self::widened(ratio, MEMORY_RESOLUTION, Basis::Memory)
    }

    fn widened(ratio: f64, by: f64, basis: Basis) -> Estimate {
        let point = ratio.max(f64::MIN_POSITIVE).ln();
        let w = (1.0 + by).ln();
        Estimate {
            point,
            lo: point - w,
            hi: point + w,
            basis,
        }
    }

    /// The ratio's point estimate.
    pub fn ratio(&self) -> f64 {
        self.point.exp()
    }

    /// `1.23x [1.10, 1.38] (paired t over 5 blocks)`.
    pub fn text(&self) -> String {
        let how = match self.basis {
            Basis::Interval(iv) => {
                let unit = if iv.method == Method::Welch {
                    "runs"
                } else {
                    "blocks"
                };
                format!("{} over {} {unit}", iv.method.as_str(), iv.n)
            }
            Basis::SingleRuns => format!(
                "single runs, ±{:.0}% pass-to-pass spread",
                PASS_TO_PASS_SPREAD * 100.0
            ),
            Basis::Memory => format!(
                "single runs, ±{:.0}% memory resolution",
                MEMORY_RESOLUTION * 100.0
            ),
        };
        format!(
            "{}x [{}, {}] ({how})",
            ratio_text(self.ratio()),
            ratio_text(self.lo.exp()),
            ratio_text(self.hi.exp())
        )
    }
}

/// A ratio to three significant figures or two decimals, whichever is
/// shorter: `0.23`, `4.47`, `43.1`, `431`.
pub fn ratio_text(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A claimed range of a ratio, in logs, already widened by the tolerance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Lower bound (may be -inf).
    pub lo: f64,
    /// Upper bound (may be +inf).
    pub hi: f64,
}

impl Range {
    /// `[low, high]` as the paper gives it (a ratio; `high` may be
    /// infinite, `low` 0), widened by `tolerance` on both sides.
    pub fn claimed(low: f64, high: f64, tolerance: f64) -> Range {
        let w = (1.0 + tolerance.max(0.0)).ln();
        let ln = |x: f64| {
            if x <= 0.0 {
                f64::NEG_INFINITY
            } else {
                x.ln()
            }
        };
        Range {
            lo: ln(low) - w,
            hi: ln(high) + w,
        }
    }

    /// "A above B" (ratio above 1), not widened: a direction claim holds
    /// only where the whole interval is on its side.
    pub fn above() -> Range {
        Range {
            lo: 0.0,
            hi: f64::INFINITY,
        }
    }

    /// "A below B" (ratio below 1).
    pub fn below() -> Range {
        Range {
            lo: f64::NEG_INFINITY,
            hi: 0.0,
        }
    }

    /// `1.05-1.68x`, `at least 1.05x`, `at most 0.95x`.
    pub fn text(&self) -> String {
        match (self.lo.is_finite(), self.hi.is_finite()) {
            (true, true) => format!("{:.2}-{:.2}x", self.lo.exp(), self.hi.exp()),
            (true, false) => format!("above {:.2}x", self.lo.exp()),
            (false, true) => format!("below {:.2}x", self.hi.exp()),
            (false, false) => "any ratio".to_string(),
        }
    }
}

/// The three answers a measured quantity gives to a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The whole interval inside the range.
    Agrees,
    /// The whole interval outside the range.
    Differs,
    /// The interval crosses an edge of the range.
    Inconclusive,
}

/// An answer with what would likely settle an inconclusive one.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// Agrees, differs or inconclusive.
    pub answer: Answer,
    /// For inconclusive: `about 14 blocks would likely decide it`, or
    /// what to repeat; empty otherwise.
    pub to_decide: String,
}

/// Judges `est` against `range`.
pub fn judge(est: &Estimate, range: Range) -> Judgement {
    let answer = if est.lo >= range.lo && est.hi <= range.hi {
        Answer::Agrees
    } else if est.hi < range.lo || est.lo > range.hi {
        Answer::Differs
    } else {
        Answer::Inconclusive
    };
    let to_decide = if answer == Answer::Inconclusive {
        to_decide(est, range)
    } else {
        String::new()
    };
    Judgement { answer, to_decide }
}

/// What would likely decide an interval that crosses an edge of `range`.
fn to_decide(est: &Estimate, range: Range) -> String {
    // The edge nearest the point decides: the point's distance from it is
    // the room the interval must shrink into.
    let room = [range.lo, range.hi]
        .into_iter()
        .filter(|e| e.is_finite())
        .map(|e| (est.point - e).abs())
        .fold(f64::INFINITY, f64::min);
    match est.basis {
        Basis::SingleRuns => format!(
            "single runs decide only beyond the machine's {:.0}% pass-to-pass spread: repeat with --iterations 3 or more",
            PASS_TO_PASS_SPREAD * 100.0
        ),
        Basis::Memory => "the figures are within the memory resolution".to_string(),
        Basis::Interval(iv) => {
            let unit = if iv.method == Method::Welch {
                "iterations"
            } else {
                "blocks"
            };
            match paired::blocks_for_room(&iv, room) {
                Some(k) => format!("about {k} {unit} would likely decide it"),
                None => format!("the estimate sits on the range's edge: more {unit} would not likely decide it"),
            }
        }
    }
}

/// A "named system leads" claim: `vs` holds the named system's ratio over
/// each rival. It agrees when it is significantly above every rival, and
/// differs when it is significantly below any one of them, whoever else
/// ties for first; otherwise it is inconclusive. Returns the answer and,
/// when it differs, the rival it is behind; when inconclusive, the rival
/// not told apart.
pub fn leads<'a>(vs: &[(&'a str, Estimate)]) -> (Judgement, Option<&'a str>) {
    if let Some((name, _)) = vs.iter().find(|(_, e)| e.hi < 0.0) {
        return (
            Judgement {
                answer: Answer::Differs,
                to_decide: String::new(),
            },
            Some(name),
        );
    }
    match vs
        .iter()
        .filter(|(_, e)| e.lo <= 0.0)
        .min_by(|a, b| a.1.point.total_cmp(&b.1.point))
    {
        None => (
            Judgement {
                answer: Answer::Agrees,
                to_decide: String::new(),
            },
            None,
        ),
        Some((name, e)) => (judge(e, Range::above()), Some(name)),
    }
}

/// One point of a client sweep for [`peak`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPoint {
    /// Its client count.
    pub clients: u32,
    /// Mean throughput.
    pub mean: f64,
}

/// What the peak rule found.
#[derive(Debug, Clone, PartialEq)]
pub struct PeakJudgement {
    /// Agrees, differs or inconclusive.
    pub answer: Answer,
    /// Index of the highest mean in the sweep.
    pub best: usize,
    /// Why, in words.
    pub why: String,
}

/// "Throughput peaks at a client count in [lo, hi] and declines after":
/// agrees when the highest mean lies inside the sweep (not at either end,
/// where what comes after was not measured), inside the range, and
/// significantly above both neighbours; differs when a count outside the
/// range is significantly above every count inside it; otherwise
/// inconclusive. `sweep` is sorted by clients and holds at least one count
/// in the range; `cmp(i, j)` estimates sweep[i] over sweep[j].
pub fn peak(
    sweep: &[SweepPoint],
    (lo, hi): (f64, f64),
    cmp: impl Fn(usize, usize) -> Estimate,
) -> PeakJudgement {
    let in_range = |i: usize| (lo..=hi).contains(&f64::from(sweep[i].clients));
    let best = (0..sweep.len())
        .max_by(|&a, &b| sweep[a].mean.total_cmp(&sweep[b].mean))
        .unwrap_or(0);
    let inside: Vec<usize> = (0..sweep.len()).filter(|&i| in_range(i)).collect();
    // Differs: some count outside the range beats every count inside it.
    for j in (0..sweep.len()).filter(|&j| !in_range(j)) {
        if inside.iter().all(|&i| cmp(j, i).lo > 0.0) {
            return PeakJudgement {
                answer: Answer::Differs,
                best,
                why: format!(
                    "{} clients are significantly above every count in {lo}-{hi}",
                    sweep[j].clients
                ),
            };
        }
    }
    if best == 0 || best + 1 == sweep.len() {
        return PeakJudgement {
            answer: Answer::Inconclusive,
            best,
            why: format!(
                "the highest mean is at the sweep's {} ({} clients): a peak there cannot be seen",
                if best == 0 { "start" } else { "end" },
                sweep[best].clients
            ),
        };
    }
    if !in_range(best) {
        return PeakJudgement {
            answer: Answer::Inconclusive,
            best,
            why: format!(
                "the highest mean is at {} clients, outside {lo}-{hi}, but not significantly above every count inside it",
                sweep[best].clients
            ),
        };
    }
    for n in [best - 1, best + 1] {
        let j = judge(&cmp(best, n), Range::above());
        if j.answer != Answer::Agrees {
            return PeakJudgement {
                answer: Answer::Inconclusive,
                best,
                why: format!(
                    "{} clients are not significantly above {} clients{}",
                    sweep[best].clients,
                    sweep[n].clients,
                    if j.to_decide.is_empty() {
                        String::new()
                    } else {
                        format!("; {}", j.to_decide)
                    }
                ),
            };
        }
    }
    PeakJudgement {
        answer: Answer::Agrees,
        best,
        why: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(mean: f64, half: f64, n: usize) -> Estimate {
        Estimate::interval(RatioInterval {
            n,
            mean_log: mean.ln(),
            sd_log: 0.1,
            lo_log: (mean / (1.0 + half)).ln(),
            hi_log: (mean * (1.0 + half)).ln(),
            level: 0.95,
            method: Method::StudentT,
        })
    }

    #[test]
    fn an_interval_inside_the_widened_range_agrees_and_one_outside_differs() {
        let range = Range::claimed(1.1, 1.6, 0.05);
        assert_eq!(judge(&iv(1.3, 0.05, 5), range).answer, Answer::Agrees);
        // 1.07 lies outside 1.1-1.6 but inside its 5% widening.
        assert_eq!(judge(&iv(1.07, 0.01, 5), range).answer, Answer::Agrees);
        assert_eq!(judge(&iv(0.9, 0.05, 5), range).answer, Answer::Differs);
        assert_eq!(judge(&iv(2.0, 0.1, 5), range).answer, Answer::Differs);
    }

    #[test]
    fn an_interval_straddling_the_range_is_inconclusive_with_what_would_decide_it() {
        let range = Range::claimed(1.1, 1.6, 0.05);
        // Its point is inside, but the interval reaches below 1.05.
        let j = judge(&iv(1.2, 0.2, 3), range);
        assert_eq!(j.answer, Answer::Inconclusive);
        assert!(j.to_decide.starts_with("about "), "{}", j.to_decide);
        assert!(j.to_decide.ends_with("blocks would likely decide it"));
        // Its point is outside: noise cannot make it agree either.
        let j = judge(&iv(1.0, 0.2, 3), range);
        assert_eq!(j.answer, Answer::Inconclusive);
    }

    #[test]
    fn single_runs_decide_only_beyond_the_pass_to_pass_spread() {
        let range = Range::claimed(1.1, 1.6, 0.05);
        // 1.3 +- 18% = 1.10-1.53: inside 1.05-1.68.
        assert_eq!(
            judge(&Estimate::single_runs(1.3), range).answer,
            Answer::Agrees
        );
        // 1.2 +- 18% reaches 1.02: inconclusive, whereas the old rule
        // (point inside the range) said "agrees".
        let j = judge(&Estimate::single_runs(1.2), range);
        assert_eq!(j.answer, Answer::Inconclusive);
        assert!(j.to_decide.contains("--iterations"), "{}", j.to_decide);
        // 0.8 * 1.18 = 0.94 < 1.05: differs.
        assert_eq!(
            judge(&Estimate::single_runs(0.8), range).answer,
            Answer::Differs
        );
    }

    #[test]
    fn a_third_placed_named_winner_differs_whoever_ties_for_first() {
        // Named (aerospike) against redis and memcached, which tie for
        // first far above it.
        let (j, who) = leads(&[
            ("redis", iv(0.77, 0.05, 5)),
            ("memcached", iv(0.78, 0.06, 5)),
        ]);
        assert_eq!((j.answer, who), (Answer::Differs, Some("redis")));
        // Ahead of both: agrees.
        let (j, who) = leads(&[("redis", iv(1.3, 0.05, 5)), ("memcached", iv(1.2, 0.05, 5))]);
        assert_eq!((j.answer, who), (Answer::Agrees, None));
        // Ahead of one, tied with the other: inconclusive, naming the tie.
        let (j, who) = leads(&[
            ("redis", iv(1.3, 0.05, 5)),
            ("memcached", iv(1.02, 0.05, 5)),
        ]);
        assert_eq!((j.answer, who), (Answer::Inconclusive, Some("memcached")));
    }

    fn sweep(means: &[f64]) -> Vec<SweepPoint> {
        [1, 4, 8, 12, 16, 20, 24, 28, 32]
            .iter()
            .zip(means)
            .map(|(&clients, &mean)| SweepPoint { clients, mean })
            .collect()
    }

    /// Each ratio of two points +-`half`.
    fn spread(s: &[SweepPoint], half: f64) -> impl Fn(usize, usize) -> Estimate + '_ {
        move |i, j| iv(s[i].mean / s[j].mean, half, 5)
    }

    /// Ratios +-2%: neighbours 5% apart are told apart.
    fn tight(s: &[SweepPoint]) -> impl Fn(usize, usize) -> Estimate + '_ {
        spread(s, 0.02)
    }

    #[test]
    fn a_peak_at_the_sweeps_end_is_not_a_peak() {
        let s = sweep(&[10.0, 40.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0]);
        // The paper's 24 widened to 20-32, the sweep ending at 32.
        let p = peak(&s, (20.0, 32.0), tight(&s));
        assert_eq!(p.answer, Answer::Inconclusive, "{}", p.why);
        assert!(p.why.contains("sweep's end"), "{}", p.why);
        // With the range 20-28, 32 clients beat every count in it: differs.
        let p = peak(&s, (20.0, 28.0), tight(&s));
        assert_eq!(p.answer, Answer::Differs, "{}", p.why);
    }

    #[test]
    fn a_peak_must_stand_significantly_above_both_neighbours() {
        let clear = sweep(&[10.0, 40.0, 60.0, 70.0, 75.0, 80.0, 95.0, 85.0, 80.0]);
        let p = peak(&clear, (20.0, 28.0), tight(&clear));
        assert_eq!((p.answer, p.best), (Answer::Agrees, 6), "{}", p.why);
        // 2.6% above its neighbour (anthony2016-full.md's "peak"): not told
        // apart when the ratio is known to +-4%.
        let close = sweep(&[10.0, 40.0, 60.0, 70.0, 75.0, 80.0, 82.1, 80.0, 78.0]);
        let p = peak(&close, (20.0, 28.0), spread(&close, 0.04));
        assert_eq!(p.answer, Answer::Inconclusive, "{}", p.why);
        assert!(p.why.contains("not significantly above"), "{}", p.why);
        // A clear peak at 8 clients, outside 20-28: differs.
        let early = sweep(&[10.0, 40.0, 90.0, 70.0, 60.0, 55.0, 50.0, 48.0, 45.0]);
        let p = peak(&early, (20.0, 28.0), tight(&early));
        assert_eq!(p.answer, Answer::Differs, "{}", p.why);
    }
}
