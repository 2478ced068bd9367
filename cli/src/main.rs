//! `creditdata`: the consumer credit-data service from a shell (see `creditdata --help` and
//! `cli/README.md`).

// The command runs whatever the service offers, deprecated or not: a deprecation the vendor
// publishes must not stop it from compiling (clippy denies warnings). The user is told when a
// command runs a deprecated operation (`operations::warn_if_deprecated`, `datasets get`), and
// `creditdata operations` marks each one.
#![allow(deprecated)]

mod answer;
mod cli;
mod datasets;
mod download;
mod export;
mod failure;
mod operations;
mod output;
mod profile;
mod query;
mod readiness;
mod sessions;
mod settings;
mod sign_in;
mod table;
mod telemetry;
mod terminal;
#[cfg(test)]
mod test_support;
mod token_lock;
mod token_store;

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _};

use crate::cli::{Cli, Command, ServiceCommand};
use crate::failure::Failure;
use crate::output::Output;

fn main() -> ExitCode {
    // Usage errors exit 2 (clap's own status); --help and --version exit 0. As `Cli::parse()`,
    // keeping the matches: the trace's root span is named after the subcommands given.
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches)
        .unwrap_or_else(|error| error.format(&mut Cli::command()).exit());
    init_tracing(cli.global.verbose);
    operations::warn_if_deprecated(&subcommands(&matches));
    failure::show_service_text(cli.global.show_service_text);
    // Before any client is built: the client takes the propagator and tracer it finds.
    telemetry::start(&matches);
    let outcome = execute(cli);
    let status = outcome
        .as_ref()
        .err()
        .map_or(failure::EXIT_OK, Failure::exit_status);
    let code = match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    };
    // After the command's own message: an export warning, if any, comes last.
    telemetry::finish(status);
    code
}

/// The names of the subcommands given (`["sessions", "resend"]`), never an argument's value.
fn subcommands(matches: &clap::ArgMatches) -> Vec<&str> {
    let mut words = Vec::new();
    let mut current = matches;
    while let Some((name, below)) = current.subcommand() {
        words.push(name);
        current = below;
    }
    words
}

/// Runs the command on a runtime of its own, inside the trace's root span.
fn execute(cli: Cli) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::Local(format!("cannot start the async runtime: {error}")))?;
    // `export` stops by itself on Ctrl-C, so that its manifests describe what is on disk.
    let handles_interrupts = matches!(cli.command, Command::Export(_));
    runtime.block_on(telemetry::in_root(async {
        if handles_interrupts {
            return run(cli).await;
        }
        tokio::select! {
            outcome = run(cli) => outcome,
            // Dropping the command's future removes a download's temporary file.
            _ = tokio::signal::ctrl_c() => Err(Failure::Interrupted),
        }
    }))
}

/// Tracing to stderr: `RUST_LOG` if set, else by `-v` count (warnings only without it).
fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(match verbose {
            0 => "warn",
            1 => "warn,creditdata_client=info,creditdata=info",
            2 => "warn,creditdata_client=debug,creditdata=debug",
            _ => "info,creditdata_client=trace,creditdata=trace",
        }),
    };
    // Through the terminal gate, like every other output: log fields can quote the service.
    // Without colours, since the gate would turn their escape sequences into `�`.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(terminal::SafeStderr::new)
        .with_ansi(false)
        .try_init();
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let out = Output::new(cli.global.output);
    let env = |name: &str| std::env::var(name).ok();
    let global = &cli.global;
    let command = match cli.command {
        Command::Service(command) => command,
        Command::Operations => return operations::run(out),
        // Export builds its own client (its rate limit is part of the client).
        Command::Export(args) => return export::run(global, out, args).await,
        Command::Login(args) => {
            let context = settings::Context::read(global, &env)?;
            return sign_in::login(global, &env, &context, &args).await;
        }
        Command::Logout => {
            let context = settings::Context::read(global, &env)?;
            return sign_in::logout(&context).await;
        }
        Command::Auth(command) => {
            let context = settings::Context::read(global, &env)?;
            context.require_profile()?;
            return sign_in::auth(global, &env, &context, out, &command).await;
        }
    };
    let connection = settings::connect(global)?;
    let client = &connection.client;
    let outcome = match command {
        ServiceCommand::Sessions(command) => sessions::run(client, out, command).await,
        ServiceCommand::Datasets(command) => datasets::run(client, out, command).await,
        ServiceCommand::Download(command) => download::run(client, out, command).await,
        ServiceCommand::Statement(command) => download::statement(client, out, command).await,
        ServiceCommand::Packages => datasets::packages(client, out).await,
    };
    outcome.map_err(|failure| match failure {
        Failure::Client { error, .. } => Failure::Client {
            error,
            had_credentials: connection.has_credentials,
        },
        other => other,
    })
}
