//! The hostile-network tests of items 9 and 10: overflow-free waiting, saved file names that cannot deceive.

use super::*;

// ---------------------------------------------------------------------------------------------
// Item 9: overflow-free waiting.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_09_waiting_without_end_cannot_overflow() {
    let server = MockServer::start().await;
    let mut session = session_json(session_id());
    session["customerProgressStatus"] = json!("COMPLETED_BY_CUSTOMER");
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(200).set_body_json(session))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    let session = client
        .wait_for_customer(
            session_id(),
            WaitOptions::default()
                .timeout(Duration::MAX)
                .initial_interval(Duration::MAX),
        )
        .await
        .unwrap();
    assert_eq!(
        session.customer_progress_status,
        CustomerProgressStatus::CompletedByCustomer
    );
}

// ---------------------------------------------------------------------------------------------
// Item 10: saved file names cannot deceive.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_10_saved_file_names_cannot_deceive() {
    let server = MockServer::start().await;
    // "invoice" RIGHT-TO-LEFT OVERRIDE "fdp.exe" displays as "invoiceexe.pdf"; the isolates,
    // the zero-width characters and the soft hyphen are invisible.
    let disposition = "attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe%E2%81%A6%E2%81%A9\
                       %E2%80%8B%E2%80%8C%E2%80%8D%EF%BB%BF%C2%AD%E2%81%A0";
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-disposition", disposition)
                .set_body_raw("MZ", "application/octet-stream"),
        )
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    let download = client
        .get_attachment_content()
        .session_id(session_id())
        .attachment_id("A1")
        .download()
        .await
        .unwrap();
    assert_eq!(download.file_name(), Some("invoicefdp.exe"));

    let dir = tempfile::tempdir().unwrap();
    let saved = download.save_in(dir.path(), "fallback").await.unwrap();
    assert_eq!(saved.path, dir.path().join("invoicefdp.exe"));

    for (hostile, expected) in [
        ("report\u{202E}fdp.exe", Some("reportfdp.exe")),
        ("a\u{2066}b\u{2067}c\u{2068}d\u{2069}.pdf", Some("abcd.pdf")),
        ("\u{202A}\u{202B}\u{202C}\u{202D}", None),
        ("x\u{200E}\u{200F}\u{061C}.txt", Some("x.txt")),
        ("name\u{2028}line.txt", Some("name_line.txt")),
        ("\u{200B}.hidden", Some("hidden")),
        ("tag\u{E0041}.txt", Some("tag.txt")),
    ] {
        assert_eq!(
            creditdata_client::download::sanitize_file_name(hostile).as_deref(),
            expected,
            "{hostile:?}"
        );
    }
}
