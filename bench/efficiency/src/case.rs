//! One case: its tools run `repeat` times, in alternating order, a failed
//! repetition run again at most twice, and the medians of the ratios that
//! make the case's figures. One loop for every combination of tools, so a
//! case with no reference tool (Memcached with a pipeline: memaslap cannot)
//! is measured and retried exactly as one with it.

use crate::{median_of, print_row, Case, Ctx, Measurement};
use std::io::{self, Write as _};

/// A tool a case can run; a case's tools are listed in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Kvbench,
    /// kvbench's I/O without kvbench's work: the floor (`bare.rs`).
    Bare,
    /// redis-benchmark or memaslap.
    Other,
    /// memtier_benchmark, when the user has one (`memtier.rs`).
    Memtier,
}

/// How many times a failed repetition of a case is run again before it is
/// given up (the case's figures then rest on the repetitions that did run).
const RETRIES: u32 = 2;

/// A case's figures: medians over its measured repetitions.
#[derive(Debug, Default)]
pub(crate) struct Figures {
    /// kvbench / the other tool: median, lowest, highest.
    pub other: Option<(f64, f64, f64)>,
    /// kvbench / the bare client.
    pub kvbench_bare: Option<f64>,
    /// kvbench / memtier_benchmark.
    pub memtier: Option<f64>,
    /// memtier_benchmark's median client CPU seconds per million operations.
    pub memtier_cpu: Option<f64>,
    /// kvbench's median user and system CPU seconds per million operations
    /// (each the median of its own column).
    pub kvbench_split: Option<(f64, f64)>,
    /// Repetitions measured.
    pub measured: usize,
    /// The last failure, when a repetition was given up.
    pub failure: Option<String>,
}

/// The order of repetition `rep` (from 1): `tools` as listed in odd
/// repetitions, backwards in even ones, so that a drift of the machine or an
/// after-effect of the previous run on the server favours no tool.
pub(crate) fn order(tools: &[Tool], rep: u32) -> Vec<Tool> {
    let mut o = tools.to_vec();
    if rep.is_multiple_of(2) {
        o.reverse();
    }
    o
}

/// One repetition's CPU seconds per million operations, per tool: user
/// and system.
struct Rep {
    cpu: Vec<(Tool, (f64, f64))>,
    other_name: &'static str,
}

impl Rep {
    fn get(&self, t: Tool) -> Option<f64> {
        self.split(t).map(|(u, s)| u + s)
    }

    fn split(&self, t: Tool) -> Option<(f64, f64)> {
        self.cpu.iter().find(|(x, _)| *x == t).map(|(_, c)| *c)
    }

    /// `a`'s CPU per operation over `b`'s, when both ran.
    fn ratio(&self, a: Tool, b: Tool) -> Option<f64> {
        Some(self.get(a)? / self.get(b)?)
    }
}

pub(crate) fn run(ctx: &Ctx<'_>, case: &Case, tools: &[Tool], repeat: u32) -> Figures {
    run_reps(ctx, case, tools, 1..=repeat)
}

/// [`run`] over repetitions `reps` only, numbered (and so ordered) as
/// they are: a caller that alternates two topologies runs one repetition
/// of each in turn, and the tools still alternate from one to the next.
pub(crate) fn run_reps(
    ctx: &Ctx<'_>,
    case: &Case,
    tools: &[Tool],
    reps_run: std::ops::RangeInclusive<u32>,
) -> Figures {
    let sys = ctx.system();
    let c = case.name;
    let mut reps: Vec<Rep> = Vec::new();
    let mut failure = None;
    for rep in reps_run {
        let once = || -> anyhow::Result<Vec<(Tool, Measurement)>> {
            let mut got = Vec::new();
            for t in order(tools, rep) {
                let m = ctx.measure_tool(t, case)?;
                print_row(case, rep, &m);
                got.push((t, m));
            }
            Ok(got)
        };
        let mut attempt = 0;
        let got = loop {
            match once() {
                Ok(got) => break Some(got),
                Err(e) if attempt < RETRIES => {
                    attempt += 1;
                    println!(
                        "  !!  case {c} {sys} repetition {rep}: {e:#}; running it again ({attempt} of {RETRIES})"
                    );
                }
                Err(e) => {
                    println!(
                        "  !!  case {c} {sys} repetition {rep}: {e:#}; given up after {RETRIES} retries"
                    );
                    failure = Some(format!("{e:#}"));
                    break None;
                }
            }
        };
        let Some(got) = got else { continue };
        let r = Rep {
            other_name: got
                .iter()
                .find(|(t, _)| *t == Tool::Other)
                .map_or("", |(_, m)| m.tool),
            cpu: got
                .iter()
                .map(|(t, m)| (*t, m.split_per_million()))
                .collect(),
        };
        print_rep(c, &sys.to_string(), rep, &r);
        reps.push(r);
    }
    let col = |f: &dyn Fn(&Rep) -> Option<f64>| -> Vec<f64> { reps.iter().filter_map(f).collect() };
    let ko = col(&|r| r.ratio(Tool::Kvbench, Tool::Other));
    let other = median_of(ko.clone()).map(|m| {
        let (lo, hi) = ko
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        (m, lo, hi)
    });
    let figures = Figures {
        other,
        kvbench_bare: median_of(col(&|r| r.ratio(Tool::Kvbench, Tool::Bare))),
        memtier: median_of(col(&|r| r.ratio(Tool::Kvbench, Tool::Memtier))),
        memtier_cpu: median_of(col(&|r| r.get(Tool::Memtier))),
        kvbench_split: median_of(col(&|r| r.split(Tool::Kvbench).map(|(u, _)| u)))
            .zip(median_of(col(&|r| r.split(Tool::Kvbench).map(|(_, s)| s)))),
        measured: reps.len(),
        failure,
    };
    let n = reps.len();
    if n == 0 {
        println!(
            "  ==  case {c} {sys}: no repetition measured: {}",
            figures.failure.as_deref().unwrap_or("no tool ran")
        );
        return figures;
    }
    if let Some((m, lo, hi)) = figures.other {
        println!("  ==  case {c} {sys}: median ratio {m:.3} over {n} repetitions (range {lo:.2}-{hi:.2})");
    }
    if let Some(kb) = figures.kvbench_bare {
        let bc = median_of(col(&|r| r.get(Tool::Bare))).unwrap_or(f64::NAN);
        let mut line = format!(
            "  ==  case {c} {sys}: bare client median {bc:.2} CPU s per 1M ops; kvbench / bare median {kb:.3}"
        );
        if let Some(bo) = median_of(col(&|r| r.ratio(Tool::Bare, Tool::Other))) {
            line.push_str(&format!(
                "; bare / other tool median {bo:.3} (the lowest ratio a client doing this I/O could show)"
            ));
        }
        println!("{line} over {n} repetitions");
    }
    if let (Some(km), Some(mc)) = (figures.memtier, figures.memtier_cpu) {
        println!(
            "  ==  case {c} {sys}: memtier_benchmark median {mc:.2} CPU s per 1M ops; kvbench / memtier median {km:.3} over {n} repetitions"
        );
    }
    figures
}

/// The repetition's ratio lines: kvbench over each other tool that ran;
/// the first names the case and repetition.
fn print_rep(c: char, sys: &str, rep: u32, r: &Rep) {
    let Some(k) = r.get(Tool::Kvbench) else {
        return;
    };
    let mut lines = Vec::new();
    if let Some(o) = r.get(Tool::Other) {
        lines.push(format!(
            "kvbench {k:.2} / {} {o:.2} CPU s per 1M ops = ratio {:.2}",
            r.other_name,
            k / o
        ));
    }
    if let Some(b) = r.get(Tool::Bare) {
        let mut line = format!(
            "bare client {b:.2} CPU s per 1M ops: kvbench / bare {:.2}",
            k / b
        );
        if let Some(o) = r.get(Tool::Other) {
            line.push_str(&format!(", bare / {} {:.2}", r.other_name, b / o));
        }
        lines.push(line);
    }
    if let Some(m) = r.get(Tool::Memtier) {
        lines.push(format!(
            "memtier_benchmark {m:.2} CPU s per 1M ops: kvbench / memtier {:.2}",
            k / m
        ));
    }
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            println!("  ->  case {c} {sys} repetition {rep}: {line}");
        } else {
            println!("      {line}");
        }
    }
    let _ = io::stdout().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_repetitions_run_the_tools_backwards() {
        let tools = [Tool::Kvbench, Tool::Bare, Tool::Other, Tool::Memtier];
        assert_eq!(order(&tools, 1), tools.to_vec());
        assert_eq!(
            order(&tools, 2),
            vec![Tool::Memtier, Tool::Other, Tool::Bare, Tool::Kvbench]
        );
        assert_eq!(order(&tools, 3), tools.to_vec());
    }
}
