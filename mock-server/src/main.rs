//! `creditdata-mock`: runs the mock service and identity provider until Ctrl-C.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use creditdata_mock::config::{
    AllowedHost, DEFAULT_AUDIENCE, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET,
    DEFAULT_PUBLIC_CLIENT_ID, MAX_DAYS, MAX_DURATION, TestUser, check_configured_redirect_uri,
};
use creditdata_mock::realism::rate_limit::MAX_REQUESTS;
use creditdata_mock::realism::{Faults, LatencySpec, RateLimit, Realism, SlowBodyPace};
use creditdata_mock::{MockConfig, MockServer, StartError};

/// A stateful local stand-in for the consumer credit-data service and its identity provider.
#[derive(Parser)]
#[command(
    name = "creditdata-mock",
    version,
    after_help = "Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set (an OpenTelemetry collector, \
                  OTLP/HTTP), a SERVER span per request is exported there, joined to the \
                  caller's traceparent (see the README, \"Traces\")."
)]
struct Args {
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Client id the token endpoint accepts.
    #[arg(long, env = "CREDITDATA_MOCK_CLIENT_ID", default_value = DEFAULT_CLIENT_ID)]
    client_id: String,
    /// Client secret the token endpoint accepts.
    #[arg(long, env = "CREDITDATA_MOCK_CLIENT_SECRET", default_value = DEFAULT_CLIENT_SECRET, hide_env_values = true, hide_default_value = false)]
    client_secret: String,
    /// Audience (`aud`) of issued tokens; the API refuses any other.
    #[arg(long, default_value = DEFAULT_AUDIENCE)]
    audience: String,
    /// Lifetime of access tokens (e.g. 300, 300s, 5m, 1h).
    #[arg(long, default_value = "300s", value_parser = parse_duration)]
    token_lifetime: Duration,
    /// PKCS#8 PEM file of a P-256 key to sign tokens with (default: generated, or kept in --state).
    #[arg(long)]
    signing_key: Option<PathBuf>,
    /// Keep sessions (and the signing key) in this file across restarts; written atomically.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Serve this effective description (OpenAPI 3.0 JSON, as `cargo xtask regen --out` writes
    /// it) instead of the one the mock was built with: its operations without a hand-written
    /// handler are served from it.
    #[arg(long)]
    effective_description: Option<PathBuf>,
    /// Let waiting customers complete by themselves after this long (e.g. 30s, 2m).
    #[arg(long, value_parser = parse_duration)]
    auto_complete_after: Option<Duration>,
    /// Let a waiting customer complete the moment anything of the session is read.
    #[arg(long)]
    complete_on_read: bool,
    /// How long providers stay WAITING_FOR_PROVIDER after the customer's consent.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    provider_delay: Duration,
    /// One provider answer in N ends in ERROR (deterministic per session and provider); 0: never.
    #[arg(long, default_value_t = 8)]
    provider_error_one_in: u32,
    /// Days from creation to the first customer input deadline (at most 3650).
    #[arg(long, default_value_t = 7, value_parser = days)]
    deadline_days: u32,
    /// Days an extension moves the deadline to, from now (at most 3650).
    #[arg(long, default_value_t = 7, value_parser = days)]
    extension_days: u32,
    /// Another name the mock answers to (NAME for any port, NAME:PORT for one); repeatable.
    /// Requests for any other Host are refused (DNS rebinding).
    #[arg(
        long = "allowed-host",
        value_name = "NAME[:PORT]",
        env = "CREDITDATA_MOCK_ALLOWED_HOSTS",
        value_delimiter = ',',
        value_parser = allowed_host
    )]
    allowed_hosts: Vec<String>,
    /// A person who can sign in: USERNAME:PASSWORD[:DISPLAY NAME[:E-MAIL]]; repeatable. The
    /// display name becomes `createdByName`. Default: lena:lena-password:Lena Loan Officer.
    #[arg(long = "user", value_name = "USER:PASSWORD[:NAME[:EMAIL]]", value_parser = test_user)]
    users: Vec<TestUser>,
    /// Client id of the public native client (no secret; Authorization Code with PKCE).
    #[arg(long, env = "CREDITDATA_MOCK_PUBLIC_CLIENT_ID", default_value = DEFAULT_PUBLIC_CLIENT_ID)]
    public_client_id: String,
    /// A redirect URI accepted besides loopback ones (http://127.0.0.1:ANY/..., http://[::1]:ANY/...),
    /// compared exactly; repeatable.
    #[arg(long = "redirect-uri", value_name = "URI", value_parser = redirect_uri)]
    redirect_uris: Vec<String>,
    /// How long an authorization code can be exchanged.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    code_lifetime: Duration,
    /// How long an unused refresh token stays valid (each use rotates it).
    #[arg(long, default_value = "30m", value_parser = parse_duration)]
    refresh_token_lifetime: Duration,
    /// How long a sign-in lasts at most, however often it is refreshed.
    #[arg(long, default_value = "10h", value_parser = parse_duration)]
    sign_in_lifetime: Duration,
    /// Delay requests: DISTRIBUTION for every /v1 request, or ROUTE=DISTRIBUTION (repeatable).
    ///
    /// DISTRIBUTION: `50ms` (fixed), `uniform:20ms..200ms`, `normal:mean=100ms,sd=20ms` (cut at
    /// 0) or `lognormal:p50=80ms,p99=400ms`; durations in us, ms, s or m, at most 10m.
    /// ROUTE: `[METHOD] /path`, where `*` is one path segment and a final `**` the rest, e.g.
    /// `--latency 'GET /v1/sessions/*/pdf-report=uniform:200ms..1s'`. Route rules are tried in
    /// order (first match wins) on every path, the identity provider's too
    /// (`'/realms/**=30ms'`); a DISTRIBUTION alone covers the other /v1 requests.
    #[arg(
        long,
        value_name = "[ROUTE=]DISTRIBUTION",
        value_parser = latency_spec,
        help_heading = REALISM
    )]
    latency: Vec<LatencySpec>,
    /// Limit each API client to N requests per s, min or h (e.g. `20/s`), answered 429.
    ///
    /// A token bucket per client (the `azp` of a valid token; requests without one: per remote
    /// address) holding N (see --rate-limit-burst) and refilled at N per window. A refused
    /// request gets 429, a problem body and `Retry-After` (whole seconds, at least 1): a
    /// request sent that much later is accepted. /v1 only.
    #[arg(long, value_name = "N/s|N/min|N/h", help_heading = REALISM)]
    rate_limit: Option<RateLimit>,
    /// The most requests a client may send at once after a quiet spell (default: N of
    /// --rate-limit).
    #[arg(
        long,
        value_name = "N",
        requires = "rate_limit",
        value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_REQUESTS)),
        help_heading = REALISM
    )]
    rate_limit_burst: Option<u32>,
    /// Inject faults into /v1 requests, e.g. `503:1%,reset:0.5%,slow-body:1%`.
    ///
    /// KIND:RATE% items, comma-separated, at most 100% in all. Kinds: 429 (with Retry-After:
    /// 1), 500, 502, 503, 504 (problem bodies), reset (TCP reset, no response), slow-body (the
    /// real response, trickled at --slow-body), truncated (the real response cut halfway
    /// through its body). Injected responses carry `X-Creditdata-Mock-Fault: KIND`. Draws are
    /// deterministic: see --seed.
    #[arg(long, value_name = "KIND:RATE%,...", help_heading = REALISM)]
    faults: Option<Faults>,
    /// Pace of slow-body faults: BYTES every PAUSE.
    #[arg(
        long,
        value_name = "BYTES/PAUSE",
        default_value = "1024/100ms",
        help_heading = REALISM
    )]
    slow_body: SlowBodyPace,
    /// Seed of the fault and latency draws.
    ///
    /// The n-th request to a route (method and path template) gets the same fault for the same
    /// seed and --faults, whatever other routes receive in between; which of several concurrent
    /// requests to one route counts as n-th is up to the scheduler.
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = REALISM)]
    seed: u64,
}

fn test_user(text: &str) -> Result<TestUser, String> {
    text.parse()
        .map_err(|error: creditdata_mock::ConfigError| error.to_string())
}

fn redirect_uri(text: &str) -> Result<String, String> {
    check_configured_redirect_uri(text.trim())
        .map(|_| text.trim().to_owned())
        .map_err(|error| error.to_string())
}

const REALISM: &str = "Realism (all off by default)";

fn latency_spec(text: &str) -> Result<LatencySpec, String> {
    text.parse()
}

/// A day count the mock can compute dates with.
fn days(text: &str) -> Result<u32, String> {
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of days"))?;
    u32::try_from(value)
        .ok()
        .filter(|days| *days <= MAX_DAYS)
        .ok_or_else(|| format!("{value} days is more than the {MAX_DAYS} accepted"))
}

fn allowed_host(text: &str) -> Result<String, String> {
    text.trim()
        .parse::<AllowedHost>()
        .map(|_| text.trim().to_owned())
        .map_err(|error| error.to_string())
}

/// `300`, `300s`, `5m`, `2h`, `500ms`; at most [`MAX_DURATION`] (about ten years).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let too_long = || {
        format!(
            "'{text}' is longer than the {MAX_DAYS} days ({}s) accepted",
            MAX_DURATION.as_secs()
        )
    };
    if number.is_empty() {
        return Err(format!("'{text}' is not a duration such as 30s, 5m or 1h"));
    }
    // All digits: the only parse failure left is a number beyond u64.
    let number: u64 = number.parse().map_err(|_| too_long())?;
    let seconds_per_unit = match unit {
        "" | "s" => Some(1),
        "m" => Some(60),
        "h" => Some(3600),
        "ms" => None,
        _ => return Err(format!("'{text}' has an unknown unit; use ms, s, m or h")),
    };
    let duration = match seconds_per_unit {
        Some(factor) => Duration::from_secs(number.checked_mul(factor).ok_or_else(too_long)?),
        None => Duration::from_millis(number),
    };
    if duration > MAX_DURATION {
        return Err(too_long());
    }
    Ok(duration)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // The causes in one line, for a person; no backtrace even with RUST_BACKTRACE set.
            eprintln!("error: {error:#}");
            // A setting out of range is a usage error, as clap reports its own (exit 2).
            if let Some(StartError::Config(_)) = error.downcast_ref::<StartError>() {
                return std::process::ExitCode::from(2);
            }
            std::process::ExitCode::FAILURE
        }
    }
}

/// Whether the log lines carry colour codes: only for a person at a terminal, so a log file, a
/// pipe or a CI log reads as plain text; `NO_COLOR` (set and not empty) turns them off there too.
fn log_colours(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(|value| value.is_empty())
}

async fn run() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "creditdata_mock=info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(log_colours(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .init();
    let args = Args::parse();
    // Before the server starts: its span layer takes the global tracer as it is then.
    let telemetry = creditdata_otlp::install(creditdata_otlp::Options {
        service_name: "creditdata-mock",
        retry: creditdata_otlp::RetryPolicy::default(),
        warn: warn_line,
    });
    let realism = realism(&args);
    let signing_key_pem = match &args.signing_key {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the signing key {}", path.display()))?,
        ),
        None => None,
    };
    let effective_description = match &args.effective_description {
        Some(path) => {
            let text = std::fs::read(path)
                .with_context(|| format!("reading the effective description {}", path.display()))?;
            let document: serde_json::Value = serde_json::from_slice(&text).with_context(|| {
                format!(
                    "{} is not a JSON document; give the effective description `cargo xtask regen` writes",
                    path.display()
                )
            })?;
            Some(std::sync::Arc::new(document))
        }
        None => None,
    };
    let config = MockConfig {
        effective_description,
        listen: args.listen,
        client_id: args.client_id,
        client_secret: args.client_secret,
        audience: args.audience,
        token_lifetime: args.token_lifetime,
        signing_key_pem,
        state_file: args.state,
        auto_complete_after: args.auto_complete_after,
        complete_on_read: args.complete_on_read,
        provider_delay: args.provider_delay,
        provider_error_one_in: args.provider_error_one_in,
        deadline_days: args.deadline_days,
        extension_days: args.extension_days,
        allowed_hosts: args.allowed_hosts,
        public_client_id: args.public_client_id,
        redirect_uris: args.redirect_uris,
        code_lifetime: args.code_lifetime,
        refresh_token_lifetime: args.refresh_token_lifetime,
        sign_in_lifetime: args.sign_in_lifetime,
        realism,
        server_spans: telemetry.is_some(),
        ..MockConfig::default()
    };
    let config = if args.users.is_empty() {
        config
    } else {
        MockConfig {
            users: args.users,
            ..config
        }
    };
    let server = MockServer::start(config).await?;
    let stopped = shutdown_signal();
    // Machine-readable lines first: `listening on URL`, then shell-pasteable exports.
    println!("creditdata-mock listening on {}", server.base_url());
    println!("issuer: {}", server.issuer());
    println!("export CREDITDATA_BASE_URL={}", server.base_url());
    println!("export CREDITDATA_TOKEN_URL={}", server.token_url());
    println!("export CREDITDATA_CLIENT_ID={}", server.client_id());
    println!("export CREDITDATA_CLIENT_SECRET={}", server.client_secret());
    // Who can sign in, without their passwords (the default user's is in the README).
    let users: Vec<&str> = server
        .config()
        .users
        .iter()
        .map(|user| user.username.as_str())
        .collect();
    println!(
        "sign-in: client {} (public, PKCE) at {}/protocol/openid-connect/auth; users: {}",
        server.public_client_id(),
        server.issuer(),
        users.join(", ")
    );
    if server.config().realism.is_enabled() {
        tracing::info!("realism: {}", server.config().realism);
    }
    tracing::info!(
        "serving /v1 (bearer token required), /_mock control endpoints and /openapi/v1.json; Ctrl-C stops"
    );
    stopped.await;
    tracing::info!("stopping");
    server.shutdown().await;
    if let Some(pipeline) = telemetry {
        // It waits for the export thread: not on a runtime worker.
        let _ = tokio::task::spawn_blocking(move || pipeline.shutdown()).await;
    }
    Ok(())
}

/// One line on stderr; a closed stderr is ignored (`eprintln!` would panic).
fn warn_line(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The realism options; a second default latency is a usage error, as clap reports its own.
fn realism(args: &Args) -> Realism {
    let defaults = args
        .latency
        .iter()
        .filter(|spec| matches!(spec, LatencySpec::Default(_)))
        .count();
    if defaults > 1 {
        use clap::CommandFactory as _;
        Args::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--latency is given more than one DISTRIBUTION without a route; give one \
                 default and ROUTE=DISTRIBUTION for the others",
            )
            .exit();
    }
    let mut realism = Realism::new().slow_body(args.slow_body).seed(args.seed);
    for spec in &args.latency {
        realism = realism.latency_spec(spec.clone());
    }
    if let Some(mut limit) = args.rate_limit {
        if let Some(burst) = args.rate_limit_burst {
            limit = limit.with_burst(burst);
        }
        realism = realism.rate_limit(limit);
    }
    if let Some(faults) = &args.faults {
        realism = realism.faults(faults.clone());
    }
    realism
}

/// Ctrl-C or SIGTERM, listened to from the moment this is called (so that a stop sent right
/// after the `listening on` line is not the signal's default action, which saves no state and
/// sends no traces).
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async move {
            let wait = |signal: Option<tokio::signal::unix::Signal>| async move {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = wait(interrupt) => {},
                _ = wait(terminate) => {},
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_coloured_only_on_a_terminal_without_no_color() {
        let empty = std::ffi::OsStr::new("");
        let set = std::ffi::OsStr::new("1");
        assert!(log_colours(true, None));
        assert!(log_colours(true, Some(empty)));
        assert!(!log_colours(true, Some(set)));
        assert!(!log_colours(false, None));
        assert!(!log_colours(false, Some(set)));
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("5 weeks").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("h").is_err());
    }

    #[test]
    fn durations_and_days_beyond_the_ceiling_are_refused() {
        for text in [
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999h",
            "5124095576030432h",
            "18446744073709551615ms",
        ] {
            let error = parse_duration(text).expect_err(text);
            assert!(error.contains("accepted"), "{error}");
        }
        assert_eq!(parse_duration("87600h"), Ok(MAX_DURATION));
        assert!(days("3650").is_ok());
        assert!(days("3651").is_err());
        assert!(days("4294967296").is_err());
        assert!(days("-1").is_err());
    }
}
