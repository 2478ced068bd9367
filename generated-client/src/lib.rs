//! Typed async client for the consumer credit-data service.

#![warn(missing_docs)]

#[allow(clippy::all, missing_docs, unused_imports)]
mod generated;

pub mod auth;
pub mod config;
pub mod download;
pub mod error;
pub mod operation;
pub mod paging;
pub mod retry;
pub mod runtime;
pub mod source_file;
pub mod statement;
pub mod wait;

pub use config::{ClientBuilder, Environment};
pub use error::{Error, Result};
pub use generated::*;
