//! The Markdown report of a comparison: where it ran, the table, and every
//! cell that is missing, failed or marked, so a reader never mistakes a
//! partial comparison for a complete one.

use crate::text::comparison_table;
use kvbench_model::{RunRecord, RunStatus};

/// What each run measured: a window of a duration, or of a count of
/// operations (a duration-bounded run records 0 operations).
fn window(c: &kvbench_model::RunConfig) -> String {
    match c.duration_s {
        Some(d) => format!("a {d} s window per run"),
        None => format!("{} operations per run", c.operations),
    }
}

/// A report for `records`, out of `planned` cells.
pub fn comparison_report(records: &[RunRecord], planned: usize) -> String {
    let mut s = String::from("# kvbench comparison\n\n");
    if let Some(first) = records.first() {
        let e = &first.environment;
        let c = &first.config;
        s.push_str(&format!(
            "- machine: {} ({} cores, {:.1} GiB), kernel {}\n- kvbench {}{}\n- dataset: {}; {}; warm-up {} s; seed {}\n\n",
            e.cpu_model,
            e.cores,
            e.memory_bytes as f64 / (1u64 << 30) as f64,
            e.kernel,
            e.kvbench_version,
            e.git_revision.as_ref().map_or(String::new(), |r| format!(" ({r})")),
            crate::format::dataset(c),
            window(c),
            c.warmup_s,
            c.seed
        ));
        let mut servers: Vec<String> = records
            .iter()
            .filter(|r| !r.environment.server_version.is_empty())
            .map(|r| crate::format::server_label(r.config.system, &r.environment))
            .collect();
        servers.sort();
        servers.dedup();
        s.push_str(&format!("Servers: {}.\n\n", servers.join(", ")));
    }
    s.push_str("Latencies in microseconds. Throughput is completed operations per second of the measured window; memory is the server's own figure after the load phase and its resident set after the run.\n\n");
    s.push_str(&comparison_table(records).to_markdown());
    let problems: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.status != RunStatus::Ok)
        .collect();
    if records.len() < planned || !problems.is_empty() {
        s.push_str("\n## Missing or suspect cells\n\n");
        if records.len() < planned {
            s.push_str(&format!(
                "- {} of {planned} planned cells did not run (interrupted).\n",
                planned - records.len()
            ));
        }
        for r in problems {
            s.push_str(&format!("- {}\n", crate::text::problem(r)));
        }
    }
    let settings: Vec<String> = records
        .iter()
        .flat_map(|r| {
            r.config.server_settings.iter().map(move |st| {
                format!(
                    "{} `{}` = `{}`: {}",
                    r.config.system, st.name, st.value, st.reason
                )
            })
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !settings.is_empty() {
        s.push_str("\n## Server settings changed from defaults\n\n");
        for st in settings {
            s.push_str(&format!("- {st}\n"));
        }
    }
    s
}
