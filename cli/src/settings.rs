//! From global options and environment variables to a [`Client`].
//!
//! The variables are read by [`ClientBuilder::from_env_with`], exactly as any program using the
//! client reads them; the options are layered over them by answering the lookup for the
//! variable an option stands for. An option wins over its variable, and over the variables it
//! makes irrelevant: `--environment` hides `CREDITDATA_BASE_URL`, `--issuer` hides
//! `CREDITDATA_TOKEN_URL`, and any client-credentials option hides `CREDITDATA_TOKEN` (which
//! would otherwise win over client credentials).
//!
//! The profile's sign-in is context too: who a person signs in with ([`target`]), and the
//! stored sign-in as a command's credentials ([`stored_credentials`]).

use std::path::Path;
use std::time::Duration;

use clap::ValueEnum as _;

use std::sync::Arc;

use creditdata_client::auth::Credentials;
use creditdata_client::sign_in::{
    CLI_CLIENT_ID, DEFAULT_SCOPES, IdentityProvider, SignedInCredentials, StoredSignIn, TokenStore,
    TokenStoreError, TokenStoreErrorKind, TokenStoreLock,
};
use creditdata_client::{Client, ClientBuilder, Environment};

use crate::cli::GlobalArgs;
use crate::failure::Failure;
use crate::profile::{
    Config, ConfigDir, DEFAULT_PROFILE, PROFILE_VAR, Profile, TokenStoreKind, check_profile_name,
};
use crate::token_store::{Opened, Requested, Store, StoreError, open};

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
    if !has_credentials && let Some(signed_in) = stored_credentials(global, &env, &context)? {
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

// The profile's sign-in: where a person signs in, and what a command reads back. Commands
// (`login`, `logout`, `auth`) use it; it depends on no command.

/// Who to sign in with and where the service is, resolved from options, variables, profile
/// and defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInTarget {
    /// Where the service is.
    pub location: ServiceLocation,
    /// How the environment is named to the person (`mock`, `test`, `production` or the URL).
    pub environment: String,
    /// The issuer.
    pub issuer: String,
    /// The public client id.
    pub client_id: String,
    /// The scopes to ask for.
    pub scopes: Vec<String>,
    /// The profile's `prompt`, when it applies.
    pub prompt: Option<String>,
    /// The origin (`scheme://host[:port]`) of the service's base URL, when it is known: what a
    /// sign-in is recorded for, and the only place its token goes.
    pub api_origin: Option<String>,
}

/// Resolves the [`SignInTarget`]: `--issuer`, else `CREDITDATA_ISSUER`, else the profile's
/// issuer (only when the profile also says where the service is, or nothing does: a profile's
/// issuer must not be paired with another environment), else the environment's own identity
/// provider. The client id is `--client-id` (for `login`), else the profile's, else
/// `creditdata-cli`; `CREDITDATA_CLIENT_ID` is the client-credentials id and is not used here.
pub fn target(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    profile: &Profile,
    use_client_id_option: bool,
) -> Result<SignInTarget, Failure> {
    let location = service_location(global, env, profile);
    let environment_setting = location.environment.clone().unwrap_or("mock".into());
    let environment = match &location.base_url {
        Some(url) => Environment::Custom(url.clone()),
        None => environment_setting
            .parse::<Environment>()
            .map_err(|e| Failure::Usage(e.to_string()))?,
    };
    let label = match &environment {
        Environment::Production => "production".to_string(),
        Environment::Test => "test".to_string(),
        Environment::Mock => "mock".to_string(),
        Environment::Custom(url) => url.trim_end_matches('/').to_string(),
    };
    let profile_applies = matches!(location.layer, Layer::Profile | Layer::Default);
    let issuer = global
        .issuer
        .clone()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| env("CREDITDATA_ISSUER").filter(|v| !v.trim().is_empty()))
        .or_else(|| profile_applies.then(|| profile.issuer.clone()).flatten())
        .map(Ok)
        .unwrap_or_else(|| default_issuer(&environment, env))?;
    let client_id = use_client_id_option
        .then(|| global.client_id.clone())
        .flatten()
        .or_else(|| profile_applies.then(|| profile.client_id.clone()).flatten())
        .unwrap_or_else(|| CLI_CLIENT_ID.to_string());
    let scopes = profile
        .scopes
        .clone()
        .filter(|_| profile_applies)
        .unwrap_or_else(|| DEFAULT_SCOPES.iter().map(|s| s.to_string()).collect());
    let api_origin = environment
        .base_url_with(env)
        .ok()
        .and_then(|url| url::Url::parse(&url).ok())
        .map(|url| url.origin().ascii_serialization());
    Ok(SignInTarget {
        api_origin,
        prompt: profile.prompt.clone().filter(|_| profile_applies),
        location,
        environment: label,
        issuer: issuer.trim().trim_end_matches('/').to_string(),
        client_id,
        scopes,
    })
}

/// The identity provider an environment comes with (the client's: the description's security
/// schemes, `CREDITDATA_PRODUCTION_ISSUER` / `CREDITDATA_TEST_ISSUER`, the mock's realm).
fn default_issuer(
    environment: &Environment,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Failure> {
    environment
        .identity_provider_with(env)
        .map(|urls| urls.issuer)
        .map_err(|e| {
            Failure::Usage(format!(
                "{e} (or give the issuer with --issuer; `creditdata login` records it in the profile)"
            ))
        })
}

/// The client's token store over ours: the stored sign-in as JSON text.
pub(crate) struct ProfileStore {
    pub(crate) store: Store,
}

impl TokenStore for ProfileStore {
    fn load(&self) -> Result<Option<StoredSignIn>, TokenStoreError> {
        let Some(text) = self.store.load_text().map_err(unavailable)? else {
            return Ok(None);
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            // serde_json's message can quote the content; only the position is shown.
            TokenStoreError::new(
                TokenStoreErrorKind::Corrupt,
                format!(
                    "the sign-in kept in the {} cannot be read (at line {}, column {}); run `creditdata logout` and `creditdata login`",
                    self.store.describe(),
                    e.line(),
                    e.column()
                ),
                None,
            )
        })
    }

    fn save(&self, signed_in: &StoredSignIn) -> Result<(), TokenStoreError> {
        let text = serde_json::to_string(signed_in).map_err(|_| {
            TokenStoreError::new(
                TokenStoreErrorKind::Other,
                "cannot write the sign-in as JSON",
                None,
            )
        })?;
        self.store.save_text(&text).map_err(unavailable)
    }

    fn clear(&self) -> Result<(), TokenStoreError> {
        self.store.clear().map_err(unavailable)
    }

    fn lock(&self) -> Result<TokenStoreLock, TokenStoreError> {
        self.store
            .lock()
            .map(TokenStoreLock::new)
            .map_err(unavailable)
    }
}

fn unavailable(error: StoreError) -> TokenStoreError {
    TokenStoreError::new(TokenStoreErrorKind::Unavailable, error.0, None)
}

/// A store that cannot be opened or refuses what it holds: nothing was sent, the person has a
/// setting or a file to fix.
pub(crate) fn store_failure(error: StoreError) -> Failure {
    Failure::Usage(error.0)
}

pub(crate) fn token_store_failure(error: TokenStoreError) -> Failure {
    Failure::Usage(error.message)
}

/// The profile's store for reading: the one asked for, else the keyring where one works, else
/// the file (quietly: nothing is written).
pub(crate) fn open_for_reading(context: &Context) -> Result<Arc<ProfileStore>, Failure> {
    let Opened { store, .. } =
        open(context.store, context.config()?, &context.profile_name).map_err(store_failure)?;
    Ok(Arc::new(ProfileStore { store }))
}

/// The profile's sign-in as credentials, for a command run without client credentials or a
/// token. `None` when no one is signed in with the profile.
pub fn stored_credentials(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    context: &Context,
) -> Result<Option<Credentials>, Failure> {
    if !context.has_config() {
        return Ok(None);
    }
    let store = open_for_reading(context)?;
    let Some(stored) = store.load().map_err(token_store_failure)? else {
        return Ok(None);
    };
    let target = target(global, env, &context.profile, false)?;
    // Tokens go only where they were issued for: a sign-in at one identity provider is not
    // sent to the service of another environment.
    if stored.issuer != target.issuer {
        return Err(Failure::Usage(format!(
            "the sign-in of profile {:?} is for the identity provider {}, but this command goes to {} (identity provider {}); use the profile's environment, another --profile, or `creditdata login` for this one",
            context.profile_name, stored.issuer, target.environment, target.issuer
        )));
    }
    // ...nor to another service of the same provider: a changed `base_url` line or variable
    // must not carry the person's live token to a host they never signed in for.
    match (&stored.api_origin, &target.api_origin) {
        (Some(recorded), Some(here)) if recorded == here => {}
        (Some(recorded), here) => {
            return Err(Failure::Auth(format!(
                "the sign-in of profile {:?} was made for the service at {recorded}, but this command goes to {}: the token is not sent there; run `creditdata login` to sign in for that service",
                context.profile_name,
                here.as_deref().unwrap_or("an unknown address")
            )));
        }
        (None, _) => {
            return Err(Failure::Auth(format!(
                "the sign-in of profile {:?} does not record which service it is for (it predates that record), so its token is not sent anywhere; run `creditdata login` again",
                context.profile_name
            )));
        }
    }
    let provider = IdentityProvider::new(stored.issuer.clone(), stored.client_id.clone())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(Some(Credentials::SignedIn(SignedInCredentials::new(
        store, provider,
    ))))
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

#[cfg(test)]
mod sign_in_target {
    use super::*;
    use crate::test_support::{env, global};

    fn work() -> Profile {
        Profile {
            environment: Some("test".into()),
            issuer: Some("https://login.bank.example/realms/test".into()),
            client_id: Some("bank-cli".into()),
            scopes: Some(vec!["openid".into()]),
            ..Profile::default()
        }
    }

    #[test]
    fn the_issuer_comes_from_option_then_variable_then_profile_then_environment() {
        let vars = [("CREDITDATA_ISSUER", "https://env.example/realms/x")];
        let t = target(
            &global(&["--issuer", "https://flag.example/r"]),
            &env(&vars),
            &work(),
            true,
        )
        .unwrap();
        assert_eq!(t.issuer, "https://flag.example/r");
        let t = target(&global(&[]), &env(&vars), &work(), true).unwrap();
        assert_eq!(t.issuer, "https://env.example/realms/x");
        let t = target(&global(&[]), &env(&[]), &work(), true).unwrap();
        assert_eq!(t.issuer, "https://login.bank.example/realms/test");
        assert_eq!(
            (t.environment.as_str(), t.client_id.as_str()),
            ("test", "bank-cli")
        );
        let t = target(
            &global(&[]),
            &env(&[("CREDITDATA_MOCK_URL", "http://127.0.0.1:9999/")]),
            &Profile::default(),
            true,
        )
        .unwrap();
        assert_eq!(t.issuer, "http://127.0.0.1:9999/realms/consumer");
        assert_eq!(
            (t.environment.as_str(), t.client_id.as_str()),
            ("mock", CLI_CLIENT_ID)
        );
        assert_eq!(t.scopes, ["openid", "profile"]);
    }

    #[test]
    fn a_profile_issuer_is_not_paired_with_another_environment() {
        // The person points this run at the mock: the profile's test-environment issuer and
        // client must not come along.
        let t = target(
            &global(&["--environment", "mock"]),
            &env(&[]),
            &work(),
            true,
        )
        .unwrap();
        assert_eq!(t.issuer, "http://127.0.0.1:8080/realms/consumer");
        assert_eq!(t.client_id, CLI_CLIENT_ID);
        // Production with no known identity provider says what to set.
        let err = target(
            &global(&["--environment", "production"]),
            &env(&[]),
            &work(),
            true,
        )
        .unwrap_err();
        let message = err.message().unwrap();
        assert!(
            message.contains("CREDITDATA_PRODUCTION_ISSUER") && message.contains("--issuer"),
            "{message}"
        );
        // --client-id names the sign-in client only for `login`.
        let t = target(
            &global(&["--client-id", "other"]),
            &env(&[]),
            &work(),
            false,
        )
        .unwrap();
        assert_eq!(t.client_id, "bank-cli");
    }
}
