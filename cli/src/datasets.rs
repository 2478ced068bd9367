//! `creditdata datasets ...`, `creditdata packages`.

use std::io::Seek;

use creditdata_client::operation::{Operation, OperationMeta};
use creditdata_client::session_datasets::{Dataset, Gate, Readiness};
use creditdata_client::{Client, ClientInfo, Error, builder};
use futures::StreamExt;
use serde_json::Value;
use uuid::Uuid;

use crate::answer::{AnswerRead, Reading, SpoolError, Spooled, spool};
use crate::cli::{DatasetArg, DatasetsCommand};
use crate::failure::Failure;
use crate::output::{Output, to_value};
use crate::table::{Table, cell};

/// An answer read: its bytes (in an unnamed temporary file, rewound) and what they say of the
/// dataset's providers.
pub struct Answer {
    pub spooled: Spooled,
    pub read: AnswerRead,
}

/// Why an answer could not be read.
pub enum AnswerFailure {
    /// The service, the network, or an answer that is not one JSON document: the client's
    /// error (its status and problem details for an error answer: the exit status follows).
    Client(Error),
    /// A temporary file could not be written.
    Local(String),
}

impl From<AnswerFailure> for Failure {
    fn from(failure: AnswerFailure) -> Failure {
        match failure {
            AnswerFailure::Client(error) => error.into(),
            AnswerFailure::Local(message) => Failure::Local(message),
        }
    }
}

/// Reads one dataset's answer as the service's bytes ([`Client::session_dataset_stream`]),
/// checks that it is one JSON document that can be printed, and reads its providers' statuses
/// from it. Memory holds a chunk and the statuses, whatever the answer's size; the client's
/// body limit (`max_response_body`) bounds it on disk.
pub async fn fetch(client: &Client, id: Uuid, dataset: Dataset) -> Result<Answer, AnswerFailure> {
    let operation = dataset.operation_id();
    let download = client
        .session_dataset_stream(id, dataset)
        .await
        .map_err(AnswerFailure::Client)?;
    let reading = Reading {
        dataset: Some(dataset),
        listing: None,
        limit: MAX_PROVIDERS,
        printable: true,
    };
    taken(client, operation, download, reading).await
}

/// The most providers' statuses read from one answer (a session has a handful of providers).
const MAX_PROVIDERS: usize = 10_000;

/// Takes a JSON answer as it arrives (at most the client's body limit) and reads it.
async fn taken(
    client: &Client,
    operation: &'static str,
    download: creditdata_client::download::Download,
    reading: Reading,
) -> Result<Answer, AnswerFailure> {
    let invalid = |message: String| {
        AnswerFailure::Client(Error::InvalidResponse {
            operation: Some(operation),
            message,
        })
    };
    let limit = client.inner().max_response_body();
    let spooled = match spool(download.bytes_stream(), limit).await {
        Ok(spooled) => spooled,
        Err(SpoolError::Client(error)) => return Err(AnswerFailure::Client(error)),
        Err(SpoolError::Local(message)) => return Err(AnswerFailure::Local(message)),
        Err(SpoolError::TooLarge(limit)) => {
            return Err(invalid(format!(
                "the answer is larger than the client's limit of {limit} bytes on an answer \
                 (max_response_body)"
            )));
        }
    };
    let read = crate::answer::read(&spooled.file, reading).map_err(invalid)?;
    (&spooled.file)
        .rewind()
        .map_err(|e| AnswerFailure::Local(format!("a temporary file: {e}")))?;
    Ok(Answer { spooled, read })
}

/// Reads the JSON answer of `operation` (a `GET`) with these path values, as the service's
/// bytes (see [`fetch`]).
async fn fetch_operation(
    client: &Client,
    operation: &'static OperationMeta,
    path_values: &[&str],
) -> Result<Answer, AnswerFailure> {
    let download = client
        .json_answer_stream(operation, path_values)
        .await
        .map_err(AnswerFailure::Client)?;
    let reading = Reading {
        dataset: None,
        listing: None,
        limit: 0,
        printable: true,
    };
    taken(client, operation.id, download, reading).await
}

fn warn_deprecated(dataset: Dataset) {
    if let Some(note) = dataset.deprecation() {
        crate::terminal::note(&format!(
            "warning: `{}` is deprecated by the service: {note}",
            dataset.name()
        ));
    }
}

/// Runs a `datasets` command. What is printed is the service's answer as it sent it (through
/// the terminal gate: `--output json` re-indents it and escapes what could drive a terminal),
/// never a re-encoding of typed values: members the description does not know and `null`s are
/// there as sent.
pub async fn run(client: &Client, out: Output, command: DatasetsCommand) -> Result<(), Failure> {
    let answer = match command {
        DatasetsCommand::Get {
            id,
            name: DatasetArg(dataset),
        } => {
            warn_deprecated(dataset);
            fetch(client, id, dataset).await?
        }
        DatasetsCommand::All {
            id,
            include_deprecated,
            gate,
        } => return all(client, out, id, include_deprecated, gate.gate()).await,
        DatasetsCommand::Images {
            id,
            verification_id,
        } => {
            let operation = <builder::GetIdentityVerificationImages<'static> as Operation>::META;
            let id = id.to_string();
            fetch_operation(client, operation, &[&id, &verification_id]).await?
        }
        DatasetsCommand::SourceFile { id, source_file_id } => {
            let operation = <builder::GetSourceFile<'static> as Operation>::META;
            let (id, file) = (id.to_string(), source_file_id.to_string());
            fetch_operation(client, operation, &[&id, &file]).await?
        }
    };
    out.answer(&answer.spooled.file, answer.spooled.bytes)
}

/// `datasets all`: every JSON dataset at once, in the order of [`Dataset::ALL`], printed as
/// one JSON object whose members are the services' answers, written one after another (each
/// was taken into a temporary file as it arrived: memory never holds them). A dataset that
/// failed is reported on stderr and leaves the others shown; when every one failed (a refused
/// token) the first error is the command's error, with its exit status (a session that does
/// not exist: `GetSession`'s 404). What is printed is what the service has now: providers that
/// have not answered yet (exit 8) or that failed (exit 7) are named on stderr, after the data.
async fn all(
    client: &Client,
    out: Output,
    id: Uuid,
    include_deprecated: bool,
    gate: Gate,
) -> Result<(), Failure> {
    if include_deprecated {
        Dataset::ALL.into_iter().for_each(warn_deprecated);
    }
    // What `Client::session_datasets` reads for this gate: every dataset the service does not
    // deprecate, and a deprecated one when asked for or required by the gate (the default
    // gate keeps one the vendor deprecated after this client was first generated).
    let wanted: Vec<Dataset> = Dataset::ALL
        .into_iter()
        .filter(|dataset| include_deprecated || !dataset.deprecated() || gate.requires(*dataset))
        .collect();
    // In order, all at once (about one round trip), as `Client::session_datasets` reads them.
    let reads: Vec<(Dataset, Result<Answer, AnswerFailure>)> = futures::stream::iter(wanted)
        .map(|dataset| async move { (dataset, fetch(client, id, dataset).await) })
        .buffered(creditdata_client::session_datasets::DEFAULT_CONCURRENCY)
        .collect()
        .await;
    let mut readiness = Readiness::new(gate);
    let mut read = Vec::new();
    let mut failed = Vec::new();
    for (dataset, result) in reads {
        match result {
            Ok(answer) => {
                readiness.replace(dataset, Ok(answer.read.statuses.clone()));
                read.push((dataset, answer));
            }
            Err(AnswerFailure::Local(message)) => return Err(Failure::Local(message)),
            Err(AnswerFailure::Client(error)) => {
                readiness.replace(dataset, Err(error.clone()));
                failed.push((dataset, error));
            }
        }
    }
    if read.is_empty()
        && let Some((_, error)) = failed.first()
    {
        if failed.iter().all(|(_, error)| is_not_found(error)) {
            // One read says whether the session exists; its 404 replaces one per dataset.
            if let Err(session) = client.get_session().session_id(id).call().await
                && is_not_found(&session)
            {
                return Err(session.into());
            }
        }
        return Err(error.clone().into());
    }
    for (dataset, error) in &failed {
        let message = Failure::from(error.clone()).message().unwrap_or_default();
        crate::terminal::note(&format!("warning: {}: {message}", dataset.name()));
    }
    out.answers(
        read.iter()
            .map(|(dataset, answer)| (dataset.name(), &answer.spooled.file, answer.spooled.bytes)),
    )?;
    crate::readiness::note_providers(&readiness);
    crate::readiness::note_outside_gate(&readiness, |dataset| {
        let mut own = Readiness::new(dataset);
        if let Some((_, answer)) = read.iter().find(|(other, _)| *other == dataset) {
            own.replace(dataset, Ok(answer.read.statuses.clone()));
        } else if let Some((_, error)) = failed.iter().find(|(other, _)| *other == dataset) {
            own.replace(dataset, Err(error.clone()));
        }
        own
    });
    if !failed.is_empty() {
        return Err(Failure::Partial(format!(
            "{} of the session's datasets could not be read (see the warnings above)",
            failed.len()
        )));
    }
    crate::readiness::outcome(
        &readiness,
        &format!("read them again later, or wait for them: `creditdata sessions wait {id}`"),
    )
}

fn is_not_found(error: &Error) -> bool {
    error.status().map(|status| status.as_u16()) == Some(404)
}

/// `creditdata packages`: the consumer's countries and packages.
pub async fn packages(client: &Client, out: Output) -> Result<(), Failure> {
    let answer = client.get_consumer_packages().call().await?;
    let value = to_value(&answer)?;
    if out.is_json() {
        return out.document(&value);
    }
    let Some(Value::Array(packages)) = value.get("packages") else {
        return out.value(&value);
    };
    let mut table = Table::new(["COUNTRY", "NAME", "PACKAGES", "SOURCES"]);
    for package in packages {
        let sources = match package.get("sources") {
            Some(Value::Array(sources)) => sources
                .iter()
                .map(|s| match s.get("sourceId") {
                    Some(id) => cell(id),
                    None => cell(s),
                })
                .collect::<Vec<_>>()
                .join(", "),
            Some(other) => cell(other),
            None => String::new(),
        };
        table.row([
            package.get("countryCode").map(cell).unwrap_or_default(),
            package.get("countryName").map(cell).unwrap_or_default(),
            package.get("dataPackages").map(cell).unwrap_or_default(),
            sources,
        ]);
    }
    if table.is_empty() {
        return out.text("no packages\n");
    }
    out.text(&table.render())
}

/// Shown in `operations` for a dataset's operation: its command.
pub fn command_for_dataset(operation: &OperationMeta) -> Option<String> {
    Dataset::ALL
        .into_iter()
        .find(|dataset| dataset.operation_id() == operation.id)
        .map(|dataset| format!("datasets get ID {}", dataset.name()))
}
