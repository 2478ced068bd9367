//! Renamed component schemas: the same shape under a new name.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::schema::same_shape;

/// Old name → new name for every schema that left the old document and arrived, unchanged in
/// shape, under exactly one new name in the new document. References inside the compared
/// schemas go through the renames found so far, so a rename that changes what another schema
/// refers to is found too. Ambiguous matches (two candidates either way) are left as a removal
/// and an addition.
pub fn schema_renames(old: &Value, new: &Value) -> BTreeMap<String, String> {
    let schemas = |doc: &Value| -> BTreeMap<String, Value> {
        doc.pointer("/components/schemas")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let (a, b) = (schemas(old), schemas(new));
    let removed: BTreeSet<&String> = a.keys().filter(|k| !b.contains_key(*k)).collect();
    let added: BTreeSet<&String> = b.keys().filter(|k| !a.contains_key(*k)).collect();
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let lookup = |name: &str| found.get(name).cloned();
        let taken: BTreeSet<&String> = found.values().collect();
        let mut progress = Vec::new();
        for r in removed.iter().filter(|r| !found.contains_key(**r)) {
            let candidates: Vec<&&String> = added
                .iter()
                .filter(|n| !taken.contains(**n) && same_shape(&a[*r], &b[**n], &lookup))
                .collect();
            if let [only] = candidates.as_slice() {
                let rivals = removed
                    .iter()
                    .filter(|o| {
                        !found.contains_key(**o) && same_shape(&a[**o], &b[**only], &lookup)
                    })
                    .count();
                if rivals == 1 {
                    progress.push(((*r).clone(), (**only).clone()));
                }
            }
        }
        if progress.is_empty() {
            return found;
        }
        found.extend(progress);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renames_are_found_through_the_references_they_change() {
        let old = json!({"components": {"schemas": {
            "Score": {"type": "object", "properties": {"kind": {"$ref": "#/components/schemas/ScoreType"}}},
            "ScoreType": {"type": "string", "enum": ["A"]},
            "Gone": {"type": "integer"}
        }}});
        let new = json!({"components": {"schemas": {
            "CreditScore": {"type": "object", "description": "now documented", "properties": {"kind": {"$ref": "#/components/schemas/CreditScoreType"}}},
            "CreditScoreType": {"type": "string", "enum": ["A"]},
            "Fresh": {"type": "boolean"}
        }}});
        let renames = schema_renames(&old, &new);
        assert_eq!(
            renames,
            BTreeMap::from([
                ("Score".to_string(), "CreditScore".to_string()),
                ("ScoreType".to_string(), "CreditScoreType".to_string()),
            ])
        );
    }

    #[test]
    fn ambiguous_matches_are_not_renames() {
        let old =
            json!({"components": {"schemas": {"A": {"type": "string"}, "B": {"type": "string"}}}});
        let new = json!({"components": {"schemas": {"C": {"type": "string"}}}});
        assert!(schema_renames(&old, &new).is_empty());
    }
}
