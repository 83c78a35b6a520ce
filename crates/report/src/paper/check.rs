//! Finds the cells a finding is about, measures its quantity as a ratio
//! with a 95% interval, and hands it to the rules (rules.rs).
//!
//! Where the two sides ran in the same blocks (two systems at one place of
//! an experiment) the interval is paired over blocks, as the report's
//! verdicts are (crate::takeaways::ratio); sides at different places (a
//! cluster over a single server, 8 clients over 1) are not paired, and get
//! Welch's interval over their iterations; single runs get the machine's
//! pass-to-pass spread (rules::PASS_TO_PASS_SPREAD).

use super::rules::{self, Answer, Estimate, Judgement, Range, SweepPoint};
use super::{
    not_measured, outcome, ratio_range, Clients, Finding, Kind, Outcome, Paper, Reasons, Verdict,
};
use crate::cells::{Cell, Flag, Sample};
use kvbench_model::MarkKind;
use kvbench_stats::paired;

/// A figure of one run.
type Value<'a> = &'a dyn Fn(&Sample) -> Option<f64>;

/// A figure of one run, owned.
type BoxedValue<'a> = Box<dyn Fn(&Sample) -> Option<f64> + 'a>;

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

/// Whether a finding's ratio compares two places rather than two systems.
fn across_places(f: &Finding) -> bool {
    f.other_workload.is_some()
        || f.other_topology.is_some()
        || f.other_clients.is_some()
        || f.other_pipeline.is_some()
        || f.other_ops.is_some()
}

/// Throughput of a run: of everything, or of some operation kinds (one
/// client group of a combined run).
fn throughput(ops: Option<&[String]>) -> impl Fn(&Sample) -> Option<f64> + '_ {
    move |s| match ops {
        None => Some(s.throughput),
        Some(names) => Some(
            s.ops
                .iter()
                .filter(|o| names.iter().any(|n| n == o.op.as_str()))
                .map(|o| o.throughput)
                .sum(),
        ),
    }
}

/// A run's p50 of the operation kind named `op`.
fn p50_of(op: &str) -> impl Fn(&Sample) -> Option<f64> + '_ {
    move |s| {
        s.ops
            .iter()
            .find(|o| o.op.as_str() == op)
            .map(|o| o.p50_us)
            .filter(|v| *v > 0.0)
    }
}

/// A run's p50 of `op` divided by its pipeline depth (the p50 itself at
/// depth 1, where kvbench records nothing per pipeline).
fn per_pipeline_p50_of(op: &str) -> impl Fn(&Sample) -> Option<f64> + '_ {
    move |s| {
        s.ops
            .iter()
            .find(|o| o.op.as_str() == op)
            .map(|o| o.per_pipeline_p50_us.unwrap_or(o.p50_us))
            .filter(|v| *v > 0.0)
    }
}

/// The latency a `latency_ratio` finding compares, and its name.
fn latency_value<'a>(f: &Finding, op: &'a str) -> (BoxedValue<'a>, String) {
    if f.per_pipeline {
        (
            Box::new(per_pipeline_p50_of(op)),
            format!("{op} p50 per pipeline"),
        )
    } else {
        (Box::new(p50_of(op)), format!("{op} p50"))
    }
}

/// The mean of `value` over a cell's runs.
fn mean(c: &Cell, value: Value) -> Option<f64> {
    let v: Vec<f64> = c.samples.iter().filter_map(value).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn sample(block: Option<u32>, throughput: f64) -> Sample {
    Sample {
        block,
        throughput,
        server_cpu_us: None,
        unusual: None,
        p50_us: None,
        p99_us: None,
        ops: Vec::new(),
        memory_after_run: None,
    }
}

/// One side of a ratio as a cell whose runs' throughput is the figure
/// measured: one cell's, or the per-block mean over several cells (a
/// paper's "the average of Redis and Aerospike"; without shared blocks,
/// the mean of their means as a single run).
fn side(cells: &[&Cell], value: Value) -> Option<Cell> {
    let first = *cells.first()?;
    let mut out = first.clone();
    out.samples = if cells.len() == 1 {
        first
            .samples
            .iter()
            .filter_map(|s| value(s).map(|v| sample(s.block, v)))
            .collect()
    } else {
        let mut blocks: Vec<u32> = first.samples.iter().filter_map(|s| s.block).collect();
        blocks.dedup();
        let mut v: Vec<Sample> = blocks
            .into_iter()
            .filter_map(|b| {
                let each: Option<Vec<f64>> = cells
                    .iter()
                    .map(|c| {
                        c.samples
                            .iter()
                            .find(|s| s.block == Some(b))
                            .and_then(value)
                    })
                    .collect();
                each.map(|e| sample(Some(b), e.iter().sum::<f64>() / e.len() as f64))
            })
            .collect();
        if v.is_empty() {
            let means: Option<Vec<f64>> = cells.iter().map(|c| mean(c, value)).collect();
            v = means
                .map(|m| sample(None, m.iter().sum::<f64>() / m.len() as f64))
                .into_iter()
                .collect();
        }
        v
    };
    (!out.samples.is_empty()).then_some(out)
}

fn just(s: &Sample) -> Option<f64> {
    Some(s.throughput)
}

/// Single runs' ratio of the sides' means.
fn single_runs(a: &Cell, b: &Cell) -> Option<Estimate> {
    let (x, y) = (mean(a, &just)?, mean(b, &just)?);
    (x > 0.0 && y > 0.0).then(|| Estimate::single_runs(x / y))
}

/// `a / b` of sides made by [`side`], paired over the blocks both ran.
fn paired_estimate(a: &Cell, b: &Cell) -> Option<Estimate> {
    crate::takeaways::ratio(a, b, just, paired::LEVEL)
        .map(Estimate::interval)
        .or_else(|| single_runs(a, b))
}

/// `a / b` of sides made by [`side`] at different places: Welch over runs.
fn unpaired_estimate(a: &Cell, b: &Cell) -> Option<Estimate> {
    let logs = |c: &Cell| -> Vec<f64> {
        c.samples
            .iter()
            .map(|s| s.throughput)
            .filter(|v| *v > 0.0)
            .map(f64::ln)
            .collect()
    };
    paired::unpaired(&logs(a), &logs(b), paired::LEVEL)
        .map(Estimate::interval)
        .or_else(|| single_runs(a, b))
}

fn verdict(a: Answer) -> Verdict {
    match a {
        Answer::Agrees => Verdict::Agrees,
        Answer::Differs => Verdict::Differs,
        Answer::Inconclusive => Verdict::Inconclusive,
    }
}

/// The reason shown beside a verdict: for differs the likely cause, for
/// inconclusive what would likely decide it.
fn explain(j: &Judgement, why: &Reasons, f: &Finding, cells: &[&Cell]) -> String {
    match j.answer {
        Answer::Agrees => String::new(),
        Answer::Inconclusive => j.to_decide.clone(),
        Answer::Differs => reason(why, f, cells),
    }
}

pub(super) fn check(f: &Finding, cells: &[Cell], paper: &Paper) -> Outcome {
    let why = &paper.reasons;
    let here = place(cells, &f.workload, &f.topology, f.pipeline);
    let missing = |what: &str| not_measured(f, what);
    if f.kind.is_analytics() {
        return missing("no analytics run in this report (kvbench analytics)");
    }
    if here.is_empty() {
        return missing(&format!("no {} cells of {}", f.topology, f.workload));
    }
    let tolerance = paper.tolerance.unwrap_or(rules::DEFAULT_TOLERANCE);
    if f.kind == Kind::Peak {
        return peak(f, &here, why);
    }
    if matches!(f.kind, Kind::Ratio | Kind::LatencyRatio) && across_places(f) {
        return ratio_across(f, cells, &here, why, tolerance);
    }
    let Some(clients) = at(&here, f.clients.as_ref()) else {
        return missing("that client count");
    };
    let clients_text = crate::takeaways::clients(clients);
    if f.kind == Kind::Ratio && f.system_average.is_some() {
        return ratio_of_average(f, &here, clients, why, tolerance);
    }
    let Some(a) = find(&here, &f.system, clients) else {
        return missing(&format!("{} at {clients_text}", f.system));
    };
    if f.kind == Kind::Winner {
        return winner(f, &here, a, paper);
    }
    if f.kind == Kind::Overhead {
        return overhead(f, &here, a, why, tolerance);
    }
    let Some(b) = f.other.as_deref().and_then(|o| find(&here, o, clients)) else {
        return missing(&format!(
            "{} at {clients_text}",
            f.other.as_deref().unwrap_or("?")
        ));
    };
    match f.kind {
        Kind::Ratio | Kind::LatencyRatio => {
            let (value, label) = ratio_quantity(f, f.ops.as_deref());
            let what = label.clone().unwrap_or_else(|| "throughput".to_string());
            let (Some(x), Some(y)) = (side(&[a], &*value), side(&[b], &*value)) else {
                return missing(&what);
            };
            let Some(est) = paired_estimate(&x, &y) else {
                return missing(&what);
            };
            let range = Range::claimed(f.bounds().0, f.bounds().1, tolerance);
            let measured = format!(
                "{}{} / {} = {} at {clients_text} (paper: {}, judged against {})",
                label.map_or(String::new(), |l| format!("{l} ")),
                a.system,
                b.system,
                est.text(),
                ratio_range(f.bounds()),
                range.text()
            );
            judged(f, why, &[a, b], &est, range, measured)
        }
        Kind::LowerReadLatency | Kind::LowerLatency => {
            let op = op_of(f);
            let p50 = p50_of(op);
            let (Some(x), Some(y)) = (side(&[a], &p50), side(&[b], &p50)) else {
                return missing(&format!("{op} operations"));
            };
            let Some(est) = paired_estimate(&x, &y) else {
                return missing(&format!("{op} operations"));
            };
            let measured = format!(
                "{op} p50 {} / {} = {} at {clients_text} ({} vs {} us)",
                a.system,
                b.system,
                est.text(),
                crate::format::micros(mean(&x, &just).unwrap_or(0.0)),
                crate::format::micros(mean(&y, &just).unwrap_or(0.0)),
            );
            judged(f, why, &[a, b], &est, Range::below(), measured)
        }
        Kind::MoreMemory => {
            let (Some(x), Some(y)) = (a.memory.at("after_run"), b.memory.at("after_run")) else {
                return missing("memory probes");
            };
            let mem = |s: &Sample| s.memory_after_run;
            let est = match (side(&[a], &mem), side(&[b], &mem)) {
                (Some(sa), Some(sb)) if sa.samples.len() >= 2 && sb.samples.len() >= 2 => {
                    crate::takeaways::ratio(&sa, &sb, just, paired::LEVEL).map(Estimate::interval)
                }
                _ => None,
            }
            .unwrap_or_else(|| Estimate::memory(x / y.max(1.0)));
            let mib = |v: f64| v / (1024.0 * 1024.0);
            let measured = format!(
                "after the run {} {:.1} MiB, {} {:.1} MiB: {}",
                a.system,
                mib(x),
                b.system,
                mib(y),
                est.text()
            );
            judged(f, why, &[a, b], &est, Range::above(), measured)
        }
        Kind::MoreGrowth => {
            let growth = |c: &Cell| -> Option<f64> {
                let (before, after) = (c.memory.at("before_run")?, c.memory.at("after_run")?);
                (before > 0.0).then(|| after / before)
            };
            let (Some(x), Some(y)) = (growth(a), growth(b)) else {
                return missing("memory probes before and after the run");
            };
            let est = Estimate::memory(x / y);
            let measured = format!(
                "during the run {} {:+.1}%, {} {:+.1}%: {}",
                a.system,
                (x - 1.0) * 100.0,
                b.system,
                (y - 1.0) * 100.0,
                est.text()
            );
            judged(f, why, &[a, b], &est, Range::above(), measured)
        }
        Kind::Winner | Kind::Overhead | Kind::Peak => unreachable!("handled above"),
        Kind::ServerBound | Kind::GraphMemory | Kind::SlowerLookup | Kind::KernelBound => {
            missing("no analytics run in this report")
        }
    }
}

/// The outcome of judging `est` against `range`.
fn judged(
    f: &Finding,
    why: &Reasons,
    cells: &[&Cell],
    est: &Estimate,
    range: Range,
    measured: String,
) -> Outcome {
    let j = rules::judge(est, range);
    let mut reason = explain(&j, why, f, cells);
    if j.answer == Answer::Differs
        && f.kind == Kind::Ratio
        && (est.point > 0.0) == (f.bounds().0 >= 1.0)
    {
        reason = format!("same direction, another size; {reason}");
    }
    outcome(f, measured, verdict(j.answer), reason)
}

/// "`system` leads" (among the paper's systems at the place) or, with
/// `other`, "`system` beats `other`".
fn winner(f: &Finding, here: &[&Cell], a: &Cell, paper: &Paper) -> Outcome {
    let rivals: Vec<&Cell> = here
        .iter()
        .copied()
        .filter(|c| c.clients == a.clients && c.system != a.system)
        .filter(|c| {
            paper
                .systems
                .as_deref()
                .is_none_or(|s| s.contains(&c.system))
        })
        // With `other`, a claim about two systems: a third one ahead of
        // both does not refute it.
        .filter(|c| f.other.as_deref().is_none_or(|o| c.system == o))
        .collect();
    if rivals.is_empty() {
        return not_measured(f, "a second system at that place");
    }
    let Some(mine) = side(&[a], &just) else {
        return not_measured(f, "throughput");
    };
    let mut vs = Vec::new();
    for r in &rivals {
        let Some(est) = side(&[r], &just).and_then(|s| paired_estimate(&mine, &s)) else {
            return not_measured(f, &format!("{}'s throughput", r.system));
        };
        vs.push((r.system.as_str(), est));
    }
    let mut ranking: Vec<&Cell> = rivals.iter().copied().chain([a]).collect();
    ranking.sort_by(|x, y| y.throughput.mean.total_cmp(&x.throughput.mean));
    let measured = format!(
        "at {}: {}; {}",
        crate::takeaways::clients(a.clients),
        ranking
            .iter()
            .map(|c| format!("{} {}", c.system, crate::format::rate(c.throughput.mean)))
            .collect::<Vec<_>>()
            .join(", ")
            + " ops/s",
        vs.iter()
            .map(|(n, e)| format!("{} / {n} = {}", a.system, e.text()))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let (j, who) = rules::leads(&vs);
    let cells: Vec<&Cell> = ranking.clone();
    let reason = match (j.answer, who) {
        (Answer::Differs, Some(w)) => format!(
            "{} is significantly behind {w}; {}",
            a.system,
            reason(&paper.reasons, f, &cells)
        ),
        (Answer::Inconclusive, Some(w)) => format!(
            "{} is not told apart from {w}{}",
            a.system,
            if j.to_decide.is_empty() {
                String::new()
            } else {
                format!("; {}", j.to_decide)
            }
        ),
        _ => String::new(),
    };
    outcome(f, measured, verdict(j.answer), reason)
}

/// `ratio` whose numerator is the mean of several systems.
fn ratio_of_average(
    f: &Finding,
    here: &[&Cell],
    clients: u32,
    why: &Reasons,
    tolerance: f64,
) -> Outcome {
    let names = f.system_average.as_deref().unwrap_or_default();
    let mut mine = Vec::new();
    for n in names {
        match find(here, n, clients) {
            Some(c) => mine.push(c),
            None => {
                return not_measured(f, &format!("{n} at {}", crate::takeaways::clients(clients)))
            }
        }
    }
    let other = f.other.as_deref().unwrap_or("?");
    let Some(b) = find(here, other, clients) else {
        return not_measured(
            f,
            &format!("{other} at {}", crate::takeaways::clients(clients)),
        );
    };
    let value = throughput(f.ops.as_deref());
    let (Some(x), Some(y)) = (side(&mine, &value), side(&[b], &value)) else {
        return not_measured(f, "throughput");
    };
    let Some(est) = paired_estimate(&x, &y) else {
        return not_measured(f, "throughput");
    };
    let range = Range::claimed(f.bounds().0, f.bounds().1, tolerance);
    let measured = format!(
        "mean of {} / {} = {} at {} (paper: {}, judged against {})",
        names.join(" and "),
        b.system,
        est.text(),
        crate::takeaways::clients(clients),
        ratio_range(f.bounds()),
        range.text()
    );
    let mut cells = mine.clone();
    cells.push(b);
    judged(f, why, &cells, &est, range, measured)
}

/// A ratio of one system's throughput at two places: pipeline 50 over 4,
/// 5 clients over 1, a cluster over a single server, a workload alone over
/// the same workload beside another.
fn ratio_across(
    f: &Finding,
    cells: &[Cell],
    here: &[&Cell],
    why: &Reasons,
    tolerance: f64,
) -> Outcome {
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
    let ((va, label), (vb, _)) = (ratio_quantity(f, ops), ratio_quantity(f, other_ops));
    let what = label.clone().unwrap_or_else(|| "throughput".to_string());
    let (Some(x), Some(y)) = (side(&[a], &*va), side(&[b], &*vb)) else {
        return missing(&what);
    };
    let Some(est) = unpaired_estimate(&x, &y) else {
        return missing(&what);
    };
    let range = Range::claimed(f.bounds().0, f.bounds().1, tolerance);
    let (mx, my) = (
        mean(&x, &just).unwrap_or(0.0),
        mean(&y, &just).unwrap_or(0.0),
    );
    let values = match label {
        Some(_) => format!(
            "{} / {} us",
            crate::format::micros(mx),
            crate::format::micros(my)
        ),
        None => format!(
            "{} / {} ops/s",
            crate::format::rate(mx),
            crate::format::rate(my)
        ),
    };
    let measured = format!(
        "{}{} / {} = {values} = {} (paper: {}, judged against {})",
        label.as_ref().map_or(String::new(), |l| format!("{l} ")),
        name_apart(a, ops, b, other_ops),
        name_apart(b, other_ops, a, ops),
        est.text(),
        ratio_range(f.bounds()),
        range.text()
    );
    judged(f, why, &[a, b], &est, range, measured)
}

/// The operation kind a latency finding compares: `op`, or reads.
fn op_of(f: &Finding) -> &str {
    match f.kind {
        Kind::LowerReadLatency => "read",
        _ => f.op.as_deref().unwrap_or("read"),
    }
}

/// What a `ratio` or `latency_ratio` finding measures of a run (the
/// throughput of `ops`, or the p50 of its operation kind), and for a
/// latency its name (`read p50 per pipeline`).
fn ratio_quantity<'a>(
    f: &'a Finding,
    ops: Option<&'a [String]>,
) -> (BoxedValue<'a>, Option<String>) {
    if f.kind == Kind::LatencyRatio {
        let (value, name) = latency_value(f, op_of(f));
        (value, Some(name))
    } else {
        (Box::new(throughput(ops)), None)
    }
}

/// `system`'s memory overhead over the raw data, within [low, high].
fn overhead(f: &Finding, here: &[&Cell], a: &Cell, why: &Reasons, tolerance: f64) -> Outcome {
    // The load is probed where it happened: with a shared server (reload
    // per workload or once per system) that is the first cell of the
    // place, not necessarily the named client count.
    let mut loaded = std::iter::once(a).chain(
        here.iter()
            .copied()
            .filter(|c| c.system == f.system && c.series == a.series),
    );
    let Some((a, o)) = loaded.find_map(|c| crate::takeaways::overhead(c).map(|o| (c, o))) else {
        return not_measured(f, "memory probes before and after the load");
    };
    if 1.0 + o <= 0.0 {
        return not_measured(f, "a load that freed more memory than it stored");
    }
    let est = Estimate::memory(1.0 + o);
    let (lo, hi) = (
        f.low.map_or(0.0, |l| 1.0 + l),
        f.high.map_or(f64::INFINITY, |h| 1.0 + h),
    );
    let range = Range::claimed(lo, hi, tolerance);
    let measured = format!(
        "{} {:+.1}% over {:.1} MiB of raw data (judged against {:+.0}% to {:+.0}%)",
        a.system,
        o * 100.0,
        a.dataset_bytes as f64 / (1024.0 * 1024.0),
        (range.lo.exp() - 1.0) * 100.0,
        (range.hi.exp() - 1.0) * 100.0,
    );
    judged(f, why, &[a], &est, range, measured)
}

/// `c` named by what sets it apart from `other`: its system, deployment,
/// workload, clients, pipeline or operations, whichever differ.
fn name_apart(
    c: &Cell,
    ops: Option<&[String]>,
    other: &Cell,
    other_ops: Option<&[String]>,
) -> String {
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
        return not_measured(f, "fewer than three client counts");
    }
    mine.sort_by_key(|c| c.clients);
    let (lo, hi) = f.bounds();
    let counts: Vec<String> = mine.iter().map(|c| c.clients.to_string()).collect();
    if !mine
        .iter()
        .any(|c| (lo..=hi).contains(&f64::from(c.clients)))
    {
        return not_measured(
            f,
            &format!(
                "no client count in {lo}-{hi} (measured {})",
                counts.join(", ")
            ),
        );
    }
    let sides: Vec<Cell> = mine.iter().filter_map(|c| side(&[c], &just)).collect();
    if sides.len() != mine.len() {
        return not_measured(f, "throughput at every client count");
    }
    let sweep: Vec<SweepPoint> = mine
        .iter()
        .map(|c| SweepPoint {
            clients: c.clients,
            mean: c.throughput.mean,
        })
        .collect();
    let p = rules::peak(&sweep, (lo, hi), |i, j| {
        unpaired_estimate(&sides[i], &sides[j]).unwrap_or_else(|| Estimate::single_runs(1.0))
    });
    let best = mine[p.best];
    let measured = format!(
        "{} highest at {} ({} ops/s) of clients {}",
        f.system,
        crate::takeaways::clients(best.clients),
        crate::format::rate(best.throughput.mean),
        counts.join(", ")
    );
    let reason = match p.answer {
        Answer::Agrees => String::new(),
        Answer::Inconclusive => p.why,
        Answer::Differs => format!("{}; {}", p.why, reason(why, f, &[best])),
    };
    outcome(f, measured, verdict(p.answer), reason)
}

/// The likely reason a finding differs: what in the cells themselves says
/// so (the client was the limit, iterations were noisy), else what the
/// paper's file says differs between its machines and this one for that
/// kind of finding.
fn reason(paper: &Reasons, f: &Finding, cells: &[&Cell]) -> String {
    let flagged = |flag: Flag| cells.iter().any(|c| c.flags.contains(&flag));
    let mut why = Vec::new();
    if flagged(Flag::Mark(MarkKind::ClientBound)) {
        why.push("kvbench was the limit (client-bound) on this machine".to_string());
    }
    // Noisy iterations are not a reason here: a finding differs only when
    // its whole interval, noise included, lies outside the paper's range.
    match f.kind {
        Kind::Winner
        | Kind::Ratio
        | Kind::Peak
        | Kind::LowerReadLatency
        | Kind::LowerLatency
        | Kind::LatencyRatio => {
            why.push(paper.throughput.clone());
            let multi = f.topology == "multi" || f.other_topology.as_deref() == Some("multi");
            if multi {
                why.push(paper.multi_node.clone());
            }
        }
        Kind::ServerBound | Kind::GraphMemory | Kind::SlowerLookup | Kind::KernelBound => {}
        Kind::MoreMemory | Kind::MoreGrowth | Kind::Overhead => {
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
    if let Some(w) = &f.why_differs {
        why.insert(0, w.clone());
    }
    why.retain(|w| !w.is_empty());
    why.join("; ")
}
