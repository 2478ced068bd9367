//! `creditdata-mock`: runs the mock service and identity provider until Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use creditdata_mock::config::{DEFAULT_AUDIENCE, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET};
use creditdata_mock::{MockConfig, MockServer};

/// A stateful local stand-in for the consumer credit-data service and its identity provider.
#[derive(Parser)]
#[command(name = "creditdata-mock", version)]
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
    /// Days from creation to the first customer input deadline.
    #[arg(long, default_value_t = 7)]
    deadline_days: u32,
    /// Days an extension moves the deadline to, from now.
    #[arg(long, default_value_t = 7)]
    extension_days: u32,
}

/// `300`, `300s`, `5m`, `2h`, `500ms`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration such as 30s, 5m or 1h"))?;
    match unit {
        "" | "s" => Ok(Duration::from_secs(number)),
        "ms" => Ok(Duration::from_millis(number)),
        "m" => Ok(Duration::from_secs(number * 60)),
        "h" => Ok(Duration::from_secs(number * 3600)),
        _ => Err(format!("'{text}' has an unknown unit; use ms, s, m or h")),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // The causes in one line, for a person; no backtrace even with RUST_BACKTRACE set.
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "creditdata_mock=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let signing_key_pem = match &args.signing_key {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the signing key {}", path.display()))?,
        ),
        None => None,
    };
    let config = MockConfig {
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
        ..MockConfig::default()
    };
    let server = MockServer::start(config).await?;
    // Machine-readable lines first: `listening on URL`, then shell-pasteable exports.
    println!("creditdata-mock listening on {}", server.base_url());
    println!("issuer: {}", server.issuer());
    println!("export CREDITDATA_BASE_URL={}", server.base_url());
    println!("export CREDITDATA_TOKEN_URL={}", server.token_url());
    println!("export CREDITDATA_CLIENT_ID={}", server.client_id());
    println!("export CREDITDATA_CLIENT_SECRET={}", server.client_secret());
    tracing::info!(
        "serving /v1 (bearer token required), /_mock control endpoints and /openapi/v1.json; Ctrl-C stops"
    );
    shutdown_signal().await;
    tracing::info!("stopping");
    server.shutdown().await;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("5 weeks").is_err());
        assert!(parse_duration("").is_err());
    }
}
