//! Every operation test of the session operations: the search, the lifecycle, the metadata.

use super::*;

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn session_search_sends_every_filter_under_its_published_pascal_case_name() {
    let recorder = Recorder::start().await;
    let other = Uuid::from_u128(0x71e2c0aa_55b4_4e0f_a1c3_0d9e8f7a6b54);

    let found = call_json(
        &recorder,
        Expected::get("/v1/sessions")
            // '+', '&', spaces and non-ASCII letters must survive the query string.
            .query("SubjectEmail", "jonas.petraitis+loans@example.lt")
            .query("SubjectFullName", "Zoë Müller-Åberg")
            .query("CountryCode", "LTU")
            .query("CreatedFromUtc", "2026-01-01")
            .query("CreatedToUtc", "2026-03-31")
            .query("CustomerProgressStatus", "WAITING_FOR_CUSTOMER")
            .query("CreatedByName", "Anna Lindqvist")
            .query("OrganizationalUnitName", "Retail Lending & Cards")
            .query("Skip", "20")
            .query("Take", "10"),
        200,
        json!({
            "sessions": [completed_session_json(), waiting_session_json(other)],
            "paging": { "totalCount": 57, "skip": 20, "take": 10 }
        }),
        recorder
            .client
            .get_sessions()
            .subject_email("jonas.petraitis+loans@example.lt")
            .subject_full_name("Zoë Müller-Åberg")
            .country_code("LTU")
            .created_from_utc(NaiveDate::from_ymd_opt(2026, 1, 1).unwrap())
            .created_to_utc(NaiveDate::from_ymd_opt(2026, 3, 31).unwrap())
            .customer_progress_status(CustomerProgressStatusInput::WaitingForCustomer)
            .created_by_name("Anna Lindqvist")
            .organizational_unit_name("Retail Lending & Cards")
            .skip(20)
            .take(10),
    )
    .await;

    let sessions = found.sessions.expect("GetSessions: sessions");
    assert_eq!(sessions.len(), 2, "GetSessions: sessions");
    assert_eq!(
        sessions[0],
        completed_session(),
        "GetSessions: first session"
    );
    assert_eq!(sessions[1].id, other, "GetSessions: second session id");
    assert_eq!(
        sessions[1].query_parameters, None,
        "GetSessions: queryParameters null"
    );
    assert_eq!(
        sessions[1].subject_email.as_deref(),
        Some("kadri.tamm@example.ee")
    );
    assert_eq!(
        sessions[1].customer_progress_status,
        CustomerProgressStatus::WaitingForCustomer
    );
    assert_eq!(
        sessions[1].customer_input_deadline_extendable_until_utc,
        Some(utc("2026-03-26T14:02:11Z")),
        "GetSessions: customerInputDeadlineExtendableUntilUtc"
    );
    let paging = found.paging.expect("GetSessions: paging");
    assert_eq!(
        (paging.total_count, paging.skip, paging.take),
        (57, Some(20), Some(10)),
        "GetSessions: paging"
    );

    // Without filters nothing is sent: no empty `Skip=` or the like.
    let all = call_json(
        &recorder,
        Expected::get("/v1/sessions"),
        200,
        json!({ "sessions": [], "paging": { "totalCount": 0, "skip": null, "take": null } }),
        recorder.client.get_sessions(),
    )
    .await;
    assert_eq!(all.sessions, Some(vec![]), "GetSessions: empty page");
    assert_eq!(
        recorder.only_request("GetSessions").await.url.query(),
        None,
        "GetSessions: no query string"
    );
}

#[tokio::test]
async fn session_lifecycle_operations_send_their_bodies_and_decode_sessions() {
    let recorder = Recorder::start().await;

    // POST /v1/sessions: the exact camelCase body; 201 with the new Session.
    let created = call_json(
        &recorder,
        Expected::post("/v1/sessions").json_body(json!({
            "subjectEmail": "kadri.tamm@example.ee",
            "queryParameters": [
                { "countryCode": "EST", "dataPackages": ["CREDIT_HISTORY", "SCORE", "IDENTIFICATION"] },
                { "countryCode": "FIN", "dataPackages": ["SCORE"] }
            ]
        })),
        201,
        waiting_session_json(SESSION_ID),
        recorder.client.create_session().body(types::CreateSessionRequest::builder().subject_email("kadri.tamm@example.ee").query_parameters(vec![
                types::QueryParameterInput::builder().country_code("EST").data_packages(vec![DataPackageInput::CreditHistory, DataPackageInput::Score, DataPackageInput::Identification]).build().unwrap(),
                types::QueryParameterInput::builder().country_code("FIN").data_packages(vec![DataPackageInput::Score]).build().unwrap(),
            ])),
    )
    .await;
    assert_eq!(created.id, SESSION_ID, "CreateSession: id");
    assert_eq!(
        created.customer_progress_status,
        CustomerProgressStatus::WaitingForCustomer,
        "CreateSession: status"
    );
    assert_eq!(
        created.data_package_upgradable_until_utc, None,
        "CreateSession: dataPackageUpgradableUntilUtc null"
    );
    assert_eq!(
        created.customer_input_deadline_utc,
        Some(utc("2026-03-12T14:02:11Z")),
        "CreateSession: deadline"
    );

    // GET /v1/sessions/{id}: nulls in required fields, an unknown package, an unknown member.
    let session = call_json(
        &recorder,
        Expected::get(session_path("")),
        200,
        completed_session_json(),
        recorder.client.get_session().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(session, completed_session(), "GetSession: decoded Session");
    assert_eq!(session.subject_email, None, "GetSession: subjectEmail null");
    assert_eq!(
        session.customer_input_deadline_extendable_until_utc, None,
        "GetSession: extendable-until null"
    );
    let packages = session
        .query_parameters
        .as_ref()
        .and_then(|q| q[0].data_packages.as_ref())
        .expect("GetSession: packages");
    assert_eq!(
        packages[2],
        DataPackage::Unrecognized("INCOME_VERIFICATION".into()),
        "GetSession: unknown package kept"
    );
    assert_eq!(
        packages[2].as_str(),
        "INCOME_VERIFICATION",
        "GetSession: unknown package as_str"
    );
    assert!(
        !packages[2].is_known() && packages[0].is_known(),
        "GetSession: is_known"
    );
    // Session is a closed schema: the unknown `riskTier` is dropped, decoding still succeeds.
    assert!(
        serde_json::to_value(&session)
            .unwrap()
            .get("riskTier")
            .is_none(),
        "GetSession: closed schema"
    );

    // PATCH /v1/sessions/{id}: appends a country.
    let updated = call_json(
        &recorder,
        Expected::patch(session_path("")).json_body(json!({
            "queryParameters": [ { "countryCode": "SWE", "dataPackages": ["BANK_ACCOUNT_CATEGORIZATION"] } ]
        })),
        200,
        completed_session_json(),
        recorder.client.update_session().session_id(SESSION_ID).body(types::UpdateSessionRequest::builder().query_parameters(vec![types::QueryParameterInput::builder().country_code("SWE").data_packages(vec![DataPackageInput::BankAccountCategorization]).build().unwrap()])),
    )
    .await;
    assert_eq!(
        updated,
        completed_session(),
        "UpdateSession: decoded Session"
    );

    // POST .../actions/extend-customer-input-deadline: no body; 201 with the Session.
    let mut extended_json = waiting_session_json(SESSION_ID);
    extended_json["customerInputDeadlineUtc"] = json!("2026-03-19T14:02:11Z");
    let extended = call_json(
        &recorder,
        Expected::post(session_path("/actions/extend-customer-input-deadline")),
        201,
        extended_json,
        recorder
            .client
            .extend_customer_input_deadline()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        extended.customer_input_deadline_utc,
        Some(utc("2026-03-19T14:02:11Z")),
        "ExtendCustomerInputDeadline: new deadline"
    );

    // POST .../actions/resend-customer-notification: no body; the answer is untyped JSON.
    let answer =
        json!({ "notificationSentAtUtc": "2026-03-05T15:40:00Z", "recipient": "k***@example.ee" });
    let resent = call_json(
        &recorder,
        Expected::post(session_path("/actions/resend-customer-notification")),
        200,
        answer.clone(),
        recorder
            .client
            .resend_customer_notification()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        resent, answer,
        "ResendCustomerNotification: the answer as sent"
    );
}

#[tokio::test]
async fn session_metadata_operations_decode_their_bodies() {
    let recorder = Recorder::start().await;

    let requirements = call_json(
        &recorder,
        Expected::get(session_path("/input-requirements")),
        200,
        fixture("get_input_requirements"),
        recorder
            .client
            .get_input_requirements()
            .session_id(SESSION_ID),
    )
    .await;
    let requirement = &requirements
        .input_requirements
        .expect("GetInputRequirements: list")[0];
    assert_eq!(
        requirement.source_id.as_deref(),
        Some("LT-CREDITINFO"),
        "GetInputRequirements: sourceId"
    );
    assert_eq!(
        requirement.country_code.as_deref(),
        Some("LTU"),
        "GetInputRequirements: countryCode"
    );
    assert_eq!(
        requirement.extra.to_map()["requirementType"],
        "PERSONAL_IDENTITY_CODE",
        "GetInputRequirements: unknown member kept"
    );
    assert_eq!(
        requirement.extra.to_map()["mandatory"],
        true,
        "GetInputRequirements: unknown member kept"
    );

    let second_file = Uuid::from_u128(0x0c1d2e3f_4a5b_4c6d_8e7f_8091a2b3c4d5);
    let files = call_json(
        &recorder,
        Expected::get(session_path("/source-files")),
        200,
        json!([
            { "id": SOURCE_FILE, "sourceId": "LT-CREDITINFO", "type": "XML", "name": "creditinfo-report.xml", "sizeInBytes": 48213 },
            { "id": second_file, "sourceId": null, "type": null, "name": null, "sizeInBytes": null }
        ]),
        recorder.client.get_source_files().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        files,
        vec![
            types::SourceFile::builder()
                .id(SOURCE_FILE_ID)
                .source_id(Some("LT-CREDITINFO".into()))
                .type_(Some("XML".into()))
                .name(Some("creditinfo-report.xml".into()))
                .size_in_bytes(Some(48213))
                .build()
                .unwrap(),
            types::SourceFile::builder()
                .id(second_file)
                .build()
                .unwrap(),
        ],
        "GetSourceFiles: decoded list"
    );

    let file = call_json(
        &recorder,
        Expected::get(format!("/v1/sessions/{SESSION}/source-files/{SOURCE_FILE}")),
        200,
        json!({ "id": SOURCE_FILE, "sourceId": "LT-CREDITINFO", "type": "XML", "name": "creditinfo-report.xml", "sizeInBytes": 48213 }),
        recorder.client.get_source_file().session_id(SESSION_ID).source_file_id(SOURCE_FILE_ID),
    )
    .await;
    assert_eq!(
        file.name.as_deref(),
        Some("creditinfo-report.xml"),
        "GetSourceFile: name"
    );
    assert_eq!(file.size_in_bytes, Some(48213), "GetSourceFile: size");

    let content = call_json(
        &recorder,
        Expected::get(format!(
            "/v1/sessions/{SESSION}/source-files/{SOURCE_FILE}/content"
        )),
        200,
        fixture("get_source_file_content"),
        recorder
            .client
            .get_source_file_content()
            .session_id(SESSION_ID)
            .source_file_id(SOURCE_FILE_ID),
    )
    .await;
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(
            content
                .content_base64
                .expect("GetSourceFileContent: contentBase64"),
        )
        .expect("GetSourceFileContent: valid Base64");
    assert_eq!(
        decoded,
        br#"<?xml version="1.0" encoding="UTF-8"?><CreditReport bureau="Creditinfo Lietuva"/>"#,
        "GetSourceFileContent: content"
    );
    assert_eq!(
        content.size_in_bytes,
        Some(decoded.len() as i64),
        "GetSourceFileContent: size"
    );

    let packages = call_json(
        &recorder,
        Expected::get("/v1/consumer/packages"),
        200,
        fixture("get_consumer_packages"),
        recorder.client.get_consumer_packages(),
    )
    .await;
    let packages = packages.packages.expect("GetConsumerPackages: packages");
    assert_eq!(packages[0].country_code.as_deref(), Some("LTU"));
    let swedish = packages[1]
        .data_packages
        .as_ref()
        .expect("GetConsumerPackages: SWE packages");
    assert_eq!(
        swedish,
        &[
            DataPackage::BankAccountCategorization,
            DataPackage::Unrecognized("INCOME_VERIFICATION".into())
        ],
        "GetConsumerPackages: unknown package kept"
    );
    assert_eq!(
        swedish[1].as_str(),
        "INCOME_VERIFICATION",
        "GetConsumerPackages: as_str"
    );
    assert!(!swedish[1].is_known(), "GetConsumerPackages: is_known");
    assert_eq!(
        packages[1].extra.to_map()["maxSessionsPerMonth"],
        500,
        "GetConsumerPackages: unknown member kept"
    );
}
