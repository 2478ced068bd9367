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

use clap::ValueEnum as _;

use creditdata_client::{Client, ClientBuilder};

use crate::cli::GlobalArgs;
use crate::failure::Failure;
use crate::profile::{
    Config, ConfigDir, DEFAULT_PROFILE, PROFILE_VAR, Profile, TokenStoreKind, check_profile_name,
};
use crate::token_store::Requested;

/// The variable naming the token store.
pub const TOKEN_STORE_VAR: &str = "CREDITDATA_TOKEN_STORE";

/// A built client and what the diagnosis of a failure needs to know about its configuration.
pub struct Connection {
    /// The client.
    pub client: Client,
    /// Whether any credentials were configured.
    pub has_credentials: bool,
}

/// Which layer said where the service is: the first of option, variable, profile that names a
/// base URL or an environment (within a layer the base URL wins), else the default (the mock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceLocation {
    /// The base URL, when the deciding layer gave one.
    pub base_url: Option<String>,
    /// The environment name (`production`, `test`, `mock` or a URL), when no base URL was given.
    pub environment: Option<String>,
    /// Which layer decided.
    pub layer: Layer,
}

/// Where a setting came from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// A command-line option.
    Option,
    /// A `CREDITDATA_*` variable.
    Variable,
    /// The profile in the configuration file.
    Profile,
    /// Nothing said anything.
    Default,
}

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// Where the service is (see [`ServiceLocation`]).
pub fn service_location(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    profile: &Profile,
) -> ServiceLocation {
    let layer = |base_url: Option<String>, environment: Option<String>, layer: Layer| {
        (base_url.is_some() || environment.is_some()).then(|| ServiceLocation {
            environment: if base_url.is_some() {
                None
            } else {
                environment
            },
            base_url,
            layer,
        })
    };
    layer(
        non_empty(global.base_url.clone()),
        non_empty(global.environment.clone()),
        Layer::Option,
    )
    .or_else(|| {
        layer(
            non_empty(env("CREDITDATA_BASE_URL")),
            non_empty(env("CREDITDATA_ENVIRONMENT")),
            Layer::Variable,
        )
    })
    .or_else(|| {
        layer(
            profile.base_url.clone(),
            profile.environment.clone(),
            Layer::Profile,
        )
    })
    .unwrap_or(ServiceLocation {
        base_url: None,
        environment: None,
        layer: Layer::Default,
    })
}

/// The value of one configuration variable: options first, then the variable, then (for where
/// the service is) the profile.
fn lookup(
    global: &GlobalArgs,
    secret: Option<&str>,
    token: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    location: &ServiceLocation,
    name: &str,
) -> Option<String> {
    let flag = |v: &Option<String>| v.clone();
    match name {
        "CREDITDATA_BASE_URL" => location.base_url.clone(),
        // The client library refuses to guess; the command keeps the mock for newcomers and
        // says so ([`IMPLICIT_MOCK_NOTE`]).
        "CREDITDATA_ENVIRONMENT" if location.layer == Layer::Default => Some("mock".into()),
        "CREDITDATA_ENVIRONMENT" => location.environment.clone(),
        "CREDITDATA_TOKEN_URL" => match (&global.token_url, &global.issuer) {
            (Some(url), _) => Some(url.clone()),
            (None, Some(_)) => None,
            (None, None) => env(name),
        },
        "CREDITDATA_ISSUER" => {
            // Without a client id or secret, the issuer is the one people sign in with, not
            // a half of client credentials.
            let client_credentials = global.client_id.is_some()
                || secret.is_some()
                || non_empty(env("CREDITDATA_CLIENT_ID")).is_some()
                || non_empty(env("CREDITDATA_CLIENT_SECRET")).is_some();
            if client_credentials {
                flag(&global.issuer).or_else(|| env(name))
            } else {
                None
            }
        }
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

/// The one line on stderr when nothing said where the service is and the command falls back to
/// the local mock: a command that worked would otherwise look as if it had reached the service.
pub const IMPLICIT_MOCK_NOTE: &str = "creditdata: no environment configured, using the local mock \
    (CREDITDATA_MOCK_URL, else http://127.0.0.1:8080); choose one with --environment, \
    --base-url, CREDITDATA_ENVIRONMENT, CREDITDATA_BASE_URL or the profile";

/// [`IMPLICIT_MOCK_NOTE`] when `location` is the fallback.
pub fn implicit_mock_note(location: &ServiceLocation) -> Option<&'static str> {
    (location.layer == Layer::Default).then_some(IMPLICIT_MOCK_NOTE)
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
    profile: &Profile,
) -> Result<(ClientBuilder, bool), Failure> {
    let location = service_location(global, env, profile);
    if let Some(note) = implicit_mock_note(&location) {
        crate::terminal::note(note);
    }
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
    let read = |name: &str| {
        lookup(
            global,
            secret.as_deref(),
            token.as_deref(),
            env,
            &location,
            name,
        )
    };
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

/// The profile in effect and where its files are.
#[derive(Debug)]
pub struct Context {
    /// The configuration directory: `Err` (why not) when there is none (no home directory and
    /// no `CREDITDATA_CONFIG`: a container, a service account). Commands with client
    /// credentials or a token work without one.
    config: Result<ConfigDir, String>,
    /// The profile's name.
    pub profile_name: String,
    /// Whether the profile was named (option or variable) rather than the default.
    pub profile_named: bool,
    /// The profile's settings (empty when the file does not have it).
    pub profile: Profile,
    /// Whether the configuration file has the profile.
    pub profile_exists: bool,
    /// Which token store was asked for.
    pub store: Requested,
}

impl Context {
    /// The profile (`--profile`, else `CREDITDATA_PROFILE`, else `default`) read from the
    /// configuration file, and the token store asked for (`--token-store`, else
    /// `CREDITDATA_TOKEN_STORE`, else the profile's, else the default).
    pub fn read(
        global: &GlobalArgs,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Context, Failure> {
        let config = ConfigDir::locate(env).map_err(|f| f.message().unwrap_or_default());
        let (profile_name, profile_named) = match global
            .profile
            .clone()
            .or_else(|| non_empty(env(PROFILE_VAR)))
        {
            Some(name) => (name.trim().to_string(), true),
            None => (DEFAULT_PROFILE.to_string(), false),
        };
        check_profile_name(&profile_name).map_err(Failure::Usage)?;
        let file = match &config {
            Ok(dir) => Config::load(&dir.config_file())?,
            Err(why) if profile_named => return Err(Failure::Usage(why.clone())),
            Err(_) => Config::default(),
        };
        let (profile, profile_exists) = match file.profile(&profile_name) {
            Some(profile) => (profile.clone(), true),
            None => (Profile::default(), false),
        };
        let from_variable = non_empty(env(TOKEN_STORE_VAR))
            .map(|value| {
                TokenStoreKind::from_str(value.trim(), true).map_err(|_| {
                    Failure::Usage(format!("{TOKEN_STORE_VAR}={value:?}: use keyring or file"))
                })
            })
            .transpose()?;
        let store = match global.token_store.or(from_variable).or(profile.token_store) {
            Some(kind) => Requested::Explicitly(kind),
            None => Requested::Default,
        };
        Ok(Context {
            config,
            profile_name,
            profile_named,
            profile,
            profile_exists,
            store,
        })
    }

    /// The configuration directory, or why there is none.
    pub fn config(&self) -> Result<&ConfigDir, Failure> {
        self.config
            .as_ref()
            .map_err(|why| Failure::Usage(why.clone()))
    }

    /// Whether there is a configuration directory (and so possibly a stored sign-in).
    pub fn has_config(&self) -> bool {
        self.config.is_ok()
    }

    /// Refuses a profile named on purpose that the file does not have (a typo would otherwise
    /// run against the default environment).
    pub fn require_profile(&self) -> Result<(), Failure> {
        if self.profile_named && !self.profile_exists {
            return Err(Failure::Usage(format!(
                "there is no profile {:?} in {}: create it with `creditdata login --profile {}` (or add [profiles.{}] to the file)",
                self.profile_name,
                self.config()?.config_file().display(),
                self.profile_name,
                self.profile_name
            )));
        }
        Ok(())
    }
}

/// Builds the client from the options, the process environment and the profile: client
/// credentials or a token when configured, else the profile's sign-in when there is one.
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
    let context = Context::read(global, &env)?;
    context.require_profile()?;
    let (mut builder, mut has_credentials) = builder(global, &env, &context.profile)?;
    if !has_credentials
        && let Some(signed_in) = crate::sign_in::stored_credentials(global, &env, &context)?
    {
        builder = builder.credentials(signed_in);
        has_credentials = true;
    }
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
    use crate::test_support::{env, global};

    fn shown(args: &[&str], vars: &[(&str, &str)]) -> String {
        let (builder, _) = builder(&global(args), &env(vars), &Profile::default()).unwrap();
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
            &Profile::default(),
        )
        .err()
        .unwrap();
        assert!(
            matches!(&err, Failure::Usage(m) if m.contains("is empty")),
            "{err:?}"
        );
    }

    #[test]
    fn nothing_configured_is_the_mock_with_a_note_and_anything_configured_is_not() {
        let nothing = service_location(&global(&[]), &env(&[]), &Profile::default());
        assert_eq!(implicit_mock_note(&nothing), Some(IMPLICIT_MOCK_NOTE));
        assert!(shown(&[], &[]).contains("environment: Mock"));
        let profile = Profile {
            environment: Some("test".into()),
            ..Profile::default()
        };
        for (args, vars, profile) in [
            (&["--environment", "mock"][..], &[][..], Profile::default()),
            (
                &[][..],
                &[("CREDITDATA_BASE_URL", "http://127.0.0.1:9")][..],
                Profile::default(),
            ),
            (&[][..], &[][..], profile),
        ] {
            let location = service_location(&global(args), &env(vars), &profile);
            assert_eq!(implicit_mock_note(&location), None, "{location:?}");
        }
        assert!(!IMPLICIT_MOCK_NOTE.contains('\n'));
    }

    #[test]
    fn configuration_mistakes_are_usage_errors() {
        let err = builder(
            &global(&["--environment", "staging"]),
            &env(&[]),
            &Profile::default(),
        )
        .err()
        .unwrap();
        assert!(
            matches!(&err, Failure::Usage(m) if m.contains("unknown environment")),
            "{err:?}"
        );
        let err = builder(
            &global(&["--client-id", "me"]),
            &env(&[]),
            &Profile::default(),
        )
        .err()
        .unwrap();
        assert!(matches!(err, Failure::Usage(_)));
    }
}
