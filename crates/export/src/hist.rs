//! Histogram arithmetic the formats share: decoding stored histograms and
//! HdrHistogram's reference (Java) percentile walk, mean and standard
//! deviation, computed the way the Java implementation computes them so that
//! `.hgrm` files match what `outputPercentileDistribution` prints.
//!
//! It formats nothing; `hgrm` and `memtier` do.

use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// A stored histogram (HdrHistogram V2, base64) back as a histogram.
///
/// # Errors
/// A message when the text is not base64 or not a serialised histogram.
pub(crate) fn decode(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("not an HdrHistogram: {e:?}"))
}

/// An empty histogram with the engine's bounds (1 ns to 60 s) at `sigfig`
/// significant digits: 3 for a phase's histograms, 2 for a second's.
pub(crate) fn empty(sigfig: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, sigfig).expect("constant, valid histogram bounds")
}

/// One line of a percentile distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PercentileStep {
    /// Highest value equivalent to the bucket reached (recorded units).
    pub value: u64,
    /// The percentile level iterated to, 0 to 100.
    pub percentile: f64,
    /// Values recorded at or below `value`.
    pub total: u64,
}

/// The steps of Java's `PercentileIterator`: levels advance in fixed ticks
/// within each half of the remaining distance to 100%, and a last step at
/// exactly 100%. Computed in percent, as Java does (not in quantiles, as the
/// Rust crate's `iter_quantiles` does), so that the levels printed are
/// Java's to the last digit.
pub(crate) fn percentile_steps(
    h: &Histogram<u64>,
    ticks_per_half_distance: u32,
) -> Vec<PercentileStep> {
    let total_count = h.len();
    if total_count == 0 {
        return Vec::new();
    }
    // Only buckets with counts can reach a level, so walking the recorded
    // buckets visits every place Java's walk over all buckets stops at.
    let buckets: Vec<(u64, u64)> = h
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    let mut steps = Vec::new();
    let mut level = 0.0_f64;
    let mut reached_last = false;
    let mut total = 0_u64;
    let mut index = 0;
    let mut fresh = true;
    loop {
        if total >= total_count {
            if reached_last {
                return steps;
            }
            level = 100.0;
            reached_last = true;
        }
        loop {
            let Some(&(value, count)) = buckets.get(index) else {
                return steps;
            };
            if fresh {
                total += count;
                fresh = false;
            }
            if 100.0 * total as f64 / total_count as f64 >= level {
                steps.push(PercentileStep {
                    value,
                    percentile: level,
                    total,
                });
                level = next_level(level, ticks_per_half_distance);
                break;
            }
            index += 1;
            fresh = true;
        }
    }
}

/// Java's `PercentileIterator.incrementIterationLevel`, overflow included.
fn next_level(level: f64, ticks_per_half_distance: u32) -> f64 {
    let halvings = ((100.0 / (100.0 - level)).ln() / 2f64.ln()) as i64;
    // Java: (long) Math.pow(2, halvings + 1), which saturates.
    let scale = 2f64.powi(halvings.saturating_add(1).clamp(0, 1023) as i32) as i64;
    let ticks = i64::from(ticks_per_half_distance).wrapping_mul(scale);
    level + 100.0 / ticks as f64
}

/// The mean as Java's `getMean` computes it: each bucket at its median
/// equivalent value, summed, then divided once.
pub(crate) fn mean(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let total: f64 = h
        .iter_recorded()
        .map(|v| h.median_equivalent(v.value_iterated_to()) as f64 * v.count_at_value() as f64)
        .sum();
    total / h.len() as f64
}

/// The standard deviation as Java's `getStdDeviation` computes it.
pub(crate) fn std_deviation(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let mean = mean(h);
    let total: f64 = h
        .iter_recorded()
        .map(|v| {
            let deviation = h.median_equivalent(v.value_iterated_to()) as f64 - mean;
            deviation * deviation * v.count_at_value() as f64
        })
        .sum();
    (total / h.len() as f64).sqrt()
}

/// Java's `subBucketCount`: the counts array holds `(buckets + 1)` halves of
/// it, which is all the Rust crate exposes.
pub(crate) fn sub_bucket_count(h: &Histogram<u64>) -> usize {
    2 * h.distinct_values() / (usize::from(h.buckets()) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for &(v, n) in values {
            h.record_n(v, n).unwrap();
        }
        h
    }

    #[test]
    fn steps_follow_javas_tick_levels_and_end_at_100() {
        let values: Vec<(u64, u64)> = (1..=1000).map(|v| (v, 1)).collect();
        let steps = percentile_steps(&histogram(&values), 5);
        let levels: Vec<f64> = steps.iter().take(12).map(|s| s.percentile).collect();
        // Ten ticks of 10% up to 50%, then ticks of 5% up to 75%, ...
        assert_eq!(
            levels,
            [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 77.5]
        );
        assert_eq!(steps[0].value, 1);
        assert_eq!((steps[1].value, steps[1].total), (100, 100));
        let last = steps.last().unwrap();
        assert_eq!(
            (last.percentile, last.value, last.total),
            (100.0, 1000, 1000)
        );
        // The step before the last reached every value too.
        let before = steps[steps.len() - 2];
        assert_eq!(before.total, 1000);
        assert!(before.percentile < 100.0);
    }

    #[test]
    fn one_value_gives_the_first_and_the_last_step() {
        let steps = percentile_steps(&histogram(&[(5_000, 3)]), 5);
        assert_eq!(steps.len(), 2);
        assert_eq!((steps[0].percentile, steps[0].total), (0.0, 3));
        assert_eq!((steps[1].percentile, steps[1].value), (100.0, 5_003));
        assert!(percentile_steps(&histogram(&[]), 5).is_empty());
    }

    #[test]
    fn mean_and_deviation_use_median_equivalents() {
        let h = histogram(&[(1_000, 1), (3_000, 1)]);
        assert_eq!(mean(&h), 2_000.5, "3000 sits in a 2-wide bucket: 3001");
        assert_eq!(std_deviation(&h), 1_000.5);
        assert_eq!(mean(&histogram(&[])), 0.0);
    }

    #[test]
    fn sub_buckets_match_java_for_the_engines_histograms() {
        assert_eq!(sub_bucket_count(&histogram(&[])), 2048);
        let two = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 2).unwrap();
        assert_eq!(sub_bucket_count(&two), 256);
    }

    #[test]
    fn decode_refuses_garbage() {
        assert!(decode("not base64!").unwrap_err().contains("base64"));
        assert!(decode("AAAA").unwrap_err().contains("HdrHistogram"));
    }
}
