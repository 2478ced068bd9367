//! Every operation test of enums on both sides of the wire, and that every operation (a release's new ones included) is exercised.

use super::*;

// ---------------------------------------------------------------------------------------------
// Enums on both sides of the wire, and coverage
// ---------------------------------------------------------------------------------------------

#[test]
fn request_side_enums_accept_only_listed_values() {
    assert!(
        "INCOME_VERIFICATION".parse::<DataPackageInput>().is_err(),
        "DataPackageInput must have no catch-all"
    );
    assert!(
        DataPackageInput::try_from("score").is_err(),
        "values are case-sensitive"
    );
    assert_eq!(
        "SCORE".parse::<DataPackageInput>().unwrap(),
        DataPackageInput::Score
    );
    assert!(serde_json::from_value::<DataPackageInput>(json!("INCOME_VERIFICATION")).is_err());
    assert_eq!(
        serde_json::to_value(DataPackageInput::BankAccountCategorization).unwrap(),
        json!("BANK_ACCOUNT_CATEGORIZATION")
    );
    assert!(
        "ARCHIVED".parse::<CustomerProgressStatusInput>().is_err(),
        "CustomerProgressStatusInput must have no catch-all"
    );
}

#[test]
fn response_side_enums_round_trip_unknown_values_unchanged() {
    let unknown: DataPackage = serde_json::from_value(json!("INCOME_VERIFICATION")).unwrap();
    assert_eq!(
        unknown,
        DataPackage::Unrecognized("INCOME_VERIFICATION".into())
    );
    assert_eq!(
        serde_json::to_value(&unknown).unwrap(),
        json!("INCOME_VERIFICATION")
    );
    let known: DataPackage = serde_json::from_value(json!("SCORE")).unwrap();
    assert_eq!(known, DataPackage::Score);
    assert_eq!(serde_json::to_value(&known).unwrap(), json!("SCORE"));
    // The same through a containing type and through `FromStr`/`Display`.
    let parameter =
        json!({ "countryCode": "NOR", "dataPackages": ["IDENTIFICATION", "OPEN_BANKING_PLUS"] });
    let decoded: types::QueryParameter = serde_json::from_value(parameter.clone()).unwrap();
    assert_eq!(serde_json::to_value(&decoded).unwrap(), parameter);
    let parsed: DataPackage = "OPEN_BANKING_PLUS".parse().unwrap();
    assert_eq!(parsed.to_string(), "OPEN_BANKING_PLUS");
    // A known value is never taken for an unknown one.
    let status: CategorizationSummaryStatus =
        serde_json::from_value(json!("SOME_DATA_MISSING")).unwrap();
    assert_eq!(status, CategorizationSummaryStatus::SomeDataMissing);
}

/// Every operation of the generated client is called in this file by name (`EXERCISED`), or,
/// for a dataset of a session, through the generated dataset list
/// (`every_dataset_is_read_with_a_get_of_its_path`), or, for any other `GET` (an entry of a
/// listing a vendor release adds, say), by its metadata through `Client::operation_stream`
/// (`operations_a_release_adds_are_read_by_their_metadata`): a read the vendor adds is reached
/// with no line here; a new operation that sends a body fails until it is called here.
#[test]
fn every_operation_is_exercised() {
    let generated: BTreeSet<&str> = creditdata_client::operations::ALL
        .iter()
        .map(|op| op.id)
        .collect();
    let exercised: BTreeSet<&str> = EXERCISED.into_iter().collect();
    assert_eq!(
        exercised.len(),
        EXERCISED.len(),
        "EXERCISED lists an operation twice"
    );
    let unknown: Vec<&&str> = exercised.difference(&generated).collect();
    assert!(
        unknown.is_empty(),
        "EXERCISED names operations the client does not have: {unknown:?}"
    );
    let datasets: BTreeSet<&str> = Dataset::ALL.iter().map(|d| d.operation_id()).collect();
    let by_metadata: BTreeSet<&str> = read_by_metadata().iter().map(|op| op.id).collect();
    let unreached: Vec<&&str> = generated
        .iter()
        .filter(|id| {
            !exercised.contains(*id) && !datasets.contains(*id) && !by_metadata.contains(*id)
        })
        .collect();
    assert!(
        unreached.is_empty(),
        "operations called nowhere in this file: {unreached:?}"
    );
}

/// The operations neither `EXERCISED` nor datasets that `Client::operation_stream` can read:
/// the `GET`s with an answer (on today's description, none; a release adds some).
fn read_by_metadata() -> Vec<&'static creditdata_client::operation::OperationMeta> {
    let datasets: BTreeSet<&str> = Dataset::ALL.iter().map(|d| d.operation_id()).collect();
    creditdata_client::operations::ALL
        .iter()
        .filter(|op| !EXERCISED.contains(&op.id) && !datasets.contains(op.id))
        .filter(|op| is_read(op))
        .collect()
}

/// A `GET` with an answer: what `Client::operation_stream` reads.
fn is_read(op: &creditdata_client::operation::OperationMeta) -> bool {
    op.method == "GET" && op.response != creditdata_client::operation::ResponseKind::Empty
}

/// Each `GET` no test here calls by name is read by its metadata: one request, the path filled
/// with the values given, the `api-version` its pin keeps, and the answer's bytes as sent.
#[tokio::test]
async fn operations_a_release_adds_are_read_by_their_metadata() {
    // Every GET, so that the generic read is shown on today's description too; the ones no
    // test calls by name are what a release adds.
    let gets: Vec<_> = creditdata_client::operations::ALL
        .iter()
        .filter(|op| is_read(op))
        .collect();
    assert!(
        read_by_metadata().iter().all(|op| gets.contains(op)),
        "every operation read by metadata is a GET"
    );
    for op in gets {
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(b"{\"k\":1}".to_vec(), "application/json"),
            )
            .expect(1)
            .mount(&server)
            .await;
        let client = crate::support::plain_client(&server.uri());
        let parameters = op.path.matches('{').count();
        let values: Vec<String> = (0..parameters)
            .map(|n| Uuid::from_u128(0x5e55_0000 + n as u128).to_string())
            .collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let download = client
            .operation_stream(op, &refs)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", op.id));
        let mut body = Vec::new();
        download.write_to(&mut body).await.unwrap();
        assert_eq!(body, b"{\"k\":1}", "{}: the bytes as sent", op.id);
        let requests = server.received_requests().await.unwrap();
        let mut expected_path = op.path.to_string();
        for value in &values {
            let start = expected_path.find('{').unwrap();
            let end = start + expected_path[start..].find('}').unwrap();
            expected_path.replace_range(start..=end, value);
        }
        assert_eq!(requests.len(), 1, "{}", op.id);
        assert_eq!(requests[0].method.as_str(), "GET", "{}", op.id);
        assert_eq!(requests[0].url.path(), expected_path, "{}", op.id);
        assert_eq!(
            header(&requests[0], "api-version"),
            Some(pinned_api_version(op.id)),
            "{}",
            op.id
        );
    }
    // Not a GET: refused before anything is sent.
    let post = creditdata_client::operations::ALL
        .iter()
        .find(|op| op.method != "GET")
        .expect("the description has operations that are not reads");
    let client = crate::support::plain_client("http://127.0.0.1:9");
    let refused = client.operation_stream(post, &[]).await.unwrap_err();
    assert!(
        refused.to_string().contains("is not a GET"),
        "{}: {refused}",
        post.id
    );
}

#[tokio::test]
async fn every_dataset_is_read_with_a_get_of_its_path() {
    let recorder = Recorder::start().await;
    let session = Uuid::from_u128(0x5e55_1011);
    for dataset in Dataset::ALL {
        let op = dataset.operation_id();
        recorder
            .answer(ResponseTemplate::new(200).set_body_json(json!({})))
            .await;
        // The body may not decode (`{}` for a list); what the service saw is what counts here.
        let _ = recorder.client.session_dataset(session, dataset).await;
        let request = recorder.only_request(op).await;
        assert_eq!(request.method.as_str(), "GET", "{op}");
        let below = dataset
            .operation()
            .path
            .replace("{sessionId}", &session.to_string());
        assert_eq!(request.url.path(), below, "{op}");
        assert_eq!(
            request.url.query(),
            None,
            "{op}: nothing but the session's id"
        );
    }
}
