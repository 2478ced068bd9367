//! From nothing to a PDF report: create a session, read it back, list every session, read every
//! JSON dataset of the new session and download its PDF report.
//!
//! ```text
//! cargo run -p creditdata-client --example quickstart -- jane.doe@example.com
//! ```
//!
//! Configuration (environment variables):
//!
//! | variable | meaning |
//! |---|---|
//! | `CREDITDATA_BASE_URL` | the service (or `CREDITDATA_ENVIRONMENT`, e.g. `mock`; one of them is required) |
//! | `CREDITDATA_TOKEN_URL`, `CREDITDATA_CLIENT_ID`, `CREDITDATA_CLIENT_SECRET` | OAuth2 client credentials |
//! | `CREDITDATA_TOKEN` | or a static bearer token |
//! | `CREDITDATA_COUNTRY` | ISO 3166-1 alpha-3 country of the search (default `GBR`) |
//! | `CREDITDATA_PACKAGES` | comma-separated data packages (default all of them) |
//! | `CREDITDATA_OUT_DIR` | where the PDF report goes (default the current directory) |
//! | `CREDITDATA_RATE_LIMIT` | a client-side rate limit, e.g. `20/s` (default none) |
//!
//! (every variable of [`ClientBuilder::from_env`] applies). Prints one JSON object per step on
//! stdout (`{"step": ..., ...}`); on any failure prints the error and its causes on stderr and exits
//! with status 1. With `RUST_LOG` set (e.g. `RUST_LOG=creditdata_client=debug`), the client's
//! tracing goes to stderr.

// Not for your own code: CI builds this example with warnings denied, and it must keep compiling
// the day the vendor deprecates an operation it shows. In your crate the compiler's warning is
// the point (and `cargo xtask regen` lists every deprecation in its report and the changelog).
#![allow(deprecated)]

use std::path::PathBuf;
use std::process::ExitCode;

use creditdata_client::error::DisplayChain;
use creditdata_client::prelude::*;
use creditdata_client::types::{CreateSessionRequest, DataPackageInput, QueryParameterInput};
use serde_json::{Value, json};
use uuid::Uuid;

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> ExitCode {
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}", DisplayChain(&*error));
            ExitCode::from(1)
        }
    }
}

/// One step's outcome, as one line of JSON on stdout.
fn step(line: Value) {
    println!("{line}");
}

async fn run() -> Result<(), Failure> {
    let email = match std::env::args().nth(1) {
        Some(email) if !email.trim().is_empty() => email.trim().to_string(),
        _ => return Err("usage: quickstart EMAIL (the data subject's e-mail address)".into()),
    };
    let country = var("CREDITDATA_COUNTRY").unwrap_or_else(|| "GBR".to_string());
    let packages = packages(var("CREDITDATA_PACKAGES").as_deref())?;
    let out_dir = PathBuf::from(var("CREDITDATA_OUT_DIR").unwrap_or_else(|| ".".to_string()));
    let client = ClientBuilder::from_env()?.build()?;

    // 1. Create the session (the service e-mails the consumer; never retried once sent).
    // The request types refuse what the service would: an over-long address, a malformed
    // country code (the messages never repeat the value).
    let query = QueryParameterInput::builder()
        .country_code(country.as_str())
        .data_packages(packages)
        .build()
        .map_err(|e| format!("CREDITDATA_COUNTRY (ISO 3166-1 alpha-3, e.g. GBR): {e}"))?;
    // `build()` checks here what `call()` would otherwise refuse, for a message naming the input.
    let request = CreateSessionRequest::builder()
        .subject_email(email.as_str())
        .query_parameters(vec![query])
        .build()
        .map_err(|e| format!("the subject's e-mail address: {e}"))?;
    let created = client.create_session().body(request).call().await?;
    let id = created.id;
    step(json!({
        "step": "create_session",
        "session_id": id,
        "customer_progress_status": created.customer_progress_status,
        "customer_input_deadline_utc": created.customer_input_deadline_utc,
    }));

    // 2. Read it back.
    let session = client.get_session().session_id(id).call().await?;
    step(json!({
        "step": "get_session",
        "session_id": session.id,
        "subject_email": session.subject_email,
        "customer_progress_status": session.customer_progress_status,
        "query_parameters": session.query_parameters,
    }));

    // 3. Every session, page by page through the paging stream.
    let mut count = 0u64;
    let mut found = false;
    let mut sessions = client.sessions(SessionFilter::new());
    while let Some(listed) = sessions.try_next().await? {
        count += 1;
        found |= listed.id == id;
    }
    step(json!({
        "step": "list_sessions",
        "count": count,
        "contains_new_session": found,
    }));

    // 4. Every JSON dataset of the new session, concurrently.
    read_datasets(&client, id).await?;

    // 5. The PDF report, written atomically.
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        format!(
            "{}: cannot create the output directory: {e}",
            out_dir.display()
        )
    })?;
    let saved = client
        .get_pdf_report()
        .session_id(id)
        .download()
        .await?
        .save_in(&out_dir, &format!("creditdata-{id}-report.pdf"))
        .await?;
    step(json!({
        "step": "download_pdf_report",
        "path": saved.path,
        "bytes": saved.bytes,
        "content_type": saved.content_type,
    }));
    Ok(())
}

/// Reads every JSON dataset of the session at once (about one round trip instead of one per
/// dataset) and prints one line per dataset: for each top-level member, the number of items of
/// an array or the kind of value; or the dataset's error; then whether the data has arrived.
/// One failed dataset does not hide the others; the example still ends with the first error.
async fn read_datasets(client: &Client, id: Uuid) -> Result<(), Failure> {
    let datasets = client.session_datasets(id).await?;
    let mut first_failure = None;
    for (dataset, result) in datasets.to_json() {
        match result {
            Ok(value) => step(json!({
                "step": "dataset",
                "dataset": dataset.name(),
                "summary": summarize(&value),
            })),
            Err(error) => {
                step(json!({
                    "step": "dataset",
                    "dataset": dataset.name(),
                    "error": error.to_string(),
                }));
                first_failure.get_or_insert(error);
            }
        }
    }
    // A read that succeeded is not data that arrived: the customer has not consented yet, so
    // every provider is still pending. A program that decides gates on this (or waits for the
    // data with `client.wait_for_data`).
    let readiness = datasets.readiness();
    step(json!({
        "step": "readiness",
        "complete": readiness.is_complete(),
        "pending": readiness.pending.len(),
        "failed": readiness.failed.len(),
        "summary": readiness.to_string(),
    }));
    match first_failure {
        Some(error) => Err(error.into()),
        None => Ok(()),
    }
}

fn summarize(value: &Value) -> Value {
    let kind = |v: &Value| match v {
        Value::Array(items) => json!(items.len()),
        Value::Object(_) => json!("object"),
        Value::Null => Value::Null,
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("boolean"),
    };
    match value {
        Value::Object(members) => members.iter().map(|(k, v)| (k.clone(), kind(v))).collect(),
        other => json!({ "items": kind(other) }),
    }
}

/// `CREDITDATA_PACKAGES` (comma-separated, any case), or every package.
fn packages(text: Option<&str>) -> Result<Vec<DataPackageInput>, Failure> {
    let Some(text) = text else {
        return Ok(DataPackageInput::ALL.to_vec());
    };
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.to_ascii_uppercase()
                .parse::<DataPackageInput>()
                .map_err(|_| {
                    let known: Vec<String> = DataPackageInput::ALL
                        .iter()
                        .map(ToString::to_string)
                        .collect();
                    format!(
                        "CREDITDATA_PACKAGES: unknown data package {p:?}; use one of {}",
                        known.join(", ")
                    )
                    .into()
                })
        })
        .collect()
}

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}
