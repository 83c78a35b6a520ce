//! A paper's reported findings beside what kvbench measured: each finding
//! (data in `papers/NAME.toml`, with where the paper says it) is measured
//! with a 95% interval (check.rs) and judged by symmetric rules (rules.rs):
//! agrees, differs (with the likely reason), inconclusive (with what would
//! likely decide it), not measured here, or not comparable. Nothing about
//! any paper is written in code: the findings are data, the rules are per
//! kind.

mod check;
pub mod rules;

use crate::cells::Cell;
use serde::{Deserialize, Serialize};

/// A paper's findings file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// Authors, year, title.
    pub paper: String,
    /// The experiment file it is reproduced with (`paper-a`); empty for a
    /// paper reproduced by analytics commands.
    #[serde(default)]
    pub experiment: String,
    /// The paper's machines against this one.
    pub hardware: String,
    /// Everything run differently from the paper, and why.
    pub substitutions: Vec<String>,
    /// Also listed when the run is below the paper's scale.
    #[serde(default)]
    pub substitutions_scaled: Vec<String>,
    /// Also listed when the run is at the paper's scale.
    #[serde(default)]
    pub substitutions_full: Vec<String>,
    /// The systems the paper compared: a `winner` ranks only these, so a
    /// system kvbench runs beside them (Valkey) is reported but not judged.
    #[serde(default)]
    pub systems: Option<Vec<String>>,
    /// What differs between the paper's machines and this one, by kind of
    /// finding: the likely reasons a finding differs, when the cells
    /// themselves do not say.
    pub reasons: Reasons,
    /// The graph an analytics paper measured on, to which its memory
    /// figures belong.
    #[serde(default)]
    pub graph: Option<PaperGraph>,
    /// How far a paper's ranges are widened before an interval is judged
    /// against them (0.05: a 1.1-1.6x claim agrees with 1.05-1.68x), for
    /// figures read off plots; rules::DEFAULT_TOLERANCE when not given.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// What the paper reported.
    #[serde(rename = "finding")]
    pub findings: Vec<Finding>,
    /// What the paper reported that cannot be measured here, each with why
    /// (absolute latencies over the paper's network, hosted services).
    #[serde(default, rename = "not_reproducible")]
    pub not_reproducible: Vec<NotReproducible>,
}

/// A reported result that cannot be measured on this machine.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NotReproducible {
    /// Where the paper says it.
    pub source: String,
    /// What the paper says.
    pub claim: String,
    /// Why it cannot be measured here.
    pub why: String,
}

/// An analytics paper's dataset.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaperGraph {
    /// Its name (`Google web graph`).
    pub name: String,
    /// Its nodes.
    pub nodes: u32,
    /// Its edges.
    pub edges: u64,
    /// What `kvbench analytics --graph` calls its synthetic stand-in
    /// (`synthetic:google`), so that a run on another dataset beside it
    /// (paper D's Pokec graph) is reported but never judged against it.
    #[serde(default)]
    pub synthetic: Option<String>,
}

impl PaperGraph {
    /// Whether `g` is this dataset: its synthetic stand-in at any scale, or
    /// a graph of exactly its size (the real file).
    #[must_use]
    pub fn is(&self, g: &kvbench_model::analytics::GraphInfo) -> bool {
        self.synthetic.as_deref() == Some(g.source.as_str())
            || (g.nodes == self.nodes && g.edges == self.edges)
    }
}

impl Paper {
    /// Each finding judged by `check`, except those marked not comparable,
    /// which are reported with their reason (workload and analytics
    /// findings alike).
    pub(crate) fn judge_each(&self, check: impl Fn(&Finding) -> Outcome) -> Vec<Outcome> {
        self.findings
            .iter()
            .map(|f| match &f.not_comparable {
                Some(why) => not_comparable(f, why),
                None => check(f),
            })
            .collect()
    }

    /// Whether a run on graph `g` measures the paper's dataset (always,
    /// for a paper that names none): only those feed its findings and sit
    /// beside its figures.
    #[must_use]
    pub fn measures(&self, g: &kvbench_model::analytics::GraphInfo) -> bool {
        self.graph.as_ref().is_none_or(|own| own.is(g))
    }

    /// Keeps the substitutions that hold at the run's scale (below the
    /// paper's, or the paper's own) in `substitutions`.
    pub fn at_scale(&mut self, full: bool) {
        let (scaled, at_full) = (
            std::mem::take(&mut self.substitutions_scaled),
            std::mem::take(&mut self.substitutions_full),
        );
        self.substitutions
            .extend(if full { at_full } else { scaled });
    }
}

/// The paper's setting against this machine, per kind of finding.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reasons {
    /// For throughput and latency findings.
    pub throughput: String,
    /// Also, for findings about a multi-node deployment.
    pub multi_node: String,
    /// For memory findings (after a note on the dataset's size, when it is
    /// far below the paper's).
    pub memory: String,
}

/// One reported finding.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// `A1`.
    pub id: String,
    /// Section, figure or table.
    pub source: String,
    /// What the paper says, in words.
    pub claim: String,
    /// How it is checked.
    pub kind: Kind,
    /// The workload as the experiment names it (empty for an analytics
    /// finding).
    #[serde(default)]
    pub workload: String,
    /// `single` or `multi` (any multi-node deployment; empty for an
    /// analytics finding).
    #[serde(default)]
    pub topology: String,
    /// `few`, `many` or a client count (not for `peak`).
    #[serde(default)]
    pub clients: Option<Clients>,
    /// The system the finding is about.
    pub system: String,
    /// The system it is compared with.
    #[serde(default)]
    pub other: Option<String>,
    /// `ratio`: the numerator is the mean of these systems' throughput in
    /// each block (a paper's "the average of Redis and Aerospike"), named
    /// `system` in the text.
    #[serde(default)]
    pub system_average: Option<Vec<String>>,
    /// Why the quantity cannot mean here what it meant in the paper (PySpark's
    /// serialised cache against Spark 0.8's object cache): the finding is
    /// reported "not comparable" with this reason instead of judged.
    #[serde(default)]
    pub not_comparable: Option<String>,
    /// `lower_latency`, `latency_ratio`: the operation kind whose p50 is
    /// compared (default `read`).
    #[serde(default)]
    pub op: Option<String>,
    /// `latency_ratio`: each run's p50 divided by its pipeline depth (a
    /// paper's "pipeline latency divided by the pipeline length") instead
    /// of the p50 itself.
    #[serde(default)]
    pub per_pipeline: bool,
    /// Only cells at this pipeline depth.
    #[serde(default)]
    pub pipeline: Option<u32>,
    /// Throughput of these operation kinds only (`["read", "update"]`:
    /// one client group of a combined run), instead of the cell's total.
    #[serde(default)]
    pub ops: Option<Vec<String>>,
    /// `ratio`'s other side where it is not `other` at the same place: the
    /// same system and place but another workload, topology, client count,
    /// pipeline depth or operations (each defaults to this side's).
    #[serde(default)]
    pub other_workload: Option<String>,
    /// See `other_workload`.
    #[serde(default)]
    pub other_topology: Option<String>,
    /// See `other_workload`.
    #[serde(default)]
    pub other_clients: Option<Clients>,
    /// See `other_workload`.
    #[serde(default)]
    pub other_pipeline: Option<u32>,
    /// See `other_workload`.
    #[serde(default)]
    pub other_ops: Option<Vec<String>>,
    /// Range bounds for `ratio`, `peak` and `overhead`.
    #[serde(default)]
    pub low: Option<f64>,
    /// See `low`.
    #[serde(default)]
    pub high: Option<f64>,
    /// `kernel_bound`: the least share of the server's CPU time spent in
    /// the kernel.
    #[serde(default)]
    pub kernel_share: Option<f64>,
    /// `graph_memory`: the paper's figure, in MB (10^6 bytes) as it gives
    /// them.
    #[serde(default)]
    pub paper_mb: Option<f64>,
    /// The likely reason when this finding differs here, where it is known
    /// from what differs in the setting (else the kind's reason).
    #[serde(default)]
    pub why_differs: Option<String>,
}

impl Finding {
    /// `low` and `high` as a range, open where one is not given.
    pub(crate) fn bounds(&self) -> (f64, f64) {
        (self.low.unwrap_or(0.0), self.high.unwrap_or(f64::INFINITY))
    }
}

/// How a finding is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `system` leads the paper's systems at the place (with `other`:
    /// beats `other`): significantly above each rival, by the paired ratio.
    Winner,
    /// Throughput of `system` (or the mean of `system_average`) over
    /// `other` (or over the `other_*` place), its interval within [low,
    /// high] widened by the tolerance.
    Ratio,
    /// `system`'s throughput peaks at a client count within [low, high]:
    /// inside the sweep and significantly above both neighbours.
    Peak,
    /// `system`'s read p50 significantly below `other`'s.
    LowerReadLatency,
    /// `system`'s p50 of `op` (`read`, `update`, ...) significantly below
    /// `other`'s.
    LowerLatency,
    /// The p50 of `op` of `system` over `other`'s, or over the same
    /// system's at the `other_*` place, within [low, high] widened.
    LatencyRatio,
    /// `system`'s memory after the run significantly above `other`'s.
    MoreMemory,
    /// `system`'s memory grows more during the run (after the run over
    /// before it) than `other`'s: the ratio of the two growths above 1.
    MoreGrowth,
    /// `system`'s memory overhead over the raw data within [low, high]
    /// widened by the tolerance.
    Overhead,
    /// Analytics (PageRank, client-side drivers on `system`): the server
    /// busy at least `low` of a core over the iterations, and kvbench's
    /// drivers using less CPU than the server.
    ServerBound,
    /// Analytics: the memory of the loaded graph in `system` over the
    /// paper's `paper_mb` (scaled to this graph's nodes) within [low, high].
    GraphMemory,
    /// Analytics: `system`'s median single-key lookup at least `low` times
    /// `other`'s.
    SlowerLookup,
    /// Analytics (set/get on `system`): the server busy at least `low` of a
    /// core over the window, and at least `kernel_share` of its CPU time
    /// spent in the kernel (its TCP stack) rather than in its own code.
    KernelBound,
}

impl Kind {
    /// Judged from `kvbench analytics` records, not from run cells.
    pub fn is_analytics(self) -> bool {
        matches!(
            self,
            Kind::ServerBound | Kind::GraphMemory | Kind::SlowerLookup | Kind::KernelBound
        )
    }
}

/// `few`, `many`, or a count.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Clients {
    /// A client count.
    Count(u32),
    /// `few` or `many`.
    Band(String),
}

/// The verdict on one finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Measured here as the paper reported.
    Agrees,
    /// Measured here otherwise.
    Differs,
    /// The interval crosses an edge of the paper's range: the data cannot
    /// tell yet.
    Inconclusive,
    /// Not measured here (a system or place missing).
    NotMeasured,
    /// The quantity cannot mean here what it meant in the paper.
    NotComparable,
}

/// One row of the paper-vs-kvbench table.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The finding's id.
    pub id: String,
    /// Where the paper says it.
    pub source: String,
    /// What the paper says.
    pub claim: String,
    /// What kvbench measured, in words with the numbers.
    pub measured: String,
    /// Agrees, differs, inconclusive, not measured.
    pub verdict: Verdict,
    /// For differs the likely reason; for inconclusive what would likely
    /// decide it; for not comparable why.
    pub reason: String,
}

/// Checks every finding of `paper` against `cells`.
pub fn evaluate(paper: &Paper, cells: &[Cell]) -> Vec<Outcome> {
    paper.judge_each(|f| check::check(f, cells, paper))
}

/// A finding whose quantity means something else here.
fn not_comparable(f: &Finding, why: &str) -> Outcome {
    outcome(
        f,
        "not comparable".to_string(),
        Verdict::NotComparable,
        why.to_string(),
    )
}

/// A finding this run has no cells for: `what` is missing.
pub(crate) fn not_measured(f: &Finding, what: &str) -> Outcome {
    outcome(
        f,
        format!("not measured: {what}"),
        Verdict::NotMeasured,
        String::new(),
    )
}

/// A ratio's range as the paper gives it: `1.1-1.6x`, or `at least 2x`.
pub(crate) fn ratio_range((lo, hi): (f64, f64)) -> String {
    if hi.is_finite() {
        format!("{lo}-{hi}x")
    } else {
        format!("at least {lo}x")
    }
}

pub(crate) fn outcome(f: &Finding, measured: String, verdict: Verdict, reason: String) -> Outcome {
    Outcome {
        id: f.id.clone(),
        source: f.source.clone(),
        claim: f.claim.clone(),
        measured,
        verdict,
        reason,
    }
}
