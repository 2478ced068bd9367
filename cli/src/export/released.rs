//! Tests: the export's one download by operation metadata takes an operation only a vendor
//! release declares. The release is made from the frozen 1.0 (`creditdata_codegen::made_release`,
//! as the mock's tests make it), the mock serves it, and the listing it adds with its entry
//! operations (a second path parameter: the entry as JSON, its document as a PDF) is planned and
//! fetched through the same steps as a dataset's listing ([`super::plan::Listings`],
//! [`super::fetch::obtain`]) and recorded in the session's manifest. This client was generated
//! before that release: the listing and its operations' metadata are read from the released
//! description and handed to the planner as the generated `Dataset::listing` would give them
//! after `cargo xtask regen` (the integration test `export_entries` checks the generated
//! listings themselves, whatever they are).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use creditdata_client::Client;
use creditdata_client::operation::{OperationMeta, ResponseKind};
use creditdata_codegen::{document, listings, made_release, pipeline};
use creditdata_mock::{MockConfig, MockServer, TokenOptions};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};

use super::context::Context;
use super::fetch::obtain;
use super::files::{Kept, ListingOf, parameters};
use super::plan::{EntriesOf, Fetch, Job, Listings};
use super::progress::Progress;
use super::record::SessionReport;
use super::store::{self, Tree};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The frozen 1.0 as published, and the effective description of the release made from it, as
/// `regen` makes it.
fn released_effective() -> (Value, Value) {
    let root = workspace();
    let frozen = root.join("codegen/tests/data/frozen-1.0");
    let published = document::load(&frozen.join("spec/openapi.json")).expect("the frozen 1.0");
    let released = made_release::make(&published)
        .and_then(|made| made.apply(&published))
        .expect("a release is made from the frozen 1.0");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, released.to_string()).expect("write");
    let effective = pipeline::run(&pipeline::Inputs {
        spec,
        overlays: frozen.join("overlays"),
        lenient: false,
        display_root: root,
    })
    .unwrap_or_else(|e| panic!("the release generates:\n{e}"))
    .effective;
    (published, effective)
}

/// An operation of the description as the generated metadata would give it (leaked: the
/// metadata of the generated client is `'static`).
fn meta_of(operation: &document::Operation<'_>) -> &'static OperationMeta {
    let text = |value: &str| -> &'static str { Box::leak(value.to_string().into_boxed_str()) };
    let id = operation.operation["operationId"]
        .as_str()
        .expect("the effective description names every operation");
    let success = &operation.operation["responses"]["200"]["content"];
    let response = if success.get("application/json").is_some() {
        ResponseKind::Json
    } else {
        ResponseKind::Stream
    };
    Box::leak(Box::new(OperationMeta {
        id: text(id),
        rust_name: text(id),
        method: "GET",
        path: text(operation.path),
        summary: "",
        idempotent: true,
        deprecated: false,
        response,
    }))
}

#[tokio::test]
async fn a_releases_new_entry_operations_are_downloaded_for_every_entry_named_by_the_rule() {
    let (published, effective) = released_effective();
    // What the frozen 1.0 has not: the release's own (this client has them too when it was
    // generated from such a release, as in the release-day rehearsal's copy).
    let new = |path: &str| published["paths"].get(path).is_none();
    // The listing the release adds: an answer whose links list entries.
    let (listing_operation, listing) = document::operations(&effective)
        .filter(|operation| operation.method == "get" && new(operation.path))
        .find_map(|operation| {
            let listing = listings::listing(&effective, operation.operation).ok()??;
            Some((meta_of(&operation), listing))
        })
        .expect("the release adds a listing");
    let entry_operations: Vec<&'static OperationMeta> = listing
        .entry_operations
        .iter()
        .map(|id| {
            let operation = document::operations(&effective)
                .find(|operation| operation.operation["operationId"] == json!(id))
                .expect("a link's operation is in the description");
            meta_of(&operation)
        })
        .collect();
    assert!(
        entry_operations
            .iter()
            .all(|operation| parameters(operation.path) == 2 && new(operation.path)),
        "the release's entry operations take the session's id and the entry's, and are new: \
         {entry_operations:?}"
    );
    assert!(
        entry_operations
            .iter()
            .any(|operation| operation.response == ResponseKind::Stream),
        "one of them answers a file"
    );

    let mock = MockServer::start(MockConfig {
        effective_description: Some(Arc::new(effective)),
        provider_delay: Duration::ZERO,
        provider_error_one_in: 0,
        ..MockConfig::default()
    })
    .await
    .expect("the mock starts on the release");
    let token = mock.mint_token(&TokenOptions::default()).expect("a token");
    let client = Client::builder()
        .base_url(mock.base_url())
        .bearer_token(token)
        .build()
        .expect("a client");
    let session = create_completed_session(&mock, &client).await;

    let out = tempfile::tempdir().unwrap();
    let tree = Tree::open(out.path()).expect("the tree");
    let progress = Progress::new();
    let (stop, _) = watch::channel(false);
    let context = Context {
        client: &client,
        tree: &tree,
        include_deprecated: false,
        concurrency: 2,
        permits: Semaphore::new(2),
        max_listed_files: 1_000,
        max_listing_bytes: 64 << 20,
        held: Semaphore::new(1),
        live: Semaphore::new(2),
        peak_live: AtomicUsize::new(0),
        stop,
        progress: &progress,
    };
    let dir = Path::new("sessions").join(session.to_string());
    tree.create_dir_all(&dir).unwrap();

    // The listing, as a dataset's: its file read back entry by entry.
    let name = listing_operation
        .path
        .rsplit('/')
        .next()
        .expect("a path")
        .to_string();
    let of = ListingOf {
        member: listing.member.as_deref().map(|m| &*Box::leak(m.into())),
        id: Box::leak(listing.id.clone().into_boxed_str()),
        uuid_ids: false,
        entry_operations: entry_operations.clone(),
    };
    let listing_job = Job {
        key: format!("dataset:{name}"),
        path: format!("datasets/{name}.json"),
        fetch: Fetch::Operation {
            operation: listing_operation,
            ids: Vec::new(),
            kept: Kept::Listing(of.clone()),
        },
    };
    let mut complete = BTreeMap::new();
    let (job, obtained) = obtain(&context, &dir, session, listing_job, None).await;
    let Ok(mut obtained) = obtained else {
        panic!("the release's listing is not obtained");
    };
    let entries = obtained.listing.take().expect("read back").entries;
    let entry_ids: Vec<String> = entries.taken.iter().map(|entry| entry.id.clone()).collect();
    assert!(
        !entry_ids.is_empty(),
        "the mock lists entries of the release's listing"
    );
    complete.insert(obtained.entry.key.clone(), obtained.entry);

    let mut listings = Listings::new(1_000, &[&job.path]);
    let planned = listings.entries_of(
        &job,
        Some(EntriesOf {
            of,
            dir: name.clone(),
            ids: Vec::new(),
            nested: false,
        }),
        entries,
    );
    assert_eq!(planned.jobs.len(), entry_ids.len() * entry_operations.len());
    for next in planned.jobs {
        let key = next.key.clone();
        let (_, result) = obtain(&context, &dir, session, next, None).await;
        match result {
            Ok(obtained) => {
                complete.insert(obtained.entry.key.clone(), obtained.entry);
            }
            Err(_) => panic!("{key} was not fetched"),
        }
    }
    let mut report = SessionReport::new(session, "COMPLETED_BY_CUSTOMER".into());
    report
        .record(&tree, &dir, false, &[], complete, false)
        .await;

    // A file per listed entry for each new operation, named by the rule, in the manifest.
    let session_dir = out.path().join(&dir);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(session_dir.join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    for operation in &entry_operations {
        let literals: Vec<&str> = operation
            .path
            .rsplit_once('}')
            .map(|(_, rest)| rest.split('/').filter(|s| !s.is_empty()).collect())
            .unwrap_or_default();
        for id in &entry_ids {
            let key = format!("{}:{id}", operation.id);
            let file = files
                .iter()
                .find(|file| file["key"] == key.as_str())
                .unwrap_or_else(|| panic!("{key} is not in the manifest: {manifest}"));
            assert_eq!(file["operation"], operation.id);
            let path = file["path"].as_str().unwrap();
            let stem = format!("{name}/{}", store::name_for_id(id));
            let expected = match operation.response {
                ResponseKind::Json => format!("{stem}.json"),
                _ => format!("{stem}-{}", literals.join("-")),
            };
            assert!(
                path.starts_with(&expected),
                "{key} is at {path}, not {expected}"
            );
            let bytes = std::fs::read(session_dir.join(path)).unwrap();
            assert_eq!(file["bytes"], bytes.len() as u64);
            assert_eq!(file["sha256"], store::digest_of(&bytes).sha256);
            if operation.response == ResponseKind::Json {
                // The entry itself, as the service answers it for its id.
                let entry: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(entry[listing.id.as_str()], id.as_str(), "{path}");
            } else {
                assert!(!bytes.is_empty(), "{path} is empty");
            }
        }
    }
    mock.shutdown().await;
}

/// A session on the mock whose customer has given consent.
async fn create_completed_session(mock: &MockServer, client: &Client) -> uuid::Uuid {
    use creditdata_client::types::{CreateSessionRequest, CreateSessionRequestSubjectEmail};
    let email: CreateSessionRequestSubjectEmail =
        "subject@example.com".parse().expect("an address");
    let query: crate::query::QuerySpec = "GBR:score".parse().expect("a query");
    let body = CreateSessionRequest::builder()
        .subject_email(email)
        .query_parameters(vec![query.to_input().expect("a query input")]);
    let session = client
        .create_session()
        .body(body)
        .call()
        .await
        .expect("the session is created");
    let url = format!("{}/_mock/sessions/{}/complete", mock.base_url(), session.id);
    let response = reqwest::Client::new()
        .post(&url)
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .send()
        .await
        .expect("the mock answers");
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
    session.id
}
