//! A minimal column-aligned table, rendered as plain text or as Markdown.

/// Rows of cells under a header; numbers right-aligned, text left-aligned.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns; a column whose name starts with `>` is
    /// right-aligned (the `>` is not shown).
    pub fn new(columns: &[&str]) -> Table {
        Table {
            header: columns
                .iter()
                .map(|c| c.trim_start_matches('>').to_string())
                .collect(),
            right: columns.iter().map(|c| c.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Appends a row (missing cells render empty, extra cells are dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.header.len())
            .map(|i| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| c.chars().count())
                    .chain([self.header[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    fn line(&self, cells: &[String], widths: &[usize], sep: &str) -> String {
        let mut out = Vec::with_capacity(widths.len());
        for (i, w) in widths.iter().enumerate() {
            let c = cells.get(i).map(String::as_str).unwrap_or("");
            out.push(if self.right[i] {
                format!("{c:>w$}")
            } else {
                format!("{c:<w$}")
            });
        }
        out.join(sep).trim_end().to_string()
    }

    /// Plain text, columns separated by two spaces.
    pub fn to_text(&self) -> String {
        let w = self.widths();
        let mut s = self.line(&self.header, &w, "  ");
        s.push('\n');
        for r in &self.rows {
            s.push_str(&self.line(r, &w, "  "));
            s.push('\n');
        }
        s
    }

    /// A GitHub-flavoured Markdown table.
    pub fn to_markdown(&self) -> String {
        let w = self.widths();
        let cell = |c: &str, i: usize| {
            if self.right[i] {
                format!("{c:>0$}", w[i])
            } else {
                format!("{c:<0$}", w[i])
            }
        };
        let mut s = String::from("|");
        for (i, h) in self.header.iter().enumerate() {
            s.push_str(&format!(" {} |", cell(h, i)));
        }
        s.push_str("\n|");
        for (i, width) in w.iter().enumerate() {
            let dashes = "-".repeat((*width).max(3));
            s.push_str(&if self.right[i] {
                format!(" {}: |", &dashes[1..])
            } else {
                format!(" {dashes} |")
            });
        }
        s.push('\n');
        for r in &self.rows {
            s.push('|');
            for i in 0..self.header.len() {
                s.push_str(&format!(
                    " {} |",
                    cell(r.get(i).map(String::as_str).unwrap_or(""), i)
                ));
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_and_markdown() {
        let mut t = Table::new(&["name", ">ops/s"]);
        t.row(vec!["redis".into(), "1,000".into()]);
        t.row(vec!["memcached".into(), "12".into()]);
        assert_eq!(
            t.to_text(),
            "name       ops/s\nredis      1,000\nmemcached     12\n"
        );
        assert_eq!(
            t.to_markdown(),
            "| name      | ops/s |\n| --------- | ----: |\n| redis     | 1,000 |\n| memcached |    12 |\n"
        );
    }
}
