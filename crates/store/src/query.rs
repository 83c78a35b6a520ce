//! Reads runs back: whole records for reports and exporters, summary rows for
//! listings.
//!
//! It only reads; it never writes, never draws, never talks to servers.
//! Formatting belongs to the report crate.

use crate::db::{args, Db, FromValue, TxKind, Value as SqlValue};
use crate::layout::{HISTOGRAM_ENCODING, MEASURES, SERIES_HISTOGRAM};
use crate::Fault;
use kvbench_model::{PhaseResult, Probe, RunRecord, RunStatus};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::RangeInclusive;

/// Which runs [`crate::Store::list_runs`] returns; `None` fields match all.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Exact system name (`redis`, `memcached`).
    pub system: Option<String>,
    /// Exact workload name, as stored in the run's config.
    pub workload: Option<String>,
    /// Exact status (`ok`, `invalid`, `failed`).
    pub status: Option<String>,
    /// At most this many runs (the newest).
    pub limit: Option<usize>,
    /// Only runs with every one of these labels: the key with this value,
    /// or with any value when the value is `None`.
    pub labels: Vec<(String, Option<String>)>,
    /// Only these runs (ids that are not stored are not listed).
    pub ids: Option<Vec<i64>>,
}

/// Which runs a command covers (`kvbench export`). A selection is resolved
/// to ids by [`crate::Store::select_runs`], so adding a way to select (an
/// experiment's name, labels) is one variant and one query here, and the
/// commands that take a selection do not change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunSelection {
    /// Every stored run.
    All,
    /// These ids, as inclusive ranges (`3,5-9` is `3..=3, 5..=9`); every id
    /// in them must exist.
    Ids(Vec<RangeInclusive<i64>>),
    /// Every run an experiment of this name stored, of every pass.
    Experiment(String),
    /// Every run with this label key: with this value, or with any value
    /// when the value is `None`.
    Label(String, Option<String>),
}

/// One line of a run listing: enough to pick a run, without parsing its
/// JSON or histograms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// Store id, for `get_run` and the CLI.
    pub id: i64,
    /// Wall-clock start (RFC 3339, UTC).
    pub started_at: String,
    /// `ok`, `invalid` or `failed`.
    pub status: String,
    /// Server kind.
    pub system: String,
    /// Workload name.
    pub workload: String,
    /// Client connections in the run phase.
    pub clients: u32,
    /// Records loaded.
    pub records: u64,
    /// Run-phase throughput; `None` without a run phase and always for a
    /// failed run, whose numbers are never a result.
    pub throughput: Option<f64>,
    /// Run-phase read p99 in microseconds, same rules as `throughput`.
    pub read_p99_us: Option<f64>,
    /// Run-phase update p99 in microseconds, same rules as `throughput`.
    pub update_p99_us: Option<f64>,
    /// Why the run failed, when it did.
    pub failure: Option<String>,
    /// The run's labels.
    pub labels: BTreeMap<String, String>,
}

pub(crate) fn get_run(db: &Db, id: i64) -> Result<RunRecord, Fault> {
    // One read transaction, so the run row and its child rows come from the
    // same snapshot even while another process saves.
    let tx = db.begin(TxKind::Read)?;
    load_run(&tx, id)
    // Dropping `tx` rolls back, which for a read-only transaction just ends it.
}

/// `field` is the RunRecord field the `{field}_json` column holds.
fn from_json<T: DeserializeOwned>(text: &str, field: &'static str, id: i64) -> Result<T, Fault> {
    serde_json::from_str(text).map_err(|source| Fault::Json {
        field,
        run: Some(id),
        source,
    })
}

/// Reassembles run `id` on `conn`; `save` uses it inside its own transaction
/// to check the round trip before committing.
pub(crate) fn load_run(conn: &Db, id: i64) -> Result<RunRecord, Fault> {
    struct Row {
        started_at: String,
        finished_at: String,
        status: String,
        failure: Option<String>,
        marks: String,
        warnings: String,
        config: String,
        environment: String,
        cpu: Option<String>,
        load: Option<String>,
        run: Option<String>,
    }
    let mut r = conn
        .query_opt(
            "SELECT started_at, finished_at, status, failure, marks_json, warnings_json,
                    config_json, environment_json, cpu_json, load_json, run_json
             FROM runs WHERE id = ?1",
            &args![id],
        )?
        .ok_or(Fault::NotFound(id))?;
    let row = Row {
        started_at: r.take(0)?,
        finished_at: r.take(1)?,
        status: r.take(2)?,
        failure: r.take(3)?,
        marks: r.take(4)?,
        warnings: r.take(5)?,
        config: r.take(6)?,
        environment: r.take(7)?,
        cpu: r.take(8)?,
        load: r.take(9)?,
        run: r.take(10)?,
    };

    let status: RunStatus = serde_json::from_value(Value::String(row.status.clone()))
        .map_err(|_| Fault::Corrupt(format!("run {id} has unknown status '{}'", row.status)))?;

    let mut histograms = load_histograms(conn, id)?;
    let load = row
        .load
        .map(|text| decode_phase(&text, "load", id, &mut histograms))
        .transpose()?;
    let run = row
        .run
        .map(|text| decode_phase(&text, "run", id, &mut histograms))
        .transpose()?;
    if let Some((phase, op, measure)) = histograms.ops.keys().next() {
        return Err(Fault::Corrupt(format!(
            "run {id} has a {phase}/{op} {measure} histogram but no such operation"
        )));
    }
    if let Some((phase, op, second)) = histograms.intervals.keys().next() {
        return Err(Fault::Corrupt(format!(
            "run {id} has a {phase}/{op} histogram for second {second} but no such series point"
        )));
    }

    Ok(RunRecord {
        id: Some(id),
        started_at: row.started_at,
        finished_at: row.finished_at,
        status,
        failure: row.failure,
        marks: from_json(&row.marks, "marks", id)?,
        warnings: from_json(&row.warnings, "warnings", id)?,
        config: from_json(&row.config, "config", id)?,
        environment: from_json(&row.environment, "environment", id)?,
        load,
        run,
        probes: load_probes(conn, id)?,
        cpu: row
            .cpu
            .map(|text| from_json(&text, "cpu", id))
            .transpose()?,
        labels: crate::labels::load(conn, id)?,
    })
}

/// Histogram rows of one run: (phase, op, measure) → data.
type HistogramRows = HashMap<(String, String, String), String>;

/// Interval histogram rows of one run: (phase, op, second) → data; none for
/// a run saved before schema version 4.
type IntervalRows = HashMap<(String, String, i64), String>;

/// Every histogram row of one run, taken out as the phases claim them, so
/// that a row no phase claims is noticed.
struct Histograms {
    ops: HistogramRows,
    intervals: IntervalRows,
}

/// The rows of run `id` from `sql`, which selects (phase, op, key, encoding,
/// data), keyed by (phase, op, key); `what` names a row's key in messages.
fn load_histogram_rows<K>(
    conn: &Db,
    id: i64,
    sql: &str,
    what: fn(&K) -> String,
) -> Result<HashMap<(String, String, K), String>, Fault>
where
    K: FromValue + Eq + std::hash::Hash,
{
    let mut out = HashMap::new();
    for mut r in conn.query(sql, &args![id])? {
        let (phase, op, key, encoding): (String, String, K, String) =
            (r.take(0)?, r.take(1)?, r.take(2)?, r.take(3)?);
        if encoding != HISTOGRAM_ENCODING {
            return Err(Fault::Corrupt(format!(
                "run {id} {phase}/{op} {} has unknown encoding '{encoding}'",
                what(&key)
            )));
        }
        out.insert((phase, op, key), r.take(4)?);
    }
    Ok(out)
}

fn load_histograms(conn: &Db, id: i64) -> Result<Histograms, Fault> {
    Ok(Histograms {
        ops: load_histogram_rows(
            conn,
            id,
            "SELECT phase, op, measure, encoding, data FROM histograms WHERE run_id = ?1",
            |measure: &String| format!("{measure} histogram"),
        )?,
        intervals: load_histogram_rows(
            conn,
            id,
            "SELECT phase, op, second, encoding, data FROM interval_histograms WHERE run_id = ?1",
            |second: &i64| format!("histogram of second {second}"),
        )?,
    })
}

/// Puts each op's histograms and each series point's histogram back into
/// the phase JSON (an op without a row had an empty histogram, a point
/// without one had no completions) and decodes it.
fn decode_phase(
    text: &str,
    phase: &'static str,
    id: i64,
    histograms: &mut Histograms,
) -> Result<PhaseResult, Fault> {
    let mut value: Value = from_json(text, phase, id)?;
    if let Some(points) = value.get_mut("series").and_then(Value::as_array_mut) {
        for point in points.iter_mut().filter_map(Value::as_object_mut) {
            let op = point.get("op").and_then(Value::as_str).unwrap_or_default();
            let second = point.get("second").and_then(Value::as_i64).unwrap_or(-1);
            let key = (phase.to_string(), op.to_string(), second);
            if let Some(data) = histograms.intervals.remove(&key) {
                point.insert(SERIES_HISTOGRAM.to_string(), Value::String(data));
            }
        }
    }
    if let Some(ops) = value.get_mut("ops").and_then(Value::as_array_mut) {
        for op in ops.iter_mut().filter_map(Value::as_object_mut) {
            let name = op.get("op").and_then(Value::as_str).unwrap_or_default();
            let name = name.to_string();
            for (measure, field) in MEASURES {
                let key = (phase.to_string(), name.clone(), measure.to_string());
                match histograms.ops.remove(&key) {
                    Some(data) => {
                        op.insert(field.to_string(), Value::String(data));
                    }
                    // Only the response-time histogram is always present.
                    None if measure == "latency" => {
                        op.insert(field.to_string(), Value::String(String::new()));
                    }
                    None => {}
                }
            }
        }
    }
    serde_json::from_value(value).map_err(|source| Fault::Json {
        field: phase,
        run: Some(id),
        source,
    })
}

fn load_probes(conn: &Db, id: i64) -> Result<Vec<Probe>, Fault> {
    let rows = conn.query(
        "SELECT stage, rss_bytes, server_memory_bytes, cpu_seconds, items, evictions, nodes_json
         FROM probes WHERE run_id = ?1 ORDER BY seq",
        &args![id],
    )?;
    let mut probes = Vec::with_capacity(rows.len());
    for mut r in rows {
        let mut p = Probe {
            stage: r.take(0)?,
            rss_bytes: r.take(1)?,
            server_memory_bytes: r.take(2)?,
            cpu_seconds: r.take(3)?,
            items: r.take(4)?,
            evictions: r.take(5)?,
            nodes: Vec::new(),
        };
        if let Some(json) = r.take::<Option<String>>(6)? {
            p.nodes = from_json(&json, "probes", id)?;
        }
        probes.push(p);
    }
    Ok(probes)
}

pub(crate) fn list_runs(conn: &Db, filter: &RunFilter) -> Result<Vec<RunSummary>, Fault> {
    // julianday() orders by instant, not by text: "10:00:00.5Z" sorts before
    // "10:00:00Z" as text although it is later. Unparsable times give NULL
    // and sort last (said outright: PostgreSQL puts NULLs first in DESC);
    // id breaks ties in save order.
    // (PostgreSQL gets julianday() from the store's prelude, migrate.rs.)
    let mut sql = String::from(
        "SELECT r.id, r.started_at, r.status, r.system, r.workload, r.clients, r.records,
                CASE WHEN r.status = 'failed' THEN NULL ELSE r.throughput END,
                CASE WHEN r.status = 'failed' THEN NULL ELSE rd.p99_us END,
                CASE WHEN r.status = 'failed' THEN NULL ELSE up.p99_us END,
                r.failure
         FROM runs r
         LEFT JOIN op_results rd ON rd.run_id = r.id AND rd.phase = 'run' AND rd.op = 'read'
         LEFT JOIN op_results up ON up.run_id = r.id AND up.phase = 'run' AND up.op = 'update'
         WHERE 1 = 1",
    );
    let mut args: Vec<SqlValue> = Vec::new();
    // Binds `value` and names its parameter.
    let mut arg = |value: SqlValue| {
        args.push(value);
        format!("?{}", args.len())
    };
    for (column, value) in [
        ("system", &filter.system),
        ("workload", &filter.workload),
        ("status", &filter.status),
    ] {
        if let Some(v) = value {
            sql.push_str(&format!(" AND r.{column} = {}", arg(v.clone().into())));
        }
    }
    for (key, value) in &filter.labels {
        let (k, v) = (arg(key.clone().into()), arg(value.clone().into()));
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM run_labels l
                          WHERE l.run_id = r.id AND l.key = {k}
                            AND (CAST({v} AS TEXT) IS NULL OR l.value = {v}))"
        ));
    }
    if let Some(ids) = &filter.ids {
        // One parameter however many ids: a JSON array read by json_each.
        let list = serde_json::Value::from(ids.clone()).to_string();
        let param = arg(list.into());
        sql.push_str(&format!(" AND r.id IN ({})", conn.json_integers(&param)));
    }
    sql.push_str(" ORDER BY julianday(r.started_at) DESC NULLS LAST, r.id DESC");
    if let Some(limit) = filter.limit {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        sql.push_str(&format!(" LIMIT {}", arg(limit.into())));
    }
    let mut rows = Vec::new();
    for mut r in conn.query(&sql, &args)? {
        rows.push(RunSummary {
            id: r.take(0)?,
            started_at: r.take(1)?,
            status: r.take(2)?,
            system: r.take(3)?,
            workload: r.take(4)?,
            clients: r.take(5)?,
            records: r.take(6)?,
            throughput: r.take(7)?,
            read_p99_us: r.take(8)?,
            update_p99_us: r.take(9)?,
            failure: r.take(10)?,
            labels: BTreeMap::new(),
        });
    }
    for row in &mut rows {
        row.labels = crate::labels::load(conn, row.id)?;
    }
    Ok(rows)
}

/// Fails with the first of `ids` that is not stored, if any.
pub(crate) fn require_all(conn: &Db, ids: &[i64]) -> Result<(), Fault> {
    for &id in ids {
        if conn
            .query_opt("SELECT 1 FROM runs WHERE id = ?1", &args![id])?
            .is_none()
        {
            return Err(Fault::NotFound(id));
        }
    }
    Ok(())
}

/// The ids `selection` names, ascending and without repeats.
pub(crate) fn select_runs(conn: &Db, selection: &RunSelection) -> Result<Vec<i64>, Fault> {
    match selection {
        RunSelection::All => ids_of(conn, "SELECT id FROM runs ORDER BY id", &[]),
        RunSelection::Experiment(name) => ids_of(
            conn,
            "SELECT run_id FROM experiment_cells WHERE experiment = ?1 ORDER BY run_id",
            &args![name],
        ),
        RunSelection::Label(key, value) => ids_of(
            conn,
            "SELECT run_id FROM run_labels
             WHERE key = ?1 AND (CAST(?2 AS TEXT) IS NULL OR value = ?2)
             ORDER BY run_id",
            &args![key, value],
        ),
        RunSelection::Ids(ranges) => {
            // Ranges are checked against the table, never expanded first,
            // so `1-1000000000` costs what the stored runs cost.
            let mut ids = BTreeSet::new();
            for range in ranges {
                let found = ids_of(
                    conn,
                    "SELECT id FROM runs WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
                    &args![range.start(), range.end()],
                )?;
                // The first id of the range that is not stored, if any.
                let mut expected = *range.start();
                for &id in &found {
                    if id != expected {
                        break;
                    }
                    expected += 1;
                }
                if expected <= *range.end() {
                    return Err(Fault::NotFound(expected));
                }
                ids.extend(found);
            }
            Ok(ids.into_iter().collect())
        }
    }
}

/// The ids `sql` selects, in its order.
fn ids_of(conn: &Db, sql: &str, args: &[SqlValue]) -> Result<Vec<i64>, Fault> {
    conn.query(sql, args)?
        .into_iter()
        .map(|mut r| Ok(r.take(0)?))
        .collect()
}
