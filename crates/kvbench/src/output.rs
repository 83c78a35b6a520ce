//! What commands print: every line of stdout goes through [`print`], so a
//! closed pipe (`kvbench runs | head`) ends the command quietly (see main).
//! Helpers shared by commands live here or in `db`, never in a command's
//! own module, so commands never import each other.

use crate::live::Live;
use anyhow::Result;
use kvbench_model::{RunRecord, RunStatus};
use std::io::Write;

/// `text` on stdout, with a final newline.
pub(crate) fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// One line on stderr for a cell that failed or is marked invalid, with
/// why (the report's own line for it); the sweep goes on.
pub(crate) fn warn_unless_ok(live: &Live, rec: &RunRecord) {
    if rec.status != RunStatus::Ok {
        live.println(&format!("warning: {}", kvbench_report::text::problem(rec)));
    }
}

/// The runs of a sweep side by side, or as a JSON array.
pub(crate) fn print_comparison(records: &[RunRecord], json: bool) -> Result<()> {
    if json {
        print(&serde_json::to_string_pretty(records)?)
    } else {
        print(&kvbench_report::text::comparison(records))
    }
}
