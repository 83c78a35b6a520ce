//! Experiments: a TOML file declaring a matrix of runs (`file`), expanded
//! into cells (`cells`), each the `kvbench run` flags it stands for and the
//! settings they resolve to, put in randomized blocks (`blocks`), with the
//! margin and looks of its comparison (`verdict_plan`). See
//! docs/experiments.md.
//!
//! A cell's flags are resolved by the binary's own `run` parser (through
//! [`Resolve`]), so a cell is exactly the run those flags give.
//!
//! A pass over the cells (`pass`) runs those of the current pass not stored
//! yet, resumably, in the order `plan` lists them with their estimates;
//! a sequential comparison adds blocks only where a verdict is still open
//! (`sequential`); `iterations` summarises each cell over its iterations.
//! The binary's `experiment` commands parse flags and print.

pub mod blocks;
pub mod cells;
pub mod file;
pub mod iterations;
pub mod pass;
pub mod plan;
pub mod resolve;
pub mod sequential;
pub mod verdict_plan;

pub use cells::{expand, key, Cell, Experiment};
pub use file::property_text;
pub use resolve::Resolve;
