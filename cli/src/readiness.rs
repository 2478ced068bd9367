//! Whether a session's data has arrived, as the commands say it: the client's
//! [`Readiness`] (one rule, in the client) named provider by provider on stderr, and the exit
//! status that tells ready, pending and failed apart, judged on the datasets the command was
//! asked for (`--dataset`, `--every-dataset`, else the client's default gate).

use creditdata_client::session_datasets::{Dataset, Gate, ProviderStatus, Readiness};

use crate::cli::GateArgs;
use crate::failure::Failure;

impl GateArgs {
    /// The client's gate for these options.
    pub fn gate(&self) -> Gate {
        if self.every_dataset {
            Gate::Every
        } else if self.datasets.is_empty() {
            Gate::Default
        } else {
            Gate::only(self.datasets.iter().map(|d| d.0))
        }
    }

    /// Whether the caller named datasets or asked for every one.
    pub fn is_given(&self) -> bool {
        self.every_dataset || !self.datasets.is_empty()
    }
}

/// Names on stderr the datasets read outside the gate whose providers are pending or failed:
/// reported, so nothing is hidden, but not judged (`not judged: tax-returns: 1 failed (...)`).
/// `own` says how one dataset stands judged on its own.
pub fn note_outside_gate(readiness: &Readiness, own: impl Fn(Dataset) -> Readiness) {
    for dataset in readiness.outside_gate.iter().take(SHOWN) {
        let own = own(*dataset);
        if !own.is_complete() {
            crate::terminal::note(&format!("not judged: {}: {own}", dataset.name()));
        }
    }
}

/// At most this many providers are named one by one on stderr.
const SHOWN: usize = 20;

/// Names the pending and the failed providers on stderr (`pending: scores: provider X (GBR)
/// WAITING_FOR_PROVIDER`), at most [`SHOWN`] of each.
pub fn note_providers(readiness: &Readiness) {
    note_list("pending", &readiness.pending);
    note_list("failed", &readiness.failed);
}

fn note_list(what: &str, statuses: &[ProviderStatus]) {
    for status in statuses.iter().take(SHOWN) {
        crate::terminal::note(&format!("{what}: {status}"));
    }
    if statuses.len() > SHOWN {
        crate::terminal::note(&format!("{what}: ... and {} more", statuses.len() - SHOWN));
    }
}

/// The exit status of data read now: pending providers (8) before failed ones (7); `Ok` when
/// every provider answered. Unreadable datasets are the caller's to report.
pub fn outcome(readiness: &Readiness, again: &str) -> Result<(), Failure> {
    if !readiness.pending.is_empty() {
        return Err(Failure::ProvidersPending(format!(
            "{} provider answer(s) have not arrived yet (listed above): the data is partial; {again}",
            readiness.pending.len()
        )));
    }
    failed_outcome(readiness)
}

/// Exit status 7 when providers failed or refused, `Ok` otherwise.
pub fn failed_outcome(readiness: &Readiness) -> Result<(), Failure> {
    if readiness.failed.is_empty() {
        return Ok(());
    }
    Err(Failure::ProvidersFailed(format!(
        "{} provider answer(s) failed or were refused (listed above): the data is final without them",
        readiness.failed.len()
    )))
}
