//! The effective description as the mock reads it, and the operations no hand-written handler
//! serves, served from it.
//!
//! Bottom up: [`schema`] (checking a value against a schema of the description, refusals worded
//! as the service words them), [`operations`] (every operation, the Session path, why a
//! description cannot be served), [`example`] (a schema-valid, deterministic example of a
//! schema), [`members`] (the Session members only the description knows), [`description`] (the
//! document the mock serves), [`parameters`] (each operation's path, query and header parameters
//! checked against their schemas, also in front of every hand-written handler). Those know
//! nothing of the mock's state; this module re-exports their names.
//!
//! Above the state (`crate::state`), the serving half: [`entries`] (an operation taking one
//! entry of a listing: 404 unless the listing gives it) and [`handler`] (one operation served
//! from the description). No module here re-exports them: `crate::operation_routes` names them.
//!
//! Which operations are hand-written is not listed here: a hand-written handler registers under
//! its operationId (`crate::api`), and every other operation is served through [`handler`]. A
//! vendor release that adds a dataset is answered the day it is generated: authenticated, 404
//! for an unknown session, validated against its schema, and answered with a schema-valid
//! example seeded by the session and the operation, whose `sources` follow the session's
//! providers (`crate::views`).

pub mod description;
pub mod entries;
pub mod example;
pub mod handler;
pub mod members;
pub mod operations;
pub mod parameters;
pub mod schema;

pub use description::Description;
pub use members::MAX_MEMBER_DEPTH;
pub use operations::{DescriptionError, OperationRef, operations};
