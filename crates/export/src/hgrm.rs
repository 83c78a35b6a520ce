//! `.hgrm`: the percentile distribution that HdrHistogram's Java
//! `outputPercentileDistribution(out, 5, 1000.0)` prints, byte for byte: the
//! header, one line per percentile step (5 ticks per half distance), the
//! 100% line without its last column, and the Mean/StdDeviation, Max/Total
//! count and Buckets/SubBuckets footer. HdrHistogram's plotFiles.html and
//! other tools that read Java's output read these.
//!
//! Values are in microseconds: kvbench records nanoseconds and the scaling
//! ratio is 1000, as Java's would be for the same histogram.

use crate::hist::{self, PercentileStep};
use crate::{file_name, phases, require_phases, run_id, ExportError, ExportFile, RunRecord};
use hdrhistogram::Histogram;

/// Java's default: five percentile steps per half of the remaining distance.
const TICKS_PER_HALF_DISTANCE: u32 = 5;
/// Nanoseconds recorded, microseconds printed.
const NS_PER_US: f64 = 1000.0;

/// One `.hgrm` file per phase and operation kind of `record`, from each
/// operation's response-time histogram.
///
/// # Errors
/// [`ExportError::NoPhases`] for a run with no phase, and
/// [`ExportError::BadHistogram`] for a stored histogram that does not decode.
pub fn export(record: &RunRecord) -> Result<Vec<ExportFile>, ExportError> {
    let run = run_id(record);
    require_phases(record)?;
    let mut files = Vec::new();
    for (phase, p) in phases(record) {
        for op in &p.ops {
            // No completions, no row: the empty histogram's Buckets and
            // SubBuckets still show, so give it the engine's bounds.
            let h = if op.histogram.is_empty() {
                hist::empty(3)
            } else {
                hist::decode(&op.histogram).map_err(|reason| bad(run, phase, op.op, reason))?
            };
            files.push(ExportFile {
                name: file_name(run, phase, op.op, "hgrm"),
                bytes: distribution(&h, NS_PER_US).into_bytes(),
            });
        }
    }
    Ok(files)
}

fn bad(run: i64, phase: &str, op: kvbench_model::OpKind, reason: String) -> ExportError {
    ExportError::BadHistogram {
        run,
        what: format!("{phase}/{op}"),
        reason,
    }
}

/// The distribution text of `h`, values divided by `scale`.
pub(crate) fn distribution(h: &Histogram<u64>, scale: f64) -> String {
    let digits = usize::from(h.sigfig());
    let mut out = format!(
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for PercentileStep {
        value,
        percentile,
        total,
    } in hist::percentile_steps(h, TICKS_PER_HALF_DISTANCE)
    {
        let quantile = percentile / 100.0;
        out.push_str(&format!(
            "{:>12} {:>2} {:>10}",
            fixed(value as f64 / scale, digits),
            fixed(quantile, 12),
            total
        ));
        if percentile != 100.0 {
            out.push_str(&format!(" {:>14}", fixed(1.0 / (1.0 - quantile), 2)));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "#[Mean    = {:>12}, StdDeviation   = {:>12}]\n",
        fixed(hist::mean(h) / scale, digits),
        fixed(hist::std_deviation(h) / scale, digits)
    ));
    out.push_str(&format!(
        "#[Max     = {:>12}, Total count    = {:>12}]\n",
        fixed(h.max() as f64 / scale, digits),
        h.len()
    ));
    out.push_str(&format!(
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]\n",
        h.buckets(),
        hist::sub_bucket_count(h)
    ));
    out
}

/// `x` with `decimals` digits after the point, as Java's `%.Nf` writes it:
/// the shortest decimal that reads back as `x`, rounded half up (Rust's
/// `{:.N}` rounds the exact binary value, so 0.125 and 1.2345 would differ).
fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // Digits before the point; pad so that there is at least one, every
    // kept decimal, and the digit that decides the rounding.
    let mut point = exponent + 1;
    if point < 1 {
        let zeros = (1 - point) as usize;
        digits.splice(0..0, std::iter::repeat_n(0, zeros));
        point = 1;
    }
    let point = point as usize;
    let keep = point + decimals;
    if digits.len() < keep + 1 {
        digits.resize(keep + 1, 0);
    }
    let round_up = digits[keep] >= 5;
    digits.truncate(keep);
    let mut point = point;
    if round_up {
        let mut i = keep;
        loop {
            if i == 0 {
                digits.insert(0, 1);
                point += 1;
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let text = |d: &[u8]| d.iter().map(|d| char::from(b'0' + d)).collect::<String>();
    let integer = text(&digits[..point]);
    let integer = integer.trim_start_matches('0');
    let mut out = String::new();
    if x.is_sign_negative() && digits.iter().any(|&d| d != 0) {
        out.push('-');
    }
    out.push_str(if integer.is_empty() { "0" } else { integer });
    if decimals > 0 {
        out.push('.');
        out.push_str(&text(&digits[point..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_rounds_half_up_like_java() {
        assert_eq!(fixed(0.125, 2), "0.13");
        assert_eq!(fixed(1.2345, 3), "1.235");
        assert_eq!(fixed(0.15, 1), "0.2");
        assert_eq!(fixed(999.9996, 3), "1000.000");
        assert_eq!(fixed(0.0, 12), "0.000000000000");
        assert_eq!(fixed(0.990625, 12), "0.990625000000");
        assert_eq!(fixed(1e-7, 3), "0.000");
        assert_eq!(fixed(123_456_789.0, 2), "123456789.00");
        assert_eq!(fixed(2.5e-3, 3), "0.003");
        assert_eq!(fixed(f64::INFINITY, 2), "Infinity");
        assert_eq!(fixed(1.0 / 3.0, 2), "0.33");
    }

    #[test]
    fn layout_matches_javas_output_percentile_distribution() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for v in 1..=4 {
            h.record(v * 1000).unwrap();
        }
        let text = distribution(&h, 1000.0);
        // Printed by HdrHistogram 2.2.2 (Java) for the same histogram.
        let expected = concat!(
            "       Value     Percentile TotalCount 1/(1-Percentile)\n",
            "\n",
            "       1.000 0.000000000000          1           1.00\n",
            "       1.000 0.100000000000          1           1.11\n",
            "       1.000 0.200000000000          1           1.25\n",
            "       2.000 0.300000000000          2           1.43\n",
            "       2.000 0.400000000000          2           1.67\n",
            "       2.000 0.500000000000          2           2.00\n",
            "       3.001 0.550000000000          3           2.22\n",
            "       3.001 0.600000000000          3           2.50\n",
            "       3.001 0.650000000000          3           2.86\n",
            "       3.001 0.700000000000          3           3.33\n",
            "       3.001 0.750000000000          3           4.00\n",
            "       4.001 0.775000000000          4           4.44\n",
            "       4.001 1.000000000000          4\n",
            "#[Mean    =        2.501, StdDeviation   =        1.118]\n",
            "#[Max     =        4.001, Total count    =            4]\n",
            "#[Buckets =           26, SubBuckets     =         2048]\n",
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn one_file_per_phase_and_op() {
        let files = export(&crate::tests::sample_record()).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "run-7-load-insert.hgrm",
                "run-7-run-read.hgrm",
                "run-7-run-update.hgrm"
            ]
        );
        let text = String::from_utf8(files[1].bytes.clone()).unwrap();
        assert!(text.contains("Total count    =          100]"), "{text}");
    }
}
