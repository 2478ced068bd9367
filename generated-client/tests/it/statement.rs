//! The TSV account statement as parsed rows, against a loopback server.

use creditdata_client::statement::{StatementRow, parse_statement};
use creditdata_client::{Client, Error};
use futures::{StreamExt, TryStreamExt};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

const SESSION: Uuid = Uuid::from_u128(0xabc);

fn client(server: &MockServer) -> Client {
    crate::support::plain_client(&server.uri())
}

async fn tsv_server(body: impl Into<Vec<u8>>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/v1/sessions/{SESSION}/account-statements/st-1/tsv"
        )))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(body.into(), "text/tab-separated-values"),
        )
        .mount(&server)
        .await;
    server
}

const STATEMENT: &str = "\u{feff}BookingDate\tAmount\tCurrency\tCounterparty\tDescription\r\n\
2026-01-02\t-12.50\tEUR\tCoffee Shop\tCard payment\r\n\
2026-01-05\t2500.00\tEUR\tEmployer Ltd\t\"Salary\tJanuary\"\r\n\
2026-01-07\t-800\tEUR\tLandlord\r\n\
2026-01-09\t-40.10\tEUR\t\tATM withdrawal\r\n";

#[tokio::test]
async fn rows_are_keyed_by_the_header_and_a_malformed_row_names_its_line() {
    let server = tsv_server(STATEMENT).await;
    let items: Vec<Result<StatementRow, Error>> = client(&server)
        .account_statement_rows(SESSION, "st-1")
        .collect()
        .await;
    assert_eq!(items.len(), 4);

    let first = items[0].as_ref().unwrap();
    assert_eq!(
        first.columns(),
        [
            "BookingDate",
            "Amount",
            "Currency",
            "Counterparty",
            "Description"
        ],
        "the byte order mark is not part of the first column name"
    );
    assert_eq!(first.line(), 2);
    assert_eq!(first.get("Counterparty"), Some("Coffee Shop"));
    assert_eq!(
        first.date("BookingDate").unwrap(),
        chrono::NaiveDate::from_ymd_opt(2026, 1, 2)
    );
    assert_eq!(first.get("NoSuchColumn"), None);

    let second = items[1].as_ref().unwrap();
    assert_eq!(
        second.get("Description"),
        Some("Salary\tJanuary"),
        "a quoted field keeps its tab"
    );
    assert_eq!(second.parse::<f64>("Amount").unwrap(), Some(2500.0));
    let error = second.parse::<i64>("Amount").unwrap_err().to_string();
    assert!(
        error.contains("line 3, column \"Amount\"") && error.contains("not a valid i64"),
        "{error}"
    );

    let error = items[2].as_ref().unwrap_err();
    assert!(matches!(error, Error::Decode(_)), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("line 4"), "{message}");
    assert!(message.contains("4 fields, the header has 5"), "{message}");
    assert!(message.contains("GetAccountStatementTsv"), "{message}");
    assert!(
        !message.contains("Landlord"),
        "row content stays out of error messages: {message}"
    );

    let last = items[3].as_ref().unwrap();
    assert_eq!(last.line(), 5, "the stream goes on after a malformed row");
    assert_eq!(last.get("Counterparty"), Some(""));
    assert_eq!(
        last.iter().collect::<Vec<_>>(),
        [
            ("BookingDate", "2026-01-09"),
            ("Amount", "-40.10"),
            ("Currency", "EUR"),
            ("Counterparty", ""),
            ("Description", "ATM withdrawal"),
        ]
    );
}

#[tokio::test]
async fn try_collect_stops_at_the_first_malformed_row() {
    let server = tsv_server(STATEMENT).await;
    let error = client(&server)
        .account_statement_rows(SESSION, "st-1")
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("line 4"), "{error}");
}

#[tokio::test]
async fn a_large_statement_streams_through_in_order() {
    let mut body = String::from("Index\tAmount\n");
    for i in 0..50_000 {
        body.push_str(&format!("{i}\t{}.{:02}\n", i % 1000, i % 100));
    }
    let server = tsv_server(body).await;
    let mut rows = client(&server).account_statement_rows(SESSION, "st-1");
    let mut count: u64 = 0;
    while let Some(row) = rows.try_next().await.unwrap() {
        assert_eq!(row.parse::<u64>("Index").unwrap(), Some(count));
        assert_eq!(row.line(), count + 2);
        count += 1;
    }
    assert_eq!(count, 50_000);
}

#[tokio::test]
async fn an_error_status_comes_out_of_the_stream() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/v1/sessions/{SESSION}/account-statements/st-1/tsv"
        )))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    let items: Vec<_> = client(&server)
        .account_statement_rows(SESSION, "st-1")
        .collect()
        .await;
    assert_eq!(items.len(), 1);
    let error = items[0].as_ref().unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(error.operation(), Some("GetAccountStatementTsv"));
}

#[tokio::test]
async fn the_raw_statement_can_be_saved_or_parsed_from_a_download() {
    let server = tsv_server(STATEMENT).await;
    let client = client(&server);
    let download = client.account_statement_tsv(SESSION, "st-1").await.unwrap();
    assert_eq!(download.content_type(), Some("text/tab-separated-values"));
    let rows: Vec<_> = parse_statement(download.bytes_stream()).collect().await;
    assert_eq!(rows.len(), 4);

    let dir = tempfile::tempdir().unwrap();
    let saved = client
        .account_statement_tsv(SESSION, "st-1")
        .await
        .unwrap()
        .save(dir.path().join("statement.tsv"))
        .await
        .unwrap();
    assert_eq!(std::fs::read(saved.path).unwrap(), STATEMENT.as_bytes());
}

#[tokio::test]
async fn invalid_utf8_is_reported_with_line_and_column() {
    let server = tsv_server(b"Name\tAmount\nok\t1\n\xff\xfe\t2\n".to_vec()).await;
    let items: Vec<_> = client(&server)
        .account_statement_rows(SESSION, "st-1")
        .collect()
        .await;
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    let message = items[1].as_ref().unwrap_err().to_string();
    assert!(message.contains("line 3, column \"Name\""), "{message}");
    assert!(message.contains("not valid UTF-8"), "{message}");
}
