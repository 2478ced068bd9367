//! A hand-written handler registered under the operationId of the operation it serves: its
//! method and path are the effective description's (`crate::operations` routes it), never
//! restated here.

use std::panic::Location;
use std::sync::Arc;

use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter, on};

use crate::state::AppState;

/// Makes the route of a handler for the method the description gives its operation.
type Route = Arc<dyn Fn(MethodFilter) -> MethodRouter<Arc<AppState>> + Send + Sync>;

/// One hand-written handler and the operationId it serves.
#[derive(Clone)]
pub struct Registration {
    operation_id: &'static str,
    registered_in: &'static str,
    route: Route,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("operation_id", &self.operation_id)
            .field("registered_in", &self.registered_in)
            .finish_non_exhaustive()
    }
}

impl Registration {
    /// `handler` serves the operation whose operationId is `operation_id`; the source file of
    /// the call is kept, for the error a description without that operation gets at start.
    #[track_caller]
    pub fn new<H, T>(operation_id: &'static str, handler: H) -> Registration
    where
        H: Handler<T, Arc<AppState>>,
        T: 'static,
    {
        Registration {
            operation_id,
            registered_in: Location::caller().file(),
            route: Arc::new(move |method| on(method, handler.clone())),
        }
    }

    /// The operationId it serves.
    pub fn operation_id(&self) -> &'static str {
        self.operation_id
    }

    /// The source file that registered it (`mock-server/src/api/sessions.rs`).
    pub fn registered_in(&self) -> &'static str {
        self.registered_in
    }

    /// The handler as the route of `method` (the one the description gives the operation).
    pub fn route(&self, method: MethodFilter) -> MethodRouter<Arc<AppState>> {
        (self.route)(method)
    }
}
