//! memtier_benchmark's key patterns (`--key-pattern`), over a key range
//! `min..=max`: `S` each client walks the whole range in order from `min`,
//! `P` each client walks its own slice of it, `G` draws around the middle
//! from a normal distribution (`R`, uniform, is YCSB's `uniform`). The
//! semantics follow memtier's `object_generator::get_key_index` and
//! `client::setup_client`; the random numbers are kvbench's own. No I/O.

use super::{next_double, DistError};
use rand_core::RngCore;

/// One client's walk over `min..=max`, wrapping to `min` after `max` (memtier
/// `S`, and `P` over the client's slice). Each clone walks on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSequence {
    min: u64,
    max: u64,
    next: u64,
}

impl ClientSequence {
    /// A walk over `min..=max` starting at `min`.
    pub fn new(min: u64, max: u64) -> Result<Self, DistError> {
        if min > max {
            return Err(DistError::InvalidRange { min, max });
        }
        Ok(ClientSequence {
            min,
            max,
            next: min,
        })
    }

    /// memtier's parallel pattern: client `client` of `clients` walks
    /// `min + range*client ..= min + range*(client+1) - 1` with
    /// `range = (max - min) / clients + 1`, and the last client also takes
    /// what is left up to `max` (memtier's `setup_client`).
    ///
    /// # Errors
    /// When there are fewer keys than clients: memtier then hands later
    /// clients slices beyond `max` (or empty ones); kvbench refuses instead.
    pub fn parallel(min: u64, max: u64, client: u64, clients: u64) -> Result<Self, DistError> {
        if min > max {
            return Err(DistError::InvalidRange { min, max });
        }
        if clients == 0 || client >= clients || max - min + 1 < clients {
            return Err(DistError::InvalidParameter {
                name: "clients",
                value: clients as f64,
                expected: "at most one client per key of the range (parallel key pattern)",
            });
        }
        let range = (max - min) / clients + 1;
        let lo = min + range * client;
        let hi = if client == clients - 1 {
            max
        } else {
            (lo + range - 1).min(max)
        };
        if lo > hi {
            return Err(DistError::InvalidParameter {
                name: "clients",
                value: clients as f64,
                expected: "few enough clients that each gets keys (parallel key pattern)",
            });
        }
        ClientSequence::new(lo, hi)
    }

    /// The next key number; needs no randomness.
    #[inline]
    pub fn next_key(&mut self) -> u64 {
        let k = self.next;
        self.next = if k >= self.max { self.min } else { k + 1 };
        k
    }

    /// The first and last key this walk visits.
    pub fn bounds(&self) -> (u64, u64) {
        (self.min, self.max)
    }
}

/// memtier's Gaussian pattern: a normal draw (Marsaglia's polar method, the
/// second value of each pair kept for the next draw) around `median` with
/// standard deviation `stddev`, redrawn until it lies in `min..=max+1`, then
/// truncated to an integer. A draw of exactly `max + 1`, which memtier
/// would return, becomes `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianKeys {
    min: u64,
    max: u64,
    median: f64,
    stddev: f64,
    spare: Option<f64>,
}

impl GaussianKeys {
    /// Keys in `min..=max`; `median` and `stddev` of 0 take memtier's
    /// defaults, the middle of the range (`(max-min)/2 + min + 0.5`) and a
    /// sixth of its length.
    pub fn new(min: u64, max: u64, median: f64, stddev: f64) -> Result<Self, DistError> {
        if min > max {
            return Err(DistError::InvalidRange { min, max });
        }
        let len = (max - min) as f64;
        let median = if median == 0.0 {
            len / 2.0 + min as f64 + 0.5
        } else {
            median
        };
        let stddev = if stddev == 0.0 { len / 6.0 } else { stddev };
        if min < max && !(median > min as f64 && median < max as f64) {
            return Err(DistError::InvalidParameter {
                name: "kvbench.gaussian.median",
                value: median,
                expected: "strictly inside the key range",
            });
        }
        if !(stddev.is_finite() && stddev >= 0.0) {
            return Err(DistError::InvalidParameter {
                name: "kvbench.gaussian.stddev",
                value: stddev,
                expected: "a positive number",
            });
        }
        Ok(GaussianKeys {
            min,
            max,
            median,
            stddev,
            spare: None,
        })
    }

    /// The median and standard deviation in use.
    pub fn parameters(&self) -> (f64, f64) {
        (self.median, self.stddev)
    }

    /// The next key number.
    #[inline]
    pub fn next_value<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> u64 {
        if self.min == self.max {
            return self.min;
        }
        let (lo, hi) = (self.min as f64, self.max as f64 + 1.0);
        loop {
            let v = self.normal(rng) * self.stddev + self.median;
            if v >= lo && v <= hi {
                return (v as u64).min(self.max);
            }
        }
    }

    /// A standard normal value.
    fn normal<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> f64 {
        if let Some(s) = self.spare.take() {
            return s;
        }
        loop {
            let u = next_double(rng) * 2.0 - 1.0;
            let v = next_double(rng) * 2.0 - 1.0;
            let s = u * u + v * v;
            if s < 1.0 && s != 0.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                self.spare = Some(v * f);
                return u * f;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::java_random::tests::seeded;

    #[test]
    fn a_client_sequence_walks_and_wraps_on_its_own() {
        let mut a = ClientSequence::new(10, 12).unwrap();
        let mut b = a;
        assert_eq!(
            (0..5).map(|_| a.next_key()).collect::<Vec<_>>(),
            [10, 11, 12, 10, 11]
        );
        assert_eq!(b.next_key(), 10, "a copy starts from the beginning");
        assert!(ClientSequence::new(3, 2).is_err());
    }

    #[test]
    fn parallel_slices_are_memtiers() {
        // memtier: range = (max - min) / clients + 1; the last takes the rest.
        let slices: Vec<(u64, u64)> = (0..3)
            .map(|c| ClientSequence::parallel(1, 100, c, 3).unwrap().bounds())
            .collect();
        assert_eq!(slices, [(1, 34), (35, 68), (69, 100)]);
        let slices: Vec<(u64, u64)> = (0..4)
            .map(|c| ClientSequence::parallel(0, 9, c, 4).unwrap().bounds())
            .collect();
        assert_eq!(slices, [(0, 2), (3, 5), (6, 8), (9, 9)]);
        assert!(ClientSequence::parallel(0, 1, 0, 3).is_err());
        assert!(ClientSequence::parallel(0, 9, 4, 4).is_err());
        // Every key of the range is someone's, once.
        let mut seen = vec![0u32; 1000];
        for c in 0..7 {
            let (lo, hi) = ClientSequence::parallel(0, 999, c, 7).unwrap().bounds();
            for k in lo..=hi {
                seen[k as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn gaussian_keys_centre_on_the_middle_with_a_sixth_of_the_range() {
        let mut g = GaussianKeys::new(0, 60_000, 0.0, 0.0).unwrap();
        assert_eq!(g.parameters(), (30_000.5, 10_000.0));
        let mut rng = seeded(5);
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| g.next_value(&mut rng) as f64).collect();
        assert!(draws.iter().all(|&k| (0.0..=60_000.0).contains(&k)));
        let mean = draws.iter().sum::<f64>() / n as f64;
        let sd = (draws.iter().map(|k| (k - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        // Truncation at +-3 sd shrinks the spread to about 0.986 sd; the
        // integer cut lowers the mean by 0.5.
        assert!((mean - 30_000.0).abs() < 100.0, "mean {mean}");
        assert!((sd - 9_866.0).abs() < 100.0, "sd {sd}");
        let within_one_sd = draws
            .iter()
            .filter(|&&k| (20_000.0..40_000.0).contains(&k))
            .count() as f64
            / n as f64;
        assert!(
            (within_one_sd - 0.6827 / 0.9973).abs() < 0.01,
            "{within_one_sd}"
        );
        assert!(GaussianKeys::new(0, 10, 20.0, 0.0).is_err());
        assert!(GaussianKeys::new(0, 10, 0.0, -1.0).is_err());
        assert_eq!(
            GaussianKeys::new(7, 7, 0.0, 0.0)
                .unwrap()
                .next_value(&mut rng),
            7
        );
    }
}
