//! The stored side of an analytics command: its record is begun before the
//! first implementation runs, filled as each one finishes, and saved once,
//! also when one fails (then `failed`, with every implementation that
//! finished before it), so nothing measured is lost.

use crate::args::AnalyticsCommon;
use anyhow::Result;
use kvbench_analytics::Graph;
use kvbench_model::analytics::{AnalyticsKind, AnalyticsRecord, AnalyticsSettings, GraphInfo};
use kvbench_model::RunStatus;
use kvbench_store::Store;

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The record of a command about to run on `g` (`description` as
/// [`super::graph`] gave it).
pub(super) fn begin(
    kind: AnalyticsKind,
    common: &AnalyticsCommon,
    g: &Graph,
    description: String,
    settings: AnalyticsSettings,
) -> AnalyticsRecord {
    // Only `synthetic:` graphs are scaled (`rmat:N:M` and files are as given).
    let synthetic = common.graph.starts_with("synthetic:");
    AnalyticsRecord {
        id: None,
        kind,
        started_at: now(),
        finished_at: String::new(),
        status: RunStatus::Ok,
        failure: None,
        graph: GraphInfo {
            source: common.graph.clone(),
            description,
            scale: if synthetic { common.scale } else { 1.0 },
            seed: common.seed,
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
/// where unless `quiet`. A save that fails after a failure is only a
/// warning: the failure is what the user must see.
pub(super) fn save(
    store: &mut Store,
    mut record: AnalyticsRecord,
    failure: Option<&anyhow::Error>,
    quiet: bool,
) -> Result<AnalyticsRecord> {
    record.finished_at = now();
    if let Some(e) = failure {
        record.status = RunStatus::Failed;
        record.failure = Some(format!("{e:#}"));
    }
    match store.save_analytics(&record) {
        Ok(id) => {
            record.id = Some(id);
            if !quiet {
                eprintln!(
                    "stored as analytics run {id} in {}{}",
                    store.location(),
                    if failure.is_some() { " (failed)" } else { "" }
                );
            }
            Ok(record)
        }
        Err(e) if failure.is_some() => {
            eprintln!("warning: the failed analytics run was not stored: {e}");
            Ok(record)
        }
        Err(e) => Err(e.into()),
    }
}
