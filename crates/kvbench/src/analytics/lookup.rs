//! `kvbench analytics lookup` (paper D's random get): its flags checked and
//! its table; `kvbench_run::analytics::lookup` runs it.

use crate::args::LookupArgs;
use crate::exit::UsageError;
use crate::live::Live;
use anyhow::Result;
use kvbench_analytics::spark;
use kvbench_model::analytics::AnalyticsRecord;
use kvbench_run::analytics::check_names;
use kvbench_run::analytics::lookup::{LookupSettings, IMPLS};

/// Runs the lookups and returns what was stored; prints the table (or
/// JSON), also when the database would not take it.
///
/// # Errors
/// Bad input (exit 2), a system that fails, or a wrong answer.
pub(crate) fn run(a: &LookupArgs) -> Result<AnalyticsRecord> {
    check_names(&a.impls, IMPLS)?;
    if a.count == 0 || a.count > 1_000_000 {
        return Err(UsageError(format!(
            "--count must be between 1 and 1000000, got {}",
            a.count
        ))
        .into());
    }
    if a.impls.iter().any(|i| i == "spark") {
        spark::check("--impl spark").map_err(|m| UsageError(m.0))?;
    }
    let mut store = crate::db::open_store(&a.common.db)?;
    let settings = LookupSettings {
        graph: super::graph_spec(&a.common),
        impls: a.impls.clone(),
        count: a.count,
        spark_master: a.common.spark_master.clone(),
        setget_s: a.setget,
    };
    let live = Live::new(a.common.quiet, None);
    let finished = kvbench_run::analytics::lookup::run(&settings, &mut store, &live)?;
    super::show(&a.common, &finished.record, || table(&finished.record))?;
    finished.saved()
}

fn table(record: &AnalyticsRecord) -> String {
    let mut out = format!(
        "{:<10} {:>7} {:>9} {:>12} {:>12} {:>12}  {}\n",
        "system", "lookups", "setup s", "p50 us", "p99 us", "max us", "ran on"
    );
    for r in &record.lookups {
        out.push_str(&format!(
            "{:<10} {:>7} {:>9.2} {:>12.1} {:>12.1} {:>12.1}  {}\n",
            r.implementation, r.count, r.setup_s, r.p50_us, r.p99_us, r.max_us, r.detail
        ));
    }
    let setget: Vec<_> = record
        .lookups
        .iter()
        .filter_map(|r| Some((r.implementation.as_str(), r.setget.as_ref()?)))
        .collect();
    if !setget.is_empty() {
        out.push_str(&format!(
            "\n{:<10} {:>7} {:>9} {:>12} {:>12} {:>12}  {}\n",
            "set/get", "drivers", "seconds", "ops/s", "server CPU", "in kernel", "kvbench CPU"
        ));
        let pct = |x: Option<f64>| x.map_or("-".into(), |x| format!("{:.0}%", 100.0 * x));
        for (name, sg) in setget {
            out.push_str(&format!(
                "{:<10} {:>7} {:>9.1} {:>12.0} {:>12} {:>12}  {}\n",
                name,
                sg.drivers,
                sg.seconds,
                sg.ops_per_s(),
                pct(sg.server_busy()),
                pct(sg.kernel_share()),
                pct(Some(sg.client_busy()))
            ));
        }
    }
    out
}
