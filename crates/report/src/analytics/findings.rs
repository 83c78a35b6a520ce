//! Judges an analytics paper's findings (kinds `server_bound`,
//! `graph_memory`, `slower_lookup`, `kernel_bound`) against stored analytics records, each
//! from the newest record that measured what the finding is about. The
//! rules are per kind; the paper's figures and bounds are data
//! (`papers/*.toml`).

use crate::paper::{not_measured, outcome, ratio_range, Finding, Kind, Outcome, Paper, Verdict};
use kvbench_model::analytics::{AnalyticsRecord, LookupResult, PagerankResult, SetGetResult};

/// Every finding of `paper`, from the records of the paper's own graph
/// (those of another dataset run beside it are not its results); those
/// about run cells are not measured here.
pub fn evaluate(paper: &Paper, records: &[AnalyticsRecord]) -> Vec<Outcome> {
    let own: Vec<AnalyticsRecord> = records
        .iter()
        .filter(|r| paper.measures(&r.graph))
        .cloned()
        .collect();
    paper.judge_each(|f| check(f, paper, &own))
}

/// The newest record's result of `implementation`.
fn pagerank<'a>(
    records: &'a [AnalyticsRecord],
    implementation: &str,
) -> Option<(&'a AnalyticsRecord, &'a PagerankResult)> {
    records
        .iter()
        .filter_map(|r| {
            r.pagerank
                .iter()
                .find(|p| p.implementation == implementation)
                .map(|p| (r, p))
        })
        .max_by_key(|(r, _)| r.id)
}

/// The newest record that looked up on both `a` and `b`.
fn lookups<'a>(
    records: &'a [AnalyticsRecord],
    a: &str,
    b: &str,
) -> Option<(&'a LookupResult, &'a LookupResult)> {
    let find =
        |r: &'a AnalyticsRecord, name: &str| r.lookups.iter().find(|l| l.implementation == name);
    records
        .iter()
        .filter_map(|r| Some((r.id, find(r, a)?, find(r, b)?)))
        .max_by_key(|(id, _, _)| *id)
        .map(|(_, x, y)| (x, y))
}

/// Why a finding differs: its own `why_differs`, else the paper's reason
/// for its kind; nothing when it agrees.
fn reason(f: &Finding, verdict: Verdict, kind_reason: &str) -> String {
    if verdict == Verdict::Agrees {
        return String::new();
    }
    f.why_differs
        .clone()
        .unwrap_or_else(|| kind_reason.to_string())
}

fn within(f: &Finding, x: f64) -> Verdict {
    let (lo, hi) = f.bounds();
    if x >= lo && x <= hi {
        Verdict::Agrees
    } else {
        Verdict::Differs
    }
}

fn check(f: &Finding, paper: &Paper, records: &[AnalyticsRecord]) -> Outcome {
    match f.kind {
        Kind::ServerBound => server_bound(f, paper, records),
        Kind::GraphMemory => graph_memory(f, paper, records),
        Kind::SlowerLookup => slower_lookup(f, paper, records),
        Kind::KernelBound => kernel_bound(f, paper, records),
        _ => not_measured(f, "a finding about workload runs, not analytics"),
    }
}

fn server_bound(f: &Finding, paper: &Paper, records: &[AnalyticsRecord]) -> Outcome {
    let Some((_, r)) = pagerank(records, &f.system) else {
        return not_measured(f, &format!("no PageRank on {}", f.system));
    };
    let (Some(server), Some(client)) = (r.server_cpu_s, r.client_cpu_s) else {
        return not_measured(f, &format!("{}'s CPU was not probed", f.system));
    };
    let wall = r.iterations_s.max(1e-9);
    let (s, c) = (server / wall, client / wall);
    let low = f.low.unwrap_or(0.8);
    let verdict = if s >= low && c < s {
        Verdict::Agrees
    } else {
        Verdict::Differs
    };
    let measured = format!(
        "{} ({}): the server busy {:.0}% of a core over the iterations (at least {:.0}% asked), kvbench's drivers {:.0}%",
        r.implementation,
        r.detail,
        s * 100.0,
        low * 100.0,
        c * 100.0
    );
    let reason = match verdict {
        Verdict::Agrees => String::new(),
        _ if c >= s => {
            "kvbench's drivers used as much CPU as the server: the client side was the limit on this machine".into()
        }
        _ => reason(f, verdict, &paper.reasons.throughput),
    };
    outcome(f, measured, verdict, reason)
}

/// The paper's figure for this graph, in bytes: scaled by nodes when the
/// graph is not the paper's (its keys and lists grow with them).
fn paper_bytes(f: &Finding, paper: &Paper, r: &AnalyticsRecord) -> Option<(f64, String)> {
    let mb = f.paper_mb?;
    let Some(g) = &paper.graph else {
        return Some((mb * 1e6, format!("{mb} MB")));
    };
    if r.graph.nodes == g.nodes {
        return Some((mb * 1e6, format!("{mb} MB")));
    }
    let k = f64::from(r.graph.nodes) / f64::from(g.nodes);
    Some((
        mb * 1e6 * k,
        format!(
            "{mb} MB x {k:.3} = {:.1} MB (this graph has {:.1}% of the {}'s nodes)",
            mb * k,
            k * 100.0,
            g.name
        ),
    ))
}

fn graph_memory(f: &Finding, paper: &Paper, records: &[AnalyticsRecord]) -> Outcome {
    let Some((rec, r)) = pagerank(records, &f.system) else {
        return not_measured(f, &format!("no PageRank on {}", f.system));
    };
    let Some(bytes) = r.memory_bytes else {
        return not_measured(f, &format!("{}'s memory was not measured", f.system));
    };
    let Some((theirs, text)) = paper_bytes(f, paper, rec) else {
        return not_measured(f, "the paper's figure (paper_mb) is not in its file");
    };
    let ratio = bytes as f64 / theirs;
    let verdict = within(f, ratio);
    let measured = format!(
        "{:.1} MB ({:.1} MiB) against the paper's {text}: {ratio:.2}x (agrees within {})",
        bytes as f64 / 1e6,
        bytes as f64 / (1024.0 * 1024.0),
        ratio_range(f.bounds())
    );
    outcome(
        f,
        measured,
        verdict,
        reason(f, verdict, &paper.reasons.memory),
    )
}

fn slower_lookup(f: &Finding, paper: &Paper, records: &[AnalyticsRecord]) -> Outcome {
    let Some(other) = f.other.as_deref() else {
        return not_measured(f, "no `other` system in the paper's file");
    };
    let Some((a, b)) = lookups(records, &f.system, other) else {
        return not_measured(f, &format!("no lookups on both {} and {other}", f.system));
    };
    if b.p50_us <= 0.0 {
        return not_measured(f, &format!("{other}'s median lookup was 0"));
    }
    let ratio = a.p50_us / b.p50_us;
    let verdict = within(f, ratio);
    let measured = format!(
        "median lookup {} {:.0} us against {other} {:.1} us over {} lookups each: {ratio:.0}x (at least {}x asked)",
        f.system,
        a.p50_us,
        b.p50_us,
        a.count.min(b.count),
        f.low.unwrap_or(0.0)
    );
    outcome(
        f,
        measured,
        verdict,
        reason(f, verdict, &paper.reasons.throughput),
    )
}

/// The newest record's set/get window on `system`.
fn setget<'a>(records: &'a [AnalyticsRecord], system: &str) -> Option<&'a SetGetResult> {
    records
        .iter()
        .filter_map(|r| {
            let l = r.lookups.iter().find(|l| l.implementation == system)?;
            Some((r.id, l.setget.as_ref()?))
        })
        .max_by_key(|(id, _)| *id)
        .map(|(_, sg)| sg)
}

/// How far a set/get window's busy share and kernel share moved between
/// runs of the same command on this machine (docs/analytics.md, "Set/get
/// throughput"): a single window is judged with this much room on each
/// side of both, besides the clock ticks' own resolution, as single runs
/// decide only beyond the machine's run-to-run spread.
pub const SETGET_SPREAD: f64 = 0.03;

/// `lo..=hi` against a threshold: all of it at or above (agrees), all of it
/// below (differs), or across it.
fn against(lo: f64, hi: f64, threshold: f64) -> Verdict {
    if lo >= threshold {
        Verdict::Agrees
    } else if hi < threshold {
        Verdict::Differs
    } else {
        Verdict::Inconclusive
    }
}

/// The server's CPU over the set/get window, and the kernel's share of it:
/// each judged with an interval for the ticks the two `/proc` readings can
/// each be off by, widened by the spread between runs. Agrees when both
/// are wholly at or above their thresholds, differs when either is wholly
/// below, else inconclusive.
fn kernel_bound(f: &Finding, paper: &Paper, records: &[AnalyticsRecord]) -> Outcome {
    let Some(sg) = setget(records, &f.system) else {
        return not_measured(f, &format!("no set/get window on {}", f.system));
    };
    let (Some(busy), Some(share)) = (sg.server_busy(), sg.kernel_share()) else {
        return not_measured(f, &format!("{}'s CPU was not probed", f.system));
    };
    // Each figure is a difference of two readings in whole ticks: off by
    // less than a tick, so the server's total by less than two.
    let wall = sg.seconds.max(1e-9);
    let total = busy * wall;
    let busy_room = 2.0 * sg.tick_s / wall + SETGET_SPREAD;
    let share_room = sg.tick_s / total.max(1e-9) + SETGET_SPREAD;
    let (busy_lo, busy_hi) = (busy - busy_room, busy + busy_room);
    let (share_lo, share_hi) = (share - share_room, share + share_room);
    let low = f.low.unwrap_or(0.8);
    let kernel = f.kernel_share.unwrap_or(0.5);
    let verdicts = [
        against(busy_lo, busy_hi, low),
        against(share_lo, share_hi, kernel),
    ];
    let verdict = if verdicts.contains(&Verdict::Differs) {
        Verdict::Differs
    } else if verdicts.contains(&Verdict::Inconclusive) {
        Verdict::Inconclusive
    } else {
        Verdict::Agrees
    };
    let measured = format!(
        "set/get, {} drivers for {:.1} s: {} ops/s; the server busy {:.0}% of a core [{:.0}, {:.0}] (at least {:.0}% asked), {:.0}% of it in the kernel [{:.0}, {:.0}] (at least {:.0}% asked; both intervals: ticks and ±{:.0} points run-to-run spread); kvbench's drivers {:.0}%",
        sg.drivers,
        sg.seconds,
        crate::format::count(sg.ops_per_s().round() as u64),
        busy * 100.0,
        busy_lo * 100.0,
        busy_hi * 100.0,
        low * 100.0,
        share * 100.0,
        share_lo.max(0.0) * 100.0,
        share_hi.min(1.0) * 100.0,
        kernel * 100.0,
        SETGET_SPREAD * 100.0,
        sg.client_busy() * 100.0
    );
    let reason = match verdict {
        Verdict::Agrees => String::new(),
        Verdict::Inconclusive => {
            "a figure's interval crosses its threshold: within this machine's run-to-run spread of it, which one window cannot tell apart".into()
        }
        _ if verdicts[1] == Verdict::Differs => {
            "most of the server's CPU went to its own code, not to the kernel's TCP stack".into()
        }
        _ if sg.client_cpu_s >= total => {
            "kvbench's drivers used as much CPU as the server: the client side was the limit on this machine".into()
        }
        _ => reason(f, verdict, &paper.reasons.throughput),
    };
    outcome(f, measured, verdict, reason)
}
