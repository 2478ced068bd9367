//! `creditdata datasets ...`, `creditdata packages`.

use clap::ValueEnum;
use creditdata_client::Client;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::cli::{DatasetName, DatasetsCommand};
use crate::failure::Failure;
use crate::output::{Output, to_value};
use crate::table::{Table, cell};

/// Every JSON dataset, in the order `datasets all` reads them.
pub const ALL_DATASETS: [DatasetName; 15] = [
    DatasetName::PersonDetails,
    DatasetName::Scores,
    DatasetName::NegativeTradelines,
    DatasetName::PositiveTradelines,
    DatasetName::LegalEntities,
    DatasetName::RegistryIncomes,
    DatasetName::CourtAndInsolvencies,
    DatasetName::Immovables,
    DatasetName::Metrics,
    DatasetName::AccountStatements,
    DatasetName::Attachments,
    DatasetName::CategorizationsSummary,
    DatasetName::Categorizations,
    DatasetName::IdentityVerifications,
    DatasetName::SourceFiles,
];

impl DatasetName {
    /// The name as typed (`person-details`), which is also the last segment of its path.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }

    /// Whether the API description marks the dataset's operation deprecated.
    pub fn deprecated(self) -> bool {
        self == DatasetName::Categorizations
    }
}

/// Reads one dataset as JSON (through its generated, typed operation).
pub async fn fetch(client: &Client, id: Uuid, name: DatasetName) -> Result<Value, Failure> {
    macro_rules! get {
        ($method:ident) => {{
            let value = client.$method().session_id(id).call().await?;
            to_value(&value)
        }};
    }
    match name {
        DatasetName::PersonDetails => get!(get_person_details),
        DatasetName::Scores => get!(get_scores),
        DatasetName::NegativeTradelines => get!(get_negative_tradelines),
        DatasetName::PositiveTradelines => get!(get_positive_tradelines),
        DatasetName::LegalEntities => get!(get_legal_entities),
        DatasetName::RegistryIncomes => get!(get_registry_incomes),
        DatasetName::CourtAndInsolvencies => get!(get_court_and_insolvencies),
        DatasetName::Immovables => get!(get_immovables),
        DatasetName::Metrics => get!(get_metrics),
        DatasetName::AccountStatements => get!(get_account_statements),
        DatasetName::Attachments => get!(get_attachments),
        DatasetName::CategorizationsSummary => get!(get_categorizations_summary),
        // Deprecated by the service, which still serves it: read only when the user names it
        // (with a warning, `warn_deprecated`) or asks for `--include-deprecated`.
        #[allow(deprecated)]
        DatasetName::Categorizations => get!(get_categorizations),
        DatasetName::IdentityVerifications => get!(get_identity_verifications),
        DatasetName::SourceFiles => get!(get_source_files),
    }
}

fn warn_deprecated(name: DatasetName) {
    if name.deprecated() {
        crate::terminal::note(&format!(
            "warning: `{}` is deprecated by the service; use `categorizations-summary`",
            name.name()
        ));
    }
}

/// Runs a `datasets` command.
pub async fn run(client: &Client, out: Output, command: DatasetsCommand) -> Result<(), Failure> {
    match command {
        DatasetsCommand::Get { id, name } => {
            warn_deprecated(name);
            let value = fetch(client, id, name).await?;
            out.value(&value)
        }
        DatasetsCommand::All {
            id,
            include_deprecated,
        } => all(client, out, id, include_deprecated).await,
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
/// [`ALL_DATASETS`]. A dataset that failed is reported on stderr and leaves the others shown;
/// when every one failed (an unknown session, a refused token) the first error is the command's
/// error, with its exit status.
async fn all(
    client: &Client,
    out: Output,
    id: Uuid,
    include_deprecated: bool,
) -> Result<(), Failure> {
    if include_deprecated {
        for name in ALL_DATASETS {
            warn_deprecated(name);
        }
    }
    let read = client
        .session_datasets(id)
        .include_deprecated(include_deprecated)
        .await;
    let mut by_name: std::collections::HashMap<&str, Result<Value, creditdata_client::Error>> =
        read.to_json()
            .into_iter()
            .map(|(dataset, result)| (dataset.name(), result))
            .collect();
    let mut all = Map::new();
    let mut failed = Vec::new();
    for name in ALL_DATASETS {
        let typed = name.name();
        match by_name.remove(typed.as_str()) {
            Some(Ok(value)) => {
                all.insert(typed, value);
            }
            Some(Err(error)) => failed.push((typed, error)),
            None => {}
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
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::Partial(format!(
            "{} of the session's datasets could not be read (see the warnings above)",
            failed.len()
        )))
    }
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

/// Shown in `operations` for a dataset operation: its command.
pub fn command_for_path(path: &str) -> Option<String> {
    let last = path.rsplit('/').next()?;
    ALL_DATASETS
        .iter()
        .find(|d| d.name() == last && path == format!("/v1/sessions/{{sessionId}}/{last}"))
        .map(|d| format!("datasets get ID {}", d.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dataset_is_listed_once_and_named_as_its_path() {
        let mut names: Vec<String> = ALL_DATASETS.iter().map(|d| d.name()).collect();
        assert_eq!(names.len(), DatasetName::value_variants().len());
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL_DATASETS.len());
        for name in ALL_DATASETS {
            let path = format!("/v1/sessions/{{sessionId}}/{}", name.name());
            let op = creditdata_client::operations::ALL
                .iter()
                .find(|op| op.path == path)
                .unwrap_or_else(|| panic!("no operation at {path}"));
            assert_eq!(op.method, "GET");
            assert_eq!(op.deprecated, name.deprecated(), "{path}");
        }
    }
}
