//! Mean, standard deviation and a 95% confidence interval of a metric over
//! the iterations of one cell.
//!
//! The interval is Student's t: iterations are few (3 to 10), so the
//! normal distribution's 1.96 would make it too narrow.

/// Coefficient of variation above which a cell is called noisy.
pub const NOISY_CV: f64 = 0.05;

/// A metric over `n` iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub sd: f64,
    /// Half-width of the 95% confidence interval of the mean (`None` for
    /// fewer than two values: no interval can be given).
    pub ci95: Option<f64>,
}

impl Summary {
    /// The summary of `values`; `None` when there are none or any is not finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Some(Summary {
                n,
                mean,
                sd: 0.0,
                ci95: None,
            });
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        Some(Summary {
            n,
            mean,
            sd,
            ci95: Some(t975(n - 1) * sd / (n as f64).sqrt()),
        })
    }

    /// Standard deviation over the mean (0 when the mean is 0).
    pub fn cv(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            self.sd / self.mean.abs()
        }
    }

    /// True when the iterations spread more than [`NOISY_CV`].
    pub fn noisy(&self) -> bool {
        self.cv() > NOISY_CV
    }

    /// The interval's bounds, when there is one.
    pub fn interval(&self) -> Option<(f64, f64)> {
        self.ci95.map(|h| (self.mean - h, self.mean + h))
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (the
/// two-sided 95% critical value). Exact table values to four decimals for
/// 1 to 30; beyond, the standard table's 40, 60 and 120, linear in 1/df in
/// between (the usual interpolation), and the normal's 1.96 in the limit.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    const TAIL: [(f64, f64); 4] = [
        (30.0, 2.0423),
        (40.0, 2.0211),
        (60.0, 2.0003),
        (120.0, 1.9799),
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        _ => {
            let d = df as f64;
            for w in TAIL.windows(2) {
                let ((d0, t0), (d1, t1)) = (w[0], w[1]);
                if d <= d1 {
                    let f = (1.0 / d0 - 1.0 / d) / (1.0 / d0 - 1.0 / d1);
                    return t0 + f * (t1 - t0);
                }
            }
            let (d0, t0) = TAIL[3];
            // Between 120 and infinity: linear in 1/df towards 1.95996.
            1.959_964 + (t0 - 1.959_964) * (d0 / d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_iterations_match_a_hand_computation() {
        // mean 20, deviations -2, 0, 2: variance 4, sd 2; t(2) = 4.3027,
        // half-width 4.3027 * 2 / sqrt(3).
        let s = Summary::of(&[18.0, 20.0, 22.0]).expect("summary");
        assert_eq!((s.n, s.mean, s.sd), (3, 20.0, 2.0));
        let h = s.ci95.expect("interval");
        assert!((h - 4.3027 * 2.0 / 3f64.sqrt()).abs() < 1e-12, "{h}");
        assert!((s.cv() - 0.1).abs() < 1e-12);
        assert!(s.noisy());
    }

    #[test]
    fn one_value_has_no_interval_and_bad_input_no_summary() {
        let s = Summary::of(&[5.0]).expect("summary");
        assert_eq!((s.sd, s.ci95), (0.0, None));
        assert!(!s.noisy());
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn t_quantiles_follow_the_table() {
        assert_eq!(t975(1), 12.7062);
        assert_eq!(t975(10), 2.2281);
        assert_eq!(t975(40), 2.0211);
        assert!((t975(50) - 2.0086).abs() < 0.001, "{}", t975(50));
        assert!(t975(1000) > 1.96 && t975(1000) < 1.963);
        // Falls with the degrees of freedom.
        assert!((1..200).all(|d| t975(d) > t975(d + 1)));
    }
}
