//! The effective description the mock serves: the embedded one, or one given at start.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::members::SessionMembers;
use super::operations::{DescriptionError, operations};

/// The effective description the mock serves, as a document and its operations.
pub struct Description {
    /// The OpenAPI 3.0 document.
    pub document: Arc<Value>,
    /// What the Session and its create and update bodies declare beyond the hand-written view.
    pub members: SessionMembers,
}

impl std::fmt::Debug for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Description")
            .field("operations", &operations(&self.document).len())
            .finish_non_exhaustive()
    }
}

/// The description embedded at build time (`spec/openapi.effective.json`), parsed once.
fn embedded() -> Result<Arc<Value>, DescriptionError> {
    static EMBEDDED: OnceLock<Result<Arc<Value>, String>> = OnceLock::new();
    EMBEDDED
        .get_or_init(|| {
            serde_json::from_slice(crate::documents::EFFECTIVE_JSON)
                .map(Arc::new)
                .map_err(|error| error.to_string())
        })
        .clone()
        .map_err(DescriptionError::NotJson)
}

impl Description {
    /// `document`, or the embedded effective description.
    pub fn load(document: Option<Arc<Value>>) -> Result<Description, DescriptionError> {
        let document = match document {
            Some(document) => document,
            None => embedded()?,
        };
        let members = SessionMembers::from_description(&document)?;
        Ok(Description { document, members })
    }
}
