//! The rows of the request-limit tables (`generated_limits.rs`, generated from the description):
//! what a row says, below both the tables and the checks that read them.

/// An integer query parameter's allowed range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryRange {
    /// The operationId.
    pub operation: &'static str,
    /// The parameter's name on the wire.
    pub parameter: &'static str,
    /// Smallest allowed value.
    pub minimum: i64,
    /// Largest allowed value.
    pub maximum: i64,
}

/// An array member of a JSON request body and how many items it may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayLength {
    /// The operationId.
    pub operation: &'static str,
    /// JSON pointer of the member in the body; `*` stands for every item of an array.
    pub pointer: &'static str,
    /// Fewest items.
    pub min_items: usize,
    /// Most items, when bounded.
    pub max_items: Option<usize>,
}

/// A string member of a JSON request body that must be an e-mail address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmailMember {
    /// The operationId.
    pub operation: &'static str,
    /// JSON pointer of the member in the body.
    pub pointer: &'static str,
}
