//! Where the service and its identity provider are: [`Environment`] (production, test, the
//! mock, a custom URL), below the grants and the builder that both read it.

use crate::error::Error;
use crate::generated_issuers::SECURITY_SCHEME_ISSUERS;
use crate::urls::validate_url;

/// Where the service is.
///
/// No public address of the service is known, so production and test addresses come from
/// configuration: `CREDITDATA_PRODUCTION_URL` and `CREDITDATA_TEST_URL`, or an explicit
/// [`Environment::Custom`] URL. The mock defaults to the address `creditdata-mock` listens on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Environment {
    /// Production (live identity provider): `CREDITDATA_PRODUCTION_URL`.
    Production,
    /// The test environment: `CREDITDATA_TEST_URL`.
    Test,
    /// The local mock (`creditdata-mock`): `CREDITDATA_MOCK_URL`, else `http://127.0.0.1:8080`.
    Mock,
    /// Any base URL (scheme, host, port and path stem; the operations' paths start with `/v1`).
    Custom(String),
}

/// Where [`Environment::Mock`] is when `CREDITDATA_MOCK_URL` is not set.
pub const DEFAULT_MOCK_URL: &str = "http://127.0.0.1:8080";

/// Reads an environment name, in any case: `production` (or `prod`, `live`), `test`, `mock`, or
/// a base URL (anything with `://`, checked when the client is built).
///
/// ```
/// use creditdata_client::Environment;
///
/// assert_eq!("mock".parse::<Environment>().unwrap(), Environment::Mock);
/// assert!("staging".parse::<Environment>().is_err());
/// ```
impl std::str::FromStr for Environment {
    type Err = Error;

    fn from_str(text: &str) -> Result<Environment, Error> {
        match text.trim().to_ascii_lowercase().as_str() {
            "production" | "prod" | "live" => Ok(Environment::Production),
            "test" => Ok(Environment::Test),
            "mock" => Ok(Environment::Mock),
            _ if text.contains("://") => Ok(Environment::Custom(text.trim().to_string())),
            _ => Err(Error::Config(format!(
                "unknown environment {text:?}: use production, test, mock or a base URL"
            ))),
        }
    }
}

impl Environment {
    /// The base URL, reading the variable the environment names.
    pub fn base_url(&self) -> Result<String, Error> {
        self.base_url_with(|name| std::env::var(name).ok())
    }

    /// [`base_url`](Self::base_url), reading variables through `lookup`.
    pub fn base_url_with(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<String, Error> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let from_var = |name: &str, what: &str| {
            var(name).ok_or_else(|| {
                Error::Config(format!(
                    "the {what} environment has no known public address: set {name} (or use Environment::Custom)"
                ))
            })
        };
        let url = match self {
            Environment::Production => from_var("CREDITDATA_PRODUCTION_URL", "production")?,
            Environment::Test => from_var("CREDITDATA_TEST_URL", "test")?,
            Environment::Mock => {
                var("CREDITDATA_MOCK_URL").unwrap_or_else(|| DEFAULT_MOCK_URL.to_string())
            }
            Environment::Custom(url) => url.clone(),
        };
        validate_base_url(&url)
    }

    /// Where people of this environment sign in: production ↔ the description's
    /// `identityProviderAuthLive` scheme, test ↔ `identityProviderAuthTest`, the mock ↔
    /// `{mock}/realms/consumer`. Reads the environment's variables (see
    /// [`identity_provider_with`](Self::identity_provider_with)).
    pub fn identity_provider(&self) -> Result<IdentityProviderUrls, Error> {
        self.identity_provider_with(|name| std::env::var(name).ok())
    }

    /// [`identity_provider`](Self::identity_provider), reading variables through `lookup`.
    ///
    /// `CREDITDATA_ISSUER` names the issuer for any environment; else
    /// `CREDITDATA_PRODUCTION_ISSUER` / `CREDITDATA_TEST_ISSUER` for production and test, else
    /// the issuer of the environment's security scheme in the API description (its
    /// `authorizationUrl` without `/protocol/openid-connect/auth`, written into the client by
    /// the generator). The vendored description's addresses are placeholders
    /// (`*.invalid`): they are refused with an error saying which variable to set, as the
    /// base URLs are. A custom base URL has no known identity provider without
    /// `CREDITDATA_ISSUER`.
    ///
    /// ```
    /// use creditdata_client::Environment;
    ///
    /// let mock = Environment::Mock.identity_provider_with(|_| None)?;
    /// assert_eq!(mock.issuer, "http://127.0.0.1:8080/realms/consumer");
    /// let live = Environment::Production
    ///     .identity_provider_with(|name| (name == "CREDITDATA_ISSUER").then(|| "https://login.bank.test/realms/consumer-live".to_string()))?;
    /// assert_eq!(live.token_url, "https://login.bank.test/realms/consumer-live/protocol/openid-connect/token");
    /// // Without a variable, the description's placeholder is refused with what to set:
    /// let error = Environment::Production.identity_provider_with(|_| None).unwrap_err();
    /// assert!(error.to_string().contains("CREDITDATA_PRODUCTION_ISSUER"));
    /// # Ok::<(), creditdata_client::Error>(())
    /// ```
    pub fn identity_provider_with(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<IdentityProviderUrls, Error> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let (scheme, variable) = match self {
            Environment::Production => (Some(LIVE_SCHEME), Some("CREDITDATA_PRODUCTION_ISSUER")),
            Environment::Test => (Some(TEST_SCHEME), Some("CREDITDATA_TEST_ISSUER")),
            Environment::Mock | Environment::Custom(_) => (None, None),
        };
        let configured = var("CREDITDATA_ISSUER").or_else(|| variable.and_then(var));
        let issuer = match (configured, self) {
            (Some(issuer), _) => issuer.trim().trim_end_matches('/').to_string(),
            (None, Environment::Mock) => {
                format!("{}/realms/consumer", self.base_url_with(&lookup)?)
            }
            (None, Environment::Custom(_)) => {
                return Err(Error::Config(
                    "a custom base URL has no known identity provider: set CREDITDATA_ISSUER"
                        .into(),
                ));
            }
            (None, _) => {
                let scheme = scheme.unwrap_or(LIVE_SCHEME);
                let variable = variable.unwrap_or("CREDITDATA_ISSUER");
                let issuer = described_issuer(scheme)?;
                let host = reqwest::Url::parse(&issuer)
                    .ok()
                    .and_then(|u| u.host_str().map(str::to_string))
                    .unwrap_or_default();
                if host.ends_with(".invalid") {
                    return Err(Error::Config(format!(
                        "the API description's identity provider for {scheme} is a placeholder \
                         ({host}): set {variable} (or CREDITDATA_ISSUER) to the issuer URL"
                    )));
                }
                issuer
            }
        };
        crate::urls::validate_identity_provider_url("the issuer URL", &issuer)
            .map_err(Error::Config)?;
        Ok(IdentityProviderUrls {
            authorization_url: format!("{issuer}/protocol/openid-connect/auth"),
            token_url: format!("{issuer}/protocol/openid-connect/token"),
            issuer,
            security_scheme: scheme,
        })
    }
}

/// Where an environment's people sign in ([`Environment::identity_provider`]). The
/// authorization and token URLs follow the issuer's Keycloak-style layout; a sign-in reads the
/// authoritative ones from the issuer's discovery document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityProviderUrls {
    /// The OpenID Connect issuer, without a trailing slash.
    pub issuer: String,
    /// `{issuer}/protocol/openid-connect/auth`.
    pub authorization_url: String,
    /// `{issuer}/protocol/openid-connect/token`.
    pub token_url: String,
    /// The API description's security scheme of the environment, if it has one.
    pub security_scheme: Option<&'static str>,
}

/// The security scheme of production.
pub const LIVE_SCHEME: &str = "identityProviderAuthLive";
/// The security scheme of the test environment.
pub const TEST_SCHEME: &str = "identityProviderAuthTest";

/// The issuer of `scheme` in the API description: its authorization code flow's
/// `authorizationUrl` without `/protocol/openid-connect/auth`, as the generator wrote it.
fn described_issuer(scheme: &str) -> Result<String, Error> {
    let issuer = SECURITY_SCHEME_ISSUERS
        .iter()
        .find(|(name, _)| *name == scheme)
        .ok_or_else(|| {
            Error::Config(format!(
                "the API description has no authorization code flow in security scheme {scheme}: \
                 set CREDITDATA_ISSUER"
            ))
        })?
        .1;
    issuer.map(str::to_string).ok_or_else(|| {
        Error::Config(format!(
            "the authorization URL of security scheme {scheme} is not of an OpenID Connect \
             issuer ({{issuer}}/protocol/openid-connect/auth): set CREDITDATA_ISSUER"
        ))
    })
}

fn validate_base_url(url: &str) -> Result<String, Error> {
    let parsed = validate_url("the base URL", url).map_err(Error::Config)?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Config(format!(
            "base URL {url:?} must use http or https"
        )));
    }
    // The generated paths start with `/v1`; a trailing slash would double it.
    Ok(url.trim().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environments_parse_and_custom_urls_are_validated() {
        assert_eq!(
            "Production".parse::<Environment>().unwrap(),
            Environment::Production
        );
        assert_eq!(" mock ".parse::<Environment>().unwrap(), Environment::Mock);
        assert_eq!(
            "https://api.example.test".parse::<Environment>().unwrap(),
            Environment::Custom("https://api.example.test".into())
        );
        assert_eq!(
            Environment::Custom("http://127.0.0.1:1/".into())
                .base_url()
                .unwrap(),
            "http://127.0.0.1:1"
        );
        let err = "staging".parse::<Environment>().unwrap_err().to_string();
        assert!(err.contains("unknown environment \"staging\""), "{err}");
        let err = Environment::Custom("ftp://x".into())
            .base_url()
            .unwrap_err()
            .to_string();
        assert!(err.contains("must use http or https"), "{err}");
    }

    #[test]
    fn environments_carry_the_identity_provider_of_their_security_scheme() {
        // Written by the generator from the effective description, not here: its issuers are
        // the authorization URLs' stems.
        assert_eq!(
            described_issuer(LIVE_SCHEME).unwrap(),
            "https://login.consumer-api.invalid/realms/consumer-live"
        );
        assert_eq!(
            described_issuer(TEST_SCHEME).unwrap(),
            "https://login.consumer-api.invalid/realms/consumer-test"
        );
        // The vendored addresses are placeholders: refused, naming what to set.
        for (environment, scheme, variable) in [
            (
                Environment::Production,
                LIVE_SCHEME,
                "CREDITDATA_PRODUCTION_ISSUER",
            ),
            (Environment::Test, TEST_SCHEME, "CREDITDATA_TEST_ISSUER"),
        ] {
            let error = environment
                .identity_provider_with(|_| None)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(scheme) && error.contains(variable),
                "{error}"
            );
            let urls = environment
                .identity_provider_with(|name| {
                    (name == variable).then(|| "https://login.bank.test/realms/r/".to_string())
                })
                .unwrap();
            assert_eq!(urls.issuer, "https://login.bank.test/realms/r");
            assert_eq!(urls.security_scheme, Some(scheme));
        }
        let mock = Environment::Mock
            .identity_provider_with(|name| {
                (name == "CREDITDATA_MOCK_URL").then(|| "http://127.0.0.1:9999".to_string())
            })
            .unwrap();
        assert_eq!(mock.issuer, "http://127.0.0.1:9999/realms/consumer");
        assert_eq!(
            mock.token_url,
            "http://127.0.0.1:9999/realms/consumer/protocol/openid-connect/token"
        );
        // CREDITDATA_ISSUER wins everywhere, and passes the identity provider's URL rules.
        let everywhere = |name: &str| {
            (name == "CREDITDATA_ISSUER").then(|| "http://login.bank.test/realms/r".to_string())
        };
        let error = Environment::Mock
            .identity_provider_with(everywhere)
            .unwrap_err()
            .to_string();
        assert!(error.contains("plain http"), "{error}");
        assert!(
            Environment::Custom("https://api.bank.test".into())
                .identity_provider_with(|_| None)
                .unwrap_err()
                .to_string()
                .contains("CREDITDATA_ISSUER")
        );
    }
}
