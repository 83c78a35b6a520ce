//! `--with`: a second group of clients running another workload beside the
//! main one, on its own data set (its keys never meet the main group's),
//! sharing the window; its results join the main group's operations.

use crate::settings::RunSettings;
use anyhow::{Context, Result};
use kvbench_engine::{run_phase, PhaseConfig, PhaseKind, Silent};
use kvbench_model::{OpResult, PhaseResult};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The second group's run configuration, after loading its data set
/// (after the main one's; not on a server reused with its data).
pub fn prepare(
    s: &RunSettings,
    base: &PhaseConfig,
    load: bool,
    stop: &Arc<AtomicBool>,
) -> Result<Option<PhaseConfig>> {
    let Some(c) = &s.companion else {
        return Ok(None);
    };
    let cfg = PhaseConfig {
        spec: c.spec.clone(),
        keys: c.spec.key_namer(),
        ..base.clone()
    };
    if load {
        let load = run_phase(&cfg, &Silent, stop).context("the --with group's load")?;
        if load.result.errors > 0 {
            anyhow::bail!("the --with group's load had {} errors", load.result.errors);
        }
    }
    Ok(Some(PhaseConfig {
        kind: PhaseKind::Run {
            warmup: s.warmup,
            window: s.window,
            rate: None,
        },
        clients: c.clients,
        pipeline: c.pipeline,
        ..cfg
    }))
}

/// Adds the `--with` group's results to the main group's: its operations
/// (of other kinds, checked up front) with their histograms and seconds,
/// and its totals. The window is the main group's; both groups started
/// together and ran for the same duration.
pub fn merge(main: &mut PhaseResult, with: PhaseResult) {
    main.completed += with.completed;
    main.errors += with.errors;
    main.throughput += with.throughput;
    main.ops
        .extend(with.ops.into_iter().map(|o| OpResult { with: true, ..o }));
    main.series.extend(with.series);
    main.series.sort_by_key(|p| (p.second, p.op));
    for (kind, n) in with.errors_by_kind {
        match main.errors_by_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, m)) => *m += n,
            None => main.errors_by_kind.push((kind, n)),
        }
    }
    main.error_samples.extend(with.error_samples);
    main.redirects_moved += with.redirects_moved;
    main.redirects_ask += with.redirects_ask;
    main.retries += with.retries;
    main.reconnects += with.reconnects;
    // The outage stays the main group's: the other group's steps are kept
    // only when it had failures, and without its completions they cannot
    // be added to the main group's.
}
