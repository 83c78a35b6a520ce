//! The `experiment` commands: a file expanded into cells by the
//! kvbench-experiment crate (each cell's flags resolved by `run`'s own
//! parser, [`crate::config::RunFlags`]), listed with estimates (`plan`),
//! run resumably as a pass of `kvbench_experiment::pass` (`run`) and
//! summarised (`iterations`); and `compare`, whose cells are built from
//! flags. See docs/experiments.md.

mod compare;
mod iterations;
mod plan;
mod run;

pub(crate) use compare::experiment as compare_experiment;
pub(crate) use run::{execute, Options};

use crate::args::{ExperimentArgs, ExperimentCommand, ExperimentPlanArgs};
use crate::config::RunFlags;
use crate::exit::Verdict;
use crate::output::print;
use anyhow::Result;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs one `experiment` subcommand.
pub fn dispatch(a: ExperimentArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    match a.command {
        ExperimentCommand::Plan(p) => show_plan(p),
        ExperimentCommand::Run(r) => run::run(r, stop),
        ExperimentCommand::Summary(p) => summary(p),
    }
}

fn summary(a: ExperimentPlanArgs) -> Result<Verdict> {
    let exp = kvbench_experiment::expand(&a.file, &RunFlags)?;
    let store = crate::db::open_for_reading(&a.db)?;
    let generation = kvbench_experiment::plan::generation(Some(&store), &exp.name, false)?;
    let rows = kvbench_experiment::plan::plan(
        &exp,
        Some(&store),
        generation,
        &crate::signals::leave_if_stopped,
    )?;
    let cells = kvbench_experiment::iterations::summarise(&rows, |id| Ok(store.get_run(id)?))?;
    if a.json {
        print(&serde_json::to_string_pretty(&cells)?)?;
    } else if cells.is_empty() {
        print(&format!(
            "experiment {}: no finished cell in {} yet",
            exp.name, a.db
        ))?;
    } else {
        print(&iterations::text(&cells))?;
    }
    Ok(Verdict::Ok)
}

fn show_plan(a: ExperimentPlanArgs) -> Result<Verdict> {
    let exp = kvbench_experiment::expand(&a.file, &RunFlags)?;
    let store = run::existing_store(&a.db)?;
    let generation = kvbench_experiment::plan::generation(store.as_ref(), &exp.name, false)?;
    let rows = kvbench_experiment::plan::plan(
        &exp,
        store.as_ref(),
        generation,
        &crate::signals::leave_if_stopped,
    )?;
    if a.json {
        print(&serde_json::to_string_pretty(&plan::json(&exp, &rows))?)?;
    } else {
        print(&plan::text(&exp, &rows))?;
    }
    Ok(Verdict::Ok)
}

#[cfg(test)]
mod tests {
    use crate::config::RunFlags;
    use kvbench_experiment::blocks::fit_in_memory;
    use kvbench_experiment::cells::expand_file;
    use kvbench_experiment::{file, Cell};
    use kvbench_run::reuse::Reload;
    use std::path::Path;

    fn samples() -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut samples: Vec<String> = std::fs::read_dir(&dir)
            .expect("experiments/")
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
            .map(|e| std::fs::read_to_string(e.path()).expect("read"))
            .collect();
        samples.sort();
        assert!(samples.len() >= 5, "{samples:?}");
        samples
    }

    /// Feeds `cases` (by default) fuzzed experiment files, named
    /// `/nonexistent-kvbench-fuzz/e.toml`, to `step`: `Ok(Some(cells))` for a
    /// file accepted, `Err` for one refused. Never a panic; a refusal is one
    /// line naming the file; an accepted file has cells.
    fn fuzz_files(
        cases: u32,
        step: impl Fn(String, &Path) -> Result<Option<usize>, kvbench_run::UsageError>,
    ) {
        let path = Path::new("/nonexistent-kvbench-fuzz/e.toml");
        let mut runner = proptest::test_runner::TestRunner::new(kvbench_fuzz::config(cases));
        let dog = kvbench_fuzz::watchdog(std::time::Duration::from_secs(20));
        let outcome = runner.run(&kvbench_fuzz::text_from(samples()), |text| {
            dog.start(&text);
            let result = step(text, path);
            dog.done();
            match result {
                Ok(Some(cells)) => proptest::prop_assert!(cells > 0),
                Ok(None) => {}
                Err(e) => {
                    proptest::prop_assert!(!e.0.contains('\n'), "two lines: {}", e.0);
                    proptest::prop_assert!(e.0.contains("e.toml"), "names no file: {}", e.0);
                }
            }
            Ok(())
        });
        if let Err(e) = outcome {
            panic!("{e}");
        }
    }

    /// The parse alone (TOML and the file's schema), fuzzed for many more
    /// inputs than the expansion below can be. `KVBENCH_FUZZ_CASES` sets the
    /// number of inputs of both.
    #[test]
    fn experiment_file_text_never_panics_and_errors_are_one_line() {
        fuzz_files(10_000, |text, path| file::parse(text, path).map(|_| None));
    }

    /// Experiment files fuzzed (issue 15): the repository's own files,
    /// mutated and recombined, parsed and expanded into cells.
    #[test]
    fn experiment_files_never_panic_and_errors_are_one_line_naming_the_file() {
        fuzz_files(1500, |text, path| {
            file::parse(text, path)
                .and_then(|(f, src)| expand_file(f, src, &RunFlags))
                .map(|exp| Some(exp.cells.len()))
        });
    }

    #[test]
    fn blocks_that_do_not_fit_in_memory_run_deployment_by_deployment() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("e.toml");
        std::fs::write(
            &path,
            "name = \"fit\"\nseed = 3\niterations = 2\nreload = \"once-per-system\"\n\
             systems = [\"redis\", \"memcached\"]\nworkloads = [\"read-heavy\", \"balanced\"]\n\
             [dataset]\nrecords = 1000\n[run]\nduration = \"1s\"\n[sweep]\nclients = [1, 2]\n",
        )
        .expect("written");
        let exp = kvbench_experiment::expand(&path, &RunFlags).expect("a valid file");
        let order = |cells: &[Cell]| -> Vec<(String, String, u32, u32)> {
            cells
                .iter()
                .map(|c| {
                    (
                        c.system.clone(),
                        c.workload.clone(),
                        c.settings.clients,
                        c.iteration,
                    )
                })
                .collect()
        };
        let blocks = order(&exp.cells);
        // Blocks interleave the two systems (both are at every place).
        assert_ne!(blocks[0].0, blocks[1].0, "{blocks:?}");

        // Room for both: nothing changes.
        let (same, note) = fit_in_memory(exp.cells.clone(), exp.reload, Some(u64::MAX));
        assert_eq!((order(&same), note), (blocks.clone(), None));
        // Nothing kept between cells: nothing to fit.
        let (same, note) = fit_in_memory(exp.cells.clone(), Reload::PerRun, Some(1));
        assert_eq!((order(&same), note), (blocks.clone(), None));

        // No room: each system's 8 cells together, in their block order.
        let (cells, note) = fit_in_memory(exp.cells.clone(), exp.reload, Some(1));
        let note = note.expect("a note");
        assert!(
            note.starts_with("cells run deployment by deployment"),
            "{note}"
        );
        let got = order(&cells);
        let first = &blocks[0].0;
        assert!(got[..8].iter().all(|c| &c.0 == first), "{got:?}");
        assert!(got[8..].iter().all(|c| &c.0 != first), "{got:?}");
        let of = |v: &[(String, String, u32, u32)], sys: &String| -> Vec<_> {
            v.iter().filter(|c| &c.0 == sys).cloned().collect()
        };
        assert_eq!(of(&got, first), of(&blocks, first));
        assert!(cells.iter().enumerate().all(|(i, c)| c.index == i as u32));
    }
}
