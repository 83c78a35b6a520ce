//! The `kvbench` commands of README.md and docs/*.md as a user would copy
//! them: shared by the test that parses each one (tests/docs.rs) and the
//! one that runs each one scaled down (tests/documented.rs).

use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every Markdown file under docs/.
pub fn documents() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("docs/").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

pub fn shown(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .display()
        .to_string()
        .trim_start_matches("./")
        .to_string()
}

/// One `kvbench` command of a shell block: where it is, and its arguments.
pub struct DocCommand {
    pub place: String,
    pub args: Vec<String>,
}

/// The commands in the shell blocks of `doc`, continuation lines joined,
/// comments, leading variable assignments and anything from a pipe or a
/// redirection on dropped; synopsis lines are counted apart.
pub fn commands(doc: &Path, synopses: &mut usize) -> Vec<DocCommand> {
    let text = std::fs::read_to_string(doc).expect("read");
    let mut out = Vec::new();
    let (mut in_shell, mut fence) = (false, false);
    let mut pending: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            fence = !fence;
            in_shell = fence && matches!(lang.trim(), "" | "sh" | "bash" | "console" | "shell");
            continue;
        }
        if !in_shell {
            continue;
        }
        let (start, mut joined) = match pending.take() {
            Some((start, so_far)) => (start, so_far + " " + line.trim()),
            None => (n + 1, line.trim().trim_start_matches("$ ").to_string()),
        };
        if joined.ends_with('\\') {
            joined.pop();
            pending = Some((start, joined));
            continue;
        }
        let Some(words) = shlex::split(&joined) else {
            continue;
        };
        let mut words = words
            .into_iter()
            .skip_while(|w| w.contains('=') && !w.starts_with('-'));
        if words.next().as_deref() != Some("kvbench") {
            continue;
        }
        let args: Vec<String> = words
            .take_while(|w| {
                !w.starts_with('#') && !matches!(w.as_str(), "|" | ">" | "2>" | ">>" | "&&" | ";")
            })
            .collect();
        if args.iter().any(|a| {
            a.starts_with('[') || a.contains("...") || (a.contains('|') && !a.contains("://"))
        }) || args.iter().enumerate().any(|(i, a)| {
            // A placeholder in capitals; the name of an environment
            // variable after `--password-env` is a value.
            a.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                && a.len() > 1
                && !a.chars().any(|c| c.is_ascii_digit())
                && (i == 0 || !args[i - 1].ends_with("-env"))
        }) {
            *synopses += 1;
            continue;
        }
        out.push(DocCommand {
            place: format!("{}:{start}", shown(doc)),
            args,
        });
    }
    out
}
