//! The papers kvbench reproduces, built in: each one's experiment files
//! (experiments/) and findings (papers/, judged by `kvbench_report::paper`),
//! and its matrix scaled to this machine (`scale`): record counts, window,
//! iterations and client counts, under a name that carries a hash of the
//! result, so runs at another scale are another experiment and are never
//! mixed into this one's report; and a paper run from its experiment file
//! with its report written (`reproduce`), or paper D from its analytics
//! runs (`analytics`).
#![deny(missing_docs)]

pub mod analytics;
pub mod reproduce;
pub mod scale;

use anyhow::{Context, Result};
use kvbench_report::paper::Paper;
use kvbench_run::UsageError;

/// A paper kvbench can reproduce.
pub struct Known {
    /// Its name, as `kvbench reproduce NAME` takes it.
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

/// Papers A to C, run from their experiment files.
pub const KNOWN: [Known; 3] = [
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

/// Paper D's findings: reproduced by the analytics runs (PageRank and the
/// random gets), not by an experiment file.
pub const ZHANG2014: &str = include_str!("../../../papers/zhang2014.toml");

/// Paper D's findings file, parsed.
///
/// # Errors
/// Only if the file built into kvbench does not parse (a bug).
pub fn zhang2014() -> Result<Paper> {
    toml::from_str(ZHANG2014).context("internal: papers/zhang2014.toml")
}

/// The paper named `name` (papers A to C; paper D is [`ZHANG2014`]).
pub fn find(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.name == name)
}

/// Every paper's name, paper D's last.
pub fn names() -> Vec<&'static str> {
    KNOWN
        .iter()
        .map(|k| k.name)
        .chain(std::iter::once("zhang2014"))
        .collect()
}

/// A paper's findings, parsed.
///
/// # Errors
/// Only if the file built into kvbench does not parse (a bug).
pub fn findings(known: &Known) -> Result<Paper> {
    toml::from_str(known.findings).with_context(|| format!("internal: papers/{}.toml", known.name))
}

/// `scale`, or `default`: above 0 and at most 1 (the paper's own size).
///
/// # Errors
/// A scale out of that range, naming `--scale`.
pub fn check_scale(scale: Option<f64>, default: f64) -> Result<f64> {
    let scale = scale.unwrap_or(default);
    if !(scale > 0.0 && scale <= 1.0) {
        return Err(UsageError(format!("--scale {scale}: must be above 0 and at most 1")).into());
    }
    Ok(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every finding keeps its citation, its id is unique, and what it is
    /// about is run by the paper's experiment: a finding that silently
    /// stopped being measured, or lost where the paper says it, fails here.
    #[test]
    fn every_paper_keeps_its_findings_and_their_citations() {
        let papers: Vec<(&str, &str, Option<&str>)> = KNOWN
            .iter()
            .map(|k| (k.name, k.findings, Some(k.experiment)))
            .chain([("zhang2014", ZHANG2014, None)])
            .collect();
        let counts: Vec<(&str, usize)> = papers
            .iter()
            .map(|(name, text, experiment)| {
                let p: Paper = toml::from_str(text).expect(name);
                let mut ids: Vec<&str> = p.findings.iter().map(|f| f.id.as_str()).collect();
                ids.sort_unstable();
                ids.dedup();
                assert_eq!(ids.len(), p.findings.len(), "{name}: an id twice");
                for f in &p.findings {
                    // Sections, figures, tables, or a slide deck's named
                    // tables (paper B has no numbers).
                    let cites = ["sec. ", "fig. ", "table", "abstract", "conclusion"];
                    let source = f.source.to_lowercase();
                    assert!(
                        cites.iter().any(|c| source.contains(c)),
                        "{name} {}: no section, figure or table: {}",
                        f.id,
                        f.source
                    );
                    assert!(!f.claim.trim().is_empty(), "{name} {}: no claim", f.id);
                    if let Some(exp) = experiment {
                        let main = f.workload.split(" + ").next().unwrap_or_default();
                        assert!(
                            exp.contains(&format!("\"{main}\"")),
                            "{name} {}: {main} is not in its experiment file",
                            f.id
                        );
                    }
                }
                assert!(
                    p.tolerance.is_some_and(|t| (0.0..=0.2).contains(&t)),
                    "{name}: its tolerance is stated"
                );
                for n in &p.not_reproducible {
                    assert!(
                        !n.source.is_empty() && !n.claim.is_empty() && !n.why.is_empty(),
                        "{name}: a result not reproducible here needs where, what and why"
                    );
                }
                (*name, p.findings.len())
            })
            .collect();
        assert_eq!(
            counts,
            [
                ("anthony2016", 36),
                ("sadat2019", 23),
                ("altoros", 17),
                ("zhang2014", 9)
            ]
        );
    }

    /// The outcome docs quote the report's "Paper vs kvbench" section as
    /// generated (between markers) instead of restating it: its totals
    /// sentence must agree with its own table, row by row.
    #[test]
    fn the_outcome_docs_quote_tables_whose_totals_agree() {
        for (name, doc) in [
            (
                "altoros.md",
                include_str!("../../../docs/reproductions/altoros.md"),
            ),
            (
                "anthony2016.md",
                include_str!("../../../docs/reproductions/anthony2016.md"),
            ),
            (
                "anthony2016-full.md",
                include_str!("../../../docs/reproductions/anthony2016-full.md"),
            ),
            (
                "sadat2019.md",
                include_str!("../../../docs/reproductions/sadat2019.md"),
            ),
            (
                "sadat2019-full.md",
                include_str!("../../../docs/reproductions/sadat2019-full.md"),
            ),
            (
                "zhang2014.md",
                include_str!("../../../docs/reproductions/zhang2014.md"),
            ),
        ] {
            let start = "<!-- generated by kvbench reproduce: begin -->";
            let end = "<!-- generated by kvbench reproduce: end -->";
            let (Some(a), Some(b)) = (doc.find(start), doc.find(end)) else {
                panic!("{name}: no generated section");
            };
            let quoted = &doc[a..b];
            let count = |v: &str| {
                quoted
                    .lines()
                    .filter(|l| l.starts_with("| ") && l.contains(&format!("| **{v}** |")))
                    .count()
            };
            let said = format!(
                "{} findings agree, {} differ, {} inconclusive, {} not measured here",
                count("agrees"),
                count("differs"),
                count("inconclusive"),
                count("not measured")
            );
            assert!(quoted.contains(&said), "{name}: the totals are not {said}");
            assert!(
                count("agrees") + count("differs") > 0,
                "{name}: an empty table"
            );
        }
    }
}
