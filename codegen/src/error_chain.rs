//! One line for an error and its causes, for messages that list several errors.

use std::error::Error;

/// The error and its sources, `: `-separated, each cause once. Every error type of this crate
/// keeps its `Display` short and hands its cause to `source()`; some foreign ones (hyper's)
/// repeat a cause in their own message, so a cause already shown is not shown again.
pub fn error_chain(error: &dyn Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(err) = next {
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}
