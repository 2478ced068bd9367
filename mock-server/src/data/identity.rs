//! Identity verification: the subject's ID check, its images, and the documents the subject
//! handed over (mandate, proofs).

use chrono::NaiveDate;
use creditdata_client::types::AttachmentType;
use rand::Rng;
use uuid::Uuid;

use super::draw::{item_id, rng};
use super::person::{Document, Person};
use crate::catalog::Country;
use crate::redact::debug_showing;

/// One captured image of a verification.
#[derive(Clone, PartialEq)]
pub struct ImageSpec {
    /// Stable id (the `imageId`).
    pub id: Uuid,
    /// `DOCUMENT_FRONT`, `DOCUMENT_BACK` or `SELFIE`.
    pub kind: &'static str,
    /// `image/jpeg` or `image/png`.
    pub mime: &'static str,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Download name.
    pub file_name: String,
}

// File names carry the subject's name; the document is personal data.
debug_showing!(ImageSpec {
    id,
    kind,
    mime,
    width,
    height
});

/// One identity verification.
#[derive(Clone, PartialEq)]
pub struct Verification {
    /// Stable id (the `verificationId`).
    pub id: Uuid,
    /// How the subject was verified.
    pub method: &'static str,
    /// The document checked.
    pub document: Document,
    /// Face match score between selfie and document photo, 0..1.
    pub face_match: f64,
    /// Images captured.
    pub images: Vec<ImageSpec>,
}

debug_showing!(Verification { id, method, images });

/// A document the subject handed over.
#[derive(Clone, PartialEq)]
pub struct AttachmentSpec {
    /// Stable id (the `attachmentId`).
    pub id: Uuid,
    /// What it is.
    pub kind: AttachmentType,
    /// MIME type of the content.
    pub mime: &'static str,
    /// Download name.
    pub file_name: String,
}

debug_showing!(AttachmentSpec { id, kind, mime });

/// What one identity provider holds.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentityData {
    /// The verification.
    pub verification: Verification,
    /// Documents.
    pub attachments: Vec<AttachmentSpec>,
}

impl IdentityData {
    /// The identity data of `person` held by `provider` in `country`.
    pub fn generate(
        session: Uuid,
        country: &'static Country,
        person: &Person,
        created: NaiveDate,
    ) -> IdentityData {
        let mut rng = rng(session, &format!("identity/{}", country.code));
        let path = format!("{}/verification", country.code);
        let verification_id = item_id(session, &path);
        let stamp = created.format("%Y%m%d");
        let mut images = vec![ImageSpec {
            id: item_id(session, &format!("{path}/image/front")),
            kind: "DOCUMENT_FRONT",
            mime: "image/jpeg",
            width: 856,
            height: 540,
            file_name: format!("document-front-{stamp}.jpg"),
        }];
        if person.document.kind == "ID_CARD" {
            images.push(ImageSpec {
                id: item_id(session, &format!("{path}/image/back")),
                kind: "DOCUMENT_BACK",
                mime: "image/jpeg",
                width: 856,
                height: 540,
                file_name: format!("document-back-{stamp}.jpg"),
            });
        }
        images.push(ImageSpec {
            id: item_id(session, &format!("{path}/image/selfie")),
            kind: "SELFIE",
            mime: "image/png",
            width: 360,
            height: 480,
            file_name: format!("selfie-{stamp}.png"),
        });
        let method = if rng.gen_bool(0.5) {
            "DOCUMENT_AND_SELFIE"
        } else {
            "NFC_CHIP_AND_SELFIE"
        };
        let attachments = vec![
            AttachmentSpec {
                id: item_id(session, &format!("{}/attachment/mandate", country.code)),
                kind: AttachmentType::Mandate,
                mime: "application/pdf",
                file_name: format!(
                    "consent-mandate-{}-{stamp}.pdf",
                    country.code.to_lowercase()
                ),
            },
            AttachmentSpec {
                id: item_id(session, &format!("{}/attachment/address", country.code)),
                kind: AttachmentType::AddressProof,
                mime: "image/jpeg",
                file_name: format!("address-proof-{stamp}.jpg"),
            },
            AttachmentSpec {
                id: item_id(session, &format!("{}/attachment/id-number", country.code)),
                kind: AttachmentType::IdentificationNumberProof,
                mime: "image/png",
                file_name: format!("identity-number-proof-{stamp}.png"),
            },
        ];
        IdentityData {
            verification: Verification {
                id: verification_id,
                method,
                document: person.document.clone(),
                face_match: f64::from(rng.gen_range(910u32..995)) / 1000.0,
                images,
            },
            attachments,
        }
    }
}
