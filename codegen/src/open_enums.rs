//! Response enums stay open; request enums stay strict.
//!
//! The service adds enum values without notice (the categorization summary already sends
//! `SOME_DATA_MISSING`, which its description does not list). typify generates closed Rust enums,
//! so one unknown value would fail a whole response. This stage makes every string enum that a
//! response can carry *open*: its Rust type gains a last variant, `Unrecognized(String)`, that
//! keeps any value the description does not list. Requests stay strict: a request can only carry
//! values the description lists.
//!
//! The mechanism has two halves, both here so they cannot drift apart:
//!
//! 1. [`prepare`] (`open_enums/prepare.rs`), a schema transform before generation. It works out which named schemas a
//!    request can reach and which a response can reach. An enum reachable from both sides (and
//!    every schema that leads to one from both sides) is split: responses keep the original,
//!    requests get a copy named `<Name>Input`, marked `x-creditdata-request-variant-of`. String
//!    enums written inline in response schemas are first hoisted into named components so that
//!    each has a stable Rust name. Every response-side string enum is marked
//!    `x-creditdata-open-enum: true`. The effective document therefore shows exactly what the
//!    generator saw.
//! 2. [`open_response_enums`] (`open_enums/rust_code.rs`), a pass over the generated syntax tree. For each marked enum it
//!    appends `#[serde(untagged)] Unrecognized(String)`, drops `Copy`, and replaces typify's
//!    `Display`/`FromStr`/`TryFrom` impls (which reject unknown values) with infallible ones plus
//!    `as_str()` and `is_known()`.

mod prepare;
mod rust_code;

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;

pub use prepare::prepare;
pub use rust_code::open_response_enums;

/// Extension marking a response-side enum that the generated code keeps open.
pub const OPEN_ENUM_MARK: &str = "x-creditdata-open-enum";
/// Extension on a request-side copy, naming the response-side schema it was copied from.
pub const REQUEST_VARIANT_MARK: &str = "x-creditdata-request-variant-of";
/// Extension on a component hoisted out of an inline schema, giving its original JSON pointer.
pub const HOISTED_MARK: &str = "x-creditdata-hoisted-from";
/// Suffix of the request-side copies.
pub const REQUEST_SUFFIX: &str = "Input";

/// What [`prepare`] did to the document, and what the code pass must do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenEnumPlan {
    /// Component names of the enums whose Rust types get an `Unrecognized(String)` variant.
    pub open: BTreeSet<String>,
    /// Request-side copies: copy name → original name.
    pub request_variants: BTreeMap<String, String>,
    /// Inline enums moved into components: new component name → original JSON pointer.
    pub hoisted: BTreeMap<String, String>,
}

/// A document the stage cannot transform.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OpenEnumError {
    #[error(
        "{pointer}: the request-side copy of schema `{original}` would be named `{wanted}`, but a \
         schema of that name already exists; rename one of them with an overlay"
    )]
    NameTaken {
        pointer: String,
        original: String,
        wanted: String,
    },
    #[error(
        "generated code has no enum `{rust_name}` for the open schema `{schema}`: the generator \
         named it differently; this is a creditdata-codegen bug, please report it"
    )]
    EnumNotFound { schema: String, rust_name: String },
    #[error(
        "generated code has no `types` module: this is a creditdata-codegen bug, please report it"
    )]
    NoTypesModule,
}

/// The Rust name typify gives a component schema.
pub fn rust_type_name(schema_name: &str) -> String {
    schema_name.to_upper_camel_case()
}
