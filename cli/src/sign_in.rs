//! `login`, `logout`, `auth status`, `auth token`, and the profile's sign-in as the
//! credentials of every other command.
//!
//! Like `gh auth login` and `gcloud auth login`: the system browser signs the person in
//! (Authorization Code with PKCE, the answer coming back to a port on 127.0.0.1), the tokens go
//! to the system keyring (or an owner-only file), and the profile records where the service and
//! its identity provider are, so that later commands need no options.

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, SecondsFormat, Utc};
use creditdata_client::Environment;
use creditdata_client::auth::Credentials;
use creditdata_client::error::DisplayChain;
use creditdata_client::sign_in::{
    CLI_CLIENT_ID, DEFAULT_SCOPES, IdentityProvider, SignIn, SignInError, SignInOptions,
    SignedInCredentials, StoredSignIn, TokenStore, TokenStoreError, TokenStoreErrorKind, sign_out,
};
use secrecy::{ExposeSecret as _, SecretString};
use serde::Serialize;

use crate::cli::{AuthCommand, GlobalArgs, LoginArgs};
use crate::failure::Failure;
use crate::output::Output;
use crate::profile::{Profile, record};
use crate::settings::{Context, Layer, ServiceLocation, service_location};
use crate::terminal::{note, one_line};
use crate::token_store::{Opened, Store, StoreError, open};

/// An access token with less than this left is renewed before `auth token` prints it: a script
/// should have time to use it.
const PRINT_MARGIN: Duration = Duration::from_secs(60);

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
    Ok(SignInTarget {
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
struct ProfileStore {
    store: Store,
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
}

fn unavailable(error: StoreError) -> TokenStoreError {
    TokenStoreError::new(TokenStoreErrorKind::Unavailable, error.0, None)
}

/// A store that cannot be opened or refuses what it holds: nothing was sent, the person has a
/// setting or a file to fix.
fn store_failure(error: StoreError) -> Failure {
    Failure::Usage(error.0)
}

fn token_store_failure(error: TokenStoreError) -> Failure {
    Failure::Usage(error.message)
}

/// The profile's store for reading: the one asked for, else the keyring where one works, else
/// the file (quietly: nothing is written).
fn open_for_reading(context: &Context) -> Result<Arc<ProfileStore>, Failure> {
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
    let provider = IdentityProvider::new(stored.issuer.clone(), stored.client_id.clone())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(Some(Credentials::SignedIn(SignedInCredentials::new(
        store, provider,
    ))))
}

/// What a failed sign-in means for the exit status.
fn sign_in_failure(error: SignInError) -> Failure {
    let text = one_line(&DisplayChain(&error).to_string());
    match &error {
        SignInError::Config(_) => Failure::Usage(text),
        SignInError::Listener(_) => Failure::Local(text),
        SignInError::Provider(auth) if auth.is_transient() => Failure::Local(text),
        SignInError::Authorization {
            description: Some(description),
            ..
        } => Failure::Auth(format!("{text}: {}", one_line(description))),
        _ => Failure::Auth(text),
    }
}

/// `creditdata login`.
pub async fn login(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    context: &Context,
    args: &LoginArgs,
) -> Result<(), Failure> {
    let target = target(global, env, &context.profile, true)?;
    let Opened {
        store,
        fallback_notice,
    } = open(context.store, context.config()?, &context.profile_name).map_err(store_failure)?;
    let kind = store.kind();
    let store = ProfileStore { store };
    let provider = IdentityProvider::new(target.issuer.clone(), target.client_id.clone())
        .map_err(sign_in_failure)?;
    let options = SignInOptions {
        scopes: target.scopes.clone(),
        timeout: args.timeout,
        ..SignInOptions::default()
    };
    let pending = SignIn::start(&provider, options)
        .await
        .map_err(sign_in_failure)?;
    let url = pending.authorization_url().to_string();
    note(&format!(
        "To sign in to {} (profile {}), open this address in a browser on this computer:\n\n  {url}\n",
        target.environment, context.profile_name
    ));
    if !args.no_browser
        && let Err(error) = webbrowser::open(&url)
    {
        note(&format!(
            "could not open a browser ({}); open the address above yourself",
            one_line(&error.to_string())
        ));
    }
    note(&format!(
        "Waiting for the sign-in to finish in the browser (up to {})...",
        humantime::format_duration(args.timeout)
    ));
    let signed_in = pending.finish().await.map_err(sign_in_failure)?;
    if let Some(notice) = fallback_notice {
        note(&format!("note: {notice}"));
    }
    // The sign-in this one replaces is ended below: a refresh token nobody keeps any more must
    // not stay valid at the provider. Unreadable is as good as none here.
    let previous = store.load().ok().flatten();
    if let Err(error) = store.save(&signed_in) {
        // Tokens nobody keeps should not stay valid at the provider.
        let _ = sign_out(&provider, &signed_in).await;
        return Err(Failure::Local(format!(
            "signed in, but the sign-in could not be kept, so it was ended again: {}",
            error.message
        )));
    }
    let recorded = Profile {
        environment: target.location.environment.clone(),
        base_url: target.location.base_url.clone(),
        issuer: Some(target.issuer.clone()),
        client_id: Some(target.client_id.clone()),
        scopes: Some(target.scopes.clone()),
        token_store: Some(kind),
    };
    record(context.config()?, &context.profile_name, &recorded).map_err(|f| {
        Failure::Local(format!(
            "signed in, but the profile could not be recorded: {}",
            f.message().unwrap_or_default()
        ))
    })?;
    if let Some(previous) = previous {
        let ended = match IdentityProvider::new(previous.issuer.clone(), previous.client_id.clone())
        {
            Ok(provider) => sign_out(&provider, &previous).await,
            Err(error) => Err(error),
        };
        if let Err(error) = ended {
            note(&format!(
                "warning: the previous sign-in of profile {} could not be revoked at {} ({}); it ends when its refresh token expires",
                context.profile_name,
                previous.issuer,
                one_line(&DisplayChain(&error).to_string())
            ));
        }
    }
    let user = signed_in.user();
    let who = match (&user.name, &user.username) {
        (Some(name), Some(username)) => format!("{name} ({username})"),
        _ => user.display_name().to_string(),
    };
    note(&format!("Signed in to {} as {who}", target.environment));
    Ok(())
}

/// `creditdata logout`: revokes at the identity provider, then forgets. Idempotent.
pub async fn logout(context: &Context) -> Result<(), Failure> {
    let store = open_for_reading(context)?;
    let stored = match store.load() {
        Ok(stored) => stored,
        Err(error) if error.kind == TokenStoreErrorKind::Corrupt => {
            store.clear().map_err(token_store_failure)?;
            note(&format!(
                "The unreadable sign-in of profile {} was removed.",
                context.profile_name
            ));
            return Ok(());
        }
        Err(error) => return Err(token_store_failure(error)),
    };
    let Some(stored) = stored else {
        note(&format!(
            "Not signed in with profile {}: nothing to do.",
            context.profile_name
        ));
        return Ok(());
    };
    // Revoked where it was issued, whatever the options say now.
    let revoked = match IdentityProvider::new(stored.issuer.clone(), stored.client_id.clone()) {
        Ok(provider) => sign_out(&provider, &stored).await,
        Err(error) => Err(error),
    };
    store.clear().map_err(token_store_failure)?;
    match revoked {
        Ok(()) => {
            note(&format!(
                "Signed out of {} (profile {}).",
                stored.issuer, context.profile_name
            ));
            Ok(())
        }
        Err(error) => Err(Failure::Local(format!(
            "the sign-in was removed from this computer, but the identity provider could not revoke it ({}): its refresh token stays valid until it expires; try again later with `creditdata login` and `creditdata logout`",
            one_line(&DisplayChain(&error).to_string())
        ))),
    }
}

/// What `auth status` shows: never a token.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    profile: String,
    environment: String,
    issuer: String,
    client_id: String,
    subject: String,
    username: Option<String>,
    name: Option<String>,
    signed_in_at: String,
    access_token_expires_at: Option<String>,
    access_token_valid: bool,
    can_refresh: bool,
    scopes: Vec<String>,
    token_store: String,
}

fn timestamp(time: SystemTime) -> String {
    DateTime::<Utc>::from(time).to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn not_signed_in(context: &Context) -> Failure {
    Failure::Auth(format!(
        "not signed in with profile {}: run `creditdata login{}`",
        context.profile_name,
        if context.profile_named {
            format!(" --profile {}", context.profile_name)
        } else {
            String::new()
        }
    ))
}

/// `creditdata auth ...`.
pub async fn auth(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    context: &Context,
    out: Output,
    command: &AuthCommand,
) -> Result<(), Failure> {
    match command {
        AuthCommand::Status => status(global, env, context, out),
        AuthCommand::Token { force } => token(global, env, context, *force).await,
    }
}

fn status(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    context: &Context,
    out: Output,
) -> Result<(), Failure> {
    let store = open_for_reading(context)?;
    let Some(stored) = store.load().map_err(token_store_failure)? else {
        return Err(not_signed_in(context));
    };
    let environment = target(global, env, &context.profile, false)
        .map(|t| t.environment)
        .unwrap_or_else(|_| "(unknown)".to_string());
    let user = stored.user().clone();
    let status = Status {
        profile: context.profile_name.clone(),
        environment,
        issuer: stored.issuer.clone(),
        client_id: stored.client_id.clone(),
        subject: user.subject,
        username: user.username,
        name: user.name,
        signed_in_at: timestamp(stored.signed_in_at),
        access_token_expires_at: stored.access_token_expires_at.map(timestamp),
        access_token_valid: stored.access_token.is_some()
            && stored.access_token_valid_for().is_some(),
        can_refresh: stored.refresh_token.is_some(),
        scopes: stored.scopes.clone(),
        token_store: store.store.describe(),
    };
    if out.is_json() {
        return out.document(&status);
    }
    let mut text = String::new();
    let mut line = |label: &str, value: &str| {
        text.push_str(&format!("{label:<24}{}\n", one_line(value)));
    };
    line("Profile", &status.profile);
    line("Environment", &status.environment);
    line("Identity provider", &status.issuer);
    line("Client", &status.client_id);
    line("Subject", &status.subject);
    line("User name", status.username.as_deref().unwrap_or("-"));
    line("Name", status.name.as_deref().unwrap_or("-"));
    line("Signed in at", &status.signed_in_at);
    let expiry = match (&status.access_token_expires_at, status.access_token_valid) {
        (Some(at), true) => format!("{at} (valid)"),
        (Some(at), false) => format!("{at} (expired; renewed on next use)"),
        (None, _) => "-".to_string(),
    };
    line("Access token expires", &expiry);
    line(
        "Refresh token",
        if status.can_refresh { "kept" } else { "none" },
    );
    line("Scopes", &status.scopes.join(" "));
    line("Token store", &status.token_store);
    out.text(&text)
}

async fn token(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    context: &Context,
    force: bool,
) -> Result<(), Failure> {
    if std::io::stdout().is_terminal() && !force {
        return Err(Failure::Usage(
            "refusing to print an access token on a terminal, where it would stay in the scrollback: capture it (`TOKEN=$(creditdata auth token)`) or add --force".into(),
        ));
    }
    let store = open_for_reading(context)?;
    let Some(stored) = store.load().map_err(token_store_failure)? else {
        return Err(not_signed_in(context));
    };
    // A token with more than PRINT_MARGIN left is printed as stored; otherwise the client is
    // asked, which hands out a stored token only while it has more than a minute left (twice
    // its refresh margin) and renews it otherwise: what it returns here is a renewed token.
    let fresh = stored
        .access_token_valid_for()
        .is_some_and(|left| left > PRINT_MARGIN);
    let token = match (fresh, stored.access_token()) {
        (true, Some(token)) => token.clone(),
        _ => renewed_access_token(global, env, context).await?,
    };
    let mut stdout = std::io::stdout().lock();
    std::io::Write::write_all(&mut stdout, token.expose_secret().as_bytes())
        .and_then(|()| std::io::Write::write_all(&mut stdout, b"\n"))
        .and_then(|()| std::io::Write::flush(&mut stdout))
        .map_err(Failure::output)
}

/// Renews the access token with the refresh token, through the client's authenticator: the
/// rotated tokens are saved to the store before the new access token is returned, a refused
/// refresh token is "sign in again", and nothing is sent to the service: a token costs none of
/// its rate limit, and is had while the identity provider is up even if the service is down.
async fn renewed_access_token(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    context: &Context,
) -> Result<SecretString, Failure> {
    let Some(credentials) = stored_credentials(global, env, context)? else {
        return Err(not_signed_in(context));
    };
    let (builder, _) = crate::settings::builder(global, env, &context.profile)?;
    let client = builder
        .credentials(credentials)
        .build()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(client.access_token().await?)
}

#[cfg(test)]
mod tests {
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
