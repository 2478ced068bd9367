//! Every operation test of the datasets: credit, person and legal, bank account.

use super::*;

// ---------------------------------------------------------------------------------------------
// Datasets
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn credit_datasets_decode_nulls_unknown_values_and_unknown_members() {
    let recorder = Recorder::start().await;

    let tradelines = call_json(
        &recorder,
        Expected::get(session_path("/negative-tradelines")),
        200,
        fixture("get_negative_tradelines"),
        recorder
            .client
            .get_negative_tradelines()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        tradelines.sources,
        Some(vec![
            source(Some("LT-CREDITINFO"), SourceStatus::Success, "LTU"),
            source(None, SourceStatus::PackageUpgradeRequired, "LVA"),
        ]),
        "GetNegativeTradelines: sources (sourceId null)"
    );
    let items = tradelines
        .negative_tradelines
        .expect("GetNegativeTradelines: items");
    assert_eq!(
        items[0].amount,
        Some(
            types::Amount::builder()
                .amount(1249.99)
                .currency_code(Some("EUR".into()))
                .build()
                .unwrap()
        )
    );
    assert_eq!(items[0].contract_type, ContractType::CreditCard);
    let creditor = items[0]
        .creditor
        .as_ref()
        .expect("GetNegativeTradelines: creditor");
    assert_eq!(creditor.sector, CreditorSector::Finance);
    assert_eq!(
        creditor.extra.to_map()["name"],
        "Luminor Bank AS",
        "GetNegativeTradelines: creditor's unknown member kept"
    );
    assert_eq!(
        items[0].extra.to_map()["registeredOnDate"],
        "2024-11-05",
        "GetNegativeTradelines: unknown member kept"
    );
    assert_eq!(
        items[0].extra.to_map()["daysPastDue"],
        187,
        "GetNegativeTradelines: unknown member kept"
    );
    assert_eq!(
        items[1].amount.as_ref().map(|a| a.currency_code.clone()),
        Some(None),
        "GetNegativeTradelines: currencyCode null"
    );
    assert_eq!(
        items[1].contract_type,
        ContractType::Unrecognized("BUY_NOW_PAY_LATER".into())
    );
    assert_eq!(items[1].contract_type.as_str(), "BUY_NOW_PAY_LATER");
    assert!(!items[1].contract_type.is_known());
    assert_eq!(
        items[1].creditor.as_ref().map(|c| c.sector.as_str()),
        Some("E_COMMERCE")
    );
    assert_eq!(
        (
            items[2].source_id.as_deref(),
            items[2].amount.as_ref(),
            items[2].creditor.as_ref()
        ),
        (None, None, None)
    );

    let scores = call_json(
        &recorder,
        Expected::get(session_path("/scores")),
        200,
        fixture("get_scores"),
        recorder.client.get_scores().session_id(SESSION_ID),
    )
    .await;
    let items = scores.scores.expect("GetScores: scores");
    assert_eq!(
        items[0],
        types::Score::builder()
            .type_(ScoreType::RiskScoreV1)
            .source_id(Some("LT-CREDITINFO".into()))
            .country_code(Some("LTU".into()))
            .original_value(Some("B2".into()))
            .normalized_value(Some("0.0412".into()))
            .build()
            .unwrap(),
        "GetScores: values are strings"
    );
    assert_eq!(
        items[1].unavailable_reason,
        Some(ScoreUnavailableReason::Underage)
    );
    assert_eq!(
        items[2].type_,
        ScoreType::Unrecognized("BEHAVIOUR_SCORE_V2".into()),
        "GetScores: unknown type kept"
    );
    assert_eq!(
        items[2]
            .unavailable_reason
            .as_ref()
            .map(|r| (r.as_str(), r.is_known())),
        Some(("TEMPORARILY_SUSPENDED", false)),
        "GetScores: unknown reason kept"
    );
    // Score is closed: `scoreCardVersion` is not kept, and decoding still succeeds.
    assert!(
        serde_json::to_value(&items[2])
            .unwrap()
            .get("scoreCardVersion")
            .is_none()
    );

    let positive = call_json(
        &recorder,
        Expected::get(session_path("/positive-tradelines")),
        200,
        fixture("get_positive_tradelines"),
        recorder
            .client
            .get_positive_tradelines()
            .session_id(SESSION_ID),
    )
    .await;
    let item = &positive
        .positive_tradelines
        .expect("GetPositiveTradelines: items")[0];
    assert_eq!(item.source_id.as_deref(), Some("SE-UC"));
    assert_eq!(
        item.extra.to_map()["balance"],
        json!({ "amount": 1987350.5, "currencyCode": "SEK" }),
        "GetPositiveTradelines: unknown member kept"
    );
    assert_eq!(item.extra.to_map()["contractType"], "MORTGAGE_LOAN");
    assert_eq!(
        positive.extra.to_map()["reportedAtUtc"],
        "2026-03-05T10:00:00Z",
        "GetPositiveTradelines: unknown envelope member kept"
    );

    let incomes = call_json(
        &recorder,
        Expected::get(session_path("/registry-incomes")),
        200,
        fixture("get_registry_incomes"),
        recorder
            .client
            .get_registry_incomes()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        incomes.sources.as_ref().unwrap()[0].status,
        SourceStatus::IdTaxOnly
    );
    let items = incomes.incomes.expect("GetRegistryIncomes: incomes");
    assert_eq!(items[0].assessment_year, Some(2025));
    assert_eq!(
        items[0].gross_income.as_ref().map(|a| a.amount),
        Some(36180.0),
        "GetRegistryIncomes: integer amount"
    );
    assert_eq!(
        items[0].net_income.as_ref().map(|a| a.amount),
        Some(28412.75)
    );
    assert_eq!(
        items[0]
            .total_tax_amount
            .as_ref()
            .and_then(|a| a.currency_code.as_deref()),
        Some("EUR")
    );
    assert_eq!(
        (items[1].source_id.as_ref(), items[1].net_income.as_ref()),
        (None, None),
        "GetRegistryIncomes: nulls"
    );
}

#[tokio::test]
async fn person_and_legal_datasets_decode() {
    let recorder = Recorder::start().await;

    let person = call_json(
        &recorder,
        Expected::get(session_path("/person-details")),
        200,
        fixture("get_person_details"),
        recorder.client.get_person_details().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        person.sources.as_ref().unwrap()[1].status,
        SourceStatus::WaitingForProvider
    );
    assert_eq!(
        person.given_names,
        Some(vec![
            types::StringSourcedValue::builder()
                .value(Some("Jonas".into()))
                .source_ids(Some(vec!["LT-CREDITINFO".into(), "LT-REGITRA".into()]))
                .build()
                .unwrap()
        ]),
        "GetPersonDetails: givenNames"
    );
    assert_eq!(
        person.birth_dates.as_ref().unwrap()[0].value,
        Some(json!("1987-04-12"))
    );
    assert_eq!(
        person.personal_identity_codes.as_ref().unwrap()[0].value,
        Some(json!({ "code": "38704120123", "countryCode": "LTU" }))
    );
    assert_eq!(
        person.telephones.as_ref().unwrap()[0].source_ids,
        None,
        "GetPersonDetails: sourceIds null"
    );
    assert_eq!(
        person.emails.as_ref().unwrap()[0].value,
        None,
        "GetPersonDetails: value null"
    );
    let address = &person.addresses.as_ref().unwrap()[0];
    assert_eq!(address.value.as_ref().unwrap()["city"], "Vilnius");
    assert_eq!(
        address.extra.to_map()["validFrom"],
        "2021-09-01",
        "GetPersonDetails: unknown member of an address kept"
    );
    assert_eq!(person.documents, None);
    assert_eq!(
        person.citizenships.as_ref().unwrap()[0].value.as_deref(),
        Some("LTU")
    );
    assert_eq!(
        person.marital_statuses.as_ref().unwrap()[0].value,
        Some(json!("MARRIED"))
    );
    assert_eq!(
        person.underage_children_counts.as_ref().unwrap()[0].value,
        Some(json!(2))
    );
    assert_eq!(
        person.extra.to_map().get("genders"),
        Some(&json!([ { "value": "MALE", "sourceIds": ["LT-REGITRA"] } ])),
        "GetPersonDetails: unknown dataset member kept in `extra`"
    );

    let entities = call_json(
        &recorder,
        Expected::get(session_path("/legal-entities")),
        200,
        fixture("get_legal_entities"),
        recorder.client.get_legal_entities().session_id(SESSION_ID),
    )
    .await;
    let items = entities.legal_entities.expect("GetLegalEntities: items");
    assert_eq!(items[0].name.as_deref(), Some("Tamm Consulting OÜ"));
    let relations = items[0]
        .relations
        .as_ref()
        .expect("GetLegalEntities: relations");
    assert_eq!(
        relations[0],
        types::LegalEntityRelation::builder()
            .type_(LegalEntityRelationType::Unknown)
            .start_date(Some("2019-05-14".into()))
            .build()
            .unwrap()
    );
    assert_eq!(
        relations[1].type_,
        LegalEntityRelationType::Unrecognized("BOARD_MEMBER".into()),
        "GetLegalEntities: unknown relation kept"
    );
    assert_eq!(relations[1].type_.to_string(), "BOARD_MEMBER");
    // LegalEntity is closed: `registryCode` is dropped, decoding still succeeds.
    assert_eq!(
        (items[1].source_id.as_ref(), items[1].relations.as_ref()),
        (None, None)
    );

    let cases = call_json(
        &recorder,
        Expected::get(session_path("/court-and-insolvencies")),
        200,
        fixture("get_court_and_insolvencies"),
        recorder
            .client
            .get_court_and_insolvencies()
            .session_id(SESSION_ID),
    )
    .await;
    let status = &cases.sources.as_ref().unwrap()[0].status;
    assert_eq!(
        status,
        &SourceStatus::Unrecognized("NEW_STATUS_2027".into()),
        "GetCourtAndInsolvencies: unknown status kept"
    );
    assert_eq!(
        (status.as_str(), status.is_known()),
        ("NEW_STATUS_2027", false)
    );
    let case = &cases
        .court_and_insolvencies
        .expect("GetCourtAndInsolvencies: cases")[0];
    assert_eq!(case.source_id.as_deref(), Some("FI-OIKEUSREKISTERI"));
    assert_eq!(
        case.extra.to_map()["court"],
        "Helsingin käräjäoikeus",
        "GetCourtAndInsolvencies: unknown member kept"
    );
    assert_eq!(case.extra.to_map()["caseNumber"], "R 25/1234");

    let immovables = call_json(
        &recorder,
        Expected::get(session_path("/immovables")),
        200,
        fixture("get_immovables"),
        recorder.client.get_immovables().session_id(SESSION_ID),
    )
    .await;
    let immovable = &immovables.immovables.expect("GetImmovables: items")[0];
    assert_eq!(immovable.source_id.as_deref(), Some("LV-ZEMESGRAMATA"));
    assert_eq!(
        immovable.extra.to_map()["address"],
        "Brīvības iela 12, Rīga",
        "GetImmovables: unknown member kept"
    );
    assert_eq!(immovable.extra.to_map()["area"]["value"], 68.4);

    let verifications = call_json(
        &recorder,
        Expected::get(session_path("/identity-verifications")),
        200,
        fixture("get_identity_verifications"),
        recorder
            .client
            .get_identity_verifications()
            .session_id(SESSION_ID),
    )
    .await;
    let verification = &verifications
        .identity_verifications
        .expect("GetIdentityVerifications: items")[0];
    assert_eq!(verification.id.as_deref(), Some("idv 4821"));
    assert_eq!(
        verification.extra.to_map()["method"],
        "SMART_ID",
        "GetIdentityVerifications: unknown member kept"
    );

    let images = call_json(
        &recorder,
        Expected::get(session_path("/identity-verifications/idv%204821/images")),
        200,
        fixture("get_identity_verification_images"),
        recorder
            .client
            .get_identity_verification_images()
            .session_id(SESSION_ID)
            .verification_id("idv 4821"),
    )
    .await;
    let images = images
        .images
        .expect("GetIdentityVerificationImages: images");
    assert_eq!(
        images.iter().map(|i| i.id.as_deref()).collect::<Vec<_>>(),
        [Some("front/1"), Some("selfie")]
    );
    assert_eq!(
        images[1].extra.to_map()["mimeType"],
        "image/png",
        "GetIdentityVerificationImages: unknown member kept"
    );
}

#[tokio::test]
async fn bank_account_datasets_decode() {
    let recorder = Recorder::start().await;

    let statements = call_json(
        &recorder,
        Expected::get(session_path("/account-statements")),
        200,
        fixture("get_account_statements"),
        recorder
            .client
            .get_account_statements()
            .session_id(SESSION_ID),
    )
    .await;
    let statement = &statements
        .account_statements
        .expect("GetAccountStatements: items")[0];
    assert_eq!(statement.id.as_deref(), Some("stmt-2026-02"));
    assert_eq!(
        statement.extra.to_map()["iban"],
        "SE4550000000058398257466",
        "GetAccountStatements: unknown member kept"
    );
    assert_eq!(
        statement.extra.to_map()["openingBalance"]["amount"],
        15230.5
    );

    let attachments = call_json(
        &recorder,
        Expected::get(session_path("/attachments")),
        200,
        fixture("get_attachments"),
        recorder.client.get_attachments().session_id(SESSION_ID),
    )
    .await;
    let items = attachments.attachments.expect("GetAttachments: items");
    assert_eq!(
        items[0],
        types::Attachment::builder()
            .id("att-1")
            .source_id(Some("LT-CREDITINFO".into()))
            .attachment_type(AttachmentType::OriginalCreditReport)
            .mime_type(Some("application/pdf".into()))
            .file_name(Some("creditinfo-report.pdf".into()))
            .file_size_bytes(184320)
            .added_on_utc("2026-03-05T14:31:02Z")
            .country_code(Some("LTU".into()))
            .build()
            .unwrap(),
        "GetAttachments: first attachment"
    );
    assert_eq!(
        items[1].attachment_type,
        AttachmentType::Unrecognized("PAYSLIP".into()),
        "GetAttachments: unknown type kept"
    );
    assert_eq!(
        (
            items[1].source_id.as_ref(),
            items[1].mime_type.as_ref(),
            items[1].file_name.as_ref()
        ),
        (None, None, None)
    );

    // The categorization summary's real-world SOME_DATA_MISSING is a known value (overlay).
    let summary = call_json(
        &recorder,
        Expected::get(session_path("/categorizations-summary")),
        200,
        fixture("get_categorizations_summary"),
        recorder
            .client
            .get_categorizations_summary()
            .session_id(SESSION_ID),
    )
    .await;
    let summary = summary.summary.expect("GetCategorizationsSummary: summary");
    assert_eq!(
        summary.status,
        CategorizationSummaryStatus::SomeDataMissing,
        "GetCategorizationsSummary: SOME_DATA_MISSING"
    );
    assert!(
        summary.status.is_known(),
        "GetCategorizationsSummary: SOME_DATA_MISSING is a known value"
    );
    assert_eq!(summary.status.as_str(), "SOME_DATA_MISSING");
    assert_eq!(summary.count_of_institutions, Some(2));
    assert_eq!(
        summary.extra.to_map()["averageMonthlyIncome"]["amount"],
        3120.4,
        "GetCategorizationsSummary: figures kept"
    );
    assert_eq!(
        summary.extra.to_map()["incomeByCategory"][0]["category"],
        "SALARY"
    );

    // `summary` is required and nullable: null before the bank data has arrived.
    let pending = call_json(
        &recorder,
        Expected::get(session_path("/categorizations-summary")),
        200,
        json!({ "summary": null }),
        recorder
            .client
            .get_categorizations_summary()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        pending.summary, None,
        "GetCategorizationsSummary: summary null"
    );

    // Deprecated by the service, which still serves it: the client must still call it right.
    #[allow(deprecated)]
    let categorizations = call_json(
        &recorder,
        Expected::get(session_path("/categorizations")),
        200,
        fixture("get_categorizations"),
        recorder.client.get_categorizations().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        categorizations.summary,
        Some(
            types::CategorizationPeriodSummary::builder()
                .period_with_income_months(Some(6))
                .period_with_liabilities_months(Some(4))
                .build()
                .unwrap()
        )
    );
    let categorization = &categorizations
        .categorizations
        .expect("GetCategorizations: items")[0];
    assert_eq!(
        categorization.accounts.as_ref().unwrap()[0],
        types::CategorizedAccount::builder()
            .country_code(Some("EST".into()))
            .bank_name(Some("Swedbank AS".into()))
            .account_number(Some("EE382200221020145685".into()))
            .account_holder_names(Some(vec!["Kadri Tamm".into()]))
            .build()
            .unwrap()
    );
    assert_eq!(categorization.total_period_received_months, Some(6));
    assert_eq!(
        categorization.extra.to_map()["incomes"][0]["category"],
        "SALARY",
        "GetCategorizations: unknown member kept"
    );

    let metrics = call_json(
        &recorder,
        Expected::get(session_path("/metrics")),
        200,
        fixture("get_metrics"),
        recorder.client.get_metrics().session_id(SESSION_ID),
    )
    .await;
    let metrics = metrics.metrics.expect("GetMetrics: items");
    assert_eq!(metrics.len(), 2);
    assert_eq!(
        metrics[0].extra.to_map()["name"],
        "AVERAGE_MONTHLY_INCOME",
        "GetMetrics: unknown member kept"
    );
    assert_eq!(metrics[1].extra.to_map()["value"], "0.013");
}
