//! `kvbench export`: checks the destination, selects and reads the runs, and
//! writes what the kvbench-export crate makes of them, to stdout or to files.
//!
//! Files are never truncated ahead of time: each is written whole into a
//! temporary file in its own directory and renamed over the target, so a
//! failed export leaves an existing file as it was. The formats themselves
//! are not here.

use crate::args::{ExportArgs, ExportFormat};
use crate::db::{not_found, open_for_reading};
use crate::exit::{UsageError, Verdict};
use anyhow::Result;
use kvbench_export::{ExportError, ExportFile, RunRecord};
use kvbench_store::Location;
use kvbench_store::Store;
use std::io::Write;
use std::path::PathBuf;
use tempfile::NamedTempFile;

/// Where the bytes go, decided (and checked) before any run is read.
enum Destination {
    Stdout,
    /// The temporary file already exists, so an unwritable place fails now.
    File(PathBuf, NamedTempFile),
    Dir(PathBuf),
}

pub fn export(a: ExportArgs) -> Result<Verdict> {
    let selection = crate::select::selection(a.runs.as_deref())?;
    let destination = destination(&a)?;
    let store = open_for_reading(&a.db)?;
    let ids = match &a.experiment {
        Some(name) => experiment_runs(&store, name, &a.db)?,
        None => store
            .select_runs(&selection)
            .map_err(|e| not_found(e, &a.db))?,
    };
    if a.format == ExportFormat::MemtierJson && ids.len() != 1 {
        return Err(UsageError(format!(
            "--format memtier-json describes one run, and {} are selected; give --runs ID",
            ids.len()
        ))
        .into());
    }
    let records = ids
        .iter()
        .map(|&id| store.get_run(id).map_err(|e| not_found(e, &a.db)))
        .collect::<Result<Vec<RunRecord>>>()?;
    match destination {
        Destination::Stdout => {
            let bytes = single(a.format, &records)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)?;
            out.flush()?;
        }
        Destination::File(path, tmp) => {
            let bytes = single(a.format, &records)?;
            kvbench_run::atomic::commit(tmp, &path, &bytes)?;
            eprintln!("exported {} run(s) to {}", records.len(), path.display());
        }
        Destination::Dir(dir) => {
            let mut files = Vec::new();
            for r in &records {
                files.extend(per_histogram(a.format, r)?);
            }
            for f in &files {
                kvbench_run::atomic::write_atomic(&dir.join(&f.name), &f.bytes)?;
            }
            eprintln!("wrote {} file(s) to {}", files.len(), dir.display());
        }
    }
    Ok(Verdict::Ok)
}

/// `--experiment NAME`: the runs of its newest pass that did not fail, one
/// per cell and iteration, in plan order (what `experiment summary` uses).
fn experiment_runs(store: &Store, name: &str, db: &Location) -> Result<Vec<i64>> {
    Ok(crate::select::experiment_pass(store, name, db)?
        .into_iter()
        .map(|c| c.run_id)
        .collect())
}

fn destination(a: &ExportArgs) -> Result<Destination> {
    let per_histogram = matches!(a.format, ExportFormat::Hlog | ExportFormat::Hgrm);
    if per_histogram {
        if a.output.is_some() {
            return Err(UsageError(
                "--output: hlog and hgrm write one file per run, phase and operation; give --dir DIR"
                    .into(),
            )
            .into());
        }
        let Some(dir) = &a.dir else {
            return Err(UsageError(
                "hlog and hgrm write one file per run, phase and operation: give --dir DIR".into(),
            )
            .into());
        };
        // Create it, then prove it takes a file, before reading any run.
        std::fs::create_dir_all(dir)
            .and_then(|()| NamedTempFile::new_in(dir).map(drop))
            .map_err(|e| UsageError(format!("--dir {}: {e}", dir.display())))?;
        return Ok(Destination::Dir(dir.clone()));
    }
    if let Some(dir) = &a.dir {
        return Err(UsageError(format!(
            "--dir {}: only hlog and hgrm write several files; use --output FILE or stdout",
            dir.display()
        ))
        .into());
    }
    match &a.output {
        None => Ok(Destination::Stdout),
        Some(path) if path.is_dir() => Err(UsageError(format!(
            "--output {}: a directory; name a file (hlog and hgrm take --dir)",
            path.display()
        ))
        .into()),
        Some(path) => {
            let tmp = kvbench_run::atomic::temporary_beside(path)
                .map_err(|e| UsageError(format!("--output {}: {e}", path.display())))?;
            Ok(Destination::File(path.clone(), tmp))
        }
    }
}

/// The bytes of a one-file format.
fn single(format: ExportFormat, records: &[RunRecord]) -> Result<Vec<u8>> {
    let bytes = match format {
        ExportFormat::Csv => kvbench_export::csv::export(records),
        ExportFormat::Json => kvbench_export::json::export(records),
        ExportFormat::MemtierJson => match records {
            [one] => kvbench_export::memtier::export(one),
            _ => return Err(anyhow::anyhow!("memtier-json takes one run")),
        },
        ExportFormat::Hlog | ExportFormat::Hgrm => {
            return Err(anyhow::anyhow!("{format:?} writes files, not one stream"))
        }
    };
    bytes.map_err(user_or_data)
}

/// The files of a per-histogram format for one run.
fn per_histogram(format: ExportFormat, r: &RunRecord) -> Result<Vec<ExportFile>> {
    match format {
        ExportFormat::Hlog => kvbench_export::hlog::export(r),
        ExportFormat::Hgrm => kvbench_export::hgrm::export(r),
        other => return Err(anyhow::anyhow!("{other:?} is one stream, not files")),
    }
    .map_err(user_or_data)
}

/// Asking a run for what it does not have is bad input (exit 2); stored
/// data that does not decode is not (exit 1).
fn user_or_data(e: ExportError) -> anyhow::Error {
    match e {
        ExportError::NoPhases { .. }
        | ExportError::NoWindow { .. }
        | ExportError::NoIntervalHistograms { .. } => UsageError(e.to_string()).into(),
        other => other.into(),
    }
}
