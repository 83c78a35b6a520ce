//! Verdicts between two alternatives measured in the same blocks.
//!
//! A block runs every alternative of one place back to back, in a random
//! order, so the machine's slow states (on a shared VM they last minutes,
//! docs/experiments.md) hit both sides of a pair alike. The quantity judged
//! is therefore the per-block log ratio `ln(a / b)`, not each side's own
//! spread: two separate intervals that overlap say nothing about a ratio
//! that is steady from block to block (Kalibera & Jones, ISMM 2013; duet
//! benchmarking, Bulej et al., ICPE 2020).
//!
//! The interval of the mean log ratio is Student's t over blocks; from
//! [`BCA_MIN_BLOCKS`] blocks on it is a bias-corrected and accelerated
//! (BCa) bootstrap, which does not assume the log ratios are normal (Efron
//! & Tibshirani 1993, ch. 14), resampled from a fixed seed so the same data
//! always give the same interval. Runs that were not paired (no blocks)
//! get Welch's interval for the difference of mean logs.
//!
//! A verdict is one of three (an equivalence test beside a difference
//! test, as in TOST): ahead/behind when the whole interval lies beyond the
//! margin, equal when it lies wholly inside `±margin`, undecided when it
//! crosses a margin. Under the null of no difference a 95% interval lies
//! wholly beyond a positive margin far less than 5% of the time, so an A/A
//! pair is almost never called "ahead" (`bench/verdicts/run` measures how
//! often on this machine).
//!
//! Repeated looks (`--until-decided` adds blocks while a place is
//! undecided) would inflate the error rate; [`level_for_looks`] splits the
//! 5% over the looks that may be taken (Bonferroni), which keeps the whole
//! sequence's rate at or below 5% whatever the stopping rule.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The default margin of equivalence: two alternatives within ±5% of each
/// other are called equal (the spread of repeated runs on a quiet machine,
/// docs/experiments.md).
pub const DEFAULT_MARGIN: f64 = 0.05;
/// The confidence level of every interval (before a correction for looks).
pub const LEVEL: f64 = 0.95;
/// From this many blocks on the interval is a BCa bootstrap.
pub const BCA_MIN_BLOCKS: usize = 10;
/// The fewest blocks a sequential run looks at (three give the first
/// t interval with two degrees of freedom worth having).
pub const MIN_BLOCKS: usize = 3;
/// Bootstrap resamples: enough that the 2.5% tails rest on 100 values.
const RESAMPLES: usize = 4000;
/// The bootstrap's fixed seed: the same data give the same interval.
const BOOTSTRAP_SEED: u64 = 0x6b76_6265_6e63_6821;

/// How an interval was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Student's t over paired blocks.
    StudentT,
    /// Bias-corrected and accelerated bootstrap over paired blocks.
    Bca,
    /// Welch's t over unpaired runs (no blocks).
    Welch,
}

impl Method {
    /// Its name as tables print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::StudentT => "paired t",
            Method::Bca => "paired BCa bootstrap",
            Method::Welch => "Welch t (unpaired)",
        }
    }
}

/// An interval of a ratio `a / b`, kept in logs (ratios are symmetric in
/// logs: a 2x and a 0.5x are equally far from 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RatioInterval {
    /// Blocks (paired) or the smaller side's runs (Welch).
    pub n: usize,
    /// Mean log ratio.
    pub mean_log: f64,
    /// Standard deviation of the per-block log ratios (Welch: the
    /// difference's standard error times `sqrt(n)`).
    pub sd_log: f64,
    /// The interval's bounds, in logs.
    pub lo_log: f64,
    pub hi_log: f64,
    /// Its confidence level (0.95, or more after a correction for looks).
    pub level: f64,
    pub method: Method,
}

impl RatioInterval {
    /// The ratio's point estimate minus one (0.12 for "12% higher").
    pub fn change(&self) -> f64 {
        self.mean_log.exp() - 1.0
    }
    /// The interval's bounds as changes (`(-0.02, 0.08)`).
    pub fn change_bounds(&self) -> (f64, f64) {
        (self.lo_log.exp() - 1.0, self.hi_log.exp() - 1.0)
    }
    /// The same interval seen from the other side (`b / a`).
    pub fn flipped(&self) -> RatioInterval {
        RatioInterval {
            mean_log: -self.mean_log,
            lo_log: -self.hi_log,
            hi_log: -self.lo_log,
            ..*self
        }
    }
}

/// The level of each of `looks` repeated looks that keeps the chance of
/// any false call over all of them at `1 - level` (Bonferroni).
pub fn level_for_looks(level: f64, looks: usize) -> f64 {
    1.0 - (1.0 - level) / looks.max(1) as f64
}

/// The blocks after which a sequential comparison looks at its verdicts,
/// from `min` to `max`: each about 1.5 times the last (3, 5, 8, 12, 18,
/// ...), `max` always the last. Few looks keep the Bonferroni correction
/// mild (four looks up to 10 blocks: each at 98.75%), and a look after
/// a few more blocks rather than after every one loses little (group
/// sequential designs, Jennison & Turnbull 2000).
pub fn look_points(min: u32, max: u32) -> Vec<u32> {
    let min = min.max(2);
    let mut out = Vec::new();
    let mut k = min;
    while k < max {
        out.push(k);
        k = (k * 3).div_ceil(2).max(k + 1);
    }
    out.push(max.max(min));
    out
}

/// The two-sided critical value of Student's t with `df` degrees of
/// freedom at confidence `level`.
pub fn t_critical(level: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(1.0 - (1.0 - level) / 2.0),
        Err(_) => f64::NAN,
    }
}

fn normal() -> Normal {
    // Mean 0 and sd 1 are always valid parameters.
    Normal::standard()
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn sample_sd(x: &[f64], m: f64) -> f64 {
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// The interval of the mean of per-block log ratios at `level`: Student's
/// t below [`BCA_MIN_BLOCKS`] blocks, BCa from there on. `None` for fewer
/// than two blocks or a value that is not finite.
pub fn paired(log_ratios: &[f64], level: f64) -> Option<RatioInterval> {
    let n = log_ratios.len();
    if n < 2 || log_ratios.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let m = mean(log_ratios);
    let sd = sample_sd(log_ratios, m);
    let (lo, hi, method) = if n >= BCA_MIN_BLOCKS && sd > 0.0 {
        let (lo, hi) = bca(log_ratios, level);
        (lo, hi, Method::Bca)
    } else {
        let h = t_critical(level, (n - 1) as f64) * sd / (n as f64).sqrt();
        (m - h, m + h, Method::StudentT)
    };
    Some(RatioInterval {
        n,
        mean_log: m,
        sd_log: sd,
        lo_log: lo,
        hi_log: hi,
        level,
        method,
    })
}

/// Welch's interval of `mean(log_a) - mean(log_b)`, for runs that were not
/// measured in blocks. `None` unless each side has two finite values.
pub fn unpaired(log_a: &[f64], log_b: &[f64], level: f64) -> Option<RatioInterval> {
    let ok = |x: &[f64]| x.len() >= 2 && x.iter().all(|v| v.is_finite());
    if !ok(log_a) || !ok(log_b) {
        return None;
    }
    let (na, nb) = (log_a.len() as f64, log_b.len() as f64);
    let (ma, mb) = (mean(log_a), mean(log_b));
    let (va, vb) = (
        sample_sd(log_a, ma).powi(2) / na,
        sample_sd(log_b, mb).powi(2) / nb,
    );
    let se = (va + vb).sqrt();
    // Welch-Satterthwaite; two identical constant sides have no spread at all.
    let df = if se > 0.0 {
        (va + vb).powi(2) / (va.powi(2) / (na - 1.0) + vb.powi(2) / (nb - 1.0))
    } else {
        na + nb - 2.0
    };
    let h = t_critical(level, df) * se;
    let d = ma - mb;
    let n = log_a.len().min(log_b.len());
    Some(RatioInterval {
        n,
        mean_log: d,
        sd_log: se * (n as f64).sqrt(),
        lo_log: d - h,
        hi_log: d + h,
        level,
        method: Method::Welch,
    })
}

/// The BCa bootstrap interval of the mean of `x` (at least two values,
/// not all equal).
fn bca(x: &[f64], level: f64) -> (f64, f64) {
    let n = x.len();
    let theta = mean(x);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(BOOTSTRAP_SEED);
    let mut boots: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let s: f64 = (0..n)
                .map(|_| x[(rng.next_u64() % n as u64) as usize])
                .sum();
            s / n as f64
        })
        .collect();
    boots.sort_by(f64::total_cmp);
    let z0 = bias_correction(&boots, theta);
    let a = acceleration(x);
    let norm = normal();
    let z = norm.inverse_cdf(1.0 - (1.0 - level) / 2.0);
    let adjust = |zq: f64| {
        let w = z0 + zq;
        norm.cdf(z0 + w / (1.0 - a * w))
    };
    (quantile(&boots, adjust(-z)), quantile(&boots, adjust(z)))
}

/// `Φ⁻¹` of the share of bootstrap values below the estimate (ties count
/// half), clamped so a degenerate share stays finite.
fn bias_correction(sorted: &[f64], theta: f64) -> f64 {
    let below = sorted.iter().filter(|&&b| b < theta).count() as f64;
    let ties = sorted.iter().filter(|&&b| b == theta).count() as f64;
    let share = ((below + ties / 2.0) / sorted.len() as f64).clamp(1e-6, 1.0 - 1e-6);
    normal().inverse_cdf(share)
}

/// The jackknife estimate of the acceleration of the mean of `x`.
pub fn acceleration(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let total: f64 = x.iter().sum();
    let leave_one_out: Vec<f64> = x.iter().map(|v| (total - v) / (n - 1.0)).collect();
    let m = mean(&leave_one_out);
    let (mut num, mut den) = (0.0, 0.0);
    for t in &leave_one_out {
        let d = m - t;
        num += d.powi(3);
        den += d.powi(2);
    }
    if den == 0.0 {
        0.0
    } else {
        num / (6.0 * den.powf(1.5))
    }
}

/// The `p` quantile of sorted values, interpolated linearly between ranks.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let pos = p.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let i = pos.floor() as usize;
    let f = pos - i as f64;
    match sorted.get(i + 1) {
        Some(next) => sorted[i] + f * (next - sorted[i]),
        None => sorted[i],
    }
}

/// What an interval says against a margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Call {
    /// `a` ahead of `b` by more than the margin, over the whole interval.
    Ahead,
    /// `a` behind `b` by more than the margin, over the whole interval.
    Behind,
    /// The whole interval inside ±margin.
    Equal,
    /// The interval crosses a margin.
    Undecided,
}

impl Call {
    pub fn as_str(self) -> &'static str {
        match self {
            Call::Ahead => "ahead",
            Call::Behind => "behind",
            Call::Equal => "equal",
            Call::Undecided => "undecided",
        }
    }
    /// Ahead, behind or equal: a place this call settles.
    pub fn decided(self) -> bool {
        self != Call::Undecided
    }
}

/// A call with what it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Decision {
    pub call: Call,
    /// The margin (0.05 for ±5%).
    pub margin: f64,
    /// Undecided: the blocks (in all) that would likely decide it if the
    /// mean and spread stay as they are; `None` when the estimate sits on
    /// the margin, or more than [`MAX_PROJECTED`] would be needed.
    pub blocks_needed: Option<usize>,
}

/// Projections of the blocks needed stop here.
pub const MAX_PROJECTED: usize = 1000;

/// The call of `iv` against `±margin` (a share: 0.05 for 5%). The margin
/// is symmetric in logs: `ln(1 + margin)` on either side.
pub fn decide(iv: &RatioInterval, margin: f64) -> Decision {
    let m = (1.0 + margin).ln();
    let call = if iv.lo_log > m {
        Call::Ahead
    } else if iv.hi_log < -m {
        Call::Behind
    } else if iv.lo_log >= -m && iv.hi_log <= m {
        Call::Equal
    } else {
        Call::Undecided
    };
    let blocks_needed = (call == Call::Undecided)
        .then(|| blocks_needed(iv, m))
        .flatten();
    Decision {
        call,
        margin,
        blocks_needed,
    }
}

/// The smallest number of blocks whose t interval, with the same mean and
/// spread, would lie on one side of the nearer margin.
fn blocks_needed(iv: &RatioInterval, log_margin: f64) -> Option<usize> {
    blocks_for_room(iv, (iv.mean_log.abs() - log_margin).abs())
}

/// The smallest number of blocks (or runs a side) whose t interval, with
/// the same mean and spread, would be narrower on each side than `room`
/// (in logs): how far the estimate stands from the bound that decides it.
pub fn blocks_for_room(iv: &RatioInterval, room: f64) -> Option<usize> {
    if room <= 0.0 || iv.sd_log <= 0.0 {
        return None;
    }
    (iv.n.max(2) + 1..=MAX_PROJECTED)
        .find(|&k| t_critical(iv.level, (k - 1) as f64) * iv.sd_log / (k as f64).sqrt() < room)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values computed with SciPy 1.x (scipy.stats.t.ppf,
    /// scipy.stats.t.interval, scipy.stats.ttest_ind's Welch form; numpy
    /// for the jackknife), rounded to the digits given.
    #[test]
    fn t_critical_values_match_scipy() {
        for (level, df, want) in [
            (0.95, 2.0, 4.302652729749462),
            (0.95, 9.0, 2.262157162798205),
            (0.99, 4.0, 4.604094871349992),
            // 0.95 split over 8 looks.
            (0.99375, 2.0, 12.589740561191753),
            (0.99375, 7.0, 3.855225756064796),
            (0.95, 12.5, 2.1691859427125406),
        ] {
            let got = t_critical(level, df);
            assert!(
                (got - want).abs() < 1e-6,
                "t({level}, {df}) = {got}, want {want}"
            );
        }
        assert!((level_for_looks(0.95, 8) - 0.99375).abs() < 1e-15);
        assert_eq!(level_for_looks(0.95, 0), 0.95);
    }

    #[test]
    fn looks_grow_by_half_and_end_at_the_maximum() {
        assert_eq!(look_points(3, 10), vec![3, 5, 8, 10]);
        assert_eq!(look_points(3, 3), vec![3]);
        assert_eq!(look_points(3, 4), vec![3, 4]);
        assert_eq!(look_points(3, 30), vec![3, 5, 8, 12, 18, 27, 30]);
    }

    #[test]
    fn a_paired_t_interval_matches_scipy() {
        // ln ratios of five blocks.
        let x = [0.12, 0.08, 0.15, 0.10, 0.11];
        let iv = paired(&x, 0.95).expect("interval");
        assert_eq!((iv.n, iv.method), (5, Method::StudentT));
        // scipy.stats.t.interval(0.95, 4, loc=mean, scale=sem)
        assert!((iv.mean_log - 0.112).abs() < 1e-12);
        assert!((iv.lo_log - 0.07986032429268008).abs() < 1e-9, "{iv:?}");
        assert!((iv.hi_log - 0.1441396757073199).abs() < 1e-9, "{iv:?}");
        // 11.9% ahead, [8.3%, 15.5%]: wholly beyond 5%.
        assert_eq!(decide(&iv, 0.05).call, Call::Ahead);
        assert_eq!(decide(&iv.flipped(), 0.05).call, Call::Behind);
        assert!((iv.change() - 0.1185129).abs() < 1e-6);
    }

    #[test]
    fn welch_matches_scipy() {
        let a = [11.30, 11.25, 11.41];
        let b = [11.10, 11.02, 11.20, 11.15];
        let iv = unpaired(&a, &b, 0.95).expect("interval");
        assert_eq!(iv.method, Method::Welch);
        // scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
        assert!((iv.mean_log - 0.2025).abs() < 1e-12, "{iv:?}");
        assert!((iv.lo_log - 0.03760340691215333).abs() < 1e-6, "{iv:?}");
        assert!((iv.hi_log - 0.36739659308785133).abs() < 1e-6, "{iv:?}");
    }

    #[test]
    fn the_jackknife_acceleration_matches_numpy() {
        let x = [0.01, -0.02, 0.03, 0.2, 0.0, -0.01, 0.02, 0.05, -0.03, 0.01];
        assert!((acceleration(&x) - 0.10831693896209674).abs() < 1e-12);
        // Symmetric data have no acceleration.
        assert!(acceleration(&[-1.0, 0.0, 1.0]).abs() < 1e-15);
    }

    #[test]
    fn bca_matches_scipy_within_resampling_noise() {
        let x = [0.01, -0.02, 0.03, 0.2, 0.0, -0.01, 0.02, 0.05, -0.03, 0.01];
        let iv = paired(&x, 0.95).expect("interval");
        assert_eq!(iv.method, Method::Bca);
        // scipy.stats.bootstrap((x,), np.mean, method='BCa',
        // n_resamples=20000): [0.001, 0.091]; a t interval would be
        // [-0.0209, 0.0729], the skew pulls BCa to the right.
        assert!((iv.lo_log - 0.001).abs() < 0.006, "{iv:?}");
        assert!((iv.hi_log - 0.091).abs() < 0.012, "{iv:?}");
    }

    #[test]
    fn bca_is_near_the_t_interval_for_symmetric_data_and_leans_with_skew() {
        let x: Vec<f64> = (0..20).map(|i| (i as f64 - 9.5) * 0.002).collect();
        let iv = paired(&x, 0.95).expect("interval");
        assert_eq!(iv.method, Method::Bca);
        let h = t_critical(0.95, 19.0) * iv.sd_log / 20f64.sqrt();
        assert!(iv.mean_log.abs() < 1e-12);
        // A bootstrap of the mean is a little narrower than t (its sd
        // divides by n), within 15% here.
        assert!((iv.hi_log - h).abs() < 0.15 * h, "{iv:?} vs ±{h}");
        assert!((iv.lo_log + h).abs() < 0.15 * h, "{iv:?} vs ±{h}");
        // The same data, the same interval.
        assert_eq!(paired(&x, 0.95), Some(iv));
        // One far block to the right stretches the upper side more.
        let mut skewed = x.clone();
        skewed[19] = 0.2;
        let s = paired(&skewed, 0.95).expect("interval");
        assert!(s.hi_log - s.mean_log > s.mean_log - s.lo_log, "{s:?}");
    }

    #[test]
    fn calls_follow_the_margin_both_ways() {
        let iv = |lo: f64, hi: f64| RatioInterval {
            n: 5,
            mean_log: (lo + hi) / 2.0,
            sd_log: (hi - lo) / 2.0,
            lo_log: lo,
            hi_log: hi,
            level: 0.95,
            method: Method::StudentT,
        };
        let m = 1.05f64.ln();
        assert_eq!(decide(&iv(-0.03, 0.04), 0.05).call, Call::Equal);
        assert_eq!(decide(&iv(m + 0.001, 0.3), 0.05).call, Call::Ahead);
        assert_eq!(decide(&iv(-0.3, -m - 0.001), 0.05).call, Call::Behind);
        // Significant, but could be within the margin: undecided.
        let d = decide(&iv(0.02, 0.09), 0.05);
        assert_eq!(d.call, Call::Undecided);
        assert!(d.blocks_needed.is_some_and(|k| k > 5), "{d:?}");
        // A wider margin settles it as equal.
        assert_eq!(decide(&iv(0.02, 0.09), 0.10).call, Call::Equal);
    }

    #[test]
    fn blocks_needed_is_what_a_t_interval_with_that_many_blocks_decides() {
        // Mean 3%, sd 4% over 4 blocks: undecided at ±5%.
        let x = [0.03 - 0.04, 0.03 + 0.04, 0.03 - 0.04, 0.03 + 0.04];
        let iv = paired(&x, 0.95).expect("interval");
        let d = decide(&iv, 0.05);
        assert_eq!(d.call, Call::Undecided);
        let k = d.blocks_needed.expect("a projection");
        let room = 1.05f64.ln() - 0.03;
        let hw = |k: usize| t_critical(0.95, (k - 1) as f64) * iv.sd_log / (k as f64).sqrt();
        assert!(hw(k) < room && hw(k - 1) >= room, "k = {k}");
    }

    #[test]
    fn bad_input_gives_no_interval() {
        assert_eq!(paired(&[0.1], 0.95), None);
        assert_eq!(paired(&[0.1, f64::NAN], 0.95), None);
        assert_eq!(unpaired(&[0.1], &[0.1, 0.2], 0.95), None);
        // Identical blocks: a zero-width interval, no bootstrap needed.
        let iv = paired(&[0.0; 12], 0.95).expect("interval");
        assert_eq!(
            (iv.lo_log, iv.hi_log, iv.method),
            (0.0, 0.0, Method::StudentT)
        );
        assert_eq!(decide(&iv, 0.05).call, Call::Equal);
    }
}
