//! The generated client against the in-process mock, through a whole session life: create,
//! consent, every dataset, every download, extend, PATCH, expiry.

use crate::common;

use std::io::Cursor;

use base64::Engine as _;
use chrono::Utc;
use common::Harness;
use creditdata_client::call_options::CallResponse;
use creditdata_client::types::{
    CreateSessionRequest, CustomerProgressStatus, DataPackageInput, QueryParameterInput,
    SourceStatus, UpdateSessionRequest,
};
use creditdata_client::{ByteStream, Client};
use futures::StreamExt;

/// Calls a session-scoped operation of the generated client and takes its answer; a failure
/// names the operation.
macro_rules! answer {
    ($client:expr, $operation:ident, $id:expr) => {
        $client
            .$operation()
            .session_id($id)
            .call()
            .await
            .expect(stringify!($operation))
    };
}

fn query(country: &str, packages: &[DataPackageInput]) -> QueryParameterInput {
    QueryParameterInput::builder()
        .country_code(country)
        .data_packages(packages.to_vec())
        .build()
        .unwrap()
}

const ALL: [DataPackageInput; 4] = [
    DataPackageInput::CreditHistory,
    DataPackageInput::Score,
    DataPackageInput::BankAccountCategorization,
    DataPackageInput::Identification,
];

struct Download {
    bytes: Vec<u8>,
    content_type: String,
    disposition: String,
    length: usize,
}

async fn download(response: CallResponse<ByteStream>) -> Download {
    let headers = response.headers.clone();
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let content_type = header("content-type");
    let disposition = header("content-disposition");
    let length: usize = header("content-length").parse().expect("Content-Length");
    let mut stream = response.body.into_inner();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.expect("chunk"));
    }
    assert_eq!(bytes.len(), length, "Content-Length matches the body");
    assert!(
        disposition.starts_with("attachment; filename=\""),
        "Content-Disposition: {disposition}"
    );
    Download {
        bytes,
        content_type,
        disposition,
        length,
    }
}

fn statuses(
    sources: &Option<Vec<creditdata_client::types::Source>>,
) -> Vec<(String, String, SourceStatus)> {
    sources
        .as_ref()
        .expect("sources")
        .iter()
        .map(|s| {
            (
                s.country_code.clone().unwrap_or_default(),
                s.source_id.clone().unwrap_or_default(),
                s.status.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_whole_session_life_through_the_generated_client() {
    let harness = Harness::start().await;
    let client: Client = harness.client();

    // Create: FIN with everything, SWE with credit data only, a country the catalog lacks.
    let created = client
        .create_session()
        .body(
            CreateSessionRequest::builder()
                .subject_email("jane.doe@example.com")
                .query_parameters(vec![
                    query("FIN", &ALL),
                    query(
                        "SWE",
                        &[DataPackageInput::CreditHistory, DataPackageInput::Score],
                    ),
                    query("NOR", &[DataPackageInput::Score]),
                ]),
        )
        .call()
        .await
        .expect("create");
    assert_eq!(
        created.customer_progress_status,
        CustomerProgressStatus::WaitingForCustomer
    );
    assert!(
        created.subject_full_name.is_none(),
        "no name before identification"
    );
    let deadline = created.customer_input_deadline_utc.expect("deadline");
    assert!((deadline - created.created_at_utc).num_days() == 7);
    assert!(
        created
            .customer_input_deadline_extendable_until_utc
            .is_some()
    );
    assert!(created.data_package_upgradable_until_utc.is_some());
    let id = created.id;

    // Before consent: requested data waits for the customer; unrequested data needs an upgrade.
    let scores = answer!(client, get_scores, id);
    let scores_sources = statuses(&scores.sources);
    assert!(scores_sources.contains(&(
        "FIN".into(),
        "FIN_AURORA_LUOTTO".into(),
        SourceStatus::WaitingForCustomer
    )));
    assert!(scores_sources.contains(&(
        "NOR".into(),
        String::new(),
        SourceStatus::UnsupportedCountry
    )));
    assert!(scores.scores.expect("scores").is_empty());
    let statements = answer!(client, get_account_statements, id);
    assert!(statuses(&statements.sources).contains(&(
        "SWE".into(),
        "SWE_ORESUND_OPENBANKING".into(),
        SourceStatus::PackageUpgradeRequired
    )));
    let requirements = answer!(client, get_input_requirements, id);
    assert!(!requirements.input_requirements.expect("list").is_empty());

    // Resend works while the customer can act; the extension moves the deadline from now.
    let resent = answer!(client, resend_customer_notification, id);
    assert_eq!(resent["notificationsSent"], 2);
    let extended = client
        .extend_customer_input_deadline()
        .session_id(id)
        .call_with_response()
        .await
        .expect("extend");
    assert_eq!(extended.status.as_u16(), 201);
    let new_deadline = extended.body.customer_input_deadline_utc.expect("deadline");
    assert!((new_deadline - Utc::now()).num_hours() >= 7 * 24 - 1);

    // The customer completes.
    harness.complete(&id.to_string()).await;
    let session = answer!(client, get_session, id);
    assert_eq!(
        session.customer_progress_status,
        CustomerProgressStatus::CompletedByCustomer
    );
    let full_name = session
        .subject_full_name
        .clone()
        .expect("name after identification");
    assert!(
        client
            .get_input_requirements()
            .session_id(id)
            .call()
            .await
            .expect("req")
            .input_requirements
            .expect("list")
            .is_empty()
    );

    // Every dataset.
    let person = answer!(client, get_person_details, id);
    let given = person.given_names.expect("given")[0]
        .value
        .clone()
        .expect("value");
    let family = person.family_names.expect("family")[0]
        .value
        .clone()
        .expect("value");
    assert_eq!(
        format!("{given} {family}"),
        full_name,
        "the same person everywhere"
    );
    assert_eq!(
        person.emails.expect("emails")[0].value.as_deref(),
        Some("jane.doe@example.com")
    );
    let person_sources = statuses(&person.sources);
    assert!(person_sources.contains(&("FIN".into(), "FIN_SISU_ID".into(), SourceStatus::Success)));
    assert!(person_sources.contains(&(
        "SWE".into(),
        "SWE_NORDLJUS_EID".into(),
        SourceStatus::PackageUpgradeRequired
    )));

    let negative = answer!(client, get_negative_tradelines, id);
    assert!(statuses(&negative.sources).contains(&(
        "SWE".into(),
        "SWE_NORRSKEN_UC".into(),
        SourceStatus::Success
    )));
    let positive = answer!(client, get_positive_tradelines, id);
    let court = answer!(client, get_court_and_insolvencies, id);
    let legal = answer!(client, get_legal_entities, id);
    let incomes = answer!(client, get_registry_incomes, id);
    assert_eq!(
        incomes.incomes.expect("incomes").len(),
        3,
        "three assessment years in the home country"
    );
    let immovables = answer!(client, get_immovables, id);
    let metrics = answer!(client, get_metrics, id);
    assert!(!metrics.metrics.expect("metrics").is_empty());
    let scores = answer!(client, get_scores, id);
    assert!(
        scores.scores.expect("scores").len() >= 4,
        "FIN and SWE bureaus score"
    );
    for response in [
        positive.sources.clone(),
        court.sources.clone(),
        legal.sources.clone(),
        immovables.sources.clone(),
    ] {
        assert!(!statuses(&response).is_empty());
    }

    // Source files: listing, one by one, content decoding to sizeInBytes.
    let files = answer!(client, get_source_files, id);
    assert!(files.len() >= 3);
    for file in &files {
        let one = client
            .get_source_file()
            .session_id(id)
            .source_file_id(file.id)
            .call()
            .await
            .expect("file");
        assert_eq!(&one, file);
        let content = client
            .get_source_file_content()
            .session_id(id)
            .source_file_id(file.id)
            .call()
            .await
            .expect("content");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(content.content_base64.expect("content"))
            .expect("base64");
        assert_eq!(Some(bytes.len() as i64), file.size_in_bytes);
        let text = String::from_utf8(bytes).expect("utf-8");
        assert!(
            text.contains(&given),
            "the original report names the subject"
        );
    }

    // Bank data, its Excel and TSV exports.
    let statements = answer!(client, get_account_statements, id);
    let statements = statements.account_statements.expect("statements");
    assert!(!statements.is_empty());
    let mut all_transactions = 0;
    for statement in &statements {
        assert_eq!(
            statement.extra.to_map()["accountHolderName"],
            full_name.as_str()
        );
        let transactions = statement.extra.to_map()["transactions"]
            .as_array()
            .expect("transactions")
            .len();
        all_transactions += transactions;
        let statement_id = statement.id.clone().expect("id");
        let excel = download(
            client
                .get_account_statement_excel()
                .session_id(id)
                .account_statement_id(statement_id.clone())
                .call_with_response()
                .await
                .expect("excel"),
        )
        .await;
        assert_eq!(
            excel.content_type,
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        );
        let mut workbook: calamine::Xlsx<_> =
            calamine::open_workbook_from_rs(Cursor::new(excel.bytes)).expect("xlsx opens");
        use calamine::Reader as _;
        let range = workbook.worksheet_range("Statement").expect("sheet");
        // Ten rows of account facts and a blank line, a header row, then the transactions.
        assert_eq!(range.height(), 11 + transactions, "one row per transaction");
        let tsv = download(
            client
                .get_account_statement_tsv()
                .session_id(id)
                .account_statement_id(statement_id)
                .call_with_response()
                .await
                .expect("tsv"),
        )
        .await;
        assert_eq!(tsv.content_type, "text/tab-separated-values");
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(b'\t')
            .from_reader(tsv.bytes.as_slice());
        let rows: Vec<csv::StringRecord> = reader
            .records()
            .collect::<Result<_, _>>()
            .expect("TSV parses");
        assert_eq!(rows.len(), transactions);
        let closing = statement.extra.to_map()["closingBalance"]["amount"]
            .as_f64()
            .expect("closing");
        let last_balance: f64 = rows
            .last()
            .map(|r| r[5].parse().expect("balance"))
            .unwrap_or(closing);
        assert!(
            (last_balance - closing).abs() < 0.005,
            "TSV balance ends at the closing balance"
        );
    }
    let all = download(
        client
            .get_account_statement_transactions_excel()
            .session_id(id)
            .call_with_response()
            .await
            .expect("all excel"),
    )
    .await;
    let mut workbook: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(Cursor::new(all.bytes)).expect("xlsx opens");
    use calamine::Reader as _;
    assert_eq!(
        workbook
            .worksheet_range("Transactions")
            .expect("sheet")
            .height(),
        all_transactions + 1
    );

    let summary = answer!(client, get_categorizations_summary, id);
    let summary = summary.summary.expect("summary");
    assert!(matches!(
        summary.status,
        creditdata_client::types::CategorizationSummaryStatus::Success
            | creditdata_client::types::CategorizationSummaryStatus::SomeDataMissing
    ));
    assert!(summary.count_of_institutions.expect("institutions") >= 1);
    // Deprecated by the service, which still serves it: so does the mock, and this checks it.
    #[allow(deprecated)]
    let categorizations = answer!(client, get_categorizations, id);
    assert_eq!(categorizations.categorizations.expect("list").len(), 1);

    // Identity: verifications, their images (decoding), attachments (sizes match).
    let verifications = answer!(client, get_identity_verifications, id);
    let verifications = verifications.identity_verifications.expect("list");
    assert_eq!(verifications.len(), 1);
    let verification_id = verifications[0].id.clone().expect("id");
    let images = client
        .get_identity_verification_images()
        .session_id(id)
        .verification_id(verification_id.clone())
        .call()
        .await
        .expect("images");
    for image in images.images.expect("images") {
        let image_id = image.id.clone().expect("id");
        let file = download(
            client
                .get_identity_verification_image_content()
                .session_id(id)
                .verification_id(verification_id.clone())
                .image_id(image_id)
                .call_with_response()
                .await
                .expect("image"),
        )
        .await;
        assert_eq!(
            Some(file.length as u64),
            image.extra.to_map()["sizeInBytes"].as_u64()
        );
        let width = image.extra.to_map()["widthPixels"].as_u64().expect("width") as usize;
        match file.content_type.as_str() {
            "image/png" => {
                let decoder = png::Decoder::new(Cursor::new(file.bytes));
                let reader = decoder.read_info().expect("png decodes");
                assert_eq!(reader.info().width as usize, width);
            }
            "image/jpeg" => {
                let mut decoder = zune_jpeg::JpegDecoder::new(&file.bytes);
                let pixels = decoder.decode().expect("jpeg decodes");
                let info = decoder.info().expect("info");
                assert_eq!(info.width as usize, width);
                assert!(!pixels.is_empty());
            }
            other => panic!("unexpected image type {other}"),
        }
    }
    let attachments = answer!(client, get_attachments, id);
    let attachments = attachments.attachments.expect("list");
    assert_eq!(attachments.len(), 3);
    for attachment in &attachments {
        let file = download(
            client
                .get_attachment_content()
                .session_id(id)
                .attachment_id(attachment.id.clone())
                .call_with_response()
                .await
                .expect("attachment"),
        )
        .await;
        assert_eq!(file.length as i64, attachment.file_size_bytes);
        assert_eq!(Some(file.content_type.clone()), attachment.mime_type);
        assert!(
            file.disposition
                .contains(attachment.file_name.as_deref().expect("name"))
        );
    }

    // The PDF report summarises the same person.
    let report = download(
        client
            .get_pdf_report()
            .session_id(id)
            .call_with_response()
            .await
            .expect("pdf"),
    )
    .await;
    assert_eq!(report.content_type, "application/pdf");
    assert!(report.bytes.starts_with(b"%PDF-"));
    // pdf-writer writes ASCII lines as literal strings and other lines as hex strings.
    let family_encoded = creditdata_mock::win_ansi(&family);
    let family_hex: String = family_encoded.iter().map(|b| format!("{b:02X}")).collect();
    let report_upper = String::from_utf8_lossy(&report.bytes).to_uppercase();
    assert!(
        report
            .bytes
            .windows(family_encoded.len())
            .any(|w| w == family_encoded.as_slice())
            || report_upper.contains(&family_hex),
        "the report names the subject {family:?}"
    );

    // Where poppler is installed, the report must also render.
    if let Ok(pdftoppm) = which("pdftoppm") {
        let directory = tempfile::tempdir().expect("tempdir");
        let pdf = directory.path().join("report.pdf");
        std::fs::write(&pdf, &report.bytes).expect("write");
        let status = std::process::Command::new(pdftoppm)
            .args(["-r", "30", "-png"])
            .arg(&pdf)
            .arg(directory.path().join("page"))
            .status()
            .expect("pdftoppm runs");
        assert!(status.success(), "pdftoppm renders the report");
        assert!(
            directory.path().join("page-1.png").exists()
                || directory.path().join("page-01.png").exists()
        );
    }

    // After completion: no extension, no resend.
    let refused = client
        .extend_customer_input_deadline()
        .session_id(id)
        .call()
        .await
        .expect_err("refused");
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(400));
    let refused = client
        .resend_customer_notification()
        .session_id(id)
        .call()
        .await
        .expect_err("refused");
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(400));

    // PATCH appends (duplicates dropped) and sends the customer back to consent to the new data.
    let patched = client
        .update_session()
        .session_id(id)
        .body(UpdateSessionRequest::builder().query_parameters(vec![
            query("FIN", &[DataPackageInput::Score]),
            query("SWE", &[DataPackageInput::BankAccountCategorization]),
            query("EST", &[DataPackageInput::Score]),
        ]))
        .call()
        .await
        .expect("patch");
    let parameters = patched.query_parameters.expect("parameters");
    let countries: Vec<&str> = parameters
        .iter()
        .filter_map(|p| p.country_code.as_deref())
        .collect();
    assert_eq!(countries, ["FIN", "SWE", "NOR", "EST"]);
    assert_eq!(
        parameters[0]
            .data_packages
            .as_ref()
            .expect("packages")
            .len(),
        4,
        "no duplicates"
    );
    assert_eq!(
        parameters[1]
            .data_packages
            .as_ref()
            .expect("packages")
            .len(),
        3
    );
    assert_eq!(
        patched.customer_progress_status,
        CustomerProgressStatus::WaitingForCustomer
    );
    let scores = answer!(client, get_scores, id);
    let scores_sources = statuses(&scores.sources);
    assert!(scores_sources.contains(&(
        "FIN".into(),
        "FIN_AURORA_LUOTTO".into(),
        SourceStatus::Success
    )));
    assert!(scores_sources.contains(&(
        "EST".into(),
        "EST_KALEV_KREDIIT".into(),
        SourceStatus::WaitingForCustomer
    )));

    // Expiry: the deadline passes; PATCH and resend are refused, an extension revives it.
    let (status, expired) = harness
        .control(&format!("/_mock/sessions/{id}/expire"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(expired["customerProgressStatus"], "EXPIRED");
    assert!(expired["dataPackageUpgradableUntilUtc"].is_null());
    let refused = client
        .update_session()
        .session_id(id)
        .body(
            UpdateSessionRequest::builder()
                .query_parameters(vec![query("LTU", &[DataPackageInput::Score])]),
        )
        .call()
        .await
        .expect_err("refused");
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(400));
    assert!(
        client
            .resend_customer_notification()
            .session_id(id)
            .call()
            .await
            .is_err()
    );
    let revived = answer!(client, extend_customer_input_deadline, id);
    assert_eq!(
        revived.customer_progress_status,
        CustomerProgressStatus::WaitingForCustomer
    );

    // The session list finds it.
    let found = client
        .get_sessions()
        .subject_email("jane.doe")
        .call()
        .await
        .expect("list");
    assert_eq!(found.paging.expect("paging").total_count, 1);
    harness.mock.shutdown().await;
}

fn which(program: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|directory| directory.join(program))
        .find(|candidate| candidate.is_file())
        .ok_or(())
}

#[tokio::test]
async fn unknown_sessions_are_404_through_the_client() {
    let harness = Harness::start().await;
    let error = harness
        .client()
        .get_session()
        .session_id(uuid::Uuid::new_v4())
        .call()
        .await
        .expect_err("404");
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404));
}
