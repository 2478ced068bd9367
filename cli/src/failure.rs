//! Why a command failed, the exit status that says so, and the message on stderr.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use creditdata_client::Error;
use creditdata_client::error::{ApiError, DisplayChain};

use crate::terminal::one_line;

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: the service or the network failed, or a local file could not be written.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status: usage or configuration error (clap uses it too).
pub const EXIT_USAGE: u8 = 2;
/// Exit status: authentication failed.
pub const EXIT_AUTH: u8 = 3;
/// Exit status: the service answered 404.
pub const EXIT_NOT_FOUND: u8 = 4;
/// Exit status: `sessions wait` saw the session end without the customer completing it.
pub const EXIT_SESSION_ENDED: u8 = 5;
/// Exit status: `sessions wait` timed out (the customer or providers still awaited).
pub const EXIT_WAIT_TIMED_OUT: u8 = 6;
/// Exit status: the data is final, but some providers failed or refused (`sessions wait
/// --until ready`, `datasets all`): waiting changes nothing. (`export` records them and exits 0:
/// an archive of final data is complete.)
pub const EXIT_PROVIDERS_FAILED: u8 = 7;
/// Exit status: some providers have not answered yet (`datasets all`, `export`): what was
/// printed or exported is partial; read again (or rerun the export) later.
pub const EXIT_PROVIDERS_PENDING: u8 = 8;
/// Exit status: interrupted by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Whether messages quote what the service wrote (`--show-service-text`): set once, before any
/// command runs.
static SHOW_SERVICE_TEXT: AtomicBool = AtomicBool::new(false);

/// Makes every later error message quote what the service wrote in its error answers (a
/// problem's `detail`, validation messages, a text body), or not (the default, as the client's
/// own messages: that text may echo the request's personal data, and stderr often ends in a log).
pub fn show_service_text(show: bool) {
    SHOW_SERVICE_TEXT.store(show, Ordering::Relaxed);
}

/// A failed command.
#[derive(Debug)]
pub enum Failure {
    /// The client failed (service, network, authentication, configuration...).
    Client {
        /// The client's error.
        error: Error,
        /// Whether any credentials were configured (to hint at the cause of a 401).
        had_credentials: bool,
    },
    /// The command line or the configuration is unusable.
    Usage(String),
    /// No one is signed in, or the sign-in could not be completed or used.
    Auth(String),
    /// Something local failed (a file could not be written, ...).
    Local(String),
    /// The session ended without the customer completing it (`sessions wait`).
    SessionEnded(String),
    /// Some items of a stream could not be read (already reported on stderr one by one).
    Partial(String),
    /// The data is final but some providers failed or refused (named on stderr already).
    ProvidersFailed(String),
    /// Some providers have not answered yet (named on stderr already).
    ProvidersPending(String),
    /// A wait's deadline passed (what is still awaited is named on stderr already).
    TimedOut(String),
    /// stdout was closed by its reader (`| head`): not an error, stop quietly.
    BrokenPipe,
    /// Ctrl-C.
    Interrupted,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Client {
            error,
            had_credentials: true,
        }
    }
}

impl Failure {
    /// A write to stdout failed.
    pub fn output(error: std::io::Error) -> Failure {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Local(format!("cannot write to standard output: {error}"))
        }
    }

    /// The exit status.
    pub fn exit_status(&self) -> u8 {
        match self {
            Failure::Client { error, .. } => client_exit_status(error),
            Failure::Usage(_) => EXIT_USAGE,
            Failure::Auth(_) => EXIT_AUTH,
            Failure::Local(_) | Failure::Partial(_) => EXIT_FAILURE,
            Failure::SessionEnded(_) => EXIT_SESSION_ENDED,
            Failure::ProvidersFailed(_) => EXIT_PROVIDERS_FAILED,
            Failure::ProvidersPending(_) => EXIT_PROVIDERS_PENDING,
            Failure::TimedOut(_) => EXIT_WAIT_TIMED_OUT,
            Failure::BrokenPipe => EXIT_OK,
            Failure::Interrupted => EXIT_INTERRUPTED,
        }
    }

    /// The message for stderr (`None`: say nothing). Never contains a secret: the client's
    /// errors never do, and nothing else here quotes a credential.
    pub fn message(&self) -> Option<String> {
        match self {
            Failure::Client {
                error,
                had_credentials,
            } => {
                // The client's messages quote the service; kept on one line so that a quoted
                // line break cannot fake a line of ours.
                let mut text = match error {
                    Error::Api(api) => api_message(api, SHOW_SERVICE_TEXT.load(Ordering::Relaxed)),
                    other => one_line(&DisplayChain(other).to_string()),
                };
                if !had_credentials && client_exit_status(error) == EXIT_AUTH {
                    text.push_str(
                        "\nhint: no credentials are configured: sign in with `creditdata login`, or set CREDITDATA_TOKEN_URL (or CREDITDATA_ISSUER), CREDITDATA_CLIENT_ID and CREDITDATA_CLIENT_SECRET, or CREDITDATA_TOKEN (see creditdata --help)",
                    );
                }
                Some(text)
            }
            Failure::Usage(text)
            | Failure::Auth(text)
            | Failure::Local(text)
            | Failure::SessionEnded(text)
            | Failure::Partial(text)
            | Failure::ProvidersFailed(text)
            | Failure::ProvidersPending(text)
            | Failure::TimedOut(text) => Some(text.clone()),
            Failure::BrokenPipe => None,
            Failure::Interrupted => Some("interrupted".to_string()),
        }
    }

    /// Prints the message (if any) on stderr and returns the exit code.
    pub fn report(self) -> ExitCode {
        if let Some(message) = self.message() {
            crate::terminal::note(&format!("error: {message}"));
        }
        ExitCode::from(self.exit_status())
    }
}

/// The exit status of a client error.
pub fn client_exit_status(error: &Error) -> u8 {
    match error {
        Error::Auth { .. } => EXIT_AUTH,
        Error::Api(api) => match api.status.as_u16() {
            401 => EXIT_AUTH,
            404 => EXIT_NOT_FOUND,
            _ => EXIT_FAILURE,
        },
        Error::Config(_) | Error::InvalidRequest { .. } => EXIT_USAGE,
        Error::WaitTimedOut { .. } => EXIT_WAIT_TIMED_OUT,
        _ => EXIT_FAILURE,
    }
}

/// The hint on an API error whose service text was left out.
const SERVICE_TEXT_HINT: &str =
    " (what the service wrote is left out: --show-service-text shows it)";

/// An API error: the client's message, which names the invalid fields but quotes nothing the
/// service wrote, with a hint when there was something; with `service_text`, what the service
/// wrote too, and its validation failures one per line (the client's `Display` puts them on one
/// line, separated by `;`).
fn api_message(api: &ApiError, service_text: bool) -> String {
    if !service_text {
        let plain = api.to_string();
        let hidden = api.with_service_text().to_string() != plain;
        let mut text = one_line(&plain);
        if hidden {
            text.push_str(SERVICE_TEXT_HINT);
        }
        return text;
    }
    let Some(errors) = api.validation_errors().filter(|e| !e.is_empty()) else {
        return one_line(&api.with_service_text().to_string());
    };
    let mut text = format!(
        "{}: the service answered {}",
        api.operation.unwrap_or("request"),
        api.status
    );
    if let Some(problem) = &api.problem {
        for part in [&problem.title, &problem.detail].into_iter().flatten() {
            if !part.trim().is_empty() {
                let _ = write!(text, ": {}", one_line(part));
            }
        }
    }
    for (field, messages) in errors {
        for message in messages {
            let _ = write!(text, "\n  {}: {}", one_line(field), one_line(message));
        }
        if messages.is_empty() {
            let _ = write!(text, "\n  {}: (no message)", one_line(field));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::StatusCode;
    use reqwest::header::HeaderMap;

    fn api(status: u16, body: &str) -> Error {
        Error::Api(Box::new(ApiError::new(
            Some("CreateSession"),
            StatusCode::from_u16(status).unwrap(),
            HeaderMap::new(),
            body.as_bytes().to_vec().into(),
        )))
    }

    #[test]
    fn statuses_map_to_exit_codes() {
        assert_eq!(client_exit_status(&api(404, "")), EXIT_NOT_FOUND);
        assert_eq!(client_exit_status(&api(401, "")), EXIT_AUTH);
        assert_eq!(client_exit_status(&api(500, "")), EXIT_FAILURE);
        assert_eq!(client_exit_status(&Error::Config("x".into())), EXIT_USAGE);
    }

    const VALIDATION_PROBLEM: &str = r#"{"title":"One or more validation errors occurred.","status":400,
        "detail":"jane.doe@example.com was refused",
        "errors":{"subjectEmail":["not an e-mail \u001b[31maddress"],"queryParameters":["required","at least one"]}}"#;

    #[test]
    fn what_the_service_wrote_is_left_out_by_default_and_said_to_be() {
        let Error::Api(problem) = api(400, VALIDATION_PROBLEM) else {
            unreachable!()
        };
        let text = api_message(&problem, false);
        assert_eq!(
            text,
            format!(
                "CreateSession: the service answered 400 Bad Request: One or more validation \
                 errors occurred. (invalid: queryParameters, subjectEmail){SERVICE_TEXT_HINT}"
            )
        );
        let Error::Api(plain) = api(500, "the subject jane.doe@example.com broke us") else {
            unreachable!()
        };
        let text = api_message(&plain, false);
        assert!(!text.contains("jane.doe"), "{text}");
        assert!(text.ends_with(SERVICE_TEXT_HINT), "{text}");
        // Nothing left out, nothing said.
        let Error::Api(bare) = api(404, "") else {
            unreachable!()
        };
        assert!(!api_message(&bare, false).contains("--show-service-text"));
    }

    #[test]
    fn readiness_has_exit_codes_of_its_own() {
        let codes = [
            Failure::ProvidersFailed(String::new()).exit_status(),
            Failure::ProvidersPending(String::new()).exit_status(),
            Failure::TimedOut(String::new()).exit_status(),
        ];
        assert_eq!(codes, [7, 8, EXIT_WAIT_TIMED_OUT]);
        // None of them is taken for another failure.
        for other in [EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_AUTH, EXIT_NOT_FOUND] {
            assert!(!codes[..2].contains(&other));
        }
    }

    #[test]
    fn validation_errors_are_listed_field_by_field() {
        let Error::Api(problem) = api(400, VALIDATION_PROBLEM) else {
            unreachable!()
        };
        let text = api_message(&problem, true);
        assert!(
            text.contains(": jane.doe@example.com was refused"),
            "{text}"
        );
        assert!(
            text.starts_with("CreateSession: the service answered 400 Bad Request: One or more"),
            "{text}"
        );
        assert!(
            text.contains("\n  queryParameters: required\n  queryParameters: at least one"),
            "{text}"
        );
        // The escape sequence is neutralised where the message is written (crate::terminal).
        assert!(
            text.contains("\n  subjectEmail: not an e-mail \u{1b}[31maddress"),
            "{text}"
        );
        assert_eq!(
            crate::terminal::safe_text(&text).lines().last(),
            Some("  subjectEmail: not an e-mail \u{fffd}[31maddress")
        );
        assert_eq!(
            Failure::from(api(400, VALIDATION_PROBLEM)).exit_status(),
            EXIT_FAILURE
        );
    }
}
