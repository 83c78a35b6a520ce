//! JSON: the full stored records, as `kvbench show --json` prints them (every
//! field, histograms included), in one array.

use crate::{ExportError, RunRecord};

/// `records` as a pretty-printed JSON array, newline-terminated.
///
/// # Errors
/// Only if serialisation itself fails.
pub fn export(records: &[RunRecord]) -> Result<Vec<u8>, ExportError> {
    let mut bytes = serde_json::to_vec_pretty(records)?;
    bytes.push(b'\n');
    Ok(bytes)
}
