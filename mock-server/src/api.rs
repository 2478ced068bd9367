//! The `/v1` operations of the effective API description.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Router, routing::get, routing::post};
use chrono::{Duration as ChronoDuration, NaiveDate, Utc};
use creditdata_client::types::{
    CustomerProgressStatusInput, DataPackageInput, Paging, Session, SessionsResponse,
};
use email_address::{EmailAddress, Options as EmailOptions};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::auth::Caller;
use crate::catalog;
use crate::config::{DEFAULT_TAKE, MAX_TAKE};
use crate::problem::{FieldErrors, Problem};
use crate::redact::debug_showing;
use crate::render;
use crate::report;
use crate::state::{AppState, Context};
use crate::store::{
    CountryRequest, Notification, NotificationKind, PackageRequest, Progress, SessionRecord,
};
use crate::views;

/// The `/v1` routes (the caller adds the bearer-token layer).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/v1/sessions", get(search_sessions).post(create_session))
        .route("/v1/sessions/{sessionId}", get(get_session).patch(update_session))
        .route(
            "/v1/sessions/{sessionId}/actions/extend-customer-input-deadline",
            post(extend_deadline),
        )
        .route(
            "/v1/sessions/{sessionId}/actions/resend-customer-notification",
            post(resend_notification),
        )
        .route("/v1/sessions/{sessionId}/input-requirements", get(input_requirements))
        .route("/v1/sessions/{sessionId}/pdf-report", get(pdf_report))
        .route("/v1/sessions/{sessionId}/source-files", get(source_files))
        .route(
            "/v1/sessions/{sessionId}/source-files/{sourceFileId}",
            get(source_file),
        )
        .route(
            "/v1/sessions/{sessionId}/source-files/{sourceFileId}/content",
            get(source_file_content),
        )
        .route("/v1/consumer/packages", get(consumer_packages))
        .route("/v1/sessions/{sessionId}/account-statements", get(account_statements))
        .route(
            "/v1/sessions/{sessionId}/account-statements/transactions/excel",
            get(transactions_excel),
        )
        .route(
            "/v1/sessions/{sessionId}/account-statements/{accountStatementId}/excel",
            get(statement_excel),
        )
        .route(
            "/v1/sessions/{sessionId}/account-statements/{accountStatementId}/tsv",
            get(statement_tsv),
        )
        .route("/v1/sessions/{sessionId}/attachments", get(attachments))
        .route(
            "/v1/sessions/{sessionId}/attachments/{attachmentId}/content",
            get(attachment_content),
        )
        .route(
            "/v1/sessions/{sessionId}/categorizations-summary",
            get(categorizations_summary),
        )
        .route("/v1/sessions/{sessionId}/categorizations", get(categorizations))
        .route(
            "/v1/sessions/{sessionId}/court-and-insolvencies",
            get(court_and_insolvencies),
        )
        .route(
            "/v1/sessions/{sessionId}/identity-verifications",
            get(identity_verifications),
        )
        .route(
            "/v1/sessions/{sessionId}/identity-verifications/{verificationId}/images",
            get(verification_images),
        )
        .route(
            "/v1/sessions/{sessionId}/identity-verifications/{verificationId}/images/{imageId}/content",
            get(verification_image_content),
        )
        .route("/v1/sessions/{sessionId}/immovables", get(immovables))
        .route("/v1/sessions/{sessionId}/legal-entities", get(legal_entities))
        .route("/v1/sessions/{sessionId}/metrics", get(metrics))
        .route(
            "/v1/sessions/{sessionId}/negative-tradelines",
            get(negative_tradelines),
        )
        .route("/v1/sessions/{sessionId}/person-details", get(person_details))
        .route(
            "/v1/sessions/{sessionId}/positive-tradelines",
            get(positive_tradelines),
        )
        .route("/v1/sessions/{sessionId}/registry-incomes", get(registry_incomes))
        .route("/v1/sessions/{sessionId}/scores", get(scores))
}

/// The path parameters of a request; a malformed path is a 400 problem, not axum's plain text.
pub struct PathParams(HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for PathParams {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Path(params)| PathParams(params))
            .map_err(|rejection| {
                Problem::bad_request(format!("The request path is malformed: {rejection}"))
            })
    }
}

impl PathParams {
    /// A string parameter.
    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map(String::as_str).unwrap_or_default()
    }

    /// A uuid parameter; a malformed one is a 400 validation problem naming it.
    pub fn uuid(&self, name: &str) -> Result<Uuid, Problem> {
        let raw = self.get(name);
        Uuid::try_parse(raw).map_err(|_| {
            Problem::invalid_field(name, format!("The value '{raw}' is not a valid UUID."))
        })
    }

    /// The `sessionId`.
    pub fn session_id(&self) -> Result<Uuid, Problem> {
        self.uuid("sessionId")
    }
}

/// A download: the bytes with Content-Type, Content-Length and Content-Disposition.
pub fn download(bytes: Vec<u8>, content_type: &str, file_name: &str) -> Response {
    let length = bytes.len();
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(content_type) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    let safe: String = file_name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{safe}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

// ---------------------------------------------------------------- sessions

/// The session a read (of the session, a dataset or a file) is about, settled to now. With
/// `complete_on_read`, a customer still waiting completes first, so the read sees delivered
/// data; whatever happened before the first read (a resend, an extension) met a waiting
/// customer.
async fn read(state: &Arc<AppState>, id: Uuid) -> Result<Context, Problem> {
    if state.config.complete_on_read
        && matches!(
            state.context(id)?.record.progress,
            Progress::WaitingForCustomer { .. }
        )
    {
        state
            .mutate(id, |record, _| {
                if matches!(record.progress, Progress::WaitingForCustomer { .. }) {
                    record.complete(Utc::now());
                }
                Ok(())
            })
            .await?;
    }
    state.context(id)
}

async fn search_sessions(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Result<Json<SessionsResponse>, Problem> {
    let filters = SearchFilters::parse(query.as_deref().unwrap_or_default())?;
    let now = Utc::now();
    let mut matches: Vec<SessionRecord> = {
        let store = state.read_store();
        store
            .sessions
            .values()
            .map(|record| record.settled(now, &state.config))
            .filter(|record| filters.matches(record, &state))
            .collect()
    };
    matches.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
    let total = matches.len();
    let sessions: Vec<Session> = matches
        .iter()
        .skip(filters.skip as usize)
        .take(filters.take as usize)
        .map(|record| state.session_view(record))
        .collect();
    Ok(Json(SessionsResponse {
        sessions: Some(sessions),
        paging: Some(Paging {
            total_count: i32::try_from(total).unwrap_or(i32::MAX),
            skip: Some(filters.skip),
            take: Some(filters.take),
        }),
    }))
}

/// The ten filters of `GET /v1/sessions`.
#[derive(Default)]
struct SearchFilters {
    subject_email: Option<String>,
    subject_full_name: Option<String>,
    country_code: Option<String>,
    created_from: Option<NaiveDate>,
    created_to: Option<NaiveDate>,
    status: Option<CustomerProgressStatusInput>,
    created_by_name: Option<String>,
    organizational_unit_name: Option<String>,
    skip: i32,
    take: i32,
}

// The text filters search for e-mail addresses and people's names.
debug_showing!(SearchFilters {
    country_code,
    created_from,
    created_to,
    status,
    skip,
    take,
});

impl SearchFilters {
    /// Parses the query string; names match case-insensitively (as ASP.NET binds them) and the
    /// first of repeated parameters counts. An empty text filter counts as absent; an empty
    /// country code, date, number or status is invalid. Exactly what the effective description
    /// states is refused, nothing more: a `CreatedToUtc` before `CreatedFromUtc` is a range no
    /// Session falls in (an empty page), not an error, because no schema can state that rule.
    fn parse(query: &str) -> Result<Self, Problem> {
        let mut values: HashMap<String, (String, String)> = HashMap::new();
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            values
                .entry(name.to_ascii_lowercase())
                .or_insert_with(|| (name.into_owned(), value.into_owned()));
        }
        let mut errors = FieldErrors::default();
        let mut take_value = |name: &str| -> Option<String> {
            values
                .remove(&name.to_ascii_lowercase())
                .map(|(_, value)| value)
        };
        let text = |value: Option<String>| {
            value
                .filter(|value| !value.is_empty())
                .map(|value| value.to_lowercase())
        };
        let mut filters = SearchFilters {
            subject_email: text(take_value("SubjectEmail")),
            subject_full_name: text(take_value("SubjectFullName")),
            created_by_name: text(take_value("CreatedByName")),
            organizational_unit_name: text(take_value("OrganizationalUnitName")),
            skip: 0,
            take: DEFAULT_TAKE,
            ..SearchFilters::default()
        };
        if let Some(code) = take_value("CountryCode") {
            if is_country_code(&code) {
                filters.country_code = Some(code);
            } else {
                errors.add("CountryCode", not_a_country_code(&code));
            }
        }
        for (name, slot) in [
            ("CreatedFromUtc", &mut filters.created_from),
            ("CreatedToUtc", &mut filters.created_to),
        ] {
            if let Some(raw) = take_value(name) {
                match NaiveDate::parse_from_str(&raw, "%Y-%m-%d") {
                    Ok(date) if raw.len() == 10 => *slot = Some(date),
                    _ => errors.add(
                        name,
                        format!("The value '{raw}' is not a date in the form YYYY-MM-DD."),
                    ),
                }
            }
        }
        if let Some(raw) = take_value("CustomerProgressStatus") {
            match raw.parse::<CustomerProgressStatusInput>() {
                Ok(status) => filters.status = Some(status),
                Err(_) => errors.add(
                    "CustomerProgressStatus",
                    format!(
                        "The value '{raw}' is not valid; use DELIVERY_FAILED, WAITING_FOR_CUSTOMER, \
                         COMPLETED_BY_CUSTOMER or EXPIRED."
                    ),
                ),
            }
        }
        if let Some(raw) = take_value("Skip") {
            match raw.parse::<i32>() {
                Ok(skip) if skip >= 0 => filters.skip = skip,
                _ => errors.add(
                    "Skip",
                    format!(
                        "The value '{raw}' is not valid; Skip is an integer from 0 to {}.",
                        i32::MAX
                    ),
                ),
            }
        }
        if let Some(raw) = take_value("Take") {
            match raw.parse::<i32>() {
                Ok(take) if (1..=MAX_TAKE).contains(&take) => filters.take = take,
                _ => errors.add(
                    "Take",
                    format!("The value '{raw}' is not valid; Take is an integer from 1 to {MAX_TAKE} (default {DEFAULT_TAKE})."),
                ),
            }
        }
        errors.into_result()?;
        Ok(filters)
    }

    fn matches(&self, record: &SessionRecord, state: &AppState) -> bool {
        let contains = |filter: &Option<String>, value: Option<&str>| match filter {
            None => true,
            Some(filter) => value.is_some_and(|v| v.to_lowercase().contains(filter.as_str())),
        };
        let full_name = state.full_name(record);
        let created = record.created_at.date_naive();
        contains(&self.subject_email, Some(&record.subject_email))
            && contains(&self.subject_full_name, full_name.as_deref())
            && contains(&self.created_by_name, Some(&record.created_by_name))
            && contains(
                &self.organizational_unit_name,
                record.organizational_unit_name.as_deref(),
            )
            && self
                .country_code
                .as_ref()
                .is_none_or(|code| record.countries.iter().any(|c| &c.country == code))
            && self.created_from.is_none_or(|from| created >= from)
            && self.created_to.is_none_or(|to| created <= to)
            && self
                .status
                .is_none_or(|status| status.to_string() == record.progress.name())
    }
}

/// Checks that a JSON body arrived as JSON and parses it; every failure is a 400 problem.
fn json_body(headers: &HeaderMap, body: Result<Bytes, BytesRejection>) -> Result<Value, Problem> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Problem::payload_too_large(format!("The request body is too large: {rejection}"))
        } else {
            Problem::bad_request(format!("The request body could not be read: {rejection}"))
        }
    })?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    // The JSON media types the published description lists for every body (the effective one
    // keeps only the first, for the generator).
    if media != "application/json"
        && media != "text/json"
        && !(media.starts_with("application/") && media.ends_with("+json"))
    {
        return Err(Problem::bad_request(format!(
            "The request body must be JSON (Content-Type: application/json); got '{content_type}'."
        )));
    }
    serde_json::from_slice(&body).map_err(|error| {
        Problem::invalid_field("$", format!("The request body is not valid JSON: {error}."))
    })
}

/// Reads `queryParameters` (create and update): countries and their packages, merged by
/// country, duplicates dropped.
fn query_parameters(
    body: &Value,
    errors: &mut FieldErrors,
) -> Vec<(String, Vec<DataPackageInput>)> {
    let mut merged: Vec<(String, Vec<DataPackageInput>)> = Vec::new();
    let items = match body.get("queryParameters") {
        None | Some(Value::Null) => {
            errors.add("queryParameters", "The queryParameters field is required.");
            return merged;
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            errors.add(
                "queryParameters",
                "queryParameters must be an array of {countryCode, dataPackages}.",
            );
            return merged;
        }
    };
    if items.is_empty() {
        errors.add(
            "queryParameters",
            "At least one query parameter (a country and its data packages) is required.",
        );
    }
    if items.len() > 100 {
        errors.add(
            "queryParameters",
            "At most 100 query parameters are accepted.",
        );
        return merged;
    }
    let package_names = "CREDIT_HISTORY, SCORE, BANK_ACCOUNT_CATEGORIZATION or IDENTIFICATION";
    for (i, item) in items.iter().enumerate() {
        let at = format!("queryParameters[{i}]");
        let Value::Object(item) = item else {
            errors.add(
                &at,
                "Each query parameter must be an object with countryCode and dataPackages.",
            );
            continue;
        };
        let country = match item.get("countryCode") {
            None | Some(Value::Null) => {
                errors.add(
                    format!("{at}.countryCode"),
                    "The countryCode field is required.",
                );
                None
            }
            Some(Value::String(code)) => {
                if is_country_code(code) {
                    Some(code.clone())
                } else {
                    errors.add(format!("{at}.countryCode"), not_a_country_code(code));
                    None
                }
            }
            Some(_) => {
                errors.add(format!("{at}.countryCode"), "countryCode must be a string.");
                None
            }
        };
        let mut packages = Vec::new();
        match item.get("dataPackages") {
            None | Some(Value::Null) => errors.add(
                format!("{at}.dataPackages"),
                format!("At least one data package is required: {package_names}."),
            ),
            Some(Value::Array(values)) => {
                if values.is_empty() {
                    errors.add(
                        format!("{at}.dataPackages"),
                        format!("At least one data package is required: {package_names}."),
                    );
                }
                for (j, value) in values.iter().enumerate() {
                    match value.as_str().map(str::parse::<DataPackageInput>) {
                        Some(Ok(package)) => {
                            if !packages.contains(&package) {
                                packages.push(package);
                            }
                        }
                        _ => errors.add(
                            format!("{at}.dataPackages[{j}]"),
                            format!(
                                "The value {value} is not a data package; use {package_names}."
                            ),
                        ),
                    }
                }
            }
            Some(_) => errors.add(
                format!("{at}.dataPackages"),
                "dataPackages must be an array of data package names.",
            ),
        }
        if let Some(country) = country {
            match merged.iter_mut().find(|(code, _)| *code == country) {
                Some((_, existing)) => {
                    for package in packages {
                        if !existing.contains(&package) {
                            existing.push(package);
                        }
                    }
                }
                None => merged.push((country, packages)),
            }
        }
    }
    merged
}

/// `pattern: ^[A-Z]{3}$` of the request-side country codes (overlays/09-request-constraints):
/// the form of an ISO 3166-1 alpha-3 code. A well-formed code the catalog does not serve is
/// accepted and reported per provider as `UNSUPPORTED_COUNTRY`, as the service does.
fn is_country_code(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

fn not_a_country_code(code: &str) -> String {
    format!(
        "The value '{code}' is not an ISO 3166-1 alpha-3 country code (three upper-case letters, e.g. GBR)."
    )
}

/// `maxLength` of `subjectEmail` in the effective description.
const MAX_EMAIL_CHARS: usize = 254;

/// `format: email`: an RFC 5321 mailbox (`local@domain`, the domain possibly an address literal),
/// no display name; `maxLength: 254` counts characters, as JSON Schema does.
fn is_email_address(text: &str) -> bool {
    text.chars().count() <= MAX_EMAIL_CHARS
        && EmailAddress::parse_with_options(text, EmailOptions::default().without_display_text())
            .is_ok()
}

fn subject_email(body: &Value, errors: &mut FieldErrors) -> Option<String> {
    match body.get("subjectEmail") {
        None | Some(Value::Null) => {
            errors.add("subjectEmail", "The subjectEmail field is required.");
            None
        }
        Some(Value::String(email)) => {
            if is_email_address(email) {
                Some(email.clone())
            } else {
                errors.add(
                    "subjectEmail",
                    format!(
                        "The value '{email}' is not an e-mail address of at most {MAX_EMAIL_CHARS} characters."
                    ),
                );
                None
            }
        }
        Some(_) => {
            errors.add("subjectEmail", "subjectEmail must be a string.");
            None
        }
    }
}

fn object_body(body: &Value) -> Result<(), Problem> {
    if body.is_object() {
        Ok(())
    } else {
        Err(Problem::invalid_field(
            "$",
            "The request body must be a JSON object.",
        ))
    }
}

async fn create_session(
    State(state): State<Arc<AppState>>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let body = json_body(&headers, body)?;
    object_body(&body)?;
    let mut errors = FieldErrors::default();
    let email = subject_email(&body, &mut errors);
    let countries = query_parameters(&body, &mut errors);
    errors.into_result()?;
    let email = email.ok_or_else(|| {
        Problem::invalid_field("subjectEmail", "The subjectEmail field is required.")
    })?;
    let now = Utc::now();
    let created_by = caller
        .map(|Extension(caller)| caller.created_by_name())
        .unwrap_or_else(|| format!("service-account-{}", state.config.client_id));
    let record = SessionRecord {
        id: Uuid::new_v4(),
        created_at: now,
        created_by_name: created_by,
        organizational_unit_name: state.config.organizational_unit_name.clone(),
        subject_email: email.clone(),
        countries: countries
            .into_iter()
            .map(|(country, packages)| CountryRequest {
                country,
                packages: packages
                    .into_iter()
                    .map(|package| PackageRequest {
                        package,
                        requested_at: now,
                        consented_at: None,
                    })
                    .collect(),
            })
            .collect(),
        deadline: now + ChronoDuration::days(i64::from(state.config.deadline_days)),
        progress: Progress::WaitingForCustomer { since: now },
        notifications: vec![Notification {
            sent_at: now,
            kind: NotificationKind::Onboarding,
            to: email,
        }],
        source_overrides: Default::default(),
    };
    let session = state.session_view(&record);
    state.insert(record).await?;
    Ok((StatusCode::CREATED, Json(session)).into_response())
}

async fn get_session(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Json<Session>, Problem> {
    let context = read(&state, params.session_id()?).await?;
    Ok(Json(state.session_view(&context.record)))
}

async fn update_session(
    State(state): State<Arc<AppState>>,
    params: PathParams,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Session>, Problem> {
    let id = params.session_id()?;
    state.context(id)?;
    let body = json_body(&headers, body)?;
    object_body(&body)?;
    let mut errors = FieldErrors::default();
    let additions = query_parameters(&body, &mut errors);
    errors.into_result()?;
    let now = Utc::now();
    let session = state.mutate(id, |record, config| {
        let until = record.upgradable_until(config);
        match (record.progress, until) {
            (Progress::Expired { at }, _) => {
                return Err(Problem::bad_request(format!(
                    "The session expired at {at}; countries and packages can no longer be added. \
                     Extend the customer input deadline first or create a new session."
                )));
            }
            (Progress::DeliveryFailed { .. }, _) => {
                return Err(Problem::bad_request(
                    "The onboarding e-mail could not be delivered to the subject; the session \
                     cannot be upgraded. Create a new session with a working e-mail address.",
                ));
            }
            (_, Some(until)) if now > until => {
                return Err(Problem::bad_request(format!(
                    "Countries and packages could be added until {until} (dataPackageUpgradableUntilUtc); \
                     that time has passed."
                )));
            }
            _ => {}
        }
        let mut added = false;
        for (country, packages) in additions {
            let index = match record.countries.iter().position(|c| c.country == country) {
                Some(index) => index,
                None => {
                    record.countries.push(CountryRequest {
                        country,
                        packages: Vec::new(),
                    });
                    record.countries.len() - 1
                }
            };
            let existing = &mut record.countries[index].packages;
            for package in packages {
                if !existing.iter().any(|p| p.package == package) {
                    existing.push(PackageRequest {
                        package,
                        requested_at: now,
                        consented_at: None,
                    });
                    added = true;
                }
            }
        }
        if added && matches!(record.progress, Progress::CompletedByCustomer { .. }) {
            // New data needs the customer's consent again: back to waiting, with a fresh
            // deadline and a notification.
            record.progress = Progress::WaitingForCustomer { since: now };
            record.deadline = record
                .deadline
                .max(now + ChronoDuration::days(i64::from(config.deadline_days)));
            record.notifications.push(Notification {
                sent_at: now,
                kind: NotificationKind::Upgrade,
                to: record.subject_email.clone(),
            });
        }
        Ok(())
    })
    .await?;
    Ok(Json(session))
}

async fn extend_deadline(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let id = params.session_id()?;
    let now = Utc::now();
    let session = state
        .mutate(id, |record, config| {
            match record.progress {
                Progress::CompletedByCustomer { at } => {
                    return Err(Problem::bad_request(format!(
                        "The customer completed the session at {at}; there is no deadline left to extend."
                    )));
                }
                Progress::DeliveryFailed { .. } => {
                    return Err(Problem::bad_request(
                        "The onboarding e-mail could not be delivered; extending the deadline would not \
                         reach the customer. Create a new session with a working e-mail address.",
                    ));
                }
                _ => {}
            }
            if let Some(until) = record.extendable_until(config)
                && now > until
            {
                return Err(Problem::bad_request(format!(
                    "The deadline could be extended until {until} (customerInputDeadlineExtendableUntilUtc); \
                     that time has passed."
                )));
            }
            record.deadline = now + ChronoDuration::days(i64::from(config.extension_days));
            if !matches!(record.progress, Progress::WaitingForCustomer { .. }) {
                record.progress = Progress::WaitingForCustomer { since: now };
            }
            record.notifications.push(Notification {
                sent_at: now,
                kind: NotificationKind::DeadlineExtended,
                to: record.subject_email.clone(),
            });
            Ok(())
        })
        .await?;
    Ok((StatusCode::CREATED, Json(session)).into_response())
}

async fn resend_notification(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Json<Value>, Problem> {
    let id = params.session_id()?;
    let now = Utc::now();
    let session = state
        .mutate(id, |record, _| {
            match record.progress {
                Progress::WaitingForCustomer { .. } => {}
                Progress::CompletedByCustomer { at } => {
                    return Err(Problem::bad_request(format!(
                        "The customer completed the session at {at}; there is nothing left for them to do."
                    )));
                }
                Progress::Expired { at } => {
                    return Err(Problem::bad_request(format!(
                        "The session expired at {at}; extend the customer input deadline before \
                         notifying the customer again."
                    )));
                }
                Progress::DeliveryFailed { at } => {
                    return Err(Problem::bad_request(format!(
                        "Delivery to {} failed at {at}; resending to the same address would fail again. \
                         Create a new session with a working e-mail address.",
                        record.subject_email
                    )));
                }
            }
            record.notifications.push(Notification {
                sent_at: now,
                kind: NotificationKind::Resend,
                to: record.subject_email.clone(),
            });
            Ok(())
        })
        .await?;
    let count = state
        .read_store()
        .sessions
        .get(&id)
        .map(|record| record.notifications.len())
        .unwrap_or_default();
    Ok(Json(json!({
        "sessionId": session.id,
        "subjectEmail": session.subject_email,
        "sentAtUtc": now,
        "customerInputDeadlineUtc": session.customer_input_deadline_utc,
        "notificationsSent": count,
    })))
}

async fn input_requirements(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    Ok(Json(context.view(&state.config).input_requirements()).into_response())
}

async fn pdf_report(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    let view = context.view(&state.config);
    let bytes = report::render(&view);
    Ok(download(
        bytes,
        "application/pdf",
        &report::file_name(&view),
    ))
}

async fn consumer_packages() -> Response {
    Json(views::consumer_packages()).into_response()
}

// ---------------------------------------------------------------- source files

async fn source_files(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    Ok(Json(context.view(&state.config).source_files()).into_response())
}

async fn source_file(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let session_id = params.session_id()?;
    let file_id = params.uuid("sourceFileId")?;
    let context = read(&state, session_id).await?;
    context
        .view(&state.config)
        .source_files()
        .into_iter()
        .find(|file| file.id == file_id)
        .map(|file| Json(file).into_response())
        .ok_or_else(|| {
            Problem::not_found(format!(
                "Session {} has no source file {file_id}.",
                context.record.id
            ))
        })
}

async fn source_file_content(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let session_id = params.session_id()?;
    let file_id = params.uuid("sourceFileId")?;
    let context = read(&state, session_id).await?;
    context
        .view(&state.config)
        .source_file_content(file_id)
        .map(|content| Json(content).into_response())
        .ok_or_else(|| {
            Problem::not_found(format!(
                "Session {} has no source file {file_id}.",
                context.record.id
            ))
        })
}

// ---------------------------------------------------------------- bank data

async fn account_statements(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    Ok(Json(context.view(&state.config).account_statements()).into_response())
}

async fn transactions_excel(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    let view = context.view(&state.config);
    let accounts: Vec<&crate::data::Account> =
        view.accounts().into_iter().map(|(_, _, a)| a).collect();
    let bytes = render::xlsx::transactions(
        &accounts,
        &format!("Transactions of session {}", context.record.id),
    )
    .map_err(|e| Problem::internal(format!("the workbook could not be written: {e}")))?;
    Ok(download(
        bytes,
        XLSX,
        &format!("transactions-{}.xlsx", context.record.id),
    ))
}

fn statement_not_found(context: &Context, id: &str) -> Problem {
    Problem::not_found(format!(
        "Session {} has no delivered account statement '{id}' (see GET .../account-statements).",
        context.record.id
    ))
}

async fn statement_excel(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    let view = context.view(&state.config);
    let id = params.get("accountStatementId");
    let account = view
        .account(id)
        .ok_or_else(|| statement_not_found(&context, id))?;
    let bytes = render::xlsx::statement(account)
        .map_err(|e| Problem::internal(format!("the workbook could not be written: {e}")))?;
    Ok(download(
        bytes,
        XLSX,
        &format!("account-statement-{}.xlsx", account.id),
    ))
}

async fn statement_tsv(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    let view = context.view(&state.config);
    let id = params.get("accountStatementId");
    let account = view
        .account(id)
        .ok_or_else(|| statement_not_found(&context, id))?;
    let bytes = render::tsv::statement(account)
        .map_err(|e| Problem::internal(format!("the TSV could not be written: {e}")))?;
    Ok(download(
        bytes,
        "text/tab-separated-values",
        &format!("account-statement-{}.tsv", account.id),
    ))
}

async fn categorizations_summary(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    Ok(Json(context.view(&state.config).categorizations_summary()).into_response())
}

async fn categorizations(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    Ok(Json(context.view(&state.config).categorizations()).into_response())
}

// ---------------------------------------------------------------- identity

async fn attachments(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    Ok(Json(context.view(&state.config).attachments()?).into_response())
}

async fn attachment_content(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    let view = context.view(&state.config);
    let id = params.get("attachmentId");
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
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
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
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    let id = params.get("verificationId");
    context
        .view(&state.config)
        .verification_images(id)?
        .map(|images| Json(images).into_response())
        .ok_or_else(|| verification_not_found(&context, id))
}

async fn verification_image_content(
    State(state): State<Arc<AppState>>,
    params: PathParams,
) -> Result<Response, Problem> {
    let context = read(&state, params.session_id()?).await?;
    let view = context.view(&state.config);
    let verification_id = params.get("verificationId");
    let image_id = params.get("imageId");
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

// ---------------------------------------------------------------- credit data

macro_rules! dataset_handler {
    ($name:ident, $method:ident) => {
        async fn $name(
            State(state): State<Arc<AppState>>,
            params: PathParams,
        ) -> Result<Response, Problem> {
            let context = read(&state, params.session_id()?).await?;
            Ok(Json(context.view(&state.config).$method()).into_response())
        }
    };
}

dataset_handler!(court_and_insolvencies, court_and_insolvencies);
dataset_handler!(immovables, immovables);
dataset_handler!(legal_entities, legal_entities);
dataset_handler!(metrics, metrics);
dataset_handler!(negative_tradelines, negative_tradelines);
dataset_handler!(person_details, person_details);
dataset_handler!(positive_tradelines, positive_tradelines);
dataset_handler!(registry_incomes, registry_incomes);
dataset_handler!(scores, scores);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_filters_do_not_show_the_people_searched_for() {
        let filters = SearchFilters::parse(
            "SubjectEmail=jane.roe%40example.com&SubjectFullName=Jane+Roe&CreatedByName=Olga+Operator\
             &OrganizationalUnitName=Retail&CountryCode=FIN&Take=5",
        )
        .expect("valid filters");
        let debug = format!("{filters:?}");
        for personal in ["jane.roe", "Jane", "Olga", "Retail"] {
            assert!(
                !debug.to_lowercase().contains(&personal.to_lowercase()),
                "{debug}"
            );
        }
        assert!(
            debug.contains("FIN") && debug.contains("take: 5"),
            "{debug}"
        );
    }
}
