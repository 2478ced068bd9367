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
    /// A dataset, read with the session's other datasets (so that its providers' readiness is
    /// known): its content. Kept from the last run, the file on disk is its content and this is
    /// empty.
    Dataset(Dataset, Vec<u8>),
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
        match &self.fetch {
            Fetch::Dataset(dataset, _) => dataset_lists_files(*dataset),
            Fetch::IdentityImages(_) => true,
            _ => false,
        }
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
            Fetch::Dataset(Dataset::AccountStatements, _) => ids(value.get("accountStatements"))
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
            Fetch::Dataset(Dataset::Attachments, _) => ids(value.get("attachments"))
                .into_iter()
                .map(|id| Job {
                    key: format!("attachment:{id}"),
                    path: format!("attachments/{}", store::name_for_id(&id)),
                    fetch: Fetch::Attachment(id),
                })
                .collect(),
            Fetch::Dataset(Dataset::IdentityVerifications, _) => {
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
            Fetch::Dataset(Dataset::SourceFiles, _) => {
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

/// Whether a dataset's content leads to more files.
fn dataset_lists_files(dataset: Dataset) -> bool {
    matches!(
        dataset,
        Dataset::AccountStatements
            | Dataset::Attachments
            | Dataset::IdentityVerifications
            | Dataset::SourceFiles
    )
}

/// One dataset's file, before it is read.
#[derive(Debug, Clone)]
pub struct DatasetFile {
    pub dataset: Dataset,
    pub key: String,
    pub path: String,
}

impl DatasetFile {
    /// Whether its content leads to more files (kept from the last run, it is then read).
    pub fn lists_files(&self) -> bool {
        dataset_lists_files(self.dataset)
    }

    /// The job that writes (or keeps) it, with its content.
    pub fn with_content(&self, content: Vec<u8>) -> Job {
        Job {
            key: self.key.clone(),
            path: self.path.clone(),
            fetch: Fetch::Dataset(self.dataset, content),
        }
    }
}

/// The files every session has, before any dataset has listed more.
pub struct Plan {
    /// The session record.
    pub record: Job,
    /// Every dataset of the client's list (but the deprecated ones unless asked), read together.
    pub datasets: Vec<DatasetFile>,
    /// The files made of all of the session's data: the report, the transactions. Fetched
    /// after the datasets were read, and kept from the last run only when its providers had
    /// all given their final answer.
    pub session_wide: Vec<Job>,
}

impl Plan {
    pub fn new(include_deprecated: bool, session_record: Vec<u8>) -> Plan {
        let datasets = Dataset::ALL
            .into_iter()
            .filter(|dataset| include_deprecated || !dataset.deprecated())
            .map(|dataset| DatasetFile {
                dataset,
                key: dataset_key(dataset),
                path: format!("datasets/{}.json", dataset.name()),
            })
            .collect();
        Plan {
            record: Job {
                key: "session".into(),
                path: "session.json".into(),
                fetch: Fetch::Known(session_record),
            },
            datasets,
            session_wide: vec![
                Job {
                    key: "report".into(),
                    path: "report.pdf".into(),
                    fetch: Fetch::Pdf,
                },
                Job {
                    key: "transactions-excel".into(),
                    path: "transactions.xlsx".into(),
                    fetch: Fetch::TransactionsExcel,
                },
            ],
        }
    }

    /// The keys of the files a complete session has (more come from what the datasets list).
    pub fn expected(&self) -> Vec<String> {
        std::iter::once(self.record.key.clone())
            .chain(self.datasets.iter().map(|file| file.key.clone()))
            .chain(self.session_wide.iter().map(|job| job.key.clone()))
            .collect()
    }
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
