//! Editing a JSON object without reordering its keys. serde_json's `shift_insert` panics when
//! it moves an existing key to the end, and `remove` is `swap_remove`: keys stay where their
//! author put them (and diffs stay readable) only if the map is rebuilt.

use serde_json::{Map, Value};

/// Replaces the member `at` by `entries`, in its place; members elsewhere with the keys of
/// `entries` are removed. Without `at`, `entries` are appended.
pub(crate) fn splice(map: &mut Map<String, Value>, at: &str, entries: Vec<(String, Value)>) {
    let had_at = map.contains_key(at);
    let mut entries = Some(entries);
    let mut rebuilt = Map::new();
    let new_keys: Vec<String> = entries.iter().flatten().map(|(k, _)| k.clone()).collect();
    for (key, value) in std::mem::take(map) {
        if key == at {
            rebuilt.extend(entries.take().into_iter().flatten());
        } else if !new_keys.contains(&key) {
            rebuilt.insert(key, value);
        }
    }
    if !had_at {
        rebuilt.extend(entries.take().into_iter().flatten());
    }
    *map = rebuilt;
}

/// Sets `key` in place if present, else inserts it right after `anchor` (at the end without
/// `anchor`).
pub(crate) fn set_after(map: &mut Map<String, Value>, anchor: &str, key: &str, value: Value) {
    if let Some(slot) = map.get_mut(key) {
        *slot = value;
    } else if let Some(anchor_value) = map.get(anchor).cloned() {
        splice(
            map,
            anchor,
            vec![(anchor.to_string(), anchor_value), (key.to_string(), value)],
        );
    } else {
        map.insert(key.to_string(), value);
    }
}
