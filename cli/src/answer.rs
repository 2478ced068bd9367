//! A JSON answer as the service's bytes: taken as it arrives into an unnamed temporary file
//! ([`spool`]), read once by a streaming visitor that keeps only what a command needs (its
//! providers' statuses, a listing's entries: [`read`]), and printed or stored as those bytes,
//! never decoded into typed values or `serde_json::Value`s to be serialized again.
//!
//! What memory holds while an answer is read is bounded by what is kept, not by the answer:
//! members nobody needs are skipped (an export skips them unread, `serde::de::IgnoredAny`; a
//! command that prints the answer reads them as the printer will, so that a document it cannot
//! print is refused before anything is printed), one listing entry at a time, each at most
//! [`MAX_ENTRY_BYTES`] with an id of at most [`MAX_ID_BYTES`], at most `limit` entries and
//! statuses. An entry whose id cannot be used is counted and named by its position
//! ([`Entries::unusable`]), never dropped without a word. Errors say where the answer stopped
//! being readable, never what it holds (it is personal data).

use std::cell::Cell;
use std::fmt;
use std::io::{self, Read, Seek, Write};
use std::rc::Rc;

use creditdata_client::Error;
use creditdata_client::download::BodyStream;
use creditdata_client::readiness::{ProviderListProperties, ProviderStatus};
use creditdata_client::session_datasets::Dataset;
use futures::StreamExt;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The most one listing entry (or one provider's entry) may take in the answer: 1 MiB. The
/// service's entries are a few hundred bytes of metadata; an entry past this is refused, and
/// with it the listing (its ids cannot be trusted to be all there).
pub const MAX_ENTRY_BYTES: u64 = 1024 * 1024;

/// The longest id a listing entry may have: 256 bytes. The service's ids are UUIDs and short
/// codes; a longer one is an unusable entry ([`Unusable`]).
pub const MAX_ID_BYTES: usize = 256;

/// How many unusable entries are named one by one (the rest are counted).
pub const UNUSABLE_NAMED: usize = 20;

/// An answer's bytes in an unnamed temporary file (removed by the system when closed, or when
/// the process ends however it ends), rewound, and how many there are.
pub struct Spooled {
    pub file: std::fs::File,
    pub bytes: u64,
}

/// Why an answer could not be taken.
#[derive(Debug)]
pub enum SpoolError {
    /// The service or the network failed (the client's error, with its status).
    Client(Error),
    /// More than the bound: the limit.
    TooLarge(u64),
    /// The temporary file could not be written.
    Local(String),
}

/// Writes `body` to an unnamed temporary file, at most `max_bytes` of it, and rewinds it:
/// memory holds one chunk at a time, whatever the answer's size.
pub async fn spool(mut body: BodyStream, max_bytes: u64) -> Result<Spooled, SpoolError> {
    let local = |e: io::Error| SpoolError::Local(format!("a temporary file: {e}"));
    let mut file = tempfile::tempfile().map_err(local)?;
    let mut bytes: u64 = 0;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(SpoolError::Client)?;
        bytes += chunk.len() as u64;
        if bytes > max_bytes {
            return Err(SpoolError::TooLarge(max_bytes));
        }
        file.write_all(&chunk).map_err(local)?;
    }
    file.rewind().map_err(local)?;
    Ok(Spooled { file, bytes })
}

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
    fn what(&self) -> String {
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

    fn unusable(&mut self, index: u64, why: Why) {
        self.unusable_count += 1;
        if self.unusable.len() < UNUSABLE_NAMED {
            self.unusable.push(Unusable { index, why });
        }
    }
}

/// How a refusal of too many providers starts.
const TOO_MANY_PROVIDERS: &str = "the answer names more than";

/// Reads an answer from `reader` (a file, never memory it fills) as `reading` says, checking
/// that it is one JSON document. An error says where and what kind, never what it holds.
pub fn read(reader: impl Read, reading: Reading) -> Result<AnswerRead, String> {
    let budget = Budget::default();
    let counted = Counted {
        inner: io::BufReader::with_capacity(64 * 1024, reader),
        budget: budget.clone(),
    };
    let mut deserializer = serde_json::Deserializer::from_reader(counted);
    let visitor = AnswerVisitor {
        reading,
        budget: budget.clone(),
    };
    serde::Deserializer::deserialize_any(&mut deserializer, visitor)
        .and_then(|read| deserializer.end().map(|()| read))
        .map_err(|error| where_it_failed(&error, &budget, reading))
}

/// A JSON error's kind and place, never its text (which may quote the data).
fn where_it_failed(error: &serde_json::Error, budget: &Budget, reading: Reading) -> String {
    use serde_json::error::Category;
    if let Some(index) = budget.exceeded.get() {
        let what = reading
            .listing
            .map_or_else(|| "a provider list".into(), |l| l.what());
        return format!(
            "entry {index} of {what} is larger than {} KiB, the most one entry may take: the \
             answer was not read (line {}, column {})",
            MAX_ENTRY_BYTES / 1024,
            error.line(),
            error.column()
        );
    }
    let text = error.to_string();
    if text.starts_with(TOO_MANY_PROVIDERS) {
        // The visitor's own refusal carries no data: say it.
        return text;
    }
    let kind = match error.classify() {
        Category::Io => "cannot be read",
        Category::Eof => "ends early",
        Category::Data if reading.listing.is_some() => "is not shaped as a listing",
        Category::Data => "is not shaped as expected",
        Category::Syntax if text.starts_with("recursion limit") => "is nested too deeply",
        Category::Syntax => "is not JSON",
    };
    format!(
        "the answer {kind} (line {}, column {})",
        error.line(),
        error.column()
    )
}

/// Where the reader is, and the entry being read: an entry that grows past
/// [`MAX_ENTRY_BYTES`] makes the reader fail, so no member of it is ever held past that.
#[derive(Clone, Default)]
struct Budget {
    position: Rc<Cell<u64>>,
    /// The entry being read: its position in its list and where it started.
    entry: Rc<Cell<Option<(u64, u64)>>>,
    exceeded: Rc<Cell<Option<u64>>>,
}

impl Budget {
    /// Runs `read` as entry `index`, within the budget.
    fn entry<T>(&self, index: u64, read: impl FnOnce() -> T) -> T {
        self.entry.set(Some((index, self.position.get())));
        let value = read();
        self.entry.set(None);
        value
    }
}

/// The reader under serde_json, counting what it gives (serde_json reads a byte at a time: it
/// sits above the buffer).
struct Counted<R> {
    inner: R,
    budget: Budget,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        let position = self.budget.position.get() + read as u64;
        self.budget.position.set(position);
        if let Some((index, start)) = self.budget.entry.get()
            && position - start > MAX_ENTRY_BYTES
        {
            self.budget.exceeded.set(Some(index));
            return Err(io::Error::other("a listing entry is too large"));
        }
        Ok(read)
    }
}

struct AnswerVisitor {
    reading: Reading,
    budget: Budget,
}

impl<'de> Visitor<'de> for AnswerVisitor {
    type Value = AnswerRead;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        match self.reading.listing {
            Some(listing) => write!(formatter, "a listing with {}", listing.what()),
            None => formatter.write_str("a JSON document"),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnswerRead, A::Error> {
        let Reading {
            dataset,
            listing,
            limit,
            printable,
        } = self.reading;
        let mut read = AnswerRead::default();
        let readiness = dataset.map(Dataset::readiness_properties);
        while let Some(key) = map.next_key::<String>()? {
            let provider_list = readiness
                .and_then(|r| r.provider_lists.iter().find(|list| list.list == key))
                .copied();
            let dataset_status =
                readiness.is_some_and(|r| r.dataset_statuses.iter().any(|status| *status == key));
            if let Some(listing) = listing.filter(|l| l.member == Some(key.as_str())) {
                read.entries = map.next_value_seed(EntriesSeed {
                    listing,
                    limit,
                    printable,
                    budget: self.budget.clone(),
                })?;
            } else if let (Some(list), Some(dataset)) = (provider_list, dataset) {
                let seed = StatusesSeed {
                    dataset,
                    list,
                    room: limit.saturating_sub(read.statuses.len()),
                    printable,
                    budget: self.budget.clone(),
                };
                read.statuses.extend(map.next_value_seed(seed)?);
            } else if let (true, Some(dataset)) = (dataset_status, dataset) {
                let [status] = map.next_value_seed(MembersSeed {
                    wanted: ["status"],
                    printable,
                })?;
                if let Some(status) = status {
                    read.statuses
                        .push(ProviderStatus::dataset_level(dataset, &status));
                }
            } else {
                map.next_value_seed(Skipped::new(printable))?;
            }
        }
        Ok(read)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<AnswerRead, A::Error> {
        match self.reading.listing.filter(|l| l.member.is_none()) {
            Some(listing) => Ok(AnswerRead {
                entries: EntriesSeed {
                    listing,
                    limit: self.reading.limit,
                    printable: self.reading.printable,
                    budget: self.budget,
                }
                .visit_seq(seq)?,
                statuses: Vec::new(),
            }),
            None => {
                SkipVisitor(self.reading.printable).visit_seq(seq)?;
                Ok(AnswerRead::default())
            }
        }
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<AnswerRead, E> {
        self.not_a_listing()
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<AnswerRead, E> {
        self.not_a_listing()
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<AnswerRead, E> {
        self.not_a_listing()
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<AnswerRead, E> {
        self.not_a_listing()
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<AnswerRead, E> {
        self.not_a_listing()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<AnswerRead, E> {
        self.not_a_listing()
    }
}

impl AnswerVisitor {
    /// A scalar answer: a listing it is not (nothing of it is quoted); any other answer is
    /// taken as it is.
    fn not_a_listing<E: serde::de::Error>(self) -> Result<AnswerRead, E> {
        match self.reading.listing {
            Some(listing) => Err(E::custom(format_args!(
                "a listing with {} expected",
                listing.what()
            ))),
            None => Ok(AnswerRead::default()),
        }
    }
}

/// A value nobody needs: skipped unread ([`IgnoredAny`]), or, when the answer is to be
/// printed, read as the printer reads it (strings included; serde_json's nesting bound applies
/// the same way), and dropped.
#[derive(Clone, Copy)]
struct Skipped {
    printable: bool,
}

impl Skipped {
    fn new(printable: bool) -> Skipped {
        Skipped { printable }
    }
}

impl<'de> DeserializeSeed<'de> for Skipped {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.printable {
            deserializer.deserialize_any(SkipVisitor(true))
        } else {
            deserializer.deserialize_ignored_any(IgnoredAny).map(drop)
        }
    }
}

/// Reads and drops any value, every level through `deserialize_any` (as a printer would).
struct SkipVisitor(bool);

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Skipped::new(self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Skipped::new(self.0))?.is_some() {
            map.next_value_seed(Skipped::new(self.0))?;
        }
        Ok(())
    }
}

/// A listing's entries, one at a time, each within [`MAX_ENTRY_BYTES`].
struct EntriesSeed {
    listing: ListingShape,
    limit: usize,
    printable: bool,
    budget: Budget,
}

impl<'de> DeserializeSeed<'de> for EntriesSeed {
    type Value = Entries;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Entries, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EntriesSeed {
    type Value = Entries;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "a list of entries in {}", self.listing.what())
    }

    fn visit_unit<E>(self) -> Result<Entries, E> {
        Ok(Entries::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entries, A::Error> {
        let mut entries = Entries::default();
        let mut index = 0u64;
        loop {
            let seed = EntrySeed {
                listing: self.listing,
                printable: self.printable,
            };
            let Some(entry) = self.budget.entry(index, || seq.next_element_seed(seed))? else {
                break;
            };
            match entry {
                Err(why) => entries.unusable(index, why),
                Ok(_) if entries.taken.len() >= self.limit => entries.beyond += 1,
                Ok((id, extension)) => entries.taken.push(Entry {
                    index,
                    id,
                    extension,
                }),
            }
            index += 1;
        }
        Ok(entries)
    }
}

/// One listing entry: its id and the extension it names, or why it cannot be used.
struct EntrySeed {
    listing: ListingShape,
    printable: bool,
}

/// The members of an entry that name its file's extension, in the order they are tried: its
/// file name's, its MIME type's, its `type` read as a format (a source file's `XML`, `JSON`).
pub const EXTENSION_MEMBERS: [&str; 3] = ["fileName", "mimeType", "type"];

impl<'de> DeserializeSeed<'de> for EntrySeed {
    type Value = Result<(String, String), Why>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl EntrySeed {
    fn not_an_object<E>(self) -> Result<Result<(String, String), Why>, E> {
        Ok(Err(Why::NotAnObject))
    }
}

impl<'de> Visitor<'de> for EntrySeed {
    type Value = Result<(String, String), Why>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a listing entry")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        self.not_an_object()
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        self.not_an_object()
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        self.not_an_object()
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        self.not_an_object()
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        self.not_an_object()
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        self.not_an_object()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        SkipVisitor(self.printable).visit_seq(seq)?;
        self.not_an_object()
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut id: Option<Result<String, Why>> = None;
        let mut named: [Option<String>; 3] = Default::default();
        while let Some(key) = map.next_key::<String>()? {
            if key == self.listing.id {
                id = Some(map.next_value_seed(IdSeed(self.printable))?);
            } else if let Some(at) = EXTENSION_MEMBERS.iter().position(|m| *m == key) {
                named[at] = map.next_value_seed(TextSeed(self.printable))?;
            } else {
                map.next_value_seed(Skipped::new(self.printable))?;
            }
        }
        let id = match id {
            None => return Ok(Err(Why::NoId)),
            Some(Err(why)) => return Ok(Err(why)),
            Some(Ok(id)) => id,
        };
        if self.listing.uuid_ids && id.parse::<uuid::Uuid>().is_err() {
            return Ok(Err(Why::IdNotUuid));
        }
        let extension = (self.listing.extension)(named.each_ref().map(Option::as_deref));
        Ok(Ok((id, extension)))
    }
}

/// An entry's id: text of at most [`MAX_ID_BYTES`], not empty.
struct IdSeed(bool);

impl<'de> DeserializeSeed<'de> for IdSeed {
    type Value = Result<String, Why>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdSeed {
    type Value = Result<String, Why>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an id")
    }

    fn visit_str<E>(self, id: &str) -> Result<Self::Value, E> {
        Ok(if id.is_empty() {
            Err(Why::IdEmpty)
        } else if id.len() > MAX_ID_BYTES {
            Err(Why::IdTooLong)
        } else {
            Ok(id.to_string())
        })
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Err(Why::IdNotText))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Err(Why::IdNotText))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Err(Why::IdNotText))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Err(Why::IdNotText))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Err(Why::IdNotText))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        SkipVisitor(self.0).visit_seq(seq)?;
        Ok(Err(Why::IdNotText))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        SkipVisitor(self.0).visit_map(map)?;
        Ok(Err(Why::IdNotText))
    }
}

/// A member read as text when it is text (`None` otherwise: `null`, a number...).
struct TextSeed(bool);

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = Option<String>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Option<String>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TextSeed {
    type Value = Option<String>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("text")
    }

    fn visit_str<E>(self, text: &str) -> Result<Option<String>, E> {
        Ok(Some(text.to_string()))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Option<String>, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<String>, A::Error> {
        SkipVisitor(self.0).visit_seq(seq)?;
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<String>, A::Error> {
        SkipVisitor(self.0).visit_map(map)?;
        Ok(None)
    }
}

/// An object's members named in `wanted`, as text, in that order; everything else skipped.
/// Anything but an object gives none.
struct MembersSeed<const N: usize> {
    wanted: [&'static str; N],
    printable: bool,
}

impl<'de, const N: usize> DeserializeSeed<'de> for MembersSeed<N> {
    type Value = [Option<String>; N];

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, const N: usize> Visitor<'de> for MembersSeed<N> {
    type Value = [Option<String>; N];

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = [const { None }; N];
        while let Some(key) = map.next_key::<String>()? {
            match self.wanted.iter().position(|w| *w == key) {
                Some(at) => found[at] = map.next_value_seed(TextSeed(self.printable))?,
                None => map.next_value_seed(Skipped::new(self.printable))?,
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        SkipVisitor(self.printable).visit_seq(seq)?;
        Ok([const { None }; N])
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok([const { None }; N])
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok([const { None }; N])
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok([const { None }; N])
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok([const { None }; N])
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok([const { None }; N])
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok([const { None }; N])
    }
}

/// A provider list of a dataset's answer, read entry by entry (each within
/// [`MAX_ENTRY_BYTES`]); more entries than `room` is an error (a real session has a handful of
/// providers: a longer list would grow memory).
struct StatusesSeed {
    dataset: Dataset,
    list: ProviderListProperties,
    room: usize,
    printable: bool,
    budget: Budget,
}

impl<'de> DeserializeSeed<'de> for StatusesSeed {
    type Value = Vec<ProviderStatus>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Vec<ProviderStatus>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StatusesSeed {
    type Value = Vec<ProviderStatus>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "a list of providers in `{}`", self.list.list)
    }

    fn visit_unit<E>(self) -> Result<Vec<ProviderStatus>, E> {
        Ok(Vec::new())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<ProviderStatus>, A::Error> {
        // No country member: the empty name, whose value is dropped below.
        let wanted = [
            self.list.source_id,
            self.list.country_code.unwrap_or_default(),
            "status",
        ];
        let mut statuses = Vec::new();
        let mut index = 0u64;
        loop {
            let seed = MembersSeed {
                wanted,
                printable: self.printable,
            };
            let Some(members) = self.budget.entry(index, || seq.next_element_seed(seed))? else {
                break;
            };
            index += 1;
            if statuses.len() == self.room {
                return Err(serde::de::Error::custom(format!(
                    "{TOO_MANY_PROVIDERS} {} providers in `{}`",
                    self.room, self.list.list
                )));
            }
            let [source, country, status] = &members;
            let (source, country, status) =
                (source.as_deref(), country.as_deref(), status.as_deref());
            // A status missing or not text is no answer: counted as failed, never as answered.
            statuses.push(ProviderStatus::new(
                self.dataset,
                source,
                country.filter(|_| self.list.country_code.is_some()),
                status.unwrap_or_default(),
            ));
        }
        Ok(statuses)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::test_support::peak_during;

    /// About `size` bytes of an answer shaped as a hostile service would send it.
    fn hostile(shape: &str, size: usize) -> Vec<u8> {
        let mut out =
            br#"{"sources":[{"sourceId":"BUREAU","countryCode":"GBR","status":"SUCCESS"}],"#
                .to_vec();
        match shape {
            // Many small entries in a listing.
            "entries" => {
                out.extend_from_slice(br#""attachments":["#);
                let mut n = 0;
                while out.len() < size {
                    if n > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(
                        format!(r#"{{"id":"att-{n}","mimeType":"application/pdf","x":[1,2]}}"#)
                            .as_bytes(),
                    );
                    n += 1;
                }
                out.push(b']');
            }
            // One large member the description does not know.
            "unknown" => {
                out.extend_from_slice(br#""pad":[0"#);
                while out.len() < size {
                    out.extend_from_slice(b",0");
                }
                out.push(b']');
            }
            // Deep nesting, repeated (within serde_json's nesting bound of 128).
            "deep" => {
                out.extend_from_slice(br#""pad":["#);
                let (open, close) = ("[{\"a\":".repeat(60), "}]".repeat(60));
                let mut first = true;
                while out.len() < size {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    out.extend_from_slice(format!("{open}0{close}").as_bytes());
                }
                out.push(b']');
            }
            other => panic!("{other}"),
        }
        out.push(b'}');
        out
    }

    /// A dataset whose providers are listed in `sources`, read as if it listed attachments
    /// too: both kinds of what a reader keeps.
    fn attachments(limit: usize, printable: bool) -> Reading {
        let with_sources = Dataset::ALL.into_iter().find(|dataset| {
            let lists = dataset.readiness_properties().provider_lists;
            lists.iter().any(|list| list.list == "sources")
        });
        Reading {
            dataset: with_sources,
            listing: Some(ListingShape {
                member: Some("attachments"),
                id: "id",
                uuid_ids: false,
                extension: |[_, mime, _]| mime.map(|_| ".pdf".to_string()).unwrap_or_default(),
            }),
            limit,
            printable,
        }
    }

    const MIB: usize = 1024 * 1024;

    #[test]
    fn reading_an_answer_holds_what_it_keeps_never_the_answer_whatever_its_shape() {
        // 2 MiB answers; reading one holds the reader's buffer, what is kept (10 ids, one
        // status) and one entry: far below the answer, and the same for every shape.
        for shape in ["entries", "unknown", "deep"] {
            let answer = hostile(shape, 2 * MIB);
            for printable in [false, true] {
                let (result, peak) = peak_during(|| read(&answer[..], attachments(10, printable)));
                let listed = result.unwrap_or_else(|e| panic!("{shape}: {e}"));
                assert_eq!(listed.statuses.len(), 1, "{shape}");
                assert!(
                    peak < 256 * 1024,
                    "{shape} (printable {printable}): {peak} bytes held to read {} bytes",
                    answer.len()
                );
                if shape == "entries" {
                    assert_eq!(listed.entries.taken.len(), 10);
                    assert!(
                        listed.entries.beyond > 10_000,
                        "{:?}",
                        listed.entries.beyond
                    );
                }
            }
        }
    }

    #[test]
    fn printing_an_answer_holds_neither_the_answer_nor_its_values() {
        for shape in ["entries", "unknown", "deep"] {
            let answer = hostile(shape, 2 * MIB);
            let (result, peak) = peak_during(|| {
                crate::terminal::write_json_document(&mut std::io::sink(), &answer[..])
            });
            result.unwrap_or_else(|e| panic!("{shape}: {e}"));
            assert!(peak < 512 * 1024, "{shape}: {peak} bytes held to print");
            // The same document, once parsed.
            let mut printed = Vec::new();
            crate::terminal::write_json_document(&mut printed, &answer[..]).unwrap();
            let original: Value = serde_json::from_slice(&answer).unwrap();
            let shown: Value = serde_json::from_slice(&printed).unwrap();
            assert!(original == shown, "{shape}");
        }
    }

    #[test]
    fn an_entry_larger_than_the_bound_is_refused_before_it_is_held() {
        let padding = "x".repeat(4 * MIB);
        let answer = serde_json::to_vec(&json!({"attachments": [
            {"id": "a"},
            {"id": "b", "fileName": padding},
        ]}))
        .unwrap();
        drop(padding);
        for printable in [false, true] {
            let (error, peak) = peak_during(|| read(&answer[..], attachments(10, printable)));
            let error = error.unwrap_err();
            assert!(
                error.starts_with("entry 1 of `attachments` is larger than 1024 KiB"),
                "{error}"
            );
            // The entry's bound, not the 4 MiB member: the reader stops at the bound. The
            // string being read grows by doubling, and the counter sees a growth as the new
            // block before the old one is freed: up to twice the entry's bound, half of the
            // member (which, read whole, would count 4 + 2 MiB).
            let bound = 2 * MAX_ENTRY_BYTES as usize + 256 * 1024;
            assert!(peak < bound, "{peak} bytes held");
        }
    }

    #[test]
    fn every_unusable_entry_is_counted_and_named_by_position_never_quoted() {
        let long = "L".repeat(MAX_ID_BYTES + 1);
        let answer = serde_json::to_vec(&json!({"attachments": [
            {"id": "ok-1"},
            {"id": 42},
            {"id": null},
            {"fileName": "Jane Doe.pdf"},
            {"id": long},
            "Jane Doe",
            {"id": ""},
            {"id": {"nested": "Jane"}},
            {"id": "ok-2"},
        ]}))
        .unwrap();
        let listed = read(&answer[..], attachments(10, false)).unwrap();
        let taken: Vec<&str> = listed.entries.taken.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(taken, ["ok-1", "ok-2"]);
        assert_eq!(listed.entries.taken[1].index, 8);
        let why: Vec<(u64, Why)> = listed
            .entries
            .unusable
            .iter()
            .map(|u| (u.index, u.why))
            .collect();
        assert_eq!(
            why,
            [
                (1, Why::IdNotText),
                (2, Why::IdNotText),
                (3, Why::NoId),
                (4, Why::IdTooLong),
                (5, Why::NotAnObject),
                (6, Why::IdEmpty),
                (7, Why::IdNotText),
            ]
        );
        assert_eq!(listed.entries.unusable_count, 7);
        let reason = listed.entries.unusable_reason();
        assert!(
            reason.starts_with("7 listed entries cannot be exported"),
            "{reason}"
        );
        assert!(
            reason.contains("entry 4 has an id longer than 256 bytes"),
            "{reason}"
        );
        assert!(
            !reason.contains("Jane") && !reason.contains("LLL"),
            "{reason}"
        );

        // Unusable entries past the first ones named are counted all the same.
        let many: Vec<Value> = (0..100).map(|_| json!({"id": 1})).collect();
        let answer = serde_json::to_vec(&json!({ "attachments": many })).unwrap();
        let listed = read(&answer[..], attachments(10, false)).unwrap();
        assert_eq!(listed.entries.unusable.len(), UNUSABLE_NAMED);
        assert_eq!(listed.entries.unusable_count, 100);
        assert!(listed.entries.unusable_reason().contains("and 80 more"));
    }

    #[test]
    fn a_listing_of_uuids_takes_nothing_else() {
        let answer = br#"[{"id":"6f1c0c8e-8a8e-4c55-9d3b-0c8f4e2a7b19"},{"id":"not-a-uuid"}]"#;
        let mut reading = attachments(10, false);
        reading.listing = reading.listing.map(|l| ListingShape {
            member: None,
            uuid_ids: true,
            ..l
        });
        let listed = read(&answer[..], reading).unwrap();
        assert_eq!(listed.entries.taken.len(), 1);
        assert_eq!(listed.entries.unusable[0].why, Why::IdNotUuid);
    }

    #[test]
    fn statuses_are_read_from_the_bytes_and_nothing_else_is_kept() {
        // Every dataset that reports readiness: its statuses where the description says they
        // are, with members the description does not know skipped.
        for dataset in Dataset::ALL {
            let properties = dataset.readiness_properties();
            let mut answer = serde_json::Map::new();
            answer.insert("unknown".into(), json!([[[0]], {"a": "b"}]));
            for list in properties.provider_lists {
                let mut entry = serde_json::Map::new();
                entry.insert(list.source_id.into(), json!("BUREAU"));
                if let Some(country) = list.country_code {
                    entry.insert(country.into(), json!("GBR"));
                }
                entry.insert("status".into(), json!("WAITING_FOR_PROVIDER"));
                entry.insert("extra".into(), json!({"deep": [1, 2, 3]}));
                answer.insert(list.list.into(), json!([entry]));
            }
            for member in properties.dataset_statuses {
                answer.insert((*member).into(), json!({"n": [1], "status": "SUCCESS"}));
            }
            let bytes = serde_json::to_vec(&answer).unwrap();
            let reading = Reading {
                dataset: Some(dataset),
                listing: None,
                limit: 10,
                printable: true,
            };
            let answer = read(&bytes[..], reading).unwrap();
            let expected = properties.provider_lists.len() + properties.dataset_statuses.len();
            assert_eq!(answer.statuses.len(), expected, "{}", dataset.name());
            for status in &answer.statuses {
                let wire = if status.source_id.is_some() {
                    "WAITING_FOR_PROVIDER"
                } else {
                    "SUCCESS"
                };
                assert_eq!(status.status.as_str(), wire, "{}", dataset.name());
            }
        }
    }

    #[test]
    fn what_cannot_be_printed_is_refused_before_anything_is() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let printable = Reading {
            dataset: None,
            listing: None,
            limit: 0,
            printable: true,
        };
        for (answer, kind) in [
            (deep.as_str(), "nested too deeply"),
            (r#"{"a": "Jane"#, "ends early"),
            (r#"{"a": Jane}"#, "is not JSON"),
            (r#"{"a": 1} {"#, "is not JSON"),
        ] {
            let error = read(answer.as_bytes(), printable).unwrap_err();
            assert!(error.contains(kind), "{answer}: {error}");
            assert!(!error.contains("Jane"), "{error}");
        }
    }
}
