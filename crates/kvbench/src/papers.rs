//! The papers built into kvbench: each one's experiment files and
//! findings, and what every way of reproducing them shares (the scale
//! flag, the paper-vs-kvbench table). `reproduce` runs papers A to C,
//! `analytics::reproduce` paper D; neither calls the other for these.

use crate::args::ReproduceArgs;
use crate::exit::UsageError;
use anyhow::{Context, Result};
use kvbench_report::paper::{Outcome, Paper};

/// A paper kvbench can reproduce.
pub(crate) struct Known {
    pub name: &'static str,
    /// Its experiment file (experiments/).
    pub experiment: &'static str,
    /// The matrix the issue asks for at the paper's own scale (`--scale 1`):
    /// operation counts instead of windows, a narrower matrix where the full
    /// data set would not fit the time (experiments/paper-*-full.toml).
    pub full: Option<&'static str>,
    /// Its findings (papers/).
    pub findings: &'static str,
    /// The paper's record count, which `--scale` multiplies.
    pub full_records: u64,
    /// The default scale: what 2 cores run in 30 to 60 minutes.
    pub default_scale: f64,
}

pub(crate) const KNOWN: [Known; 3] = [
    Known {
        name: "anthony2016",
        experiment: include_str!("../../../experiments/paper-a.toml"),
        full: Some(include_str!("../../../experiments/paper-a-full.toml")),
        findings: include_str!("../../../papers/anthony2016.toml"),
        full_records: 1_000_000,
        default_scale: 0.02,
    },
    Known {
        name: "sadat2019",
        experiment: include_str!("../../../experiments/paper-b.toml"),
        full: Some(include_str!("../../../experiments/paper-b-full.toml")),
        findings: include_str!("../../../papers/sadat2019.toml"),
        full_records: 2_500_000,
        default_scale: 0.008,
    },
    Known {
        name: "altoros",
        experiment: include_str!("../../../experiments/paper-c.toml"),
        full: None,
        findings: include_str!("../../../papers/altoros.toml"),
        full_records: 5_000_000,
        default_scale: 0.02,
    },
];

/// Paper D's findings: reproduced by the analytics commands
/// (`crate::analytics::reproduce`), not by an experiment file.
pub(crate) const ZHANG2014: &str = include_str!("../../../papers/zhang2014.toml");

/// Paper D's findings file, parsed.
///
/// # Errors
/// Only if the file built into kvbench does not parse (a bug).
pub fn zhang2014() -> Result<Paper> {
    toml::from_str(ZHANG2014).context("internal: papers/zhang2014.toml")
}

/// `--scale`, or `default`: above 0 and at most 1 (the paper's own size).
pub(crate) fn scale(a: &ReproduceArgs, default: f64) -> Result<f64> {
    let scale = a.scale.unwrap_or(default);
    if !(scale > 0.0 && scale <= 1.0) {
        return Err(UsageError(format!("--scale {scale}: must be above 0 and at most 1")).into());
    }
    Ok(scale)
}

/// The paper-vs-kvbench table for the terminal.
pub(crate) fn table(outcomes: &[Outcome]) -> String {
    // "why": what a `differs` likely comes from, what would decide an
    // `inconclusive`, why a finding is not comparable (the report's column).
    let mut t = kvbench_report::table::Table::new(&["id", "verdict", "paper", "kvbench", "why"]);
    for o in outcomes {
        t.row(vec![
            o.id.clone(),
            serde_json::to_value(o.verdict)
                .ok()
                .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
                .unwrap_or_default(),
            o.claim.clone(),
            o.measured.clone(),
            o.reason.clone(),
        ]);
    }
    t.to_text()
}

#[cfg(test)]
mod tests {
    use kvbench_report::paper::{Outcome, Verdict};

    #[test]
    fn the_terminal_table_says_why() {
        let o = Outcome {
            id: "A3".into(),
            source: "Fig. 4".into(),
            claim: "Redis uses 1.1-1.6x the memory of Memcached".into(),
            measured: "1.9x".into(),
            verdict: Verdict::Differs,
            reason: "Redis 7's listpack encoding".into(),
        };
        let text = super::table(&[o]);
        let header = text.lines().next().unwrap_or_default();
        assert!(header.trim_end().ends_with("why"), "{text}");
        assert!(text.contains("differs"), "{text}");
        assert!(text.contains("Redis 7's listpack encoding"), "{text}");
    }
}
