//! A JSON answer as the service's bytes: taken as it arrives into an unnamed temporary file
//! ([`spool()`]), read once by a streaming visitor that keeps only what a command needs (its
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
//!
//! The parts, bottom up: [`entries`] what a read keeps, [`visitor`] the streaming reader over
//! serde_json (bounded entry by entry), this module [`read`]; [`spool()`] takes the bytes.

mod entries;
mod spool;
mod visitor;

use std::io::{self, Read};

// What a read keeps is this module's vocabulary: `crate::answer::Entries`, `MAX_ENTRY_BYTES`, ...
pub use entries::*;
pub use spool::{SpoolError, Spooled, spool};
use visitor::{AnswerVisitor, Budget, Counted, TOO_MANY_PROVIDERS};

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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::test_support::peak_during;
    use creditdata_client::session_datasets::Dataset;

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
