//! Which system to pick where: per workload, topology and few or many
//! clients, the system with the higher mean throughput and its margin, or
//! "tie" when the data cannot tell them apart; and sentences that say what
//! the matrix says. Nothing here is written in advance: every word comes
//! from the cells.
//!
//! Few clients is the smallest client count a workload and topology were
//! measured at, many the largest (paper B's "few and many"). Two systems
//! tie when both have confidence intervals (two or more iterations) and
//! the intervals overlap, or, with a single run on either side, when they
//! differ by less than [`SINGLE_RUN_TIE`] of the higher.

use crate::cells::Cell;
use serde::Serialize;
use std::collections::BTreeMap;

/// Single runs closer than this share of the higher are a tie: the spread
/// of repeated runs on a quiet machine (docs/experiments.md).
pub const SINGLE_RUN_TIE: f64 = 0.05;

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
    /// The winner's label, or `None` for a tie.
    pub winner: Option<String>,
    /// The winner's system (for its colour).
    pub winner_system: Option<String>,
    /// The runner-up's label.
    pub runner_up: String,
    /// How much higher the winner's mean is than the runner-up's (0.23 for
    /// 23%); for a tie, the difference between the two means.
    pub margin: f64,
    /// Why a tie is a tie, or the winner's flags worth a second look.
    pub note: String,
    /// Every system's mean throughput here, best first.
    pub ranking: Vec<(String, f64)>,
}

/// The matrix: one verdict per workload x topology x few/many, for every
/// place with at least two systems measured in closed loop.
pub fn matrix(cells: &[Cell]) -> Vec<Verdict> {
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
            out.push(verdict(&workload, &topology, band, clients, &here));
        }
    }
    out
}

fn verdict(
    workload: &str,
    topology: &str,
    band: &str,
    clients: u32,
    best_first: &[&Cell],
) -> Verdict {
    let (a, b) = (best_first[0], best_first[1]);
    let margin = if b.throughput.mean > 0.0 {
        a.throughput.mean / b.throughput.mean - 1.0
    } else {
        f64::INFINITY
    };
    let tie = tie(a, b);
    let flagged: Vec<&str> = a
        .flags
        .iter()
        .chain(&b.flags)
        .map(String::as_str)
        .filter(|f| {
            matches!(
                *f,
                "client-bound" | "noisy" | "unstable" | "errors" | "overloaded"
            )
        })
        .collect();
    // A tie still says who was ahead, so a reader sees how close it was.
    let mut note = match &tie {
        Some(why) => format!("{} ahead by {:.0}%, but {why}", a.series, margin * 100.0),
        None => String::new(),
    };
    if !flagged.is_empty() {
        let mut f = flagged.clone();
        f.sort_unstable();
        f.dedup();
        if !note.is_empty() {
            note.push_str("; ");
        }
        note.push_str(&format!("flagged: {}", f.join(", ")));
    }
    Verdict {
        workload: workload.into(),
        topology: topology.into(),
        clients_band: band.into(),
        clients,
        winner: tie.is_none().then(|| a.series.clone()),
        winner_system: tie.is_none().then(|| a.system.clone()),
        runner_up: b.series.clone(),
        margin,
        note,
        ranking: best_first
            .iter()
            .map(|c| (c.series.clone(), c.throughput.mean))
            .collect(),
    }
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
    if !ties.is_empty() {
        let places: Vec<String> = ties
            .iter()
            .map(|v| format!("{}, {}, {}", v.workload, v.topology, clients(v.clients)))
            .collect();
        out.push(format!(
            "{} place{} could not be called (a tie): {}.",
            ties.len(),
            if ties.len() == 1 { "" } else { "s" },
            places.join("; ")
        ));
    }
    out
}

/// `1 client`, `8 clients`.
pub fn clients(n: u32) -> String {
    format!("{n} client{}", if n == 1 { "" } else { "s" })
}

/// Why `a` and `b` (`a` the higher) cannot be told apart, or `None` when
/// they can: both have intervals and they overlap, or either is a single
/// run and they are within [`SINGLE_RUN_TIE`].
pub fn tie(a: &Cell, b: &Cell) -> Option<String> {
    let (hi, lo) = if a.throughput.mean >= b.throughput.mean {
        (a, b)
    } else {
        (b, a)
    };
    match (hi.throughput.interval(), lo.throughput.interval()) {
        (Some((hlo, _)), Some((_, lhi))) => {
            (hlo <= lhi).then(|| "their 95% intervals overlap".to_string())
        }
        _ => (hi.throughput.mean - lo.throughput.mean < SINGLE_RUN_TIE * hi.throughput.mean).then(
            || {
                format!(
                    "single runs within {:.0}% of each other",
                    SINGLE_RUN_TIE * 100.0
                )
            },
        ),
    }
}
