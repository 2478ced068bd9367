//! The `/v1` routes: every operation of the effective description at the method and path the
//! description gives it, served by the hand-written handler registered under its operationId
//! (`crate::api`), with the description's parameter checks in front of it, or else from the
//! description itself (`crate::described::handler`). Nothing here names an operation: a
//! release's new operation is served from the description the day it is generated, and a
//! registration the description has no operation for stops the start with an error that names
//! it and the file that registered it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware;
use axum::routing::{MethodFilter, on};

use crate::api::{self, Registration};
use crate::described::handler::{self, Compiled};
use crate::described::parameters::{self, Parameters};
use crate::described::{Description, DescriptionError, OperationRef, operations};
use crate::state::AppState;

/// Who serves an operation.
#[derive(Debug)]
pub enum Server {
    /// The hand-written handler registered under its operationId.
    HandWritten(Registration),
    /// The description ([`handler`]).
    Described,
}

/// Every operation of `description`, in document order, with who serves it. Refuses a
/// registration whose operationId the description lacks, and two registrations of one.
pub fn plan(
    description: &Description,
    registrations: Vec<Registration>,
) -> Result<Vec<(OperationRef, Server)>, DescriptionError> {
    let mut registered: HashMap<&'static str, Registration> = HashMap::new();
    for registration in registrations {
        if let Some(first) = registered.get(registration.operation_id()) {
            return Err(DescriptionError::RegisteredTwice {
                operation_id: registration.operation_id().to_owned(),
                first: first.registered_in().to_owned(),
                second: registration.registered_in().to_owned(),
            });
        }
        registered.insert(registration.operation_id(), registration);
    }
    let all = operations(&description.document);
    let mut unknown: Vec<&Registration> = registered
        .values()
        .filter(|registration| !all.iter().any(|op| op.id == registration.operation_id()))
        .collect();
    unknown.sort_by_key(|registration| registration.operation_id());
    if let Some(registration) = unknown.first() {
        return Err(DescriptionError::UnknownOperation {
            operation_id: registration.operation_id().to_owned(),
            registered_in: registration.registered_in().to_owned(),
        });
    }
    Ok(all
        .into_iter()
        .map(|operation| {
            let server = match registered.remove(operation.id.as_str()) {
                Some(registration) => Server::HandWritten(registration),
                None => Server::Described,
            };
            (operation, server)
        })
        .collect())
}

/// The routes of every operation of the state's description (the caller adds the bearer check
/// and the `api-version` recording around them).
pub fn routes(state: &Arc<AppState>) -> Result<Router<Arc<AppState>>, DescriptionError> {
    let description = &state.description;
    let document = &description.document;
    let mut routed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut hand_written = Router::new();
    let mut described = Vec::new();
    for (operation, server) in plan(description, api::handlers())? {
        check_routable(&operation.path)?;
        if !routed.insert((operation.path.clone(), operation.method.to_string())) {
            continue;
        }
        let method = method_filter(&operation)?;
        match server {
            Server::HandWritten(registration) => {
                // The parameters the description gives the operation are checked before the
                // handler's own code runs (after the bearer check, which wraps everything).
                let parameters = Arc::new(Parameters::of(document, &operation)?);
                let route = registration
                    .route(method)
                    .route_layer(middleware::from_fn_with_state(
                        parameters,
                        parameters::check_in_front,
                    ));
                hand_written = hand_written.route(&operation.path, route);
            }
            Server::Described => described.push((operation, method)),
        }
    }
    // An operation taking an entry of a hand-written listing reads that listing through the
    // hand-written routes.
    let listings = hand_written.clone().with_state(Arc::clone(state));
    let served: Vec<OperationRef> = described.iter().map(|(op, _)| op.clone()).collect();
    let mut router = hand_written;
    for (operation, method) in described {
        let compiled =
            Arc::new(Compiled::new(document, &operation)?.with_listing(&served, &listings));
        router = router.route(
            &operation.path,
            on(
                method,
                move |State(state): State<Arc<AppState>>, request: Request| {
                    let compiled = Arc::clone(&compiled);
                    async move { handler::serve(state, compiled, request).await }
                },
            ),
        );
    }
    Ok(router)
}

/// The method of `operation` as a route's method filter.
fn method_filter(operation: &OperationRef) -> Result<MethodFilter, DescriptionError> {
    MethodFilter::try_from(operation.method.clone()).map_err(|_| DescriptionError::Path {
        path: operation.path.clone(),
        reason: format!("the method {} cannot be routed", operation.method),
    })
}

/// Refuses what axum's router would panic on: a segment that starts with `:` or `*`, or a
/// parameter that is not a whole segment.
fn check_routable(path: &str) -> Result<(), DescriptionError> {
    let refuse = |reason: &str| {
        Err(DescriptionError::Path {
            path: path.to_owned(),
            reason: reason.to_owned(),
        })
    };
    for segment in path.split('/').skip(1) {
        if segment.starts_with(':') || segment.starts_with('*') {
            return refuse("a segment starts with ':' or '*'");
        }
        let opens = segment.matches('{').count();
        let closes = segment.matches('}').count();
        if opens != closes
            || opens > 1
            || (opens == 1 && !(segment.starts_with('{') && segment.ends_with('}')))
        {
            return refuse("a path parameter is not a whole segment");
        }
        if segment == "{}" || segment.starts_with("{*") {
            return refuse("a path parameter has no name");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn paths_axum_cannot_route_are_refused() {
        assert!(check_routable("/v1/sessions/{sessionId}/employment-histories").is_ok());
        for path in ["/v1/:id", "/v1/{a}.{b}", "/v1/x{id}", "/v1/{*rest}"] {
            let error = check_routable(path).expect_err(path).to_string();
            assert!(error.contains(path), "{error}");
        }
    }

    fn embedded() -> Description {
        Description::load(None).expect("the embedded description")
    }

    #[test]
    fn each_registered_handler_serves_its_operation_and_the_description_the_rest() {
        let description = embedded();
        let registrations = api::handlers();
        let ids: Vec<&str> = registrations.iter().map(|r| r.operation_id()).collect();
        let planned = plan(&description, registrations.clone()).expect("the mock's handlers");
        assert_eq!(planned.len(), operations(&description.document).len());
        for (operation, server) in &planned {
            match server {
                Server::HandWritten(registration) => {
                    assert_eq!(registration.operation_id(), operation.id);
                }
                Server::Described => assert!(
                    !ids.contains(&operation.id.as_str()),
                    "{} is registered but served from the description",
                    operation.id
                ),
            }
        }
        // Every registration serves exactly one operation.
        let served = planned
            .iter()
            .filter(|(_, server)| matches!(server, Server::HandWritten(_)))
            .count();
        assert_eq!(served, ids.len());

        // Without a registration, the same description is served from itself.
        let planned = plan(&description, Vec::new()).expect("no handlers");
        assert!(
            planned
                .iter()
                .all(|(_, server)| matches!(server, Server::Described))
        );
    }

    #[test]
    fn a_registration_the_description_lacks_stops_the_start_naming_it_and_its_file() {
        let mut document: Value = (*embedded().document).clone();
        let registrations = api::handlers();
        let renamed = registrations[0].operation_id();
        let operation = operations(&document)
            .into_iter()
            .find(|op| op.id == renamed)
            .expect("the registered operation");
        document
            .pointer_mut(&operation.pointer)
            .expect("its node")
            .as_object_mut()
            .expect("an object")
            .insert("operationId".into(), json!("RenamedByTheVendor"));
        let description = Description::load(Some(Arc::new(document))).expect("a description");
        let error = plan(&description, registrations)
            .expect_err("a registration without an operation")
            .to_string();
        assert!(error.contains(&format!("operationId {renamed}")), "{error}");
        assert!(error.contains("src/api/"), "{error}");
        assert!(error.contains("dropped or renamed"), "{error}");
    }

    #[test]
    fn two_registrations_of_one_operation_are_refused() {
        let description = embedded();
        let mut registrations = api::handlers();
        registrations.push(registrations[0].clone());
        let error = plan(&description, registrations)
            .expect_err("a second registration")
            .to_string();
        assert!(error.contains("two hand-written handlers"), "{error}");
    }
}
