//! Which files the API description gives a session beyond its record and its datasets, and what
//! each is called: derived from the generated metadata, so that an operation a release adds is
//! exported the day the client is generated, with no edit here.
//!
//! - The session's own files: every `GET` with an answer below the session that takes only the
//!   session's id and is not a dataset (the PDF report, all transactions as Excel).
//! - Each entry a listing lists: every operation that takes that entry, as the description's
//!   links say ([`Dataset::listing`]), fetched with the session's id and the entry's id
//!   ([`creditdata_client::Client::operation_stream`]); and each entry a listing inside such an
//!   answer lists, every operation below that answer's path taking one more id.
//!
//! Naming: a file's key is its operation's id and the ids it took (`GetTaxReturnDocument:T1`);
//! its path is the listing's directory, the entry's safe id, the literal segments its operation's
//! path has after the entry's id (`-document`) and an extension: `.json` for a JSON answer, the
//! format a literal segment names (`excel`: `.xlsx`), else the one the entry names (its file
//! name's, its MIME type's). A session file is named by its path's segments below the session the
//! same way (`pdf-report` is `pdf-report.pdf`).
//!
//! The operations the export knew before it derived its files keep the names their files had
//! ([`EARLIER`]), and with them what the generated metadata does not carry for them: that the
//! images of an identity verification are a listing of their own (member `images`), that a source
//! file's content comes Base64 inside JSON and is stored decoded, and that source files' ids are
//! UUIDs.

use creditdata_client::operation::{OperationMeta, ResponseKind};
use creditdata_client::operations;
use creditdata_client::session_datasets::Dataset;

use super::manifest::SkippedFile;

/// How a file's bytes are obtained and kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// Streamed to its file as the service sent it (a document, an image, a spreadsheet).
    AsSent,
    /// A JSON answer, streamed to its file within the client's limit on an answer and read back
    /// (a file that does not read as JSON is refused).
    Json,
    /// A JSON answer that lists entries of its own, streamed within `--max-listing-bytes` and
    /// read back entry by entry.
    Listing(ListingOf),
    /// A source file's content: Base64 inside JSON, decoded and checked, held whole while it is
    /// (one at a time across the export: `Context::held`).
    Decoded,
}

/// Where an answer lists entries, and what each entry leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingOf {
    /// The member holding the entries; `None` when the answer is the list.
    pub member: Option<&'static str>,
    /// Each entry's id member.
    pub id: &'static str,
    /// Whether an entry's id must be a UUID (an id that is not is unusable, said by position).
    pub uuid_ids: bool,
    /// The operations taking one entry (the ids of the answer's own path, then the entry's),
    /// the operations the export named before first.
    pub entry_operations: Vec<&'static OperationMeta>,
}

/// Where the file of an operation the export named before it derived its names goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A session file, at this path.
    Session(&'static str),
    /// An entry's file: `DIR/ID.EXT` (`None`: the listing's own directory); the extension given,
    /// else the one the entry names.
    Entry {
        dir: Option<&'static str>,
        extension: Option<&'static str>,
    },
    /// An entry's answer that is a listing of its own: `DIR/ID/NAME`, with the entry's files in
    /// `DIR/ID/`.
    EntryListing {
        dir: &'static str,
        name: &'static str,
        member: Option<&'static str>,
        id: &'static str,
    },
}

/// An operation the export named before it derived its files.
#[derive(Debug, Clone, Copy)]
pub struct Earlier {
    /// Its operationId.
    pub operation: &'static str,
    /// Its files' key, before the ids (`attachment` in `attachment:ID`).
    pub key: &'static str,
    pub place: Place,
    /// Its answer is a source file's content, stored decoded.
    pub decoded: bool,
    /// The ids of its entries are UUIDs.
    pub uuid_ids: bool,
}

/// The operations the export knew before it derived its files, with the names their files have
/// in every manifest written since (a resumed export keeps them without a fetch) and what the
/// generated metadata does not say of them. An operation not here is named by the rule; an
/// operation here that a release removes is simply not met.
pub const EARLIER: &[Earlier] = &[
    earlier("GetPdfReport", "report", Place::Session("report.pdf")),
    earlier(
        "GetAccountStatementTransactionsExcel",
        "transactions-excel",
        Place::Session("transactions.xlsx"),
    ),
    earlier(
        "GetAccountStatementExcel",
        "statement-excel",
        entry_in("statements", Some(".xlsx")),
    ),
    earlier(
        "GetAccountStatementTsv",
        "statement-tsv",
        entry_in("statements", Some(".tsv")),
    ),
    earlier(
        "GetAttachmentContent",
        "attachment",
        entry_in("attachments", None),
    ),
    earlier(
        "GetIdentityVerificationImages",
        "identity-images",
        Place::EntryListing {
            dir: "identity",
            name: "images.json",
            member: Some("images"),
            id: "id",
        },
    ),
    earlier(
        "GetIdentityVerificationImageContent",
        "image",
        Place::Entry {
            dir: None,
            extension: None,
        },
    ),
    Earlier {
        decoded: true,
        uuid_ids: true,
        ..earlier(
            "GetSourceFileContent",
            "source-file",
            entry_in("source-files", None),
        )
    },
];

const fn earlier(operation: &'static str, key: &'static str, place: Place) -> Earlier {
    Earlier {
        operation,
        key,
        place,
        decoded: false,
        uuid_ids: false,
    }
}

const fn entry_in(dir: &'static str, extension: Option<&'static str>) -> Place {
    Place::Entry {
        dir: Some(dir),
        extension,
    }
}

/// The earlier name of `operation`, if it had one.
pub fn earlier_of(operation: &OperationMeta) -> Option<&'static Earlier> {
    EARLIER
        .iter()
        .find(|earlier| earlier.operation == operation.id)
}

/// The words a path segment may use for a format, and the extension of each. Vocabulary of file
/// formats, not of the description: which operation answers what is read from its path.
const FORMAT_WORDS: &[(&str, &str)] = &[
    ("pdf", ".pdf"),
    ("excel", ".xlsx"),
    ("xlsx", ".xlsx"),
    ("tsv", ".tsv"),
    ("csv", ".csv"),
    ("xml", ".xml"),
    ("json", ".json"),
    ("zip", ".zip"),
];

/// The extension a literal path segment names (`excel`, `pdf-report`), if any.
fn format_of(segment: &str) -> Option<&'static str> {
    segment.split('-').rev().find_map(|word| {
        FORMAT_WORDS
            .iter()
            .find(|(name, _)| word.eq_ignore_ascii_case(name))
            .map(|(_, extension)| *extension)
    })
}

fn is_parameter(segment: &str) -> bool {
    segment.len() > 2 && segment.starts_with('{') && segment.ends_with('}')
}

/// How many values `path` takes.
pub fn parameters(path: &str) -> usize {
    path.split('/').filter(|s| is_parameter(s)).count()
}

/// The session's path (`/v1/sessions/{sessionId}`): every dataset's path is it plus literal
/// segments (what makes it a dataset: `codegen/src/datasets.rs`).
fn session_path() -> Option<&'static str> {
    let path = Dataset::ALL.first()?.operation().path;
    let end = path.find('}')?;
    Some(&path[..=end])
}

/// The literal segments of `path` below `prefix` (the session's, or an entry's path).
fn literals_below(path: &str, prefix_segments: usize) -> Vec<&str> {
    path.split('/')
        .skip(prefix_segments)
        .filter(|s| !s.is_empty() && !is_parameter(s))
        .collect()
}

/// How an operation's answer is kept when nothing earlier says otherwise.
fn kept_by_kind(operation: &OperationMeta) -> Kept {
    match operation.response {
        ResponseKind::Json => Kept::Json,
        // An untyped answer may be empty: stored as it came.
        _ => Kept::AsSent,
    }
}

/// One of the session's own files.
#[derive(Debug, Clone)]
pub struct SessionFile {
    pub key: String,
    pub path: String,
    pub operation: &'static OperationMeta,
    pub kept: Kept,
}

/// The session's own files: every `GET` with an answer below the session that takes only its id
/// and is not a dataset, in the description's order. A name made by the rule that another file
/// or directory of the session has (compared as a case-insensitive file system would) takes its
/// operation's id as well (`summary-GetSummaryPdf.pdf`).
pub fn session_files() -> Vec<SessionFile> {
    let Some(session) = session_path() else {
        return Vec::new();
    };
    let depth = session.split('/').count();
    let below: Vec<&'static OperationMeta> = operations::ALL
        .iter()
        .filter(|operation| {
            operation.method == "GET"
                && operation.response != ResponseKind::Empty
                && operation.path.len() > session.len()
                && operation.path.starts_with(session)
                && operation.path[session.len()..].starts_with('/')
                && parameters(operation.path) == 1
                && !Dataset::ALL
                    .iter()
                    .any(|dataset| dataset.operation_id() == operation.id)
        })
        .collect();
    // What the session's tree has besides: its record, its manifest, the directories of its
    // datasets and of its listings' entries, and the names kept from before.
    let mut taken: std::collections::HashSet<String> =
        ["session.json", "manifest.json", "datasets"]
            .into_iter()
            .map(str::to_string)
            .collect();
    for dataset in Dataset::ALL {
        if let Some(listing) = listing_of_dataset(dataset) {
            taken.insert(entry_dir(dataset, &listing).to_lowercase());
        }
    }
    for operation in &below {
        if let Some(Place::Session(path)) = earlier_of(operation).map(|earlier| earlier.place) {
            taken.insert(path.to_lowercase());
        }
    }
    below
        .into_iter()
        .map(|operation| {
            let kept = kept_by_kind(operation);
            if let Some(Earlier {
                key,
                place: Place::Session(path),
                ..
            }) = earlier_of(operation)
            {
                return SessionFile {
                    key: key.to_string(),
                    path: path.to_string(),
                    operation,
                    kept,
                };
            }
            let mut segments = literals_below(operation.path, depth);
            let extension = match kept {
                Kept::Json => Some(".json"),
                _ => segments.last().and_then(|last| format_of(last)),
            };
            // `.../report/pdf` is `report.pdf`; `.../pdf-report` is `pdf-report.pdf`.
            if segments.len() > 1
                && segments
                    .last()
                    .is_some_and(|last| FORMAT_WORDS.iter().any(|(word, _)| word == last))
            {
                segments.pop();
            }
            let stem = super::store::name_for_id(&segments.join("-"));
            let extension = extension.unwrap_or_default();
            let mut path = format!("{stem}{extension}");
            if !taken.insert(path.to_lowercase()) {
                path = format!("{stem}-{}{extension}", operation.id);
                taken.insert(path.to_lowercase());
            }
            SessionFile {
                key: operation.id.to_string(),
                path,
                operation,
                kept,
            }
        })
        .collect()
}

/// The listing `dataset`'s answer is, with its entry operations (the earlier-named first), if
/// it is one.
pub fn listing_of_dataset(dataset: Dataset) -> Option<ListingOf> {
    let listing = dataset.listing()?;
    let mut entry_operations: Vec<&'static OperationMeta> = listing.entry_operations.to_vec();
    // Stable: the earlier-named first, so that their files keep their names whatever a release
    // adds beside them.
    entry_operations.sort_by_key(|operation| earlier_of(operation).is_none());
    let uuid_ids = entry_operations
        .iter()
        .any(|operation| earlier_of(operation).is_some_and(|earlier| earlier.uuid_ids));
    Some(ListingOf {
        member: listing.member,
        id: listing.id,
        uuid_ids,
        entry_operations,
    })
}

/// The directory of `dataset`'s entries' files: the one an earlier-named operation of its listing
/// used (`statements`), else the dataset's name (`tax-returns`).
pub fn entry_dir(dataset: Dataset, listing: &ListingOf) -> String {
    listing
        .entry_operations
        .iter()
        .find_map(|operation| match earlier_of(operation)?.place {
            Place::Entry { dir: Some(dir), .. } | Place::EntryListing { dir, .. } => Some(dir),
            _ => None,
        })
        .map_or_else(|| dataset.name().to_string(), str::to_string)
}

/// How an entry operation's answer is kept: a listing of its own (with the operations below its
/// path that take one more id), decoded, or by its kind.
pub fn kept_of_entry(operation: &'static OperationMeta) -> Kept {
    match earlier_of(operation) {
        Some(Earlier {
            place: Place::EntryListing { member, id, .. },
            ..
        }) => Kept::Listing(ListingOf {
            member: *member,
            id,
            uuid_ids: false,
            entry_operations: operations_below(operation),
        }),
        Some(earlier) if earlier.decoded => Kept::Decoded,
        _ => kept_by_kind(operation),
    }
}

/// The `GET`s with an answer whose path is `operation`'s plus one more parameter (and any
/// literal segments after it): what takes one entry of `operation`'s answer. The earlier-named
/// first.
fn operations_below(operation: &OperationMeta) -> Vec<&'static OperationMeta> {
    let prefix = format!("{}/", operation.path);
    let wanted = parameters(operation.path) + 1;
    let mut below: Vec<&'static OperationMeta> = operations::ALL
        .iter()
        .filter(|other| {
            other.method == "GET"
                && other.response != ResponseKind::Empty
                && other
                    .path
                    .strip_prefix(&prefix)
                    .and_then(|rest| rest.split('/').next())
                    .is_some_and(is_parameter)
                && parameters(other.path) == wanted
        })
        .collect();
    below.sort_by_key(|operation| earlier_of(operation).is_none());
    below
}

/// One entry operation's file: its key, and how its path is made (the listing's directory
/// and the entry's id are known only when the entry is read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryName {
    pub key: String,
    pub naming: Naming,
}

/// How an entry's file is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Naming {
    /// `DIR/ID{suffix}{extension}`; `dir` `None`: the listing's own directory; `extension`
    /// `None`: the one the entry names.
    File {
        dir: Option<String>,
        suffix: String,
        extension: Option<String>,
    },
    /// `DIR/ID/NAME` (a listing of its own).
    Listing { dir: String, name: String },
}

/// The key and naming of `operation`'s file for an entry with `ids` (the listing's own ids,
/// then the entry's).
pub fn entry_name(operation: &'static OperationMeta, ids: &[String]) -> EntryName {
    let joined = ids.join(":");
    if let Some(earlier) = earlier_of(operation) {
        let naming = match earlier.place {
            Place::EntryListing { dir, name, .. } => Naming::Listing {
                dir: dir.to_string(),
                name: name.to_string(),
            },
            Place::Entry { dir, extension } => Naming::File {
                dir: dir.map(str::to_string),
                suffix: String::new(),
                extension: extension.map(str::to_string),
            },
            // A session file's place for an entry operation: named by the rule below.
            Place::Session(_) => rule_naming(operation),
        };
        return EntryName {
            key: format!("{}:{joined}", earlier.key),
            naming,
        };
    }
    EntryName {
        key: format!("{}:{joined}", operation.id),
        naming: rule_naming(operation),
    }
}

/// `DIR/ID-LITERALS.EXT` in the listing's directory: the literal segments after the entry's
/// id (none: the entry itself), `.json` for JSON, else the format a segment names, else the
/// entry's.
fn rule_naming(operation: &OperationMeta) -> Naming {
    let segments: Vec<&str> = operation.path.split('/').collect();
    let last_parameter = segments.iter().rposition(|s| is_parameter(s));
    let literals: Vec<&str> = last_parameter
        .map(|at| segments[at + 1..].to_vec())
        .unwrap_or_default();
    let extension = match kept_by_kind(operation) {
        Kept::Json => Some(".json".to_string()),
        _ => literals
            .iter()
            .rev()
            .find_map(|segment| format_of(segment))
            .map(str::to_string),
    };
    let suffix = if literals.is_empty() {
        String::new()
    } else {
        format!("-{}", literals.join("-"))
    };
    Naming::File {
        dir: None,
        suffix,
        extension,
    }
}

/// The entry operations of the exported datasets' listings that the export cannot fill (their
/// path takes values besides the session's id and the entry's), each once, in every manifest's
/// `skipped`: named, with where it is, rather than left out unsaid.
pub fn entry_operations_not_exported(datasets: impl Iterator<Item = Dataset>) -> Vec<SkippedFile> {
    let mut seen = std::collections::HashSet::new();
    let mut skipped = Vec::new();
    for dataset in datasets {
        let Some(listing) = dataset.listing() else {
            continue;
        };
        for operation in listing.entry_operations {
            if parameters(operation.path) == 2 || !seen.insert(operation.id) {
                continue;
            }
            skipped.push(SkippedFile {
                key: format!("operation:{}", operation.id),
                reason: format!(
                    "each entry of {} leads to {} ({} {}), whose path takes {} values where the \
                     export has two (the session's id and the entry's); read it with the client \
                     (Client::{})",
                    dataset.name(),
                    operation.id,
                    operation.method,
                    operation.path,
                    parameters(operation.path),
                    operation.rust_name
                ),
            });
        }
    }
    skipped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &'static str, path: &'static str, response: ResponseKind) -> OperationMeta {
        OperationMeta {
            id,
            rust_name: "x",
            method: "GET",
            path,
            summary: "",
            idempotent: true,
            deprecated: false,
            response,
        }
    }

    #[test]
    fn an_operation_no_one_named_is_named_by_its_path_and_answer() {
        let leak = |m: OperationMeta| -> &'static OperationMeta { Box::leak(Box::new(m)) };
        let document = leak(meta(
            "GetTaxReturnDocument",
            "/v1/sessions/{sessionId}/tax-returns/{taxReturnId}/document",
            ResponseKind::Stream,
        ));
        let entry = leak(meta(
            "GetTaxReturn",
            "/v1/sessions/{sessionId}/tax-returns/{taxReturnId}",
            ResponseKind::Json,
        ));
        let excel = leak(meta(
            "GetThingExcel",
            "/v1/sessions/{sessionId}/things/{thingId}/excel",
            ResponseKind::Stream,
        ));
        let ids = ["T1".to_string()];
        assert_eq!(
            entry_name(document, &ids),
            EntryName {
                key: "GetTaxReturnDocument:T1".into(),
                naming: Naming::File {
                    dir: None,
                    suffix: "-document".into(),
                    extension: None
                }
            }
        );
        assert_eq!(
            entry_name(entry, &ids).naming,
            Naming::File {
                dir: None,
                suffix: String::new(),
                extension: Some(".json".into())
            }
        );
        assert_eq!(
            entry_name(excel, &ids).naming,
            Naming::File {
                dir: None,
                suffix: "-excel".into(),
                extension: Some(".xlsx".into())
            }
        );
    }

    #[test]
    fn the_session_files_are_every_get_below_the_session_that_is_not_a_dataset() {
        let files = session_files();
        for file in &files {
            assert_eq!(
                parameters(file.operation.path),
                1,
                "{}",
                file.operation.path
            );
            assert!(
                Dataset::ALL
                    .iter()
                    .all(|dataset| dataset.operation_id() != file.operation.id)
            );
            assert!(
                !file.path.is_empty() && !file.path.contains('/'),
                "{}",
                file.path
            );
        }
        let paths: std::collections::HashSet<&str> =
            files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(paths.len(), files.len(), "one name each: {files:?}");
    }

    #[test]
    fn a_segment_names_its_format() {
        assert_eq!(format_of("excel"), Some(".xlsx"));
        assert_eq!(format_of("pdf-report"), Some(".pdf"));
        assert_eq!(format_of("document"), None);
    }
}
