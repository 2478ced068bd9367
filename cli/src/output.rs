//! Writing results to stdout: JSON documents, JSON Lines, or text for people.

use std::io::{IsTerminal, Write};

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

    /// Writes `text` as is.
    pub fn text(&self, text: &str) -> Result<(), Failure> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes()).map_err(Failure::output)?;
        stdout.flush().map_err(Failure::output)
    }

    /// One JSON document, indented.
    pub fn document<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), Failure> {
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|e| Failure::Local(format!("cannot render the result as JSON: {e}")))?;
        text.push('\n');
        self.text(&text)
    }

    /// One line of JSON Lines.
    pub fn json_line<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), Failure> {
        let mut text = serde_json::to_string(value)
            .map_err(|e| Failure::Local(format!("cannot render the result as JSON: {e}")))?;
        text.push('\n');
        self.text(&text)
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

/// Writes one line to stderr. A closed or broken stderr is ignored (`eprintln!` would panic).
pub fn note(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// Any serializable value as a JSON value.
pub fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value)
        .map_err(|e| Failure::Local(format!("cannot render the result as JSON: {e}")))
}
