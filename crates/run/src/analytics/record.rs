//! The stored side of an analytics run: its record is begun before the
//! first implementation runs, filled as each one finishes, and saved once,
//! also when one fails (then `failed`, with every implementation that
//! finished before it), so nothing measured is lost.

use super::GraphSpec;
use crate::view::View;
use anyhow::Result;
use kvbench_analytics::Graph;
use kvbench_model::analytics::{AnalyticsKind, AnalyticsRecord, AnalyticsSettings, GraphInfo};
use kvbench_model::RunStatus;
use kvbench_store::Store;

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The record of a run about to start on `g` (`description` as
/// [`super::graph`] gave it).
pub(super) fn begin(
    kind: AnalyticsKind,
    spec: &GraphSpec,
    g: &Graph,
    description: String,
    settings: AnalyticsSettings,
) -> AnalyticsRecord {
    // Only `synthetic:` graphs are scaled (`rmat:N:M` and files are as given).
    let synthetic = spec.source.starts_with("synthetic:");
    AnalyticsRecord {
        id: None,
        kind,
        started_at: now(),
        finished_at: String::new(),
        status: RunStatus::Ok,
        failure: None,
        graph: GraphInfo {
            source: spec.source.clone(),
            description,
            scale: if synthetic { spec.scale } else { 1.0 },
            seed: spec.seed,
            nodes: g.nodes(),
            edges: g.edges(),
            dangling: g.dangling(),
        },
        settings,
        environment: kvbench_servers::machine_environment(),
        pagerank: Vec::new(),
        lookups: Vec::new(),
    }
}

/// Saves `record`, `failed` with `failure` when there is one, and says
/// where. A save that fails after a failure is only a warning, shown even
/// to a quiet view: the failure is what the user must see.
pub(super) fn save(
    store: &mut Store,
    mut record: AnalyticsRecord,
    failure: Option<&anyhow::Error>,
    view: &dyn View,
) -> Result<AnalyticsRecord> {
    record.finished_at = now();
    if let Some(e) = failure {
        record.status = RunStatus::Failed;
        record.failure = Some(format!("{e:#}"));
    }
    match store.save_analytics(&record) {
        Ok(id) => {
            record.id = Some(id);
            super::say(
                view,
                &format!(
                    "stored as analytics run {id} in {}{}",
                    store.location(),
                    if failure.is_some() { " (failed)" } else { "" }
                ),
            );
            Ok(record)
        }
        Err(e) if failure.is_some() => {
            view.println(&format!(
                "warning: the failed analytics run was not stored: {e}"
            ));
            Ok(record)
        }
        Err(e) => Err(e.into()),
    }
}

/// Runs `each` over `items` into `record`, then saves it. When one fails,
/// the record is saved `failed` with what finished before, and the error
/// is returned; when only the save fails, the record is still returned,
/// for the user to see, with the reason it was not stored.
pub(super) fn run_all<T>(
    store: &mut Store,
    mut record: AnalyticsRecord,
    items: &[String],
    view: &dyn View,
    mut each: impl FnMut(&str) -> Result<T>,
    push: impl Fn(&mut AnalyticsRecord, T),
) -> Result<super::Finished> {
    for imp in items {
        match each(imp) {
            Ok(r) => push(&mut record, r),
            Err(e) => {
                save(store, record, Some(&e), view)?;
                return Err(e);
            }
        }
    }
    Ok(match save(store, record.clone(), None, view) {
        Ok(record) => super::Finished {
            record,
            unsaved: None,
        },
        Err(e) => super::Finished {
            record,
            unsaved: Some(e),
        },
    })
}
