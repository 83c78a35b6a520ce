//! A finished run the database would not take (locked by another process
//! past the wait, disk full, a file gone): written as JSON beside the
//! database instead, so the measurement is not lost, and stored later by
//! `kvbench import`. The file carries the experiment cell the run was made
//! for, so an imported run counts for its experiment as if saved at once.

use crate::usage::UsageError;
use anyhow::{Context, Result};
use kvbench_model::RunRecord;
use kvbench_store::Location;
use kvbench_store::{CellTag, Store};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What marks a file as one kvbench wrote for `import`.
const FORMAT: &str = "kvbench-unsaved-run-1";

/// How long a save waits, in all, for a database another process holds
/// locked (`KVBENCH_DB_WAIT`, in seconds, overrides it).
const DEFAULT_WAIT: Duration = Duration::from_secs(60);
/// Each attempt's own wait inside SQLite.
const ATTEMPT_WAIT: Duration = Duration::from_secs(10);

#[derive(Serialize, Deserialize)]
struct UnsavedRun {
    format: String,
    /// The database the run was meant for.
    db: PathBuf,
    /// Why it was not saved there.
    reason: String,
    cell: Option<CellTag>,
    record: RunRecord,
}

/// Saves `rec` (with its cell), waiting for a locked database up to the
/// bound; if it still cannot be saved, writes it beside the database and
/// fails with one line that names the file and the command that stores it.
/// The run's summary goes to stderr first, so it is seen either way.
pub fn save(store: &mut Store, rec: &RunRecord, cell: Option<&CellTag>) -> Result<i64> {
    let wait = wait_bound()?;
    let started = Instant::now();
    let mut said = false;
    let error = loop {
        let left = wait.saturating_sub(started.elapsed());
        store.set_busy_timeout(left.min(ATTEMPT_WAIT).max(Duration::from_millis(1)))?;
        let saved = match cell {
            Some(c) => store.save_cell_run(rec, c),
            None => store.save_run(rec),
        };
        match saved {
            Ok(id) => return Ok(id),
            Err(e) if e.is_busy() && !left.is_zero() => {
                if !said {
                    eprintln!(
                        "kvbench: {} is locked by another process; waiting up to {} s to save the run",
                        store.location(),
                        wait.as_secs()
                    );
                    said = true;
                }
            }
            Err(e) => break e,
        }
    };
    eprint!("{}", kvbench_report::text::run_summary(rec));
    let file = write(store.location(), rec, cell, &error.to_string())?;
    anyhow::bail!(
        "cannot save the run to {} ({error}); it is kept in {}: store it with `kvbench import {} --db {}`",
        store.location(),
        file.display(),
        file.display(),
        store.location()
    )
}

/// `KVBENCH_DB_WAIT` (seconds), or the default. `main` reads it before any
/// command starts, so a bad value never throws away a finished measurement.
pub fn wait_bound() -> Result<Duration> {
    match std::env::var("KVBENCH_DB_WAIT") {
        Err(_) => Ok(DEFAULT_WAIT),
        Ok(v) => v
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&s| s <= 86_400)
            .map(|s| Duration::from_secs(s.into()))
            .ok_or_else(|| {
                UsageError(format!(
                    "KVBENCH_DB_WAIT={v:?}: expected whole seconds from 0 to 86400"
                ))
                .into()
            }),
    }
}

/// Writes the run beside the database (in the working directory for a
/// PostgreSQL one), or in the temporary directory when that cannot be
/// written (a full disk); returns where.
fn write(db: &Location, rec: &RunRecord, cell: Option<&CellTag>, reason: &str) -> Result<PathBuf> {
    let body = serde_json::to_vec_pretty(&UnsavedRun {
        format: FORMAT.to_string(),
        // Shown form: a PostgreSQL URL without its password.
        db: PathBuf::from(db.to_string()),
        reason: reason.to_string(),
        cell: cell.cloned(),
        record: rec.clone(),
    })?;
    let name = format!(
        "{}.unsaved-{}-{}.json",
        db.sqlite_path()
            .and_then(Path::file_name)
            .map_or("kvbench.db".into(), |n| n.to_string_lossy()),
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default()
    );
    let beside = match db.sqlite_path() {
        Some(path) => path.with_file_name(&name),
        None => PathBuf::from(&name),
    };
    let mut tried = Vec::new();
    for path in [beside, std::env::temp_dir().join(&name)] {
        let written = crate::atomic::temporary_beside(&path)
            .map_err(anyhow::Error::from)
            .and_then(|tmp| crate::atomic::commit(tmp, &path, &body));
        match written {
            Ok(()) => return Ok(path),
            Err(e) => tried.push(format!("{}: {e:#}", path.display())),
        }
    }
    anyhow::bail!(
        "cannot save the run to {} ({reason}), nor write it as JSON ({}); the summary above is all that is left",
        db,
        tried.join("; ")
    )
}

/// `kvbench import FILE...`: stores each run written by [`save`], then
/// removes its file. A file that is not one is refused before anything is
/// stored.
pub fn import(files: &[PathBuf], store: &mut Store) -> Result<Vec<(PathBuf, i64)>> {
    let mut runs = Vec::with_capacity(files.len());
    for f in files {
        let text = kvbench_workload::input::read_file(f, kvbench_workload::input::RUN_FILE_LIMIT)
            .map_err(UsageError)?;
        let run: UnsavedRun = serde_json::from_slice(&text)
            .ok()
            .filter(|r: &UnsavedRun| r.format == FORMAT)
            .ok_or_else(|| {
                UsageError(format!(
                    "{}: not a run kvbench kept when it could not save it (expected a .unsaved-*.json file it wrote)",
                    f.display()
                ))
            })?;
        runs.push((f.clone(), run));
    }
    let mut stored = Vec::with_capacity(runs.len());
    for (f, run) in runs {
        let id = match &run.cell {
            Some(c) => store.save_cell_run(&run.record, c),
            None => store.save_run(&run.record),
        }
        .with_context(|| format!("cannot store {}", f.display()))?;
        // Standard input (`-`) names no file to remove.
        if f.as_os_str() != kvbench_workload::input::STDIN {
            std::fs::remove_file(&f).with_context(|| {
                format!("stored as run {id}, but cannot remove {}", f.display())
            })?;
        }
        stored.push((f, id));
    }
    Ok(stored)
}
