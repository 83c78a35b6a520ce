//! What commands print: every line of stdout goes through [`print`], so a
//! closed pipe (`kvbench runs | head`) ends the command quietly (see main).
//! Helpers shared by commands live here or in `db`, never in a command's
//! own module, so commands never import each other.

use anyhow::Result;
use kvbench_model::RunRecord;
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

/// The runs of a sweep side by side, or as a JSON array.
pub(crate) fn print_comparison(records: &[RunRecord], json: bool) -> Result<()> {
    if json {
        print(&serde_json::to_string_pretty(records)?)
    } else {
        print(&kvbench_report::text::comparison(records))
    }
}

/// Said after a report is written when no font was found: its PNG figures
/// have no text.
pub(crate) fn warn_if_no_font(no_font: bool) {
    if no_font {
        eprintln!("warning: no font found on this machine, so the PNG figures have no text (the SVGs and index.html are fine); scripts/setup installs DejaVu");
    }
}
