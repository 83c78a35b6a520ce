//! How a cell's flags become settings. The binary answers with the parser
//! and checks of `kvbench run` itself: there is one way to turn flags into a
//! run, not two, and this crate parses no command line.

use kvbench_run::{RunSettings, UsageError};

/// Resolves cells while a file is expanded.
pub trait Resolve {
    /// The settings `kvbench run ARGS` resolves to; an error is the first
    /// line `run` would print.
    fn settings(&self, args: Vec<String>) -> Result<RunSettings, UsageError>;

    /// Called before each cell is resolved (`what` says what is under way):
    /// a long expansion may be stopped here.
    fn checkpoint(&self, what: &str);
}
