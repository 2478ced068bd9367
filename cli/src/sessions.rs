//! `creditdata sessions ...`

use creditdata_client::Client;
use creditdata_client::paging::SessionFilter;
use creditdata_client::session_datasets::{Gate, Readiness};
use creditdata_client::types::{
    CreateSessionRequest, CreateSessionRequestSubjectEmail, CustomerProgressStatus,
    QueryParameterInput, Session, UpdateSessionRequest,
};
use creditdata_client::wait::{DataWait, WaitOptions};
use futures::TryStreamExt;
use uuid::Uuid;

use crate::cli::{ListArgs, SessionsCommand, WaitUntil};
use crate::failure::Failure;
use crate::output::{Output, to_value};
use crate::query::QuerySpec;
use crate::table::{StreamingTable, pairs};

/// The request elements of `--query` values.
fn inputs(queries: &[QuerySpec]) -> Result<Vec<QueryParameterInput>, Failure> {
    Ok(queries
        .iter()
        .map(QuerySpec::to_input)
        .collect::<Result<_, _>>()?)
}

/// Runs a `sessions` command.
pub async fn run(client: &Client, out: Output, command: SessionsCommand) -> Result<(), Failure> {
    match command {
        SessionsCommand::List(args) => list(client, out, args).await,
        SessionsCommand::Get { id } => {
            let session = client.get_session().session_id(id).call().await?;
            show_session(out, &session)
        }
        SessionsCommand::Create { email, queries } => {
            let email: CreateSessionRequestSubjectEmail = email.trim().parse().map_err(|e| {
                Failure::Usage(format!(
                    "--email is not usable as the subject's address: {e}"
                ))
            })?;
            let body = CreateSessionRequest::builder()
                .subject_email(email)
                .query_parameters(inputs(&queries)?);
            let session = client.create_session().body(body).call().await?;
            show_session(out, &session)
        }
        SessionsCommand::Update { id, queries } => {
            let body = UpdateSessionRequest::builder().query_parameters(inputs(&queries)?);
            let session = client
                .update_session()
                .session_id(id)
                .body(body)
                .call()
                .await?;
            show_session(out, &session)
        }
        SessionsCommand::Extend { id } => {
            let session = client
                .extend_customer_input_deadline()
                .session_id(id)
                .call()
                .await?;
            show_session(out, &session)
        }
        SessionsCommand::Resend { id } => {
            let answer = client
                .resend_customer_notification()
                .session_id(id)
                .call()
                .await?;
            out.value(&answer)
        }
        SessionsCommand::Requirements { id } => {
            let answer = client
                .get_input_requirements()
                .session_id(id)
                .call()
                .await?;
            out.value(&to_value(&answer)?)
        }
        SessionsCommand::Wait {
            id,
            until,
            timeout,
            interval,
            max_interval,
            gate,
        } => {
            let options = WaitOptions::default()
                .timeout(timeout)
                .initial_interval(interval)
                .max_interval(max_interval.max(interval));
            match until {
                WaitUntil::Customer if gate.is_given() => Err(Failure::Usage(
                    "--dataset and --every-dataset say which data to wait for: use them with \
                     --until ready"
                        .into(),
                )),
                WaitUntil::Customer => wait_for_customer(client, out, id, options).await,
                WaitUntil::Ready => wait_for_data(client, out, id, options, gate.gate()).await,
            }
        }
    }
}

/// `sessions wait --until customer`: the session once the customer has acted.
async fn wait_for_customer(
    client: &Client,
    out: Output,
    id: Uuid,
    options: WaitOptions,
) -> Result<(), Failure> {
    let session = client.wait_for_customer(id, options).await?;
    show_session(out, &session)?;
    customer_completed(&session)
}

/// Exit 5 unless the customer completed the session.
fn customer_completed(session: &Session) -> Result<(), Failure> {
    match &session.customer_progress_status {
        CustomerProgressStatus::CompletedByCustomer => Ok(()),
        other => Err(Failure::SessionEnded(format!(
            "session {} ended {other} without the customer completing it{}",
            session.id,
            match other {
                CustomerProgressStatus::Expired =>
                    "; `creditdata sessions extend` can give the customer more time",
                _ => "",
            }
        ))),
    }
}

/// `sessions wait` (`--until ready`): the session once its data has arrived; what is still
/// pending at the deadline (exit 6) or what failed (exit 7) is named on stderr.
async fn wait_for_data(
    client: &Client,
    out: Output,
    id: Uuid,
    options: WaitOptions,
    gate: Gate,
) -> Result<(), Failure> {
    let result = client.wait_for_datasets(id, gate, options).await?;
    if let Some(datasets) = result.datasets() {
        crate::readiness::note_outside_gate(&datasets.readiness(), |dataset| {
            datasets.readiness_of(dataset)
        });
    }
    show_session(out, result.session())?;
    match &result {
        DataWait::Ready { .. } => Ok(()),
        DataWait::ReadyWithFailures { datasets, .. } => {
            let readiness = datasets.readiness();
            crate::readiness::note_providers(&readiness);
            note_unreadable(&readiness);
            if !readiness.unreadable.is_empty() {
                return Err(Failure::Partial(format!(
                    "{} of the session's datasets could not be read (listed above)",
                    readiness.unreadable.len()
                )));
            }
            crate::readiness::failed_outcome(&readiness)
        }
        DataWait::TimedOut {
            datasets: Some(datasets),
            waited,
            ..
        } => {
            let readiness = datasets.readiness();
            crate::readiness::note_providers(&readiness);
            // A read that failed for a passing reason (a 503) is read again, like a pending one.
            note_unreadable(&readiness);
            Err(Failure::TimedOut(format!(
                "timed out after {} s: {} provider answer(s) still pending, {} dataset(s) \
                 unreadable (listed above); wait again, or read what is there with \
                 `creditdata datasets all {id}`",
                waited.as_secs(),
                readiness.pending.len(),
                readiness.unreadable.len()
            )))
        }
        DataWait::TimedOut { waited, .. } => Err(Failure::TimedOut(format!(
            "timed out after {} s: session {id} is still {}: the customer has not acted",
            waited.as_secs(),
            result.session().customer_progress_status
        ))),
        _ => customer_completed(result.session()),
    }
}

/// Names the datasets that could not be read, with the client's message, on stderr.
fn note_unreadable(readiness: &Readiness) {
    for (dataset, error) in &readiness.unreadable {
        let message = Failure::from(error.clone()).message().unwrap_or_default();
        crate::terminal::note(&format!("unreadable: {}: {message}", dataset.name()));
    }
}

/// The session search that `sessions list`'s filters describe (also `export`'s).
pub fn session_filter(args: &ListArgs) -> SessionFilter {
    let mut filter = SessionFilter::new();
    if let Some(v) = &args.email {
        filter = filter.subject_email(v.as_str());
    }
    if let Some(v) = &args.name {
        filter = filter.subject_full_name(v.as_str());
    }
    if let Some(v) = &args.country {
        filter = filter.country_code(v.trim().to_ascii_uppercase());
    }
    if let Some(v) = args.from {
        filter = filter.created_from(v);
    }
    if let Some(v) = args.to {
        filter = filter.created_to(v);
    }
    if let Some(v) = args.status {
        filter = filter.status(v.into());
    }
    if let Some(v) = &args.created_by {
        filter = filter.created_by_name(v.as_str());
    }
    if let Some(v) = &args.unit {
        filter = filter.organizational_unit_name(v.as_str());
    }
    filter
}

/// Widths of the session list's columns: id, created, e-mail, status, query.
const LIST_WIDTHS: [usize; 5] = [36, 16, 32, 21, 0];

async fn list(client: &Client, out: Output, args: ListArgs) -> Result<(), Failure> {
    let mut filter = session_filter(&args);
    let mut page_size = args.page_size.unwrap_or(filter.get_page_size());
    if let Some(limit) = args.limit {
        if limit == 0 {
            return Ok(());
        }
        // No point in asking for more than will be shown.
        page_size = page_size.min(u32::try_from(limit).unwrap_or(u32::MAX));
    }
    filter = filter.page_size(page_size);

    let table = StreamingTable::new(LIST_WIDTHS.to_vec());
    let mut printed: u64 = 0;
    let mut sessions = client.sessions(filter);
    while let Some(session) = sessions.try_next().await? {
        if out.is_json() {
            out.json_line(&session)?;
        } else {
            if printed == 0 {
                out.text(&table.line(["ID", "CREATED (UTC)", "E-MAIL", "STATUS", "QUERY"]))?;
            }
            out.text(&table.line([
                session.id.to_string(),
                session.created_at_utc.format("%Y-%m-%d %H:%M").to_string(),
                session.subject_email.clone().unwrap_or_default(),
                session.customer_progress_status.to_string(),
                query_text(&session),
            ]))?;
        }
        printed += 1;
        if args.limit.is_some_and(|limit| printed >= limit) {
            break;
        }
    }
    if printed == 0 && !out.is_json() {
        crate::terminal::note("no sessions match");
    }
    Ok(())
}

/// `GBR:CREDIT_HISTORY,SCORE DEU:SCORE`: the session's query in `--query` syntax.
fn query_text(session: &Session) -> String {
    session
        .query_parameters
        .iter()
        .flatten()
        .map(|q| {
            let packages: Vec<String> = q
                .data_packages
                .iter()
                .flatten()
                .map(ToString::to_string)
                .collect();
            format!(
                "{}:{}",
                q.country_code.as_deref().unwrap_or("?"),
                packages.join(",")
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn time(value: Option<chrono::DateTime<chrono::Utc>>) -> String {
    value
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| "-".to_string())
}

/// One session: the JSON document, or its fields as lines.
pub fn show_session(out: Output, session: &Session) -> Result<(), Failure> {
    if out.is_json() {
        return out.document(session);
    }
    let text = pairs([
        ("id", session.id.to_string()),
        ("status", session.customer_progress_status.to_string()),
        (
            "subject e-mail",
            session.subject_email.clone().unwrap_or_default(),
        ),
        (
            "subject name",
            session.subject_full_name.clone().unwrap_or_default(),
        ),
        ("query", query_text(session)),
        ("created", time(Some(session.created_at_utc))),
        (
            "created by",
            session.created_by_name.clone().unwrap_or_default(),
        ),
        (
            "unit",
            session.organizational_unit_name.clone().unwrap_or_default(),
        ),
        ("input deadline", time(session.customer_input_deadline_utc)),
        (
            "extendable until",
            time(session.customer_input_deadline_extendable_until_utc),
        ),
        (
            "upgradable until",
            time(session.data_package_upgradable_until_utc),
        ),
    ]);
    out.text(&text)
}
