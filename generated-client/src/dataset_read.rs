//! What the generated read of every dataset (`generated_session_datasets.rs`) calls on each
//! slot: its result or the error saying it was left out, its JSON, how it shows in `Debug`.

use crate::error::Error;
use crate::generated_datasets::Dataset;

/// A dataset's read result in `Debug`: `read`, or the error (never the data).
pub(crate) struct Shown<'a>(pub(crate) Result<(), &'a Error>);

impl std::fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Ok(()) => f.write_str("read"),
            Err(error) => error.fmt(f),
        }
    }
}

/// A slot's result; a slot left empty (a dataset left out of the read) is an error saying so,
/// not a panic.
pub(crate) fn read<T>(slot: Option<Result<T, Error>>, dataset: Dataset) -> Result<T, Error> {
    slot.unwrap_or_else(|| {
        Err(Error::InvalidRequest {
            operation: Some(dataset.operation_id()),
            message: format!(
                "{} was left out of this read (SessionDatasetsRequest::leave_out)",
                dataset.name()
            ),
        })
    })
}

/// A read dataset as JSON, or a copy of its error.
pub(crate) fn json_of<T: serde::Serialize>(
    result: Result<&T, &Error>,
) -> Result<serde_json::Value, Error> {
    result.map_err(Error::clone).and_then(as_json)
}

fn as_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::InvalidResponse {
        operation: None,
        message: format!(
            "a dataset could not be represented as JSON ({} error)",
            e.classify_name()
        ),
    })
}

/// The name of a serde_json error's kind, never its text (which may quote the data).
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O",
            serde_json::error::Category::Syntax => "syntax",
            serde_json::error::Category::Data => "data",
            serde_json::error::Category::Eof => "end of input",
        }
    }
}
