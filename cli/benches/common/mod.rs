//! What the CLI's benches share (each bench includes it as `mod common`).

use creditdata_client::Client;
use creditdata_mock::MockServer;
use serde_json::json;
use uuid::Uuid;

/// Creates one session per address of `subjects`, with every package of the United Kingdom,
/// and completes each (the customer consented) through the mock's control endpoint.
pub async fn completed_sessions(
    mock: &MockServer,
    client: &Client,
    subjects: impl IntoIterator<Item = String>,
) -> Vec<Uuid> {
    let control = reqwest::Client::new();
    let mut ids = Vec::new();
    for subject in subjects {
        let request: creditdata_client::types::CreateSessionRequest =
            serde_json::from_value(json!({
                "subjectEmail": subject,
                "queryParameters": [{ "countryCode": "GBR", "dataPackages":
                    ["CREDIT_HISTORY", "SCORE", "BANK_ACCOUNT_CATEGORIZATION", "IDENTIFICATION"] }]
            }))
            .expect("a request");
        let created = client
            .create_session()
            .body(request)
            .call()
            .await
            .expect("a session");
        let url = format!("{}/_mock/sessions/{}/complete", mock.base_url(), created.id);
        let answer = control
            .post(&url)
            .header(creditdata_mock::CONTROL_HEADER, "1")
            .send()
            .await
            .expect("the mock answers");
        assert!(answer.status().is_success(), "completing {}", created.id);
        ids.push(created.id);
    }
    ids
}
