//! Writing results to stdout: JSON documents, JSON Lines, or text for people.

use std::io::IsTerminal;

use serde::Serialize;

use crate::cli::OutputFormat;
use crate::failure::Failure;

/// Where results go and in which form.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    /// The format in effect.
    pub format: OutputFormat,
}

impl Output {
    /// `--output`, or table on a terminal and JSON otherwise.
    pub fn new(requested: Option<OutputFormat>) -> Self {
        let format = requested.unwrap_or(if std::io::stdout().is_terminal() {
            OutputFormat::Table
        } else {
            OutputFormat::Json
        });
        Output { format }
    }

    /// Whether the output is JSON.
    pub fn is_json(&self) -> bool {
        self.format == OutputFormat::Json
    }

    /// Writes text for people, through the terminal gate ([`crate::terminal::safe_text`]).
    pub fn text(&self, text: &str) -> Result<(), Failure> {
        crate::terminal::write_text(&mut std::io::stdout().lock(), text).map_err(Failure::output)
    }

    /// One JSON document, indented.
    pub fn document<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), Failure> {
        json(value, true)
    }

    /// One line of JSON Lines.
    pub fn json_line<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), Failure> {
        json(value, false)
    }

    /// A JSON value: the document in JSON, [`crate::table::view`] for people.
    pub fn value(&self, value: &serde_json::Value) -> Result<(), Failure> {
        if self.is_json() {
            self.document(value)
        } else {
            self.text(&crate::table::view(value))
        }
    }
}

/// The largest answer shown as a table for people: 1 MiB. The table is made from the answer
/// decoded as `serde_json::Value`s (many times its size in memory); a larger answer is more
/// than anyone reads on a terminal, and is printed as JSON (with a note on stderr).
pub const TABLE_VIEW_MAX_BYTES: u64 = 1024 * 1024;

impl Output {
    /// An answer as the service sent it (`bytes` bytes in `answer`, checked to be one JSON
    /// document): in JSON, its bytes through the terminal gate, one value at a time; for
    /// people, [`crate::table::view`] of it when it is at most [`TABLE_VIEW_MAX_BYTES`].
    pub fn answer(&self, answer: &std::fs::File, bytes: u64) -> Result<(), Failure> {
        if !self.is_json() {
            if bytes <= TABLE_VIEW_MAX_BYTES {
                return self.text(&crate::table::view(&table_value(answer)?));
            }
            crate::terminal::note(&format!(
                "note: the answer is {bytes} bytes, more than a table shows ({TABLE_VIEW_MAX_BYTES}): \
                 printed as JSON"
            ));
        }
        let mut stdout = std::io::stdout().lock();
        crate::terminal::write_json_document(&mut stdout, answer).map_err(json_failure)
    }

    /// Several answers as one JSON object, one member per answer, written one after another
    /// (never all in memory); for people, a section per answer as [`Output::answer`] shows it.
    pub fn answers<'a>(
        &self,
        answers: impl IntoIterator<Item = (&'a str, &'a std::fs::File, u64)>,
    ) -> Result<(), Failure> {
        if self.is_json() {
            let mut stdout = std::io::stdout().lock();
            let members = answers.into_iter().map(|(name, file, _)| (name, file));
            return crate::terminal::write_json_object_of(&mut stdout, members)
                .map_err(json_failure);
        }
        for (at, (name, file, bytes)) in answers.into_iter().enumerate() {
            let separator = if at == 0 { "" } else { "\n" };
            self.text(&format!("{separator}== {name}\n"))?;
            self.answer(file, bytes)?;
        }
        Ok(())
    }
}

/// An answer (at most [`TABLE_VIEW_MAX_BYTES`]) as a value for a table.
fn table_value(answer: &std::fs::File) -> Result<serde_json::Value, Failure> {
    serde_json::from_reader(std::io::BufReader::new(answer))
        .map_err(|e| Failure::Local(format!("cannot show the answer: {}", e.classify_name())))
}

/// A serde_json error's kind, never its text (which may quote the data).
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "it cannot be read",
            serde_json::error::Category::Syntax => "it is not JSON",
            serde_json::error::Category::Data => "it is not shaped as expected",
            serde_json::error::Category::Eof => "it ends early",
        }
    }
}

fn json_failure(error: serde_json::Error) -> Failure {
    match error.io_error_kind() {
        Some(_) => Failure::output(std::io::Error::from(error)),
        None => Failure::Local(format!(
            "cannot print the answer: {}",
            error.classify_name()
        )),
    }
}

/// JSON to stdout, through the terminal gate ([`crate::terminal::write_json`]).
fn json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Result<(), Failure> {
    crate::terminal::write_json(&mut std::io::stdout().lock(), value, pretty).map_err(|error| {
        match error.io_error_kind() {
            Some(_) => Failure::output(std::io::Error::from(error)),
            None => Failure::Local(format!("cannot render the result as JSON: {error}")),
        }
    })
}

/// Any serializable value as a JSON value.
pub fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value)
        .map_err(|e| Failure::Local(format!("cannot render the result as JSON: {e}")))
}
