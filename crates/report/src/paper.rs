//! A paper's reported findings beside what kvbench measured: each finding
//! (data in `papers/NAME.toml`, with where the paper says it) is checked
//! against the cells and marked agrees, differs (with the likely reason) or
//! inconclusive (a tie, or not measured here). Nothing about any paper is
//! written in code: the findings are data, the rules are per kind.

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
    /// What the paper reported.
    #[serde(rename = "finding")]
    pub findings: Vec<Finding>,
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
}

impl Paper {
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
    /// The highest mean throughput at the place.
    Winner,
    /// Throughput of `system` over `other` (or over the `other_*` place)
    /// within [low, high].
    Ratio,
    /// The client count of `system`'s highest throughput within [low, high].
    Peak,
    /// `system`'s read p50 below `other`'s.
    LowerReadLatency,
    /// `system`'s memory after the run above `other`'s.
    MoreMemory,
    /// `system`'s memory overhead over the raw data within [low, high].
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
}

impl Kind {
    /// Judged from `kvbench analytics` records, not from run cells.
    pub fn is_analytics(self) -> bool {
        matches!(
            self,
            Kind::ServerBound | Kind::GraphMemory | Kind::SlowerLookup
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
    /// A tie, or the data cannot tell.
    Inconclusive,
    /// Not measured here (a system or place missing).
    NotMeasured,
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
    /// For differs and inconclusive: the likely reason.
    pub reason: String,
}

fn multi(c: &Cell) -> bool {
    c.topology != "single"
}

/// The closed-loop cells of a workload and topology (and pipeline depth).
fn place<'a>(
    cells: &'a [Cell],
    workload: &str,
    topology: &str,
    pipeline: Option<u32>,
) -> Vec<&'a Cell> {
    cells
        .iter()
        .filter(|c| c.rate.is_none() && c.workload == workload)
        .filter(|c| multi(c) == (topology == "multi"))
        .filter(|c| pipeline.is_none_or(|p| c.pipeline == p))
        .collect()
}

/// Throughput of `ops` in `c` (ops/s), or of everything it ran, with the
/// half-width of its 95% interval when there were iterations (for several
/// kinds, the sum of theirs: wider, never narrower, than the sum's own).
fn throughput(c: &Cell, ops: Option<&[String]>) -> (f64, Option<f64>) {
    match ops {
        None => (c.throughput.mean, c.throughput.ci95),
        Some(names) => {
            let mine = c
                .ops
                .iter()
                .filter(|o| names.iter().any(|n| n == o.op.as_str()));
            mine.fold((0.0, Some(0.0)), |(m, h), o| {
                (
                    m + o.throughput.mean,
                    h.zip(o.throughput.ci95).map(|(a, b)| a + b),
                )
            })
        }
    }
}

/// Whether a finding's ratio compares two places rather than two systems.
fn across_places(f: &Finding) -> bool {
    f.other_workload.is_some()
        || f.other_topology.is_some()
        || f.other_clients.is_some()
        || f.other_pipeline.is_some()
        || f.other_ops.is_some()
}

/// The client count the finding names among those measured.
fn at(cells: &[&Cell], clients: Option<&Clients>) -> Option<u32> {
    let mut counts: Vec<u32> = cells.iter().map(|c| c.clients).collect();
    counts.sort_unstable();
    counts.dedup();
    match clients {
        Some(Clients::Count(n)) => counts.contains(n).then_some(*n),
        Some(Clients::Band(b)) if b == "few" => counts.first().copied(),
        _ => counts.last().copied(),
    }
}

fn find<'a>(cells: &[&'a Cell], system: &str, clients: u32) -> Option<&'a Cell> {
    cells
        .iter()
        .copied()
        .find(|c| c.system == system && c.clients == clients)
}

/// Checks every finding of `paper` against `cells`.
pub fn evaluate(paper: &Paper, cells: &[Cell]) -> Vec<Outcome> {
    paper
        .findings
        .iter()
        .map(|f| check(f, cells, paper))
        .collect()
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

fn check(f: &Finding, cells: &[Cell], paper: &Paper) -> Outcome {
    let why = &paper.reasons;
    let paper_systems = paper.systems.as_deref();
    let here = place(cells, &f.workload, &f.topology, f.pipeline);
    let missing = |what: &str| not_measured(f, what);
    if f.kind.is_analytics() {
        return missing("no analytics run in this report (kvbench analytics)");
    }
    if here.is_empty() {
        return missing(&format!("no {} cells of {}", f.topology, f.workload));
    }
    if f.kind == Kind::Peak {
        return peak(f, &here, why);
    }
    if f.kind == Kind::Ratio && across_places(f) {
        return ratio_across(f, cells, &here, why);
    }
    let Some(clients) = at(&here, f.clients.as_ref()) else {
        return missing("that client count");
    };
    let Some(a) = find(&here, &f.system, clients) else {
        return missing(&format!("{} at {clients} clients", f.system));
    };
    let other = f.other.as_deref().and_then(|o| find(&here, o, clients));
    let clients_text = crate::takeaways::clients(clients);
    match f.kind {
        Kind::Winner => {
            let mut at_place: Vec<&Cell> = here
                .iter()
                .copied()
                .filter(|c| c.clients == clients)
                .filter(|c| paper_systems.is_none_or(|s| s.contains(&c.system)))
                // With `other`, a claim about two systems ("Redis beats
                // Memcached"): a third one ahead of both does not refute it.
                .filter(|c| {
                    f.other
                        .as_deref()
                        .is_none_or(|o| c.system == f.system || c.system == o)
                })
                .collect();
            at_place.sort_by(|x, y| y.throughput.mean.total_cmp(&x.throughput.mean));
            if at_place.len() < 2 {
                return missing("a second system at that place");
            }
            let (best, next) = (at_place[0], at_place[1]);
            let margin = best.throughput.mean / next.throughput.mean.max(f64::MIN_POSITIVE) - 1.0;
            let measured = format!(
                "{} ahead of {} by {:.0}% at {clients_text} ({} vs {} ops/s)",
                best.system,
                next.system,
                margin * 100.0,
                crate::format::rate(best.throughput.mean),
                crate::format::rate(next.throughput.mean)
            );
            if let Some(why) = crate::takeaways::tie(best, next) {
                return outcome(f, measured, Verdict::Inconclusive, format!("a tie: {why}"));
            }
            let verdict = if best.system == f.system {
                Verdict::Agrees
            } else {
                Verdict::Differs
            };
            let reason = reason(why, f, &[best, next], verdict);
            outcome(f, measured, verdict, reason)
        }
        Kind::Ratio => {
            let Some(b) = other else {
                return missing(&format!(
                    "{} at {clients_text}",
                    f.other.as_deref().unwrap_or("?")
                ));
            };
            let r = a.throughput.mean / b.throughput.mean.max(f64::MIN_POSITIVE);
            let measured = format!(
                "{} / {} = {r:.2}x at {clients_text} (paper: {})",
                a.system,
                b.system,
                ratio_range(f.bounds())
            );
            let tie = crate::takeaways::tie(a, b).is_some();
            let (verdict, reason) = judge_ratio(f, why, [a, b], r, tie, None);
            outcome(f, measured, verdict, reason)
        }
        Kind::LowerReadLatency => {
            let Some(b) = other else {
                return missing(&format!(
                    "{} at {clients_text}",
                    f.other.as_deref().unwrap_or("?")
                ));
            };
            let p50 = |c: &Cell| {
                c.ops
                    .iter()
                    .find(|o| o.op == kvbench_model::OpKind::Read)
                    .map(|o| o.merged.p50_us)
            };
            let (Some(x), Some(y)) = (p50(a), p50(b)) else {
                return missing("reads");
            };
            let verdict = if x < y {
                Verdict::Agrees
            } else {
                Verdict::Differs
            };
            let measured = format!(
                "read p50 {} {} us, {} {} us at {clients_text}",
                a.system,
                crate::format::micros(x),
                b.system,
                crate::format::micros(y)
            );
            let reason = reason(why, f, &[a, b], verdict);
            outcome(f, measured, verdict, reason)
        }
        Kind::MoreMemory => {
            let Some(b) = other else {
                return missing(&format!(
                    "{} at {clients_text}",
                    f.other.as_deref().unwrap_or("?")
                ));
            };
            let (Some(x), Some(y)) = (a.memory.at("after_run"), b.memory.at("after_run")) else {
                return missing("memory probes");
            };
            let verdict = if x > y {
                Verdict::Agrees
            } else {
                Verdict::Differs
            };
            let mib = |v: f64| v / (1024.0 * 1024.0);
            let measured = format!(
                "after the run {} {:.1} MiB, {} {:.1} MiB",
                a.system,
                mib(x),
                b.system,
                mib(y)
            );
            let reason = reason(why, f, &[a, b], verdict);
            outcome(f, measured, verdict, reason)
        }
        Kind::ServerBound | Kind::GraphMemory | Kind::SlowerLookup => {
            missing("no analytics run in this report")
        }
        Kind::Overhead => {
            // The load is probed where it happened: with a shared server
            // (reload per workload or once per system) that is the first
            // cell of the place, not necessarily the named client count.
            let mut loaded = std::iter::once(a).chain(
                here.iter()
                    .copied()
                    .filter(|c| c.system == f.system && c.series == a.series),
            );
            let Some((a, o)) = loaded.find_map(|c| crate::takeaways::overhead(c).map(|o| (c, o)))
            else {
                return missing("memory probes before and after the load");
            };
            let (lo, hi) = (
                f.low.unwrap_or(f64::NEG_INFINITY),
                f.high.unwrap_or(f64::INFINITY),
            );
            let verdict = if (lo..=hi).contains(&o) {
                Verdict::Agrees
            } else {
                Verdict::Differs
            };
            let measured = format!(
                "{} {:+.1}% over {:.1} MiB of raw data",
                a.system,
                o * 100.0,
                a.dataset_bytes as f64 / (1024.0 * 1024.0)
            );
            let reason = reason(why, f, &[a], verdict);
            outcome(f, measured, verdict, reason)
        }
        Kind::Peak => unreachable!("handled above"),
    }
}

/// A ratio of one system's throughput at two places: pipeline 50 over 4,
/// 5 clients over 1, a cluster over a single server, a workload alone over
/// the same workload beside another.
fn ratio_across(f: &Finding, cells: &[Cell], here: &[&Cell], why: &Reasons) -> Outcome {
    let missing = |what: &str| not_measured(f, what);
    let Some(clients) = at(here, f.clients.as_ref()) else {
        return missing("that client count");
    };
    let Some(a) = find(here, &f.system, clients) else {
        return missing(&format!("{} at {clients} clients", f.system));
    };
    let workload = f.other_workload.as_deref().unwrap_or(&f.workload);
    let topology = f.other_topology.as_deref().unwrap_or(&f.topology);
    let pipeline = f.other_pipeline.or(f.pipeline);
    let there = place(cells, workload, topology, pipeline);
    let system = f.other.as_deref().unwrap_or(&f.system);
    let other_clients = match &f.other_clients {
        Some(c) => at(&there, Some(c)),
        None => Some(clients),
    };
    let Some(b) = other_clients.and_then(|n| find(&there, system, n)) else {
        return missing(&format!(
            "{system} of {workload} on {topology} at that place"
        ));
    };
    let ops = f.ops.as_deref();
    let other_ops = f.other_ops.as_deref().or(ops);
    let ((x, xh), (y, yh)) = (throughput(a, ops), throughput(b, other_ops));
    let r = x / y.max(f64::MIN_POSITIVE);
    // The ratio's reach over both intervals: a verdict only where it holds
    // across them.
    let reach = xh.zip(yh).map(|(xh, yh)| {
        let low = (x - xh).max(0.0) / (y + yh).max(f64::MIN_POSITIVE);
        let high = (x + xh) / (y - yh).max(f64::MIN_POSITIVE);
        (low, high)
    });
    let measured = format!(
        "{} / {} = {} / {} ops/s = {r:.2}x (paper: {})",
        side(a, ops, b, other_ops),
        side(b, other_ops, a, ops),
        crate::format::rate(x),
        crate::format::rate(y),
        ratio_range(f.bounds()),
    );
    let tie = ops.is_none() && other_ops.is_none() && crate::takeaways::tie(a, b).is_some();
    let (verdict, reason) = judge_ratio(f, why, [a, b], r, tie, reach);
    outcome(f, measured, verdict, reason)
}

/// The verdict on a measured ratio `r` of `a` over `b`, and its reason:
/// within the finding's range it agrees; outside, it is inconclusive when
/// the two are tied and the range includes 1, or when the ratio's `reach`
/// over the 95% intervals meets the range; otherwise it differs.
fn judge_ratio(
    f: &Finding,
    why: &Reasons,
    [a, b]: [&Cell; 2],
    r: f64,
    tie: bool,
    reach: Option<(f64, f64)>,
) -> (Verdict, String) {
    let (lo, hi) = f.bounds();
    let reaches = reach.filter(|&(l, h)| l <= hi && h >= lo);
    let verdict = if (lo..=hi).contains(&r) {
        Verdict::Agrees
    } else if (tie && lo <= 1.0 + 1e-9) || reaches.is_some() {
        Verdict::Inconclusive
    } else {
        Verdict::Differs
    };
    let mut reason = reason(why, f, &[a, b], verdict);
    if let Some((l, h)) = reaches.filter(|_| verdict == Verdict::Inconclusive) {
        reason = format!(
            "over the 95% intervals the ratio spans {l:.2}-{h:.2}x, which reaches the paper's range; {reason}"
        );
    }
    if verdict == Verdict::Differs && (r > 1.0) == (lo >= 1.0) {
        reason = format!("same direction, another size; {reason}");
    }
    (verdict, reason)
}

/// `c` named by what sets it apart from `other`: its system, deployment,
/// workload, clients, pipeline or operations, whichever differ.
fn side(c: &Cell, ops: Option<&[String]>, other: &Cell, other_ops: Option<&[String]>) -> String {
    let mut parts = Vec::new();
    if c.system != other.system {
        parts.push(c.system.clone());
    }
    if c.topology != other.topology {
        parts.push(c.topology.clone());
    }
    if c.workload != other.workload {
        parts.push(c.workload.clone());
    }
    if c.clients != other.clients {
        parts.push(crate::takeaways::clients(c.clients));
    }
    if c.pipeline != other.pipeline {
        parts.push(format!("pipeline {}", c.pipeline));
    }
    if let Some(o) = ops.filter(|_| ops != other_ops) {
        parts.push(o.join("+"));
    }
    if parts.is_empty() {
        parts.push(c.system.clone());
    }
    parts.join(", ")
}

fn peak(f: &Finding, here: &[&Cell], why: &Reasons) -> Outcome {
    let mut mine: Vec<&Cell> = here
        .iter()
        .copied()
        .filter(|c| c.system == f.system)
        .collect();
    if mine.len() < 3 {
        return outcome(
            f,
            "not measured: fewer than three client counts".into(),
            Verdict::NotMeasured,
            String::new(),
        );
    }
    mine.sort_by_key(|c| c.clients);
    let Some(best) = mine
        .iter()
        .max_by(|a, b| a.throughput.mean.total_cmp(&b.throughput.mean))
    else {
        return outcome(f, String::new(), Verdict::NotMeasured, String::new());
    };
    let (lo, hi) = f.bounds();
    let counts: Vec<String> = mine.iter().map(|c| c.clients.to_string()).collect();
    if !mine.iter().any(|c| (lo..=hi).contains(&(c.clients as f64))) {
        return outcome(
            f,
            format!(
                "not measured: no client count in {lo}-{hi} (measured {})",
                counts.join(", ")
            ),
            Verdict::NotMeasured,
            String::new(),
        );
    }
    let measured = format!(
        "{} peaks at {} ({} ops/s) of clients {}",
        f.system,
        crate::takeaways::clients(best.clients),
        crate::format::rate(best.throughput.mean),
        counts.join(", ")
    );
    // The peak is not told apart from its neighbours when their intervals overlap.
    let neighbours_tie = mine
        .iter()
        .filter(|c| c.clients != best.clients)
        .any(|c| crate::takeaways::tie(best, c).is_some());
    let in_range = (lo..=hi).contains(&(best.clients as f64));
    let verdict = match (in_range, neighbours_tie) {
        (true, _) => Verdict::Agrees,
        (false, true) => Verdict::Inconclusive,
        (false, false) => Verdict::Differs,
    };
    let reason = if verdict == Verdict::Inconclusive {
        "the peak is within the intervals of another client count".to_string()
    } else {
        reason(why, f, &[best], verdict)
    };
    outcome(f, measured, verdict, reason)
}

/// The likely reason a finding differs: what in the cells themselves says
/// so (the client was the limit, iterations were noisy), else what the
/// paper's file says differs between its machines and this one for that
/// kind of finding.
fn reason(paper: &Reasons, f: &Finding, cells: &[&Cell], verdict: Verdict) -> String {
    if verdict == Verdict::Agrees {
        return String::new();
    }
    let flagged = |flag: &str| cells.iter().any(|c| c.flags.iter().any(|x| x == flag));
    let mut why = Vec::new();
    if flagged("client-bound") {
        why.push("kvbench was the limit (client-bound) on this machine".to_string());
    }
    if flagged("noisy") || flagged("unstable") {
        why.push("iterations spread widely on this shared VM".to_string());
    }
    match f.kind {
        Kind::Winner | Kind::Ratio | Kind::Peak | Kind::LowerReadLatency => {
            why.push(paper.throughput.clone());
            let multi = f.topology == "multi" || f.other_topology.as_deref() == Some("multi");
            if multi {
                why.push(paper.multi_node.clone());
            }
        }
        Kind::ServerBound | Kind::GraphMemory | Kind::SlowerLookup => {}
        Kind::MoreMemory | Kind::Overhead => {
            if let Some(c) = cells.first() {
                if c.dataset_bytes < 1 << 30 {
                    why.push(format!(
                        "a {:.0} MiB dataset instead of the paper's gigabytes: allocator arenas, slab pages and per-key headers weigh differently",
                        c.dataset_bytes as f64 / (1024.0 * 1024.0)
                    ));
                }
            }
            why.push(paper.memory.clone());
        }
    }
    why.retain(|w| !w.is_empty());
    why.join("; ")
}
