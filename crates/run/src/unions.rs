//! After a run that stored unions (`ZUNIONSTORE`): reads a sample of the
//! destinations back, so a wrong union is a failed run and not a fast one.

use crate::view::View;
use anyhow::Result;
use kvbench_engine::PhaseConfig;
use kvbench_model::{Finding, RunRecord, SystemKind};
use std::time::Duration;

/// After a `ZUNIONSTORE` run: reads a sample of the destinations back and
/// fails the run (its measurements kept) when one is not the union it must
/// be; a sample that finds nothing to read is a warning.
pub fn check(
    system: SystemKind,
    timeout: Duration,
    cfg: &PhaseConfig,
    rec: &mut RunRecord,
    live: &dyn View,
) -> Result<()> {
    let job = kvbench_engine::union_check::UnionCheck {
        topology: &cfg.topology,
        system,
        spec: &cfg.spec,
        access: &cfg.access,
        timeout,
        clients: cfg.clients,
    };
    let done = kvbench_engine::union_check::check_unions(&job)
        .map_err(|e| anyhow::anyhow!("a ZUNIONSTORE result is wrong: {e}"))?;
    if done.checked == 0 {
        rec.warnings.push(Finding::UnionsUnchecked.into());
    } else if !live.quiet() {
        live.println(&format!(
            "unions: {} destinations read back, each the expected union (members and summed scores)",
            done.checked
        ));
    }
    Ok(())
}
