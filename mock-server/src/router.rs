//! How a request travels: the host check and request log around everything, the realism
//! layers, then the `/v1` API behind the bearer check, the `/_mock` control endpoints behind the
//! cross-site guard, the identity provider and the served descriptions, each with its body
//! limit; every error response leaves as problem details.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::auth::{self, REALM};
use crate::body_limits::{API_BODY_LIMIT, CONTROL_BODY_LIMIT, TOKEN_BODY_LIMIT};
use crate::described::DescriptionError;
use crate::documents::{OPENAPI_JSON, OPENAPI_YAML};
use crate::guard::{self, HostPolicy};
use crate::problem::Problem;
use crate::realism;
use crate::state::AppState;
use crate::{api_versions, control, operation_routes};

/// The body limit of the route at `path` (the routers below are limited the same way).
fn body_limit(path: &str) -> usize {
    if path.starts_with("/v1/") {
        API_BODY_LIMIT
    } else if path.starts_with(&format!("/realms/{REALM}/")) {
        TOKEN_BODY_LIMIT
    } else {
        CONTROL_BODY_LIMIT
    }
}

/// The whole application. Every `/v1` operation of the effective description is served
/// ([`operation_routes`]: by its registered hand-written handler, else from the description),
/// behind the bearer check and the realism layers.
pub fn router(
    state: Arc<AppState>,
    policy: Arc<HostPolicy>,
    realism: &realism::Layers,
) -> Result<Router, DescriptionError> {
    let api = operation_routes::routes(&state)?
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            auth::require_bearer,
        ))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state.api_versions),
            api_versions::record,
        ));
    let api = realism
        .around_api(api)
        .layer(DefaultBodyLimit::max(API_BODY_LIMIT));
    let control = control::routes()
        .merge(realism.routes())
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&policy),
            guard::refuse_cross_site,
        ))
        .layer(DefaultBodyLimit::max(CONTROL_BODY_LIMIT));
    let identity = auth::routes().layer(DefaultBodyLimit::max(TOKEN_BODY_LIMIT));
    let documents = Router::new()
        .route("/openapi/v1.json", get(openapi_json))
        .route("/openapi/v1.yaml", get(openapi_yaml));
    let app = Router::new()
        .merge(api)
        .merge(control)
        .merge(identity)
        .with_state(state)
        .merge(documents)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(CONTROL_BODY_LIMIT))
        .layer(middleware::from_fn(problem_bodies))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panic_response,
        ));
    Ok(realism
        .around_everything(app)
        .layer(middleware::from_fn_with_state(
            policy,
            guard::refuse_foreign_hosts,
        ))
        .layer(middleware::from_fn(log_requests)))
}

async fn openapi_json() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        OPENAPI_JSON,
    )
        .into_response()
}

async fn openapi_yaml() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/yaml"),
        )],
        OPENAPI_YAML,
    )
        .into_response()
}

async fn not_found(request: Request) -> Problem {
    Problem::not_found(format!(
        "No resource at {}; the API lives under /v1 (see /openapi/v1.json).",
        request.uri().path()
    ))
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    Problem::internal("The mock failed while handling this request; this is a bug in the mock.")
        .into_response()
}

/// Turns any error response without a JSON body (axum's own rejections, 405s) into problem
/// details, keeping its status and headers.
async fn problem_bodies(request: Request, next: Next) -> Response {
    let limit = body_limit(request.uri().path());
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    // The identity provider's pages answer people in HTML, errors included.
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/html"));
    // A 413 is rebuilt even when JSON, so that it always names the limit of its route.
    if (is_json || is_html) && status != StatusCode::PAYLOAD_TOO_LARGE {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 16 * 1024)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let problem = match status {
        StatusCode::METHOD_NOT_ALLOWED => Problem::method_not_allowed(
            "This method is not allowed on this resource; the Allow header lists those that are.",
            None,
        ),
        StatusCode::PAYLOAD_TOO_LARGE => Problem::payload_too_large(format!(
            "The request body is larger than the {limit} bytes this endpoint reads."
        )),
        StatusCode::NOT_FOUND => Problem::not_found(if text.is_empty() {
            "Not found.".into()
        } else {
            text
        }),
        status if status.is_server_error() => Problem::internal(text),
        _ => Problem::bad_request(if text.is_empty() {
            status.to_string()
        } else {
            text
        }),
    };
    let rebuilt = problem.into_response();
    let (new_parts, new_body) = rebuilt.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    for (name, value) in new_parts.headers.iter() {
        parts.headers.insert(name.clone(), value.clone());
    }
    let mut response = Response::from_parts(parts, Body::new(new_body));
    *response.status_mut() = status;
    response
}

async fn log_requests(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::debug!(
        %method,
        %path,
        status = response.status().as_u16(),
        micros = started.elapsed().as_micros() as u64,
        "request"
    );
    response
}
