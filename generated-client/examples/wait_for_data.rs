//! Waits for one session's data with `Client::wait_for_data` and prints how the wait ended: the
//! program whose peak memory BENCHMARKS.md measures against large answers (`cli/examples/peak_rss.rs`
//! runs it; it uses nothing but the client's public API, so the same file builds against an
//! older client for the side-by-side measure).
//!
//! ```text
//! cargo run -p creditdata-client --example wait_for_data -- SESSION_ID
//! ```
//!
//! Configuration: the variables of `ClientBuilder::from_env` (`CREDITDATA_BASE_URL`,
//! `CREDITDATA_TOKEN` or client credentials...). Prints `ready`, `ready-with-failures`,
//! `timed-out` or another outcome on stdout; exits 1 with the error on stderr when the wait
//! fails, 2 on a bad argument.

use std::process::ExitCode;
use std::time::Duration;

use creditdata_client::error::DisplayChain;
use creditdata_client::prelude::*;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(Ok(id)) = std::env::args().nth(1).map(|id| id.parse::<uuid::Uuid>()) else {
        eprintln!("usage: wait_for_data SESSION_ID");
        return ExitCode::from(2);
    };
    let client = match ClientBuilder::from_env().and_then(ClientBuilder::build) {
        Ok(client) => client,
        Err(error) => {
            eprintln!("error: {}", DisplayChain(&error));
            return ExitCode::FAILURE;
        }
    };
    let options = WaitOptions::default().timeout(Duration::from_secs(60));
    match client.wait_for_data(id, options).await {
        Ok(DataWait::Ready { .. }) => println!("ready"),
        Ok(DataWait::ReadyWithFailures { .. }) => println!("ready-with-failures"),
        Ok(DataWait::TimedOut { .. }) => println!("timed-out"),
        Ok(_) => println!("ended"),
        Err(error) => {
            eprintln!("error: {}", DisplayChain(&error));
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
