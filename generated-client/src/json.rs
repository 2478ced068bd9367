//! JSON kept as the service sent it: the members a type does not describe ([`UnknownMembers`]),
//! a value of a polymorphic member that no variant of its type describes ([`UnknownVariant`]),
//! one value's text ([`RawJson`]), and the decoding the generated types use for them.
//!
//! Why text and not `serde_json::Value`: a `Value` costs about 16 times the bytes of small
//! numbers (`[0,0,0,...]`), and serde's `#[serde(flatten)]`, which typify uses for unknown
//! members, first copies the whole object into serde's own buffer. An 8 MiB answer with one
//! large unknown member took 603 MiB that way (issue 27). Here an unknown member costs its
//! bytes, once: the generated types decode their known members directly and append each
//! unknown one, as sent, to one JSON object text (`BENCHMARKS.md`, "Decoding memory").
//!
//! These types read their JSON through `serde_json` (its `RawValue`): decoding a generated type
//! from another data format than JSON fails with a clear error rather than losing members.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The JSON text of one value, exactly as received (or as serialized, when built).
///
/// Equality compares the text. `Debug` shows only its length: the service's values are
/// personal data.
#[derive(Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The value as `serde_json`'s `RawValue`.
    pub fn as_raw_value(&self) -> &RawValue {
        &self.0
    }

    /// Decodes the value as `T`.
    pub fn decode<'a, T: Deserialize<'a>>(&'a self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }

    /// The value as a `serde_json::Value` (which costs many times the text's size for large
    /// arrays of small values).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The JSON of `value`.
    pub fn from_serialize<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<RawJson> {
        serde_json::value::to_raw_value(value).map(RawJson)
    }
}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        RawJson(raw)
    }
}

impl From<RawJson> for Box<RawValue> {
    fn from(raw: RawJson) -> Self {
        raw.0
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawJson {}

impl std::hash::Hash for RawJson {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.get().hash(state);
    }
}

impl PartialOrd for RawJson {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for RawJson {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.get().cmp(other.get())
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({} bytes)", self.get().len())
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(RawJson)
    }
}

/// The members of a JSON object that its type does not describe, kept as the service sent
/// them, in the order received: read them with [`get`](Self::get), [`decode`](Self::decode) or
/// [`iter`](Self::iter); a generated value serializes them back after its known members.
///
/// They are held as one JSON object text, so they cost their size in bytes whatever their
/// shape (`{"pad":[0,0,...]}` or a hundred thousand small members). A member sent twice is kept
/// twice, as sent; [`get`](Self::get) answers the last one, as `serde_json` would. `Debug` shows
/// the members' names, never their values (personal data).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct UnknownMembers {
    /// `{"name":value,...}`, or empty when there is none.
    text: String,
    len: usize,
}

impl UnknownMembers {
    /// No member.
    pub fn new() -> Self {
        UnknownMembers::default()
    }

    /// The number of members (a member sent twice counts twice).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The members as one JSON object text (`{}` when there is none).
    pub fn as_json(&self) -> &str {
        if self.text.is_empty() {
            "{}"
        } else {
            &self.text
        }
    }

    /// The member called `name` (the last, if it was sent more than once).
    pub fn get(&self, name: &str) -> Option<&RawValue> {
        self.iter()
            .filter(|(key, _)| key == name)
            .last()
            .map(|(_, value)| value)
    }

    /// The member called `name` decoded as `T`; `None` when there is no such member.
    pub fn decode<'a, T: Deserialize<'a>>(&'a self, name: &str) -> Option<serde_json::Result<T>> {
        self.get(name).map(|raw| serde_json::from_str(raw.get()))
    }

    /// Every member, in the order received, with its name and JSON text.
    pub fn iter(&self) -> impl Iterator<Item = (Cow<'_, str>, &RawValue)> {
        let entries = if self.text.is_empty() {
            Vec::new()
        } else {
            // The text was written by this type: always an object of valid JSON values.
            serde_json::from_str::<Entries<'_>>(&self.text)
                .map(|entries| entries.0)
                .unwrap_or_default()
        };
        entries.into_iter()
    }

    /// The names of the members, in the order received.
    pub fn names(&self) -> impl Iterator<Item = Cow<'_, str>> {
        self.iter().map(|(name, _)| name)
    }

    /// The members as a `serde_json::Map` (later members replace earlier ones of the same
    /// name). Costs many times their size for large arrays of small values.
    pub fn to_map(&self) -> Map<String, Value> {
        self.iter()
            .map(|(name, raw)| {
                let value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
                (name.into_owned(), value)
            })
            .collect()
    }

    /// Sets the member `name` to `value` (replacing the members of that name), e.g. to build a
    /// value the description does not fully describe yet.
    pub fn insert<T: Serialize + ?Sized>(
        &mut self,
        name: &str,
        value: &T,
    ) -> serde_json::Result<()> {
        let value = serde_json::value::to_raw_value(value)?;
        if self.iter().any(|(key, _)| key == name) {
            let kept: Vec<(String, String)> = self
                .iter()
                .filter(|(key, _)| key != name)
                .map(|(key, raw)| (key.into_owned(), raw.get().to_owned()))
                .collect();
            *self = UnknownMembers::default();
            for (key, raw) in &kept {
                self.push(key, raw);
            }
        }
        self.push(name, value.get());
        Ok(())
    }

    /// Appends a member whose value is the JSON text `raw` (valid JSON: it comes from the
    /// decoder or from `to_raw_value`).
    fn push(&mut self, name: &str, raw: &str) {
        // Room for this member at once: one large member costs its size, not the doubling of a
        // string grown by its last bytes.
        self.text.reserve(name.len() + raw.len() + 8);
        if self.text.is_empty() {
            self.text.push('{');
        } else {
            self.text.pop();
            self.text.push(',');
        }
        push_json_string(&mut self.text, name);
        self.text.push(':');
        self.text.push_str(raw);
        self.text.push('}');
        self.len += 1;
    }
}

/// Appends `text` as a JSON string literal, escaped as `serde_json` writes it.
fn push_json_string(out: &mut String, text: &str) {
    // Serializing a `str` cannot fail.
    if let Ok(quoted) = serde_json::to_string(text) {
        out.push_str(&quoted);
    }
}

impl fmt::Debug for UnknownMembers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

impl From<Map<String, Value>> for UnknownMembers {
    fn from(map: Map<String, Value>) -> Self {
        let mut members = UnknownMembers::default();
        for (name, value) in &map {
            members.push(name, &value.to_string());
        }
        members
    }
}

impl Serialize for UnknownMembers {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len))?;
        for (name, value) in self.iter() {
            map.serialize_entry(&name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for UnknownMembers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = UnknownMembers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = UnknownMembers::default();
                while let Some(key) = map.next_key_seed(KeySeed)? {
                    let value: Box<RawValue> = map.next_value()?;
                    members.push(&key, value.get());
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// An object's entries in order, borrowed from its text.
struct Entries<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some(key) = map.next_key_seed(KeySeed)? {
                    entries.push((key, map.next_value()?));
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// A member name, borrowed from the input where it can be.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// A value of a polymorphic member (`oneOf`/`anyOf`) that no variant of its type describes:
/// a discriminator value the description does not map (a variant a newer service added), or,
/// without a discriminator, a value no variant decodes without losing a member. The whole
/// value is kept as sent, and serializes back as sent.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnknownVariant {
    discriminator: Option<String>,
    json: RawJson,
}

impl UnknownVariant {
    /// The value of the discriminator property as sent (a number as its JSON text); `None`
    /// when the type has no discriminator or the value did not carry it.
    pub fn discriminator(&self) -> Option<&str> {
        self.discriminator.as_deref()
    }

    /// The whole value as sent.
    pub fn json(&self) -> &RawJson {
        &self.json
    }

    /// Decodes the whole value as `T` (a type of your own for a variant this client does not
    /// know yet).
    pub fn decode<'a, T: Deserialize<'a>>(&'a self) -> serde_json::Result<T> {
        self.json.decode()
    }

    /// A value kept as unknown (the generated decoders make them; building one by hand is for
    /// tests and requests the description does not describe yet).
    pub fn new(discriminator: Option<String>, json: RawJson) -> Self {
        UnknownVariant {
            discriminator,
            json,
        }
    }
}

impl fmt::Debug for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnknownVariant")
            .field("discriminator", &self.discriminator)
            .field("json", &self.json)
            .finish()
    }
}

impl Serialize for UnknownVariant {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for UnknownVariant {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        RawJson::deserialize(deserializer).map(|json| UnknownVariant {
            discriminator: None,
            json,
        })
    }
}

/// What the generated `Deserialize` impls call; not a stable API.
#[doc(hidden)]
pub mod decode {
    use super::*;

    /// Decodes an object whose known members make `K` (a private struct of the generated
    /// impl, deriving `Deserialize` without any flattened member) and keeps every member
    /// `is_known` refuses as it was sent. Nothing is buffered: each known member is decoded
    /// where it stands, each unknown one copied once.
    pub fn with_unknown_members<'de, D, K>(
        deserializer: D,
        is_known: fn(&str) -> bool,
    ) -> Result<(K, UnknownMembers), D::Error>
    where
        D: Deserializer<'de>,
        K: Deserialize<'de>,
    {
        struct Object<K> {
            is_known: fn(&str) -> bool,
            known: std::marker::PhantomData<K>,
        }
        impl<'de, K: Deserialize<'de>> Visitor<'de> for Object<K> {
            type Value = (K, UnknownMembers);
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let mut unknown = UnknownMembers::default();
                let known = K::deserialize(de::value::MapAccessDeserializer::new(Sorting {
                    map,
                    is_known: self.is_known,
                    unknown: &mut unknown,
                }))?;
                unknown.text.shrink_to_fit();
                Ok((known, unknown))
            }
        }
        deserializer.deserialize_map(Object {
            is_known,
            known: std::marker::PhantomData,
        })
    }

    /// The object's entries as `K` sees them: the known ones; the others go to `unknown`.
    struct Sorting<'u, A> {
        map: A,
        is_known: fn(&str) -> bool,
        unknown: &'u mut UnknownMembers,
    }

    impl<'de, A: MapAccess<'de>> MapAccess<'de> for Sorting<'_, A> {
        type Error = A::Error;

        fn next_key_seed<S: DeserializeSeed<'de>>(
            &mut self,
            seed: S,
        ) -> Result<Option<S::Value>, A::Error> {
            while let Some(key) = self.map.next_key_seed(KeySeed)? {
                if (self.is_known)(&key) {
                    return match key {
                        Cow::Borrowed(key) => seed
                            .deserialize(de::value::BorrowedStrDeserializer::new(key))
                            .map(Some),
                        Cow::Owned(key) => seed.deserialize(key.into_deserializer()).map(Some),
                    };
                }
                let value: Box<RawValue> = self.map.next_value()?;
                self.unknown.push(&key, value.get());
            }
            Ok(None)
        }

        fn next_value_seed<S: DeserializeSeed<'de>>(
            &mut self,
            seed: S,
        ) -> Result<S::Value, A::Error> {
            self.map.next_value_seed(seed)
        }
    }

    /// The discriminator of a polymorphic value: the member `property` as text (a number as its
    /// JSON text). `None` when the value is not an object or lacks the member, or when its
    /// value is neither a string nor a number.
    pub fn discriminator(raw: &RawJson, property: &str) -> Option<String> {
        let entries = serde_json::from_str::<Entries<'_>>(raw.get()).ok()?;
        let (_, value) = entries
            .0
            .into_iter()
            .rev()
            .find(|(key, _)| key == property)?;
        match serde_json::from_str::<Value>(value.get()).ok()? {
            Value::String(text) => Some(text),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        }
    }

    /// Decodes the variant a discriminator named, as a decoding error of the enclosing value
    /// when it does not match its type.
    pub fn variant<'a, T: Deserialize<'a>, E: de::Error>(
        raw: &'a RawJson,
        property: &str,
    ) -> Result<T, E> {
        // Neither the discriminator's value nor anything else of the body is quoted (the
        // decode error's message is shown and logged); the property is the description's.
        raw.decode().map_err(|error| {
            E::custom(format_args!(
                "it does not match the variant its {property} names: {error}"
            ))
        })
    }

    /// How well a decoded variant keeps an object: `None` when it loses a member (a member its
    /// type neither knows nor keeps), else the number of members it keeps only as unknown
    /// (fewer is a better fit). Values that are not objects fit with 0.
    pub fn fit(
        raw: &RawJson,
        is_known: Option<fn(&str) -> bool>,
        keeps_unknown: bool,
    ) -> Option<usize> {
        let Some(is_known) = is_known else {
            return Some(0);
        };
        let Ok(entries) = serde_json::from_str::<Entries<'_>>(raw.get()) else {
            return Some(0);
        };
        let unclaimed = entries.0.iter().filter(|(key, _)| !is_known(key)).count();
        (unclaimed == 0 || keeps_unknown).then_some(unclaimed)
    }

    /// Of the decoded candidates (in the order of the description, each with its [`fit`]), the
    /// best fit: the fewest members kept only as unknown, the first of equals; or the whole
    /// value as an [`UnknownVariant`] when none decodes without losing a member.
    pub fn best_fit<T>(
        raw: RawJson,
        candidates: impl IntoIterator<Item = Option<(usize, T)>>,
        unknown: fn(UnknownVariant) -> T,
    ) -> T {
        let mut best: Option<(usize, T)> = None;
        for (fit, value) in candidates.into_iter().flatten() {
            if best.as_ref().is_none_or(|(best_fit, _)| fit < *best_fit) {
                best = Some((fit, value));
            }
        }
        match best {
            Some((_, value)) => value,
            None => unknown(UnknownVariant::new(None, raw)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_members_keep_order_duplicates_and_escapes_and_serialize_back() {
        let members: UnknownMembers =
            serde_json::from_str(r#"{"b":[1,2],"a\"q":{"x":null},"b":"again"}"#).unwrap();
        assert_eq!(members.len(), 3);
        assert_eq!(members.get("b").unwrap().get(), r#""again""#);
        assert_eq!(members.get("a\"q").unwrap().get(), r#"{"x":null}"#);
        assert_eq!(members.names().collect::<Vec<_>>(), ["b", "a\"q", "b"]);
        assert_eq!(
            serde_json::to_string(&members).unwrap(),
            r#"{"b":[1,2],"a\"q":{"x":null},"b":"again"}"#
        );
        assert_eq!(format!("{members:?}"), r#"{"b", "a\"q", "b"}"#);
    }

    #[test]
    fn inserting_replaces_a_member_and_a_map_converts() {
        let mut members = UnknownMembers::from(
            serde_json::json!({"name": "x", "n": 1})
                .as_object()
                .unwrap()
                .clone(),
        );
        members.insert("name", "y").unwrap();
        members.insert("new\n", &[1, 2]).unwrap();
        assert_eq!(members.as_json(), r#"{"n":1,"name":"y","new\n":[1,2]}"#);
        assert_eq!(members.decode::<u8>("n").unwrap().unwrap(), 1);
        assert_eq!(
            members.to_map(),
            serde_json::json!({"n": 1, "name": "y", "new\n": [1, 2]})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(UnknownMembers::new().as_json(), "{}");
    }

    #[test]
    fn a_discriminator_is_read_as_text_or_number() {
        let raw: RawJson = serde_json::from_str(r#"{"a":1,"$type":"cat"}"#).unwrap();
        assert_eq!(decode::discriminator(&raw, "$type").as_deref(), Some("cat"));
        let raw: RawJson = serde_json::from_str(r#"{"$type":2}"#).unwrap();
        assert_eq!(decode::discriminator(&raw, "$type").as_deref(), Some("2"));
        let raw: RawJson = serde_json::from_str(r#"[1]"#).unwrap();
        assert_eq!(decode::discriminator(&raw, "$type"), None);
    }
}
