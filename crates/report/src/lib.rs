//! Renders stored runs for people: plain-text tables for the terminal and
//! Markdown reports for files. Every renderer is a pure function from
//! records to a `String`; nothing here talks to a server or runs anything,
//! so re-rendering never re-measures. What differs between two runs is
//! computed as plain data first (`diff`, `fields`), so that it prints as a
//! table or as JSON alike.
#![deny(missing_docs)]

pub mod diff;
pub mod fields;
pub mod format;
pub mod markdown;
pub mod table;
pub mod text;
