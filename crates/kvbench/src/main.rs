//! kvbench: a fair, reproducible benchmark for in-memory key-value stores.
//!
//! The binary is glue: `args` (what was typed) → `config` (resolved settings,
//! `kvbench_run::RunSettings`) → `kvbench_run::run_cell` (one cell end to
//! end, shown through `live`) → the store and the report crate for output. Errors are printed once, here, and mapped to the exit codes in
//! `exit`. `export` writes stored runs in other tools' formats (the
//! formats themselves are the kvbench-export crate's); `manage` labels and
//! deletes stored runs, `diff` compares two.

mod analytics;
mod args;
mod commands;
mod config;
mod db;
mod diff;
mod exit;
mod experiment;
mod export;
mod findmax;
mod labels;
mod live;
mod manage;
mod memtier_args;
mod metrics;
mod output;
mod papers;
mod progress;
mod report;
mod reproduce;
mod select;
mod signals;
mod target;
mod worker;

use exit::UsageError;
use std::io::{ErrorKind, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn main() -> ExitCode {
    let cli = match args::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        // --help and --version are clap's to print, as it prints them.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{}", args::one_line(&e));
            return ExitCode::from(exit::USAGE);
        }
    };
    // Settings from the environment are checked before anything runs: read
    // only at the end, a bad one would lose what was measured.
    if let Err(e) = kvbench_run::unsaved::wait_bound() {
        let _ = writeln!(std::io::stderr(), "error: {e:#}");
        return ExitCode::from(exit::USAGE);
    }
    // For the docs test: the command line parsed, nothing run.
    if std::env::var_os("KVBENCH_CHECK_ARGS").is_some() {
        return ExitCode::SUCCESS;
    }
    let stop = Arc::new(AtomicBool::new(false));
    signals::install(stop.clone());
    // Ctrl-C while standard input is awaited (`-P -`): out at once.
    kvbench_workload::input::on_interrupt(|| {
        signals::leave_if_stopped("reading standard input");
        false
    });
    match commands::dispatch(cli.command, &stop) {
        Ok(verdict) => verdict.code(),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(std::io::stderr(), "error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::from(exit::FAILED)
            }
        }
    }
}

/// A reader that closed the pipe early (`kvbench runs | head`) is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == ErrorKind::BrokenPipe)
}
