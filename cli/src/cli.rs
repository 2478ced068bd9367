//! The command line: global options and the command tree (clap derive).

use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use chrono::NaiveDate;
use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
use creditdata_client::rate_limit::{ParseRateLimitError, RateLimit};
use creditdata_client::session_datasets::Dataset;
use creditdata_client::types::CustomerProgressStatusInput;
use uuid::Uuid;

use crate::profile::TokenStoreKind;
use crate::query::QuerySpec;

/// What `--help` says after the options: exit codes and the environment.
const AFTER_HELP: &str = "\
EXIT STATUS:
  0    success
  1    the service or the network failed, or a local file could not be written
       (stderr names the operation and says what the service answered)
  2    usage or configuration error: a bad option or value, a bad CREDITDATA_*
       variable, an unreadable secret file, a mistake in config.toml, an unusable
       token store (a sign-in file others can read) (nothing was sent)
  3    authentication failed: no access token could be obtained, or the service
       refused it (401); the sign-in has expired or was revoked (run
       `creditdata login` again); `auth status`/`auth token`: not signed in
  4    not found: the service answered 404 (unknown session, statement, file...)
  5    `sessions wait`: the session ended without the customer completing it
       (EXPIRED, DELIVERY_FAILED)
  6    `sessions wait`: the wait timed out while the customer or providers were
       still awaited (stderr names what is pending)
  7    the data is final but some providers failed or refused (`sessions wait`,
       `datasets all`; stderr names dataset, provider, country, status)
  8    some providers have not answered yet: what was printed or exported is
       partial (`datasets all`, `export`; stderr names them); try again later
  130  interrupted (Ctrl-C); a download in progress leaves no partial file

ENVIRONMENT (a command-line option wins over its variable):
  CREDITDATA_BASE_URL        base URL of the service             (--base-url)
  CREDITDATA_ENVIRONMENT     production, test, mock or a URL     (--environment)
  CREDITDATA_PRODUCTION_URL, CREDITDATA_TEST_URL, CREDITDATA_MOCK_URL
                             where those environments are
  CREDITDATA_TOKEN_URL       OAuth2 token endpoint               (--token-url)
  CREDITDATA_ISSUER          or an OpenID Connect issuer         (--issuer)
                             (without client credentials: the issuer to sign in with)
  CREDITDATA_PRODUCTION_ISSUER, CREDITDATA_TEST_ISSUER
                             where people of those environments sign in
  CREDITDATA_CLIENT_ID       client id                           (--client-id)
  CREDITDATA_CLIENT_SECRET   client secret                       (--client-secret-file)
  CREDITDATA_TOKEN           a static bearer token               (--token-file)
  CREDITDATA_CLIENT_AUTH     body (default) or basic
  CREDITDATA_SCOPES          scopes to request (client credentials)
  CREDITDATA_PROFILE         profile of the configuration file   (--profile)
  CREDITDATA_TOKEN_STORE     keyring or file                     (--token-store)
  CREDITDATA_CONFIG          configuration directory [default: ~/.config/creditdata]
  RUST_LOG                   tracing filter (overrides -v)
  OTEL_EXPORTER_OTLP_ENDPOINT  an OpenTelemetry collector (OTLP/HTTP): each command
                             sends its trace there (the other OTEL_* variables too:
                             see cli/README.md, \"Telemetry\")
Secrets are read only from the environment or from files, never from options.

SIGNING IN: `creditdata login` signs you in as yourself; every command then acts in
your name (without client credentials or a token configured). Settings come from the
option, else the variable, else the profile (config.toml), else the default.";

/// What `export --help` says after the options.
const EXPORT_AFTER_HELP: &str = "\
A rerun into the same directory resumes: files that verify against their session's
manifest.json (size and SHA-256) are kept, missing or altered ones fetched again.
A session whose providers had not all answered is partial: a rerun reads its datasets
again (the export does not wait for them: rerun later, or `sessions wait` first).
Progress goes to stderr (a bar on a terminal, JSON lines otherwise); the summary to stdout.

EXIT STATUS:
  0    every matching session is complete in the directory (providers that failed or
       refused are named on stderr and in the manifests: their data is final)
  8    some sessions are partial: providers had not answered yet (named on stderr);
       run again later
  1    some files could not be exported (named on stderr and in the sessions'
       manifest.json; run again to fetch them), the search failed, or a local
       file could not be written
  2    usage: a bad option, --out is a file, another export is writing into it
  3    authentication failed (the export stops)
  130  interrupted (Ctrl-C): what is complete is recorded; run again to resume

To split a very large export across machines, give each its own --from/--to range
and its own --out, and each a share of the service's rate limit (--rate-limit):
see cli/README.md, \"Export\".";

/// `creditdata`: the consumer credit-data service from a shell.
///
/// Every operation of the service: create and follow sessions, read their datasets, download
/// their files. Output is a table on a terminal and JSON otherwise (one document, or JSON Lines
/// for lists that stream); errors go to stderr and the exit status says what kind of failure
/// it was.
#[derive(Debug, Parser)]
#[command(name = "creditdata", version, after_long_help = AFTER_HELP, after_help = "Exit status: 0 ok, 1 service/network failure, 2 usage, 3 authentication, 4 not found, 5/6 `sessions wait`, 7 providers failed, 8 providers pending (see --help).")]
pub struct Cli {
    /// Options that apply to every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Options that apply to every command (also accepted after the command name). Every
/// command's help lists them under a heading of their own, after the command's options.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Base URL of the service [env: CREDITDATA_BASE_URL].
    #[arg(
        long,
        global = true,
        value_name = "URL",
        conflicts_with = "environment"
    )]
    pub base_url: Option<String>,
    /// production, test, mock or a base URL [env: CREDITDATA_ENVIRONMENT; default: mock, said on stderr].
    #[arg(long, global = true, value_name = "ENV")]
    pub environment: Option<String>,
    /// OAuth2 token endpoint for client credentials [env: CREDITDATA_TOKEN_URL].
    #[arg(long, global = true, value_name = "URL", conflicts_with = "issuer")]
    pub token_url: Option<String>,
    /// OpenID Connect issuer: of client credentials (instead of --token-url), or, without them,
    /// the one people sign in with [env: CREDITDATA_ISSUER].
    #[arg(long, global = true, value_name = "URL")]
    pub issuer: Option<String>,
    /// OAuth2 client id of client credentials; with `login`, the sign-in client [env:
    /// CREDITDATA_CLIENT_ID, client credentials only].
    #[arg(long, global = true, value_name = "ID")]
    pub client_id: Option<String>,
    /// Read the client secret from this file [env: CREDITDATA_CLIENT_SECRET holds the secret itself].
    #[arg(long, global = true, value_name = "PATH")]
    pub client_secret_file: Option<PathBuf>,
    /// Read a static bearer token from this file [env: CREDITDATA_TOKEN holds the token itself].
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        conflicts_with = "client_secret_file"
    )]
    pub token_file: Option<PathBuf>,
    /// Do not retry failed requests (by default transient failures of idempotent calls are retried).
    #[arg(long, global = true)]
    pub no_retries: bool,
    /// Time limit of one JSON request attempt, in seconds (0: none; default 30). Downloads are
    /// limited only by a 60 s silence.
    #[arg(long, global = true, value_name = "SECS")]
    pub request_timeout: Option<u64>,
    /// Output format [default: table when stdout is a terminal, JSON otherwise].
    #[arg(long, global = true, value_enum, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
    /// The profile of the configuration file to use [env: CREDITDATA_PROFILE; default: default].
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Where the sign-in is kept: the system keyring or an owner-only file [env:
    /// CREDITDATA_TOKEN_STORE; default: the profile's, else the keyring where one works].
    #[arg(long, global = true, value_enum, value_name = "STORE")]
    pub token_store: Option<TokenStoreKind>,
    /// Log what happens to stderr (-v info, -vv debug, -vvv trace); never shows secrets.
    #[arg(long, short = 'v', global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Also print what the service wrote in an error answer (a problem's detail, each
    /// validation message, a text body). Off by default: it may echo personal data into a log.
    #[arg(long, global = true)]
    pub show_service_text: bool,
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One JSON document, or JSON Lines (one object per line) for streamed lists.
    Json,
    /// Aligned columns for people.
    Table,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The commands that call the service.
    #[command(flatten)]
    Service(ServiceCommand),
    /// Every operation of the service this tool knows, and the command that runs it (no network).
    Operations,
    /// Sign in as yourself (in the browser) and keep the sign-in in the profile's token store.
    Login(LoginArgs),
    /// Sign out: revoke the profile's sign-in at the identity provider and forget it here.
    Logout,
    /// The profile's sign-in: who, until when, and an access token for scripts.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Export every session matching the filters to a directory: datasets, reports, statements,
    /// attachments, images, source files, and a manifest with sizes and SHA-256. Resumable.
    #[command(after_long_help = EXPORT_AFTER_HELP)]
    Export(ExportArgs),
}

/// The commands that call the service, with the credentials configured or the profile's
/// sign-in.
#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Create, search, follow and amend sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Read a session's JSON datasets.
    #[command(subcommand)]
    Datasets(DatasetsCommand),
    /// Download a session's files (PDF report, Excel, TSV, attachments, images, source files).
    #[command(subcommand)]
    Download(DownloadCommand),
    /// Account statements as data.
    #[command(subcommand)]
    Statement(StatementCommand),
    /// The countries and data packages these credentials may use.
    Packages,
}

/// `login`
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Do not open a browser: print the sign-in address on stderr, to open wherever you like
    /// (on this machine: the answer comes back to a port on 127.0.0.1).
    #[arg(long)]
    pub no_browser: bool,
    /// How long to wait for the sign-in to finish in the browser.
    #[arg(long, default_value = "5m", value_parser = parse_duration, value_name = "DURATION")]
    pub timeout: Duration,
    /// A scope to ask for instead of the profile's (repeat it for several; `openid` is always
    /// asked for). Recorded in the profile. Some providers issue a refresh token only for
    /// `--scope offline_access --prompt consent`.
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// The `prompt` to send (`login`, `consent`, `select_account`, `none`). Recorded in the
    /// profile.
    #[arg(long, value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// Keep the new sign-in even when it names another person (or identity provider) than the
    /// profile's current one; without it such a sign-in is ended and nothing changes.
    #[arg(long)]
    pub force: bool,
}

/// `auth ...`
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Who is signed in with the profile, where, until when, with which scopes, and where the
    /// sign-in is kept; never a token. Exit status 3 when not signed in. Reads only what is
    /// stored: nothing is sent.
    Status,
    /// Print the profile's access token on stdout (renewed first if it is about to expire),
    /// for scripts: `TOKEN=$(creditdata auth token)`.
    Token {
        /// Print it even when stdout is a terminal (where it would stay in the scrollback).
        #[arg(long)]
        force: bool,
    },
}

/// `sessions ...`
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Search sessions (newest first), printing them as the pages arrive.
    List(ListArgs),
    /// Show one session.
    Get {
        /// The session id.
        id: Uuid,
    },
    /// Create a session: the service e-mails the data subject for consent.
    Create {
        /// The data subject's e-mail address.
        #[arg(long, value_name = "EMAIL")]
        email: String,
        /// A country and its data packages, e.g. GBR:CREDIT_HISTORY,SCORE (repeatable; package
        /// names in any case, `-` or `_`).
        #[arg(
            long = "query",
            short = 'q',
            required = true,
            value_name = "CCC:PACKAGE,..."
        )]
        queries: Vec<QuerySpec>,
    },
    /// Append countries or data packages to a session.
    Update {
        /// The session id.
        id: Uuid,
        /// A country and its data packages to append, e.g. DEU:SCORE (repeatable).
        #[arg(
            long = "query",
            short = 'q',
            required = true,
            value_name = "CCC:PACKAGE,..."
        )]
        queries: Vec<QuerySpec>,
    },
    /// Extend the customer input deadline (by the days of the user's configuration).
    Extend {
        /// The session id.
        id: Uuid,
    },
    /// Send the onboarding e-mail to the data subject again.
    Resend {
        /// The session id.
        id: Uuid,
    },
    /// Show the session's unfulfilled input requirements.
    Requirements {
        /// The session id.
        id: Uuid,
    },
    /// Wait until the session's data has arrived (the customer completed and every provider
    /// answered), or with `--until customer` only until the customer has acted. Exit 0 when
    /// ready (or completed), 7 when every provider answered but some failed or refused (named on
    /// stderr), 5 when the session expired or could not be delivered, 6 when the wait timed out
    /// (what is still pending is named on stderr). The data waited for and judged is that of
    /// the datasets named with `--dataset` (the ones your decision uses), of every dataset with
    /// `--every-dataset`, else of the default gate: the datasets of the API when this client
    /// was built (a dataset a later release adds is read, not waited for).
    Wait {
        /// The session id.
        id: Uuid,
        /// What to wait for: `ready`, the data (the customer completed and every provider of
        /// the requested packages gave its final answer), or `customer`, only the customer's
        /// consent (the providers may still be working: the datasets may be empty).
        #[arg(long, value_enum, default_value_t = WaitUntil::Ready, value_name = "WHAT")]
        until: WaitUntil,
        /// How long to wait in all (e.g. 90s, 15m, 1h): a deadline for every request of the
        /// wait, retries included; the command returns within it plus 2 s.
        #[arg(long, default_value = "15m", value_parser = parse_duration, value_name = "DURATION")]
        timeout: Duration,
        /// The first pause between two reads of the session; later pauses double.
        #[arg(long, default_value = "2s", value_parser = parse_duration, value_name = "DURATION")]
        interval: Duration,
        /// The longest pause between two reads.
        #[arg(long, default_value = "60s", value_parser = parse_duration, value_name = "DURATION")]
        max_interval: Duration,
        #[command(flatten)]
        gate: GateArgs,
    },
}

/// Which datasets `sessions wait` waits for and `datasets all` judges (exit 7 and 8).
#[derive(Debug, Clone, Default, Args)]
pub struct GateArgs {
    /// Wait for and judge this dataset (repeatable): the datasets your decision uses. A
    /// provider of any other dataset neither holds the wait nor fails the exit status. Without
    /// it, the default gate: the datasets of the API when this client was built.
    #[arg(long = "dataset", value_name = "NAME")]
    pub datasets: Vec<DatasetArg>,
    /// Wait for and judge every dataset read, those a later release of the API added included.
    #[arg(long, conflicts_with = "datasets")]
    pub every_dataset: bool,
}

/// What `sessions wait` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaitUntil {
    /// The data: the customer completed and every provider answered.
    Ready,
    /// The customer's consent only (`COMPLETED_BY_CUSTOMER`, or the session ended).
    Customer,
}

/// Filters of `sessions list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Subject e-mail contains this (case-insensitive at the mock; the service's rule is not published).
    #[arg(long, value_name = "TEXT")]
    pub email: Option<String>,
    /// Subject full name contains this.
    #[arg(long, value_name = "TEXT")]
    pub name: Option<String>,
    /// A requested country (ISO 3166-1 alpha-3, e.g. GBR).
    #[arg(long, value_name = "CCC")]
    pub country: Option<String>,
    /// Created on or after this day (UTC).
    #[arg(long, value_parser = parse_date, value_name = "YYYY-MM-DD")]
    pub from: Option<NaiveDate>,
    /// Created up to this day (UTC).
    #[arg(long, value_parser = parse_date, value_name = "YYYY-MM-DD")]
    pub to: Option<NaiveDate>,
    /// Customer progress status.
    #[arg(long, value_enum, ignore_case = true)]
    pub status: Option<StatusArg>,
    /// Name of the user who created the session.
    #[arg(long, value_name = "TEXT")]
    pub created_by: Option<String>,
    /// Organizational unit name.
    #[arg(long, value_name = "TEXT")]
    pub unit: Option<String>,
    /// Sessions per request (`Take`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i32::MAX as i64), value_name = "N")]
    pub page_size: Option<u32>,
    /// Stop after this many sessions.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
}

/// `--max-listing-bytes` unless given: 1 GiB, some five million entries of the service's
/// listings (eight times the client's limit on an answer it holds whole).
pub const DEFAULT_MAX_LISTING_BYTES: u64 = 1 << 30;

/// `export`: where, which sessions, how fast.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The directory to export to (created if missing, owner-only). A rerun into the same
    /// directory resumes: files verified against the manifest are kept, the rest fetched.
    #[arg(long = "out", short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Requests in flight at once, across all sessions.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64), value_name = "N")]
    pub concurrency: u16,
    /// The most files taken from one listing of a session (its account statements,
    /// attachments, identity verifications or source files; and all the images of its identity
    /// verifications together). More is recorded as the session's failure (exit 1), so memory
    /// stays bounded whatever a listing says.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000), value_name = "N")]
    pub max_listed_files: u32,
    /// The largest listing (account statements, attachments, identity verifications, source
    /// files, and each identity verification's images) taken, in bytes. A listing is written to its file as it arrives and read back
    /// one entry at a time, so memory does not grow with it; this bounds the disk it takes. A
    /// larger one is recorded as the session's failure (exit 1).
    #[arg(long, default_value_t = DEFAULT_MAX_LISTING_BYTES, value_parser = clap::value_parser!(u64).range(1..), value_name = "BYTES")]
    pub max_listing_bytes: u64,
    /// Stay under this request rate, e.g. 50/s, 600/min (all requests of this export, retries
    /// included; slows down by itself when the service answers 429) [env: CREDITDATA_RATE_LIMIT].
    #[arg(long, value_parser = parse_rate_limit, value_name = "N/s|N/min|N/h")]
    pub rate_limit: Option<RateLimit>,
    /// Share --rate-limit with every process of the same API client through this Redis
    /// (redis://HOST:PORT/DB, rediss:// for TLS), and share the work: exports started with the
    /// same filters each claim sessions there, so each session is exported by one of them. A
    /// password goes in the variable only [env: CREDITDATA_RATE_LIMIT_STORE].
    #[arg(long, value_name = "redis://HOST:PORT/DB")]
    pub rate_limit_store: Option<String>,
    /// With a store: how long a session claimed by a worker that stopped (killed, cut off)
    /// stays its own before another worker takes it; renewed every third of it meanwhile.
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub lease_ttl: Duration,
    /// With a store, share only the rate limit: export every matching session, as without one.
    #[arg(long)]
    pub no_share_work: bool,
    /// Also export the datasets the service deprecates (the manifests list them as skipped
    /// otherwise).
    #[arg(long)]
    pub include_deprecated: bool,
    /// Which sessions: the filters of `sessions list` (last: `--help` lists them under a
    /// heading of their own, after export's own options).
    #[command(flatten, next_help_heading = "Which sessions")]
    pub filters: ListArgs,
}

/// `customerProgressStatus` values, as typed on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    /// WAITING_FOR_CUSTOMER
    #[value(alias = "waiting_for_customer")]
    WaitingForCustomer,
    /// COMPLETED_BY_CUSTOMER
    #[value(alias = "completed_by_customer")]
    CompletedByCustomer,
    /// EXPIRED
    Expired,
    /// DELIVERY_FAILED
    #[value(alias = "delivery_failed")]
    DeliveryFailed,
}

impl From<StatusArg> for CustomerProgressStatusInput {
    fn from(status: StatusArg) -> Self {
        match status {
            StatusArg::WaitingForCustomer => CustomerProgressStatusInput::WaitingForCustomer,
            StatusArg::CompletedByCustomer => CustomerProgressStatusInput::CompletedByCustomer,
            StatusArg::Expired => CustomerProgressStatusInput::Expired,
            StatusArg::DeliveryFailed => CustomerProgressStatusInput::DeliveryFailed,
        }
    }
}

/// `datasets ...`
#[derive(Debug, Subcommand)]
pub enum DatasetsCommand {
    /// One JSON dataset of a session.
    Get {
        /// The session id.
        id: Uuid,
        /// The dataset (its path below the session; `datasets get --help` lists them).
        #[arg(value_enum)]
        name: DatasetArg,
    },
    /// Every JSON dataset of a session, as one object keyed by dataset name: what the service
    /// has now. Providers that have not answered yet (exit 8) or that failed or refused (exit 7)
    /// are named on stderr (dataset, provider, country, status); exit 1 when a dataset could not
    /// be read. Judged on the datasets named with `--dataset`, on every one with
    /// `--every-dataset`, else on the default gate (the datasets of the API when this client
    /// was built); every dataset is printed either way.
    All {
        /// The session id.
        id: Uuid,
        /// Also read the datasets the service deprecates.
        #[arg(long)]
        include_deprecated: bool,
        #[command(flatten)]
        gate: GateArgs,
    },
    /// The images of one identity verification (ids for `download image`).
    Images {
        /// The session id.
        id: Uuid,
        /// The identity verification id (from `datasets get ID identity-verifications`).
        verification_id: String,
    },
    /// One source file's metadata.
    SourceFile {
        /// The session id.
        id: Uuid,
        /// The source file id (from `datasets get ID source-files`).
        source_file_id: Uuid,
    },
}

/// `download ...`
#[derive(Debug, Subcommand)]
pub enum DownloadCommand {
    /// The PDF report.
    Pdf {
        /// The session id.
        id: Uuid,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// The transactions of all account statements, as Excel.
    TransactionsExcel {
        /// The session id.
        id: Uuid,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// One account statement, as Excel.
    StatementExcel {
        /// The session id.
        id: Uuid,
        /// The account statement id (from `datasets get ID account-statements`).
        statement_id: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// One account statement, as TSV (see also `statement rows`).
    StatementTsv {
        /// The session id.
        id: Uuid,
        /// The account statement id.
        statement_id: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// An attachment's content.
    Attachment {
        /// The session id.
        id: Uuid,
        /// The attachment id (from `datasets get ID attachments`).
        attachment_id: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// An identity-verification image.
    Image {
        /// The session id.
        id: Uuid,
        /// The identity verification id.
        verification_id: String,
        /// The image id (from `datasets images ID VERIFICATION_ID`).
        image_id: String,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// A source file (the original answer of a bureau or register), decoded from Base64.
    SourceFile {
        /// The session id.
        id: Uuid,
        /// The source file id (from `datasets get ID source-files`).
        source_file_id: Uuid,
        #[command(flatten)]
        target: TargetArgs,
    },
}

impl DownloadCommand {
    /// Where the download goes.
    pub fn target(&self) -> &TargetArgs {
        match self {
            DownloadCommand::Pdf { target, .. }
            | DownloadCommand::TransactionsExcel { target, .. }
            | DownloadCommand::StatementExcel { target, .. }
            | DownloadCommand::StatementTsv { target, .. }
            | DownloadCommand::Attachment { target, .. }
            | DownloadCommand::Image { target, .. }
            | DownloadCommand::SourceFile { target, .. } => target,
        }
    }
}

/// Where a download goes.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// A file, or an existing directory to put the server's file name in, or `-` for stdout
    /// (not a terminal) [default: the server's file name in the current directory].
    #[arg(long = "out", short = 'o', value_name = "PATH|DIR|-")]
    pub out: Option<PathBuf>,
    /// Replace an existing file (without it, a file that appears during the download is kept
    /// and the download discarded).
    #[arg(long)]
    pub force: bool,
}

/// `statement ...`
#[derive(Debug, Subcommand)]
pub enum StatementCommand {
    /// The rows of one account statement (its TSV, parsed): JSON Lines keyed by column, or a table.
    Rows {
        /// The session id.
        id: Uuid,
        /// The account statement id (from `datasets get ID account-statements`).
        statement_id: String,
    },
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|e| format!("{e} (examples: 90s, 15m, 1h, 500ms)"))
}

fn parse_rate_limit(text: &str) -> Result<RateLimit, String> {
    text.parse().map_err(|e: ParseRateLimitError| e.to_string())
}

fn parse_date(text: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .map_err(|e| format!("{e}: expected a date as YYYY-MM-DD"))
}

/// A dataset as typed on the command line: one of [`Dataset::ALL`], by its name
/// (`person-details`). The client generates the list from the API description, so a dataset
/// the vendor adds is a value here after `cargo xtask regen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatasetArg(pub Dataset);

static DATASET_ARGS: LazyLock<Vec<DatasetArg>> =
    LazyLock::new(|| Dataset::ALL.into_iter().map(DatasetArg).collect());

impl ValueEnum for DatasetArg {
    fn value_variants<'a>() -> &'a [Self] {
        DATASET_ARGS.as_slice()
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let summary = self.0.operation().summary;
        let help = if self.0.deprecated() {
            format!("{summary} (deprecated by the service)")
        } else {
            summary.to_string()
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, CommandFactory};

    #[test]
    fn the_command_tree_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The sections of a long help text: each heading (`Options:`) with the long flags listed
    /// under it.
    fn help_sections(help: &str) -> Vec<(String, Vec<String>)> {
        let mut sections: Vec<(String, Vec<String>)> = Vec::new();
        for line in help.lines() {
            if !line.starts_with(' ') && line.ends_with(':') {
                sections.push((line.trim_end_matches(':').to_string(), Vec::new()));
            } else if let Some((_, flags)) = sections.last_mut() {
                // `  -o, --out <DIR>` or `      --base-url <URL>`: an argument's own line.
                let trimmed = line.trim_start();
                let flag = trimmed
                    .split([',', ' '])
                    .find(|word| word.starts_with("--"))
                    .map(|word| word.trim_end_matches("..."))
                    .filter(|_| trimmed.starts_with('-') && line.len() - trimmed.len() <= 6);
                flags.extend(flag.map(str::to_string));
            }
        }
        sections
    }

    fn long_flags(arguments: impl Iterator<Item = clap::Arg>) -> Vec<String> {
        arguments
            .filter_map(|a| a.get_long().map(|long| format!("--{long}")))
            .collect()
    }

    #[test]
    fn export_help_shows_its_own_options_apart_from_the_global_ones() {
        let mut cli = Cli::command();
        cli.build();
        let global = long_flags(cli.get_arguments().filter(|a| a.is_global_set()).cloned());
        assert!(global.contains(&"--base-url".to_string()), "{global:?}");
        let export = cli
            .find_subcommand_mut("export")
            .expect("an export command");
        let help = export.render_long_help().to_string();
        let own = long_flags(
            ExportArgs::augment_args(clap::Command::new("export"))
                .get_arguments()
                .cloned(),
        );
        let sections = help_sections(&help);
        let global_sections: Vec<&(String, Vec<String>)> = sections
            .iter()
            .filter(|(_, flags)| flags.iter().any(|f| global.contains(f)))
            .collect();
        assert_eq!(
            global_sections.len(),
            1,
            "the global options are under one heading of their own:\n{help}"
        );
        let (heading, listed) = global_sections[0];
        assert_eq!(heading, "Global options", "{help}");
        assert_eq!(
            listed.iter().filter(|f| *f != "--help").collect::<Vec<_>>(),
            global.iter().collect::<Vec<_>>(),
            "every global option, and only those, under {heading}:\n{help}"
        );
        let shown_elsewhere: Vec<&String> = sections
            .iter()
            .filter(|(h, _)| h != heading)
            .flat_map(|(_, flags)| flags)
            .collect();
        for flag in &own {
            assert!(
                shown_elsewhere.contains(&flag),
                "export's own {flag} is not listed apart from the global options:\n{help}"
            );
        }
        // Its options proper come first, under `Options`, the session filters after them.
        let filters = long_flags(
            ListArgs::augment_args(clap::Command::new("list"))
                .get_arguments()
                .cloned(),
        );
        let options = &sections
            .iter()
            .find(|(h, _)| h == "Options")
            .unwrap_or_else(|| panic!("no Options heading:\n{help}"))
            .1;
        for flag in own.iter().filter(|f| !filters.contains(f)) {
            assert!(
                options.contains(flag),
                "{flag} is not under Options:\n{help}"
            );
        }
        for flag in &filters {
            assert!(
                !options.contains(flag),
                "the filter {flag} is among the options:\n{help}"
            );
        }
    }

    #[test]
    fn durations_and_dates_parse() {
        assert_eq!(parse_duration("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("soon").is_err());
        assert_eq!(
            parse_date("2026-02-03").unwrap(),
            NaiveDate::from_ymd_opt(2026, 2, 3).unwrap()
        );
        assert!(parse_date("03.02.2026").is_err());
    }

    #[test]
    fn every_dataset_is_a_value_named_as_on_the_command_line() {
        for dataset in Dataset::ALL {
            let parsed = DatasetArg::from_str(dataset.name(), false)
                .unwrap_or_else(|e| panic!("{}: {e}", dataset.name()));
            assert_eq!(parsed, DatasetArg(dataset));
            let help = parsed
                .to_possible_value()
                .and_then(|v| v.get_help().cloned());
            assert!(
                help.is_some_and(|h| !h.to_string().is_empty()),
                "{}",
                dataset.name()
            );
        }
        assert!(DatasetArg::from_str("no-such-dataset", false).is_err());
    }
}
