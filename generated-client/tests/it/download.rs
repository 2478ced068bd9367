//! Binary downloads against loopback servers: byte-exact, atomic, length-checked, safe names.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use creditdata_client::download::{DownloadExt, Progress};
use creditdata_client::{Client, Error};
use futures::TryStreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use uuid::Uuid;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

const SESSION: Uuid = Uuid::from_u128(0x1234);

fn client(base_url: &str) -> Client {
    Client::builder()
        .base_url(base_url)
        .bearer_token("t")
        .no_retries()
        .build()
        .unwrap()
}

/// Deterministic bytes that are not all alike (a shifted copy would show).
fn content(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

async fn pdf_server(body: Vec<u8>, disposition: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{SESSION}/pdf-report")))
        .and(header("authorization", "Bearer t"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-disposition", disposition)
                .set_body_raw(body, "application/pdf"),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_download_is_byte_exact_reports_progress_and_exposes_its_headers() {
    let body = content(300_000);
    let server = pdf_server(
        body.clone(),
        "attachment; filename=\"report.pdf\"; filename*=UTF-8''R%C3%A4port%20%E2%82%AC.pdf",
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.pdf");

    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let download = client(&server.uri())
        .get_pdf_report()
        .session_id(SESSION)
        .download()
        .await
        .unwrap();
    assert_eq!(download.content_type(), Some("application/pdf"));
    assert_eq!(download.file_name(), Some("Räport €.pdf"));
    assert_eq!(download.content_length(), Some(body.len() as u64));
    assert_eq!(download.operation(), Some("GetPdfReport"));
    let saved = download
        .on_progress({
            let seen = seen.clone();
            move |p| seen.lock().unwrap().push(p)
        })
        .save(&target)
        .await
        .unwrap();

    assert_eq!(std::fs::read(&target).unwrap(), body);
    assert_eq!(saved.path, target);
    assert_eq!(saved.bytes, body.len() as u64);
    assert_eq!(saved.content_type.as_deref(), Some("application/pdf"));
    assert_eq!(saved.file_name.as_deref(), Some("Räport €.pdf"));
    assert_eq!(
        entries(dir.path()),
        ["out.pdf"],
        "no temporary file is left behind"
    );

    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    assert!(
        seen.windows(2).all(|w| w[0].received < w[1].received),
        "progress only grows"
    );
    assert!(seen.iter().all(|p| p.total == Some(body.len() as u64)));
    assert_eq!(seen.last().unwrap().received, body.len() as u64);
}

#[cfg(unix)]
#[tokio::test]
async fn saved_files_are_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let server = pdf_server(content(10), "attachment").await;
    let dir = tempfile::tempdir().unwrap();
    let saved = client(&server.uri())
        .download_pdf_report(SESSION, dir.path().join("r.pdf"))
        .await
        .unwrap();
    let mode = std::fs::metadata(&saved.path).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");
}

#[tokio::test]
async fn an_existing_file_is_replaced_whole() {
    let body = content(5_000);
    let server = pdf_server(body.clone(), "attachment").await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.pdf");
    std::fs::write(&target, vec![b'x'; 20_000]).unwrap();
    client(&server.uri())
        .download_pdf_report(SESSION, &target)
        .await
        .unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), body);
    assert_eq!(entries(dir.path()), ["report.pdf"]);
}

#[tokio::test]
async fn write_to_and_bytes_stream_deliver_the_same_bytes() {
    let body = content(70_000);
    let server = pdf_server(body.clone(), "inline").await;
    let client = client(&server.uri());

    let mut out: Vec<u8> = Vec::new();
    let written = client
        .get_pdf_report()
        .session_id(SESSION)
        .download()
        .await
        .unwrap()
        .write_to(&mut out)
        .await
        .unwrap();
    assert_eq!(written, body.len() as u64);
    assert_eq!(out, body);

    let download = client
        .get_pdf_report()
        .session_id(SESSION)
        .download()
        .await
        .unwrap();
    assert_eq!(
        download.file_name(),
        None,
        "`inline` without a file name suggests none"
    );
    let chunks: Vec<bytes::Bytes> = download.bytes_stream().try_collect().await.unwrap();
    assert_eq!(chunks.concat(), body);
}

#[tokio::test]
async fn every_binary_endpoint_downloads_to_a_file() {
    let server = MockServer::start().await;
    let endpoints = [
        (
            format!("/v1/sessions/{SESSION}/pdf-report"),
            "application/pdf",
        ),
        (
            format!("/v1/sessions/{SESSION}/account-statements/transactions/excel"),
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
        (
            format!("/v1/sessions/{SESSION}/account-statements/st-1/excel"),
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
        (
            format!("/v1/sessions/{SESSION}/account-statements/st-1/tsv"),
            "text/tab-separated-values",
        ),
        (
            format!("/v1/sessions/{SESSION}/attachments/att-1/content"),
            "application/pdf",
        ),
        (
            format!("/v1/sessions/{SESSION}/identity-verifications/ver-1/images/img-1/content"),
            "image/jpeg",
        ),
    ];
    for (i, (endpoint, mime)) in endpoints.iter().enumerate() {
        Mock::given(method("GET"))
            .and(path(endpoint.as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_raw(content(1_000 + i), mime))
            .expect(1)
            .mount(&server)
            .await;
    }
    let client = client(&server.uri());
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let saved = [
        client.download_pdf_report(SESSION, d("0")).await.unwrap(),
        client
            .download_account_statement_transactions_excel(SESSION, d("1"))
            .await
            .unwrap(),
        client
            .download_account_statement_excel(SESSION, "st-1", d("2"))
            .await
            .unwrap(),
        client
            .download_account_statement_tsv(SESSION, "st-1", d("3"))
            .await
            .unwrap(),
        client
            .download_attachment(SESSION, "att-1", d("4"))
            .await
            .unwrap(),
        client
            .download_identity_image(SESSION, "ver-1", "img-1", d("5"))
            .await
            .unwrap(),
    ];
    for (i, file) in saved.iter().enumerate() {
        assert_eq!(
            std::fs::read(&file.path).unwrap(),
            content(1_000 + i),
            "endpoint {i}"
        );
        assert_eq!(file.content_type.as_deref(), Some(endpoints[i].1));
    }
    assert_eq!(entries(dir.path()), ["0", "1", "2", "3", "4", "5"]);
}

#[tokio::test]
async fn hostile_server_file_names_stay_inside_the_target_directory() {
    let root = tempfile::tempdir().unwrap();
    let target_dir = root.path().join("a").join("b");
    std::fs::create_dir_all(&target_dir).unwrap();
    let cases = [
        ("attachment; filename=\"../../evil.pdf\"", "_.._evil.pdf"),
        (
            "attachment; filename*=UTF-8''..%2F..%2Fevil.pdf",
            "_.._evil.pdf",
        ),
        ("attachment; filename=\"/etc/passwd\"", "_etc_passwd"),
        (
            "attachment; filename=\"..\\\\..\\\\evil.pdf\"",
            "_.._evil.pdf",
        ),
        ("attachment; filename=\".bashrc\"", "bashrc"),
        ("attachment; filename=\"..\"", "fallback.pdf"),
    ];
    for (disposition, expected) in cases {
        let server = pdf_server(content(100), disposition).await;
        let saved = client(&server.uri())
            .get_pdf_report()
            .session_id(SESSION)
            .download()
            .await
            .unwrap()
            .save_in(&target_dir, "fallback.pdf")
            .await
            .unwrap();
        assert_eq!(saved.path, target_dir.join(expected), "{disposition}");
        assert_eq!(std::fs::read(&saved.path).unwrap(), content(100));
        std::fs::remove_file(&saved.path).unwrap();
    }
    assert_eq!(entries(root.path()), ["a"]);
    assert_eq!(entries(&root.path().join("a")), ["b"]);
    assert!(entries(&target_dir).is_empty());
}

/// A one-shot HTTP/1.1 server on loopback that answers with `head` and `body`, then closes the
/// connection (whatever `Content-Length` promised).
async fn raw_server(head: String, body: Vec<u8>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                return;
            }
            request.extend_from_slice(&buf[..n]);
        }
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(&body).await.unwrap();
        socket.flush().await.unwrap();
        // Dropping the socket closes the connection.
    });
    format!("http://{address}")
}

fn truncated_head(declared: usize) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: {declared}\r\n\
         Content-Disposition: attachment; filename=\"report.pdf\"\r\nConnection: close\r\n\r\n"
    )
}

async fn assert_cut_short(base_url: String, target: PathBuf, expected_fragment: &str) {
    let error = client(&base_url)
        .download_pdf_report(SESSION, &target)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Download { .. }), "{error:?}");
    assert_eq!(error.operation(), Some("GetPdfReport"));
    assert!(error.to_string().contains(expected_fragment), "{error}");
}

#[tokio::test]
async fn a_body_shorter_than_content_length_leaves_no_file_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.pdf");
    let base = raw_server(truncated_head(100_000), content(40_000)).await;
    assert_cut_short(base, target.clone(), "of 100000 bytes").await;
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[tokio::test]
async fn a_connection_dropped_before_the_body_leaves_the_previous_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("report.pdf");
    std::fs::write(&target, b"previous version").unwrap();
    let base = raw_server(truncated_head(5_000), Vec::new()).await;
    assert_cut_short(base, target.clone(), "after 0 of 5000 bytes").await;
    assert_eq!(std::fs::read(&target).unwrap(), b"previous version");
    assert_eq!(entries(dir.path()), ["report.pdf"]);
}

#[tokio::test]
async fn an_error_status_writes_nothing() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{SESSION}/pdf-report")))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let error = client(&server.uri())
        .download_pdf_report(SESSION, dir.path().join("report.pdf"))
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(error.operation(), Some("GetPdfReport"));
    assert!(entries(dir.path()).is_empty());
}

#[tokio::test]
async fn a_missing_directory_is_an_io_error_naming_it() {
    let server = pdf_server(content(10), "attachment").await;
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let error = client(&server.uri())
        .download_pdf_report(SESSION, missing.join("report.pdf"))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("no-such-dir"), "{error}");
    assert!(entries(dir.path()).is_empty());
}
