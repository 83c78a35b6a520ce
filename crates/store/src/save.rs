//! Writes one [`RunRecord`] in one transaction: the run row, its per-op rows,
//! histograms and probes commit together or not at all, so a crash or error
//! mid-save leaves no half-stored run and never touches runs saved earlier.
//!
//! It never measures, never talks to servers, and never changes a saved run.

use crate::db::{args, Db, TxKind};
use crate::layout::{HISTOGRAM_ENCODING, MEASURES, SERIES_HISTOGRAM};
use crate::{query, CellTag, Fault};
use kvbench_model::{PhaseResult, Probe, RunRecord};
use serde::Serialize;
use serde_json::Value;

pub(crate) fn save_run(db: &Db, record: &RunRecord, cell: Option<&CellTag>) -> Result<i64, Fault> {
    // A write transaction takes the write lock up front: on SQLite a
    // deferred transaction that first reads could hit SQLITE_BUSY on
    // upgrade, which the busy timeout cannot wait out.
    let tx = db.begin(TxKind::Write)?;
    let id = insert_run(&tx, record)?;
    if let Some(load) = &record.load {
        insert_phase(&tx, id, "load", load)?;
    }
    if let Some(run) = &record.run {
        insert_phase(&tx, id, "run", run)?;
    }
    insert_probes(&tx, id, &record.probes)?;
    crate::labels::insert(&tx, id, &record.labels)?;
    if let Some(cell) = cell {
        crate::experiment::insert_cell(&tx, id, cell)?;
    }
    // Read the run back before committing: a value that does not survive
    // the database or JSON (NaN, infinity) is refused now, with nothing stored,
    // instead of producing a run that get_run cannot return.
    let back = query::load_run(&tx, id).map_err(|fault| match fault {
        Fault::Json {
            field,
            run: Some(_),
            ..
        } => Fault::NotExact(field),
        other => other,
    })?;
    if let Some(part) = first_difference(record, &back) {
        return Err(Fault::NotExact(part));
    }
    tx.commit()?;
    Ok(id)
}

fn to_json<T: Serialize + ?Sized>(value: &T, field: &'static str) -> Result<String, Fault> {
    serde_json::to_string(value).map_err(|source| Fault::Json {
        field,
        run: None,
        source,
    })
}

fn insert_run(tx: &Db, r: &RunRecord) -> Result<i64, Fault> {
    let c = &r.config;
    let load_json = r.load.as_ref().map(|p| phase_json(p, "load")).transpose()?;
    let run_json = r.run.as_ref().map(|p| phase_json(p, "run")).transpose()?;
    let cpu_json = r.cpu.as_ref().map(|cpu| to_json(cpu, "cpu")).transpose()?;
    // RETURNING (SQLite 3.35+, PostgreSQL) rather than last_insert_rowid():
    // the same statement on both backends.
    let mut row = tx.query_row(
        "INSERT INTO runs (started_at, finished_at, status, failure, marks_json, warnings_json,
                           system, workload, records, operations, clients, pipeline, seed,
                           throughput, config_json, environment_json, cpu_json, load_json, run_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
         RETURNING id",
        &args![
            r.started_at,
            r.finished_at,
            r.status.as_str(),
            r.failure,
            to_json(&r.marks, "marks")?,
            to_json(&r.warnings, "warnings")?,
            c.system.as_str(),
            c.workload,
            c.records,
            c.operations,
            c.clients,
            c.pipeline,
            c.seed.to_string(),
            r.run.as_ref().map(|run| run.throughput),
            to_json(c, "config")?,
            to_json(&r.environment, "environment")?,
            cpu_json,
            load_json,
            run_json,
        ],
    )?;
    Ok(row.take(0)?)
}

/// The phase as JSON without the histograms (the ops' and the series'):
/// they are the bulk of a run and live in their own tables, so listing and
/// summarising never parse them.
fn phase_json(phase: &PhaseResult, field: &'static str) -> Result<String, Fault> {
    let mut value = serde_json::to_value(phase).map_err(|source| Fault::Json {
        field,
        run: None,
        source,
    })?;
    if let Some(ops) = value.get_mut("ops").and_then(Value::as_array_mut) {
        for op in ops.iter_mut().filter_map(Value::as_object_mut) {
            for (_, field) in MEASURES {
                op.remove(field);
            }
        }
    }
    if let Some(points) = value.get_mut("series").and_then(Value::as_array_mut) {
        for point in points.iter_mut().filter_map(Value::as_object_mut) {
            point.remove(SERIES_HISTOGRAM);
        }
    }
    to_json(&value, field)
}

fn insert_phase(tx: &Db, id: i64, phase: &str, result: &PhaseResult) -> Result<(), Fault> {
    const OP: &str =
        "INSERT INTO op_results (run_id, phase, op, completed, misses, errors, throughput,
                                 p50_us, p95_us, p99_us, p999_us, max_us, mean_us)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    const HISTOGRAM: &str = "INSERT INTO histograms (run_id, phase, op, measure, encoding, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    const INTERVAL: &str =
        "INSERT INTO interval_histograms (run_id, phase, op, second, encoding, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    for op in &result.ops {
        let l = &op.latency;
        tx.execute(
            OP,
            &args![
                id,
                phase,
                op.op.as_str(),
                op.completed,
                op.misses,
                op.errors,
                op.throughput,
                l.p50_us,
                l.p95_us,
                l.p99_us,
                l.p999_us,
                l.max_us,
                l.mean_us,
            ],
        )?;
        let measures = [
            ("latency", Some(&op.histogram)),
            ("service", op.service_histogram.as_ref()),
            ("lag", op.lag_histogram.as_ref()),
            ("miss", op.miss_histogram.as_ref()),
            ("app", op.app_histogram.as_ref()),
        ];
        for (measure, data) in measures {
            let Some(data) = data else { continue };
            // An empty latency histogram has no row; an open-loop histogram
            // that exists (even empty) has one, so Some("") round-trips.
            if measure == "latency" && data.is_empty() {
                continue;
            }
            tx.execute(
                HISTOGRAM,
                &args![id, phase, op.op.as_str(), measure, HISTOGRAM_ENCODING, data],
            )?;
        }
    }
    for point in result.series.iter().filter(|p| !p.histogram.is_empty()) {
        tx.execute(
            INTERVAL,
            &args![
                id,
                phase,
                point.op.as_str(),
                point.second,
                HISTOGRAM_ENCODING,
                point.histogram
            ],
        )?;
    }
    Ok(())
}

fn insert_probes(tx: &Db, id: i64, probes: &[Probe]) -> Result<(), Fault> {
    const PROBE: &str = "INSERT INTO probes (run_id, seq, stage, rss_bytes, server_memory_bytes,
                                              cpu_seconds, items, evictions, nodes_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
    for (seq, p) in probes.iter().enumerate() {
        let nodes = if p.nodes.is_empty() {
            None
        } else {
            Some(to_json(&p.nodes, "probes")?)
        };
        tx.execute(
            PROBE,
            &args![
                id,
                seq,
                p.stage,
                p.rss_bytes,
                p.server_memory_bytes,
                p.cpu_seconds,
                p.items,
                p.evictions,
                nodes,
            ],
        )?;
    }
    Ok(())
}

/// Names the first part of `saved` that `back` does not reproduce, ignoring
/// the id. The exhaustive destructuring makes a new model field a compile
/// error here until it is compared too.
fn first_difference(saved: &RunRecord, back: &RunRecord) -> Option<&'static str> {
    let RunRecord {
        id: _,
        started_at,
        finished_at,
        status,
        failure,
        marks,
        warnings,
        config,
        environment,
        load,
        run,
        probes,
        cpu,
        labels,
    } = saved;
    [
        (*started_at == back.started_at, "started_at"),
        (*finished_at == back.finished_at, "finished_at"),
        (*status == back.status, "status"),
        (*failure == back.failure, "failure"),
        (*marks == back.marks, "marks"),
        (*warnings == back.warnings, "warnings"),
        (*config == back.config, "config"),
        (*environment == back.environment, "environment"),
        (*load == back.load, "load"),
        (*run == back.run, "run"),
        (*probes == back.probes, "probes"),
        (*cpu == back.cpu, "cpu"),
        (*labels == back.labels, "labels"),
    ]
    .into_iter()
    .find(|(same, _)| !same)
    .map(|(_, part)| part)
}
