//! Which system to pick where: per workload, topology and few or many
//! clients, a verdict between the two systems with the highest mean
//! throughput, with its interval; and sentences that say what the matrix
//! says. Nothing here is written in advance: every word comes from the
//! cells.
//!
//! Few clients is the smallest client count a workload and topology were
//! measured at, many the largest (paper B's "few and many"). The verdict
//! is kvbench_stats::paired's: the leader's throughput over the
//! runner-up's, as a mean of per-block log ratios when both ran in the
//! same blocks (an experiment's iterations), else Welch's interval over
//! unpaired runs; "ahead" when the whole 95% interval lies beyond the
//! equivalence margin, "equal" when it lies inside ±margin, "undecided"
//! otherwise. Single runs give no interval and decide nothing. Server CPU
//! per operation is judged the same way beside it (lower is better).

use crate::cells::{Cell, Sample};
use kvbench_stats::paired::{self, Call, Decision, Method, RatioInterval};
use serde::Serialize;
use std::collections::BTreeMap;

/// How verdicts are called.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// The equivalence margin (0.05: equal within ±5%).
    pub margin: f64,
    /// The looks a sequential run may take (`--until-decided`): each
    /// interval's level is corrected for them (Bonferroni); 1 otherwise.
    pub looks: usize,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            margin: paired::DEFAULT_MARGIN,
            looks: 1,
        }
    }
}

impl Rule {
    /// The rule runs recorded (`config.verdict`), else the default.
    pub fn recorded(r: Option<kvbench_model::VerdictRule>) -> Rule {
        r.map_or_else(Rule::default, |r| Rule {
            margin: r.margin,
            looks: r.looks.max(1) as usize,
        })
    }

    /// Each interval's confidence level.
    pub fn level(&self) -> f64 {
        paired::level_for_looks(paired::LEVEL, self.looks)
    }
}

/// A ratio between two cells with its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    /// The ratio's interval (`a / b` in logs), when there is one.
    pub interval: Option<RatioInterval>,
    /// The call; `undecided` without an interval.
    pub decision: Decision,
    /// Point estimate of `a / b - 1`.
    pub change: f64,
}

/// One cell of the matrix.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The workload.
    pub workload: String,
    /// The topology.
    pub topology: String,
    /// `few` or `many`.
    pub clients_band: String,
    /// The client count compared.
    pub clients: u32,
    /// The system found ahead (the whole interval beyond the margin), else
    /// `None` (equal or undecided).
    pub winner: Option<String>,
    /// The winner's system (for its colour).
    pub winner_system: Option<String>,
    /// The leader by mean throughput (the winner when there is one).
    pub leader: String,
    /// The runner-up's label.
    pub runner_up: String,
    /// How much higher the leader's throughput is than the runner-up's
    /// (0.23 for 23%): the paired estimate when there are blocks.
    pub margin: f64,
    /// The throughput verdict of leader over runner-up.
    pub throughput: Judged,
    /// Server CPU per operation of leader over runner-up (lower is better):
    /// on a shared VM far steadier than throughput.
    pub server_cpu: Option<Judged>,
    /// p50 and p99 latency of the commonest operation, leader over
    /// runner-up (lower is better).
    pub latency_p50: Option<Judged>,
    /// See `latency_p50`.
    pub latency_p99: Option<Judged>,
    /// Blocks in which the noise canary found the machine unusual, each
    /// with why (`block 3: base RTT 95 us (median 40 us)`).
    pub unusual_blocks: Vec<String>,
    /// The throughput verdict without those blocks (two or more left).
    pub without_unusual: Option<Judged>,
    /// Why there is no winner, or the flags worth a second look.
    pub note: String,
    /// Every system's mean throughput here, best first.
    pub ranking: Vec<(String, f64)>,
    /// The runs of every system at this place: what a caller adding
    /// blocks to an undecided place runs again.
    pub runs: Vec<i64>,
}

impl Verdict {
    /// `ahead`, `equal` or `undecided`.
    pub fn call(&self) -> Call {
        self.throughput.decision.call
    }
}

/// The matrix: one verdict per workload x topology x few/many, for every
/// place with at least two systems measured in closed loop.
pub fn matrix(cells: &[Cell], rule: &Rule) -> Vec<Verdict> {
    let mut by: BTreeMap<(String, String, String, u32), Vec<&Cell>> = BTreeMap::new();
    for c in cells
        .iter()
        .filter(|c| c.rate.is_none() && c.throughput.n > 0)
    {
        by.entry((
            c.workload.clone(),
            c.place.clone(),
            c.shape.clone(),
            c.pipeline,
        ))
        .or_default()
        .push(c);
    }
    let mut out = Vec::new();
    for ((workload, topology, _, _), g) in by {
        let mut counts: Vec<u32> = g.iter().map(|c| c.clients).collect();
        counts.sort_unstable();
        counts.dedup();
        let bands: Vec<(&str, u32)> = match (counts.first(), counts.last()) {
            (Some(&a), Some(&b)) if a != b => vec![("few", a), ("many", b)],
            (Some(&a), _) => vec![("all", a)],
            _ => continue,
        };
        for (band, clients) in bands {
            let mut here: Vec<&Cell> = g.iter().copied().filter(|c| c.clients == clients).collect();
            here.sort_by(|a, b| b.throughput.mean.total_cmp(&a.throughput.mean));
            if here.len() < 2 {
                continue;
            }
            out.push(verdict(&workload, &topology, band, clients, &here, rule));
        }
    }
    out
}

/// The interval of `a / b` for the figure `value` picks: paired over the
/// blocks both ran (two or more), else Welch over their runs.
pub fn ratio(
    a: &Cell,
    b: &Cell,
    value: impl Fn(&Sample) -> Option<f64>,
    level: f64,
) -> Option<RatioInterval> {
    ratio_without(a, b, value, level, &[])
}

/// [`ratio`] leaving out the blocks in `skip`.
fn ratio_without(
    a: &Cell,
    b: &Cell,
    value: impl Fn(&Sample) -> Option<f64>,
    level: f64,
    skip: &[u32],
) -> Option<RatioInterval> {
    let logs = |c: &Cell| -> Vec<(Option<u32>, f64)> {
        c.samples
            .iter()
            .filter(|s| s.block.is_none_or(|k| !skip.contains(&k)))
            .filter_map(|s| value(s).filter(|v| *v > 0.0).map(|v| (s.block, v.ln())))
            .collect()
    };
    let (la, lb) = (logs(a), logs(b));
    let mut pairs = Vec::new();
    for (block, x) in la.iter().filter_map(|(k, x)| k.map(|k| (k, x))) {
        // One run per block and cell; a repeated block keeps its first.
        if let Some((_, y)) = lb.iter().find(|(k, _)| *k == Some(block)) {
            if !pairs.iter().any(|(k, _)| *k == block) {
                pairs.push((block, x - y));
            }
        }
    }
    if pairs.len() >= 2 {
        let d: Vec<f64> = pairs.into_iter().map(|(_, d)| d).collect();
        return paired::paired(&d, level);
    }
    let xs: Vec<f64> = la.iter().map(|(_, x)| *x).collect();
    let ys: Vec<f64> = lb.iter().map(|(_, y)| *y).collect();
    paired::unpaired(&xs, &ys, level)
}

/// A judged ratio: the interval's call, or undecided without one (with
/// `fallback` as the point estimate).
pub fn judge(iv: Option<RatioInterval>, fallback: f64, rule: &Rule) -> Judged {
    match iv {
        Some(iv) => Judged {
            change: iv.change(),
            decision: paired::decide(&iv, rule.margin),
            interval: Some(iv),
        },
        None => Judged {
            interval: None,
            decision: Decision {
                call: Call::Undecided,
                margin: rule.margin,
                blocks_needed: None,
            },
            change: fallback,
        },
    }
}

fn verdict(
    workload: &str,
    topology: &str,
    band: &str,
    clients: u32,
    best_first: &[&Cell],
    rule: &Rule,
) -> Verdict {
    let (mut a, mut b) = (best_first[0], best_first[1]);
    let means = if b.throughput.mean > 0.0 {
        a.throughput.mean / b.throughput.mean - 1.0
    } else {
        f64::INFINITY
    };
    let mut throughput = judge(
        ratio(a, b, |s| Some(s.throughput), rule.level()),
        means,
        rule,
    );
    // The pairs can reverse a close order of means: name the leader by them.
    if throughput.change < 0.0 {
        std::mem::swap(&mut a, &mut b);
        throughput = judge(throughput.interval.map(|iv| iv.flipped()), -means, rule);
    }
    // Blocks where either side met an unusual machine (the canary), and
    // the verdict without them.
    let mut unusual: Vec<(u32, String)> = a
        .samples
        .iter()
        .chain(&b.samples)
        .filter_map(|s| Some((s.block?, s.unusual.clone()?)))
        .collect();
    unusual.sort_by_key(|(k, _)| *k);
    unusual.dedup_by_key(|(k, _)| *k);
    let skip: Vec<u32> = unusual.iter().map(|(k, _)| *k).collect();
    let without_unusual = (!skip.is_empty() && throughput.interval.is_some())
        .then(|| ratio_without(a, b, |s| Some(s.throughput), rule.level(), &skip))
        .flatten()
        .filter(|iv| iv.method != Method::Welch)
        .map(|iv| judge(Some(iv), throughput.change, rule));
    // The other dimensions of the same pair: lower is better in each.
    let other = |value: fn(&Sample) -> Option<f64>| {
        Some(judge(ratio(a, b, value, rule.level()), f64::NAN, rule))
            .filter(|j| j.interval.is_some())
    };
    let server_cpu = other(|s| s.server_cpu_us);
    let latency_p50 = other(|s| s.p50_us);
    let latency_p99 = other(|s| s.p99_us);
    let flagged: Vec<&str> = a
        .flags
        .iter()
        .chain(&b.flags)
        .filter(|f| f.doubts_a_verdict())
        .map(|f| f.name())
        .collect();
    let mut note = match (throughput.decision.call, &throughput.interval) {
        (Call::Ahead, _) => String::new(),
        (Call::Equal, Some(iv)) => format!(
            "{} and {} equal within ±{} ({})",
            a.series,
            b.series,
            margin_text(rule.margin),
            interval_text(iv)
        ),
        (_, Some(iv)) => format!(
            "{} ahead by {:.1}% {}, undecided at ±{}{}",
            a.series,
            throughput.change * 100.0,
            interval_text(iv),
            margin_text(rule.margin),
            match throughput.decision.blocks_needed {
                Some(k) => format!(" (about {k} blocks would decide it)"),
                None => String::new(),
            }
        ),
        (_, None) => format!(
            "{} ahead by {:.0}%, but single runs give no interval (run 3 or more iterations)",
            a.series,
            throughput.change * 100.0
        ),
    };
    if !unusual.is_empty() {
        if !note.is_empty() {
            note.push_str("; ");
        }
        let what: Vec<String> = unusual
            .iter()
            .map(|(k, why)| format!("block {k}: {why}"))
            .collect();
        note.push_str(&format!("machine unusual in {}", what.join(", ")));
        match &without_unusual {
            Some(j) => note.push_str(&format!(
                "; without {}: {} {:+.1}% {}",
                if unusual.len() == 1 { "it" } else { "them" },
                j.decision.call.as_str(),
                j.change * 100.0,
                j.interval.as_ref().map(interval_text).unwrap_or_default()
            )),
            None => note.push_str("; too few blocks left to judge without them"),
        }
    }
    if !flagged.is_empty() {
        let mut f = flagged.clone();
        f.sort_unstable();
        f.dedup();
        if !note.is_empty() {
            note.push_str("; ");
        }
        note.push_str(&format!("flagged: {}", f.join(", ")));
    }
    let ahead = throughput.decision.call == Call::Ahead;
    Verdict {
        workload: workload.into(),
        topology: topology.into(),
        clients_band: band.into(),
        clients,
        winner: ahead.then(|| a.series.clone()),
        winner_system: ahead.then(|| a.system.clone()),
        leader: a.series.clone(),
        runner_up: b.series.clone(),
        margin: throughput.change,
        throughput,
        server_cpu,
        latency_p50,
        latency_p99,
        unusual_blocks: unusual
            .iter()
            .map(|(k, why)| format!("block {k}: {why}"))
            .collect(),
        without_unusual,
        note,
        ranking: best_first
            .iter()
            .map(|c| (c.series.clone(), c.throughput.mean))
            .collect(),
        runs: best_first
            .iter()
            .flat_map(|c| c.run_ids.iter().copied())
            .collect(),
    }
}

/// A dimension where lower is better, leader over runner-up, its interval
/// taken as the throughput's is: `p99 -12.0% [-15.1%, -8.8%] less`.
pub fn lower_text(name: &str, j: &Judged) -> String {
    let word = lower_word(j.decision.call);
    match &j.interval {
        Some(iv) => {
            let (lo, hi) = iv.change_bounds();
            format!(
                "{name} {:+.1}% [{:+.1}%, {:+.1}%] {word}",
                j.change * 100.0,
                lo * 100.0,
                hi * 100.0
            )
        }
        None => format!("{name}: no interval"),
    }
}

/// An equivalence margin as people write it: `5%`, `0.5%`, `2.25%` (to
/// a hundredth of a point, so a margin below 1% is never shown as 0%).
pub fn margin_text(margin: f64) -> String {
    format!("{}%", (margin * 1e4).round() / 100.0)
}

/// A call where lower is better, in words: `more`, `less`, `equal` or
/// `undecided` (the leader's figure against the runner-up's).
pub fn lower_word(call: Call) -> &'static str {
    match call {
        Call::Ahead => "more",
        Call::Behind => "less",
        c => c.as_str(),
    }
}

/// `[+3.1%, +9.8%] (paired t, 5 blocks)`.
pub fn interval_text(iv: &RatioInterval) -> String {
    let (lo, hi) = iv.change_bounds();
    let what = match iv.method {
        Method::Welch => format!("{}, {} runs", iv.method.as_str(), iv.n),
        _ => format!("{}, {} blocks", iv.method.as_str(), iv.n),
    };
    let level = if (iv.level - paired::LEVEL).abs() > 1e-9 {
        format!(", at {:.2}%", iv.level * 100.0)
    } else {
        String::new()
    };
    format!("[{:+.1}%, {:+.1}%] ({what}{level})", lo * 100.0, hi * 100.0)
}

/// What the loaded data costs beyond its raw size, as a share of the raw
/// size: (memory after load - memory before load) / raw - 1. The empty
/// server's own footprint is taken off, so small datasets are not swamped
/// by it (paper B divided the total; at its 10 GB the two agree).
pub fn overhead(c: &Cell) -> Option<f64> {
    let before = c.memory.at("before_load")?;
    let after = c.memory.at("after_load")?;
    (c.dataset_bytes > 0).then(|| (after - before) / c.dataset_bytes as f64 - 1.0)
}

/// Plain sentences from the matrix: who won how many places, where the
/// winner changed with the client count, and the ties.
pub fn summary(verdicts: &[Verdict]) -> Vec<String> {
    if verdicts.is_empty() {
        return vec![
            "Fewer than two systems were measured at the same place, so no winner can be named."
                .into(),
        ];
    }
    let mut out = Vec::new();
    let mut wins: BTreeMap<&str, Vec<&Verdict>> = BTreeMap::new();
    let mut ties = Vec::new();
    for v in verdicts {
        match &v.winner {
            Some(w) => wins.entry(w.as_str()).or_default().push(v),
            None => ties.push(v),
        }
    }
    let mut ranked: Vec<(&str, Vec<&Verdict>)> = wins.into_iter().collect();
    ranked.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    for (who, vs) in &ranked {
        let mut workloads: Vec<&str> = vs.iter().map(|v| v.workload.as_str()).collect();
        workloads.dedup();
        let best = vs
            .iter()
            .max_by(|a, b| a.margin.total_cmp(&b.margin))
            .map(|v| {
                format!(
                    "by up to {:.0}% ({}, {}, {})",
                    v.margin * 100.0,
                    v.workload,
                    v.topology,
                    clients(v.clients)
                )
            })
            .unwrap_or_default();
        out.push(format!(
            "{who} had the highest throughput in {} of {} places ({}), {best}.",
            vs.len(),
            verdicts.len(),
            workloads.join(", ")
        ));
    }
    // Where few and many clients disagree.
    let mut by_place: BTreeMap<(&str, &str), Vec<&Verdict>> = BTreeMap::new();
    for v in verdicts {
        by_place
            .entry((v.workload.as_str(), v.topology.as_str()))
            .or_default()
            .push(v);
    }
    for ((workload, topology), vs) in by_place {
        if let (Some(few), Some(many)) = (
            vs.iter().find(|v| v.clients_band == "few"),
            vs.iter().find(|v| v.clients_band == "many"),
        ) {
            if few.winner.is_some() && many.winner.is_some() && few.winner != many.winner {
                out.push(format!(
                    "On {workload} ({topology}) the winner changes with load: {} at {}, {} at {}.",
                    few.winner.as_deref().unwrap_or(""),
                    clients(few.clients),
                    many.winner.as_deref().unwrap_or(""),
                    clients(many.clients)
                ));
            }
        }
    }
    let equal: Vec<&&Verdict> = ties.iter().filter(|v| v.call() == Call::Equal).collect();
    let undecided: Vec<&&Verdict> = ties.iter().filter(|v| v.call() != Call::Equal).collect();
    if !equal.is_empty() {
        let margin = equal[0].throughput.decision.margin;
        out.push(format!(
            "{} place{} equal within ±{}: {}.",
            equal.len(),
            if equal.len() == 1 { " was" } else { "s were" },
            margin_text(margin),
            places(&equal)
        ));
    }
    if !undecided.is_empty() {
        out.push(format!(
            "{} place{} undecided: {}.",
            undecided.len(),
            if undecided.len() == 1 { " is" } else { "s are" },
            places(&undecided)
        ));
    }
    out
}

fn places(vs: &[&&Verdict]) -> String {
    vs.iter()
        .map(|v| format!("{}, {}, {}", v.workload, v.topology, clients(v.clients)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `1 client`, `8 clients`.
pub fn clients(n: u32) -> String {
    format!("{n} client{}", if n == 1 { "" } else { "s" })
}
