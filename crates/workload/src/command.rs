//! Command templates: a RESP command written as text, with placeholders
//! the workload fills per operation (memtier_benchmark's "arbitrary
//! commands", `--command 'ZADD __key__ __score__ __data__'`).
//!
//! The text is split into arguments as memtier splits it (which is
//! redis-cli's `sdssplitargs`): blanks separate arguments; "double quotes"
//! take `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<any>` escapes; 'single
//! quotes' take `\'`; a closing quote must end the argument; a quote inside
//! an unquoted argument opens a quoted run. So a template means the same
//! bytes here as in memtier.
//!
//! Placeholders, each in its own argument:
//! - `__key__`: the operation's key, with any text before and after it in
//!   the argument kept (`user:__key__:name`), as memtier allows;
//! - `__data__`: a value of the workload's value size (the whole argument,
//!   as memtier requires);
//! - `__score__` (kvbench's own): a number drawn per operation, for sorted
//!   sets (the whole argument).

use std::fmt;

/// One argument of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Sent as written.
    Literal(Vec<u8>),
    /// The operation's key, between `prefix` and `suffix`.
    Key {
        /// Bytes before `__key__` in the argument.
        prefix: Vec<u8>,
        /// Bytes after it.
        suffix: Vec<u8>,
    },
    /// A value of the workload's value size.
    Data,
    /// A number drawn per operation.
    Score,
}

/// A parsed command template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandTemplate {
    /// The text as the user wrote it (stored with the run).
    pub text: String,
    /// The command's name, upper-cased (its first argument), as memtier
    /// names a command's statistics.
    pub name: String,
    /// The arguments, the name first.
    pub args: Vec<Arg>,
}

/// Why a template cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TemplateError {}

const KEY: &str = "__key__";
const DATA: &str = "__data__";
const SCORE: &str = "__score__";

impl CommandTemplate {
    /// Parses `text`.
    ///
    /// # Errors
    /// Unbalanced quotes, a quote not followed by a blank, an empty
    /// template, a placeholder as the command's name, or `__data__` /
    /// `__score__` sharing an argument with other text.
    pub fn parse(text: &str) -> Result<CommandTemplate, TemplateError> {
        let words = split(text.as_bytes())
            .ok_or_else(|| TemplateError(format!("'{text}': unbalanced quotes")))?;
        let Some(first) = words.first() else {
            return Err(TemplateError("an empty command".into()));
        };
        let name = String::from_utf8_lossy(first).to_uppercase();
        let mut args = Vec::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            let arg = classify(w).map_err(|e| TemplateError(format!("'{text}': {e}")))?;
            if i == 0 && arg != Arg::Literal(w.clone()) {
                return Err(TemplateError(format!(
                    "'{text}': the first word is the command's name, not a placeholder"
                )));
            }
            args.push(arg);
        }
        Ok(CommandTemplate {
            text: text.to_string(),
            name,
            args,
        })
    }

    /// The text around the first `__key__` (`None`: the template has no
    /// key): what a cluster routes the command by, with the key between.
    pub fn first_key(&self) -> Option<(&[u8], &[u8])> {
        self.args.iter().find_map(|a| match a {
            Arg::Key { prefix, suffix } => Some((prefix.as_slice(), suffix.as_slice())),
            _ => None,
        })
    }

    /// How many arguments are the operation's key.
    pub fn keys(&self) -> usize {
        self.args
            .iter()
            .filter(|a| matches!(a, Arg::Key { .. }))
            .count()
    }
}

fn classify(w: &[u8]) -> Result<Arg, String> {
    let find = |needle: &str| {
        w.windows(needle.len())
            .position(|win| win == needle.as_bytes())
    };
    if let Some(at) = find(KEY) {
        return Ok(Arg::Key {
            prefix: w[..at].to_vec(),
            suffix: w[at + KEY.len()..].to_vec(),
        });
    }
    for (placeholder, arg) in [(DATA, Arg::Data), (SCORE, Arg::Score)] {
        if find(placeholder).is_some() {
            if w != placeholder.as_bytes() {
                return Err(format!(
                    "{placeholder} must be a whole argument, not part of one"
                ));
            }
            return Ok(arg);
        }
    }
    Ok(Arg::Literal(w.to_vec()))
}

/// Splits `s` into arguments as `sdssplitargs` does; `None` for unbalanced
/// quotes or a closing quote followed by something other than a blank.
fn split(s: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= s.len() {
            return Some(out);
        }
        let mut word = Vec::new();
        let (mut dq, mut sq) = (false, false);
        loop {
            let c = s.get(i).copied();
            if dq {
                match c {
                    None => return None,
                    Some(b'\\') if s.get(i + 1) == Some(&b'x') && hex2(s, i + 2).is_some() => {
                        word.push(hex2(s, i + 2)?);
                        i += 3;
                    }
                    Some(b'\\') if i + 1 < s.len() => {
                        i += 1;
                        word.push(match s[i] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                    }
                    Some(b'"') => {
                        i = closed(s, i)?;
                        break;
                    }
                    Some(other) => word.push(other),
                }
            } else if sq {
                match c {
                    None => return None,
                    Some(b'\\') if s.get(i + 1) == Some(&b'\'') => {
                        word.push(b'\'');
                        i += 1;
                    }
                    Some(b'\'') => {
                        i = closed(s, i)?;
                        break;
                    }
                    Some(other) => word.push(other),
                }
            } else {
                match c {
                    None | Some(b' ' | b'\n' | b'\r' | b'\t') => break,
                    Some(b'"') => dq = true,
                    Some(b'\'') => sq = true,
                    Some(other) => word.push(other),
                }
            }
            i += 1;
        }
        out.push(word);
    }
}

/// Past the closing quote at `i`, which must end the argument.
fn closed(s: &[u8], i: usize) -> Option<usize> {
    let ends = s.get(i + 1).is_none_or(u8::is_ascii_whitespace);
    ends.then_some(i + 1)
}

/// The byte `\xHH` at `s[at..at + 2]` stands for.
fn hex2(s: &[u8], at: usize) -> Option<u8> {
    let h = std::str::from_utf8(s.get(at..at + 2)?).ok()?;
    u8::from_str_radix(h, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Arg {
        Arg::Literal(s.as_bytes().to_vec())
    }

    #[test]
    fn placeholders_become_arguments_the_workload_fills() {
        let t = CommandTemplate::parse("zadd __key__ __score__ __data__").expect("parses");
        assert_eq!(t.name, "ZADD");
        assert_eq!(
            t.args,
            vec![
                lit("zadd"),
                Arg::Key {
                    prefix: Vec::new(),
                    suffix: Vec::new()
                },
                Arg::Score,
                Arg::Data
            ]
        );
        assert_eq!(t.keys(), 1);
        // A key may carry text around it, as memtier allows.
        let t = CommandTemplate::parse("HSET user:__key__:profile f __data__").expect("parses");
        assert_eq!(
            t.args[1],
            Arg::Key {
                prefix: b"user:".to_vec(),
                suffix: b":profile".to_vec()
            }
        );
    }

    #[test]
    fn quoting_follows_sdssplitargs() {
        let t = CommandTemplate::parse(r#"set "a b" 'it\'s' "\x41\n" x"y z""#).expect("parses");
        assert_eq!(
            t.args,
            vec![lit("set"), lit("a b"), lit("it's"), lit("A\n"), lit("xy z")]
        );
        for bad in [r#"set "a"b"#, "set 'a", r#"set "a"#, "   "] {
            assert!(CommandTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn data_and_score_must_be_whole_arguments_and_the_name_literal() {
        for bad in ["SET k x__data__", "ZADD k s__score__ m", "__key__ GET"] {
            let e = CommandTemplate::parse(bad).expect_err(bad);
            assert!(e.0.contains(bad), "{e}");
        }
    }
}
