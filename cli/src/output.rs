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
