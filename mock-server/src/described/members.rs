//! Members of a Session, and of the bodies that create and update one, that no hand-written code
//! knows: a vendor release adds one, and the mock checks it against its schema, keeps it with
//! the session (and in the state file) and returns it.
//!
//! "Known to hand-written code" is not a list: it is what the hand-written view of the session
//! (the client's typed `Session`, as the mock fills it) produces. A body member whose name that
//! view leaves empty is the description's alone.

use std::collections::BTreeSet;

use jsonschema::Validator;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value};

use super::operations::{DescriptionError, SESSION_PATH, compile};
use super::{example, schema};
use crate::problem::FieldErrors;

/// How deep a member only the description knows may nest (objects and arrays within one
/// another). The mock keeps such members in its state file, a few levels below the top, and
/// serde_json reads at most 127 levels back: what is accepted must load again
/// (`store::state_file` checks the sum).
pub const MAX_MEMBER_DEPTH: usize = 64;

/// Which body a member arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionBody {
    /// `POST /v1/sessions`.
    Create,
    /// `PATCH /v1/sessions/{sessionId}`.
    Update,
}

/// A request body's declared members and its validator.
struct BodySchema {
    declared: BTreeSet<String>,
    validator: Validator,
}

/// What the description declares for a Session and its create and update bodies.
#[derive(Default)]
pub struct SessionMembers {
    create: Option<BodySchema>,
    update: Option<BodySchema>,
    /// The members of the Session the description returns.
    returned: BTreeSet<String>,
    /// The schema of the Session the description returns, as written.
    session: Option<Value>,
    /// The search parameters of `GET /v1/sessions`, lower-cased.
    search: BTreeSet<String>,
}

impl std::fmt::Debug for SessionMembers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionMembers")
            .field("returned", &self.returned)
            .finish_non_exhaustive()
    }
}

impl SessionMembers {
    /// Reads the bodies of `POST /v1/sessions` and `PATCH /v1/sessions/{sessionId}` and the
    /// answer of `GET /v1/sessions/{sessionId}`.
    pub fn from_description(document: &Value) -> Result<SessionMembers, DescriptionError> {
        let body = |path: &str, method: &str| -> Result<Option<BodySchema>, DescriptionError> {
            let pointer = format!(
                "/paths/{}/{method}/requestBody",
                path.replace('~', "~0").replace('/', "~1")
            );
            let Some(body) = document.pointer(&pointer) else {
                return Ok(None);
            };
            let body = example::merged(document, body);
            let Some(schema) = body
                .get("content")
                .and_then(Value::as_object)
                .and_then(|content| content.values().find_map(|media| media.get("schema")))
            else {
                return Ok(None);
            };
            Ok(Some(BodySchema {
                declared: properties(document, schema),
                validator: compile(document, schema, &pointer)?,
            }))
        };
        let session_pointer = format!(
            "/paths/{}/get/responses/200/content",
            SESSION_PATH.replace('/', "~1")
        );
        let session = document
            .pointer(&session_pointer)
            .and_then(Value::as_object)
            .and_then(|content| content.values().find_map(|media| media.get("schema")))
            .cloned();
        let returned = session
            .as_ref()
            .map(|schema| properties(document, schema))
            .unwrap_or_default();
        let search = document
            .pointer("/paths/~1v1~1sessions/get/parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|parameter| example::resolve(document, parameter))
            .filter(|parameter| parameter.get("in").and_then(Value::as_str) == Some("query"))
            .filter_map(|parameter| parameter.get("name")?.as_str())
            .map(str::to_ascii_lowercase)
            .collect();
        Ok(SessionMembers {
            create: body("/v1/sessions", "post")?,
            update: body(SESSION_PATH, "patch")?,
            returned,
            session,
            search,
        })
    }

    /// The search filters on members the description adds to a Session, from the search
    /// parameters the hand-written search does not read (`unread`, lower-cased names, the first
    /// of repeated ones): a parameter the description declares whose name is such a member's,
    /// in any case (as ASP.NET binds them: `ExternalReference` searches `externalReference`),
    /// matched as the hand-written text filters are (contained, case-insensitively). An empty
    /// value is no filter.
    pub fn search_filters(&self, unread: Vec<(String, String)>) -> Vec<(String, String)> {
        let mut filters: Vec<(String, String)> = Vec::new();
        for (name, value) in unread {
            let name = name.to_ascii_lowercase();
            if value.is_empty() || !self.search.contains(&name) {
                continue;
            }
            let Some(member) = self
                .returned
                .iter()
                .find(|member| member.to_ascii_lowercase() == name)
            else {
                continue;
            };
            if !self.is_described(member) || filters.iter().any(|(m, _)| m == member) {
                continue;
            }
            filters.push((member.clone(), value.to_lowercase()));
        }
        filters
    }

    /// Whether the description declares `member` in a create or update body, where only
    /// [`SessionMembers::unknown`] stores it from.
    fn is_described(&self, member: &str) -> bool {
        [&self.create, &self.update]
            .into_iter()
            .flatten()
            .any(|body| body.declared.contains(member))
    }

    /// The members of `body` that `view` (the hand-written view of the session, as JSON)
    /// leaves empty and that the description declares for this body, once checked against the
    /// body's schema; refusals of those members go to `errors`.
    pub fn unknown(
        &self,
        which: SessionBody,
        body: &Value,
        view: &Value,
        errors: &mut FieldErrors,
    ) -> Map<String, Value> {
        let declared = match which {
            SessionBody::Create => &self.create,
            SessionBody::Update => &self.update,
        };
        let Some(declared) = declared else {
            return Map::new();
        };
        let is_unknown = |name: &str| {
            declared.declared.contains(name) && view.get(name).is_none_or(Value::is_null)
        };
        for (field, message) in schema::refusals(&declared.validator, body, "") {
            let member = field.split(['.', '[']).next().unwrap_or_default();
            if is_unknown(member) {
                errors.add(field, message);
            }
        }
        for (name, value) in body.as_object().into_iter().flatten() {
            let depth = nesting(value);
            if is_unknown(name) && depth > MAX_MEMBER_DEPTH {
                errors.add(
                    name.as_str(),
                    format!(
                        "The {name} value nests {depth} levels deep; the mock keeps values \
                         nested at most {MAX_MEMBER_DEPTH} levels deep (it must read them back \
                         from its state file): send a flatter value."
                    ),
                );
            }
        }
        body.as_object()
            .into_iter()
            .flatten()
            .filter(|(name, _)| is_unknown(name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }

    /// Adds to `view` (a Session as JSON) the stored members it leaves empty that the
    /// description returns, then every member the description's Session requires that it still
    /// lacks (`null` where the member allows it, else a schema-valid example; nested too): a
    /// member a release makes required is answered the day it is generated, as the least a
    /// service may send. `document` is the description the members were read from.
    pub fn add_to(&self, document: &Value, view: &mut Value, stored: &Map<String, Value>) {
        let Value::Object(members) = view else {
            return;
        };
        for (name, value) in stored {
            if self.returned.contains(name) && members.get(name).is_none_or(Value::is_null) {
                members.insert(name.clone(), value.clone());
            }
        }
        if let Some(schema) = &self.session {
            // The same values for every session: nothing here is the session's data.
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            example::fill_required(document, schema, view, &mut rng);
        }
    }
}

/// How many objects and arrays `value` nests within one another (`0` for a string, `1` for
/// `{}` or `[1]`), without recursion.
pub fn nesting(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0usize)];
    while let Some((value, depth)) = pending.pop() {
        match value {
            Value::Object(members) => {
                deepest = deepest.max(depth + 1);
                pending.extend(members.values().map(|child| (child, depth + 1)));
            }
            Value::Array(items) => {
                deepest = deepest.max(depth + 1);
                pending.extend(items.iter().map(|child| (child, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// The declared member names of an object schema (`allOf` merged, references followed).
fn properties(document: &Value, schema: &Value) -> BTreeSet<String> {
    example::merged(document, schema)
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}
