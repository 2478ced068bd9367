//! The export's second step: which files a session has. The session record, every dataset of
//! the client's list (generated from the API description), the report and the transactions;
//! then whatever a dataset lists (account statements, attachments, identity verifications and
//! their images, source files), as soon as that dataset is there.

use creditdata_client::session_datasets::Dataset;
use serde_json::Value;
use uuid::Uuid;

use super::manifest::SkippedFile;
use super::store;

/// What to fetch for one file of a session.
#[derive(Debug, Clone)]
pub enum Fetch {
    /// Bytes already at hand (the session record from the search).
    Known(Vec<u8>),
    Dataset(Dataset),
    IdentityImages(String),
    Pdf,
    TransactionsExcel,
    StatementExcel(String),
    StatementTsv(String),
    Attachment(String),
    Image(String, String),
    SourceFile(Uuid),
}

/// One file of a session: its key in the manifest, where it goes (without its extension when
/// the response decides it), what fetches it.
#[derive(Debug, Clone)]
pub struct Job {
    pub key: String,
    pub path: String,
    pub fetch: Fetch,
}

impl Job {
    /// Whether its content leads to more files.
    pub fn lists_files(&self) -> bool {
        matches!(
            self.fetch,
            Fetch::Dataset(
                Dataset::AccountStatements
                    | Dataset::Attachments
                    | Dataset::IdentityVerifications
                    | Dataset::SourceFiles
            ) | Fetch::IdentityImages(_)
        )
    }

    /// The jobs its content lists (ids the service chose become safe file names).
    pub fn listed(&self, content: &[u8]) -> Vec<Job> {
        let Ok(value) = serde_json::from_slice::<Value>(content) else {
            return Vec::new();
        };
        let ids = |list: Option<&Value>| -> Vec<String> {
            list.and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| item.get("id").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        match &self.fetch {
            Fetch::Dataset(Dataset::AccountStatements) => ids(value.get("accountStatements"))
                .into_iter()
                .flat_map(|id| {
                    let name = store::name_for_id(&id);
                    [
                        Job {
                            key: format!("statement-excel:{id}"),
                            path: format!("statements/{name}.xlsx"),
                            fetch: Fetch::StatementExcel(id.clone()),
                        },
                        Job {
                            key: format!("statement-tsv:{id}"),
                            path: format!("statements/{name}.tsv"),
                            fetch: Fetch::StatementTsv(id),
                        },
                    ]
                })
                .collect(),
            Fetch::Dataset(Dataset::Attachments) => ids(value.get("attachments"))
                .into_iter()
                .map(|id| Job {
                    key: format!("attachment:{id}"),
                    path: format!("attachments/{}", store::name_for_id(&id)),
                    fetch: Fetch::Attachment(id),
                })
                .collect(),
            Fetch::Dataset(Dataset::IdentityVerifications) => {
                ids(value.get("identityVerifications"))
                    .into_iter()
                    .map(|id| Job {
                        key: format!("identity-images:{id}"),
                        path: format!("identity/{}/images.json", store::name_for_id(&id)),
                        fetch: Fetch::IdentityImages(id),
                    })
                    .collect()
            }
            Fetch::IdentityImages(verification) => ids(value.get("images"))
                .into_iter()
                .map(|image| Job {
                    key: format!("image:{verification}:{image}"),
                    path: format!(
                        "identity/{}/{}",
                        store::name_for_id(verification),
                        store::name_for_id(&image)
                    ),
                    fetch: Fetch::Image(verification.clone(), image),
                })
                .collect(),
            Fetch::Dataset(Dataset::SourceFiles) => {
                let list = if value.is_array() {
                    Some(&value)
                } else {
                    value.get("sourceFiles")
                };
                ids(list)
                    .into_iter()
                    .filter_map(|id| id.parse::<Uuid>().ok())
                    .map(|id| Job {
                        key: format!("source-file:{id}"),
                        path: format!("source-files/{id}"),
                        fetch: Fetch::SourceFile(id),
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

/// The files every session has, before any dataset has listed more: its record, every dataset
/// of the client's list (but the deprecated ones unless asked), the report, the transactions.
pub fn initial_jobs(include_deprecated: bool, session_record: Vec<u8>) -> Vec<Job> {
    let mut jobs = vec![Job {
        key: "session".into(),
        path: "session.json".into(),
        fetch: Fetch::Known(session_record),
    }];
    for dataset in Dataset::ALL {
        if dataset.deprecated() && !include_deprecated {
            continue;
        }
        jobs.push(Job {
            key: dataset_key(dataset),
            path: format!("datasets/{}.json", dataset.name()),
            fetch: Fetch::Dataset(dataset),
        });
    }
    jobs.push(Job {
        key: "report".into(),
        path: "report.pdf".into(),
        fetch: Fetch::Pdf,
    });
    jobs.push(Job {
        key: "transactions-excel".into(),
        path: "transactions.xlsx".into(),
        fetch: Fetch::TransactionsExcel,
    });
    jobs
}

pub fn dataset_key(dataset: Dataset) -> String {
    format!("dataset:{}", dataset.name())
}

/// The datasets this run leaves out on purpose, so that a complete session says what it does
/// not contain: those the service deprecates, unless `--include-deprecated`.
pub fn skipped_datasets(include_deprecated: bool) -> Vec<SkippedFile> {
    if include_deprecated {
        return Vec::new();
    }
    Dataset::ALL
        .into_iter()
        .filter_map(|dataset| {
            dataset.deprecation().map(|note| SkippedFile {
                key: dataset_key(dataset),
                reason: format!("{note} (exported with --include-deprecated)"),
            })
        })
        .collect()
}
