//! YCSB property files: Java `.properties` syntax read into name/value
//! entries that remember where each came from (file and line, `-p`, or a
//! preset), so every later error can name its origin.
//!
//! This module only parses text. The one function that touches the file
//! system is [`read_text`] (used for `-P FILE` and for a field-length
//! histogram file); nothing else here, or anywhere else in this crate, does
//! I/O. What the properties *mean* is decided in [`crate::ycsb`].
//!
//! # The syntax accepted
//!
//! What `java.util.Properties.load` accepts, as YCSB reads `-P` files:
//!
//! - lines end with `\n`, `\r\n` or `\r`;
//! - blank lines, and lines whose first non-blank character is `#` or `!`
//!   (comments), are skipped; a comment never continues onto the next line;
//! - `key=value`, `key = value`, `key:value`, `key value`: the key ends at
//!   the first unescaped `=`, `:`, space, tab or form feed; blanks around the
//!   separator are skipped, and one `=` or `:` after blanks is the separator;
//!   a key alone on its line has the empty value;
//! - a line ending in an odd number of backslashes continues on the next
//!   line, whose leading blanks are dropped;
//! - escapes in keys and values: `\t`, `\n`, `\r`, `\f`, `\uXXXX`, and `\`
//!   before any other character stands for that character (`\=`, `\:`, `\ `,
//!   `\\`, `\#`);
//! - a name set twice: the later wins (as `Properties.put`).
//!
//! Differences from Java, all for files Java would read differently only by
//! accident:
//!
//! - **trailing blanks are removed from values**. Java keeps them, and then
//!   YCSB rejects `recordcount=1000 ` (`Integer.parseInt`) and reads
//!   `readallfields=true ` as *false* (`Boolean.parseBoolean`); kvbench reads
//!   what the line visibly says. An escaped trailing blank (`\ `) is kept;
//! - the file is read as UTF-8 when it is valid UTF-8 and as ISO-8859-1
//!   (Java's encoding for `load(InputStream)`) otherwise; the two differ only
//!   for non-ASCII text, which no CoreWorkload property accepts;
//! - a malformed `\u` escape is an error naming the line (Java throws
//!   `IllegalArgumentException` without one).
//!
//! `-p name=value` overrides are split at the first `=` with no escape
//! processing, exactly as YCSB's `Client` does, and apply after every file
//! (later wins).

use std::fmt;
use std::path::Path;

/// Where a property's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A property file (`-P`): its path as given, and the line the entry
    /// starts on (1-based).
    File {
        /// The path as the user gave it.
        path: String,
        /// 1-based line number of the entry's first line.
        line: usize,
    },
    /// A `-p name=value` argument.
    CommandLine,
    /// A built-in preset (`kvbench run ycsb/a`).
    Preset(String),
    /// Set nowhere, so the default applies (only in errors about a default
    /// that clashes with another setting); names the files or presets read.
    Unset {
        /// [`Properties::source_name`] of the properties.
        source: String,
    },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{path}: line {line}"),
            Origin::CommandLine => f.write_str("-p"),
            Origin::Preset(name) => write!(f, "preset {name}"),
            Origin::Unset { source } if source.is_empty() => f.write_str("defaults"),
            Origin::Unset { source } => f.write_str(source),
        }
    }
}

/// One property as set, with its provenance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The property name, unescaped.
    pub name: String,
    /// The value, unescaped, trailing blanks removed.
    pub value: String,
    /// Where it was set.
    pub origin: Origin,
}

/// Why properties could not be read or used: one line naming the file, the
/// line and the property, e.g.
/// `workloads/x: line 12: readproportion: "0.9x" is not a number`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyError {
    /// Where the offending text is (`None` only for an unreadable file,
    /// which the message names).
    pub origin: Option<Origin>,
    /// The property concerned, when there is one (a syntax error may have none).
    pub property: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PropertyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = &self.origin {
            write!(f, "{o}: ")?;
        }
        if let Some(p) = &self.property {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for PropertyError {}

/// A set of properties in the order they were applied. Looking a name up
/// returns the last entry that set it, so files, presets and `-p` overrides
/// layer exactly as YCSB layers them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    entries: Vec<Entry>,
    sources: Vec<String>,
}

impl Properties {
    /// No properties: every setting takes its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads and parses the property file at `path` (`-P FILE`).
    ///
    /// # Errors
    /// The file cannot be read, or a line is malformed; the message names the
    /// file (and line).
    pub fn load_file(path: &Path) -> Result<Properties, PropertyError> {
        let name = crate::input::shown(path);
        let text = read_text(path)?;
        let props = Properties::parse(&text, &name)?;
        // An empty file would silently run every default.
        if props.is_empty() {
            return Err(PropertyError {
                origin: None,
                property: None,
                message: format!(
                    "{name}: no property in the file (an empty file would run every default)"
                ),
            });
        }
        Ok(props)
    }

    /// Parses property-file text; `path` is what provenance and errors call
    /// the file.
    ///
    /// # Errors
    /// A malformed `\uXXXX` escape, naming the line.
    pub fn parse(text: &str, path: &str) -> Result<Properties, PropertyError> {
        let mut props = Properties::new();
        props.sources.push(path.to_owned());
        parse_into(text, &mut props, &|line| Origin::File {
            path: path.to_owned(),
            line,
        })?;
        Ok(props)
    }

    /// Parses a built-in preset's text; entries' origin is the preset.
    ///
    /// # Errors
    /// As [`parse`](Self::parse) (a preset that fails is a kvbench bug).
    pub fn parse_preset(text: &str, name: &str) -> Result<Properties, PropertyError> {
        let mut props = Properties::new();
        props.sources.push(name.to_owned());
        parse_into(text, &mut props, &|_| Origin::Preset(name.to_owned()))?;
        Ok(props)
    }

    /// Sets `name` to `value`, overriding any earlier setting.
    pub fn set(&mut self, name: &str, value: &str, origin: Origin) {
        self.entries.push(Entry {
            name: name.to_owned(),
            value: value.to_owned(),
            origin,
        });
    }

    /// Applies one `-p name=value` argument: split at the first `=`, no
    /// escapes, applied over everything set so far.
    ///
    /// # Errors
    /// No `=`, or an empty name (YCSB prints its usage then).
    pub fn apply_override(&mut self, arg: &str) -> Result<(), PropertyError> {
        match arg.split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                self.set(name, value, Origin::CommandLine);
                Ok(())
            }
            _ => Err(PropertyError {
                origin: Some(Origin::CommandLine),
                property: None,
                message: format!("\"{arg}\" is not name=value (e.g. -p operationcount=99999)"),
            }),
        }
    }

    /// Applies `other` over these properties (a second `-P`, or a preset
    /// under a file): its entries win.
    pub fn merge(&mut self, other: Properties) {
        self.entries.extend(other.entries);
        self.sources.extend(other.sources);
    }

    /// The effective entry for `name`: the last one that set it.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.name == name)
    }

    /// The effective value of `name`.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.get(name).map(|e| e.value.as_str())
    }

    /// True when `name` was set anywhere.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The effective entries (one per name, the winning one), in the order
    /// each name was first set.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        let mut seen: Vec<&str> = Vec::new();
        let mut order = Vec::new();
        for e in &self.entries {
            if !seen.contains(&e.name.as_str()) {
                seen.push(&e.name);
                order.push(e.name.as_str());
            }
        }
        order.into_iter().filter_map(move |n| self.get(n))
    }

    /// Number of distinct names set.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The files and presets these properties came from, joined with `+`
    /// (`workloads/workloada+extra`); empty when there were none. This is the
    /// workload's name in a run's record.
    pub fn source_name(&self) -> String {
        self.sources.join("+")
    }
}

/// Reads a whole text file (through [`crate::input::read_file`]: a regular
/// file of at most 1 MiB, its byte-order mark dropped). Valid UTF-8 is
/// taken as is; anything else is decoded as ISO-8859-1, as Java's
/// `Properties.load(InputStream)` decodes every file.
///
/// # Errors
/// The OS error, naming the path; not a regular file, or too big; a file
/// with control bytes (not text).
pub fn read_text(path: &Path) -> Result<String, PropertyError> {
    let bytes =
        crate::input::read_file(path, crate::input::PROPERTY_FILE_LIMIT).map_err(|message| {
            PropertyError {
                origin: None,
                property: None,
                message,
            }
        })?;
    // Java would read a binary file as properties of garbage names; a
    // control byte other than blanks and line ends means a wrong path (a
    // binary, an archive), and echoing its names would print raw bytes.
    if let Some(at) = bytes
        .iter()
        .position(|&b| (b < 0x20 && !b"\t\n\r\x0c".contains(&b)) || b == 0x7f)
    {
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        return Err(PropertyError {
            origin: None,
            property: None,
            message: format!(
                "{}: not a text property file (control byte 0x{:02x} on line {line})",
                path.display(),
                bytes[at]
            ),
        });
    }
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
    })
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\u{c}'
}

/// Splits `text` into logical lines (joining continuations) with the number
/// of the line each starts on, then parses each into an entry.
fn parse_into(
    text: &str,
    props: &mut Properties,
    origin: &dyn Fn(usize) -> Origin,
) -> Result<(), PropertyError> {
    let natural = split_lines(text);
    let mut i = 0;
    while i < natural.len() {
        let start = i;
        let first = natural[i].trim_start_matches(is_blank);
        i += 1;
        if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
            continue;
        }
        let mut logical = String::from(first);
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match natural.get(i) {
                Some(next) => {
                    logical.push_str(next.trim_start_matches(is_blank));
                    i += 1;
                }
                None => break,
            }
        }
        let at = origin(start + 1);
        let (name, value) = split_entry(&logical).map_err(|message| PropertyError {
            origin: Some(at.clone()),
            property: None,
            message,
        })?;
        props.entries.push(Entry {
            name,
            value,
            origin: at,
        });
    }
    Ok(())
}

fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        out.push(&text[start..]);
    }
    out
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// Splits a logical line (leading blanks already removed) into an unescaped
/// key and value.
fn split_entry(line: &str) -> Result<(String, String), String> {
    let chars: Vec<char> = line.chars().collect();
    // The key ends at the first unescaped separator or blank.
    let mut k = 0;
    while k < chars.len() {
        match chars[k] {
            '\\' => k += 2,
            '=' | ':' => break,
            c if is_blank(c) => break,
            _ => k += 1,
        }
    }
    let k = k.min(chars.len());
    let key_raw: String = chars[..k].iter().collect();
    let mut v = k;
    while v < chars.len() && is_blank(chars[v]) {
        v += 1;
    }
    if v < chars.len() && (chars[v] == '=' || chars[v] == ':') {
        v += 1;
        while v < chars.len() && is_blank(chars[v]) {
            v += 1;
        }
    }
    let value_raw: String = chars[v..].iter().collect();
    let key = unescape(&key_raw)?;
    let value = unescape(trim_unescaped_trailing_blanks(&value_raw))?;
    Ok((key, value))
}

/// Removes trailing blanks that are not escaped (`a\ ` keeps its blank).
fn trim_unescaped_trailing_blanks(s: &str) -> &str {
    let mut end = s.len();
    while let Some(c) = s[..end].chars().next_back() {
        if !is_blank(c) {
            break;
        }
        let before = &s[..end - c.len_utf8()];
        if ends_with_odd_backslashes(before) {
            break;
        }
        end -= c.len_utf8();
    }
    &s[..end]
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = it.by_ref().take(4).collect();
                let code = (hex.len() == 4)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .ok_or_else(|| format!("malformed \\uXXXX escape \"\\u{hex}\""))?;
                // Java strings are UTF-16: a lone surrogate cannot be a char here.
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Some(other) => out.push(other),
            // A single trailing backslash (end of file after a continuation): dropped.
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> (String, String) {
        let p = Properties::parse(text, "f").unwrap();
        let e = p.iter().next().expect("one entry");
        (e.name.clone(), e.value.clone())
    }

    #[test]
    fn separators() {
        for text in [
            "a=b",
            "a = b",
            "a:b",
            "a : b",
            "a b",
            "  a\t=\tb",
            "a\u{c}b",
        ] {
            assert_eq!(one(text), ("a".into(), "b".into()), "{text:?}");
        }
        assert_eq!(one("a"), ("a".into(), "".into()));
        assert_eq!(one("a="), ("a".into(), "".into()));
        assert_eq!(one("a = = b"), ("a".into(), "= b".into()));
        assert_eq!(one("a b c"), ("a".into(), "b c".into()));
        assert_eq!(one("a==b"), ("a".into(), "=b".into()));
    }

    #[test]
    fn escapes_and_trailing_blanks() {
        assert_eq!(one("a\\=b=c"), ("a=b".into(), "c".into()));
        assert_eq!(one("a\\ b c"), ("a b".into(), "c".into()));
        assert_eq!(
            one("k=x\\ty\\u0041\\#\\\\"),
            ("k".into(), "x\tyA#\\".into())
        );
        assert_eq!(one("k=v   \t"), ("k".into(), "v".into()));
        assert_eq!(one("k=v\\ "), ("k".into(), "v ".into()));
        let err = Properties::parse("\n\nk=\\u12", "w").unwrap_err();
        assert_eq!(
            err.to_string(),
            "w: line 3: malformed \\uXXXX escape \"\\u12\""
        );
    }

    #[test]
    fn comments_blank_lines_and_continuations() {
        let text = "# c\n! c\n\n   \nrecordcount=1000\r\nfield\\\n   count = 1\\\n  0\rx=\\\\\n# tail \\\ny=2";
        let p = Properties::parse(text, "w").unwrap();
        let got: Vec<(String, String, Origin)> = p
            .iter()
            .map(|e| (e.name.clone(), e.value.clone(), e.origin.clone()))
            .collect();
        let at = |line| Origin::File {
            path: "w".into(),
            line,
        };
        assert_eq!(
            got,
            vec![
                ("recordcount".into(), "1000".into(), at(5)),
                ("fieldcount".into(), "10".into(), at(6)),
                ("x".into(), "\\".into(), at(9)),
                ("y".into(), "2".into(), at(11)),
            ]
        );
    }

    #[test]
    fn later_wins_and_overrides_apply_last() {
        let mut p = Properties::parse("a=1\nb=2\na=3", "f").unwrap();
        assert_eq!(p.value("a"), Some("3"));
        assert_eq!(
            p.get("a").unwrap().origin,
            Origin::File {
                path: "f".into(),
                line: 3
            }
        );
        p.merge(Properties::parse("b=4", "g").unwrap());
        p.apply_override("a=x=y").unwrap();
        assert_eq!(p.value("a"), Some("x=y"));
        assert_eq!(p.get("a").unwrap().origin, Origin::CommandLine);
        assert_eq!(p.value("b"), Some("4"));
        assert_eq!(p.len(), 2);
        assert_eq!(p.source_name(), "f+g");
        let names: Vec<&str> = p.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(p.apply_override("novalue").is_err());
        assert!(p.apply_override("=v").is_err());
        p.apply_override("empty=").unwrap();
        assert_eq!(p.value("empty"), Some(""));
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = Properties::load_file(Path::new("/nonexistent/kvbench-x")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/kvbench-x: cannot read"),
            "{err}"
        );
    }
}
