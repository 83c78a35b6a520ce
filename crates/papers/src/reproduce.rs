//! A paper reproduced from its experiment file, as two library calls so a
//! caller can say what is about to run between them: [`prepare`] scales
//! the matrix and writes the file it will run beside the report
//! (`DIR/experiment.toml`, so the report says exactly what ran), [`run`]
//! runs it as a resumable experiment pass and writes the report with the
//! paper's findings judged. Paper D, which is not an experiment file, is
//! `analytics.rs`.

use crate::scale::{scaled, Overrides};
use crate::Known;
use anyhow::Result;
use kvbench_experiment::pass::{self, Pass};
use kvbench_experiment::{Experiment, Resolve};
use kvbench_pages::{Framing, Selection, Written};
use kvbench_report::paper::Paper;
use kvbench_run::view::View;
use kvbench_store::{Location, Store};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A reproduction ready to run.
pub struct Prepared {
    /// The paper's findings, with the substitutions of this scale and of
    /// any optional system left out (no asd here).
    pub paper: Paper,
    /// The experiment file as scaled and written.
    pub file: String,
    /// Its cells.
    pub experiment: Experiment,
    /// Where the report goes (created).
    pub out: PathBuf,
}

impl Prepared {
    /// Each workload's record count, once each (paper C gives its keys and
    /// its sorted sets different counts), for the line a caller prints.
    #[must_use]
    pub fn loads(&self) -> Vec<String> {
        let mut loads: Vec<String> = Vec::new();
        for c in &self.experiment.cells {
            let load = format!(
                "{} {}",
                c.workload,
                kvbench_report::format::count(c.settings.spec.record_count)
            );
            if !loads.contains(&load) {
                loads.push(load);
            }
        }
        loads
    }
}

/// Scales `known`'s matrix to `scale` (checked by [`crate::check_scale`])
/// with `overrides`, creates `out`, writes the file into it and expands it
/// with `resolve` (the binary's `kvbench run` flags).
///
/// # Errors
/// An unwritable `out`, an override out of range, a cell that does not
/// resolve: usage errors, before anything runs.
pub fn prepare(
    known: &Known,
    scale: f64,
    overrides: &Overrides,
    out: &Path,
    resolve: &dyn Resolve,
) -> Result<Prepared> {
    let mut paper = crate::findings(known)?;
    paper.at_scale(scale >= 1.0);
    kvbench_pages::prepare(out)?;
    let file = scaled(known, scale, overrides)?;
    let path = out.join("experiment.toml");
    kvbench_run::atomic::write_atomic(&path, file.as_bytes())?;
    let experiment = kvbench_experiment::expand(&path, resolve)?;
    paper
        .substitutions
        .extend(experiment.absent.iter().cloned());
    Ok(Prepared {
        paper,
        file,
        experiment,
        out: out.to_path_buf(),
    })
}

/// What [`run`] did.
pub struct Reproduced {
    /// The pass: its runs and its worst status.
    pub pass: Pass,
    /// The report, unless nothing ran (a stop before the first cell).
    pub written: Option<Written>,
}

/// Runs the prepared matrix (resuming a pass of the same name in `store`)
/// and writes its report into `p.out`, the paper's findings judged.
///
/// # Errors
/// A store or a report file that fails; a cell's failure is a run stored
/// as failed, not an error.
pub fn run(
    p: Prepared,
    store: &mut Store,
    db: &Location,
    options: &pass::Options<'_>,
    view: &dyn View,
    stop: &Arc<AtomicBool>,
) -> Result<Reproduced> {
    let pass = pass::run(&p.experiment, options, store, view, stop)?;
    if pass.records.is_empty() {
        return Ok(Reproduced {
            pass,
            written: None,
        });
    }
    let written = kvbench_pages::write(
        store,
        db,
        &Selection::Experiment(p.experiment.name.clone()),
        &p.out,
        Framing {
            title: Some(format!("kvbench reproduces {}", p.paper.paper)),
            experiment_file: Some(p.file),
            paper: Some(p.paper),
            margin: None,
        },
    )?;
    Ok(Reproduced {
        pass,
        written: Some(written),
    })
}
