//! `kvbench report`, and the report `experiment run` writes at its end: reads
//! the selected runs (with their experiment cells, so iterations are
//! grouped), has `kvbench_report::page` render them, and writes each file
//! whole (temporary file, then rename), `index.html` last, so a reader
//! never opens a page whose figures are not there yet.

use crate::args::ReportArgs;
use crate::db::{not_found, open_for_reading};
use crate::exit::{UsageError, Verdict};
use anyhow::{Context, Result};
use kvbench_report::cells::Source;
use kvbench_report::page::{self, Input, Summary};
use kvbench_report::takeaways::Rule;
use kvbench_store::Location;
use kvbench_store::{RunFilter, Store};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which runs a report is of.
pub enum Selection {
    /// The newest pass of an experiment.
    Experiment(String),
    /// These runs.
    Ids(Vec<i64>),
}

pub fn report(a: ReportArgs) -> Result<Verdict> {
    let store = open_for_reading(&a.db)?;
    if let Some(text) = &a.analytics {
        if a.file.is_some() {
            return Err(UsageError(
                "--file is an experiment file, shown with runs; analytics runs have none (drop --file or --analytics)".into(),
            )
            .into());
        }
        return analytics_report(&store, &a, text);
    }
    let selection = match (&a.experiment, &a.runs) {
        (Some(name), _) => Selection::Experiment(name.clone()),
        (None, Some(text)) => {
            let ids = store
                .select_runs(&crate::export::selection(Some(text))?)
                .map_err(|e| not_found(e, &a.db))?;
            Selection::Ids(ids)
        }
        (None, None) => last(&store, &a.db)?,
    };
    let file = match &a.file {
        Some(p) => Some(
            kvbench_workload::input::read_utf8(p, kvbench_workload::input::EXPERIMENT_FILE_LIMIT)
                .map_err(|e| UsageError(format!("--file {e}")))?,
        ),
        None => None,
    };
    let margin = a
        .margin
        .map(kvbench_run::bounds::margin_share)
        .transpose()
        .map_err(|e| UsageError(format!("--margin {e}")))?;
    prepare(&a.out)?;
    let written = write(
        &store,
        &a.db,
        &selection,
        &a.out,
        Framing {
            title: a.title.clone(),
            experiment_file: file,
            paper: None,
            margin,
        },
    )?;
    if a.json {
        crate::output::print(&serde_json::to_string_pretty(&serde_json::json!({
            "out": a.out,
            "index": a.out.join("index.html"),
            "files": written.files,
            "report": written.summary,
        }))?)?;
    } else {
        eprintln!(
            "wrote the report of {} runs ({} figures): {}",
            written.summary.runs,
            written.summary.figures.len(),
            a.out.join("index.html").display()
        );
    }
    Ok(Verdict::Ok)
}

/// `--last`: the newest run's experiment pass, or that run alone.
fn last(store: &Store, db: &Location) -> Result<Selection> {
    let newest = store
        .list_runs(&RunFilter {
            limit: Some(1),
            ..RunFilter::default()
        })?
        .into_iter()
        .next()
        .ok_or_else(|| UsageError(format!("no runs stored in {} to report", db)))?;
    Ok(match store.cell_runs(newest.id)? {
        Some(c) => Selection::Experiment(c.experiment),
        None => Selection::Ids(vec![newest.id]),
    })
}

/// Creates `out` and `out/figures` before anything is measured or read, so
/// an unwritable place is bad input, not a late failure.
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
                    record: store.get_run(id).map_err(|e| not_found(e, db))?,
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
    if !kvbench_report::plot::has_font() {
        eprintln!("warning: no font found on this machine, so the PNG figures have no text (the SVGs and index.html are fine); scripts/setup installs DejaVu");
    }
    let rendered = page::render(&input).map_err(anyhow::Error::msg)?;
    let files = write_files(out, rendered.files)?;
    Ok(Written {
        files,
        summary: rendered.summary,
    })
}

/// The runs of the newest pass of `name` that did not fail, with their
/// cells (numbered in plan order), one per cell and iteration.
pub(crate) fn experiment_sources(store: &Store, db: &Location, name: &str) -> Result<Vec<Source>> {
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut out = Vec::new();
    for c in crate::export::experiment_pass(store, name, db)? {
        let next = index.len() as u32;
        let i = *index.entry(c.cell_key.clone()).or_insert(next);
        out.push(Source {
            record: store.get_run(c.run_id).map_err(|e| not_found(e, db))?,
            cell_key: Some(c.cell_key),
            cell_index: Some(i),
            block: Some(c.iteration),
        });
    }
    Ok(out)
}

/// `kvbench report --analytics IDS`.
fn analytics_report(store: &Store, a: &ReportArgs, text: &str) -> Result<Verdict> {
    let ranges = crate::export::parse_ids(text)
        .map_err(|e| UsageError(format!("--analytics '{text}': {e}")))?;
    let mut ids: Vec<i64> = ranges.into_iter().flatten().collect();
    ids.sort_unstable();
    ids.dedup();
    prepare(&a.out)?;
    let paper = crate::papers::zhang2014()?;
    let w = write_analytics(
        store,
        &a.db,
        &ids,
        &a.out,
        a.title.clone(),
        Some(paper),
        false,
    )?;
    if a.json {
        crate::output::print(&serde_json::to_string_pretty(&serde_json::json!({
            "out": a.out,
            "index": a.out.join("index.html"),
            "files": w.files,
            "report": w.summary,
        }))?)?;
    } else {
        eprintln!(
            "wrote the report of {} analytics runs ({} figures): {}",
            w.summary.analytics_runs,
            w.summary.figures.len(),
            a.out.join("index.html").display()
        );
    }
    Ok(Verdict::Ok)
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
