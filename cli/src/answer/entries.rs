//! What reading an answer keeps: its providers' statuses and a listing's entries (each with
//! its id, or named as unusable), within the bounds below.

use std::fmt;

use creditdata_client::readiness::ProviderStatus;
use creditdata_client::session_datasets::Dataset;

/// The most one listing entry (or one provider's entry) may take in the answer: 1 MiB. The
/// service's entries are a few hundred bytes of metadata; an entry past this is refused, and
/// with it the listing (its ids cannot be trusted to be all there).
pub const MAX_ENTRY_BYTES: u64 = 1024 * 1024;

/// The longest id a listing entry may have: 256 bytes. The service's ids are UUIDs and short
/// codes; a longer one is an unusable entry ([`Unusable`]).
pub const MAX_ID_BYTES: usize = 256;

/// How many unusable entries are named one by one (the rest are counted).
pub const UNUSABLE_NAMED: usize = 20;

/// The members of an entry that name its file's extension, in the order they are tried: its
/// file name's, its MIME type's, its `type` read as a format (a source file's `XML`, `JSON`).
pub const EXTENSION_MEMBERS: [&str; 3] = ["fileName", "mimeType", "type"];

/// Which listing an answer is: the member holding its entries (`None` when the answer is the
/// list itself), each entry's id member, whether ids must be UUIDs (a source file's), and the
/// extension an entry's [`EXTENSION_MEMBERS`] name (decided while the entry is read: only the
/// extension is kept, never the members).
#[derive(Debug, Clone, Copy)]
pub struct ListingShape {
    pub member: Option<&'static str>,
    pub id: &'static str,
    pub uuid_ids: bool,
    pub extension: fn([Option<&str>; 3]) -> String,
}

impl ListingShape {
    /// `` `attachments` `` or `the list`, as an error names what it expected.
    pub(super) fn what(&self) -> String {
        self.member
            .map_or_else(|| "the list".to_string(), |member| format!("`{member}`"))
    }
}

/// What to read of an answer.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// The dataset the answer is, whose providers' statuses are read where the API description
    /// says they are ([`Dataset::readiness_properties`]); `None` for another answer.
    pub dataset: Option<Dataset>,
    /// The listing it is, if it is one.
    pub listing: Option<ListingShape>,
    /// The most entries taken and the most providers' statuses read.
    pub limit: usize,
    /// Whether the members nobody needs are read as a printer reads them (strings included,
    /// nesting bounded as serde_json bounds it), so that what passes can be printed whole;
    /// otherwise they are skipped unread (an export stores the bytes as they are).
    pub printable: bool,
}

/// What an answer gave: its providers' statuses and, for a listing, its entries.
#[derive(Debug, Default)]
pub struct AnswerRead {
    pub statuses: Vec<ProviderStatus>,
    pub entries: Entries,
}

/// A listing's entries: those taken (at most the limit), how many usable ones were beyond it,
/// and those whose id cannot be used.
#[derive(Debug, Default)]
pub struct Entries {
    pub taken: Vec<Entry>,
    pub beyond: u64,
    /// Entries that cannot be exported, by position (0-based) with why: the first
    /// [`UNUSABLE_NAMED`]; [`Entries::unusable_count`] counts them all.
    pub unusable: Vec<Unusable>,
    pub unusable_count: u64,
}

/// One listed file: its position in the listing, its id and the extension its entry names
/// (empty when none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub index: u64,
    pub id: String,
    pub extension: String,
}

/// An entry whose file cannot be named or fetched, and why (never its content).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unusable {
    pub index: u64,
    pub why: Why,
}

/// Why an entry is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    NotAnObject,
    NoId,
    IdNotText,
    IdEmpty,
    IdTooLong,
    IdNotUuid,
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.why {
            Why::NotAnObject => "is not an object".to_string(),
            Why::NoId => "has no id".to_string(),
            Why::IdNotText => "has an id that is not text".to_string(),
            Why::IdEmpty => "has an empty id".to_string(),
            Why::IdTooLong => format!("has an id longer than {MAX_ID_BYTES} bytes"),
            Why::IdNotUuid => "has an id that is not a UUID".to_string(),
        };
        write!(f, "entry {} {why}", self.index)
    }
}

impl Entries {
    /// `3 entries cannot be exported: entry 4 has no id, ...` for a failure's reason.
    pub fn unusable_reason(&self) -> String {
        let named: Vec<String> = self.unusable.iter().map(ToString::to_string).collect();
        let more = self.unusable_count - self.unusable.len() as u64;
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!(
            "{} listed entr{} cannot be exported (counted from 0): {}{more}; their files \
             cannot be named or fetched until the service lists them with usable ids",
            self.unusable_count,
            if self.unusable_count == 1 { "y" } else { "ies" },
            named.join(", ")
        )
    }

    pub(super) fn unusable(&mut self, index: u64, why: Why) {
        self.unusable_count += 1;
        if self.unusable.len() < UNUSABLE_NAMED {
            self.unusable.push(Unusable { index, why });
        }
    }
}
