//! The protocol-neutral operation the engine translates into wire requests.
//!
//! Generators produce [`Op`]s; the engine's drivers turn them into RESP or
//! memcache bytes. Keeping this neutral is what lets one workload definition
//! drive every system identically.

use kvbench_model::OpKind;

/// One operation to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// What to do.
    pub kind: OpKind,
    /// The record number; the key name is derived from it by [`crate::keys::KeyNamer`].
    pub keynum: u64,
    /// For a single-field update or read: which field. `None` means all fields.
    pub field: Option<u32>,
}
