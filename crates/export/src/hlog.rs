//! `.hlog`: HdrHistogram interval logs, one per phase and operation kind,
//! with one interval histogram per second of the phase's window, written by
//! the hdrhistogram crate's interval log writer in the layout Java's
//! `HistogramLogWriter` uses (format version line, StartTime, BaseTime,
//! legend, then `start,length,max,compressed histogram` lines), so
//! `HistogramLogProcessor`, HistogramLogAnalyzer and the Python `hdrh`
//! reader take them as they are.
//!
//! Values are nanoseconds, as recorded (2 significant digits per second);
//! Interval_Max is in milliseconds (divided by 10^6, Java's default ratio).
//! Interval timestamps count seconds from the window's opening. StartTime and
//! BaseTime are the run's start, which precedes the window by the load phase
//! and the warm-up: kvbench does not store the wall-clock instant the window
//! opened.

use crate::{file_name, hist, phases, require_phases, run_id, ExportError, ExportFile, RunRecord};
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use kvbench_model::{OpKind, PhaseResult};
use std::time::{Duration, SystemTime};

/// Java's `HistogramLogWriter` default for Interval_Max: ns → ms.
const MAX_VALUE_DIVISOR: f64 = 1_000_000.0;
/// The log format version Java's writer announces.
const FORMAT_VERSION: &str = "[Histogram log format version 1.3]";
/// Java's legend line, which its readers skip.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// One interval log per phase and operation kind of `record`.
///
/// # Errors
/// [`ExportError::NoPhases`] for a run with no phase,
/// [`ExportError::NoIntervalHistograms`] for a run stored before kvbench
/// kept per-second histograms, [`ExportError::BadHistogram`] for stored data
/// that does not decode.
pub fn export(record: &RunRecord) -> Result<Vec<ExportFile>, ExportError> {
    let run = run_id(record);
    require_phases(record)?;
    let start = humantime::parse_rfc3339_weak(&record.started_at).ok();
    let mut files = Vec::new();
    for (phase, p) in phases(record) {
        for op in &p.ops {
            let intervals = intervals(run, phase, p, op.op)?;
            if op.completed > 0 && intervals.iter().all(|(_, _, h)| h.is_empty()) {
                return Err(ExportError::NoIntervalHistograms { run });
            }
            let comment = format!(
                "kvbench run {run}, phase {phase}, {op}: latency of completed operations in \
                 nanoseconds, one interval per second from the window's opening",
                op = op.op
            );
            files.push(ExportFile {
                name: file_name(run, phase, op.op, "hlog"),
                bytes: log(&comment, start, &intervals)
                    .map_err(|reason| ExportError::Hlog { run, reason })?,
            });
        }
    }
    Ok(files)
}

/// (start, length, histogram) of each second of `op` in `p`, in order. A
/// second without completions is an empty histogram, so a stall shows as a
/// gap of zero counts, as in the series.
fn intervals(
    run: i64,
    phase: &str,
    p: &PhaseResult,
    op: OpKind,
) -> Result<Vec<(Duration, Duration, Histogram<u64>)>, ExportError> {
    let mut decoded = Vec::new();
    for point in p.series.iter().filter(|s| s.op == op) {
        let h = if point.histogram.is_empty() {
            None
        } else {
            Some(
                hist::decode(&point.histogram).map_err(|reason| ExportError::BadHistogram {
                    run,
                    what: format!("{phase}/{op} second {}", point.second),
                    reason,
                })?,
            )
        };
        decoded.push((point.second, h));
    }
    // Empty seconds take the bounds of the recorded ones; with none
    // recorded, the engine's per-second bounds.
    let empty = match decoded.iter().find_map(|(_, h)| h.as_ref()) {
        Some(h) => Histogram::new_from(h),
        None => hist::empty(2),
    };
    Ok(decoded
        .into_iter()
        .map(|(second, h)| {
            let start = f64::from(second);
            // The last second may be cut short by the window's end.
            let length = (p.duration_s - start).clamp(0.0, 1.0);
            (
                Duration::from_secs(u64::from(second)),
                Duration::from_secs_f64(length),
                h.unwrap_or_else(|| empty.clone()),
            )
        })
        .collect())
}

/// The log text: Java's header lines, then one line per interval.
fn log(
    comment: &str,
    start: Option<SystemTime>,
    intervals: &[(Duration, Duration, Histogram<u64>)],
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut header = IntervalLogWriterBuilder::new();
        header.add_comment(FORMAT_VERSION).add_comment(comment);
        if let Some(t) = start {
            header.with_start_time(t).with_base_time(t);
        }
        header
            .begin_log_with(&mut out, &mut serializer)
            .map_err(|e| e.to_string())?;
    }
    // The crate's writer has no legend; Java writes it after the header and
    // before the first interval, and its readers skip it.
    out.extend_from_slice(LEGEND.as_bytes());
    let mut writer = IntervalLogWriterBuilder::new()
        .with_max_value_divisor(MAX_VALUE_DIVISOR)
        .begin_log_with(&mut out, &mut serializer)
        .map_err(|e| e.to_string())?;
    for (start, length, h) in intervals {
        writer
            .write_histogram(h, *start, *length, None)
            .map_err(|e| e.to_string())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    fn entries(bytes: &[u8]) -> Vec<(f64, f64, u64, u64)> {
        IntervalLogIterator::new(bytes)
            .filter_map(|e| match e.expect("parses") {
                LogEntry::Interval(i) => {
                    // The crate's deserializer reads the compressed form too.
                    let h = crate::hist::decode(i.encoded_histogram()).expect("decodes");
                    Some((
                        i.start_timestamp().as_secs_f64(),
                        i.duration().as_secs_f64(),
                        h.len(),
                        h.max(),
                    ))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn one_interval_per_second_with_javas_header() {
        let files = export(&crate::tests::sample_record()).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "run-7-load-insert.hlog",
                "run-7-run-read.hlog",
                "run-7-run-update.hlog"
            ]
        );
        let text = String::from_utf8(files[1].bytes.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "#[Histogram log format version 1.3]");
        assert!(lines[1].starts_with("#kvbench run 7, phase run, read"));
        assert!(lines[2].starts_with("#[StartTime: 1772366400.000 (seconds since epoch)"));
        assert_eq!(
            lines[3],
            "#[BaseTime: 1772366400.000 (seconds since epoch)]"
        );
        assert_eq!(lines[4], LEGEND.trim_end());
        // Reads: 90 in second 0, none in second 1 (the stall), 10 in the
        // last half second.
        let got = entries(&files[1].bytes);
        assert_eq!(got.len(), 3);
        assert_eq!((got[0].0, got[0].1, got[0].2), (0.0, 1.0, 90));
        assert_eq!((got[1].0, got[1].2), (1.0, 0));
        assert_eq!((got[2].0, got[2].1, got[2].2), (2.0, 0.5, 10));
        assert!(got[2].3 >= 900_000);
    }

    #[test]
    fn a_run_stored_before_version_4_is_refused_by_name() {
        let mut r = crate::tests::sample_record();
        for p in [r.load.as_mut(), r.run.as_mut()].into_iter().flatten() {
            for s in &mut p.series {
                s.histogram.clear();
            }
        }
        let err = export(&r).unwrap_err().to_string();
        assert!(
            err.contains("run 7") && err.contains("schema version 4"),
            "{err}"
        );
        r.load = None;
        r.run = None;
        assert!(matches!(
            export(&r),
            Err(ExportError::NoPhases { run: 7, .. })
        ));
    }
}
