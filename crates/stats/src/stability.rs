//! Whether a run's per-second figures held one level.
//!
//! On a shared VM a closed loop can flip between two states for seconds at
//! a time (cross-vCPU wake-ups cost 7 us in one state and 16-22 us in the
//! other), and a short run lands in either by chance; a server can also
//! stall, or warm up slowly. The run's totals then describe neither state,
//! so kvbench says so instead of reporting them as a finding.
//!
//! Two checks over the per-second values, in time order (drift first):
//! - **two levels**: the split of the sorted values into a low and a high
//!   group with the least within-group variance of their logarithms (1-D
//!   2-means, exact by trying every split); two levels when each group
//!   holds at least [`MIN_GROUP`] seconds and a tenth of them, the groups'
//!   means differ by at least [`MIN_GAP`] of the higher, and their mean
//!   logarithms by at least [`SEPARATION`] pooled within-group standard
//!   deviations. Logarithms because the noise of a busy machine is a share
//!   of the level, not a fixed amount: a high level that wanders between
//!   12k and 36k ops/s is still plainly apart from a low one at 1-2k, which
//!   a split of the raw values, with the high level's spread in its pooled
//!   deviation, can fail to see;
//! - **drift**: a least-squares line through the values that explains at
//!   least [`MIN_R2`] of their variance and changes by at least [`MIN_GAP`]
//!   of their mean over the run.
//!
//! Fewer than [`MIN_SECONDS`] values cannot be judged.

/// Fewest seconds a run must have to be judged.
pub const MIN_SECONDS: usize = 5;
/// Fewest seconds in each of two levels.
pub const MIN_GROUP: usize = 2;
/// Smallest difference between two levels, or over a drift, as a share.
pub const MIN_GAP: f64 = 0.25;
/// Two levels must be this many pooled standard deviations apart.
pub const SEPARATION: f64 = 3.0;
/// Share of the variance a drift's line must explain.
pub const MIN_R2: f64 = 0.7;

/// What the per-second values did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stability {
    /// Too few values to tell.
    TooShort,
    /// One level.
    Stable,
    /// Two levels, each held for some seconds.
    TwoLevels {
        /// Mean of the low level.
        low: f64,
        /// Mean of the high level.
        high: f64,
        /// Seconds at the low level.
        low_seconds: usize,
        /// Seconds at the high level.
        high_seconds: usize,
    },
    /// A steady rise or fall.
    Drifting {
        /// The fitted value at the first second.
        from: f64,
        /// The fitted value at the last second.
        to: f64,
    },
}

impl Stability {
    /// True for two levels or a drift.
    pub fn unstable(&self) -> bool {
        matches!(
            self,
            Stability::TwoLevels { .. } | Stability::Drifting { .. }
        )
    }
}

/// Judges `values` (one per second, in time order).
pub fn assess(values: &[f64]) -> Stability {
    let n = values.len();
    if n < MIN_SECONDS || values.iter().any(|v| !v.is_finite()) {
        return Stability::TooShort;
    }
    // A trend first: an even climb also splits into a lower and a higher
    // half, but a line describes it better than two levels.
    if let Some(d) = drift(values) {
        return d;
    }
    two_levels(values).unwrap_or(Stability::Stable)
}

fn two_levels(values: &[f64]) -> Option<Stability> {
    let n = values.len();
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    // ln(1 + v): a second with nothing completed is a level too, not -inf.
    let logs: Vec<f64> = sorted.iter().map(|v| v.max(0.0).ln_1p()).collect();
    let min_group = MIN_GROUP.max(n.div_ceil(10));
    // Prefix sums make each split's within-group variance O(1).
    let mut sum = vec![0.0; n + 1];
    let mut sq = vec![0.0; n + 1];
    for (i, v) in logs.iter().enumerate() {
        sum[i + 1] = sum[i] + v;
        sq[i + 1] = sq[i] + v * v;
    }
    let sse = |a: usize, b: usize| {
        let k = (b - a) as f64;
        let s = sum[b] - sum[a];
        (sq[b] - sq[a]) - s * s / k
    };
    let (k, within) = (min_group..=n - min_group)
        .map(|k| (k, sse(0, k) + sse(k, n)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let log_gap = (sum[n] - sum[k]) / (n - k) as f64 - sum[k] / k as f64;
    let pooled_sd = (within.max(0.0) / (n - 2) as f64).sqrt();
    // The levels reported, and the gap judged, are plain means.
    let low = sorted[..k].iter().sum::<f64>() / k as f64;
    let high = sorted[k..].iter().sum::<f64>() / (n - k) as f64;
    let gap = high - low;
    (high > 0.0 && gap >= MIN_GAP * high && log_gap >= SEPARATION * pooled_sd).then_some(
        Stability::TwoLevels {
            low,
            high,
            low_seconds: k,
            high_seconds: n - k,
        },
    )
}

fn drift(values: &[f64]) -> Option<Stability> {
    let n = values.len() as f64;
    let mean_t = (n - 1.0) / 2.0;
    let mean_v = values.iter().sum::<f64>() / n;
    let (mut stt, mut stv, mut svv) = (0.0, 0.0, 0.0);
    for (t, v) in values.iter().enumerate() {
        let (dt, dv) = (t as f64 - mean_t, v - mean_v);
        stt += dt * dt;
        stv += dt * dv;
        svv += dv * dv;
    }
    if svv == 0.0 || mean_v == 0.0 {
        return None;
    }
    let slope = stv / stt;
    let r2 = stv * stv / (stt * svv);
    let from = mean_v - slope * mean_t;
    let to = mean_v + slope * mean_t;
    ((to - from).abs() >= MIN_GAP * mean_v.abs() && r2 >= MIN_R2)
        .then_some(Stability::Drifting { from, to })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` values around `level`, spread by a fixed +-`jitter` share.
    fn steady(n: usize, level: f64, jitter: f64) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + jitter * [0.0, 1.0, -1.0, 0.5, -0.5][i % 5]))
            .collect()
    }

    #[test]
    fn a_steady_run_is_stable() {
        assert_eq!(assess(&steady(30, 50_000.0, 0.03)), Stability::Stable);
        // One slow second is not a level.
        let mut v = steady(30, 50_000.0, 0.03);
        v[7] = 20_000.0;
        assert_eq!(assess(&v), Stability::Stable);
        assert_eq!(assess(&[1.0, 2.0]), Stability::TooShort);
    }

    #[test]
    fn two_states_are_found_with_both_levels() {
        // Flipping every few seconds between ~60k and ~30k.
        let v: Vec<f64> = (0..20)
            .map(|i| if (i / 3) % 2 == 0 { 60_000.0 } else { 30_000.0 } + (i % 3) as f64 * 500.0)
            .collect();
        match assess(&v) {
            Stability::TwoLevels {
                low,
                high,
                low_seconds,
                high_seconds,
            } => {
                assert!((low - 30_500.0).abs() < 100.0 && (high - 60_500.0).abs() < 100.0);
                assert_eq!(low_seconds + high_seconds, 20);
                assert!(low_seconds >= 8 && high_seconds >= 8);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_wandering_high_level_is_still_apart_from_a_low_one() {
        // Per-second throughput of a server stopped 90% of the time in two
        // 4-s stretches, on a machine busy with other work: the high level
        // wanders by a factor of three, and seconds at the edges of the
        // stretches fall between. A split of the raw values finds the two
        // groups only 2.9 pooled deviations apart and misses them.
        let v = [
            11_000.0, 1_736.0, 1_595.0, 1_856.0, 1_897.0, 8_760.0, 17_734.0, 8_383.0, 9_652.0,
            1_218.0, 1_570.0, 1_758.0, 1_052.0, 7_090.0, 23_389.0, 11_611.0, 15_941.0,
        ];
        match assess(&v) {
            Stability::TwoLevels { low, high, .. } => assert!(low < 0.3 * high, "{low} {high}"),
            other => panic!("{other:?}"),
        }
        // Noise that is a share of the level is one level, at any level.
        let v: Vec<f64> = steady(30, 400.0, 0.1);
        assert_eq!(assess(&v), Stability::Stable);
        let mut v: Vec<f64> = steady(30, 40_000.0, 0.1);
        v[3] = 0.0;
        assert_eq!(assess(&v), Stability::Stable);
    }

    #[test]
    fn a_steady_climb_is_a_drift() {
        let v: Vec<f64> = (0..10).map(|i| 10_000.0 + 1_000.0 * i as f64).collect();
        match assess(&v) {
            Stability::Drifting { from, to } => {
                assert!((from - 10_000.0).abs() < 1e-6 && (to - 19_000.0).abs() < 1e-6)
            }
            other => panic!("{other:?}"),
        }
        // A small trend is not.
        let v: Vec<f64> = (0..10).map(|i| 10_000.0 + 100.0 * i as f64).collect();
        assert_eq!(assess(&v), Stability::Stable);
    }
}
