//! Identity: the subject's attachments (mandate, proofs) and identity verifications with their
//! images.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use uuid::Uuid;

use super::download::download;
use super::path::{SessionPath, ValidPath};
use super::registration::Registration;
use crate::catalog;
use crate::problem::Problem;
use crate::state::{AppState, Context, read};

/// The attachments and identity verifications, by operationId.
pub fn handlers() -> Vec<Registration> {
    vec![
        Registration::new("GetAttachments", attachments),
        Registration::new("GetAttachmentContent", attachment_content),
        Registration::new("GetIdentityVerifications", identity_verifications),
        Registration::new("GetIdentityVerificationImages", verification_images),
        Registration::new(
            "GetIdentityVerificationImageContent",
            verification_image_content,
        ),
    ]
}

// The ids below are the service's own strings (matched case-insensitively), not parsed.

/// `{sessionId}/attachments/{attachmentId}`
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AttachmentPath {
    session_id: Uuid,
    attachment_id: String,
}

/// `{sessionId}/identity-verifications/{verificationId}`
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct VerificationPath {
    session_id: Uuid,
    verification_id: String,
}

/// `{sessionId}/identity-verifications/{verificationId}/images/{imageId}`
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct VerificationImagePath {
    session_id: Uuid,
    verification_id: String,
    image_id: String,
}

async fn attachments(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(context.view(&state.config).attachments()?).into_response())
}

async fn attachment_content(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<AttachmentPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    let view = context.view(&state.config);
    let id = path.attachment_id.as_str();
    for (data, _) in view.delivered(catalog::Dataset::Attachments) {
        let Some(identity) = &data.identity else {
            continue;
        };
        if let Some(spec) = identity
            .attachments
            .iter()
            .find(|a| a.id.to_string().eq_ignore_ascii_case(id))
        {
            let content = crate::files::attachment(view.dossier, view.record, data, spec)?;
            return Ok(download(content.to_vec(), spec.mime, &spec.file_name));
        }
    }
    Err(Problem::not_found(format!(
        "Session {} has no delivered attachment '{id}' (see GET .../attachments).",
        context.record.id
    )))
}

async fn identity_verifications(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(context.view(&state.config).identity_verifications()).into_response())
}

fn verification_not_found(context: &Context, id: &str) -> Problem {
    Problem::not_found(format!(
        "Session {} has no delivered identity verification '{id}' (see GET .../identity-verifications).",
        context.record.id
    ))
}

async fn verification_images(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<VerificationPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    let id = path.verification_id.as_str();
    context
        .view(&state.config)
        .verification_images(id)?
        .map(|images| Json(images).into_response())
        .ok_or_else(|| verification_not_found(&context, id))
}

async fn verification_image_content(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<VerificationImagePath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    let view = context.view(&state.config);
    let verification_id = path.verification_id.as_str();
    let image_id = path.image_id.as_str();
    let (data, _, verification) = view
        .verifications()
        .into_iter()
        .find(|(_, _, v)| v.id.to_string().eq_ignore_ascii_case(verification_id))
        .ok_or_else(|| verification_not_found(&context, verification_id))?;
    let image = verification
        .images
        .iter()
        .find(|image| image.id.to_string().eq_ignore_ascii_case(image_id))
        .ok_or_else(|| {
            Problem::not_found(format!(
                "Identity verification {verification_id} has no image '{image_id}'."
            ))
        })?;
    let content = crate::files::verification_image(view.dossier, data, verification, image)?;
    Ok(download(content.to_vec(), image.mime, &image.file_name))
}
