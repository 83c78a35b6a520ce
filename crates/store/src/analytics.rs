//! Saves and reads [`AnalyticsRecord`]s (table `analytics_runs`): each in
//! one transaction, read back before the commit so what is stored is
//! exactly what was measured, as for runs.

use crate::Fault;
use kvbench_model::analytics::AnalyticsRecord;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

pub(crate) fn save(conn: &mut Connection, record: &AnalyticsRecord) -> Result<i64, Fault> {
    let mut stored = record.clone();
    stored.id = None;
    let json = serde_json::to_string(&stored).map_err(|source| Fault::Json {
        field: "record",
        run: None,
        source,
    })?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        "INSERT INTO analytics_runs (kind, started_at, status, graph, record_json)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            record.kind.as_str(),
            record.started_at,
            record.status.as_str(),
            record.graph.source,
            json
        ],
    )?;
    let id = tx.last_insert_rowid();
    let back = get(&tx, id).map_err(|fault| match fault {
        Fault::Json { .. } => Fault::NotExact("analytics record"),
        other => other,
    })?;
    stored.id = Some(id);
    if back != stored {
        return Err(Fault::NotExact("analytics record"));
    }
    tx.commit()?;
    Ok(id)
}

pub(crate) fn get(conn: &Connection, id: i64) -> Result<AnalyticsRecord, Fault> {
    let json: Option<String> = conn
        .query_row(
            "SELECT record_json FROM analytics_runs WHERE id = ?1",
            [id],
            |row| row.get(0),
        )
        .optional()?;
    decode(id, &json.ok_or(Fault::AnalyticsNotFound(id))?)
}

/// The record stored as `id`, with its id set.
fn decode(id: i64, json: &str) -> Result<AnalyticsRecord, Fault> {
    let mut record: AnalyticsRecord = serde_json::from_str(json).map_err(|source| Fault::Json {
        field: "record",
        run: Some(id),
        source,
    })?;
    record.id = Some(id);
    Ok(record)
}

/// The records, newest first, at most `limit`, in one query.
pub(crate) fn list(conn: &Connection, limit: Option<u32>) -> Result<Vec<AnalyticsRecord>, Fault> {
    let mut stmt =
        conn.prepare("SELECT id, record_json FROM analytics_runs ORDER BY id DESC LIMIT ?1")?;
    let limit = limit.map_or(-1, i64::from);
    let rows = stmt
        .query_map([limit], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.iter().map(|(id, json)| decode(*id, json)).collect()
}
