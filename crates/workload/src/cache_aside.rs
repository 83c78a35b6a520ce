//! Cache-aside (`kvbench.mode=cache-aside`): an application that reads
//! from the cache, and on a miss fetches the value from a slower backend
//! and sets it in the cache. The backend is modelled by its penalty, the
//! time a miss waits before the set: fixed, or lognormal with a given
//! median and 99th percentile (a service's latency is often close to one).

use rand_core::RngCore;
use std::fmt;
use std::time::Duration;

/// z of the normal distribution's 99th percentile.
const Z99: f64 = 2.326_347_874_040_841;

/// How long a miss waits for the backend.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Penalty {
    /// Always this long.
    Fixed(Duration),
    /// Lognormal with this median and 99th percentile.
    LogNormal {
        /// The median.
        p50: Duration,
        /// The 99th percentile (above the median).
        p99: Duration,
    },
}

/// The longest penalty kvbench models: a backend slower than this is an
/// outage, not a cache miss.
pub const MAX_PENALTY: Duration = Duration::from_secs(10);

impl Penalty {
    /// `1ms`, `250us`, `0.5s`, or `lognormal:P50:P99` (`lognormal:1ms:5ms`).
    ///
    /// # Errors
    /// What is wrong, in words.
    pub fn parse(text: &str) -> Result<Penalty, String> {
        let t = text.trim();
        let p = match t.strip_prefix("lognormal:") {
            Some(rest) => {
                let (a, b) = rest.split_once(':').ok_or_else(|| {
                    format!("{t:?}: lognormal needs P50 and P99 (lognormal:1ms:5ms)")
                })?;
                let (p50, p99) = (duration(a)?, duration(b)?);
                if p99 <= p50 || p50.is_zero() {
                    return Err(format!(
                        "{t:?}: the 99th percentile must be above a median above zero"
                    ));
                }
                Penalty::LogNormal { p50, p99 }
            }
            None => Penalty::Fixed(duration(t)?),
        };
        let top = match p {
            Penalty::Fixed(d) => d,
            Penalty::LogNormal { p99, .. } => p99,
        };
        if top > MAX_PENALTY {
            return Err(format!("{t:?}: at most {}s", MAX_PENALTY.as_secs()));
        }
        Ok(p)
    }

    /// One penalty, in nanoseconds, drawn from `rng` (a fixed one draws
    /// nothing). A lognormal draw is capped at [`MAX_PENALTY`].
    pub fn draw_ns(&self, rng: &mut impl RngCore) -> u64 {
        match *self {
            Penalty::Fixed(d) => d.as_nanos() as u64,
            Penalty::LogNormal { p50, p99 } => {
                let mu = (p50.as_nanos() as f64).ln();
                let sigma = ((p99.as_nanos() as f64).ln() - mu) / Z99;
                // Box-Muller: two uniforms in (0, 1] make one normal draw.
                let u = |rng: &mut dyn RngCore| {
                    ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
                };
                let (u1, u2) = (u(rng), u(rng));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                ((mu + sigma * z).exp() as u64).min(MAX_PENALTY.as_nanos() as u64)
            }
        }
    }

    /// The mean penalty, in nanoseconds.
    pub fn mean_ns(&self) -> f64 {
        match *self {
            Penalty::Fixed(d) => d.as_nanos() as f64,
            Penalty::LogNormal { p50, p99 } => {
                let mu = (p50.as_nanos() as f64).ln();
                let sigma = ((p99.as_nanos() as f64).ln() - mu) / Z99;
                (mu + sigma * sigma / 2.0).exp()
            }
        }
    }
}

impl fmt::Display for Penalty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |d: Duration| format!("{}us", d.as_nanos() as f64 / 1e3);
        match *self {
            Penalty::Fixed(x) => write!(f, "{}", d(x)),
            Penalty::LogNormal { p50, p99 } => write!(f, "lognormal:{}:{}", d(p50), d(p99)),
        }
    }
}

/// `250us`, `1ms`, `0.5s`.
fn duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(format!("{t:?}: give a unit (250us, 1ms, 0.5s)"));
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 3600.0 => {
            Ok(Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!("{t:?} is not a duration (250us, 1ms, 0.5s)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn penalties_read_as_written_and_bad_ones_are_refused() {
        assert_eq!(
            Penalty::parse("1ms"),
            Ok(Penalty::Fixed(Duration::from_millis(1)))
        );
        assert_eq!(
            Penalty::parse("250us"),
            Ok(Penalty::Fixed(Duration::from_micros(250)))
        );
        assert_eq!(
            Penalty::parse("lognormal:1ms:5ms"),
            Ok(Penalty::LogNormal {
                p50: Duration::from_millis(1),
                p99: Duration::from_millis(5)
            })
        );
        for bad in [
            "1",
            "x ms",
            "lognormal:5ms:1ms",
            "lognormal:1ms",
            "11s",
            "-1ms",
        ] {
            assert!(Penalty::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Penalty::parse("1ms").map(|p| p.to_string()),
            Ok("1000us".into())
        );
    }

    #[test]
    fn a_lognormal_penalty_has_its_median_and_99th_percentile() {
        let p = Penalty::parse("lognormal:1ms:5ms").expect("parse");
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut v: Vec<u64> = (0..200_000).map(|_| p.draw_ns(&mut rng)).collect();
        v.sort_unstable();
        let at = |q: f64| v[(q * v.len() as f64) as usize] as f64 / 1e6;
        assert!((at(0.5) - 1.0).abs() < 0.02, "p50 {} ms", at(0.5));
        assert!((at(0.99) - 5.0).abs() < 0.2, "p99 {} ms", at(0.99));
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!(
            (mean / p.mean_ns() - 1.0).abs() < 0.02,
            "{mean} vs {}",
            p.mean_ns()
        );
        let mut fixed = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        assert_eq!(
            Penalty::parse("1ms").unwrap().draw_ns(&mut fixed),
            1_000_000
        );
    }
}
