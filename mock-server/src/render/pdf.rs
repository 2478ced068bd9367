//! A small flowing-text PDF writer on top of `pdf-writer`: A4 pages, the standard Helvetica
//! fonts (WinAnsi encoding, so Latin-1 names show correctly), headings, paragraphs, tables and
//! page footers.

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

const PAGE_WIDTH: f32 = 595.0;
const PAGE_HEIGHT: f32 = 842.0;
const MARGIN: f32 = 50.0;
const REGULAR: Name<'static> = Name(b"F1");
const BOLD: Name<'static> = Name(b"F2");

/// A document being written top to bottom.
pub struct PdfDocument {
    title: String,
    pages: Vec<Content>,
    current: Content,
    y: f32,
}

impl PdfDocument {
    /// A new document whose first page starts with nothing.
    pub fn new(title: &str) -> Self {
        PdfDocument {
            title: title.to_owned(),
            pages: Vec::new(),
            current: Content::new(),
            y: PAGE_HEIGHT - MARGIN,
        }
    }

    fn ensure_room(&mut self, height: f32) {
        if self.y - height < MARGIN + 20.0 {
            self.new_page();
        }
    }

    fn new_page(&mut self) {
        let page = std::mem::replace(&mut self.current, Content::new());
        self.pages.push(page);
        self.y = PAGE_HEIGHT - MARGIN;
    }

    fn text_at(&mut self, x: f32, y: f32, size: f32, bold: bool, text: &str) {
        let encoded = win_ansi(text);
        self.current
            .begin_text()
            .set_font(if bold { BOLD } else { REGULAR }, size)
            .next_line(x, y)
            .show(Str(&encoded))
            .end_text();
    }

    /// A title line with a coloured rule under it.
    pub fn title(&mut self, text: &str, subtitle: &str) {
        self.ensure_room(60.0);
        self.current
            .set_fill_rgb(0.07, 0.27, 0.45)
            .rect(MARGIN, self.y - 34.0, PAGE_WIDTH - 2.0 * MARGIN, 40.0)
            .fill_nonzero()
            .set_fill_rgb(1.0, 1.0, 1.0);
        let y = self.y - 20.0;
        self.text_at(MARGIN + 10.0, y, 18.0, true, text);
        self.current.set_fill_rgb(0.0, 0.0, 0.0);
        self.y -= 52.0;
        self.paragraph(subtitle, 9.0);
        self.y -= 6.0;
    }

    /// A section heading.
    pub fn heading(&mut self, text: &str) {
        self.ensure_room(40.0);
        self.y -= 10.0;
        self.current.set_fill_rgb(0.07, 0.27, 0.45);
        let y = self.y - 12.0;
        self.text_at(MARGIN, y, 13.0, true, text);
        self.current
            .set_fill_rgb(0.0, 0.0, 0.0)
            .set_stroke_rgb(0.07, 0.27, 0.45)
            .set_line_width(0.8)
            .move_to(MARGIN, self.y - 16.0)
            .line_to(PAGE_WIDTH - MARGIN, self.y - 16.0)
            .stroke();
        self.y -= 26.0;
    }

    /// Wrapped text.
    pub fn paragraph(&mut self, text: &str, size: f32) {
        let width_chars = ((PAGE_WIDTH - 2.0 * MARGIN) / (size * 0.5)) as usize;
        for line in wrap(text, width_chars.max(20)) {
            self.ensure_room(size + 4.0);
            let y = self.y - size;
            self.text_at(MARGIN, y, size, false, &line);
            self.y -= size + 4.0;
        }
    }

    /// `label: value` lines in two columns.
    pub fn facts(&mut self, facts: &[(&str, String)]) {
        for (label, value) in facts {
            self.ensure_room(14.0);
            let y = self.y - 10.0;
            self.text_at(MARGIN, y, 10.0, true, label);
            self.text_at(MARGIN + 150.0, y, 10.0, false, value);
            self.y -= 14.0;
        }
    }

    /// A table; `widths` are fractions of the text width and `right` marks right-aligned
    /// (numeric) columns.
    pub fn table(&mut self, header: &[&str], widths: &[f32], right: &[bool], rows: &[Vec<String>]) {
        let usable = PAGE_WIDTH - 2.0 * MARGIN;
        let xs: Vec<f32> = widths
            .iter()
            .scan(MARGIN, |x, w| {
                let start = *x;
                *x += w * usable;
                Some(start)
            })
            .collect();
        let draw_header = |doc: &mut PdfDocument| {
            doc.ensure_room(30.0);
            doc.current
                .set_fill_rgb(0.88, 0.92, 0.96)
                .rect(MARGIN, doc.y - 14.0, usable, 14.0)
                .fill_nonzero()
                .set_fill_rgb(0.0, 0.0, 0.0);
            let y = doc.y - 10.5;
            for (i, title) in header.iter().enumerate() {
                let x = column_x(&xs, widths, right, i, usable, title, 8.5);
                doc.text_at(x, y, 8.5, true, title);
            }
            doc.y -= 16.0;
        };
        draw_header(self);
        for row in rows {
            if self.y - 12.0 < MARGIN + 20.0 {
                self.new_page();
                draw_header(self);
            }
            let y = self.y - 9.0;
            for (i, cell) in row.iter().enumerate() {
                let room = widths.get(i).copied().unwrap_or(0.1) * usable - 8.0;
                let cell = truncate(cell, room, 8.5);
                let x = column_x(&xs, widths, right, i, usable, &cell, 8.5);
                self.text_at(x, y, 8.5, false, &cell);
            }
            self.y -= 12.0;
        }
        self.y -= 4.0;
    }

    /// Vertical space.
    pub fn space(&mut self, height: f32) {
        self.y -= height;
    }

    /// The finished PDF file.
    pub fn finish(mut self) -> Vec<u8> {
        let last = std::mem::replace(&mut self.current, Content::new());
        self.pages.push(last);
        let count = self.pages.len();
        let mut pdf = Pdf::new();
        let catalog_id = Ref::new(1);
        let tree_id = Ref::new(2);
        let regular_id = Ref::new(3);
        let bold_id = Ref::new(4);
        let info_id = Ref::new(5);
        let first_page = 10;
        let page_ids: Vec<Ref> = (0..count)
            .map(|i| Ref::new(first_page + 2 * i as i32))
            .collect();
        pdf.catalog(catalog_id).pages(tree_id);
        pdf.pages(tree_id)
            .kids(page_ids.iter().copied())
            .count(count as i32);
        pdf.type1_font(regular_id)
            .base_font(Name(b"Helvetica"))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
        pdf.type1_font(bold_id)
            .base_font(Name(b"Helvetica-Bold"))
            .encoding_predefined(Name(b"WinAnsiEncoding"));
        pdf.document_info(info_id)
            .title(TextStr(&self.title))
            .producer(TextStr("creditdata-mock"));
        let pages = std::mem::take(&mut self.pages);
        for (index, mut content) in pages.into_iter().enumerate() {
            let footer = win_ansi(&format!(
                "{}  -  page {} of {}",
                self.title,
                index + 1,
                count
            ));
            content
                .set_fill_rgb(0.4, 0.4, 0.4)
                .begin_text()
                .set_font(REGULAR, 8.0)
                .next_line(MARGIN, 28.0)
                .show(Str(&footer))
                .end_text();
            let page_id = page_ids[index];
            let content_id = Ref::new(page_id.get() + 1);
            let mut page = pdf.page(page_id);
            page.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT));
            page.parent(tree_id);
            page.contents(content_id);
            page.resources()
                .fonts()
                .pair(REGULAR, regular_id)
                .pair(BOLD, bold_id);
            page.finish();
            pdf.stream(content_id, &content.finish());
        }
        pdf.finish()
    }
}

fn column_x(
    xs: &[f32],
    widths: &[f32],
    right: &[bool],
    i: usize,
    usable: f32,
    text: &str,
    size: f32,
) -> f32 {
    let start = xs.get(i).copied().unwrap_or(MARGIN);
    if right.get(i).copied().unwrap_or(false) {
        let width = widths.get(i).copied().unwrap_or(0.1) * usable;
        start + width - 4.0 - text_width(text, size)
    } else {
        start + 2.0
    }
}

/// Approximate Helvetica advance width (digits are 0.556 em; an average for the rest).
fn text_width(text: &str, size: f32) -> f32 {
    text.chars()
        .map(|c| match c {
            '0'..='9' => 0.556,
            ' ' | '.' | ',' | 'i' | 'j' | 'l' | '|' => 0.278,
            '-' | 'f' | 't' | 'r' => 0.333,
            'M' | 'W' | 'm' | 'w' => 0.833,
            'A'..='Z' | '_' => 0.667,
            _ => 0.556,
        })
        .sum::<f32>()
        * size
}

/// `text`, shortened with a final `.` until it fits `room` points.
fn truncate(text: &str, room: f32, size: f32) -> String {
    if text_width(text, size) <= room {
        return text.to_owned();
    }
    let mut cut: String = text.to_owned();
    while !cut.is_empty() && text_width(&cut, size) + text_width(".", size) > room {
        cut.pop();
    }
    cut.push('.');
    cut
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Text in the WinAnsi encoding (Windows-1252) of the standard PDF fonts. Characters it lacks
/// are written as their base letter (`ł` → `l`, `ą` → `a`, `ņ` → `n`: Polish and Baltic names
/// stay readable), and only what has no Latin base letter becomes `?`.
pub fn win_ansi(text: &str) -> Vec<u8> {
    use unicode_normalization::UnicodeNormalization;
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if let Some(byte) = cp1252(c) {
            out.push(byte);
            continue;
        }
        let base = match c {
            '\u{0141}' => Some(b'L'),
            '\u{0142}' => Some(b'l'),
            '\u{0110}' => Some(b'D'),
            '\u{0111}' => Some(b'd'),
            '\u{0131}' => Some(b'i'),
            _ => c
                .nfd()
                .next()
                .and_then(cp1252)
                .filter(|b| b.is_ascii_alphabetic()),
        };
        out.push(base.unwrap_or(b'?'));
    }
    out
}

/// The Windows-1252 byte of `c`, if it has one.
fn cp1252(c: char) -> Option<u8> {
    const HIGH: [(char, u8); 27] = [
        ('\u{20AC}', 0x80),
        ('\u{201A}', 0x82),
        ('\u{0192}', 0x83),
        ('\u{201E}', 0x84),
        ('\u{2026}', 0x85),
        ('\u{2020}', 0x86),
        ('\u{2021}', 0x87),
        ('\u{02C6}', 0x88),
        ('\u{2030}', 0x89),
        ('\u{0160}', 0x8A),
        ('\u{2039}', 0x8B),
        ('\u{0152}', 0x8C),
        ('\u{017D}', 0x8E),
        ('\u{2018}', 0x91),
        ('\u{2019}', 0x92),
        ('\u{201C}', 0x93),
        ('\u{201D}', 0x94),
        ('\u{2022}', 0x95),
        ('\u{2013}', 0x96),
        ('\u{2014}', 0x97),
        ('\u{02DC}', 0x98),
        ('\u{2122}', 0x99),
        ('\u{0161}', 0x9A),
        ('\u{203A}', 0x9B),
        ('\u{0153}', 0x9C),
        ('\u{017E}', 0x9E),
        ('\u{0178}', 0x9F),
    ];
    let code = c as u32;
    if code < 0x80 || (0xA0..=0xFF).contains(&code) {
        return Some(code as u8);
    }
    HIGH.iter().find(|(k, _)| *k == c).map(|(_, b)| *b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_survives_and_the_rest_falls_back_to_base_letters() {
        assert_eq!(win_ansi("Müller"), b"M\xfcller".to_vec());
        assert_eq!(win_ansi("Šťastný"), b"\x8atastn\xfd".to_vec());
        assert_eq!(win_ansi("Łukasz Wiśniewski"), b"Lukasz Wisniewski".to_vec());
        assert_eq!(win_ansi("Bērziņš"), b"Berzin\x9a".to_vec());
        assert_eq!(win_ansi("\u{4E2D}"), b"?".to_vec());
    }

    #[test]
    fn a_long_document_breaks_into_pages() {
        let mut doc = PdfDocument::new("Test");
        doc.title("Test", "sub");
        let rows: Vec<Vec<String>> = (0..200).map(|i| vec![i.to_string(), "x".into()]).collect();
        doc.table(&["n", "x"], &[0.5, 0.5], &[true, false], &rows);
        let bytes = doc.finish();
        assert!(bytes.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("/Count 1") && !text.contains("/Count 2"),
            "200 rows at 12 pt need more than two pages"
        );
    }
}
