//! Every operation test of the byte-stream operations: each byte and the content type.

use super::*;

// ---------------------------------------------------------------------------------------------
// Downloads
// ---------------------------------------------------------------------------------------------

/// Bytes that are not text, long enough to arrive in several chunks.
fn binary(header: &[u8], len: usize) -> Vec<u8> {
    let mut bytes = header.to_vec();
    let mut state: u32 = 0x2545_f491;
    while bytes.len() < len {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        bytes.push((state >> 24) as u8);
    }
    bytes
}

#[tokio::test]
async fn downloads_stream_every_byte_with_the_content_type() {
    let recorder = Recorder::start().await;

    let pdf = binary(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", 150_000);
    download(
        &recorder,
        Expected::get(session_path("/pdf-report")),
        "application/pdf",
        &pdf,
        recorder.client.get_pdf_report().session_id(SESSION_ID),
    )
    .await;

    const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
    let workbook = binary(b"PK\x03\x04\x14\x00\x06\x00", 300_000);
    download(
        &recorder,
        Expected::get(session_path("/account-statements/transactions/excel")),
        XLSX,
        &workbook,
        recorder
            .client
            .get_account_statement_transactions_excel()
            .session_id(SESSION_ID),
    )
    .await;

    // Identifiers are opaque strings: everything but letters, digits and `-._~` is
    // percent-encoded so the path keeps its shape (`/`, `\`, `%` and control characters are
    // refused instead: see tests/hostile_server.rs).
    download(
        &recorder,
        Expected::get(session_path(
            "/account-statements/SE45%205000%3A2026-02/excel",
        )),
        XLSX,
        &workbook[..20_000],
        recorder
            .client
            .get_account_statement_excel()
            .session_id(SESSION_ID)
            .account_statement_id("SE45 5000:2026-02"),
    )
    .await;

    let png = binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 40_000);
    download(
        &recorder,
        Expected::get(session_path("/attachments/mandate%237%3Fv%3D2/content")),
        "image/png",
        &png,
        recorder
            .client
            .get_attachment_content()
            .session_id(SESSION_ID)
            .attachment_id("mandate#7?v=2"),
    )
    .await;

    let jpeg = binary(b"\xff\xd8\xff\xe0\0\x10JFIF\0", 60_000);
    download(
        &recorder,
        Expected::get(session_path(
            "/identity-verifications/idv%204821/images/front%401/content",
        )),
        "image/jpeg",
        &jpeg,
        recorder
            .client
            .get_identity_verification_image_content()
            .session_id(SESSION_ID)
            .verification_id("idv 4821")
            .image_id("front@1"),
    )
    .await;

    let tsv = "bookingDate\tamount\tcurrencyCode\tcounterparty\tdescription\n\
               2026-02-01\t-1250.00\tSEK\tVattenfall AB\tEl februari\n\
               2026-02-25\t38250.00\tSEK\tÅhléns AB\tLön\n";
    let received = download(
        &recorder,
        Expected::get(session_path("/account-statements/stmt-2026-02/tsv")),
        "text/tab-separated-values; charset=utf-8",
        tsv.as_bytes(),
        recorder
            .client
            .get_account_statement_tsv()
            .session_id(SESSION_ID)
            .account_statement_id("stmt-2026-02"),
    )
    .await;
    assert_eq!(
        String::from_utf8(received).expect("GetAccountStatementTsv: UTF-8"),
        tsv,
        "GetAccountStatementTsv: text"
    );
}
