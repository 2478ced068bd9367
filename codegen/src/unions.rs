//! Polymorphic members (`oneOf`/`anyOf`) decode to the variant the data is, and lose nothing.
//!
//! typify generates a polymorphic member as a `#[serde(untagged)]` enum: serde tries the
//! variants in order and takes the first that decodes. A variant whose members are all
//! optional decodes from anything, so it took every value and dropped the members it lacks (a
//! self-employment item lost its `businessName`); an unknown `$type` came back as the first
//! variant. typify would infer an internally tagged enum from one-value enums on the tag
//! property, but the open-enum stage hoists those into named, open enums first, and typify
//! ignores `discriminator` anyway. Serde's untagged and internally tagged enums also copy the
//! whole value into its buffer before they decide (issue 27). This stage takes the decision
//! away from typify and serde:
//!
//! 1. [`prepare`] (`unions/prepare.rs`), a schema transform after the down-convert: every
//!    `oneOf`/`anyOf` with at least one object variant (a component, a member, an item, a
//!    response) becomes a named component of its own whose variants are all references (inline
//!    object variants are hoisted as `<Union>Variant<i>`), `anyOf` is read as `oneOf` (one
//!    variant is decoded; see below), the sibling keywords that only restate the variants
//!    (`type: object`, `required: [<discriminator>]`) are dropped, and each object variant
//!    without `additionalProperties` keeps its unknown members (`additionalProperties: {}`).
//!    The component is marked [`UNION_MARK`] with what decoding needs: the discriminator's
//!    property and, for each value, the variant it names (the `mapping`; else a one-value `enum`
//!    or `const` of that property in the variant; else the variant's schema name, as OpenAPI
//!    defines an implicit mapping). A union this cannot handle (other sibling keywords, such as
//!    `properties` next to `oneOf`) is left to typify with a warning naming its JSON pointer.
//! 2. [`decode_unions`] (`unions/rust_code.rs`), a pass over the generated code: each marked
//!    enum gets a last variant `Unrecognized(crate::json::UnknownVariant)` and a `Deserialize`
//!    of its own. The value is first read as its JSON text (`crate::json::RawJson`: its bytes,
//!    once), then
//!    - with a discriminator: decoded as the variant its value names; a value no variant is
//!      named for (or no discriminator member) is kept whole as `Unrecognized`, never taken for
//!      another variant; a value that does not match the variant it names is a decode error;
//!    - without one: every variant is tried, and the one that keeps the object best wins: a
//!      variant that would drop a member is refused; of the others, the one that keeps the
//!      fewest members only as unknown, the first of equals. If no variant decodes without
//!      loss, the value is kept whole as `Unrecognized`. Nothing the service sends is lost.
//!
//!    Serializing is typify's untagged `Serialize`: a variant writes its members (the
//!    discriminator among them), `Unrecognized` writes the value as it came.
//!
//! Unions of scalars only (`type: [string, integer]` down-converted to `anyOf`) are left to
//! typify: serde's untagged decoding of a scalar is exact and cheap.

mod prepare;
mod rust_code;

pub use prepare::prepare;
pub use rust_code::decode_unions;

/// Extension on a union component: how its generated enum decodes (see the module docs).
///
/// `{"keyword": "oneOf"|"anyOf", "discriminator": {"propertyName": P, "values": {VALUE:
/// INDEX}}}`, `discriminator` absent for an untagged union; `INDEX` is the position of the
/// variant in the component's `oneOf`.
pub const UNION_MARK: &str = "x-creditdata-union";

/// Extension on a component hoisted out of a polymorphic member, giving its original JSON
/// pointer.
pub const HOISTED_UNION_MARK: &str = "x-creditdata-hoisted-from";
