//! The module graph of every crate in the workspace: which source files
//! use which, and the circles among them (issue 32). A circle of many
//! files is a part of the code nobody can read one file at a time; the
//! goal is at most two files in any circle of any crate.
//!
//! Edges come from the source text, not the compiler: every path starting
//! `crate::`, `super::` or `self::` (in `use` trees too), and every path
//! through a child module a file declares with `mod`. A path names the
//! module of its longest prefix that is a file of the crate. Comments and
//! the insides of string literals are skipped.
//!
//! `scripts/module-circles` prints the report; this test fails when any
//! crate has a circle of more than two files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What issue 32 asks of every crate.
const GOAL: usize = 2;

/// A crate's modules: module path (`experiment::run`, `` for the root)
/// to the file that holds it.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).expect("under src");
                let mut parts: Vec<String> = rel
                    .iter()
                    .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
                    .collect();
                let last = parts.last().cloned().unwrap_or_default();
                if ["mod", "lib", "main"].contains(&last.as_str()) {
                    parts.pop();
                }
                // A second binary under src/bin is a crate of its own.
                if parts.first().is_some_and(|f| f == "bin") {
                    continue;
                }
                out.insert(parts.join("::"), p);
            }
        }
    }
    out
}

/// The source without comments (line and block) and with string
/// literals emptied.
fn strip_comments_and_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
                out.push('"');
            }
            i += 1;
            continue;
        }
        // A raw string: r"..." or r#"..."#, any number of #.
        if c == b'r' && (i == 0 || !is_ident(b[i - 1] as char)) {
            let mut k = i + 1;
            while b.get(k) == Some(&b'#') {
                k += 1;
            }
            if b.get(k) == Some(&b'"') {
                let mut close = vec![b'"'];
                close.extend(vec![b'#'; k - i - 1]);
                let end = b[k + 1..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| k + 1 + p + close.len());
                out.push_str("\"\"");
                i = end;
                continue;
            }
        }
        if c == b'"' {
            // A char literal '"' or '\"' is not a string.
            let quoted = (i > 0 && b[i - 1] == b'\'' && b.get(i + 1) == Some(&b'\''))
                || (i > 1 && b[i - 1] == b'\\' && b[i - 2] == b'\'');
            if !quoted {
                in_str = true;
            }
            out.push('"');
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            continue;
        }
        // Offsets stay byte offsets: nothing here is a multi-byte char.
        out.push(if c.is_ascii() { c as char } else { ' ' });
        i += 1;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path of the `use`-tree (or plain path) that starts at byte `at`
/// of `s`: `a::{b, c::{d}}` gives a::b, a::c::d.
fn paths_at(s: &str, at: usize) -> Vec<Vec<String>> {
    fn skip_spaces(s: &[char], i: &mut usize) {
        while *i < s.len() && s[*i].is_whitespace() {
            *i += 1;
        }
    }
    fn tree(s: &[char], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        loop {
            skip_spaces(s, i);
            if *i < s.len() && s[*i] == '{' {
                *i += 1;
                loop {
                    tree(s, i, path.clone(), out);
                    skip_spaces(s, i);
                    match s.get(*i) {
                        Some(',') => {
                            *i += 1;
                            skip_spaces(s, i);
                            if s.get(*i) == Some(&'}') {
                                *i += 1;
                                return;
                            }
                        }
                        Some('}') => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                }
            }
            let start = *i;
            while *i < s.len() && is_ident(s[*i]) {
                *i += 1;
            }
            if *i == start {
                out.push(path);
                return;
            }
            path.push(s[start..*i].iter().collect());
            if s.get(*i) == Some(&':') && s.get(*i + 1) == Some(&':') {
                *i += 2;
            } else {
                out.push(path);
                return;
            }
        }
    }
    let chars: Vec<char> = s[at..].chars().take(4000).collect();
    let mut out = Vec::new();
    let mut i = 0;
    tree(&chars, &mut i, Vec::new(), &mut out);
    out
}

/// A path a module names, from the crate's root, and whether a `use`
/// brought it in (then its last segment is a name the module re-exports
/// to its children and, when `pub`, to everyone).
struct Named {
    path: Vec<String>,
    imported: bool,
}

/// Every crate-relative path in `text`, the source of `module`.
fn named_paths(module: &str, text: &str) -> Vec<Named> {
    let file_here: Vec<String> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(str::to_string).collect()
    };
    let text = strip_comments_and_strings(text);
    // `mod x;` children: `x::` paths start at this module.
    let children: BTreeSet<String> = text
        .split([';', '{', '}'])
        .filter_map(|stmt| {
            let words: Vec<&str> = stmt.split_whitespace().collect();
            let k = words.iter().position(|w| *w == "mod")?;
            (words.len() == k + 2).then(|| words[k + 1].to_string())
        })
        .collect();
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    // Inline modules (`mod tests { use super::*; }`) by the brace depth
    // inside their braces: their `super` is this file's module.
    let mut depth = 0usize;
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<String> = None;
    let mut i = 0;
    while i < text.len() {
        match bytes[i] {
            b'{' => {
                depth += 1;
                if let Some(name) = pending.take() {
                    inline.push((depth, name));
                }
            }
            b'}' => {
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            b';' => pending = None,
            _ => {}
        }
        let boundary = i == 0 || !is_ident(bytes[i - 1] as char) && bytes[i - 1] != b':';
        if !boundary || !is_ident(bytes[i] as char) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < text.len() && is_ident(bytes[j] as char) {
            j += 1;
        }
        let word = &text[i..j];
        let next = j;
        if word == "mod" {
            let rest = text[j..].trim_start();
            let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            if rest[name.len()..].trim_start().starts_with('{') {
                pending = Some(name);
            }
        }
        // (where the path's module segments start, the base they extend)
        let start: Option<(usize, Vec<String>)> = if !text[j..].starts_with("::") {
            None
        } else {
            let mut here = file_here.clone();
            here.extend(inline.iter().map(|(_, n)| n.clone()));
            match word {
                "crate" => Some((j + 2, Vec::new())),
                "self" => Some((j + 2, here.clone())),
                "super" => {
                    let mut up = here.clone();
                    up.pop();
                    let mut k = j + 2;
                    while text[k..].starts_with("super::") {
                        up.pop();
                        k += "super::".len();
                    }
                    Some((k, up))
                }
                w if inline.is_empty() && children.contains(w) => Some((i, here.clone())),
                _ => None,
            }
        };
        if let Some((at, base)) = start {
            let imported = text[..i].trim_end().ends_with("use");
            for rest in paths_at(&text, at) {
                let mut path = base.clone();
                path.extend(rest);
                found.push(Named { path, imported });
            }
        }
        i = next;
    }
    found
}

/// The module a path names: its longest prefix that is a module of the
/// crate, followed through the names that module imports (`crate::Error`
/// re-exported by the root from `error` is `error`).
fn resolve(
    mut path: Vec<String>,
    all: &BTreeMap<String, PathBuf>,
    imports: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
) -> String {
    for _ in 0..8 {
        let mut k = path.len();
        while k > 0 && !all.contains_key(&path[..k].join("::")) {
            k -= 1;
        }
        let module = path[..k].join("::");
        let Some(name) = path.get(k) else {
            return module;
        };
        match imports.get(&module).and_then(|m| m.get(name)) {
            Some(target) if *target != path[..=k] => {
                let mut next = target.clone();
                next.extend(path[k + 1..].iter().cloned());
                path = next;
            }
            _ => return module,
        }
    }
    path.join("::")
}

/// The module graph of a crate: each module to the modules it uses.
fn graph(
    sources: &BTreeMap<String, String>,
    all: &BTreeMap<String, PathBuf>,
) -> BTreeMap<String, BTreeSet<String>> {
    let named: BTreeMap<&String, Vec<Named>> = sources
        .iter()
        .map(|(m, text)| (m, named_paths(m, text)))
        .collect();
    let imports: BTreeMap<String, BTreeMap<String, Vec<String>>> = named
        .iter()
        .map(|(m, paths)| {
            let names = paths
                .iter()
                .filter(|n| n.imported)
                .filter_map(|n| Some((n.path.last()?.clone(), n.path.clone())))
                .collect();
            ((*m).clone(), names)
        })
        .collect();
    named
        .iter()
        .map(|(m, paths)| {
            let uses = paths
                .iter()
                .map(|n| resolve(n.path.clone(), all, &imports))
                .filter(|to| to != *m)
                .collect();
            ((*m).clone(), uses)
        })
        .collect()
}

/// Strongly connected components with more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.g.get(v) {
            for w in ws {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let lw = t.low[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(lw));
                } else if t.on.contains(w) {
                    let iw = t.index[w];
                    let lv = t.low[v];
                    t.low.insert(v, lv.min(iw));
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out.sort_by_key(|c| std::cmp::Reverse(c.len()));
    t.out
}

/// Each crate's directory name, its circles (largest first), and the
/// edges inside them (`from -> to`).
fn workspace_circles() -> Vec<(String, Vec<Vec<String>>, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("crates/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    let mut out = Vec::new();
    for dir in crates {
        let name = dir.file_name().expect("name").to_string_lossy().to_string();
        let all = modules(&dir.join("src"));
        let sources: BTreeMap<String, String> = all
            .iter()
            .map(|(m, file)| {
                (
                    m.clone(),
                    std::fs::read_to_string(file).expect("source file"),
                )
            })
            .collect();
        let g = graph(&sources, &all);
        let cs = circles(&g);
        let mut inside = Vec::new();
        for c in &cs {
            for from in c {
                for to in g[from].iter().filter(|t| c.contains(t)) {
                    inside.push(format!("{} -> {}", show(from), show(to)));
                }
            }
        }
        out.push((name, cs, inside));
    }
    out
}

fn show(m: &str) -> &str {
    if m.is_empty() {
        "(root)"
    } else {
        m
    }
}

#[test]
fn no_crate_has_a_module_circle_of_more_than_two_files() {
    let mut report = String::new();
    let mut over = Vec::new();
    // KVBENCH_CIRCLE_EDGES=1 lists the edges inside each circle: where to cut.
    let edges = std::env::var_os("KVBENCH_CIRCLE_EDGES").is_some();
    for (name, circles, inside) in workspace_circles() {
        let largest = circles.first().map_or(0, Vec::len);
        report.push_str(&format!(
            "{name}: largest circle {largest} (limit {GOAL})\n"
        ));
        for c in &circles {
            let names: Vec<&str> = c.iter().map(|m| show(m)).collect();
            report.push_str(&format!("  {} files: {}\n", c.len(), names.join(", ")));
        }
        if edges {
            for e in &inside {
                report.push_str(&format!("    {e}\n"));
            }
        }
        if largest > GOAL {
            over.push(format!("{name} ({largest} > {GOAL})"));
        }
    }
    println!("{report}");
    assert!(
        over.is_empty(),
        "circles over their limit: {}\n{report}",
        over.join(", ")
    );
}

/// Issue 32: no function of the workspace's sources (crates and benches,
/// not their `tests/` folders) runs over this many lines.
const LONGEST_FUNCTION: usize = 150;

/// The functions of `text` longer than `limit` lines, as (first line,
/// name, lines). Sources are rustfmt-formatted, so a function ends at the
/// first line that is its indentation followed by `}`.
fn long_functions(text: &str, limit: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let mut words = body.split_whitespace().skip_while(|w| {
            w.starts_with("pub") || matches!(*w, "async" | "const" | "unsafe" | "extern" | "\"C\"")
        });
        if words.next() != Some("fn") || body.ends_with(';') {
            continue;
        }
        let name: String = words
            .next()
            .unwrap_or("")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close) {
            let n = end + 2;
            if n > limit {
                out.push((i + 1, name, n));
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, skipping `tests/` folders and build output.
fn sources_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            if name != "tests" && name != "target" {
                sources_under(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_length_check_finds_a_long_function_and_only_it() {
    let long = format!(
        "fn long() {{\n{}}}\n",
        "    x();\n".repeat(LONGEST_FUNCTION)
    );
    let text = format!("pub(crate) fn short() {{\n    y();\n}}\n{long}fn declared();\n");
    let found = long_functions(&text, LONGEST_FUNCTION);
    assert_eq!(found, vec![(4, "long".to_string(), LONGEST_FUNCTION + 2)]);
}

#[test]
fn no_function_is_longer_than_150_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    sources_under(&root.join("crates"), &mut files);
    sources_under(&root.join("bench"), &mut files);
    files.sort();
    assert!(
        files.len() > 100,
        "the workspace's sources: {}",
        files.len()
    );
    let mut over = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a source file");
        for (line, name, n) in long_functions(&text, LONGEST_FUNCTION) {
            let at = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            over.push(format!("{at}:{line} {name}: {n} lines"));
        }
    }
    assert!(
        over.is_empty(),
        "functions over {LONGEST_FUNCTION} lines (split them where a part can be named):\n{}",
        over.join("\n")
    );
}

/// How many system, topology or protocol variants `text` names
/// (`TopologyKind::Cluster`, not `TopologyKind::default()` or
/// `MySystemKind::X`).
fn spelled_variants(text: &str) -> usize {
    let mut n = 0;
    for prefix in ["SystemKind::", "TopologyKind::", "Protocol::"] {
        for (at, _) in text.match_indices(prefix) {
            let before = text[..at].chars().next_back();
            let after = text[at + prefix.len()..].chars().next();
            let starts_a_name = !before.is_some_and(|c| c.is_ascii_alphanumeric());
            if starts_a_name && after.is_some_and(|c| c.is_ascii_uppercase()) {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn the_variant_count_counts_variants_only() {
    let text = "match t { TopologyKind::Cluster => 1, _ if s == SystemKind::Redis => 2 }\n\
                let p = kvbench_model::Protocol::Resp; TopologyKind::default(); MySystemKind::X";
    assert_eq!(spelled_variants(text), 3);
}

/// Counts what `grep -rhoE "(SystemKind|TopologyKind|Protocol)::[A-Z][A-Za-z]*"`
/// finds under `src` (the binary's or kvbench-run's sources), files whose
/// name holds `args` or `output` left out, comments and tests included (as docs say the figure is taken).
fn variant_names(src: &Path, dir: &Path, found: &mut Vec<(String, usize)>, read: &mut usize) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the binary's sources")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            variant_names(src, &path, found, read);
            continue;
        }
        // Named from src/, so that the checkout's own path cannot hide a file.
        let name = path
            .strip_prefix(src)
            .unwrap_or(&path)
            .to_string_lossy()
            .to_string();
        if !name.ends_with(".rs") || name.contains("args") || name.contains("output") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        *read += 1;
        let n = spelled_variants(&text);
        if n > 0 {
            found.push((name, n));
        }
    }
}

/// Issue 32: the binary names no system, topology or protocol variant
/// outside its argument parsing and printing, and neither do the
/// application crates it drives (`kvbench-run`, `kvbench-experiment`,
/// `kvbench-findmax`, `kvbench-papers`). A new `match` on a system or a
/// topology belongs in `servers`, `connect`, the engine or the model, not in
/// the application; a test picks a system by its name, as `--system` does.
#[test]
fn the_binary_spells_no_system_or_topology_variant_outside_args_and_output() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (mut found, mut read) = (Vec::new(), 0);
    for dir in [
        "kvbench/src",
        "run/src",
        "experiment/src",
        "findmax/src",
        "papers/src",
    ] {
        let src = crates.join(dir);
        let before = found.len();
        variant_names(&src, &src, &mut found, &mut read);
        for (name, _) in &mut found[before..] {
            *name = format!("{dir}/{name}");
        }
    }
    assert!(
        read > 70,
        "the count reads the binary's and the application crates' sources: {read} files"
    );
    let total: usize = found.iter().map(|(_, n)| n).sum();
    let lines: Vec<String> = found.iter().map(|(f, n)| format!("  {n} {f}")).collect();
    assert!(
        total == 0,
        "the binary and the application crates spell {total} system, topology or protocol variants outside args and output: move the decision to servers or the model\n{}",
        lines.join("\n")
    );
}

#[test]
fn the_parser_finds_use_trees_super_paths_children_and_re_exports() {
    let sources: BTreeMap<String, String> = [
        ("", "pub use e::E;\nmod a; mod d; mod e;"),
        (
            "a",
            "mod c;\n// use crate::d;\nuse crate::{d, a::{b::X}};\nfn f() { super::d::Y; c::g(); crate::E; \"crate::nope\"; }",
        ),
        ("a::b", ""),
        ("a::c", "use super::super::e;"),
        ("d", "fn y() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::e;\n}"),
        ("e", ""),
    ]
    .iter()
    .map(|(m, t)| (m.to_string(), t.to_string()))
    .collect();
    let all: BTreeMap<String, PathBuf> = sources
        .keys()
        .map(|m| (m.clone(), PathBuf::new()))
        .collect();
    let g = graph(&sources, &all);
    let set = |v: &[&str]| {
        v.iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<String>>()
    };
    // The root's E is e's: a uses e, not the root.
    assert_eq!(g["a"], set(&["d", "e", "a::b", "a::c"]));
    assert_eq!(g["a::c"], set(&["e"]));
    assert_eq!(g[""], set(&["e"]));
    // An inline module's `super` is its file.
    assert_eq!(g["d"], set(&["e"]));

    let mut g = BTreeMap::new();
    for (a, b) in [
        ("x", "y"),
        ("y", "z"),
        ("z", "x"),
        ("z", "w"),
        ("w", "v"),
        ("v", "w"),
    ] {
        g.entry(a.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_string());
        g.entry(b.to_string()).or_insert_with(BTreeSet::new);
    }
    assert_eq!(
        circles(&g),
        vec![
            vec!["x".to_string(), "y".into(), "z".into()],
            vec!["v".to_string(), "w".into()]
        ]
    );
}
