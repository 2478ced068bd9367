//! Helpers shared by the integration tests: an in-process mock on 127.0.0.1:0, a token from its
//! token endpoint, and a reqwest client that sends it.

pub mod openapi;

use creditdata_mock::{MockConfig, MockServer};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde_json::{Value, json};

/// The header that marks a `/_mock` control request as coming from a tool, not a web page.
pub const CONTROL_HEADER: &str = "X-Creditdata-Mock";

/// A mock whose providers answer at once and never fail by themselves.
pub fn quick_config() -> MockConfig {
    MockConfig::immediate()
}

/// A started mock with an authenticated HTTP client.
pub struct Harness {
    pub mock: MockServer,
    pub http: reqwest::Client,
    pub anonymous: reqwest::Client,
    pub token: String,
}

impl Harness {
    pub async fn start() -> Harness {
        Self::with(quick_config()).await
    }

    pub async fn with(config: MockConfig) -> Harness {
        let mock = MockServer::start(config).await.expect("mock starts");
        let anonymous = reqwest::Client::new();
        let token = fetch_token(&anonymous, &mock).await;
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).expect("header"),
        );
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .expect("client");
        Harness {
            mock,
            http,
            anonymous,
            token,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.mock.base_url())
    }

    /// The generated client as a user builds it: OAuth2 client credentials against the mock's
    /// identity provider (the client fetches and refreshes its own tokens).
    pub fn client(&self) -> creditdata_client::Client {
        creditdata_client::Client::builder()
            .base_url(self.mock.base_url())
            .client_credentials(
                self.mock.token_url(),
                self.mock.client_id(),
                self.mock.client_secret(),
            )
            .build()
            .expect("client builds")
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.http.get(self.url(path)).send().await.expect("request")
    }

    pub async fn get_json(&self, path: &str) -> (u16, Value) {
        let response = self.get(path).await;
        let status = response.status().as_u16();
        (status, response.json().await.expect("json body"))
    }

    pub async fn send_json(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &Value,
    ) -> (u16, Value) {
        let response = self
            .http
            .request(method, self.url(path))
            .json(body)
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str) -> (u16, Value) {
        let response = self
            .http
            .post(self.url(path))
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Creates a session and returns its JSON.
    pub async fn create(&self, email: &str, query: Value) -> Value {
        let (status, body) = self
            .send_json(
                reqwest::Method::POST,
                "/v1/sessions",
                &json!({ "subjectEmail": email, "queryParameters": query }),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body
    }

    /// Plays the customer: completes the session.
    pub async fn complete(&self, id: &str) -> Value {
        let (status, body) = self
            .anonymous
            .post(self.url(&format!("/_mock/sessions/{id}/complete")))
            .header(CONTROL_HEADER, "1")
            .send()
            .await
            .map(|r| (r.status().as_u16(), r))
            .expect("request");
        let body: Value = body.json().await.expect("json");
        assert_eq!(status, 200, "{body}");
        body
    }

    pub async fn control(&self, path: &str) -> (u16, Value) {
        let response = self
            .anonymous
            .post(self.url(path))
            .header(CONTROL_HEADER, "1")
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

pub async fn fetch_token(http: &reqwest::Client, mock: &MockServer) -> String {
    let response = http
        .post(mock.token_url())
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", mock.client_id()),
            ("client_secret", mock.client_secret()),
        ])
        .send()
        .await
        .expect("token request");
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await.expect("token json");
    body["access_token"]
        .as_str()
        .expect("access_token")
        .to_owned()
}

/// Every country the mock's catalog offers, with all four packages.
pub fn everything(countries: &[&str]) -> Value {
    Value::Array(
        countries
            .iter()
            .map(|code| {
                json!({
                    "countryCode": code,
                    "dataPackages": ["CREDIT_HISTORY", "SCORE", "BANK_ACCOUNT_CATEGORIZATION", "IDENTIFICATION"],
                })
            })
            .collect(),
    )
}
