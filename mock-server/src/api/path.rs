//! Path parameters, read by name into typed structs: a route whose template does not match its
//! handler's struct is a bug the mock reports (500), never a parameter read as empty.

use axum::extract::path::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

use crate::problem::Problem;

/// [`Path`] with the service's refusals: a value that does not parse is a validation problem
/// naming its parameter. Path structs hold `Uuid`s (which can fail to parse) and `String`s (which
/// cannot), and deny fields their route does not have.
pub struct ValidPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ValidPath<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(ValidPath(value)),
            Err(PathRejection::FailedToDeserializePathParams(error)) => Err(match error.kind() {
                ErrorKind::DeserializeError { key, value, .. }
                | ErrorKind::ParseErrorAtKey { key, value, .. } => {
                    Problem::invalid_field(key, format!("The value '{value}' is not a valid UUID."))
                }
                ErrorKind::InvalidUtf8InPathParam { .. } => {
                    Problem::bad_request(format!("The request path is malformed: {error}"))
                }
                _ => route_mismatch(&error.to_string()),
            }),
            Err(rejection) => Err(route_mismatch(&rejection.to_string())),
        }
    }
}

fn route_mismatch(reason: &str) -> Problem {
    Problem::internal(format!(
        "The route's path parameters do not match its handler's ({reason}); this is a bug in the mock."
    ))
}

/// `{sessionId}`
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionPath {
    /// The session.
    pub session_id: Uuid,
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use tower::ServiceExt as _;

    use super::*;

    async fn session_id(ValidPath(path): ValidPath<SessionPath>) -> String {
        path.session_id.to_string()
    }

    async fn status_of(template: &str, uri: &str) -> (StatusCode, String) {
        let app = Router::new().route(template, get(session_id));
        let response = app
            .oneshot(Request::get(uri).body(Body::empty()).expect("request"))
            .await
            .expect("response");
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 64 * 1024)
            .await
            .expect("body");
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    const ID: &str = "3f0d1f5e-7f58-4d5f-9a53-3c1e9b0f0a11";

    #[tokio::test]
    async fn a_parameter_is_read_by_its_name_or_the_route_is_a_bug() {
        assert_eq!(
            status_of("/s/{sessionId}", &format!("/s/{ID}")).await,
            (StatusCode::OK, ID.to_owned())
        );
        let (status, body) = status_of("/s/{sessionId}", "/s/12345").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            body.contains(r#""sessionId":["The value '12345' is not a valid UUID."]"#),
            "{body}"
        );
        // A template that spells the name otherwise, or has a parameter the handler does not
        // read, is the mock's bug: never an id read as empty.
        for (template, uri) in [
            ("/s/{sessionID}", format!("/s/{ID}")),
            ("/s/{sessionId}/{other}", format!("/s/{ID}/x")),
        ] {
            let (status, body) = status_of(template, &uri).await;
            assert_eq!(
                status,
                StatusCode::INTERNAL_SERVER_ERROR,
                "{template}: {body}"
            );
            assert!(body.contains("bug in the mock"), "{template}: {body}");
        }
    }
}
