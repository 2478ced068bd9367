//! The export's second step: which files a session has. The session record, every dataset of
//! the client's list (generated from the API description), the report and the transactions;
//! then whatever a dataset lists (account statements, attachments, identity verifications and
//! their images, source files), as soon as that dataset is there, read from its content one
//! entry at a time ([`crate::answer::read`]): every entry ends as a file to fetch, beyond
//! `--max-listed-files` (counted), unusable (its id cannot name or fetch a file: the session's
//! failure, by position and why) or skipped with its reason (an id listed twice).

use std::collections::{HashMap, HashSet};

use creditdata_client::builder;
use creditdata_client::operation::{Operation, OperationMeta};
use creditdata_client::session_datasets::{Dataset, Gate};
use uuid::Uuid;

use crate::answer::{Entries, Entry, ListingShape, Reading};

use super::manifest::SkippedFile;
use super::store;

/// What to fetch for one file of a session.
#[derive(Debug, Clone)]
pub enum Fetch {
    /// Bytes already at hand (the session record from the search).
    Known(Vec<u8>),
    /// A dataset, streamed to its file with the session's other datasets (so that its
    /// providers' readiness is known) and read back from it.
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

/// One file of a session: its key in the manifest, where it goes (its whole name, decided
/// before it is fetched), what fetches it. Plain data: a listing of many ids costs its jobs'
/// bytes, never a running task each.
#[derive(Debug, Clone)]
pub struct Job {
    pub key: String,
    pub path: String,
    pub fetch: Fetch,
}

impl Job {
    /// The bytes at hand, taken out of the job (which keeps its kind).
    pub fn take_content(&mut self) -> Vec<u8> {
        match &mut self.fetch {
            Fetch::Known(content) => std::mem::take(content),
            _ => Vec::new(),
        }
    }
}

/// What one listing came to: the files it adds (plain data, not yet fetched), how many of its
/// ids were left out by the limit, why some entries cannot be exported (the session's
/// failure), and the entries skipped (an id listed again: its file is the earlier entry's).
#[derive(Debug, Default)]
pub struct Listed {
    pub jobs: Vec<Job>,
    pub beyond: u64,
    pub unusable: Option<String>,
    pub skipped: Vec<SkippedFile>,
}

/// The files a session's listings add, kept within bounds and under names no two files share.
pub struct Listings {
    /// What is left of `--max-listed-files` for all of the session's image listings together
    /// (each listing is read with that limit: [`crate::answer::read`]).
    images_left: usize,
    /// Every file planned, by key, with its path (where an entry listing it again points).
    seen: HashMap<String, String>,
    names: Names,
}

impl Listings {
    /// `limit`: `--max-listed-files`. `fixed`: the session's files whose names do not come
    /// from ids (the record, the datasets, the report...): no id can take their names.
    pub fn new(limit: usize, fixed: &[&str]) -> Listings {
        let mut names = Names::default();
        for path in fixed {
            names.claim_exact(path);
        }
        names.claim_exact(super::manifest::SESSION_MANIFEST);
        Listings {
            images_left: limit,
            seen: HashMap::new(),
            names,
        }
    }

    /// Marks a file of the session as planned (its key is not listed twice).
    pub fn plan(&mut self, key: &str) -> bool {
        self.seen.insert(key.to_string(), String::new()).is_none()
    }

    /// The files of `entries` (what `job`'s content lists, [`crate::answer::read`]) that were
    /// not planned yet, each under a name of its own (the whole name, extension included,
    /// decided here from the listing); the images of all of the session's verifications
    /// together within the limit. An entry whose file is planned already is skipped, saying so.
    pub fn of(&mut self, job: &Job, entries: Entries) -> Listed {
        let Entries {
            mut taken,
            mut beyond,
            unusable,
            unusable_count,
        } = entries;
        let reason = (unusable_count > 0).then(|| {
            Entries {
                unusable,
                unusable_count,
                ..Entries::default()
            }
            .unusable_reason()
        });
        if matches!(job.fetch, Fetch::IdentityImages(_)) {
            if taken.len() > self.images_left {
                beyond += (taken.len() - self.images_left) as u64;
                taken.truncate(self.images_left);
            }
            self.images_left -= taken.len();
        }
        let mut listed = Listed {
            beyond,
            unusable: reason,
            ..Listed::default()
        };
        for entry in taken {
            self.add(job, entry, &mut listed);
        }
        listed
    }

    /// Plans the file `key` at `path` (unless it is planned already: then the entry is skipped,
    /// naming the file that has it).
    fn claim(
        &mut self,
        listing: &Job,
        entry: &Entry,
        key: String,
        path: impl FnOnce(&mut Names) -> String,
        fetch: Fetch,
        listed: &mut Listed,
    ) {
        if let Some(earlier) = self.seen.get(&key) {
            listed.skipped.push(SkippedFile {
                key: format!("{}:entry:{}", listing.key, entry.index),
                reason: format!(
                    "entry {} lists `{key}` again: exported once, as {earlier}",
                    entry.index
                ),
            });
            return;
        }
        let path = path(&mut self.names);
        self.seen.insert(key.clone(), path.clone());
        listed.jobs.push(Job { key, path, fetch });
    }

    fn add(&mut self, listing: &Job, entry: Entry, listed: &mut Listed) {
        let id = entry.id.clone();
        match &listing.fetch {
            Fetch::Dataset(Dataset::AccountStatements) => {
                for (key, extension) in [("statement-excel", ".xlsx"), ("statement-tsv", ".tsv")] {
                    let key = format!("{key}:{id}");
                    let fetch = if extension == ".xlsx" {
                        Fetch::StatementExcel(id.clone())
                    } else {
                        Fetch::StatementTsv(id.clone())
                    };
                    let path = |names: &mut Names| names.claim("statements", &id, extension, &key);
                    let key_again = key.clone();
                    self.claim(listing, &entry, key_again, path, fetch, listed);
                }
            }
            Fetch::Dataset(Dataset::Attachments) => {
                let key = format!("attachment:{id}");
                let path =
                    |names: &mut Names| names.claim("attachments", &id, &entry.extension, &key);
                let fetch = Fetch::Attachment(id.clone());
                self.claim(listing, &entry, key.clone(), path, fetch, listed);
            }
            Fetch::Dataset(Dataset::IdentityVerifications) => {
                let key = format!("identity-images:{id}");
                // The verification's directory, then its listing file in it: no image id can
                // take the listing's name.
                let path = |names: &mut Names| {
                    let dir = names.claim("identity", &id, "", &key);
                    let path = format!("{dir}/images.json");
                    names.claim_exact(&path);
                    path
                };
                let fetch = Fetch::IdentityImages(id.clone());
                self.claim(listing, &entry, key.clone(), path, fetch, listed);
            }
            Fetch::IdentityImages(verification) => {
                let key = format!("image:{verification}:{id}");
                let dir = listing
                    .path
                    .rsplit_once('/')
                    .map_or("identity", |(dir, _)| dir);
                let path = |names: &mut Names| names.claim(dir, &id, &entry.extension, &key);
                let fetch = Fetch::Image(verification.clone(), id.clone());
                self.claim(listing, &entry, key.clone(), path, fetch, listed);
            }
            Fetch::Dataset(Dataset::SourceFiles) => {
                // The reader took only UUIDs here (`uuid_ids`): anything else is unusable.
                let Ok(source_file) = id.parse::<Uuid>() else {
                    return;
                };
                let key = format!("source-file:{source_file}");
                let path = |names: &mut Names| {
                    names.claim(
                        "source-files",
                        &source_file.to_string(),
                        &entry.extension,
                        &key,
                    )
                };
                let fetch = Fetch::SourceFile(source_file);
                self.claim(listing, &entry, key.clone(), path, fetch, listed);
            }
            // A listing the export does not download from: its entry operations are in every
            // manifest's `skipped` (`entry_operations_not_exported`).
            _ => {}
        }
    }
}

/// The names a session's files have taken, compared as a case-insensitive, normalising file
/// system would (NFKC, then lower case): two files never land on one name.
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
}

impl Names {
    fn folded(path: &str) -> String {
        use unicode_normalization::UnicodeNormalization;
        path.nfkc().flat_map(char::to_lowercase).nfkc().collect()
    }

    fn claim_exact(&mut self, path: &str) {
        self.taken.insert(Names::folded(path));
    }

    /// `dir/NAME`: the id's safe name with `extension`, or, when another file has that name,
    /// the same with a tag made from the file's key.
    fn claim(&mut self, dir: &str, id: &str, extension: &str, key: &str) -> String {
        let stem = store::name_for_id(id);
        let mut path = format!("{dir}/{stem}{extension}");
        let tag = &store::digest_of(key.as_bytes()).sha256[..12];
        let mut round = 0u32;
        while !self.taken.insert(Names::folded(&path)) {
            round += 1;
            path = if round == 1 {
                format!("{dir}/{stem}-{tag}{extension}")
            } else {
                format!("{dir}/{stem}-{tag}-{round}{extension}")
            };
        }
        path
    }
}

/// What a job's content lists, when it lists files: the member holding the list (`None` when the
/// content is the list itself), each entry's id member, and the dataset whose providers it may
/// report. A dataset's come from the API description's links ([`Dataset::listing`]).
#[derive(Clone, Copy)]
pub struct ListingOf {
    member: Option<&'static str>,
    id: &'static str,
    dataset: Option<Dataset>,
}

impl ListingOf {
    /// The listing `fetch` obtains, if it obtains one.
    pub fn of(fetch: &Fetch) -> Option<ListingOf> {
        match fetch {
            Fetch::Dataset(dataset) => dataset.listing().map(|listing| ListingOf {
                member: listing.member,
                id: listing.id,
                dataset: Some(*dataset),
            }),
            // One verification's images: `GetIdentityVerificationImages`, which `fetch.rs`
            // calls by name, answers them in `images`.
            Fetch::IdentityImages(_) => Some(ListingOf {
                member: Some("images"),
                id: "id",
                dataset: None,
            }),
            _ => None,
        }
    }
}

/// How the export reads what `fetch` obtains (`None`: a file it does not read). A dataset is
/// read for its providers' statuses (and its entries, when it lists files), a verification's
/// images for their entries; nothing else is read, and the bytes are stored as they are.
pub fn reading_of(fetch: &Fetch, limit: usize) -> Option<Reading> {
    let listing = ListingOf::of(fetch);
    let dataset = match fetch {
        Fetch::Dataset(dataset) => Some(*dataset),
        Fetch::IdentityImages(_) => None,
        _ => return None,
    };
    Some(Reading {
        dataset,
        listing: listing.map(|listing| ListingShape {
            member: listing.member,
            id: listing.id,
            // A source file's id is a UUID (the description says so, and its path takes one).
            uuid_ids: listing.dataset == Some(Dataset::SourceFiles),
            extension: extension_of_entry,
        }),
        limit,
        printable: false,
    })
}

/// The extension a listing entry names: its file name's, else its MIME type's, else its `type`
/// read as a format (a source file's `XML`, `JSON`...): [`crate::answer::EXTENSION_MEMBERS`].
fn extension_of_entry([file_name, mime_type, kind]: [Option<&str>; 3]) -> String {
    store::extension_of(file_name)
        .or_else(|| store::extension_for_content_type(mime_type))
        .or_else(|| kind.and_then(|kind| store::extension_of(Some(&format!("source.{kind}")))))
        .unwrap_or_default()
}

/// One dataset's file, before it is read.
#[derive(Debug, Clone)]
pub struct DatasetFile {
    pub dataset: Dataset,
    pub key: String,
    pub path: String,
}

impl DatasetFile {
    /// The job that writes (or keeps) it.
    pub fn job(&self) -> Job {
        Job {
            key: self.key.clone(),
            path: self.path.clone(),
            fetch: Fetch::Dataset(self.dataset),
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
            .filter(|dataset| is_exported(*dataset, include_deprecated))
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

/// Whether the export writes `dataset`: every dataset the service does not deprecate, one it
/// deprecates when asked (`--include-deprecated`), and one the default readiness gate keeps (the
/// vendor deprecated it after this client was first generated: an export made before that
/// release wrote it, and "complete" still waits for it).
pub fn is_exported(dataset: Dataset, include_deprecated: bool) -> bool {
    include_deprecated || !dataset.deprecated() || Gate::Default.requires(dataset)
}

pub fn dataset_key(dataset: Dataset) -> String {
    format!("dataset:{}", dataset.name())
}

/// What this run leaves out, so that a complete session says what it does not contain: the
/// datasets the service deprecates, unless `--include-deprecated`; and what a listed entry leads
/// to that the export does not download ([`entry_operations_not_exported`]).
pub fn skipped_files(include_deprecated: bool) -> Vec<SkippedFile> {
    let exported = Dataset::ALL
        .into_iter()
        .filter(|dataset| is_exported(*dataset, include_deprecated));
    let mut skipped = entry_operations_not_exported(exported, &entry_operations_exported());
    if !include_deprecated {
        skipped.extend(Dataset::ALL.into_iter().filter_map(|dataset| {
            if is_exported(dataset, include_deprecated) {
                return None;
            }
            dataset.deprecation().map(|note| SkippedFile {
                key: dataset_key(dataset),
                reason: format!("{note} (exported with --include-deprecated)"),
            })
        }));
    }
    skipped
}

/// The operations a listed entry leads to that the export obtains: those `fetch.rs` calls for an
/// entry, and `GetSourceFile`, whose answer is the listed entry itself (already in the listing).
fn entry_operations_exported() -> [&'static OperationMeta; 6] {
    [
        <builder::GetAccountStatementExcel<'static> as Operation>::META,
        <builder::GetAccountStatementTsv<'static> as Operation>::META,
        <builder::GetAttachmentContent<'static> as Operation>::META,
        <builder::GetIdentityVerificationImages<'static> as Operation>::META,
        <builder::GetSourceFile<'static> as Operation>::META,
        <builder::GetSourceFileContent<'static> as Operation>::META,
    ]
}

/// The operations the listings of `datasets` lead to (the API description's links,
/// [`Dataset::listing`]) that are not in `exported`, each once: a release that adds one (an
/// attachment's thumbnail) has the export say so in every session's manifest, by name, until
/// the export learns to download it, instead of leaving it out unsaid.
fn entry_operations_not_exported(
    datasets: impl Iterator<Item = Dataset>,
    exported: &[&OperationMeta],
) -> Vec<SkippedFile> {
    let mut seen = HashSet::new();
    let mut skipped = Vec::new();
    for dataset in datasets {
        let Some(listing) = dataset.listing() else {
            continue;
        };
        for operation in listing.entry_operations {
            if exported.iter().any(|known| known.id == operation.id) || !seen.insert(operation.id) {
                continue;
            }
            skipped.push(SkippedFile {
                key: format!("operation:{}", operation.id),
                reason: format!(
                    "each entry of {} leads to {} ({} {}), which this export does not download \
                     yet; read it with the client (Client::{})",
                    dataset.name(),
                    operation.id,
                    operation.method,
                    operation.path,
                    operation.rust_name
                ),
            });
        }
    }
    skipped
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::answer::AnswerRead;

    #[test]
    fn every_entry_operation_the_export_does_not_download_is_said_by_name() {
        // Whatever the description's listings lead to: those the export knows are obtained,
        // every other one is in the manifest's `skipped`, once, with its method and path.
        let exported = entry_operations_exported();
        let skipped = skipped_files(true);
        let mut expected = HashSet::new();
        for dataset in Dataset::ALL {
            for operation in dataset.listing().map_or(&[][..], |l| l.entry_operations) {
                if !exported.iter().any(|known| known.id == operation.id) {
                    expected.insert(format!("operation:{}", operation.id));
                }
            }
        }
        let said: HashSet<String> = skipped.iter().map(|file| file.key.clone()).collect();
        assert_eq!(said, expected);

        // With nothing known, every entry operation is said: named, with where it is.
        let all = entry_operations_not_exported(Dataset::ALL.into_iter(), &[]);
        let (dataset, listing) = Dataset::ALL
            .into_iter()
            .find_map(|dataset| Some((dataset, dataset.listing()?)))
            .expect("the description lists entries somewhere");
        let operation = listing.entry_operations[0];
        let entry = all
            .iter()
            .find(|file| file.key == format!("operation:{}", operation.id))
            .unwrap();
        let each = format!("each entry of {}", dataset.name());
        assert!(entry.reason.contains(&each), "{}", entry.reason);
        assert!(entry.reason.contains(operation.path), "{}", entry.reason);
        let ids: Vec<&str> = all.iter().map(|file| file.key.as_str()).collect();
        let unique: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(ids.len(), unique.len(), "each operation once: {ids:?}");
    }

    fn read(job: &Job, content: &[u8], limit: usize) -> AnswerRead {
        try_read(job, content, limit).unwrap()
    }

    fn try_read(job: &Job, content: &[u8], limit: usize) -> Result<AnswerRead, String> {
        crate::answer::read(content, reading_of(&job.fetch, limit).unwrap())
    }

    fn attachments() -> Job {
        Job {
            key: dataset_key(Dataset::Attachments),
            path: "datasets/attachments.json".into(),
            fetch: Fetch::Dataset(Dataset::Attachments),
        }
    }

    #[test]
    fn a_long_listing_gives_at_most_the_limit_as_plain_jobs() {
        let items: Vec<Value> = (0..400_000)
            .map(|n| serde_json::json!({"id": format!("att-{n}"), "mimeType": "image/png"}))
            .collect();
        let content = serde_json::to_vec(&serde_json::json!({ "attachments": items })).unwrap();
        let mut listings = Listings::new(250, &[]);
        let listed = listings.of(&attachments(), read(&attachments(), &content, 250).entries);
        assert_eq!(listed.jobs.len(), 250);
        assert_eq!(listed.beyond, 399_750);
        assert_eq!(listed.jobs[0].path, "attachments/att-0.png");
    }

    fn account_statements() -> Job {
        Job {
            key: dataset_key(Dataset::AccountStatements),
            path: "datasets/account-statements.json".into(),
            fetch: Fetch::Dataset(Dataset::AccountStatements),
        }
    }

    #[test]
    fn a_listing_gives_its_providers_statuses_as_the_description_names_them() {
        let content = serde_json::to_vec(&serde_json::json!({
            "sources": [
                {"sourceId": "BANK", "countryCode": "DEU", "status": "SUCCESS"},
                {"sourceId": "OTHER", "status": "PROVIDER_MAINTENANCE"},
                {"sourceId": "NO-STATUS"},
            ],
            "accountStatements": [{"id": "s1"}, {"id": "s2"}],
        }))
        .unwrap();
        let read = read(&account_statements(), &content, 10);
        assert_eq!(read.entries.taken.len(), 2);
        let statuses: Vec<(Option<&str>, String)> = read
            .statuses
            .iter()
            .map(|s| (s.source_id.as_deref(), s.outcome().to_string()))
            .collect();
        assert_eq!(
            statuses,
            [
                (Some("BANK"), "answered".to_string()),
                (Some("OTHER"), "failed".to_string()),
                (Some("NO-STATUS"), "failed".to_string()),
            ]
        );
    }

    #[test]
    fn a_listing_naming_more_providers_than_the_limit_is_refused() {
        let sources: Vec<Value> = (0..11)
            .map(|n| serde_json::json!({"sourceId": format!("P{n}"), "status": "SUCCESS"}))
            .collect();
        let content = serde_json::to_vec(&serde_json::json!({ "sources": sources })).unwrap();
        let error = try_read(&account_statements(), &content, 10).unwrap_err();
        assert!(error.contains("more than 10 providers"), "{error}");
    }

    #[test]
    fn a_listing_that_cannot_be_read_says_where_never_what() {
        for content in [
            &br#"{"attachments": [{"id": "Jane Doe"}"#[..],
            br#"{"attachments": "Jane Doe"}"#,
            br#"{"attachments": []} Jane Doe"#,
        ] {
            let error = try_read(&attachments(), content, 10).unwrap_err();
            assert!(error.contains("line 1"), "{error}");
            assert!(!error.contains("Jane"), "{error}");
        }
    }

    #[test]
    fn names_differ_after_case_folding_and_normalisation() {
        let content = serde_json::to_vec(&serde_json::json!({ "attachments": [
            {"id": "scan", "fileName": "x.pdf"},
            {"id": "scan.pdf", "fileName": null},
            {"id": "SCAN.PDF"},
            {"id": "e\u{301}"},
            {"id": "\u{e9}"},
        ]}))
        .unwrap();
        let mut listings = Listings::new(10, &[]);
        let paths: Vec<String> = listings
            .of(&attachments(), read(&attachments(), &content, 10).entries)
            .jobs
            .into_iter()
            .map(|job| job.path)
            .collect();
        assert_eq!(paths[0], "attachments/scan.pdf");
        let folded: HashSet<String> = paths.iter().map(|p| Names::folded(p)).collect();
        assert_eq!(folded.len(), 5, "{paths:?}");
    }

    #[test]
    fn an_image_never_takes_its_listings_name() {
        let verification = Job {
            key: "identity-images:v".into(),
            path: "identity/v/images.json".into(),
            fetch: Fetch::IdentityImages("v".into()),
        };
        let mut listings = Listings::new(10, &[]);
        listings.names.claim_exact("identity/v/images.json");
        let content =
            serde_json::to_vec(&serde_json::json!({ "images": [{"id": "images.json"}] })).unwrap();
        let listed = listings.of(&verification, read(&verification, &content, 10).entries);
        assert_ne!(listed.jobs[0].path, "identity/v/images.json");
        assert!(listed.jobs[0].path.starts_with("identity/v/"));
    }
}
