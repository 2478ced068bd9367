//! Plain aligned tables for a terminal: no borders, two spaces between columns, widths in
//! terminal cells (unicode-width). Written here rather than taken from a table crate because the
//! session list streams: its rows are printed as pages arrive, with widths fixed up front, which
//! table crates (that measure every row first) do not do.
//!
//! Every cell and header is put on one line and measured as it will be shown (with unsafe
//! characters already replaced, see [`crate::terminal`]), so a server's text can neither break
//! the layout nor be measured wrongly; the terminal gate itself is applied when the table is
//! written.

use serde_json::Value;
use unicode_width::UnicodeWidthStr;

/// The widest a cell may be in a table measured from its rows (the last column excepted);
/// longer text is cut with `…`.
pub const MAX_CELL_WIDTH: usize = 96;

/// A table measured from its rows.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table {
            headers: headers
                .into_iter()
                .map(|header| clean(&header.into()))
                .collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are empty, extra ones ignored).
    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let last = self.headers.len().saturating_sub(1);
        let mut row: Vec<String> = cells
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let c = clean(c.as_ref());
                if i < last {
                    truncate(&c, MAX_CELL_WIDTH)
                } else {
                    c
                }
            })
            .collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.width()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.width());
            }
        }
        let mut out = line(&self.headers, &widths);
        for row in &self.rows {
            out.push_str(&line(row, &widths));
        }
        out
    }
}

/// A table printed row by row, with column widths fixed in advance (the last column is never
/// cut or padded).
#[derive(Debug, Clone)]
pub struct StreamingTable {
    widths: Vec<usize>,
}

impl StreamingTable {
    /// Columns of these widths.
    pub fn new(widths: Vec<usize>) -> Self {
        StreamingTable { widths }
    }

    /// One line: the cells cut or padded to their widths.
    pub fn line<S: AsRef<str>>(&self, cells: impl IntoIterator<Item = S>) -> String {
        let last = self.widths.len().saturating_sub(1);
        let cells: Vec<String> = cells
            .into_iter()
            .take(self.widths.len())
            .enumerate()
            .map(|(i, c)| {
                let c = clean(c.as_ref());
                if i < last {
                    truncate(&c, self.widths[i])
                } else {
                    c
                }
            })
            .collect();
        line(&cells, &self.widths)
    }
}

fn line(cells: &[String], widths: &[usize]) -> String {
    let mut out = String::new();
    let last = cells.len().saturating_sub(1);
    for (i, cell) in cells.iter().enumerate() {
        out.push_str(cell);
        if i < last {
            let width = widths.get(i).copied().unwrap_or(0);
            let pad = width.saturating_sub(cell.width()) + 2;
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out
}

/// `key  value` lines, keys aligned.
pub fn pairs<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> String {
    let pairs: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(k, v)| (clean(k.as_ref()), clean(v.as_ref())))
        .collect();
    let width = pairs.iter().map(|(k, _)| k.width()).max().unwrap_or(0);
    let mut out = String::new();
    for (key, value) in &pairs {
        out.push_str(key);
        out.extend(std::iter::repeat_n(' ', width - key.width() + 2));
        out.push_str(value);
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    }
    out
}

/// Server text as one cell shows it: on one line, unsafe characters replaced (so that its
/// width is that of what the terminal will show).
pub fn clean(text: &str) -> String {
    crate::terminal::safe_text(&crate::terminal::one_line(text)).into_owned()
}

/// At most `width` terminal cells of `text`, ending in `…` when cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// A JSON value as one cell: strings bare, `null` empty, arrays of scalars joined with `, `,
/// other arrays as their length, objects as compact JSON.
pub fn cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) if items.iter().all(is_scalar) => {
            items.iter().map(cell).collect::<Vec<_>>().join(", ")
        }
        Value::Array(items) => format!("[{} items]", items.len()),
        Value::Object(_) => value.to_string(),
    }
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

/// Nested objects flattened to dotted keys (`openingBalance.amount`), in document order.
pub fn flatten(value: &Value) -> Vec<(String, Value)> {
    fn walk(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
        match value {
            Value::Object(members) if !members.is_empty() => {
                for (key, member) in members {
                    let name = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    walk(&name, member, out);
                }
            }
            other => out.push((prefix.to_string(), other.clone())),
        }
    }
    let mut out = Vec::new();
    walk("", value, &mut out);
    out
}

/// The most columns a list of objects is shown with as a table; wider items are shown one
/// block of `key  value` lines each.
const MAX_COLUMNS: usize = 8;

/// A JSON document for people: top-level scalars (and nested objects, flattened) as
/// `key  value` lines, each list of objects as a titled table (or blocks, when wide).
pub fn view(value: &Value) -> String {
    match value {
        Value::Object(members) => {
            let mut scalars = Vec::new();
            let mut sections = String::new();
            for (key, member) in members {
                match member {
                    Value::Array(items) if !items.is_empty() && !items.iter().all(is_scalar) => {
                        sections.push_str(&format!("\n{} ({})\n", clean(key), items.len()));
                        sections.push_str(&list(items));
                    }
                    Value::Array(items) if items.is_empty() => {
                        scalars.push((key.clone(), "(none)".to_string()));
                    }
                    Value::Object(_) => {
                        for (sub, v) in flatten(member) {
                            scalars.push((format!("{key}.{sub}"), cell(&v)));
                        }
                    }
                    other => scalars.push((key.clone(), cell(other))),
                }
            }
            let mut out = pairs(scalars);
            if out.is_empty() {
                sections = sections.trim_start_matches('\n').to_string();
            }
            out.push_str(&sections);
            out
        }
        Value::Array(items) if items.is_empty() => "(none)\n".to_string(),
        Value::Array(items) => list(items),
        other => format!("{}\n", clean(&cell(other))),
    }
}

/// A list of JSON values as a table of their flattened members, or as blocks when too wide.
pub fn list(items: &[Value]) -> String {
    let flat: Vec<Vec<(String, Value)>> = items.iter().map(flatten).collect();
    let mut columns: Vec<String> = Vec::new();
    for item in &flat {
        for (key, _) in item {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
    }
    if columns.len() <= MAX_COLUMNS {
        let headers: Vec<String> = columns
            .iter()
            .map(|c| {
                if c.is_empty() {
                    "value".to_string()
                } else {
                    c.clone()
                }
            })
            .collect();
        let mut table = Table::new(headers);
        for item in &flat {
            table.row(columns.iter().map(|column| {
                item.iter()
                    .find(|(k, _)| k == column)
                    .map(|(_, v)| cell(v))
                    .unwrap_or_default()
            }));
        }
        return table.render();
    }
    let mut out = String::new();
    for (i, item) in flat.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("[{i}]\n"));
        let lines = pairs(
            item.iter()
                .map(|(k, v)| (format!("  {k}"), truncate(&cell(v), 100))),
        );
        out.push_str(&lines);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_align_by_display_width() {
        let mut t = Table::new(["NAME", "CITY"]);
        t.row(["Jürgen", "Köln"]);
        t.row(["李", "x"]);
        assert_eq!(t.render(), "NAME    CITY\nJürgen  Köln\n李      x\n");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let mut t = Table::new(["A\u{1b}[2J", "B"]);
        t.row(["red\u{1b}[31m\nline", "\u{202e}x"]);
        let out = t.render();
        assert!(!out.contains('\u{1b}'), "{out:?}");
        assert_eq!(
            out,
            "A\u{fffd}[2J          B\nred\u{fffd}[31m line  \u{fffd}x\n"
        );
    }

    #[test]
    fn streaming_rows_are_cut_to_their_widths() {
        let s = StreamingTable::new(vec![4, 3]);
        assert_eq!(
            s.line(["abcdef", "long last column"]),
            "abc…  long last column\n"
        );
        assert_eq!(s.line(["ab", ""]), "ab\n");
    }

    #[test]
    fn documents_become_pairs_and_tables() {
        let doc = json!({
            "person": {"name": "Ann", "birth": {"year": 1980}},
            "scores": [{"type": "A", "value": 1}, {"type": "B", "extra": [1, 2]}],
            "empty": [],
            "note": null
        });
        let text = view(&doc);
        assert!(text.contains("person.name        Ann"), "{text}");
        assert!(text.contains("person.birth.year  1980"), "{text}");
        assert!(text.contains("empty              (none)"), "{text}");
        assert!(
            text.contains("\nscores (2)\ntype  value  extra\nA     1\nB            1, 2\n"),
            "{text}"
        );
    }

    #[test]
    fn wide_items_become_blocks() {
        let item: serde_json::Map<String, Value> =
            (0..10).map(|i| (format!("k{i}"), json!(i))).collect();
        let text = list(&[Value::Object(item)]);
        assert!(text.starts_with("[0]\n  k0  0\n"), "{text}");
    }

    #[test]
    fn truncation_counts_cells() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("李李李", 4), "李…");
    }
}
