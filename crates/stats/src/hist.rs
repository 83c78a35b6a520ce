//! Latency histograms as kvbench stores them, and what is read back from
//! them: HdrHistogram V2 (uncompressed) bytes in base64, readable by every
//! HdrHistogram implementation; sums of several (iterations, workers) so
//! percentiles are over every request, never averages of percentiles; and
//! the percentile spectrum a report draws.

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use hdrhistogram::Histogram;
use kvbench_model::LatencySummary;

/// Percentiles of a nanosecond histogram, in microseconds.
pub fn summarize(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    LatencySummary {
        count: h.len(),
        min_us: us(h.min()),
        mean_us: h.mean() / 1000.0,
        p50_us: us(h.value_at_quantile(0.50)),
        p95_us: us(h.value_at_quantile(0.95)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
    }
}

/// HdrHistogram V2 (uncompressed) bytes, base64: readable by every
/// HdrHistogram implementation, so stored runs can be re-analysed elsewhere.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Serialising into a Vec cannot fail for a valid histogram.
    let _ = V2Serializer::new().serialize(h, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Inverse of [`encode_histogram`].
///
/// # Errors
/// A message when the text is not base64 or not a V2 histogram.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram is not HdrHistogram V2: {e:?}"))
}

/// The sum of stored histograms (as [`encode_histogram`] writes them):
/// percentiles over every value of all of them. `None` for none.
///
/// # Errors
/// A message when one cannot be decoded or added.
pub fn merge_encoded<'a>(
    texts: impl IntoIterator<Item = &'a str>,
) -> Result<Option<Histogram<u64>>, String> {
    let mut merged: Option<Histogram<u64>> = None;
    for text in texts {
        let h = decode_histogram(text)?;
        match &mut merged {
            None => merged = Some(h),
            Some(m) => m
                .add(&h)
                .map_err(|e| format!("cannot add histograms: {e:?}"))?,
        }
    }
    Ok(merged)
}

/// Nines of the spectrum's last point: 99.999%.
pub const SPECTRUM_NINES: f64 = 5.0;

/// The latency (us) at percentiles spread evenly over "nines" (0, 90, 99,
/// 99.9, ... up to [`SPECTRUM_NINES`], `per_nine` points each), as
/// `(nines, percentile, us)`: nines = -log10(1 - p), the x axis of a
/// percentile spectrum, where the tail gets as much room as the body.
/// Points beyond what the histogram's count can resolve (a 99.999th
/// percentile of 1,000 values is just the maximum) are left out.
pub fn spectrum(h: &Histogram<u64>, per_nine: u32) -> Vec<(f64, f64, f64)> {
    if h.is_empty() || per_nine == 0 {
        return Vec::new();
    }
    let resolvable = (h.len() as f64).log10().min(SPECTRUM_NINES);
    let steps = (SPECTRUM_NINES * per_nine as f64).round() as u32;
    (0..=steps)
        .map(|i| i as f64 / per_nine as f64)
        .take_while(|&n| n <= resolvable + 1e-9)
        .map(|nines| {
            let q = 1.0 - 10f64.powf(-nines);
            (nines, q * 100.0, h.value_at_quantile(q) as f64 / 1000.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values_ns: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("bounds");
        for v in values_ns {
            h.record(v).expect("in range");
        }
        h
    }

    #[test]
    fn a_stored_histogram_reads_back_and_sums_are_over_every_value() {
        let a = of((1..=1000).map(|i| i * 1000));
        let b = of((1..=1000).map(|i| 2_000_000 + i * 1000));
        let merged = merge_encoded([encode_histogram(&a).as_str(), encode_histogram(&b).as_str()])
            .expect("decodes")
            .expect("two");
        assert_eq!(merged.len(), 2000);
        let s = summarize(&merged);
        // The median of both together lies between the two sets, which no
        // average of their medians (500 us and 2,500 us -> 1,500 us) says.
        assert!(s.p50_us > 990.0 && s.p50_us < 1010.0, "{s:?}");
        assert!(merge_encoded(["not base64!"]).is_err());
        assert!(merge_encoded(std::iter::empty()).expect("none").is_none());
    }

    #[test]
    fn the_spectrum_goes_as_far_as_the_count_resolves() {
        let h = of((1..=10_000).map(|i| i * 100));
        let s = spectrum(&h, 4);
        // 10,000 values resolve four nines (99.99%), not five.
        let last = s.last().expect("points");
        assert!((last.0 - 4.0).abs() < 1e-9, "{last:?}");
        assert_eq!(s.len(), 17);
        assert!((s[4].1 - 90.0).abs() < 1e-9);
        // The 90th percentile of 100 ns .. 1 ms is 0.9 ms, within 0.1%.
        assert!((s[4].2 - 900.0).abs() < 1.0, "{:?}", s[4]);
        assert!(s.windows(2).all(|w| w[0].2 <= w[1].2));
        assert!(spectrum(&of([]), 4).is_empty());
    }
}
