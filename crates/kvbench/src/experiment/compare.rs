//! `kvbench compare` as an experiment. Its flags are a short way to write
//! one: systems x workloads x client counts, every other flag shared by all
//! cells. Each cell is the `kvbench run` flags it stands for, resolved by
//! the same code as `run` (and as an experiment file's cells), and the
//! whole is run by the same runner, so a comparison is stored cell by cell,
//! resumes where it stopped, and is skipped when it is all stored already.
//!
//! Its name is derived from the cells' keys (which hold the target's URL
//! with the password hidden, never the password), so the same command gives
//! the same experiment; without `--seed` the seed is derived from that name,
//! as in an experiment file, so the cells stay the same from one start to
//! the next.

use crate::args::CompareArgs;
use crate::config;
use crate::exit::UsageError;
use kvbench_experiment::cells::{self, Cell, Experiment};
use kvbench_run::reuse::Reload;
use kvbench_run::RunSettings;
use sha2::{Digest, Sha256};

/// Flags of `compare` that are not `run` flags: what is swept, and what is
/// done with the result. Each takes a value except `--restart`.
const OWN: &[(&str, bool)] = &[
    ("--systems", true),
    ("--workloads", true),
    ("--clients", true),
    ("--report", true),
    ("--reload", true),
    ("--iterations", true),
    ("--restart", false),
    ("--margin", true),
    ("--until-decided", false),
    ("--max-blocks", true),
    ("--budget", true),
];

/// Refuses a value listed twice in one of compare's lists: its cells would
/// run twice.
fn once<T: ToString>(flag: &str, values: &[T]) -> Result<(), UsageError> {
    let mut seen = std::collections::HashSet::new();
    for v in values {
        let v = v.to_string();
        if !seen.insert(v.clone()) {
            return Err(UsageError(format!(
                "{flag}: '{v}' is listed twice (its cells would run twice)"
            )));
        }
    }
    Ok(())
}

/// The experiment `compare` with `argv` (its arguments after `compare`,
/// as typed) declares.
///
/// # Errors
/// [`UsageError`] naming the flag, as `kvbench run` names it.
pub fn experiment(a: &CompareArgs, argv: &[String]) -> Result<Experiment, UsageError> {
    let shared = shared_flags(argv);
    let reload: Reload = a
        .reload
        .parse()
        .map_err(|e| UsageError(format!("--reload: {e}")))?;
    if a.systems.is_empty() || a.workloads.is_empty() || a.clients.is_empty() {
        return Err(UsageError(
            "nothing to compare: give at least one system, workload and client count".into(),
        ));
    }
    for sys in &a.systems {
        config::system(sys)?;
    }
    once("--systems", &a.systems)?;
    let one_binary = shared
        .iter()
        .any(|f| f == "--server-bin" || f.starts_with("--server-bin="));
    if one_binary && a.systems.len() > 1 {
        return Err(UsageError(format!(
            "--server-bin: one binary for --systems {} would be started for every system; compare one system with it, or give each system its own server_bin in an experiment file (docs/experiments.md)",
            a.systems.join(",")
        )));
    }
    once("--workloads", &a.workloads)?;
    once("--clients", &a.clients)?;
    let verdicts = kvbench_experiment::verdict_plan::Plan::new(
        a.margin,
        a.until_decided,
        a.max_blocks,
        a.budget,
    )
    .map_err(|(key, e)| UsageError(format!("--{}: {e}", key.replace('_', "-"))))?;
    let rule = verdicts.rule;
    let resolve_all = |seed: Option<u64>| -> Result<Vec<Cell>, UsageError> {
        let mut out = Vec::new();
        for sys in &a.systems {
            for w in &a.workloads {
                for c in &a.clients {
                    let mut args = vec![
                        "--system".to_string(),
                        sys.clone(),
                        "--workload".to_string(),
                        w.clone(),
                        "--clients".to_string(),
                        c.to_string(),
                    ];
                    args.extend(shared.iter().cloned());
                    if let Some(s) = seed {
                        args.extend(["--seed".to_string(), s.to_string()]);
                    }
                    let mut settings = crate::config::run_flags(args.clone())?;
                    settings.verdict = rule;
                    out.push(Cell {
                        index: out.len() as u32,
                        iteration: 1,
                        system: sys.clone(),
                        deployment: deployment(&settings),
                        workload: settings.spec.name.clone(),
                        key: cells::key(&settings, reload),
                        args,
                        settings,
                    });
                }
            }
        }
        Ok(out)
    };
    // The name from the cells as typed; the seed, when not typed, from it.
    // A fixed seed for the name when none is typed (else each start would
    // draw another, and with it other keys).
    let typed = resolve_all(a.bench.seed.is_none().then_some(0))?;
    let name = name(&typed, a.bench.seed.is_some());
    let cells = match a.bench.seed {
        Some(_) => typed,
        None => {
            let mut derived = resolve_all(Some(cells::name_seed(&name)))?;
            for c in &mut derived {
                c.settings.seed_source = "experiment name";
                c.key = cells::key(&c.settings, reload);
            }
            derived
        }
    };
    kvbench_run::bounds::ITERATIONS.check("--iterations", a.iterations.into())?;
    // A sequential comparison starts with the fewest blocks it may judge.
    let iterations = verdicts.first_blocks(a.iterations);
    // Whole passes, iterations outermost, then blocks, as in an experiment
    // file. The name leaves the count out: more iterations later add to the
    // stored ones.
    let seed = cells.first().map_or(0, |c| c.settings.seed);
    let cells: Vec<Cell> = (1..=iterations)
        .flat_map(|it| {
            cells.iter().cloned().map(move |mut c| {
                c.iteration = it;
                c
            })
        })
        .enumerate()
        .map(|(i, mut c)| {
            c.index = i as u32;
            c
        })
        .collect();
    let cells = kvbench_experiment::blocks::arrange(cells, seed);
    Ok(Experiment {
        name,
        iterations,
        reload,
        cells,
        absent: Vec::new(),
        sequential: verdicts.limits,
    })
}

/// `argv` without compare's own flags (`--flag value` and `--flag=value`).
fn shared_flags(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = argv.iter();
    while let Some(arg) = it.next() {
        let own = OWN.iter().find(|(f, _)| {
            arg == f
                || arg
                    .strip_prefix(f)
                    .is_some_and(|rest| rest.starts_with('='))
        });
        match own {
            Some((f, true)) if arg == f => {
                it.next();
            }
            Some(_) => {}
            None => out.push(arg.clone()),
        }
    }
    out
}

/// `compare-` and a hash of the cells' keys: the same comparison (systems,
/// workloads, clients and every setting, kvbench's version included) has
/// the same name. The keys hold no password.
fn name(cells: &[Cell], seeded: bool) -> String {
    let mut h = Sha256::new();
    for c in cells {
        h.update(c.key.as_bytes());
        h.update(b"\n");
    }
    if !seeded {
        h.update(b"derived seed");
    }
    let d = h.finalize();
    let hex: String = d.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("compare-{hex}")
}

/// `single`, `cluster/3`, `pool/3`, or the target's URL (password hidden).
fn deployment(s: &RunSettings) -> String {
    match &s.target {
        Some(t) => t.redacted(),
        None => s.shape().to_string(),
    }
}
