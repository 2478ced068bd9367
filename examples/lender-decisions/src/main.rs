//! A lender's decision program, as a user writes it once against creditdata-client: twelve
//! sessions with fixed subjects and packages, each customer played through the mock's control
//! endpoint, the data waited for with the default readiness gate, one decision per session from
//! the readiness and the scores and negative tradelines, and the `api-version` each operation's
//! requests carried as the mock saw them. Prints tab-separated lines (see README.md); on failure
//! prints the error with its causes and exits with status 1.
//!
//! `cargo xtask release-day` runs it unchanged before and after a vendor release and compares
//! what it prints: a compatible release must change no decision and no header.

use std::time::Duration;

use anyhow::{Context, bail};
use creditdata_client::prelude::*;
use creditdata_client::session_datasets::SessionDatasets;

/// The subjects: (e-mail, [(country, packages)]). Fixed, so that the n-th session of a mock
/// started with the same seed is the same person with the same data.
const SUBJECTS: [(&str, &[(&str, &[&str])]); 12] = [
    ("ada@example.com", &[("GBR", &["SCORE", "CREDIT_HISTORY"])]),
    (
        "bruno@example.com",
        &[("DEU", &["SCORE", "CREDIT_HISTORY"])],
    ),
    (
        "carla@example.com",
        &[("FIN", &["SCORE", "CREDIT_HISTORY", "IDENTIFICATION"])],
    ),
    ("dag@example.com", &[("SWE", &["SCORE", "CREDIT_HISTORY"])]),
    ("edith@example.com", &[("GBR", &["SCORE"])]),
    (
        "fedor@example.com",
        &[("EST", &["SCORE", "CREDIT_HISTORY"])],
    ),
    (
        "greta@example.com",
        &[("POL", &["SCORE", "CREDIT_HISTORY"])],
    ),
    (
        "hugo@example.com",
        &[(
            "GBR",
            &["SCORE", "CREDIT_HISTORY", "BANK_ACCOUNT_CATEGORIZATION"],
        )],
    ),
    ("ines@example.com", &[("FIN", &["SCORE"])]),
    (
        "jonas@example.com",
        &[("DEU", &["SCORE", "CREDIT_HISTORY", "IDENTIFICATION"])],
    ),
    ("kaja@example.com", &[("LVA", &["SCORE", "CREDIT_HISTORY"])]),
    (
        "lars@example.com",
        &[
            ("GBR", &["SCORE", "CREDIT_HISTORY"]),
            ("FIN", &["SCORE", "CREDIT_HISTORY"]),
        ],
    ),
];

/// One decision and the datasets it rests on.
struct Decision {
    verdict: &'static str,
    reason: String,
    cites: Vec<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let base = std::env::var("CREDITDATA_BASE_URL")
        .context("CREDITDATA_BASE_URL: the mock's base URL (its start prints it)")?;
    let client = ClientBuilder::from_env()?.build()?;
    let http = reqwest::Client::new();

    // One after another: the mock gives the n-th session of its seed the same id every run.
    let mut sessions = Vec::new();
    for (email, query) in SUBJECTS {
        let mut parameters = Vec::new();
        for (country, packages) in query {
            parameters.push(
                types::QueryParameterInput::builder()
                    .country_code(*country)
                    .data_packages(
                        packages
                            .iter()
                            .map(|p| types::DataPackageInput::try_from(*p))
                            .collect::<Result<Vec<_>, _>>()?,
                    )
                    .build()?,
            );
        }
        let created = client
            .create_session()
            .body(
                types::CreateSessionRequest::builder()
                    .subject_email(email)
                    .query_parameters(parameters),
            )
            .call()
            .await
            .with_context(|| format!("creating the session of {email}"))?;
        let completed = http
            .post(format!("{base}/_mock/sessions/{}/complete", created.id))
            .header("X-Creditdata-Mock", "1")
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .context("playing the customer through the mock")?;
        if !completed.status().is_success() {
            bail!(
                "the mock refused to complete the session: {}",
                completed.status()
            );
        }
        sessions.push(created.id);
    }

    let mut waits = tokio::task::JoinSet::new();
    for (index, id) in sessions.iter().copied().enumerate() {
        let client = client.clone();
        waits.spawn(async move {
            let options = WaitOptions::default()
                .timeout(Duration::from_secs(120))
                .initial_interval(Duration::from_millis(250))
                .max_interval(Duration::from_secs(1));
            (index, client.wait_for_data(id, options).await)
        });
    }
    let mut decisions = Vec::new();
    while let Some(joined) = waits.join_next().await {
        let (index, wait) = joined.context("a wait panicked")?;
        decisions.push((index, decide(wait?)));
    }
    decisions.sort_by_key(|(index, _)| *index);

    for (index, decision) in &decisions {
        println!(
            "decision\t{}\t{}\t{}\t{}",
            index + 1,
            decision.verdict,
            decision.reason,
            decision.cites.join(",")
        );
    }
    for (index, id) in sessions.iter().enumerate() {
        let seen: serde_json::Value = http
            .get(format!("{base}/_mock/sessions/{id}/api-versions"))
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .context("asking the mock which api-version the requests carried")?
            .error_for_status()?
            .json()
            .await?;
        for request in seen["requests"].as_array().into_iter().flatten() {
            println!(
                "header\t{}\t{}\t{}",
                index + 1,
                request["operation"].as_str().unwrap_or_default(),
                request["apiVersion"].as_str().unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// The lender's rule: no decision on partial data; then the probability of default and the
/// negative tradelines decide.
fn decide(wait: DataWait) -> Decision {
    let datasets = match wait {
        DataWait::Ready { datasets, .. } => datasets,
        DataWait::ReadyWithFailures { datasets, .. } => {
            let readiness = datasets.readiness();
            let mut cites: Vec<String> = readiness
                .failed_datasets()
                .into_iter()
                .map(|d| d.name().to_string())
                .collect();
            cites.sort();
            let mut failed: Vec<String> = readiness.failed.iter().map(|s| s.to_string()).collect();
            failed.sort();
            failed.dedup();
            return Decision {
                verdict: "refer",
                reason: format!("data missing: {}", failed.join("; ")),
                cites,
            };
        }
        DataWait::TimedOut { .. } => {
            return Decision {
                verdict: "refer",
                reason: "the data did not arrive in time".into(),
                cites: Vec::new(),
            };
        }
        other => {
            return Decision {
                verdict: "refer",
                reason: format!("no data: {other}"),
                cites: Vec::new(),
            };
        }
    };
    on_data(&datasets)
}

fn on_data(datasets: &SessionDatasets) -> Decision {
    let cites = vec!["scores".to_string(), "negative-tradelines".to_string()];
    let probability = datasets
        .scores
        .as_ref()
        .ok()
        .and_then(|scores| scores.scores.as_ref())
        .into_iter()
        .flatten()
        .filter(|score| score.type_.as_str() == "PROBABILITY_OF_DEFAULT")
        .filter_map(|score| score.normalized_value.as_deref()?.parse::<f64>().ok())
        .fold(None, |worst: Option<f64>, p| {
            Some(worst.map_or(p, |w| w.max(p)))
        });
    let negatives = datasets
        .negative_tradelines
        .as_ref()
        .ok()
        .and_then(|answer| answer.negative_tradelines.as_ref())
        .map_or(0, Vec::len);
    let (verdict, reason) = match probability {
        None => ("refer", "no probability of default".to_string()),
        Some(p) if p >= 0.10 => ("decline", format!("probability of default {p:.4}")),
        Some(_) if negatives >= 2 => ("decline", format!("{negatives} negative tradelines")),
        Some(p) if p < 0.03 => (
            "approve",
            format!("probability of default {p:.4}, {negatives} negative tradelines"),
        ),
        Some(p) => (
            "refer",
            format!("probability of default {p:.4}, {negatives} negative tradelines"),
        ),
    };
    Decision {
        verdict,
        reason,
        cites,
    }
}
