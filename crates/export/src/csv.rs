//! CSV: one row per run x phase x operation kind, each row carrying the
//! configuration that tells runs apart, so a spreadsheet or pandas can group
//! and filter without joining anything.
//!
//! Numbers are written as stored (shortest text that reads back to the same
//! f64), latencies in microseconds. A run with no phase (it failed before
//! one finished) still gets one row, with the phase columns empty, so every
//! selected run appears.

use crate::{phases, run_id, ExportError, RunRecord};
use kvbench_model::{OpResult, PhaseResult};
use serde::Serialize;

/// The header, in column order; a test checks it against [`Row`].
pub const COLUMNS: [&str; 41] = [
    "run_id",
    "started_at",
    "finished_at",
    "status",
    "system",
    "topology",
    "nodes",
    "workload",
    "records",
    "operations",
    "duration_s",
    "clients",
    "pipeline",
    "threads",
    "rate",
    "arrival",
    "seed",
    "field_count",
    "field_length",
    "read_proportion",
    "update_proportion",
    "insert_proportion",
    "request_distribution",
    "warmup_s",
    "io",
    "target",
    "server_version",
    "phase",
    "phase_duration_s",
    "op",
    "completed",
    "misses",
    "errors",
    "throughput",
    "min_us",
    "mean_us",
    "p50_us",
    "p95_us",
    "p99_us",
    "p999_us",
    "max_us",
];

/// One CSV line. `None` is an empty field: the phase and operation columns
/// of a run without phases.
#[derive(Serialize)]
struct Row<'a> {
    run_id: i64,
    started_at: &'a str,
    finished_at: &'a str,
    status: &'static str,
    system: &'static str,
    topology: &'static str,
    nodes: u32,
    workload: &'a str,
    records: u64,
    operations: u64,
    duration_s: Option<f64>,
    clients: u32,
    pipeline: u32,
    threads: u32,
    rate: Option<f64>,
    arrival: Option<&'a str>,
    seed: u64,
    field_count: u32,
    field_length: u32,
    read_proportion: f64,
    update_proportion: f64,
    insert_proportion: f64,
    request_distribution: &'a str,
    warmup_s: f64,
    io: Option<&'a str>,
    target: Option<&'a str>,
    server_version: &'a str,
    phase: Option<&'static str>,
    phase_duration_s: Option<f64>,
    op: Option<&'static str>,
    completed: Option<u64>,
    misses: Option<u64>,
    errors: Option<u64>,
    throughput: Option<f64>,
    min_us: Option<f64>,
    mean_us: Option<f64>,
    p50_us: Option<f64>,
    p95_us: Option<f64>,
    p99_us: Option<f64>,
    p999_us: Option<f64>,
    max_us: Option<f64>,
}

/// The row of run `r` alone: every phase and operation column empty.
fn run_row(r: &RunRecord) -> Row<'_> {
    let c = &r.config;
    Row {
        run_id: run_id(r),
        started_at: &r.started_at,
        finished_at: &r.finished_at,
        status: r.status.as_str(),
        system: c.system.as_str(),
        topology: c.topology.as_str(),
        nodes: c.nodes,
        workload: &c.workload,
        records: c.records,
        operations: c.operations,
        duration_s: c.duration_s,
        clients: c.clients,
        pipeline: c.pipeline,
        threads: c.threads,
        rate: c.rate,
        arrival: c.arrival.as_deref(),
        seed: c.seed,
        field_count: c.field_count,
        field_length: c.field_length,
        read_proportion: c.read_proportion,
        update_proportion: c.update_proportion,
        insert_proportion: c.insert_proportion,
        request_distribution: &c.request_distribution,
        warmup_s: c.warmup_s,
        io: c.io.as_deref(),
        target: c.target.as_deref(),
        server_version: &r.environment.server_version,
        phase: None,
        phase_duration_s: None,
        op: None,
        completed: None,
        misses: None,
        errors: None,
        throughput: None,
        min_us: None,
        mean_us: None,
        p50_us: None,
        p95_us: None,
        p99_us: None,
        p999_us: None,
        max_us: None,
    }
}

/// The row of one operation kind of one phase of run `r`.
fn op_row<'a>(r: &'a RunRecord, phase: &'static str, p: &PhaseResult, op: &OpResult) -> Row<'a> {
    let l = &op.latency;
    Row {
        phase: Some(phase),
        phase_duration_s: Some(p.duration_s),
        op: Some(op.op.as_str()),
        completed: Some(op.completed),
        misses: Some(op.misses),
        errors: Some(op.errors),
        throughput: Some(op.throughput),
        min_us: Some(l.min_us),
        mean_us: Some(l.mean_us),
        p50_us: Some(l.p50_us),
        p95_us: Some(l.p95_us),
        p99_us: Some(l.p99_us),
        p999_us: Some(l.p999_us),
        max_us: Some(l.max_us),
        ..run_row(r)
    }
}

/// The CSV of `records`, header first, rows in the records' order and
/// within a run by phase (load, run) and operation kind.
///
/// # Errors
/// Only if serialisation itself fails.
pub fn export(records: &[RunRecord]) -> Result<Vec<u8>, ExportError> {
    // The header is written by hand so that an export of no runs still has one.
    let mut w = ::csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(COLUMNS)?;
    for r in records {
        let mut rows = 0;
        for (name, phase) in phases(r) {
            for op in &phase.ops {
                w.serialize(op_row(r, name, phase, op))?;
                rows += 1;
            }
        }
        if rows == 0 {
            w.serialize(run_row(r))?;
        }
    }
    w.into_inner()
        .map_err(|e| ExportError::Csv(::csv::Error::from(e.into_error())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_the_row_fields_in_order() {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        let r = crate::tests::sample_record();
        w.serialize(run_row(&r)).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), COLUMNS.join(","));
    }

    #[test]
    fn a_run_without_phases_keeps_one_row_with_empty_phase_columns() {
        let mut r = crate::tests::sample_record();
        r.load = None;
        r.run = None;
        let text = String::from_utf8(export(&[r]).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with("7,"), "{}", lines[1]);
        assert!(lines[1].ends_with(",,,,,,,,,,,,,,"), "{}", lines[1]);
    }

    #[test]
    fn one_row_per_phase_and_op() {
        let r = crate::tests::sample_record();
        let text = String::from_utf8(export(&[r.clone(), r]).unwrap()).unwrap();
        // 2 runs x (1 load op + 2 run ops), plus the header.
        assert_eq!(text.lines().count(), 7);
        assert!(text.lines().nth(2).unwrap().contains(",run,"));
    }
}
