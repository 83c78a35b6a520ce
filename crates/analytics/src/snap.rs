//! SNAP edge lists (`web-Google.txt`, `soc-pokec-relationships.txt`): `#`
//! comment lines, then one `source<TAB>target` pair per line (spaces are
//! taken too). Node ids are renumbered densely in ascending order of the
//! file's ids, so a file with gaps in its ids (web-Google's go up to
//! 916,427 for 875,713 nodes) has exactly its distinct nodes.

use crate::graph::Graph;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Why an edge list cannot be read or written, with the file and line.
#[derive(Debug, thiserror::Error)]
pub enum SnapError {
    /// The file cannot be opened, read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A line that is not two node ids.
    #[error("{}: line {line}: {reason}", .path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// From 1.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// More distinct node ids than kvbench's 32-bit ids hold.
    #[error("{}: more than 4,294,967,295 distinct nodes", .path.display())]
    TooManyNodes {
        /// The file.
        path: PathBuf,
    },
}

/// Reads the edge list at `path`.
///
/// # Errors
/// [`SnapError`] naming the file (and the line, for a bad line).
pub fn read(path: &Path) -> Result<Graph, SnapError> {
    let io = |source| SnapError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut raw: Vec<(u64, u64)> = Vec::new();
    let mut text = String::new();
    let mut reader = BufReader::new(file);
    let mut line = 0u64;
    loop {
        text.clear();
        if reader.read_line(&mut text).map_err(io)? == 0 {
            break;
        }
        line += 1;
        let l = text.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let bad = |reason: String| SnapError::Line {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let mut ids = l.split_whitespace();
        let mut id = |what: &str| -> Result<u64, SnapError> {
            let w = ids
                .next()
                .ok_or_else(|| bad(format!("expected two node ids, found no {what}")))?;
            w.parse()
                .map_err(|_| bad(format!("{what} '{w}' is not a node id (a whole number)")))
        };
        let (s, t) = (id("source")?, id("target")?);
        if let Some(extra) = ids.next() {
            return Err(bad(format!("'{extra}' after the two node ids")));
        }
        raw.push((s, t));
    }
    let mut ids: Vec<u64> = raw.iter().flat_map(|&(s, t)| [s, t]).collect();
    ids.sort_unstable();
    ids.dedup();
    let nodes = u32::try_from(ids.len()).map_err(|_| SnapError::TooManyNodes {
        path: path.to_path_buf(),
    })?;
    // Ids are sorted and every one is in the list: the search cannot miss.
    let dense = |id: u64| ids.binary_search(&id).unwrap_or_default() as u32;
    let edges: Vec<(u32, u32)> = raw.iter().map(|&(s, t)| (dense(s), dense(t))).collect();
    Ok(Graph::from_edges(nodes, &edges))
}

/// Writes `g` as an edge list (a `# nodes: N edges: M` comment first), the
/// form the Spark implementation reads.
///
/// # Errors
/// [`SnapError::Io`] naming the file.
pub fn write(g: &Graph, path: &Path) -> Result<(), SnapError> {
    let io = |source| SnapError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut w = BufWriter::new(std::fs::File::create(path).map_err(io)?);
    writeln!(w, "# nodes: {} edges: {}", g.nodes(), g.edges()).map_err(io)?;
    for (s, t) in g.edge_list() {
        writeln!(w, "{s}\t{t}").map_err(io)?;
    }
    w.flush().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_comments_tabs_and_spaces_renumbering_densely() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("g.txt");
        std::fs::write(
            &p,
            "# Directed graph\n# FromNodeId\tToNodeId\n10\t30\n30 10\n\n10\t916427\n",
        )
        .expect("write");
        let g = read(&p).expect("graph");
        assert_eq!((g.nodes(), g.edges()), (3, 3));
        assert_eq!(g.neighbours(0), &[1, 2]);
        assert_eq!(g.neighbours(1), &[0]);
        let out = dir.path().join("out.txt");
        write(&g, &out).expect("write");
        assert_eq!(read(&out).expect("again"), g);
    }

    #[test]
    fn a_bad_line_is_named_with_its_file_and_number() {
        let dir = tempfile::tempdir().expect("dir");
        let p = dir.path().join("bad.txt");
        std::fs::write(&p, "1\t2\n3\tx\n").expect("write");
        let e = read(&p).expect_err("bad").to_string();
        assert!(
            e.ends_with("bad.txt: line 2: target 'x' is not a node id (a whole number)"),
            "{e}"
        );
        std::fs::write(&p, "1\n").expect("write");
        assert!(read(&p)
            .expect_err("bad")
            .to_string()
            .contains("line 1: expected two node ids"));
        let missing = read(&dir.path().join("none.txt"))
            .expect_err("missing")
            .to_string();
        assert!(missing.contains("none.txt"), "{missing}");
    }
}
