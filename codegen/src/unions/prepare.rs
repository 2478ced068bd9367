//! The schema half: every polymorphic member becomes a marked component whose variants are
//! references, with the discriminator's values worked out (see the module docs of `unions`).

use std::collections::BTreeSet;

use heck::ToUpperCamelCase;
use serde_json::{Map, Value, json};

use super::{HOISTED_UNION_MARK, UNION_MARK};
use crate::document::pointer::{escape, unescape};
use crate::document::{SCHEMA_REF_PREFIX, is_extension, is_http_method};

/// Keywords that may stand next to `oneOf`/`anyOf` without changing what the variants are.
const ANNOTATIONS: [&str; 7] = [
    "description",
    "title",
    "nullable",
    "deprecated",
    "example",
    "externalDocs",
    "discriminator",
];

/// Marks and normalizes every polymorphic member of `doc` (an OpenAPI 3.0 document). Returns
/// warnings naming the JSON pointer of each union left to typify.
pub fn prepare(doc: &mut Value) -> Vec<String> {
    let mut warnings = Vec::new();
    if doc.pointer("/components/schemas").is_none() {
        if !has_any_union(doc) {
            return warnings;
        }
        if let Value::Object(root) = doc {
            let components = root
                .entry("components")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(components) = components {
                components
                    .entry("schemas")
                    .or_insert_with(|| Value::Object(Map::new()));
            }
        }
    }
    let Some(objects) = object_components(doc) else {
        return warnings;
    };
    let mut state = State {
        warnings: Vec::new(),
        taken: component_names(doc),
        objects,
        hoisted: Vec::new(),
    };

    // Unions inside component schemas and in success responses become components of their own.
    let names: Vec<String> = component_names(doc).into_iter().collect();
    for name in &names {
        let pointer = component_pointer(name);
        if let Some(schema) = doc.pointer_mut(&pointer) {
            state.hoist_children(schema, &name.to_upper_camel_case(), &pointer);
        }
    }
    for (pointer, base) in response_roots(doc) {
        let Some(schema) = doc.pointer_mut(&pointer) else {
            continue;
        };
        if state.is_union(schema) {
            state.hoist(schema, &base, &pointer);
        } else {
            state.left_to_typify(schema, &pointer);
            state.hoist_children(schema, &base, &pointer);
        }
    }

    // Then every union component, and whatever hoisting adds, until nothing is left.
    let mut pending: Vec<String> = names;
    loop {
        for (name, _, schema) in std::mem::take(&mut state.hoisted) {
            if let Some(schemas) = component_schemas_mut(doc) {
                schemas.insert(name.clone(), schema);
            }
            pending.push(name);
        }
        let Some(name) = pending.pop() else { break };
        let pointer = component_pointer(&name);
        let Some(mut schema) = doc.pointer(&pointer).cloned() else {
            continue;
        };
        state.hoist_children(&mut schema, &name.to_upper_camel_case(), &pointer);
        let mut keeping = Vec::new();
        if schema.get(UNION_MARK).is_none() {
            state.left_to_typify(&schema, &pointer);
        }
        if state.is_union(&schema) && schema.get(UNION_MARK).is_none() {
            let components = doc
                .pointer("/components/schemas")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            match state.normalize(&mut schema, &name, &pointer, &components) {
                Ok(keep_unknown) => keeping = keep_unknown,
                Err(why) => warnings.push(format!(
                    "{pointer}: a polymorphic member typify decodes by itself (the first variant \
                     that decodes wins, members it lacks are dropped): {why}"
                )),
            }
        }
        if let Some(slot) = doc.pointer_mut(&pointer) {
            *slot = schema;
        }
        for (name, _, schema) in std::mem::take(&mut state.hoisted) {
            if let Some(schemas) = component_schemas_mut(doc) {
                schemas.insert(name.clone(), schema);
            }
            pending.push(name);
        }
        for variant in std::mem::take(&mut keeping) {
            merge_closed_all_of(doc, &variant);
            keep_unknown_members(doc, &variant);
        }
    }
    warnings.extend(state.warnings);
    warnings
}

struct State {
    /// The unions left to typify, and why.
    warnings: Vec<String>,
    /// Component names in use (the document's and the hoisted ones).
    taken: BTreeSet<String>,
    /// Components that describe objects.
    objects: BTreeSet<String>,
    /// Components to add: name, original pointer, schema.
    hoisted: Vec<(String, String, Value)>,
}

impl State {
    /// A `oneOf`/`anyOf` of two or more variants, one of which describes objects, that this
    /// stage can make decodable (see [`blockers`]).
    fn is_union(&self, schema: &Value) -> bool {
        self.is_polymorphic(schema) && blockers(schema).is_empty()
    }

    /// A `oneOf`/`anyOf` of two or more variants, one of which describes objects.
    fn is_polymorphic(&self, schema: &Value) -> bool {
        let lists = ["oneOf", "anyOf"].map(|key| schema.get(key).and_then(Value::as_array));
        let Some(variants) = lists.iter().flatten().next() else {
            return false;
        };
        variants.len() >= 2 && variants.iter().any(|v| self.is_object(v))
    }

    /// Warns about a polymorphic member this stage leaves to typify.
    fn left_to_typify(&mut self, schema: &Value, pointer: &str) {
        if self.is_polymorphic(schema) {
            let why = blockers(schema);
            let seen = self
                .warnings
                .iter()
                .any(|w| w.starts_with(&format!("{pointer}: ")));
            if !why.is_empty() && !seen {
                self.warnings.push(format!(
                    "{pointer}: a polymorphic member typify decodes by itself (the first variant \
                     that decodes wins, members it lacks are dropped): {}; write the shared \
                     members into each variant (allOf) to have it decoded by its discriminator \
                     or by best fit",
                    why.join(", ")
                ));
            }
        }
    }

    fn is_object(&self, schema: &Value) -> bool {
        if let Some(name) = ref_name(schema) {
            return self.objects.contains(&name);
        }
        is_object_shaped(schema, &self.objects)
    }

    /// Moves the unions among the children of `schema` (members, items, map values) into
    /// components named after where they were, and goes on into the other children.
    fn hoist_children(&mut self, schema: &mut Value, base: &str, pointer: &str) {
        let Some(map) = schema.as_object_mut() else {
            return;
        };
        for (key, value) in map.iter_mut() {
            match key.as_str() {
                "properties" => {
                    for (member, sub) in value.as_object_mut().into_iter().flatten() {
                        let name = format!("{base}{}", member.to_upper_camel_case());
                        let at = format!("{pointer}/properties/{}", escape(member));
                        self.hoist_or_descend(sub, &name, &at);
                    }
                }
                "items" => self.hoist_or_descend(
                    value,
                    &format!("{base}Item"),
                    &format!("{pointer}/items"),
                ),
                "additionalProperties" if value.is_object() => self.hoist_or_descend(
                    value,
                    &format!("{base}Value"),
                    &format!("{pointer}/additionalProperties"),
                ),
                _ => {}
            }
        }
    }

    fn hoist_or_descend(&mut self, schema: &mut Value, name: &str, pointer: &str) {
        if self.is_union(schema) {
            self.hoist(schema, name, pointer);
        } else {
            self.left_to_typify(schema, pointer);
            self.hoist_children(schema, name, pointer);
        }
    }

    /// Replaces `schema` by a reference to a new component holding it; annotations of the use
    /// (nullability, description, deprecation) stay at the use, as the open-enum stage does.
    fn hoist(&mut self, schema: &mut Value, wanted: &str, pointer: &str) -> String {
        let name = self.free_name(wanted);
        let mut moved = std::mem::take(schema);
        let mut usage = Map::new();
        if let Value::Object(m) = &mut moved {
            for key in [
                "nullable",
                "description",
                "default",
                "example",
                "deprecated",
            ] {
                if let Some(v) = m.shift_remove(key) {
                    usage.insert(key.into(), v);
                }
            }
            m.insert(HOISTED_UNION_MARK.into(), Value::String(pointer.into()));
        }
        let reference = json!({ "$ref": format!("{SCHEMA_REF_PREFIX}{}", escape(&name)) });
        *schema = if usage.is_empty() {
            reference
        } else {
            usage.insert("allOf".into(), Value::Array(vec![reference]));
            Value::Object(usage)
        };
        if is_object_shaped(&moved, &self.objects) {
            self.objects.insert(name.clone());
        }
        self.hoisted.push((name.clone(), pointer.into(), moved));
        name
    }

    fn free_name(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_string();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{wanted}{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    /// Makes the union component `schema` decodable by the code half and marks it. Returns
    /// the variant components that should keep their unknown members; `Err` says why the
    /// union is left as it is.
    fn normalize(
        &mut self,
        schema: &mut Value,
        name: &str,
        pointer: &str,
        components: &Map<String, Value>,
    ) -> Result<Vec<String>, String> {
        let Value::Object(map) = schema else {
            return Err("not an object".into());
        };
        let keyword = match (map.contains_key("oneOf"), map.contains_key("anyOf")) {
            (true, false) => "oneOf",
            (false, true) => "anyOf",
            _ => return Err("it has both `oneOf` and `anyOf`".into()),
        };
        // A union without a discriminator of its own uses the one its variants inherit: the
        // base schema they all extend with `allOf` (Swashbuckle's polymorphism).
        if !map.contains_key("discriminator")
            && let Some(inherited) = inherited_discriminator(map, keyword, components)
        {
            map.insert("discriminator".into(), inherited);
        }
        let property = map
            .get("discriminator")
            .and_then(|d| d.get("propertyName"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let others = blockers(schema);
        let Value::Object(map) = schema else {
            return Err("not an object".into());
        };
        if !others.is_empty() {
            return Err(others.join(", "));
        }
        map.shift_remove("type");
        map.shift_remove("required");

        let mut variants: Vec<Value> = match map.get(keyword) {
            Some(Value::Array(variants)) => variants.clone(),
            _ => return Err(format!("`{keyword}` is not a list")),
        };
        // What each variant is: a component name, or `None` for a scalar kept inline.
        let mut targets: Vec<Option<(String, bool)>> = Vec::new();
        for (i, variant) in variants.iter_mut().enumerate() {
            if let Some(target) = ref_name(variant) {
                targets.push(Some((target, false)));
            } else if is_object_shaped(variant, &self.objects) {
                let at = format!("{pointer}/{keyword}/{i}");
                let hoisted = self.hoist(
                    variant,
                    &format!("{}Variant{i}", name.to_upper_camel_case()),
                    &at,
                );
                targets.push(Some((hoisted, true)));
            } else {
                targets.push(None);
            }
        }

        let mut mark = Map::new();
        mark.insert("keyword".into(), Value::String(keyword.into()));
        if let Some(property) = &property {
            let values = self.discriminator_values(map, property, &targets, components);
            mark.insert(
                "discriminator".into(),
                json!({ "propertyName": property, "values": values }),
            );
        }
        let renamed: Vec<(String, Value)> = vec![("oneOf".into(), Value::Array(variants))];
        crate::document::ordered::splice(map, keyword, renamed);
        map.insert(UNION_MARK.into(), Value::Object(mark));

        Ok(targets
            .into_iter()
            .flatten()
            .map(|(target, _)| target)
            .filter(|target| self.objects.contains(target))
            .collect())
    }

    /// Each discriminator value and the index of the variant it names: the `mapping`, then a
    /// one-value `enum` (or `const`) of the property in a variant, then the variant's schema
    /// name (OpenAPI's implicit mapping; not for variants that had no name).
    fn discriminator_values(
        &self,
        union: &Map<String, Value>,
        property: &str,
        targets: &[Option<(String, bool)>],
        components: &Map<String, Value>,
    ) -> Map<String, Value> {
        let mut values = Map::new();
        let mut named = vec![false; targets.len()];
        let mapping = union
            .get("discriminator")
            .and_then(|d| d.get("mapping"))
            .and_then(Value::as_object);
        for (value, target) in mapping.into_iter().flatten() {
            let Some(target) = target.as_str() else {
                continue;
            };
            let target = target
                .strip_prefix(SCHEMA_REF_PREFIX)
                .map(unescape)
                .unwrap_or_else(|| target.to_string());
            let index = targets
                .iter()
                .position(|t| t.as_ref().is_some_and(|(name, _)| *name == target));
            if let Some(index) = index {
                values.entry(value.clone()).or_insert(json!(index));
                named[index] = true;
            }
        }
        for (index, target) in targets.iter().enumerate() {
            if named[index] {
                continue;
            }
            let Some((target, hoisted)) = target else {
                continue;
            };
            let own = self
                .hoisted
                .iter()
                .find(|(n, _, _)| n == target)
                .map(|(_, _, s)| s)
                .or_else(|| components.get(target))
                .and_then(|s| own_value(s, property));
            let value = match own {
                Some(value) => value,
                None if !hoisted => target.clone(),
                None => continue,
            };
            values.entry(value).or_insert(json!(index));
        }
        values
    }
}

/// The discriminator every variant of a union inherits from one base schema (each variant a
/// reference to an `allOf` with a reference to the same base that has a `discriminator`).
fn inherited_discriminator(
    union: &Map<String, Value>,
    keyword: &str,
    components: &Map<String, Value>,
) -> Option<Value> {
    let mut found: Option<String> = None;
    for variant in union.get(keyword)?.as_array()? {
        let schema = components.get(&ref_name(variant)?)?;
        let base = schema
            .get("allOf")?
            .as_array()?
            .iter()
            .filter_map(ref_name)
            .find(|base| {
                components
                    .get(base)
                    .is_some_and(|b| b.get("discriminator").is_some())
            })?;
        if found.as_ref().is_some_and(|f| *f != base) {
            return None;
        }
        found = Some(base);
    }
    components.get(&found?)?.get("discriminator").cloned()
}

/// What keeps a polymorphic `schema` from being decoded by its discriminator or by best fit:
/// both `oneOf` and `anyOf`, or keywords next to them that say more than the variants
/// (`properties`, `default`, ...). `type: object` and a `required` naming only the
/// discriminator restate the variants and are dropped.
fn blockers(schema: &Value) -> Vec<String> {
    let Value::Object(map) = schema else {
        return vec!["not an object".into()];
    };
    let keyword = match (map.contains_key("oneOf"), map.contains_key("anyOf")) {
        (true, false) => "oneOf",
        (false, true) => "anyOf",
        (true, true) => return vec!["both `oneOf` and `anyOf`".into()],
        (false, false) => return vec!["neither `oneOf` nor `anyOf`".into()],
    };
    let property = map
        .get("discriminator")
        .and_then(|d| d.get("propertyName"))
        .and_then(Value::as_str);
    map.iter()
        .filter(|(key, value)| {
            let restated = match key.as_str() {
                "type" => *value == "object",
                "required" => value.as_array().is_some_and(|required| {
                    required
                        .iter()
                        .all(|r| r.as_str().is_some() && r.as_str() == property)
                }),
                _ => false,
            };
            key.as_str() != keyword
                && !restated
                && !ANNOTATIONS.contains(&key.as_str())
                && !is_extension(key)
        })
        .map(|(key, _)| format!("`{key}` next to `{keyword}`"))
        .collect()
}

/// The one value the variant `schema` allows for `property` (a one-value `enum` or a `const`),
/// as the discriminator's text.
fn own_value(schema: &Value, property: &str) -> Option<String> {
    let in_properties = schema
        .get("properties")
        .and_then(|p| p.get(property))
        .and_then(|p| {
            let values = match (p.get("enum"), p.get("const")) {
                (Some(Value::Array(values)), _) if values.len() == 1 => values[0].clone(),
                (_, Some(value)) => value.clone(),
                _ => return None,
            };
            match values {
                Value::String(text) => Some(text),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            }
        });
    in_properties.or_else(|| {
        schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|part| own_value(part, property))
    })
}

/// Writes the variant component `name` as one object when it is an `allOf` of objects of which
/// one says `additionalProperties: false`: Swashbuckle's subtype (`allOf: [Base, {own members}]`,
/// each part closed). Read as JSON Schema, each part refuses the other's members, so nothing
/// matches and typify generates an enum without variants; what the author means is one object
/// with the members of every part, closed if every part is. The component keeps its name and
/// is marked `x-creditdata-merged-all-of` (the parts it was).
fn merge_closed_all_of(doc: &mut Value, name: &str) {
    let pointer = component_pointer(name);
    let Some(Value::Object(schema)) = doc.pointer(&pointer) else {
        return;
    };
    let Some(parts) = schema.get("allOf").and_then(Value::as_array) else {
        return;
    };
    let closed = |part: &Value| part.get("additionalProperties") == Some(&Value::Bool(false));
    let mut resolved = Vec::new();
    for part in parts {
        let part = match ref_name(part) {
            Some(base) => match doc.pointer(&component_pointer(&base)) {
                Some(base) => base,
                None => return,
            },
            None => part,
        };
        let composed = ["allOf", "anyOf", "oneOf"]
            .iter()
            .any(|k| part.get(*k).is_some());
        if composed || !part.is_object() {
            return;
        }
        resolved.push(part);
    }
    if !resolved.iter().any(|part| closed(part)) {
        return;
    }
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for part in &resolved {
        for (member, sub) in part
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            properties.insert(member.clone(), sub.clone());
        }
        for member in part
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !required.contains(member) {
                required.push(member.clone());
            }
        }
    }
    let all_closed = resolved.iter().all(|part| closed(part));
    let mut merged = Map::new();
    merged.insert("type".into(), Value::String("object".into()));
    for (key, value) in schema {
        if key != "allOf" && (ANNOTATIONS.contains(&key.as_str()) || is_extension(key)) {
            merged.insert(key.clone(), value.clone());
        }
    }
    if !required.is_empty() {
        merged.insert("required".into(), Value::Array(required));
    }
    merged.insert("properties".into(), Value::Object(properties));
    if all_closed {
        merged.insert("additionalProperties".into(), Value::Bool(false));
    }
    merged.insert(
        "x-creditdata-merged-all-of".into(),
        Value::Array(parts.clone()),
    );
    if let Some(slot) = doc.pointer_mut(&pointer) {
        *slot = Value::Object(merged);
    }
}

/// Gives the object component `name` `additionalProperties: {}` when it says nothing of other
/// members, so that the variant keeps what it does not know.
fn keep_unknown_members(doc: &mut Value, name: &str) {
    let Some(Value::Object(schema)) = doc.pointer_mut(&component_pointer(name)) else {
        return;
    };
    let composed = ["allOf", "anyOf", "oneOf"]
        .iter()
        .any(|k| schema.contains_key(*k));
    if schema.contains_key("properties")
        && !schema.contains_key("additionalProperties")
        && !composed
    {
        schema.insert("additionalProperties".into(), Value::Object(Map::new()));
    }
}

/// Whether `schema` describes objects: `type: object`, members, a map, or an `allOf` with an
/// object part.
fn is_object_shaped(schema: &Value, objects: &BTreeSet<String>) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    if map.get("type").is_some_and(|t| t == "object")
        || map.contains_key("properties")
        || map
            .get("additionalProperties")
            .is_some_and(Value::is_object)
    {
        return true;
    }
    map.get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|part| match ref_name(part) {
            Some(name) => objects.contains(&name),
            None => is_object_shaped(part, objects),
        })
}

/// The components that describe objects (through `allOf` references too).
fn object_components(doc: &Value) -> Option<BTreeSet<String>> {
    let schemas = doc.pointer("/components/schemas")?.as_object()?;
    let mut objects = BTreeSet::new();
    loop {
        let before = objects.len();
        for (name, schema) in schemas {
            if !objects.contains(name) && is_object_shaped(schema, &objects) {
                objects.insert(name.clone());
            }
        }
        if objects.len() == before {
            return Some(objects);
        }
    }
}

fn ref_name(schema: &Value) -> Option<String> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix(SCHEMA_REF_PREFIX))
        .map(unescape)
}

fn component_pointer(name: &str) -> String {
    format!("/components/schemas/{}", escape(name))
}

fn component_names(doc: &Value) -> BTreeSet<String> {
    doc.pointer("/components/schemas")
        .and_then(Value::as_object)
        .map(|s| s.keys().cloned().collect())
        .unwrap_or_default()
}

fn component_schemas_mut(doc: &mut Value) -> Option<&mut Map<String, Value>> {
    doc.pointer_mut("/components/schemas")?.as_object_mut()
}

/// The schema of every success response written in place (not a `$ref` to a response
/// component), with the name progenitor gives its type (`<OperationId>Response`).
fn response_roots(doc: &Value) -> Vec<(String, String)> {
    let mut roots = Vec::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return roots;
    };
    for (path, item) in paths {
        for (method, operation) in item.as_object().into_iter().flatten() {
            if !is_http_method(method) {
                continue;
            }
            let Some(id) = operation.get("operationId").and_then(Value::as_str) else {
                continue;
            };
            for (status, response) in operation
                .get("responses")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if !status.starts_with('2') {
                    continue;
                }
                for (media, content) in response
                    .get("content")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    if content.get("schema").is_some() {
                        roots.push((
                            format!(
                                "/paths/{}/{method}/responses/{}/content/{}/schema",
                                escape(path),
                                escape(status),
                                escape(media)
                            ),
                            format!("{}Response", id.to_upper_camel_case()),
                        ));
                    }
                }
            }
        }
    }
    roots
}

/// Whether the document has a `oneOf` or `anyOf` anywhere.
fn has_any_union(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.contains_key("oneOf")
                || map.contains_key("anyOf")
                || map.values().any(has_any_union)
        }
        Value::Array(items) => items.iter().any(has_any_union),
        _ => false,
    }
}
