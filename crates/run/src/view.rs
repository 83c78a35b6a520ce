//! What the per-cell sequence shows as it goes, and to whom: the binary's
//! live view (bars, per-second lines, the metrics endpoint) implements it,
//! so the sequence never draws and its tests can watch nothing.

use crate::settings::RunSettings;

/// The view of a command's cells.
pub trait View {
    /// A cell with settings `s` starts; `tag` is its experiment cell index
    /// (from 0) and iteration, when it has one.
    fn cell(&self, s: &RunSettings, tag: Option<(u32, u32)>);
    /// The observer of one phase: `run` for the measured phase, else the load.
    fn phase(&self, run: bool) -> Box<dyn Phase + '_>;
    /// Whether lines beside the results are to be left out (`--quiet`).
    fn quiet(&self) -> bool;
    /// A line for the user, printed without breaking the bars.
    fn println(&self, line: &str);
    /// A command is about to run cells estimated at `estimates` seconds
    /// each, after `done` of `total` were found finished.
    fn plan(&self, estimates: &[f64], done: usize, total: usize) {
        let _ = (estimates, done, total);
    }
    /// Cell `index` (from 0, among those to run) described as `what` starts.
    fn begin_cell(&self, index: usize, what: &str) {
        let _ = (index, what);
    }
    /// The cell begun last is over.
    fn end_cell(&self) {}
    /// The command's cells are over: the overall progress goes.
    fn finish(&self) {}
}

/// One phase's view: it hears the engine's events and is told when the
/// phase is over.
pub trait Phase: kvbench_engine::Observer {
    /// The phase ended: its bar goes.
    fn finish(&self);
}

/// A view that shows nothing: for library callers and tests.
pub struct Silent;

/// The phase of [`Silent`].
struct SilentPhase;

impl kvbench_engine::Observer for SilentPhase {}

impl Phase for SilentPhase {
    fn finish(&self) {}
}

impl View for Silent {
    fn cell(&self, _: &RunSettings, _: Option<(u32, u32)>) {}
    fn phase(&self, _: bool) -> Box<dyn Phase + '_> {
        Box::new(SilentPhase)
    }
    fn quiet(&self) -> bool {
        true
    }
    fn println(&self, _: &str) {}
}
