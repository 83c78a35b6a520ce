//! What every way of reproducing a paper prints: the paper-vs-kvbench
//! table, for papers A to C and for paper D (`reproduce/zhang2014.rs`);
//! the papers themselves (files, findings, scaling, running) are
//! `kvbench_papers`.

use kvbench_report::paper::Outcome;

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
