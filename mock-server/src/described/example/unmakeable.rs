//! Why no valid example could be made ([`Unmakeable`]): where in the answer and what, never a
//! value; and the cap on one answer's size.

/// The most one made-up answer holds: characters of its strings and member names, and 8 for
/// every other value. A schema that needs more (a `minLength` of millions) is refused with a
/// 501 rather than answered slowly.
pub const MAX_ANSWER_SIZE: usize = 1 << 20;

/// Why no valid example could be made: where in the answer (`$`, `items[0].name`) and what
/// (named by the schema's keywords; never a value made or received).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmakeable {
    /// The member, as the service names fields.
    pub at: String,
    /// What the mock could not make there.
    pub what: String,
}

impl std::fmt::Display for Unmakeable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {}: {}", self.at, self.what)
    }
}

impl std::error::Error for Unmakeable {}

pub(super) fn unmakeable(at: &str, what: &str) -> Unmakeable {
    Unmakeable {
        at: if at.is_empty() {
            "$".to_owned()
        } else {
            at.to_owned()
        },
        what: what.to_owned(),
    }
}

pub(super) fn too_large(at: &str) -> Unmakeable {
    unmakeable(
        at,
        &format!("an answer within the {MAX_ANSWER_SIZE} characters the mock makes up for one"),
    )
}

/// A member's place, as the service names fields: `items[0].name`.
pub(super) fn member_at(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_owned()
    } else {
        format!("{at}.{name}")
    }
}
