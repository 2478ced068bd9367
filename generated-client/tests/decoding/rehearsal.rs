//! A vendor release of today's description that adds a polymorphic member (registry incomes
//! list their sources: employment, self-employment or pension, by `$type`), rehearsed as far as
//! the typed client: `cargo xtask regen` generates the released description with the
//! workspace's overlays into `release.rs`, compiled here, and a loopback stub serves the
//! dataset with every variant and one the release does not know.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use super::unions::assert_written_back;
use crate::release::{Client, types};
use crate::support::MockServer;

#[tokio::test]
async fn a_released_polymorphic_member_decodes_every_variant_whole_and_keeps_an_unknown_one() {
    let session = uuid::Uuid::parse_str("6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e").unwrap();
    let body = json!({
        "sources": [{"sourceId": "EE-MTA", "status": "SUCCESS", "countryCode": "EST"}],
        "incomes": [{
            "sourceId": "EE-MTA",
            "assessmentYear": 2025,
            "incomeSources": [
                {"$type": "employment", "share": 0.5, "employerName": "Acme AS"},
                {"$type": "self-employment", "share": 0.3, "businessName": "Doe Joinery"},
                {"$type": "pension", "share": 0.2, "pensionProvider": "SEB Pension"},
                {"$type": "rental", "share": 0.1, "propertyAddress": "Pikk 1, Tallinn"}
            ]
        }]
    });
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{session}/registry-incomes")))
        .respond_with(ResponseTemplate::new(200).set_body_json(&body))
        .mount(&server)
        .await;
    let (http, state) = crate::parts(&server.uri());
    let client = Client::new_with_client(&server.uri(), http, state);

    let answer = client
        .get_registry_incomes()
        .session_id(session)
        .call()
        .await
        .expect("the released dataset decodes");
    let income = &answer.incomes.as_deref().unwrap_or_default()[0];
    let sources = income.income_sources.as_deref().unwrap_or_default();
    let [employment, self_employment, pension, rental] = sources else {
        panic!("four sources: {sources:?}");
    };
    assert!(
        matches!(employment, types::RegistryIncomeIncomeSourcesItem::EmploymentIncomeSource(e)
            if e.employer_name.as_deref() == Some("Acme AS")),
        "{employment:?}"
    );
    assert!(
        matches!(self_employment, types::RegistryIncomeIncomeSourcesItem::SelfEmploymentIncomeSource(s)
            if s.business_name.as_deref() == Some("Doe Joinery") && s.share == Some(0.3)),
        "{self_employment:?}"
    );
    assert!(
        matches!(pension, types::RegistryIncomeIncomeSourcesItem::PensionIncomeSource(p)
            if p.pension_provider.as_deref() == Some("SEB Pension")),
        "{pension:?}"
    );
    assert!(
        matches!(rental, types::RegistryIncomeIncomeSourcesItem::Unrecognized(u)
            if u.discriminator() == Some("rental")
                && u.json().to_value() == body["incomes"][0]["incomeSources"][3]),
        "{rental:?}"
    );
    assert_written_back(&answer, &body);
}
