//! Saves and reads [`AnalyticsRecord`]s (table `analytics_runs`): each in
//! one transaction, read back before the commit so what is stored is
//! exactly what was measured, as for runs.

use crate::db::{args, Db, TxKind};
use crate::Fault;
use kvbench_model::analytics::AnalyticsRecord;

pub(crate) fn save(conn: &Db, record: &AnalyticsRecord) -> Result<i64, Fault> {
    let mut stored = record.clone();
    stored.id = None;
    let json = serde_json::to_string(&stored).map_err(|source| Fault::Json {
        field: "record",
        run: None,
        source,
    })?;
    let tx = conn.begin(TxKind::Write)?;
    let id = tx
        .query_row(
            "INSERT INTO analytics_runs (kind, started_at, status, graph, record_json)
             VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
            &args![
                record.kind.as_str(),
                record.started_at,
                record.status.as_str(),
                record.graph.source,
                json
            ],
        )?
        .take(0)?;
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

pub(crate) fn get(conn: &Db, id: i64) -> Result<AnalyticsRecord, Fault> {
    let json: Option<String> = conn
        .query_opt(
            "SELECT record_json FROM analytics_runs WHERE id = ?1",
            &args![id],
        )?
        .map(|mut row| row.take(0))
        .transpose()?;
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
pub(crate) fn list(conn: &Db, limit: Option<u32>) -> Result<Vec<AnalyticsRecord>, Fault> {
    let rows = match limit {
        Some(limit) => conn.query(
            "SELECT id, record_json FROM analytics_runs ORDER BY id DESC LIMIT ?1",
            &args![limit],
        )?,
        None => conn.query(
            "SELECT id, record_json FROM analytics_runs ORDER BY id DESC",
            &[],
        )?,
    };
    rows.into_iter()
        .map(|mut row| {
            let (id, json): (i64, String) = (row.take(0)?, row.take(1)?);
            decode(id, &json)
        })
        .collect()
}
