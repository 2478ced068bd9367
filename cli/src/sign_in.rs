//! `login`, `logout`, `auth status`, `auth token`, and the profile's sign-in as the
//! credentials of every other command.
//!
//! Like `gh auth login` and `gcloud auth login`: the system browser signs the person in
//! (Authorization Code with PKCE, the answer coming back to a port on 127.0.0.1), the tokens go
//! to the system keyring (or an owner-only file), and the profile records where the service and
//! its identity provider are, so that later commands need no options.

use std::io::IsTerminal as _;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, SecondsFormat, Utc};
use creditdata_client::auth::Credentials;
use creditdata_client::error::DisplayChain;
use creditdata_client::sign_in::{
    IdentityProvider, ProviderSession, SignIn, SignInError, SignInOptions, SignedInCredentials,
    SignedOut, StoredSignIn, TokenStore, TokenStoreErrorKind, sign_out,
};
use secrecy::{ExposeSecret as _, SecretString};
use serde::Serialize;

use crate::cli::{AuthCommand, GlobalArgs, LoginArgs};
use crate::failure::Failure;
use crate::output::Output;
use crate::profile::{Profile, record};
use crate::settings::{
    Context, ProfileStore, open_for_reading, store_failure, target, token_store_failure,
};
use crate::terminal::{note, one_line};
use crate::token_store::{Opened, open};

/// An access token with less than this left is renewed before `auth token` prints it: a script
/// should have time to use it.
const PRINT_MARGIN: Duration = Duration::from_secs(60);

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
    if target.api_origin.is_none() {
        return Err(Failure::Usage(format!(
            "the address of the service ({}) is not known, and a sign-in is recorded for one service only: give --base-url or --environment",
            target.environment
        )));
    }
    let Opened {
        store,
        fallback_notice,
    } = open(context.store, context.config()?, &context.profile_name).map_err(store_failure)?;
    let kind = store.kind();
    let store = ProfileStore { store };
    let provider = IdentityProvider::new(target.issuer.clone(), target.client_id.clone())
        .map_err(sign_in_failure)?;
    for scope in &args.scopes {
        crate::profile::check_scope(scope).map_err(|m| Failure::Usage(format!("--scope: {m}")))?;
    }
    if let Some(prompt) = &args.prompt {
        crate::profile::check_prompt(prompt)
            .map_err(|m| Failure::Usage(format!("--prompt: {m}")))?;
    }
    let scopes = if args.scopes.is_empty() {
        target.scopes.clone()
    } else {
        args.scopes.clone()
    };
    let prompt = args.prompt.clone().or_else(|| target.prompt.clone());
    let options = SignInOptions {
        scopes: scopes.clone(),
        timeout: args.timeout,
        prompt: prompt.clone(),
    };
    let pending = SignIn::start(&provider, options)
        .await
        .map_err(sign_in_failure)?;
    // The start address, not the authorization URL: a browser launcher's argument is readable
    // by every local user, and the authorization URL's state, nonce and PKCE challenge would
    // let one of them finish this sign-in as themselves.
    let url = pending.start_url().to_string();
    note(&format!(
        "To sign in to {} (profile {}), open this address in a browser on this computer (it works once):\n\n  {url}\n",
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
    let mut signed_in = pending.finish().await.map_err(sign_in_failure)?;
    // The token goes to this service only, until the next login.
    signed_in.api_origin = target.api_origin.clone();
    if let Some(notice) = fallback_notice {
        note(&format!("note: {notice}"));
    }
    // The sign-in this one replaces is ended below: a refresh token nobody keeps any more must
    // not stay valid at the provider. Unreadable is as good as none here.
    let previous = store.load().ok().flatten();
    if let Some(previous) = &previous
        && let Some(change) = subject_change(previous, &signed_in)
    {
        if !args.force {
            // Someone else's sign-in delivered to this port is exactly what a local attacker
            // achieves: nothing of it is kept, and the person decides.
            let _ = sign_out(&provider, &signed_in).await;
            return Err(Failure::Auth(format!(
                "WARNING: this sign-in is {change}. Nothing was changed and the new sign-in was ended. If you meant to switch, run `creditdata login --force`; if you did not, someone on this computer may have tried to take over the sign-in"
            )));
        }
        note(&format!(
            "WARNING: profile {} now signs in {change} (--force)",
            context.profile_name
        ));
    }
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
        scopes: Some(scopes),
        prompt,
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
    if signed_in.refresh_token.is_none() {
        let until = signed_in
            .access_token_expires_at
            .map(|at| format!(" at {}", timestamp(at)))
            .unwrap_or_default();
        note(&format!(
            "warning: the identity provider issued no refresh token: you will have to sign in again when the access token expires{until}. Some providers issue one only for `creditdata login --scope openid --scope profile --scope offline_access --prompt consent`"
        ));
    }
    Ok(())
}

/// How `new` differs in person from `previous`, when it does: another subject, or another
/// issuer (a subject is only unique within its issuer).
fn subject_change(previous: &StoredSignIn, new: &StoredSignIn) -> Option<String> {
    let (was, is) = (previous.user(), new.user());
    if previous.issuer == new.issuer && was.subject == is.subject {
        return None;
    }
    Some(format!(
        "as {}, not as {} who was signed in with this profile",
        is.display_name(),
        was.display_name()
    ))
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
        Ok(report) => signed_out_report(&stored.issuer, &context.profile_name, report),
        Err(error) => Err(Failure::Local(format!(
            "the sign-in was removed from this computer, but the identity provider could not revoke it ({}): its refresh token stays valid until it expires; try again later with `creditdata login` and `creditdata logout`",
            one_line(&DisplayChain(&error).to_string())
        ))),
    }
}

/// Says what `logout` ended, and no more: the refresh token, the provider's browser session.
/// A sign-in that may still be renewable is a failure (exit 1).
fn signed_out_report(issuer: &str, profile: &str, report: SignedOut) -> Result<(), Failure> {
    let session = match report.provider_session {
        ProviderSession::Ended => "the identity provider ended its session",
        ProviderSession::Unconfirmed => {
            "the identity provider did not confirm that its own browser session ended (it answered with a page, perhaps asking for confirmation): if others use this browser, sign out there too"
        }
        _ => "the identity provider's own browser session was not ended",
    };
    match (report.revoked, report.provider_session) {
        (true, ProviderSession::Ended) => {
            note(&format!(
                "Signed out of {issuer} (profile {profile}): the refresh token was revoked and {session}."
            ));
            Ok(())
        }
        (true, _) => {
            note(&format!(
                "Signed out here (profile {profile}), and the refresh token was revoked at {issuer}: this sign-in can no longer be renewed; {session}."
            ));
            Ok(())
        }
        (false, ProviderSession::Ended) => {
            note(&format!(
                "Signed out of {issuer} (profile {profile}): {session} (it offers no token revocation)."
            ));
            Ok(())
        }
        (false, _) => Err(Failure::Local(format!(
            "the sign-in was removed from this computer, but nothing was revoked at {issuer} and {session}: its refresh token may stay valid until it expires"
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
        _ => renewed_access_token(global, env, context, &stored).await?,
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
///
/// The client is pointed at the service the sign-in was recorded for, whatever the settings
/// say now: nothing is sent there, and the token is the one that service accepts.
async fn renewed_access_token(
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    context: &Context,
    stored: &StoredSignIn,
) -> Result<SecretString, Failure> {
    let Some(origin) = stored.api_origin.clone() else {
        return Err(Failure::Auth(format!(
            "the sign-in of profile {:?} does not record which service it is for (it predates that record); run `creditdata login` again",
            context.profile_name
        )));
    };
    let store = open_for_reading(context)?;
    let provider = IdentityProvider::new(stored.issuer.clone(), stored.client_id.clone())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let (builder, _) = crate::settings::builder(global, env, &context.profile)?;
    let client = builder
        .base_url(origin)
        .credentials(Credentials::SignedIn(SignedInCredentials::new(
            store, provider,
        )))
        .build()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    Ok(client.access_token().await?)
}
