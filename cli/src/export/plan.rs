//! The export's second step: which files a session has. The session record, every dataset of
//! the client's list (generated from the API description), the report and the transactions;
//! then whatever a dataset lists (account statements, attachments, identity verifications and
//! their images, source files), as soon as that dataset is there, read from its content one
//! entry at a time ([`read_listing`]).

use std::collections::HashSet;
use std::io::Read;

use creditdata_client::builder;
use creditdata_client::operation::{Operation, OperationMeta};
use creditdata_client::readiness::{ProviderListProperties, ProviderStatus};
use creditdata_client::session_datasets::Dataset;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
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
            Fetch::Known(content) | Fetch::Dataset(_, content) => std::mem::take(content),
            _ => Vec::new(),
        }
    }
}

/// What one listing came to: the files it adds (plain data, not yet fetched), and how many of
/// its ids were left out by the limit.
#[derive(Debug, Default)]
pub struct Listed {
    pub jobs: Vec<Job>,
    pub beyond: u64,
}

/// The files a session's listings add, kept within bounds and under names no two files share.
pub struct Listings {
    /// What is left of `--max-listed-files` for all of the session's image listings together
    /// (each listing is read with that limit: [`read_listing`]).
    images_left: usize,
    seen: HashSet<String>,
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
            seen: HashSet::new(),
            names,
        }
    }

    /// Marks a file of the session as planned (its key is not listed twice).
    pub fn plan(&mut self, key: &str) -> bool {
        self.seen.insert(key.to_string())
    }

    /// The files of `items` (what `job`'s content lists, [`read_listing`]) that were not
    /// planned yet, each under a name of its own (the whole name, extension included, decided
    /// here from the listing); the images of all of the session's verifications together
    /// within the limit.
    pub fn of(&mut self, job: &Job, items: Items) -> Listed {
        let Items {
            mut taken,
            mut beyond,
        } = items;
        if matches!(job.fetch, Fetch::IdentityImages(_)) {
            if taken.len() > self.images_left {
                beyond += (taken.len() - self.images_left) as u64;
                taken.truncate(self.images_left);
            }
            self.images_left -= taken.len();
        }
        let mut jobs = Vec::new();
        for item in taken {
            self.add(job, item, &mut jobs);
        }
        Listed { jobs, beyond }
    }

    fn add(&mut self, listing: &Job, item: Item, jobs: &mut Vec<Job>) {
        let id = item.id;
        match &listing.fetch {
            Fetch::Dataset(Dataset::AccountStatements, _) => {
                for (key, extension) in [("statement-excel", ".xlsx"), ("statement-tsv", ".tsv")] {
                    let key = format!("{key}:{id}");
                    if !self.seen.insert(key.clone()) {
                        continue;
                    }
                    let path = self.names.claim("statements", &id, extension, &key);
                    let fetch = if extension == ".xlsx" {
                        Fetch::StatementExcel(id.clone())
                    } else {
                        Fetch::StatementTsv(id.clone())
                    };
                    jobs.push(Job { key, path, fetch });
                }
            }
            Fetch::Dataset(Dataset::Attachments, _) => {
                let key = format!("attachment:{id}");
                if self.seen.insert(key.clone()) {
                    let path = self.names.claim("attachments", &id, &item.extension, &key);
                    jobs.push(Job {
                        key,
                        path,
                        fetch: Fetch::Attachment(id),
                    });
                }
            }
            Fetch::Dataset(Dataset::IdentityVerifications, _) => {
                let key = format!("identity-images:{id}");
                if self.seen.insert(key.clone()) {
                    // The verification's directory, then its listing file in it: no image id
                    // can take the listing's name.
                    let dir = self.names.claim("identity", &id, "", &key);
                    let path = format!("{dir}/images.json");
                    self.names.claim_exact(&path);
                    jobs.push(Job {
                        key,
                        path,
                        fetch: Fetch::IdentityImages(id),
                    });
                }
            }
            Fetch::IdentityImages(verification) => {
                let key = format!("image:{verification}:{id}");
                if self.seen.insert(key.clone()) {
                    let dir = listing
                        .path
                        .rsplit_once('/')
                        .map_or("identity", |(dir, _)| dir);
                    let path = self.names.claim(dir, &id, &item.extension, &key);
                    jobs.push(Job {
                        key,
                        path,
                        fetch: Fetch::Image(verification.clone(), id),
                    });
                }
            }
            Fetch::Dataset(Dataset::SourceFiles, _) => {
                let Ok(source_file) = id.parse::<Uuid>() else {
                    return;
                };
                let key = format!("source-file:{source_file}");
                if self.seen.insert(key.clone()) {
                    let path = self.names.claim(
                        "source-files",
                        &source_file.to_string(),
                        &item.extension,
                        &key,
                    );
                    jobs.push(Job {
                        key,
                        path,
                        fetch: Fetch::SourceFile(source_file),
                    });
                }
            }
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

/// One listed file: its id and the extension its listing entry names (empty when none).
pub struct Item {
    id: String,
    extension: String,
}

/// At most the limit's items of a listing, and how many more it has.
#[derive(Default)]
pub struct Items {
    taken: Vec<Item>,
    beyond: u64,
}

/// What a listing's content gives: the items the plan takes, and what it says of its
/// providers (for a dataset that reports readiness).
#[derive(Default)]
pub struct ListingRead {
    pub items: Items,
    pub statuses: Vec<ProviderStatus>,
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
            Fetch::Dataset(dataset, _) => dataset.listing().map(|listing| ListingOf {
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

    /// `` `attachments` `` or `the list`, as an error names what it expected.
    fn what(&self) -> String {
        self.member
            .map_or_else(|| "a list".to_string(), |member| format!("`{member}`"))
    }
}

/// Reads a listing one entry at a time from `reader` (a file, not memory): what memory holds
/// is the items taken (at most `limit`), the providers' statuses (at most `limit` too) and one
/// entry. An error (not JSON, too many statuses) says where, never what the content is.
pub fn read_listing(
    reader: &mut dyn Read,
    listing: ListingOf,
    limit: usize,
) -> Result<ListingRead, String> {
    let mut deserializer = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let visitor = ListingVisitor { listing, limit };
    let read = serde::Deserializer::deserialize_any(&mut deserializer, visitor)
        .and_then(|read| deserializer.end().map(|()| read))
        .map_err(|error| where_it_failed(&error))?;
    Ok(read)
}

/// A JSON error's kind and place, never its text (which may quote the data).
fn where_it_failed(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let text = error.to_string();
    if text.starts_with(TOO_MANY_PROVIDERS) {
        // The visitors' own refusal carries no data: say it.
        return text;
    }
    let kind = match error.classify() {
        Category::Io => "cannot be read",
        Category::Eof => "ends early",
        Category::Data => "is not shaped as a listing",
        Category::Syntax => "is not JSON",
    };
    format!(
        "the listing {kind} (line {}, column {})",
        error.line(),
        error.column()
    )
}

struct ListingVisitor {
    listing: ListingOf,
    limit: usize,
}

impl<'de> Visitor<'de> for ListingVisitor {
    type Value = ListingRead;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(formatter, "a listing with {}", self.listing.what())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ListingRead, A::Error> {
        let mut read = ListingRead::default();
        let readiness = self.listing.dataset.map(Dataset::readiness_properties);
        while let Some(key) = map.next_key::<String>()? {
            let provider_list = readiness
                .and_then(|r| r.provider_lists.iter().find(|list| list.list == key))
                .copied();
            let dataset_status =
                readiness.is_some_and(|r| r.dataset_statuses.iter().any(|status| *status == key));
            if Some(key.as_str()) == self.listing.member {
                read.items = map.next_value_seed(ItemsSeed(self.limit, self.listing.id))?;
            } else if let (Some(list), Some(dataset)) = (provider_list, self.listing.dataset) {
                let seed = StatusesSeed {
                    dataset,
                    list,
                    room: self.limit.saturating_sub(read.statuses.len()),
                };
                read.statuses.extend(map.next_value_seed(seed)?);
            } else if let (true, Some(dataset)) = (dataset_status, self.listing.dataset) {
                let value = map.next_value::<Value>()?;
                if let Some(status) = value.get("status").and_then(Value::as_str) {
                    read.statuses
                        .push(ProviderStatus::dataset_level(dataset, status));
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(read)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ListingRead, A::Error> {
        Ok(ListingRead {
            items: ItemsSeed(self.limit, self.listing.id).visit_seq(seq)?,
            statuses: Vec::new(),
        })
    }
}

/// The most items taken, and the member holding each entry's id.
struct ItemsSeed(usize, &'static str);

impl<'de> DeserializeSeed<'de> for ItemsSeed {
    type Value = Items;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Items, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemsSeed {
    type Value = Items;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a list of items with ids")
    }

    fn visit_unit<E>(self) -> Result<Items, E> {
        Ok(Items::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items, A::Error> {
        let mut items = Items::default();
        // One item at a time, dropped unless taken.
        while let Some(item) = seq.next_element::<Value>()? {
            let Some(id) = item.get(self.1).and_then(Value::as_str) else {
                continue;
            };
            if items.taken.len() < self.0 {
                items.taken.push(Item {
                    id: id.to_string(),
                    extension: extension_of_item(&item),
                });
            } else {
                items.beyond += 1;
            }
        }
        Ok(items)
    }
}

/// How a refusal of too many providers starts.
const TOO_MANY_PROVIDERS: &str = "the listing names more than";

/// A provider list of a dataset's answer, read entry by entry; more entries than `room` is an
/// error (a real session has a handful of providers: a longer list would grow memory).
struct StatusesSeed {
    dataset: Dataset,
    list: ProviderListProperties,
    room: usize,
}

impl<'de> DeserializeSeed<'de> for StatusesSeed {
    type Value = Vec<ProviderStatus>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Vec<ProviderStatus>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StatusesSeed {
    type Value = Vec<ProviderStatus>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(formatter, "a list of providers in `{}`", self.list.list)
    }

    fn visit_unit<E>(self) -> Result<Vec<ProviderStatus>, E> {
        Ok(Vec::new())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<ProviderStatus>, A::Error> {
        let mut statuses = Vec::new();
        while let Some(entry) = seq.next_element::<Value>()? {
            if statuses.len() == self.room {
                return Err(serde::de::Error::custom(format!(
                    "{TOO_MANY_PROVIDERS} {} providers in `{}`",
                    self.room, self.list.list
                )));
            }
            let text = |name: Option<&str>| name.and_then(|n| entry.get(n)).and_then(Value::as_str);
            // A status missing or not text is no answer: counted as failed, never as answered.
            statuses.push(ProviderStatus::new(
                self.dataset,
                text(Some(self.list.source_id)),
                text(self.list.country_code),
                text(Some("status")).unwrap_or_default(),
            ));
        }
        Ok(statuses)
    }
}

/// The extension a listing entry names: its file name's, else its MIME type's, else its `type`
/// read as a format (a source file's `XML`, `JSON`...).
fn extension_of_item(item: &Value) -> String {
    let text = |name: &str| item.get(name).and_then(Value::as_str);
    store::extension_of(text("fileName"))
        .or_else(|| store::extension_for_content_type(text("mimeType")))
        .or_else(|| {
            text("type").and_then(|kind| store::extension_of(Some(&format!("source.{kind}"))))
        })
        .unwrap_or_default()
}

/// Whether a dataset's content leads to more files.
fn dataset_lists_files(dataset: Dataset) -> bool {
    ListingOf::of(&Fetch::Dataset(dataset, Vec::new())).is_some()
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

/// What this run leaves out, so that a complete session says what it does not contain: the
/// datasets the service deprecates, unless `--include-deprecated`; and what a listed entry leads
/// to that the export does not download ([`entry_operations_not_exported`]).
pub fn skipped_files(include_deprecated: bool) -> Vec<SkippedFile> {
    let exported = Dataset::ALL
        .into_iter()
        .filter(|dataset| include_deprecated || !dataset.deprecated());
    let mut skipped = entry_operations_not_exported(exported, &entry_operations_exported());
    if !include_deprecated {
        skipped.extend(Dataset::ALL.into_iter().filter_map(|dataset| {
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
    use super::*;

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

    fn read(job: &Job, content: &[u8], limit: usize) -> ListingRead {
        let listing = ListingOf::of(&job.fetch).unwrap();
        read_listing(&mut &content[..], listing, limit).unwrap()
    }

    fn attachments() -> Job {
        Job {
            key: dataset_key(Dataset::Attachments),
            path: "datasets/attachments.json".into(),
            fetch: Fetch::Dataset(Dataset::Attachments, Vec::new()),
        }
    }

    #[test]
    fn a_long_listing_gives_at_most_the_limit_as_plain_jobs() {
        let items: Vec<Value> = (0..400_000)
            .map(|n| serde_json::json!({"id": format!("att-{n}"), "mimeType": "image/png"}))
            .collect();
        let content = serde_json::to_vec(&serde_json::json!({ "attachments": items })).unwrap();
        let mut listings = Listings::new(250, &[]);
        let listed = listings.of(&attachments(), read(&attachments(), &content, 250).items);
        assert_eq!(listed.jobs.len(), 250);
        assert_eq!(listed.beyond, 399_750);
        assert_eq!(listed.jobs[0].path, "attachments/att-0.png");
    }

    fn account_statements() -> Job {
        Job {
            key: dataset_key(Dataset::AccountStatements),
            path: "datasets/account-statements.json".into(),
            fetch: Fetch::Dataset(Dataset::AccountStatements, Vec::new()),
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
        assert_eq!(read.items.taken.len(), 2);
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
        let listing = ListingOf::of(&account_statements().fetch).unwrap();
        let error = read_listing(&mut &content[..], listing, 10).err().unwrap();
        assert!(error.contains("more than 10 providers"), "{error}");
    }

    #[test]
    fn a_listing_that_cannot_be_read_says_where_never_what() {
        let listing = ListingOf::of(&attachments().fetch).unwrap();
        for content in [
            &br#"{"attachments": [{"id": "Jane Doe"}"#[..],
            br#"{"attachments": "Jane Doe"}"#,
            br#"{"attachments": []} Jane Doe"#,
        ] {
            let error = read_listing(&mut &content[..], listing, 10).err().unwrap();
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
            .of(&attachments(), read(&attachments(), &content, 10).items)
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
        let listed = listings.of(&verification, read(&verification, &content, 10).items);
        assert_ne!(listed.jobs[0].path, "identity/v/images.json");
        assert!(listed.jobs[0].path.starts_with("identity/v/"));
    }
}
