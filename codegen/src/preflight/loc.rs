//! Node locations, rendered both as RFC 6901 JSON pointers (for findings) and as RFC 9535
//! JSONPath queries (for overlay targets).

use serde_json::Value;

use crate::document::pointer;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A node of the document, as the list of steps from the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Loc(pub(crate) Vec<Seg>);

impl Loc {
    pub(crate) fn root() -> Self {
        Self(Vec::new())
    }

    pub(crate) fn key(&self, key: &str) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Key(key.to_string()));
        Self(segs)
    }

    pub(crate) fn index(&self, index: usize) -> Self {
        let mut segs = self.0.clone();
        segs.push(Seg::Index(index));
        Self(segs)
    }

    pub(crate) fn parent(&self) -> Option<Self> {
        let mut segs = self.0.clone();
        segs.pop().map(|_| Self(segs))
    }

    pub(crate) fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Seg::Key(key)) => Some(key),
            _ => None,
        }
    }

    pub(crate) fn pointer(&self) -> String {
        let mut out = String::new();
        for seg in &self.0 {
            match seg {
                Seg::Key(key) => pointer::push(&mut out, key),
                Seg::Index(index) => pointer::push(&mut out, &index.to_string()),
            }
        }
        out
    }

    /// The JSONPath that selects exactly this node.
    pub(crate) fn path(&self) -> String {
        let mut out = String::from("$");
        for seg in &self.0 {
            match seg {
                Seg::Key(key) => out.push_str(&member(key)),
                Seg::Index(index) => out.push_str(&format!("[{index}]")),
            }
        }
        out
    }

    pub(crate) fn get<'a>(&self, doc: &'a Value) -> Option<&'a Value> {
        let mut node = doc;
        for seg in &self.0 {
            node = match (node, seg) {
                (Value::Object(map), Seg::Key(key)) => map.get(key)?,
                (Value::Array(items), Seg::Index(index)) => items.get(*index)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Parses the fragment of a local `$ref` ("#/a/b~1c"), percent-decoding it first as a URI
    /// fragment may be.
    pub(crate) fn from_fragment(fragment: &str) -> Option<Self> {
        let decoded = percent_decode(fragment)?;
        if decoded.is_empty() {
            return Some(Self::root());
        }
        let rest = decoded.strip_prefix('/')?;
        Some(Self(
            rest.split('/')
                .map(|token| Seg::Key(pointer::unescape(token)))
                .collect(),
        ))
    }

    /// The node a JSON pointer into `doc` names, with array steps as indices where the
    /// document has arrays (a pointer that leads nowhere keeps every step as a key).
    pub(crate) fn of_pointer(doc: &Value, json_pointer: &str) -> Self {
        let keys = Self(
            pointer::tokens(json_pointer)
                .into_iter()
                .map(Seg::Key)
                .collect(),
        );
        keys.resolve(doc).map_or(keys, |(resolved, _)| resolved)
    }

    /// Like [`Loc::get`], but a key step into an array is read as an index, as RFC 6901 does.
    pub(crate) fn resolve<'a>(&self, doc: &'a Value) -> Option<(Self, &'a Value)> {
        let mut node = doc;
        let mut resolved = Vec::new();
        for seg in &self.0 {
            match (node, seg) {
                (Value::Object(map), Seg::Key(key)) => {
                    node = map.get(key)?;
                    resolved.push(seg.clone());
                }
                (Value::Array(items), Seg::Key(key)) => {
                    let index: usize = key.parse().ok()?;
                    node = items.get(index)?;
                    resolved.push(Seg::Index(index));
                }
                _ => return None,
            }
        }
        Some((Self(resolved), node))
    }
}

/// One JSONPath child segment for an object member: the dot shorthand when RFC 9535 allows it
/// for plain ASCII names, a single-quoted bracket otherwise.
pub(crate) fn member(key: &str) -> String {
    let mut chars = key.chars();
    let shorthand = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if shorthand {
        format!(".{key}")
    } else {
        format!("[{}]", quote(key))
    }
}

/// An RFC 9535 single-quoted string literal.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::from("'");
    for c in text.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The position of every node in a preorder walk, so findings can be sorted in document order.
pub(crate) fn document_order(doc: &Value) -> std::collections::HashMap<Loc, usize> {
    fn walk(node: &Value, loc: &mut Vec<Seg>, order: &mut std::collections::HashMap<Loc, usize>) {
        let next = order.len();
        order.insert(Loc(loc.clone()), next);
        match node {
            Value::Object(map) => {
                for (key, child) in map {
                    loc.push(Seg::Key(key.clone()));
                    walk(child, loc, order);
                    loc.pop();
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    loc.push(Seg::Index(index));
                    walk(child, loc, order);
                    loc.pop();
                }
            }
            _ => {}
        }
    }
    let mut order = std::collections::HashMap::new();
    walk(doc, &mut Vec::new(), &mut order);
    order
}
