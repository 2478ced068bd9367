//! From global options and environment variables to a [`Client`].
//!
//! The variables are read by [`ClientBuilder::from_env_with`], exactly as any program using the
//! client reads them; the options are layered over them by answering the lookup for the
//! variable an option stands for. An option wins over its variable, and over the variables it
//! makes irrelevant: `--environment` hides `CREDITDATA_BASE_URL`, `--issuer` hides
//! `CREDITDATA_TOKEN_URL`, and any client-credentials option hides `CREDITDATA_TOKEN` (which
//! would otherwise win over client credentials).

use std::path::Path;
use std::time::Duration;

use creditdata_client::{Client, ClientBuilder};

use crate::cli::GlobalArgs;
use crate::failure::Failure;

/// A built client and what the diagnosis of a failure needs to know about its configuration.
pub struct Connection {
    /// The client.
    pub client: Client,
    /// Whether any credentials were configured.
    pub has_credentials: bool,
}

/// The value of one configuration variable, options first.
fn lookup(
    global: &GlobalArgs,
    secret: Option<&str>,
    token: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
) -> Option<String> {
    let flag = |v: &Option<String>| v.clone();
    match name {
        "CREDITDATA_BASE_URL" => match (&global.base_url, &global.environment) {
            (Some(url), _) => Some(url.clone()),
            (None, Some(_)) => None,
            (None, None) => env(name),
        },
        "CREDITDATA_ENVIRONMENT" => flag(&global.environment).or_else(|| env(name)),
        "CREDITDATA_TOKEN_URL" => match (&global.token_url, &global.issuer) {
            (Some(url), _) => Some(url.clone()),
            (None, Some(_)) => None,
            (None, None) => env(name),
        },
        "CREDITDATA_ISSUER" => flag(&global.issuer).or_else(|| env(name)),
        "CREDITDATA_CLIENT_ID" => flag(&global.client_id).or_else(|| env(name)),
        "CREDITDATA_CLIENT_SECRET" => secret.map(str::to_string).or_else(|| env(name)),
        "CREDITDATA_TOKEN" => {
            let wants_client_credentials = global.client_id.is_some()
                || global.client_secret_file.is_some()
                || global.token_url.is_some()
                || global.issuer.is_some();
            match token {
                Some(token) => Some(token.to_string()),
                None if wants_client_credentials => None,
                None => env(name),
            }
        }
        _ => env(name),
    }
}

/// Reads a secret from a file: surrounding whitespace (the final newline) removed. Errors name
/// the file, never its content.
fn read_secret(path: &Path, what: &str) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::Usage(format!(
            "cannot read the {what} from {}: {e}",
            path.display()
        ))
    })?;
    let text = text.trim();
    if text.is_empty() {
        return Err(Failure::Usage(format!(
            "the {what} file {} is empty",
            path.display()
        )));
    }
    Ok(text.to_string())
}

/// The builder the options and the environment describe (`env` reads a variable).
pub fn builder(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(ClientBuilder, bool), Failure> {
    let secret = global
        .client_secret_file
        .as_deref()
        .map(|p| read_secret(p, "client secret"))
        .transpose()?;
    let token = global
        .token_file
        .as_deref()
        .map(|p| read_secret(p, "token"))
        .transpose()?;
    let read = |name: &str| lookup(global, secret.as_deref(), token.as_deref(), env, name);
    let has_credentials = read("CREDITDATA_TOKEN")
        .or_else(|| read("CREDITDATA_CLIENT_ID"))
        .is_some_and(|v| !v.trim().is_empty());
    let mut builder =
        ClientBuilder::from_env_with(read).map_err(|e| Failure::Usage(e.to_string()))?;
    builder = builder.user_agent(concat!("creditdata-cli/", env!("CARGO_PKG_VERSION")));
    if global.no_retries {
        builder = builder.no_retries();
    }
    if let Some(seconds) = global.request_timeout {
        let timeout = (seconds > 0).then(|| Duration::from_secs(seconds));
        builder = builder.request_timeout(timeout);
    }
    Ok((builder, has_credentials))
}

/// Builds the client from the options and the process environment.
pub fn connect(global: &GlobalArgs) -> Result<Connection, Failure> {
    connect_with(global, |builder| builder)
}

/// Like [`connect`], with a command's own settings (e.g. `export --rate-limit`) applied last, so
/// that they win over the environment.
pub fn connect_with(
    global: &GlobalArgs,
    command_settings: impl FnOnce(ClientBuilder) -> ClientBuilder,
) -> Result<Connection, Failure> {
    let env = |name: &str| std::env::var(name).ok();
    let (builder, has_credentials) = builder(global, &env)?;
    let builder = command_settings(builder);
    tracing::debug!(?builder, "client configuration");
    let client = builder.build().map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(Connection {
        client,
        has_credentials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;
    use std::collections::HashMap;

    fn global(args: &[&str]) -> GlobalArgs {
        let mut argv = vec!["creditdata"];
        argv.extend_from_slice(args);
        argv.push("operations");
        Cli::try_parse_from(argv).unwrap().global
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn shown(args: &[&str], vars: &[(&str, &str)]) -> String {
        let (builder, _) = builder(&global(args), &env(vars)).unwrap();
        format!("{builder:?}")
    }

    #[test]
    fn options_win_over_variables() {
        let vars = [
            ("CREDITDATA_BASE_URL", "http://env.example"),
            ("CREDITDATA_TOKEN", "env-token-value"),
        ];
        let text = shown(&["--base-url", "http://flag.example"], &vars);
        assert!(
            text.contains("http://flag.example") && !text.contains("env.example"),
            "{text}"
        );
        let text = shown(&["--environment", "test"], &vars);
        assert!(text.contains("environment: Test"), "{text}");
        // A client-credentials option hides the environment's static token.
        let text = shown(
            &[
                "--token-url",
                "http://idp.example/token",
                "--client-id",
                "me",
            ],
            &[
                ("CREDITDATA_TOKEN", "env-token-value"),
                ("CREDITDATA_CLIENT_SECRET", "s3cret-value"),
            ],
        );
        assert!(
            text.contains("ClientCredentials") && text.contains("\"me\""),
            "{text}"
        );
        assert!(
            !text.contains("s3cret-value") && !text.contains("env-token-value"),
            "{text}"
        );
    }

    #[test]
    fn secrets_come_from_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, "file-secret\n").unwrap();
        let path = path.to_str().unwrap();
        let text = shown(
            &[
                "--issuer",
                "http://idp.example",
                "--client-id",
                "me",
                "--client-secret-file",
                path,
            ],
            &[("CREDITDATA_TOKEN_URL", "http://other.example/token")],
        );
        assert!(text.contains("Issuer(\"http://idp.example\")"), "{text}");
        assert!(!text.contains("file-secret"), "{text}");

        let empty = dir.path().join("empty");
        std::fs::write(&empty, " \n").unwrap();
        let err = builder(
            &global(&["--token-file", empty.to_str().unwrap()]),
            &env(&[]),
        )
        .err()
        .unwrap();
        assert!(
            matches!(&err, Failure::Usage(m) if m.contains("is empty")),
            "{err:?}"
        );
    }

    #[test]
    fn configuration_mistakes_are_usage_errors() {
        let err = builder(&global(&["--environment", "staging"]), &env(&[]))
            .err()
            .unwrap();
        assert!(
            matches!(&err, Failure::Usage(m) if m.contains("unknown environment")),
            "{err:?}"
        );
        let err = builder(&global(&["--client-id", "me"]), &env(&[]))
            .err()
            .unwrap();
        assert!(matches!(err, Failure::Usage(_)));
    }
}
