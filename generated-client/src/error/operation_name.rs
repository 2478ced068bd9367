//! How a message names the operation it is about: what `Error`, `ApiError` and `DecodeError`
//! share, below all three.

/// The operation's name for a message, `request` when unknown.
pub(super) fn op_name(operation: &Option<&'static str>) -> &'static str {
    operation.unwrap_or("request")
}
