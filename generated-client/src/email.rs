//! Leaf: what `format: email` means, shared by the generated types' `parse()` and the request
//! limits (layer 0, so that the generated types may call it).

/// Whether `text` is an e-mail address as `format: email` means it: an RFC 5321 mailbox
/// (`local@domain`, the domain possibly an address literal), without a display name.
pub fn is_email_address(text: &str) -> bool {
    email_address::EmailAddress::parse_with_options(
        text,
        email_address::Options::default().without_display_text(),
    )
    .is_ok()
}
