//! Renders stored runs for people: plain-text tables for the terminal,
//! Markdown reports for files, and the HTML report with its figures
//! (`cells` → `figures` → `plot`, with `takeaways` and `repro`, put
//! together by `page`). Every renderer is a pure function from
//! records to a `String`; nothing here talks to a server or runs anything,
//! so re-rendering never re-measures. What differs between two runs is
//! computed as plain data first (`diff`, `fields`), so that it prints as a
//! table or as JSON alike.
#![deny(missing_docs)]

pub mod analytics;
mod caches;
pub mod cells;
pub mod combined;
pub mod diff;
pub mod fields;
pub mod figure;
pub mod figures;
pub mod format;
pub mod markdown;
pub mod noise;
pub mod page;
pub mod paper;
pub mod plot;
pub mod repro;
mod split;
pub mod table;
pub mod takeaways;
pub mod text;

#[cfg(test)]
mod tests;
