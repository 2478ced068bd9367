//! Identity: the verifications of the subject's identity, their images, and the subject's
//! attachments.

use crate::built::Built;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use creditdata_client::types::{
    Attachment, AttachmentsResponse, DataPackageInput, IdentityVerification,
    IdentityVerificationImage, IdentityVerificationImagesResponse, IdentityVerificationsResponse,
    Source, SourceStatus,
};
use serde_json::json;

use super::{View, object};
use crate::catalog::{Dataset, Provider};
use crate::data::{CountryData, Verification};
use crate::files;
use crate::problem::Problem;

impl View<'_> {
    /// Delivered verifications with their provider and country.
    pub fn verifications(&self) -> Vec<(&CountryData, &'static Provider, &Verification)> {
        self.delivered(Dataset::IdentityVerifications)
            .into_iter()
            .filter_map(|(data, provider)| {
                data.identity
                    .as_ref()
                    .map(|identity| (data, provider, &identity.verification))
            })
            .collect()
    }

    fn verified_at(&self, code: &str) -> DateTime<Utc> {
        self.consent_of(code, DataPackageInput::Identification) - ChronoDuration::minutes(3)
    }

    /// `GET .../identity-verifications`
    pub fn identity_verifications(&self) -> IdentityVerificationsResponse {
        let items = self
            .verifications()
            .into_iter()
            .map(|(data, provider, verification)| {
                IdentityVerification::builder()
                    .id(Some(verification.id.to_string()))
                    .source_id(Some(provider.id.to_owned()))
                    .extra(object(json!({
                        "countryCode": data.country.code,
                        "method": verification.method,
                        "status": "APPROVED",
                        "verifiedAtUtc": self.verified_at(data.country.code),
                        "document": verification.document.to_json(),
                        "livenessCheck": "PASSED",
                        "faceMatchScore": verification.face_match,
                        "imageCount": verification.images.len(),
                    })))
                    .build()
                    .built()
            })
            .collect();
        IdentityVerificationsResponse::builder()
            .sources(Some(self.sources(Dataset::IdentityVerifications)))
            .identity_verifications(Some(items))
            .build()
            .built()
    }

    /// `GET .../identity-verifications/{id}/images`; `None` for an unknown verification.
    pub fn verification_images(
        &self,
        verification_id: &str,
    ) -> Result<Option<IdentityVerificationImagesResponse>, Problem> {
        let Some((data, provider, verification)) = self
            .verifications()
            .into_iter()
            .find(|(_, _, v)| v.id.to_string().eq_ignore_ascii_case(verification_id))
        else {
            return Ok(None);
        };
        let captured = self.verified_at(data.country.code) - ChronoDuration::seconds(40);
        let mut images = Vec::new();
        for image in &verification.images {
            let content = files::verification_image(self.dossier, data, verification, image)?;
            images.push(
                IdentityVerificationImage::builder()
                    .id(Some(image.id.to_string()))
                    .source_id(Some(provider.id.to_owned()))
                    .extra(object(json!({
                        "verificationId": verification.id,
                        "type": image.kind,
                        "mimeType": image.mime,
                        "fileName": image.file_name,
                        "widthPixels": image.width,
                        "heightPixels": image.height,
                        "sizeInBytes": content.len(),
                        "capturedAtUtc": captured,
                    })))
                    .build()
                    .built(),
            );
        }
        Ok(Some(
            IdentityVerificationImagesResponse::builder()
                .sources(Some(vec![
                    Source::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .country_code(Some(data.country.code.to_owned()))
                        .status(SourceStatus::Success)
                        .build()
                        .built(),
                ]))
                .images(Some(images))
                .build()
                .built(),
        ))
    }

    /// `GET .../attachments`
    pub fn attachments(&self) -> Result<AttachmentsResponse, Problem> {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Attachments) {
            let Some(identity) = &data.identity else {
                continue;
            };
            let added = self.consent_of(data.country.code, DataPackageInput::Identification);
            for spec in &identity.attachments {
                let content = files::attachment(self.dossier, self.record, data, spec)?;
                items.push(
                    Attachment::builder()
                        .id(spec.id.to_string())
                        .source_id(Some(provider.id.to_owned()))
                        .attachment_type(spec.kind.clone())
                        .mime_type(Some(spec.mime.to_owned()))
                        .file_name(Some(spec.file_name.clone()))
                        .file_size_bytes(content.len() as i64)
                        .added_on_utc(added.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                        .country_code(Some(data.country.code.to_owned()))
                        .build()
                        .built(),
                );
            }
        }
        Ok(AttachmentsResponse::builder()
            .attachments(Some(items))
            .build()
            .built())
    }
}
