//! A latency objective as users write it: `p99=1ms`.

use serde::Serialize;
use std::str::FromStr;

/// A latency objective: percentile `percentile` at most `limit_us`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Slo {
    /// The percentile, above 0 and below 100.
    pub percentile: f64,
    /// The limit, in microseconds.
    pub limit_us: f64,
}

impl FromStr for Slo {
    type Err = String;
    /// `p99=1ms`, `p99.9<500us`, `p50:2ms`.
    fn from_str(text: &str) -> Result<Slo, String> {
        let form = "write it as pNN=DURATION, e.g. p99=1ms or p99.9=500us";
        let (p, limit) = text
            .split_once(['=', '<', ':'])
            .ok_or_else(|| format!("no limit given; {form}"))?;
        let percentile: f64 = p
            .trim()
            .strip_prefix('p')
            .and_then(|n| n.parse().ok())
            .filter(|n: &f64| *n > 0.0 && *n < 100.0)
            .ok_or_else(|| {
                format!("'{p}' is not a percentile between p0 and p100 (exclusive); {form}")
            })?;
        let limit = humantime::parse_duration(limit.trim())
            .map_err(|e| format!("'{}' is not a duration ({e}); {form}", limit.trim()))?;
        if limit.is_zero() {
            return Err("the limit must be longer than 0".into());
        }
        Ok(Slo {
            percentile,
            limit_us: limit.as_nanos() as f64 / 1e3,
        })
    }
}

impl std::fmt::Display for Slo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "p{} <= {} us", self.percentile, self.limit_us)
    }
}

#[cfg(test)]
mod tests {
    use super::Slo;

    #[test]
    fn objectives_parse_in_each_spelling_and_bad_ones_say_why() {
        for (text, percentile, limit_us) in [
            ("p99=1ms", 99.0, 1000.0),
            ("p99.9<500us", 99.9, 500.0),
            ("p50:2ms", 50.0, 2000.0),
            (" p90 = 1s ", 90.0, 1e6),
        ] {
            let slo: Slo = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                (slo.percentile, slo.limit_us),
                (percentile, limit_us),
                "{text}"
            );
        }
        for (text, says) in [
            ("p99", "no limit given"),
            ("99=1ms", "not a percentile"),
            ("p100=1ms", "not a percentile"),
            ("p0=1ms", "not a percentile"),
            ("p99=fast", "not a duration"),
            ("p99=0s", "longer than 0"),
        ] {
            let err = text.parse::<Slo>().expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
        let slo: Slo = "p99=1ms".parse().expect("parses");
        assert_eq!(slo.to_string(), "p99 <= 1000 us");
    }
}
