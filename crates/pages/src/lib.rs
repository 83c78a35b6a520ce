//! A report's files, for every command that writes one (`report`,
//! `experiment run` at its end, `reproduce`): reads the selected runs (with
//! their experiment cells, so iterations are grouped), has
//! `kvbench_report::page` render them, and writes each file whole
//! (temporary file, then rename), `index.html` last, so a reader never
//! opens a page whose figures are not there yet. Kept apart from
//! `kvbench-report`, which renders bytes and never touches a file or the
//! store's connection.

use anyhow::{Context, Result};
use kvbench_report::cells::Source;
use kvbench_report::page::{self, Input, Summary};
use kvbench_report::takeaways::Rule;
use kvbench_run::usage::unknown_run;
use kvbench_run::UsageError;
use kvbench_store::Location;
use kvbench_store::Store;
use std::path::{Path, PathBuf};

/// Which runs a report is of.
pub enum Selection {
    /// The newest pass of an experiment.
    Experiment(String),
    /// These runs.
    Ids(Vec<i64>),
}

/// Creates `out` and `out/figures` before anything is measured or read, so
/// an unwritable place is bad input, not a late failure.
///
/// # Errors
/// A usage error naming `--out` when the directory cannot be created.
pub fn prepare(out: &Path) -> Result<()> {
    std::fs::create_dir_all(out.join("figures")).map_err(|e| {
        UsageError(format!(
            "--out {}: cannot create the directory: {e}",
            out.display()
        ))
    })?;
    Ok(())
}

/// What a report says around its runs; all optional.
#[derive(Default)]
pub struct Framing {
    /// The page's heading [default: from the selection].
    pub title: Option<String>,
    /// The experiment file's text, shown in the reproducibility section.
    pub experiment_file: Option<String>,
    /// A paper whose findings are set beside the measurements.
    pub paper: Option<kvbench_report::paper::Paper>,
    /// The verdicts' margin (a share), over what the runs recorded.
    pub margin: Option<f64>,
}

/// What [`write`] wrote.
pub struct Written {
    pub files: Vec<PathBuf>,
    pub summary: Summary,
    /// No font was found on this machine, so the PNG figures have no text
    /// (the SVGs and `index.html` are fine): the caller says so.
    pub no_font: bool,
}

/// Renders the report of `selection` into `out` (which [`prepare`] made).
///
/// # Errors
/// A usage error for an unknown experiment or an empty selection; an error
/// for unreadable stored data or a file that cannot be written.
pub fn write(
    store: &Store,
    db: &Location,
    selection: &Selection,
    out: &Path,
    framing: Framing,
) -> Result<Written> {
    let Framing {
        title,
        experiment_file,
        paper,
        margin,
    } = framing;
    let (sources, title, commands) = match selection {
        Selection::Experiment(name) => {
            let sources = experiment_sources(store, db, name)?;
            let mut commands = vec![format!(
                "kvbench report --experiment {name} --db {} --out {}",
                db,
                out.display()
            )];
            if experiment_file.is_some() {
                commands.insert(
                    0,
                    format!(
                        "kvbench experiment run FILE --db {} --restart   # FILE holds the experiment file below",
                        db
                    ),
                );
            }
            (
                sources,
                title.unwrap_or_else(|| format!("kvbench: {name}")),
                commands,
            )
        }
        Selection::Ids(ids) => {
            let mut sources = Vec::new();
            for &id in ids {
                sources.push(Source {
                    record: store.get_run(id).map_err(|e| unknown_run(e, db))?,
                    cell_key: None,
                    cell_index: None,
                    block: None,
                });
            }
            let list = ids
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",");
            (
                sources,
                title.unwrap_or_else(|| "kvbench report".to_string()),
                vec![
                    "kvbench show ID   # each run's full configuration, to repeat it with kvbench run".to_string(),
                    format!("kvbench report --runs {list} --db {} --out {}", db, out.display()),
                ],
            )
        }
    };
    if sources.is_empty() {
        return Err(UsageError("no run to report: the selection is empty".into()).into());
    }
    let mut rule = Rule::recorded(sources.iter().find_map(|s| s.record.config.verdict));
    if let Some(m) = margin {
        rule.margin = m;
    }
    let input = Input {
        title,
        sources,
        experiment_file,
        commands,
        generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        paper,
        rule,
    };
    let rendered = page::render(&input).map_err(anyhow::Error::msg)?;
    let files = write_files(out, rendered.files)?;
    Ok(Written {
        files,
        summary: rendered.summary,
        no_font: !kvbench_report::plot::has_font(),
    })
}

/// The runs of the newest pass of `name` that did not fail, with their
/// cells (numbered in plan order), one per cell and iteration.
///
/// # Errors
/// A usage error naming the experiment and database when none is stored.
pub fn experiment_sources(store: &Store, db: &Location, name: &str) -> Result<Vec<Source>> {
    let generation = kvbench_experiment::pass::newest(store, name, db)?;
    kvbench_experiment::pass::sources(store, name, generation)
}

/// What [`write_analytics`] wrote.
pub struct AnalyticsWritten {
    pub files: Vec<PathBuf>,
    pub summary: kvbench_report::analytics::Summary,
}

/// Renders the report of analytics runs `ids` into `out` (which
/// [`prepare`] made); `judge` sets the paper's findings beside them.
///
/// # Errors
/// A usage error naming an id that is not stored; an error for a file that
/// cannot be written.
pub fn write_analytics(
    store: &Store,
    db: &Location,
    ids: &[i64],
    out: &Path,
    title: Option<String>,
    paper: Option<kvbench_report::paper::Paper>,
    judge: bool,
) -> Result<AnalyticsWritten> {
    let mut records = Vec::new();
    for &id in ids {
        records.push(store.get_analytics(id).map_err(|e| match e {
            kvbench_store::StoreError::AnalyticsNotFound(_) => anyhow::Error::from(UsageError(
                format!("--analytics: {e} in {} (see kvbench analytics list)", db),
            )),
            other => other.into(),
        })?);
    }
    if records.is_empty() {
        return Err(UsageError("no analytics run to report: the selection is empty".into()).into());
    }
    let list = ids
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let input = kvbench_report::analytics::Input {
        title: title.unwrap_or_else(|| "kvbench analytics report".into()),
        records,
        commands: vec![format!(
            "kvbench report --analytics {list} --db {} --out {}",
            db,
            out.display()
        )],
        generated_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        paper,
        judge,
    };
    let rendered = kvbench_report::analytics::render(&input).map_err(anyhow::Error::msg)?;
    let files = write_files(out, rendered.files)?;
    Ok(AnalyticsWritten {
        files,
        summary: rendered.summary,
    })
}

/// Writes each file whole, `index.html` last: the page appears only once
/// everything it links exists.
fn write_files(out: &Path, mut files: Vec<(String, Vec<u8>)>) -> Result<Vec<PathBuf>> {
    files.sort_by_key(|(name, _)| name == "index.html");
    let mut written = Vec::new();
    for (name, bytes) in &files {
        let path = out.join(name);
        kvbench_run::atomic::write_atomic(&path, bytes)
            .with_context(|| format!("writing the report into {}", out.display()))?;
        written.push(path);
    }
    Ok(written)
}
