//! `--failed-keys`: the keys whose requests finally failed in the window,
//! for the user to inspect or replay.

use kvbench_model::{Finding, RunRecord};

/// `--failed-keys`: writes the keys of the window's measured requests that
/// finally failed, one per line (atomically: a reader never sees half a
/// file). A file that cannot be written is a warning on the run, which is
/// kept either way.
pub fn write(path: &std::path::Path, r: &kvbench_engine::recorder::Recorder, rec: &mut RunRecord) {
    let keys = r.failed_keys.as_deref().unwrap_or_default();
    let mut bytes = Vec::with_capacity(keys.iter().map(|k| k.len() + 1).sum());
    for k in keys {
        bytes.extend_from_slice(k);
        bytes.push(b'\n');
    }
    match crate::atomic::write_atomic(path, &bytes) {
        Ok(()) => {
            let more = match r.failed_keys_dropped {
                0 => String::new(),
                n => format!(" (and {n} more, not written: the file keeps at most 1,000,000)"),
            };
            eprintln!(
                "note: {} failed keys written to {}{more}",
                keys.len(),
                path.display()
            );
        }
        Err(e) => rec.warnings.push(
            Finding::FailedKeys {
                path: path.display().to_string(),
                error: format!("{e:#}"),
            }
            .into(),
        ),
    }
}
