//! The hand-written handlers of the `/v1` operations, one module per part of the API, each
//! registering its handlers under their operationIds ([`Registration`]): sessions (and the
//! package catalog), source files, bank data, identity, credit data. Which method and path each
//! serves is the effective description's; `crate::operations` routes them and serves every
//! operation none registers from the description. Path parameters are read in [`path`], request
//! bodies checked in [`validate`], downloads answered by [`download`].

mod bank;
mod credit;
mod download;
mod identity;
pub mod path;
mod registration;
mod sessions;
mod source_files;
mod validate;

pub use registration::Registration;

/// Every hand-written handler, under the operationId it serves.
pub fn handlers() -> Vec<Registration> {
    [
        sessions::handlers(),
        source_files::handlers(),
        bank::handlers(),
        identity::handlers(),
        credit::handlers(),
    ]
    .concat()
}
