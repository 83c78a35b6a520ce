//! The documentation as a user meets it (issue 36, item 4): every relative
//! link in README.md and docs/ leads to a file that exists, every
//! `docs/*.md` the program's own messages and `--help` name exists, and
//! every `kvbench ...` command in their shell blocks is one kvbench's
//! command line accepts (parsed with `KVBENCH_CHECK_ARGS`, nothing run
//! here: tests/documented.rs runs each one, scaled down).
//! Synopsis lines (`[--runs IDS]`, `csv|json`, `...`) are not commands and
//! are skipped; a pipe or a redirection ends a command.

mod doc_commands;

use doc_commands::{commands, documents, root, shown, DocCommand};

/// `[text](target)` targets on one line of Markdown.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        out.push(&after[..end]);
        rest = &after[end..];
    }
    out
}

#[test]
fn every_relative_link_and_named_doc_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("read");
        let dir = doc.parent().expect("dir");
        for (n, line) in text.lines().enumerate() {
            for target in link_targets(line) {
                let path = target.split('#').next().unwrap_or_default().trim();
                if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                if !dir.join(path).exists() {
                    missing.push(format!("{}:{}: {target}", shown(&doc), n + 1));
                }
            }
        }
    }
    // docs/*.md named in the program's messages and help.
    let mut sources = Vec::new();
    for e in std::fs::read_dir(root().join("crates"))
        .expect("crates")
        .flatten()
    {
        sources.push(e.path().join("src"));
    }
    while let Some(d) = sources.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                sources.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).expect("read");
            for (n, line) in text.lines().enumerate() {
                let mut rest = line;
                while let Some(i) = rest.find("docs/") {
                    let name: String = rest[i..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || "/-_.".contains(*c))
                        .collect();
                    rest = &rest[i + 5..];
                    let name = name.trim_end_matches('.');
                    if name.ends_with(".md") {
                        checked += 1;
                        if !root().join(name).exists() {
                            missing.push(format!("{}:{}: {name}", shown(&p), n + 1));
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(
        missing.is_empty(),
        "{} of {checked} links lead nowhere:\n{}",
        missing.len(),
        missing.join("\n")
    );
    println!("{checked} links, each to a file that exists");
}

#[test]
fn every_documented_command_line_is_accepted() {
    let mut synopses = 0;
    let all: Vec<DocCommand> = documents()
        .iter()
        .flat_map(|d| commands(d, &mut synopses))
        .collect();
    let mut refused = Vec::new();
    for c in &all {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kvbench"))
            .args(&c.args)
            .env("KVBENCH_CHECK_ARGS", "1")
            .output()
            .expect("kvbench runs");
        if !out.status.success() {
            refused.push(format!(
                "{}: kvbench {}\n    {}",
                c.place,
                c.args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(all.len() > 60, "only {} commands found", all.len());
    assert!(
        refused.is_empty(),
        "{} of {} documented commands are refused:\n{}",
        refused.len(),
        all.len(),
        refused.join("\n")
    );
    println!(
        "{} documented commands accepted ({synopses} synopsis lines skipped)",
        all.len()
    );
}
