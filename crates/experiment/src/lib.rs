//! Experiments: a TOML file declaring a matrix of runs (`file`), expanded
//! into cells (`cells`), each the `kvbench run` flags it stands for and the
//! settings they resolve to, put in randomized blocks (`blocks`), with the
//! margin and looks of its comparison (`verdict_plan`). See
//! docs/experiments.md.
//!
//! A cell's flags are resolved by the binary's own `run` parser (through
//! [`Resolve`]), so a cell is exactly the run those flags give; listing,
//! running and resuming cells are the binary's `experiment` commands.

pub mod blocks;
pub mod cells;
pub mod file;
pub mod resolve;
pub mod verdict_plan;

pub use cells::{expand, key, Cell, Experiment};
pub use file::property_text;
pub use resolve::Resolve;
