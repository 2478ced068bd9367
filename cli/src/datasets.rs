//! `creditdata datasets ...`, `creditdata packages`.

use std::sync::LazyLock;

use clap::ValueEnum;
use clap::builder::PossibleValue;
use creditdata_client::Client;
use creditdata_client::operation::OperationMeta;
use creditdata_client::session_datasets::{Dataset, Gate};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::cli::DatasetsCommand;
use crate::failure::Failure;
use crate::output::{Output, to_value};
use crate::table::{Table, cell};

/// A dataset as typed on the command line: one of [`Dataset::ALL`], by its name
/// (`person-details`). The client generates the list from the API description, so a dataset
/// the vendor adds is a value here after `cargo xtask regen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatasetArg(pub Dataset);

static DATASET_ARGS: LazyLock<Vec<DatasetArg>> =
    LazyLock::new(|| Dataset::ALL.into_iter().map(DatasetArg).collect());

impl ValueEnum for DatasetArg {
    fn value_variants<'a>() -> &'a [Self] {
        DATASET_ARGS.as_slice()
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let summary = self.0.operation().summary;
        let help = if self.0.deprecated() {
            format!("{summary} (deprecated by the service)")
        } else {
            summary.to_string()
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// Reads one dataset as JSON (through its generated, typed operation).
pub async fn fetch(client: &Client, id: Uuid, dataset: Dataset) -> Result<Value, Failure> {
    Ok(client.session_dataset(id, dataset).await?)
}

fn warn_deprecated(dataset: Dataset) {
    if let Some(note) = dataset.deprecation() {
        crate::terminal::note(&format!(
            "warning: `{}` is deprecated by the service: {note}",
            dataset.name()
        ));
    }
}

/// Runs a `datasets` command.
pub async fn run(client: &Client, out: Output, command: DatasetsCommand) -> Result<(), Failure> {
    match command {
        DatasetsCommand::Get {
            id,
            name: DatasetArg(dataset),
        } => {
            warn_deprecated(dataset);
            let value = fetch(client, id, dataset).await?;
            out.value(&value)
        }
        DatasetsCommand::All {
            id,
            include_deprecated,
            gate,
        } => all(client, out, id, include_deprecated, gate.gate()).await,
        DatasetsCommand::Images {
            id,
            verification_id,
        } => {
            let value = client
                .get_identity_verification_images()
                .session_id(id)
                .verification_id(verification_id)
                .call()
                .await?;
            out.value(&to_value(&value)?)
        }
        DatasetsCommand::SourceFile { id, source_file_id } => {
            let value = client
                .get_source_file()
                .session_id(id)
                .source_file_id(source_file_id)
                .call()
                .await?;
            out.value(&to_value(&value)?)
        }
    }
}

/// `datasets all`: every JSON dataset at once ([`Client::session_datasets`]), in the order of
/// [`Dataset::ALL`]. A dataset that failed is reported on stderr and leaves the others shown;
/// when every one failed (a refused token) the first error is the command's error, with its
/// exit status. What is printed is what the service has now: providers that have not answered
/// yet (exit 8) or that failed (exit 7) are named on stderr, after the data.
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
    let read = client
        .session_datasets(id)
        .include_deprecated(include_deprecated)
        .gate(gate)
        .await?;
    let mut all = Map::new();
    let mut failed = Vec::new();
    for (dataset, result) in read.to_json() {
        match result {
            Ok(value) => {
                all.insert(dataset.name().to_string(), value);
            }
            Err(error) => failed.push((dataset.name(), error)),
        }
    }
    if all.is_empty()
        && let Some((_, error)) = failed.first()
    {
        return Err(error.clone().into());
    }
    for (name, error) in &failed {
        let message = Failure::from(error.clone()).message().unwrap_or_default();
        crate::terminal::note(&format!("warning: {name}: {message}"));
    }
    if out.is_json() {
        out.document(&all)?;
    } else {
        let mut text = String::new();
        for (name, value) in &all {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("== {name}\n"));
            text.push_str(&crate::table::view(value));
        }
        out.text(&text)?;
    }
    let readiness = read.readiness();
    crate::readiness::note_providers(&readiness);
    crate::readiness::note_outside_gate(&read, &readiness);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dataset_is_a_value_named_as_on_the_command_line() {
        for dataset in Dataset::ALL {
            let parsed = DatasetArg::from_str(dataset.name(), false)
                .unwrap_or_else(|e| panic!("{}: {e}", dataset.name()));
            assert_eq!(parsed, DatasetArg(dataset));
            let help = parsed
                .to_possible_value()
                .and_then(|v| v.get_help().cloned());
            assert!(
                help.is_some_and(|h| !h.to_string().is_empty()),
                "{}",
                dataset.name()
            );
        }
        assert!(DatasetArg::from_str("no-such-dataset", false).is_err());
    }
}
