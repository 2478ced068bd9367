//! The export's second step: which files a session has. The session record, every dataset of
//! the client's list (generated from the API description), the session's own files (the report,
//! the transactions: [`super::files::session_files`]); then, as soon as a dataset that lists
//! entries is there, every operation each entry leads to ([`super::files`]: the description's
//! links; a listing inside such an answer too), read from its content one entry at a time
//! ([`crate::answer::read`]): every entry ends as files to fetch, beyond `--max-listed-files`
//! (counted), unusable (its id cannot name or fetch a file: the session's failure, by position
//! and why) or skipped with its reason (an id listed twice).

use std::collections::{HashMap, HashSet};

use creditdata_client::operation::OperationMeta;
use creditdata_client::session_datasets::{Dataset, Gate};
use uuid::Uuid;

use crate::answer::{Entries, Entry, ListingShape, Reading};

use super::files::{self, Kept, ListingOf, Naming};
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
    /// A `GET` by its metadata (a session file, an entry's): the session's id, then `ids`, as
    /// its path's values; its answer kept as `kept` says.
    Operation {
        operation: &'static OperationMeta,
        ids: Vec<String>,
        kept: Kept,
    },
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
    /// The operationId whose answer the file is (`None` for the session record at hand).
    pub fn operation(&self) -> Option<&'static str> {
        match &self.fetch {
            Fetch::Known(_) => None,
            Fetch::Dataset(dataset) => Some(dataset.operation_id()),
            Fetch::Operation { operation, .. } => Some(operation.id),
        }
    }

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
    /// What is left of `--max-listed-files` for all of the listings inside entries' answers
    /// together (an identity verification's images: each listing is read with that limit,
    /// [`crate::answer::read`], and all of a session's together are held to it).
    nested_left: usize,
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
            nested_left: limit,
            seen: HashMap::new(),
            names,
        }
    }

    /// Marks a file of the session as planned (its key is not listed twice).
    pub fn plan(&mut self, key: &str) -> bool {
        self.seen.insert(key.to_string(), String::new()).is_none()
    }

    /// The files of `entries` (what `job`'s content lists, [`crate::answer::read`]) that were
    /// not planned yet: for each entry, one per operation taking it ([`files`]), each under a
    /// name of its own (the whole name, extension included, decided here from the listing); the
    /// entries of all of the session's listings inside entries' answers together within the
    /// limit. An entry whose file is planned already is skipped, saying so.
    pub fn of(&mut self, job: &Job, entries: Entries) -> Listed {
        let listing = EntriesOf::of(job);
        self.entries_of(job, listing, entries)
    }

    /// [`Listings::of`] with what `job` lists given (`None`: nothing).
    pub fn entries_of(
        &mut self,
        job: &Job,
        listing: Option<EntriesOf>,
        entries: Entries,
    ) -> Listed {
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
        if listing.as_ref().is_some_and(|listing| listing.nested) {
            if taken.len() > self.nested_left {
                beyond += (taken.len() - self.nested_left) as u64;
                taken.truncate(self.nested_left);
            }
            self.nested_left -= taken.len();
        }
        let mut listed = Listed {
            beyond,
            unusable: reason,
            ..Listed::default()
        };
        if let Some(listing) = listing {
            for entry in taken {
                self.add(job, &listing, entry, &mut listed);
            }
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

    /// Plans the files of one entry: one per operation taking it, fetched with the listing's
    /// own ids and the entry's.
    fn add(&mut self, job: &Job, listing: &EntriesOf, entry: Entry, listed: &mut Listed) {
        let id = if listing.of.uuid_ids {
            // The reader took only UUIDs here (`uuid_ids`): anything else is unusable.
            match entry.id.parse::<Uuid>() {
                Ok(id) => id.to_string(),
                Err(_) => return,
            }
        } else {
            entry.id.clone()
        };
        for operation in &listing.of.entry_operations {
            // One the export cannot fill is in every manifest's `skipped`
            // (`files::entry_operations_not_exported`).
            if files::parameters(operation.path) != listing.ids.len() + 2 {
                continue;
            }
            let mut ids = listing.ids.clone();
            ids.push(id.clone());
            let name = files::entry_name(operation, &ids);
            let key = name.key.clone();
            let path = |names: &mut Names| match &name.naming {
                Naming::File {
                    dir,
                    suffix,
                    extension,
                } => {
                    let dir = dir.as_deref().unwrap_or(&listing.dir);
                    let extension = extension.as_deref().unwrap_or(&entry.extension);
                    names.claim(dir, &id, suffix, extension, &name.key)
                }
                // The entry's directory, then its listing file in it: no id listed there can
                // take the listing's name.
                Naming::Listing { dir, name: file } => {
                    let dir = names.claim(dir, &id, "", "", &name.key);
                    let path = format!("{dir}/{file}");
                    names.claim_exact(&path);
                    path
                }
            };
            let fetch = Fetch::Operation {
                operation,
                ids,
                kept: files::kept_of_entry(operation),
            };
            self.claim(job, &entry, key, path, fetch, listed);
        }
    }
}

/// A listing as the planner reads it: what it is, the directory its entries' files go to, the
/// ids its own answer was fetched with, and whether it is inside an entry's answer.
pub struct EntriesOf {
    pub of: ListingOf,
    pub dir: String,
    pub ids: Vec<String>,
    pub nested: bool,
}

impl EntriesOf {
    fn of(job: &Job) -> Option<EntriesOf> {
        match &job.fetch {
            Fetch::Dataset(dataset) => {
                let of = files::listing_of_dataset(*dataset)?;
                Some(EntriesOf {
                    dir: files::entry_dir(*dataset, &of),
                    of,
                    ids: Vec::new(),
                    nested: false,
                })
            }
            Fetch::Operation {
                ids,
                kept: Kept::Listing(of),
                ..
            } => Some(EntriesOf {
                of: of.clone(),
                dir: job
                    .path
                    .rsplit_once('/')
                    .map_or_else(String::new, |(dir, _)| dir.to_string()),
                ids: ids.clone(),
                nested: true,
            }),
            _ => None,
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

    /// `dir/NAME`: the id's safe name with `suffix` and `extension`, or, when another file has
    /// that name, the same with a tag made from the file's key.
    fn claim(&mut self, dir: &str, id: &str, suffix: &str, extension: &str, key: &str) -> String {
        let stem = format!("{}{suffix}", store::name_for_id(id));
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

/// How the export reads what `fetch` obtains (`None`: a file it does not read). A dataset is
/// read for its providers' statuses (and its entries, when it lists files), a listing inside an
/// entry's answer for its entries, another JSON answer to check that it is one; nothing else is
/// read, and the bytes are stored as they are.
pub fn reading_of(fetch: &Fetch, limit: usize) -> Option<Reading> {
    let (dataset, listing) = match fetch {
        Fetch::Dataset(dataset) => (Some(*dataset), files::listing_of_dataset(*dataset)),
        Fetch::Operation {
            kept: Kept::Listing(listing),
            ..
        } => (None, Some(listing.clone())),
        Fetch::Operation {
            kept: Kept::Json, ..
        } => (None, None),
        _ => return None,
    };
    Some(Reading {
        dataset,
        listing: listing.map(|listing| ListingShape {
            member: listing.member,
            id: listing.id,
            uuid_ids: listing.uuid_ids,
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
    /// The session's own files ([`files::session_files`]): the report, the transactions. Fetched
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
            session_wide: files::session_files()
                .into_iter()
                .map(|file| Job {
                    key: file.key,
                    path: file.path,
                    fetch: Fetch::Operation {
                        operation: file.operation,
                        ids: Vec::new(),
                        kept: file.kept,
                    },
                })
                .collect(),
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
/// datasets the service deprecates, unless `--include-deprecated`; and the operations a listed
/// entry leads to that the export cannot fill ([`files::entry_operations_not_exported`]).
pub fn skipped_files(include_deprecated: bool) -> Vec<SkippedFile> {
    let exported = Dataset::ALL
        .into_iter()
        .filter(|dataset| is_exported(*dataset, include_deprecated));
    let mut skipped = files::entry_operations_not_exported(exported);
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::answer::AnswerRead;

    #[test]
    fn every_entry_operation_is_planned_for_every_entry_or_said_by_name() {
        // Whatever the description's listings lead to: an entry of each listing is planned as
        // one file per operation taking it (fetched by that operation, with the entry's id), and
        // an operation the export cannot fill is in the manifest's `skipped`, once, with its
        // method and path.
        let skipped = skipped_files(true);
        let said: HashSet<String> = skipped
            .iter()
            .filter(|file| file.key.starts_with("operation:"))
            .map(|file| file.key.clone())
            .collect();
        let mut listings = Listings::new(100, &[]);
        let mut seen = 0;
        for dataset in Dataset::ALL {
            let Some(listing) = dataset.listing() else {
                continue;
            };
            let job = DatasetFile {
                dataset,
                key: dataset_key(dataset),
                path: format!("datasets/{}.json", dataset.name()),
            }
            .job();
            // A UUID serves every listing (one whose ids must be UUIDs included).
            let id = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef).to_string();
            let entries = Entries {
                taken: vec![Entry {
                    index: 0,
                    id: id.clone(),
                    extension: ".pdf".into(),
                }],
                ..Entries::default()
            };
            let planned = listings.of(&job, entries).jobs;
            for operation in listing.entry_operations {
                seen += 1;
                let fetched = planned.iter().find(|job| match &job.fetch {
                    Fetch::Operation {
                        operation: by, ids, ..
                    } => by.id == operation.id && ids == std::slice::from_ref(&id),
                    _ => false,
                });
                match fetched {
                    Some(job) => {
                        assert!(job.key.ends_with(&format!(":{id}")), "{}", job.key);
                        assert_eq!(job.operation(), Some(operation.id));
                        assert!(
                            !said.contains(&format!("operation:{}", operation.id)),
                            "{} both planned and skipped",
                            operation.id
                        );
                    }
                    None => assert!(
                        said.contains(&format!("operation:{}", operation.id)),
                        "{} neither planned nor said: {planned:?}",
                        operation.id
                    ),
                }
            }
        }
        assert!(seen > 0, "the description lists entries somewhere");
        let keys: Vec<&str> = skipped.iter().map(|file| file.key.as_str()).collect();
        let unique: HashSet<&str> = keys.iter().copied().collect();
        assert_eq!(keys.len(), unique.len(), "each operation once: {keys:?}");
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
        // The listing inside an entry's answer the export named before (an identity
        // verification's images), found by what it says of itself.
        let Some(images) = creditdata_client::operations::ALL.iter().find(|operation| {
            files::earlier_of(operation)
                .is_some_and(|earlier| matches!(earlier.place, files::Place::EntryListing { .. }))
        }) else {
            return;
        };
        let verification = Job {
            key: "identity-images:v".into(),
            path: "identity/v/images.json".into(),
            fetch: Fetch::Operation {
                operation: images,
                ids: vec!["v".into()],
                kept: files::kept_of_entry(images),
            },
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
