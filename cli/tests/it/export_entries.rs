//! Every entry operation of every listing the description declares is exported for every entry,
//! derived from the generated metadata ([`Dataset::listing`]) and the description's own
//! operations: nothing here names a listing, a member or an operation, so the release-day
//! rehearsal's copy (the whole CI on a client generated from a made release) proves it for the
//! operations that release adds.

use creditdata_client::operations;
use creditdata_client::session_datasets::Dataset;
use serde_json::Value;

use crate::export::{
    EXPORT_TREE, assert_status, completed_sessions, creditdata, mock_with, summary, vars,
    verified_manifests,
};

/// How many values an operation's path takes.
fn parameters(path: &str) -> usize {
    path.split('/')
        .filter(|s| s.len() > 2 && s.starts_with('{') && s.ends_with('}'))
        .count()
}

/// The ids of the entries a listing's answer lists (`member`'s entries, or the list itself).
fn listed_ids(answer: &Value, member: Option<&str>, id: &str) -> Vec<String> {
    let list = match member {
        Some(member) => &answer[member],
        None => answer,
    };
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry[id].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn every_entry_operation_of_every_listing_is_exported_for_every_entry() {
    let mock = mock_with(creditdata_mock::realism::Realism::new()).await;
    let work = tempfile::tempdir().unwrap();
    let ids = completed_sessions(&mock, work.path(), 2).await;
    let vars = vars(&mock, mock.base_url());
    let mut args = EXPORT_TREE.to_vec();
    // Every dataset, its listings included, whatever the service deprecates.
    args.push("--include-deprecated");
    let output = creditdata(work.path(), &vars, &args).await;
    assert_status(&output, 0);
    let first = summary(&output);
    assert_eq!(first["totals"]["filesFailed"], 0, "{first}");
    let root = work.path().join("tree");
    let manifests = verified_manifests(&root);

    let mut checked = 0;
    for id in &ids {
        let manifest = &manifests[id];
        let files = manifest["files"].as_array().unwrap();
        let skipped = manifest["skipped"].as_array().cloned().unwrap_or_default();
        for dataset in Dataset::ALL {
            let Some(listing) = dataset.listing() else {
                continue;
            };
            let dataset_file = files
                .iter()
                .find(|file| file["operation"] == dataset.operation_id())
                .unwrap_or_else(|| panic!("{} not exported: {manifest}", dataset.name()));
            let path = root
                .join("sessions")
                .join(id)
                .join(dataset_file["path"].as_str().unwrap());
            let answer: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let entries = listed_ids(&answer, listing.member, listing.id);
            for operation in listing.entry_operations {
                if parameters(operation.path) != 2 {
                    // More values than the session's and the entry's: said by name.
                    assert!(
                        skipped
                            .iter()
                            .any(|s| s["key"] == format!("operation:{}", operation.id)),
                        "{} neither exported nor said: {manifest}",
                        operation.id
                    );
                    continue;
                }
                for entry in &entries {
                    let exported = files.iter().any(|file| {
                        file["operation"] == operation.id
                            && file["key"]
                                .as_str()
                                .is_some_and(|key| key.ends_with(&format!(":{entry}")))
                    });
                    assert!(
                        exported,
                        "{} of entry {entry} of {} is not in the manifest: {manifest}",
                        operation.id,
                        dataset.name()
                    );
                    checked += 1;
                }
            }
        }
        // The session's own files: every GET below the session taking only its id that is
        // not a dataset, each in the manifest under its operation.
        let session = Dataset::ALL[0].operation().path;
        let session = &session[..=session.find('}').unwrap()];
        for operation in operations::ALL.iter().filter(|operation| {
            operation.method == "GET"
                && operation.path.starts_with(&format!("{session}/"))
                && parameters(operation.path) == 1
                && operation.response != creditdata_client::operation::ResponseKind::Empty
                && Dataset::ALL
                    .iter()
                    .all(|d| d.operation_id() != operation.id)
        }) {
            assert!(
                files.iter().any(|file| file["operation"] == operation.id),
                "the session file of {} is not in the manifest: {manifest}",
                operation.id
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "the mock's sessions list entries");
}
