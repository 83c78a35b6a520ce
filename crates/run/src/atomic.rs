//! Files written whole or not at all: the bytes go to a temporary file
//! beside the destination, are flushed to disk, and the temporary file is
//! renamed over the destination. An old file stays as it was until the new
//! one is complete, and a failure leaves no partial file behind.

use anyhow::{Context, Result};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use tempfile::NamedTempFile;

/// A temporary file in `path`'s directory (so the rename cannot cross file
/// systems), readable by others as a file written plainly would be.
pub fn temporary_beside(path: &Path) -> std::io::Result<NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".kvbench-")
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)
}

/// Writes `bytes` into `tmp`, flushes them to disk, and renames `tmp` to `path`.
pub fn commit(mut tmp: NamedTempFile, path: &Path, bytes: &[u8]) -> Result<()> {
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    // The persist error's text repeats its cause: keep the cause alone.
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temporary_beside(path).with_context(|| format!("cannot write {}", path.display()))?;
    commit(tmp, path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old").unwrap();
        let tmp = temporary_beside(&path).unwrap();
        drop(tmp); // as when the export fails before committing
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o044, 0o044, "readable by others: {mode:o}");
    }
}
