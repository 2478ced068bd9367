//! The one gate between the network and the terminal.
//!
//! Every text the command writes (results, errors, warnings, logs) goes out through this module:
//! [`safe_text`] for text meant for people, [`write_json`] for JSON. Neither lets through a
//! character that can drive a terminal or deceive its reader: C0 and C1 controls (escape
//! sequences, BEL, carriage return, the 8-bit CSI), DEL, and the invisible format characters
//! (bidi overrides and isolates, zero-width characters, the BOM, line and paragraph separators).
//! In text they become `�` (tabs a space); in JSON they are written as `\uXXXX` escapes, so the
//! document is the same once parsed.
//!
//! Only the bytes of a downloaded file (`download ... -o -`) go out raw, and only when stdout is
//! not a terminal.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter};
use unicode_general_category::{GeneralCategory, get_general_category};

/// What an unsafe character is replaced with in text: visible, so the reader sees that
/// something was there.
pub const REPLACEMENT: char = '\u{fffd}';

/// Whether `c` may drive a terminal or hide from its reader. Line feed is the one control
/// character our own output needs; it is not unsafe here (cells and error fields are kept on
/// one line separately, see [`one_line`]).
pub fn is_unsafe(c: char) -> bool {
    if c == '\n' {
        return false;
    }
    c.is_control()
        || matches!(
            get_general_category(c),
            GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
}

/// `text` with every unsafe character replaced ([`REPLACEMENT`]; a tab becomes a space).
pub fn safe_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\t' => ' ',
                c if is_unsafe(c) => REPLACEMENT,
                c => c,
            })
            .collect(),
    )
}

/// `text` on one line: line breaks and tabs become spaces. For server text placed inside our own
/// layout (a table cell, a field of an error), so that it cannot fake a line of its own.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}' => ' ',
            c => c,
        })
        .collect()
}

/// Writes `text` to `out` through [`safe_text`] and flushes.
pub fn write_text(out: &mut impl Write, text: &str) -> io::Result<()> {
    out.write_all(safe_text(text).as_bytes())?;
    out.flush()
}

/// Writes `value` as JSON (indented, or compact for JSON Lines) followed by a newline, with
/// every unsafe character escaped.
pub fn write_json<T: Serialize + ?Sized>(
    out: &mut impl Write,
    value: &T,
    pretty: bool,
) -> Result<(), serde_json::Error> {
    let mut buffer = Vec::new();
    if pretty {
        let formatter = SafeJson(PrettyFormatter::new());
        value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut buffer,
            formatter,
        ))?;
    } else {
        let formatter = SafeJson(CompactFormatter);
        value.serialize(&mut serde_json::Serializer::with_formatter(
            &mut buffer,
            formatter,
        ))?;
    }
    buffer.push(b'\n');
    out.write_all(&buffer).map_err(serde_json::Error::io)?;
    out.flush().map_err(serde_json::Error::io)
}

/// Writes the JSON document `reader` holds (the service's bytes) to `out`, indented as
/// [`write_json`] indents, with every unsafe character escaped: one value at a time from the
/// reader to the writer (`serde_transcode`), never the whole document in memory. Check the
/// document first (`crate::answer::read` with `printable`): an error here may come after part
/// of it was written.
pub fn write_json_document(
    out: &mut impl Write,
    reader: impl io::Read,
) -> Result<(), serde_json::Error> {
    write_json_documents(out, [("", reader)], false)
}

/// Writes one JSON object whose members are the documents `members` hold, in their order,
/// each read and written one value at a time as [`write_json_document`] does.
pub fn write_json_object_of<'a, R: io::Read>(
    out: &mut impl Write,
    members: impl IntoIterator<Item = (&'a str, R)>,
) -> Result<(), serde_json::Error> {
    write_json_documents(out, members, true)
}

fn write_json_documents<'a, R: io::Read>(
    out: &mut impl Write,
    members: impl IntoIterator<Item = (&'a str, R)>,
    as_object: bool,
) -> Result<(), serde_json::Error> {
    use serde::ser::SerializeMap;
    let mut buffered = io::BufWriter::with_capacity(64 * 1024, &mut *out);
    {
        let mut serializer =
            serde_json::Serializer::with_formatter(&mut buffered, SafeJson(PrettyFormatter::new()));
        let transcoded = |reader: R| {
            serde_json::Deserializer::from_reader(io::BufReader::with_capacity(64 * 1024, reader))
        };
        if as_object {
            let mut object = serde::Serializer::serialize_map(&mut serializer, None)?;
            for (name, reader) in members {
                let mut document = transcoded(reader);
                object.serialize_entry(name, &serde_transcode::Transcoder::new(&mut document))?;
                document.end()?;
            }
            object.end()?;
        } else {
            for (_, reader) in members {
                let mut document = transcoded(reader);
                serde_transcode::transcode(&mut document, &mut serializer)?;
                document.end()?;
            }
        }
    }
    buffered.write_all(b"\n").map_err(serde_json::Error::io)?;
    buffered.flush().map_err(serde_json::Error::io)?;
    drop(buffered);
    out.flush().map_err(serde_json::Error::io)
}

/// A JSON formatter that also escapes the characters serde_json writes raw (it escapes only
/// U+0000..U+001F, `"` and `\`). Structure and indentation are the inner formatter's.
struct SafeJson<F>(F);

impl<F: Formatter> Formatter for SafeJson<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(at) = rest.find(is_unsafe) {
            let (safe, tail) = rest.split_at(at);
            writer.write_all(safe.as_bytes())?;
            let c = tail.chars().next().unwrap_or(REPLACEMENT);
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            rest = &tail[c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: CharEscape,
    ) -> io::Result<()> {
        self.0.write_char_escape(writer, char_escape)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_key(writer)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

/// Writes one line to stderr through [`safe_text`]. A closed or broken stderr is ignored
/// (`eprintln!` would panic).
pub fn note(text: &str) {
    let _ = write_text(&mut io::stderr().lock(), &format!("{text}\n"));
}

/// Standard error for `tracing`: every event's text passes through [`safe_text`]. A character
/// split across two writes is held back until its end arrives.
pub struct SafeStderr {
    pending: Vec<u8>,
}

impl SafeStderr {
    /// A writer for one `tracing` event.
    pub fn new() -> Self {
        SafeStderr {
            pending: Vec::new(),
        }
    }
}

impl Write for SafeStderr {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        let complete = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            // An incomplete character at the end: keep it for the next write.
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            // Not UTF-8 at all: everything, decoded lossily.
            Err(_) => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..complete]).into_owned();
        self.pending.drain(..complete);
        let mut stderr = io::stderr().lock();
        stderr.write_all(safe_text(&text).as_bytes())?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().lock().flush()
    }
}

impl Drop for SafeStderr {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let text = String::from_utf8_lossy(&self.pending).into_owned();
            let _ = io::stderr().lock().write_all(safe_text(&text).as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\u{1b}[31mb\u{7}c\u{9b}d\re\u{202e}f\u{2066}g\u{200b}h\u{7f}i\u{2028}j\u{feff}k\u{e0041}l\tm\nn";

    #[test]
    fn text_keeps_line_feeds_and_marks_everything_else() {
        assert_eq!(safe_text(HOSTILE), "a�[31mb�c�d�e�f�g�h�i�j�k�l m\nn");
        assert!(matches!(safe_text("Jürgen 李 👋\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_is_the_same_value_without_raw_unsafe_characters() {
        let value = serde_json::json!({ HOSTILE: [HOSTILE, 1, null] });
        for pretty in [true, false] {
            let mut out = Vec::new();
            write_json(&mut out, &value, pretty).expect("json");
            let text = String::from_utf8(out).expect("utf-8");
            let raw: Vec<char> = text.chars().filter(|&c| is_unsafe(c)).collect();
            assert!(raw.is_empty(), "{raw:?} in {text}");
            assert!(
                text.contains("\\u202e") && text.contains("\\udb40\\udc41"),
                "{text}"
            );
            let back: serde_json::Value = serde_json::from_str(&text).expect("parses");
            assert_eq!(back, value);
            assert_eq!(text.ends_with("]\n}\n"), pretty, "{text}");
        }
    }

    #[test]
    fn one_line_keeps_a_field_on_its_line() {
        assert_eq!(one_line("a\nb\r\tc\u{2028}d"), "a b  c d");
    }
}
