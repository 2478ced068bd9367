//! Sessions: search, create, read, update, their actions (extend the deadline, notify the
//! customer again), what the customer still has to do, the PDF report; and the catalog of
//! packages per country.

use crate::built::Built;
use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use chrono::{Duration as ChronoDuration, NaiveDate, Utc};
use creditdata_client::types::{CustomerProgressStatusInput, Paging, SessionsResponse};
use serde_json::{Value, json};

use super::download::download;
use super::path::{SessionPath, ValidPath};
use super::registration::Registration;
use super::validate::{
    is_country_code, not_a_country_code, object_body, query_parameters, subject_email,
};
use crate::config::{DEFAULT_TAKE, MAX_TAKE};
use crate::described::members::SessionBody;
use crate::idp::Caller;
use crate::problem::{FieldErrors, Problem};
use crate::redact::debug_showing;
use crate::report;
use crate::request_body::json_body;
use crate::state::{AppState, read};
use crate::store::{
    CountryRequest, Notification, NotificationKind, PackageRequest, Progress, SessionRecord,
};
use crate::views;

/// The sessions, their actions and the package catalog, by operationId.
pub fn handlers() -> Vec<Registration> {
    vec![
        Registration::new("GetSessions", search_sessions),
        Registration::new("CreateSession", create_session),
        Registration::new("GetSession", get_session),
        Registration::new("UpdateSession", update_session),
        Registration::new("ExtendCustomerInputDeadline", extend_deadline),
        Registration::new("ResendCustomerNotification", resend_notification),
        Registration::new("GetInputRequirements", input_requirements),
        Registration::new("GetPdfReport", pdf_report),
        Registration::new("GetConsumerPackages", consumer_packages),
    ]
}

async fn search_sessions(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, Problem> {
    let mut filters = SearchFilters::parse(query.as_deref().unwrap_or_default())?;
    filters.described = state
        .description
        .members
        .search_filters(std::mem::take(&mut filters.unread));
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
    let page: Vec<&SessionRecord> = matches
        .iter()
        .skip(filters.skip as usize)
        .take(filters.take as usize)
        .collect();
    let mut response = serde_json::to_value(
        SessionsResponse::builder()
            .sessions(Some(Vec::new()))
            .paging(Some(
                Paging::builder()
                    .total_count(i32::try_from(total).unwrap_or(i32::MAX))
                    .skip(Some(filters.skip))
                    .take(Some(filters.take))
                    .build()
                    .built(),
            ))
            .build()
            .built(),
    )
    .map_err(|error| {
        Problem::internal(format!("The search answer could not be written: {error}."))
    })?;
    response["sessions"] = Value::Array(
        page.into_iter()
            .map(|record| state.session_json(record))
            .collect(),
    );
    Ok(Json(response))
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
    /// The parameters this parser does not know, as (lower-cased name, value).
    unread: Vec<(String, String)>,
    /// Filters on members the description adds to a Session, as (member, lower-cased text).
    described: Vec<(String, String)>,
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
        filters.unread = values
            .into_iter()
            .map(|(name, (_, value))| (name, value))
            .collect();
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
            && self.described.iter().all(|(member, filter)| {
                contains(
                    &Some(filter.clone()),
                    record.described_members.get(member).and_then(Value::as_str),
                )
            })
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
    let mut record = SessionRecord {
        id: state.new_session_id(),
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
        described_members: Default::default(),
    };
    let view = serde_json::to_value(state.session_view(&record)).unwrap_or_default();
    let mut errors = FieldErrors::default();
    record.described_members =
        state
            .description
            .members
            .unknown(SessionBody::Create, &body, &view, &mut errors);
    errors.into_result()?;
    let session = state.session_json(&record);
    state.insert(record).await?;
    Ok((StatusCode::CREATED, Json(session)).into_response())
}

async fn get_session(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Json<Value>, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(state.session_json(&context.record)))
}

async fn update_session(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, Problem> {
    let id = path.session_id;
    let current = state.context(id)?;
    let body = json_body(&headers, body)?;
    object_body(&body)?;
    let mut errors = FieldErrors::default();
    let additions = query_parameters(&body, &mut errors);
    errors.into_result()?;
    let view = serde_json::to_value(state.session_view(&current.record)).unwrap_or_default();
    let mut errors = FieldErrors::default();
    let described =
        state
            .description
            .members
            .unknown(SessionBody::Update, &body, &view, &mut errors);
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
        record.described_members.extend(described);
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
    Ok(Json(state.with_described_members(session)))
}

async fn extend_deadline(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let id = path.session_id;
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
    Ok((
        StatusCode::CREATED,
        Json(state.with_described_members(session)),
    )
        .into_response())
}

async fn resend_notification(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Json<Value>, Problem> {
    let id = path.session_id;
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
                        "Delivery of the onboarding e-mail failed at {at}; resending to the same \
                         address would fail again. Create a new session with a working e-mail address."
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
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(context.view(&state.config).input_requirements()).into_response())
}

async fn pdf_report(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    let view = context.view(&state.config);
    let bytes = report::render(&view);
    Ok(download(
        bytes,
        "application/pdf",
        &report::file_name(&view),
    ))
}

async fn consumer_packages() -> Response {
    Json(views::sessions::consumer_packages()).into_response()
}

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
