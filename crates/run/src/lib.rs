//! One kvbench cell end to end, apart from the command line: the settings
//! it runs with (`settings`, `target`, `cpus`, and the range of every number
//! in `bounds`), the checks before anything starts (`memory`: will it fit),
//! and the sequence itself (`orchestrate`: deploy, load, window, marks,
//! probe, cost, save), each step in a module of its own: `deploy` (servers
//! started or a target reached, `dataset` and `max_memory` their size),
//! `reuse` (loaded servers kept for the next cell), `window` (the measured
//! phase and what is read at its edges, here or over Spark workers in
//! `scaleout`), `companion` (the `--with` group), `inject` (`--fault`s),
//! `sampler` (the servers' counters each second), `marks` (what the cell
//! measured, judged), `record` (the record planned before anything
//! starts), `unions`, `failed_keys`, and `unsaved` (a run the database
//! would not take, kept in a file; `atomic` writes files whole). Paper D's
//! analytics runs (PageRank, the random gets) are `analytics`: the same
//! path from settings to a stored record, for a job that is not a cell.
//!
//! The binary builds [`RunSettings`] from flags and shows progress through a
//! [`view::View`]; nothing here parses arguments or draws.

pub mod analytics;
pub mod atomic;
pub mod bounds;
pub mod companion;
pub mod cpus;
pub mod dataset;
pub mod deploy;
pub mod failed_keys;
pub mod inject;
pub mod marks;
pub mod max_memory;
pub mod memory;
pub mod orchestrate;
pub mod record;
pub mod reuse;
pub mod sampler;
pub mod scaleout;
pub mod settings;
pub mod target;
pub mod unions;
pub mod unsaved;
pub mod usage;
pub mod view;
pub mod window;

pub use orchestrate::run_cell;
pub use settings::{CompanionSettings, RunSettings};
pub use usage::UsageError;
