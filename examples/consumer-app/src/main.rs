//! What most users of creditdata-client write first: configuration from the environment, a
//! session created and read back, the session search, a dataset. Prints one summary line; on
//! failure prints the error with its causes (`{:#}`) and exits with status 1.

use anyhow::Context;
use creditdata_client::prelude::*;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let email = std::env::args()
        .nth(1)
        .context("usage: creditdata-consumer-app EMAIL (the data subject's e-mail address)")?;
    let client = ClientBuilder::from_env()?.build()?;

    let created = client
        .create_session()
        .body(
            types::CreateSessionRequest::builder()
                .subject_email(email.as_str())
                .query_parameters(vec![
                    types::QueryParameterInput::builder()
                        .country_code("GBR")
                        .data_packages(vec![types::DataPackageInput::Score])
                        .build()?,
                ]),
        )
        .call()
        .await
        .context("creating the session")?;
    let read_back = client.get_session().session_id(created.id).call().await?;

    let mut sessions = client.sessions(SessionFilter::new().subject_email(email));
    let mut listed = 0;
    let mut found = false;
    while let Some(session) = sessions.try_next().await? {
        listed += 1;
        found |= session.id == created.id;
    }
    anyhow::ensure!(found, "the new session {} is not listed", created.id);

    let scores = client.get_scores().session_id(created.id).call().await?;
    let sources = scores.sources.map_or(0, |sources| sources.len());
    println!(
        "created session {} ({}); {listed} session(s) for the subject; scores from {sources} source(s)",
        read_back.id, read_back.customer_progress_status
    );
    Ok(())
}
