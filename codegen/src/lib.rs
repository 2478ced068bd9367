//! The creditdata generation pipeline, one module per stage.
//!
//! ```text
//! spec/openapi.{json,yaml} -> overlay -> operation names -> downconvert -> unions -> open enums -> links -> preflight -> generate -> generated-client
//! ```
//!
//! This crate is a library: it parses no command line. `xtask` is its front end.

pub mod behaviour;
pub mod call_methods;
pub mod datasets;
pub mod deprecations;
pub mod diff;
pub mod document;
pub mod downconvert;
mod error_chain;
pub mod fetch;
pub mod field_messages;
pub mod forward_compatible;
pub mod generate;
pub mod issuers;
pub mod lean_requests;
pub mod links;
pub mod listings;
pub mod made_release;
pub mod open_enums;
pub mod operation_names;
pub mod overlay;
pub mod path_segments;
pub mod pipeline;
pub mod preflight;
pub mod readiness;
pub mod request_limits;
pub mod unions;
pub mod unknown_members;

pub use error_chain::error_chain;
