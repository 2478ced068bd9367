//! The account statement as TSV
//! (`GET /v1/sessions/{sessionId}/account-statements/{accountStatementId}/tsv`): raw, or as a
//! stream of parsed rows.
//!
//! The column set of the statement is not published, so a row is not a fixed struct: it is a
//! [`StatementRow`] keyed by the header row's column names, with typed accessors
//! ([`StatementRow::parse`], [`StatementRow::date`]).
//!
//! ```no_run
//! use creditdata_client::prelude::*;
//!
//! async fn amounts(client: &Client, session_id: uuid::Uuid) -> Result<()> {
//!     let mut rows = client.account_statement_rows(session_id, "statement-1");
//!     while let Some(row) = rows.try_next().await? {
//!         println!("line {}: {:?}", row.line(), row.get("Amount"));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! # Format and limits
//!
//! Tab-delimited, first row is the header; `\n`, `\r\n` and `\r` end rows; a UTF-8 byte order
//! mark is ignored; a field starting with `"` is read as a quoted field (so a quoted field may
//! contain tabs and line breaks, `""` inside it being a quote), as spreadsheet programs write
//! TSV. Every row must have as many fields as the header, and every field must be UTF-8.
//!
//! Parsing is incremental ([`csv_core`], the engine of the `csv` crate, fed chunk by chunk as
//! they arrive): memory holds one network chunk and one row, never the file. A row longer than
//! [`MAX_ROW_BYTES`] or with more than [`MAX_FIELDS`] fields is an error, so a broken or
//! hostile body cannot make memory grow without bound.
//!
//! # Errors
//!
//! A malformed row (wrong number of fields, invalid UTF-8) is an [`Error::Decode`] whose path
//! is `line N` (the line where the row starts). Such an error does **not** end the stream: the
//! next item is the next row, so a caller may skip bad rows. Errors of the body itself
//! (connection broken, length wrong, timeout) and an oversized row end the stream. Error
//! messages never quote the row's content: statements carry personal financial data.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use chrono::NaiveDate;
use csv_core::ReadRecordResult;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt, TryStreamExt, stream};
use uuid::Uuid;

use crate::download::{Download, DownloadExt};
use crate::error::DecodeError;
use crate::operation::Operation;
use crate::{Client, Error, Result};

/// The longest row accepted, in bytes of field content.
pub const MAX_ROW_BYTES: usize = 1024 * 1024;

/// The most fields a row may have.
pub const MAX_FIELDS: usize = 16 * 1024;

fn operation_id() -> &'static str {
    <crate::builder::GetAccountStatementTsv<'static> as Operation>::META.id
}

/// The header row: column names in order, and where each name first appears.
#[derive(Debug)]
struct Columns {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

/// One data row of the statement: values keyed by the header's column names.
#[derive(Clone, PartialEq, Eq)]
pub struct StatementRow {
    line: u64,
    columns: Arc<Columns>,
    values: Vec<String>,
}

impl PartialEq for Columns {
    fn eq(&self, other: &Self) -> bool {
        self.names == other.names
    }
}

impl Eq for Columns {}

impl fmt::Debug for StatementRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatementRow")
            .field("line", &self.line)
            .field("fields", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

impl StatementRow {
    /// The line of the file where this row starts (the header is line 1).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The column names, from the header row, in order.
    pub fn columns(&self) -> &[String] {
        &self.columns.names
    }

    /// The values, in column order.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// The value of column `name` (exact, case-sensitive match; with duplicate column names,
    /// the first). `None` when there is no such column; `Some("")` for an empty cell.
    pub fn get(&self, name: &str) -> Option<&str> {
        let index = *self.columns.index.get(name)?;
        self.values.get(index).map(String::as_str)
    }

    /// The value at position `index`.
    pub fn get_index(&self, index: usize) -> Option<&str> {
        self.values.get(index).map(String::as_str)
    }

    /// `(column name, value)` pairs in column order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.columns
            .names
            .iter()
            .map(String::as_str)
            .zip(self.values.iter().map(String::as_str))
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the row has no fields (only possible when the header has none).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Column `name` parsed as `T` (surrounding whitespace ignored): `Ok(None)` when the
    /// column is absent or the cell empty, an [`Error::Decode`] naming the line and the column
    /// when the text does not parse. For money, parse into a decimal type (e.g.
    /// `rust_decimal::Decimal`), not a float.
    pub fn parse<T>(&self, name: &str) -> Result<Option<T>>
    where
        T: FromStr,
        T::Err: fmt::Display,
    {
        let Some(text) = self.get(name).map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(None);
        };
        text.parse::<T>().map(Some).map_err(|e| {
            decode_error(
                self.line,
                Some(name),
                format!("not a valid {}: {e}", short_type_name::<T>()),
            )
        })
    }

    /// Column `name` as an ISO 8601 date (`YYYY-MM-DD`; a date-time's date part is accepted
    /// too). `Ok(None)` when absent or empty.
    pub fn date(&self, name: &str) -> Result<Option<NaiveDate>> {
        let Some(text) = self.get(name).map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(None);
        };
        let date_part = text
            .get(..10)
            .filter(|_| text.len() == 10 || text.as_bytes()[10] == b'T');
        date_part
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
            .map(Some)
            .ok_or_else(|| {
                decode_error(
                    self.line,
                    Some(name),
                    "not an ISO 8601 date (YYYY-MM-DD)".into(),
                )
            })
    }
}

fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

fn decode_error(line: u64, column: Option<&str>, message: String) -> Error {
    let path = match column {
        Some(column) => format!("line {line}, column {column:?}"),
        None => format!("line {line}"),
    };
    Error::Decode(Box::new(DecodeError::new(None, Some(path), message)))
}

/// What one call of [`RowParser::feed`] found.
enum Step {
    /// A complete record and the line it started on.
    Record(u64),
    /// The input was used up without completing a record.
    NeedInput,
    /// No more records.
    End,
}

/// Incremental TSV record reader: [`csv_core::Reader`] plus growing (bounded) buffers.
struct RowParser {
    core: csv_core::Reader,
    out: Vec<u8>,
    out_len: usize,
    ends: Vec<usize>,
    ends_len: usize,
    record_line: Option<u64>,
    columns: Option<Arc<Columns>>,
}

impl RowParser {
    fn new() -> Self {
        RowParser {
            core: csv_core::ReaderBuilder::new().delimiter(b'\t').build(),
            out: vec![0; 4096],
            out_len: 0,
            ends: vec![0; 64],
            ends_len: 0,
            record_line: None,
            columns: None,
        }
    }

    /// Parses from `input` (empty: end of data) until a record completes or the input is used
    /// up; returns what happened and how many bytes of `input` were consumed.
    fn feed(&mut self, input: &[u8]) -> Result<(Step, usize)> {
        let mut consumed = 0;
        let mut idle_at_end = 0;
        loop {
            if self.record_line.is_none() {
                // Line breaks between records (the `\n` of a `\r\n`, blank lines) are skipped
                // here rather than by csv_core, so that the record's line is the line of its
                // first byte.
                while let Some(&byte) = input.get(consumed).filter(|b| **b == b'\r' || **b == b'\n')
                {
                    consumed += 1;
                    if byte == b'\n' {
                        self.core.set_line(self.core.line() + 1);
                    }
                }
            }
            // An empty slice tells csv_core the data has ended: never pass one by accident.
            if consumed == input.len() && !input.is_empty() {
                return Ok((Step::NeedInput, consumed));
            }
            let line = *self.record_line.get_or_insert(self.core.line());
            let (result, nin, nout, nend) = self.core.read_record(
                &input[consumed..],
                &mut self.out[self.out_len..],
                &mut self.ends[self.ends_len..],
            );
            consumed += nin;
            self.out_len += nout;
            self.ends_len += nend;
            match result {
                ReadRecordResult::InputEmpty => {
                    if !input.is_empty() {
                        return Ok((Step::NeedInput, consumed));
                    }
                    // At the end of data csv_core is called until it reports `End`; it does
                    // so within a couple of calls, the bound only guards against a loop.
                    idle_at_end += 1;
                    if idle_at_end > 8 {
                        return Ok((Step::End, consumed));
                    }
                }
                ReadRecordResult::OutputFull => {
                    if self.out.len() >= MAX_ROW_BYTES {
                        return Err(decode_error(
                            line,
                            None,
                            format!("the row is longer than {MAX_ROW_BYTES} bytes"),
                        ));
                    }
                    let grown = (self.out.len() * 2).min(MAX_ROW_BYTES);
                    self.out.resize(grown, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    if self.ends.len() >= MAX_FIELDS {
                        return Err(decode_error(
                            line,
                            None,
                            format!("the row has more than {MAX_FIELDS} fields"),
                        ));
                    }
                    let grown = (self.ends.len() * 2).min(MAX_FIELDS);
                    self.ends.resize(grown, 0);
                }
                ReadRecordResult::Record => return Ok((Step::Record(line), consumed)),
                ReadRecordResult::End => return Ok((Step::End, consumed)),
            }
        }
    }

    /// Takes the completed record's fields as text, and resets for the next record.
    fn take_fields(&mut self, line: u64) -> Result<Vec<String>, Error> {
        let mut fields = Vec::with_capacity(self.ends_len);
        let mut start = 0;
        let mut bad_field = None;
        for (i, &end) in self.ends[..self.ends_len].iter().enumerate() {
            match std::str::from_utf8(&self.out[start..end]) {
                Ok(text) => fields.push(text.to_string()),
                Err(_) => {
                    bad_field.get_or_insert(i);
                    fields.push(String::new());
                }
            }
            start = end;
        }
        self.out_len = 0;
        self.ends_len = 0;
        self.record_line = None;
        match bad_field {
            None => Ok(fields),
            Some(i) => {
                let column = self
                    .columns
                    .as_ref()
                    .and_then(|c| c.names.get(i))
                    .map(String::as_str);
                let message = format!("field {} is not valid UTF-8", i + 1);
                Err(decode_error(line, column, message))
            }
        }
    }

    /// Turns a completed record into a row; the first record becomes the header (`Ok(None)`).
    fn complete(&mut self, line: u64) -> Result<Option<StatementRow>> {
        let fields = self.take_fields(line);
        let Some(columns) = &self.columns else {
            let mut names = fields?;
            if let Some(first) = names.first_mut()
                && let Some(rest) = first.strip_prefix('\u{feff}')
            {
                *first = rest.to_string();
            }
            let mut index = HashMap::with_capacity(names.len());
            for (i, name) in names.iter().enumerate() {
                index.entry(name.clone()).or_insert(i);
            }
            self.columns = Some(Arc::new(Columns { names, index }));
            return Ok(None);
        };
        let values = fields?;
        if values.len() != columns.names.len() {
            return Err(decode_error(
                line,
                None,
                format!(
                    "the row has {} fields, the header has {}",
                    values.len(),
                    columns.names.len()
                ),
            ));
        }
        Ok(Some(StatementRow {
            line,
            columns: Arc::clone(columns),
            values,
        }))
    }
}

const BOM: &[u8] = b"\xef\xbb\xbf";

struct ParseState<S> {
    body: S,
    /// The body's first bytes, gathered until a byte order mark can be recognised (csv_core
    /// only strips one that arrives whole in its first input).
    head: Option<Vec<u8>>,
    pending: Bytes,
    parser: RowParser,
    body_ended: bool,
    done: bool,
}

/// The gathered first bytes without a byte order mark (empty once taken).
fn take_head(head: &mut Option<Vec<u8>>) -> Bytes {
    let Some(bytes) = head.take() else {
        return Bytes::new();
    };
    let skip = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    Bytes::from(bytes).slice(skip..)
}

/// Parses a TSV body, chunk by chunk, into rows (see the [module documentation](self)).
///
/// `body` is any stream of chunks, e.g. [`Download::bytes_stream`]. An empty body, or a header
/// alone, yields no rows.
pub fn parse_statement<S>(body: S) -> impl Stream<Item = Result<StatementRow>> + Send + 'static
where
    S: Stream<Item = Result<Bytes>> + Send + 'static,
{
    let state = ParseState {
        body: Box::pin(body),
        head: Some(Vec::with_capacity(BOM.len())),
        pending: Bytes::new(),
        parser: RowParser::new(),
        body_ended: false,
        done: false,
    };
    stream::unfold(state, |mut state| async move {
        loop {
            if state.done {
                return None;
            }
            if !state.pending.is_empty() || state.body_ended {
                // Everything received is parsed before the end of data is signalled (empty input).
                match state.parser.feed(&state.pending) {
                    Err(error) => {
                        state.done = true;
                        return Some((Err(error), state));
                    }
                    Ok((step, consumed)) => {
                        state.pending.advance(consumed);
                        match step {
                            Step::Record(line) => match state.parser.complete(line) {
                                Ok(Some(row)) => return Some((Ok(row), state)),
                                Ok(None) => continue,
                                Err(error) => {
                                    // Without a header there is nothing to key rows by.
                                    state.done = state.parser.columns.is_none();
                                    return Some((Err(error), state));
                                }
                            },
                            Step::End => return None,
                            Step::NeedInput => {}
                        }
                    }
                }
                if !state.pending.is_empty() || state.body_ended {
                    continue;
                }
            }
            match state.body.next().await {
                Some(Ok(chunk)) => match state.head.as_mut() {
                    Some(head) => {
                        head.extend_from_slice(&chunk);
                        if head.len() >= BOM.len() {
                            state.pending = take_head(&mut state.head);
                        }
                    }
                    None => state.pending = chunk,
                },
                Some(Err(error)) => {
                    state.done = true;
                    return Some((Err(error), state));
                }
                None => {
                    state.pending = take_head(&mut state.head);
                    state.body_ended = true;
                }
            }
        }
    })
}

/// Account statements as TSV.
impl Client {
    /// The TSV body of one account statement, unread (see [`Download`]): to save it
    /// ([`Download::save`]) or stream it elsewhere.
    pub async fn account_statement_tsv(
        &self,
        session_id: Uuid,
        account_statement_id: &str,
    ) -> Result<Download> {
        self.get_account_statement_tsv()
            .session_id(session_id)
            .account_statement_id(account_statement_id)
            .download()
            .await
    }

    /// The rows of one account statement, parsed as they arrive. The request is sent when the
    /// stream is first polled. Boxed, so it is `Unpin`, `Send` and `'static` (it holds a clone
    /// of the client), like [`Client::sessions`].
    pub fn account_statement_rows(
        &self,
        session_id: Uuid,
        account_statement_id: &str,
    ) -> BoxStream<'static, Result<StatementRow>> {
        let client = self.clone();
        let account_statement_id = account_statement_id.to_string();
        stream::once(async move {
            client
                .account_statement_tsv(session_id, &account_statement_id)
                .await
        })
        .map_ok(|download| parse_statement(download.bytes_stream()))
        .try_flatten()
        .map_err(|error| error.with_operation(operation_id()))
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(chunks: Vec<&'static [u8]>) -> Vec<Result<StatementRow>> {
        let body = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c))));
        futures::executor::block_on(parse_statement(body).collect())
    }

    #[test]
    fn rows_split_across_chunks_at_any_byte() {
        let text: &'static [u8] = b"\xef\xbb\xbfDate\tAmount\tText\r\n2026-01-02\t-12.50\tCoffee\r\n2026-01-03\t100\t\"Salary\tJan\"\r\n";
        for size in 1..text.len() {
            let chunks: Vec<&'static [u8]> = text.chunks(size).collect();
            let rows: Vec<StatementRow> = rows_of(chunks).into_iter().map(|r| r.unwrap()).collect();
            assert_eq!(rows.len(), 2, "chunk size {size}");
            assert_eq!(
                rows[0].columns(),
                ["Date", "Amount", "Text"],
                "chunk size {size}"
            );
            assert_eq!(rows[0].get("Amount"), Some("-12.50"));
            assert_eq!(rows[1].get("Text"), Some("Salary\tJan"));
            assert_eq!(rows[1].line(), 3);
        }
    }

    #[test]
    fn last_row_without_newline_and_blank_lines() {
        let rows: Vec<_> = rows_of(vec![b"a\tb\n\n1\t2\n\n3\t4"])
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].values(), ["3", "4"]);
    }

    #[test]
    fn empty_body_and_header_only_yield_nothing() {
        assert!(rows_of(vec![]).is_empty());
        assert!(rows_of(vec![b"a\tb\n"]).is_empty());
    }

    #[test]
    fn an_oversized_row_ends_the_stream() {
        let big: &'static [u8] = Box::leak(vec![b'x'; MAX_ROW_BYTES + 10].into_boxed_slice());
        let rows = rows_of(vec![b"a\n", big, b"\n1\n"]);
        assert_eq!(rows.len(), 1);
        let err = rows[0].as_ref().unwrap_err().to_string();
        assert!(
            err.contains("line 2") && err.contains("longer than"),
            "{err}"
        );
    }

    #[test]
    fn typed_accessors() {
        let rows = rows_of(vec![
            b"Date\tAmount\tWhen\n2026-01-02\t 7 \t2026-01-02T10:00:00Z\nnope\tx\t\n",
        ]);
        let good = rows[0].as_ref().unwrap();
        assert_eq!(
            good.date("Date").unwrap(),
            NaiveDate::from_ymd_opt(2026, 1, 2)
        );
        assert_eq!(
            good.date("When").unwrap(),
            NaiveDate::from_ymd_opt(2026, 1, 2)
        );
        assert_eq!(good.parse::<i64>("Amount").unwrap(), Some(7));
        assert_eq!(good.parse::<i64>("Missing").unwrap(), None);
        let bad = rows[1].as_ref().unwrap();
        assert_eq!(bad.date("When").unwrap(), None);
        let err = bad.date("Date").unwrap_err().to_string();
        assert!(err.contains("line 3, column \"Date\""), "{err}");
        let err = bad.parse::<f64>("Amount").unwrap_err().to_string();
        assert!(err.contains("not a valid f64"), "{err}");
    }
}
