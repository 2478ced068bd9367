//! The streaming reader of an answer over serde_json: members nobody needs skipped, listing
//! entries read one at a time within [`MAX_ENTRY_BYTES`] (counted by [`Budget`] under the
//! parser), providers' statuses kept up to the limit.

use std::cell::Cell;
use std::fmt;
use std::io::{self, Read};
use std::rc::Rc;

use creditdata_client::readiness::{ProviderListProperties, ProviderStatus};
use creditdata_client::session_datasets::Dataset;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::entries::{
    AnswerRead, EXTENSION_MEMBERS, Entries, Entry, ListingShape, MAX_ENTRY_BYTES, MAX_ID_BYTES,
    Reading, Why,
};

/// How a refusal of too many providers starts.
pub(super) const TOO_MANY_PROVIDERS: &str = "the answer names more than";

/// Where the reader is, and the entry being read: an entry that grows past
/// [`MAX_ENTRY_BYTES`] makes the reader fail, so no member of it is ever held past that.
#[derive(Clone, Default)]
pub(super) struct Budget {
    position: Rc<Cell<u64>>,
    /// The entry being read: its position in its list and where it started.
    entry: Rc<Cell<Option<(u64, u64)>>>,
    pub(super) exceeded: Rc<Cell<Option<u64>>>,
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
pub(super) struct Counted<R> {
    pub(super) inner: R,
    pub(super) budget: Budget,
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

pub(super) struct AnswerVisitor {
    pub(super) reading: Reading,
    pub(super) budget: Budget,
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
