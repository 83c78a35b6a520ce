//! The subcommands. Each validates everything it can before starting any
//! server, so bad input costs nothing and stores nothing.

use crate::args::{Command, CompareArgs, RunArgs, RunsArgs, ShowArgs, WorkloadsArgs};
use crate::config;
use crate::db::{not_found, open_for_reading, open_store};
use crate::exit::{verdict_of, UsageError, Verdict};
use crate::live::Live;
use crate::output::print;
use anyhow::Result;
use kvbench_model::RunStatus;
use kvbench_run::orchestrate::run_cell;
use kvbench_store::RunFilter;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs one subcommand.
pub fn dispatch(command: Command, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    if matches!(
        command,
        Command::Run(_)
            | Command::Compare(_)
            | Command::Experiment(_)
            | Command::Findmax(_)
            | Command::Reproduce(_)
    ) {
        remove_leftovers();
    }
    match command {
        Command::Run(a) => run(a, stop),
        Command::Compare(a) => compare(a, stop),
        Command::Runs(a) => runs(a),
        Command::Show(a) => show(a),
        Command::Workloads(a) => workloads(a),
        Command::Export(a) => crate::export::export(a),
        Command::Label(a) => crate::manage::label(a),
        Command::Delete(a) => crate::manage::delete(a),
        Command::Import(a) => import(a),
        Command::Analytics(a) => crate::analytics::dispatch(a),
        Command::Diff(a) => crate::diff::diff(a),
        Command::Experiment(a) => crate::experiment::dispatch(a, stop),
        Command::Findmax(a) => crate::findmax::findmax(a, stop),
        Command::Report(a) => crate::report::report(a),
        Command::Reproduce(a) => crate::reproduce::reproduce(a, stop),
        Command::Worker(a) => crate::worker::run(a, stop),
    }
}

/// What a killed kvbench left behind: its servers' directories, and any
/// server still running in one (see kvbench_servers::workdir).
fn remove_leftovers() {
    let removed = kvbench_servers::workdir::remove_leftovers();
    if !removed.is_empty() {
        let names: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "note: removed what a stopped kvbench left behind: {}",
            names.join(", ")
        );
    }
}

fn import(a: crate::args::ImportArgs) -> Result<Verdict> {
    let mut store = open_store(&a.db)?;
    for (file, id) in kvbench_run::unsaved::import(&a.files, &mut store)? {
        println!("stored {} as run {id} in {}", file.display(), a.db);
    }
    Ok(Verdict::Ok)
}

fn run(a: RunArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    let s = config::run_settings(&a)?;
    for n in &s.notes {
        eprintln!("note: {n}");
    }
    for w in &s.warnings {
        eprintln!("warning: {w}");
    }
    kvbench_run::memory::check(&s, a.bench.skip_memory_check)?;
    let mut store = open_store(&a.bench.db)?;
    let metrics = Live::listen(a.bench.metrics_listen.as_deref())?;
    kvbench_run::deploy::ready(&s)?;
    let live = Live::new(a.bench.quiet, metrics);
    let rec = run_cell(&s, &mut store, &live, stop, None, None)?;
    live.finish();
    if a.bench.json {
        print(&serde_json::to_string_pretty(&rec)?)?;
        // Exit codes 1 and 3 come with their reason, also beside JSON.
        if rec.status != RunStatus::Ok {
            eprintln!("warning: {}", kvbench_report::text::problem(&rec));
        }
    } else {
        print(&kvbench_report::text::run_summary(&rec))?;
        if rec.status == RunStatus::Failed {
            eprintln!(
                "error: run {} failed: {}",
                rec.id.unwrap_or_default(),
                rec.failure.as_deref().unwrap_or("unknown")
            );
        }
    }
    Ok(verdict_of(&rec, stop))
}

/// A comparison is an experiment (experiment::compare): run by the same
/// runner, stored cell by cell, resumed, and skipped once stored.
fn compare(a: CompareArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    let argv = std::env::args_os()
        .skip(2)
        .map(|x| {
            x.into_string()
                .map_err(|x| UsageError(format!("compare: argument {x:?} is not UTF-8")))
        })
        .collect::<Result<Vec<String>, UsageError>>()?;
    let exp = crate::experiment::compare_experiment(&a, &argv)?;
    // The report's place is checked before hours of runs, and the report is
    // written whole at the end (an old one stays until then).
    let report = a
        .report
        .as_ref()
        .map(|p| {
            kvbench_run::atomic::temporary_beside(p)
                .map(|tmp| (p, tmp))
                .map_err(|e| UsageError(format!("--report {}: {e}", p.display())))
        })
        .transpose()?;
    let opts = crate::experiment::Options {
        db: &a.bench.db,
        restart: a.restart,
        quiet: a.bench.quiet,
        json: a.bench.json,
        labels: &a.bench.labels,
        metrics_listen: a.bench.metrics_listen.as_deref(),
        skip_memory_check: a.bench.skip_memory_check,
    };
    let (verdict, records) = crate::experiment::execute(&exp, &opts, stop)?;
    if !a.bench.quiet && !a.bench.json {
        eprintln!(
            "compare: stored as experiment '{}' (kvbench export --experiment {} --format csv)",
            exp.name, exp.name
        );
    }
    if let Some((path, tmp)) = report {
        let md = kvbench_report::markdown::comparison_report(&records, exp.cells.len());
        kvbench_run::atomic::commit(tmp, path, md.as_bytes())?;
        if !a.bench.json {
            eprintln!("report written to {}", path.display());
        }
    }
    Ok(verdict)
}

fn runs(a: RunsArgs) -> Result<Verdict> {
    let labels: Vec<_> = a
        .labels
        .iter()
        .map(|l| crate::labels::parse_filter("--label", l))
        .collect::<Result<_, _>>()?;
    // A filter that can never match is a typo, not an empty answer.
    if let Some(s) = &a.status {
        if !["ok", "invalid", "failed"].contains(&s.as_str()) {
            return Err(UsageError(format!(
                "--status {s}: a run's status is ok, invalid or failed"
            ))
            .into());
        }
    }
    if let Some(s) = &a.system {
        config::system(s).map_err(|e| UsageError(format!("--system: {e}")))?;
    }
    if a.limit == Some(0) {
        return Err(UsageError("--limit must be at least 1".into()).into());
    }
    let store = open_for_reading(&a.db)?;
    let filtered =
        a.system.is_some() || a.workload.is_some() || a.status.is_some() || !labels.is_empty();
    let rows = store.list_runs(&RunFilter {
        system: a.system,
        workload: a.workload,
        status: a.status,
        limit: a.limit,
        labels,
        ids: None,
    })?;
    if a.json {
        print(&serde_json::to_string_pretty(&rows)?)?;
    } else if rows.is_empty() && filtered {
        print("no stored run matches these filters\n")?;
    } else {
        print(&kvbench_report::text::runs_list(&rows))?;
    }
    Ok(Verdict::Ok)
}

fn show(a: ShowArgs) -> Result<Verdict> {
    let store = open_for_reading(&a.db)?;
    let rec = store.get_run(a.id).map_err(|e| not_found(e, &a.db))?;
    if a.json {
        print(&serde_json::to_string_pretty(&rec)?)?;
    } else {
        print(&kvbench_report::text::run_summary(&rec))?;
        if a.series {
            if let Some(run) = &rec.run {
                print(&format!(
                    "\nper second:\n{}",
                    kvbench_report::text::series_table(run)
                ))?;
                if run.cache.is_some() {
                    print(&format!(
                        "\ncache, per second:\n{}",
                        kvbench_report::text::cache_series_table(run)
                    ))?;
                }
            }
        }
    }
    Ok(Verdict::Ok)
}

fn workloads(a: WorkloadsArgs) -> Result<Verdict> {
    let mut rows = Vec::new();
    for p in kvbench_workload::presets::all() {
        // As a run resolves it: kvbench's defaults, then the preset.
        let spec = config::preset_as_run(p.name)?;
        rows.push((p, spec));
    }
    if a.json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(p, s)| {
                serde_json::json!({
                    "name": p.name, "aliases": p.aliases, "source": p.source,
                    "fieldcount": s.field_count, "fieldlength": s.field_length,
                    "recordcount": s.record_count,
                    "operationcount": s.client.operation_count,
                    "readproportion": s.read_proportion, "updateproportion": s.update_proportion,
                    "insertproportion": s.insert_proportion, "scanproportion": s.scan_proportion,
                    "readmodifywriteproportion": s.read_modify_write_proportion,
                    "requestdistribution": s.request_distribution.name(),
                    "properties": p.properties,
                })
            })
            .collect();
        print(&serde_json::to_string_pretty(&v)?)?;
    } else {
        let mut t = kvbench_report::table::Table::new(&[
            "name", "aliases", ">records", ">fields", ">bytes", ">read", ">update", ">insert",
            ">scan", ">rmw", "keys", "source",
        ]);
        let share = |x: f64| if x > 0.0 { format!("{x}") } else { "-".into() };
        for (p, s) in &rows {
            t.row(vec![
                p.name.to_string(),
                p.aliases.join(", "),
                s.record_count.to_string(),
                s.field_count.to_string(),
                s.field_length.to_string(),
                share(s.read_proportion),
                share(s.update_proportion),
                share(s.insert_proportion),
                share(s.scan_proportion),
                share(s.read_modify_write_proportion),
                s.request_distribution.name().to_string(),
                p.source.to_string(),
            ]);
        }
        print(&format!("{}\nUse one with --workload NAME; pass your own YCSB file with -P FILE (see docs/workloads.md).", t.to_text()))?;
    }
    Ok(Verdict::Ok)
}
