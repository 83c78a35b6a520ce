//! What someone needs to measure the same thing again: kvbench's and the
//! servers' versions and allocators, every setting kvbench changed from a
//! server's default and why, extra server arguments, seeds, the machines,
//! the experiment file, and the commands that redo the measurement and
//! redraw the report.

use crate::cells::Source;
use serde::Serialize;

/// The reproducibility section, as data.
#[derive(Debug, Clone, Serialize)]
pub struct Repro {
    /// `kvbench 0.1.0 (git abc123)`, one per version seen.
    pub kvbench: Vec<String>,
    /// `redis 7.0.15 (jemalloc-5.3.0)` with the binary path, one per server.
    pub servers: Vec<String>,
    /// `redis: save "" (no snapshots during a benchmark)`, once each.
    pub settings: Vec<String>,
    /// `redis: --io-threads 4`, once each.
    pub server_args: Vec<String>,
    /// The seeds, once each.
    pub seeds: Vec<String>,
    /// Host, CPU, cores, memory, kernel, once per machine.
    pub machines: Vec<String>,
    /// Settings of the runs by name: warm-up, window.
    pub common: Vec<(String, String)>,
    /// The experiment file's text, when known.
    pub experiment_file: Option<String>,
    /// Commands that measure again and redraw this report.
    pub commands: Vec<String>,
}

fn push(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// The section for `sources`. `commands` are how the report was asked for.
pub fn build(sources: &[Source], experiment_file: Option<String>, commands: Vec<String>) -> Repro {
    let mut r = Repro {
        kvbench: Vec::new(),
        servers: Vec::new(),
        settings: Vec::new(),
        server_args: Vec::new(),
        seeds: Vec::new(),
        machines: Vec::new(),
        common: Vec::new(),
        experiment_file,
        commands,
    };
    let mut warmups = Vec::new();
    let mut windows = Vec::new();
    for s in sources {
        let (c, e) = (&s.record.config, &s.record.environment);
        push(
            &mut r.kvbench,
            format!(
                "kvbench {}{}",
                e.kvbench_version,
                e.git_revision
                    .as_ref()
                    .map_or(String::new(), |g| format!(" (git {g})"))
            ),
        );
        if !e.server_version.is_empty() {
            let bin = if c.server_binary.is_empty() {
                String::new()
            } else {
                format!(", binary {}", c.server_binary)
            };
            push(
                &mut r.servers,
                format!("{}{bin}", crate::format::server_label(c.system, e)),
            );
        }
        for st in &c.server_settings {
            push(
                &mut r.settings,
                format!("{}: {} {} ({})", c.system, st.name, st.value, st.reason),
            );
        }
        if !c.server_args.is_empty() {
            push(
                &mut r.server_args,
                format!("{}: {}", c.system, c.server_args.join(" ")),
            );
        }
        push(&mut r.seeds, format!("{} ({})", c.seed, c.seed_source));
        push(
            &mut r.machines,
            format!(
                "{}: {}, {} cores, {:.1} GiB, kernel {}",
                e.host,
                e.cpu_model,
                e.cores,
                e.memory_bytes as f64 / (1u64 << 30) as f64,
                e.kernel
            ),
        );
        push(&mut warmups, format!("{} s", c.warmup_s));
        push(
            &mut windows,
            match c.duration_s {
                Some(d) => format!("{d} s"),
                None => format!("{} operations", crate::format::count(c.operations)),
            },
        );
    }
    r.common.push(("warm-up".into(), warmups.join(", ")));
    r.common
        .push(("measured window".into(), windows.join(", ")));
    r
}
