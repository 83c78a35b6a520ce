//! A fault as it happened, apart from the root so that a run's marks
//! ([`crate::mark`]) can carry the faults without a module circle.

use serde::{Deserialize, Serialize};

/// A fault kvbench caused during a window (`--fault`), as it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectedFault {
    /// What was asked, as `KIND[:NODE][:SPAN]@AT`.
    pub spec: String,
    /// What it hit: a node's address, or the group that failed over.
    pub target: String,
    /// Seconds from the window's start to when it was caused.
    pub at_s: f64,
    /// Seconds until it was over: a pause's end, a restarted server
    /// answering again, a failover's new master named; `None` for a kill
    /// (the node stays down) or a fault that could not be caused.
    pub lasted_s: Option<f64>,
    /// Why it could not be caused, or did not finish (the run goes on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
