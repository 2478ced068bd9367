//! Property tests of the two decoders that read what a server sends byte by byte: the TSV
//! statement parser (`statement::parse_statement`) and the Base64 source-file decoder
//! (`source_file::decode_content`). Random and mutated inputs never make them panic, chunking
//! never changes what they read, and their errors never quote the data.
//!
//! Deterministic: a fixed seed (override with `PROPTEST_RNG_SEED`), a modest number of cases
//! per property for CI ([`DEFAULT_CASES`]); more on demand, e.g. `PROPTEST_CASES=20000 cargo test
//! -p creditdata-client --test decoder_properties`.

use base64::Engine as _;
use bytes::Bytes;
use creditdata_client::Error;
use creditdata_client::source_file::decode_content;
use creditdata_client::statement::{StatementRow, parse_statement};
use creditdata_client::types::SourceFileContent;
use futures::{StreamExt, stream};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Cases per property when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 128;

/// The seed when `PROPTEST_RNG_SEED` is not set.
const SEED: u64 = 0x8_7275_7374;

fn config() -> ProptestConfig {
    let defaults = ProptestConfig::default();
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let rng_seed = match std::env::var("PROPTEST_RNG_SEED") {
        Ok(_) => defaults.rng_seed,
        Err(_) => RngSeed::Fixed(SEED),
    };
    ProptestConfig {
        cases,
        rng_seed,
        // A failure prints its minimal input; the fixed seed finds it again.
        failure_persistence: None,
        ..defaults
    }
}

// ---------------------------------------------------------------------------------------------
// TSV statements
// ---------------------------------------------------------------------------------------------

/// Every data cell starts with this, so an error that quotes data shows it.
const DATA_MARK: &str = "dv9";

/// One outcome of the parser, comparable across chunkings: a row's values, or an error's path
/// and message.
#[derive(Debug, PartialEq)]
enum Item {
    Row(u64, Vec<String>),
    Failure(Option<String>, String),
}

fn parse(body: &[u8], chunk_sizes: &[usize]) -> Vec<Item> {
    let mut chunks = Vec::new();
    let mut rest = body;
    let mut sizes = chunk_sizes.iter().cycle();
    while !rest.is_empty() {
        let size = sizes
            .next()
            .copied()
            .unwrap_or(rest.len())
            .clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        chunks.push(Ok(Bytes::copy_from_slice(chunk)));
        rest = tail;
    }
    let rows: Vec<Result<StatementRow, Error>> =
        futures::executor::block_on(parse_statement(stream::iter(chunks)).collect());
    rows.into_iter()
        .map(|row| match row {
            Ok(row) => {
                assert_eq!(
                    row.len(),
                    row.columns().len(),
                    "a row with another number of fields than the header was yielded"
                );
                Item::Row(row.line(), row.values().to_vec())
            }
            Err(Error::Decode(decode)) => {
                assert!(
                    decode.body_snippet().is_empty(),
                    "a statement error kept body text: {decode:?}"
                );
                Item::Failure(decode.path.clone(), decode.message.clone())
            }
            Err(other) => panic!("the parser can only fail with a decode error: {other:?}"),
        })
        .collect()
}

/// A cell: plain text, or quoted text holding tabs, line breaks and quotes.
fn cell() -> impl Strategy<Value = String> {
    let text = "[a-zA-Z0-9 ,.;:€äöü-]{0,12}";
    prop_oneof![
        4 => text.prop_map(|t| format!("{DATA_MARK}{t}")),
        1 => (text, "[\t\r\n\"]{1,3}", text).prop_map(|(a, special, b)| {
            let inner = format!("{DATA_MARK}{a}{special}{b}").replace('"', "\"\"");
            format!("\"{inner}\"")
        }),
    ]
}

/// A well-formed statement: a header of 1..6 columns, up to 20 rows, mixed line ends, maybe a
/// byte order mark.
fn statement() -> impl Strategy<Value = Vec<u8>> {
    (1usize..6, any::<bool>()).prop_flat_map(|(columns, bom)| {
        let row = prop::collection::vec(cell(), columns);
        let rows = prop::collection::vec(
            (row, prop_oneof![Just("\n"), Just("\r\n"), Just("\r")]),
            0..20,
        );
        rows.prop_map(move |rows| {
            let mut text = if bom {
                "\u{feff}".to_string()
            } else {
                String::new()
            };
            let header: Vec<String> = (0..columns).map(|i| format!("Col{i}")).collect();
            text.push_str(&header.join("\t"));
            text.push('\n');
            for (cells, end) in rows {
                text.push_str(&cells.join("\t"));
                text.push_str(end);
            }
            text.into_bytes()
        })
    })
}

/// What a mutation does at a position of a document.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
}

/// Bytes that matter to the parsers: separators, line ends, quotes, the byte order mark's,
/// invalid and partial UTF-8, Base64's padding and the URL-safe alphabet's.
const SPECIAL_BYTES: [u8; 17] = [
    b'\t', b'\r', b'\n', b'"', 0x00, 0xef, 0xbb, 0xbf, 0xff, 0xc3, 0x80, b'=', b'+', b'/', b'-',
    b'_', b' ',
];

/// A special byte, or any byte.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![prop::sample::select(SPECIAL_BYTES.to_vec()), any::<u8>()]
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    let at = any::<prop::sample::Index>();
    let one = prop_oneof![
        (at.clone(), any::<u8>())
            .prop_map(|(i, mask)| Mutation::Flip(i.index(usize::MAX), mask | 1)),
        (at.clone(), interesting_byte())
            .prop_map(|(i, b)| Mutation::Insert(i.index(usize::MAX), b)),
        at.clone()
            .prop_map(|i| Mutation::Delete(i.index(usize::MAX))),
        at.prop_map(|i| Mutation::Truncate(i.index(usize::MAX))),
    ];
    prop::collection::vec(one, 0..8)
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for mutation in mutations {
        let len = bytes.len();
        match *mutation {
            Mutation::Flip(at, mask) if len > 0 => bytes[at % len] ^= mask,
            Mutation::Insert(at, byte) => bytes.insert(at % (len + 1), byte),
            Mutation::Delete(at) if len > 0 => {
                bytes.remove(at % len);
            }
            Mutation::Truncate(at) => bytes.truncate(at % (len + 1)),
            _ => {}
        }
    }
    bytes
}

fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..64, 1..8)
}

/// Not random: every input of up to three special bytes (or `a`), whole and byte by byte.
/// Partial byte order marks, lone quotes and line ends at the very end of a body are rare in
/// random input and cheap to try exhaustively.
#[test]
fn every_short_input_of_special_bytes_is_read_the_same_in_any_chunking() {
    let alphabet: Vec<u8> = SPECIAL_BYTES.iter().copied().chain([b'a']).collect();
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new()];
    let mut longest: Vec<Vec<u8>> = vec![Vec::new()];
    for _ in 0..3 {
        longest = longest
            .iter()
            .flat_map(|prefix| {
                alphabet.iter().map(move |b| {
                    let mut next = prefix.clone();
                    next.push(*b);
                    next
                })
            })
            .collect();
        inputs.extend(longest.iter().cloned());
    }
    for input in &inputs {
        let whole = parse(input, &[input.len().max(1)]);
        assert_eq!(whole, parse(input, &[1]), "{input:?}");
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic_the_statement_parser(
        body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..4096),
            // Short inputs made of the bytes the parser treats specially (a partial byte order
            // mark, lone quotes, line ends) are where edge cases hide.
            prop::collection::vec(interesting_byte(), 0..16),
        ],
        sizes in chunk_sizes(),
    ) {
        let whole = parse(&body, &[body.len().max(1)]);
        let chunked = parse(&body, &sizes);
        prop_assert_eq!(whole, chunked);
    }

    #[test]
    fn mutated_statements_never_panic_nor_quote_their_data(
        document in statement(),
        changes in mutations(),
        sizes in chunk_sizes(),
    ) {
        let body = mutate(document, &changes);
        let whole = parse(&body, &[body.len().max(1)]);
        for item in &whole {
            if let Item::Failure(_, message) = item {
                prop_assert!(!message.contains(DATA_MARK), "an error quotes data: {}", message);
            }
        }
        prop_assert_eq!(whole, parse(&body, &sizes));
    }

    #[test]
    fn well_formed_statements_are_read_whole_in_any_chunking(
        document in statement(),
        sizes in chunk_sizes(),
    ) {
        let items = parse(&document, &sizes);
        prop_assert!(
            items.iter().all(|item| matches!(item, Item::Row(..))),
            "a well-formed statement failed: {:?}", items
        );
        let all_data = items.iter().all(|item| match item {
            Item::Row(_, values) => values.iter().all(|v| v.starts_with(DATA_MARK)),
            Item::Failure(..) => false,
        });
        prop_assert!(all_data, "a cell was read wrong: {:?}", items);
    }
}

// ---------------------------------------------------------------------------------------------
// Base64 source files
// ---------------------------------------------------------------------------------------------

fn content(encoded: &str, size: Option<i64>) -> SourceFileContent {
    serde_json::from_value(serde_json::json!({
        "contentBase64": encoded,
        "name": "bureau.xml",
        "type": "XML",
        "sourceId": "bureau",
        "sizeInBytes": size,
    }))
    .expect("a SourceFileContent")
}

/// Base64 text with ASCII whitespace inserted at `breaks` (positions modulo the length).
fn with_whitespace(encoded: &str, breaks: &[(prop::sample::Index, char)]) -> String {
    let mut chars: Vec<char> = encoded.chars().collect();
    for (at, space) in breaks {
        let position = at.index(chars.len() + 1);
        chars.insert(position, *space);
    }
    chars.into_iter().collect()
}

fn ascii_whitespace() -> impl Strategy<Value = char> {
    prop::sample::select(vec![' ', '\t', '\r', '\n'])
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_never_panics_the_base64_decoder(
        text in ".{0,512}",
        size in prop::option::of(any::<i64>()),
    ) {
        match decode_content(&content(&text, size)) {
            Ok(decoded) => {
                if let Some(size) = size {
                    prop_assert_eq!(decoded.bytes.len() as i64, size);
                }
            }
            Err(Error::Decode(decode)) => {
                prop_assert!(decode.body_snippet().is_empty());
                prop_assert!(decode.path.is_some());
            }
            Err(other) => prop_assert!(false, "not a decode error: {:?}", other),
        }
    }

    #[test]
    fn encoded_bytes_come_back_with_or_without_padding_and_line_breaks(
        bytes in prop::collection::vec(any::<u8>(), 0..1024),
        padded in any::<bool>(),
        breaks in prop::collection::vec((any::<prop::sample::Index>(), ascii_whitespace()), 0..16),
    ) {
        let encoded = if padded {
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        } else {
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes)
        };
        let text = with_whitespace(&encoded, &breaks);
        let decoded = decode_content(&content(&text, Some(bytes.len() as i64)))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(decoded.bytes, bytes);
    }

    #[test]
    fn mutated_encodings_never_panic_and_name_an_offset_or_a_length(
        bytes in prop::collection::vec(any::<u8>(), 1..512),
        changes in mutations(),
    ) {
        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes).into_bytes();
        let mutated = mutate(encoded, &changes);
        let text = String::from_utf8_lossy(&mutated);
        match decode_content(&content(&text, None)) {
            Ok(_) => {}
            Err(Error::Decode(decode)) => {
                let message = &decode.message;
                prop_assert!(
                    message.contains("offset")
                        || message.contains("Base64 characters")
                        || message.contains("padding"),
                    "{}", message
                );
                // At most one character of the content is quoted, never a run of it.
                let opening: String = text.chars().take(8).collect();
                prop_assert!(
                    opening.chars().count() < 8 || !message.contains(&opening),
                    "{}", message
                );
            }
            Err(other) => prop_assert!(false, "not a decode error: {:?}", other),
        }
    }
}
