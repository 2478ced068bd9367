//! `creditdata operations`: every operation the client knows, the command that runs it, and its
//! `Client` method. An operation a vendor release adds is listed the day it is generated; it has
//! a command at once when it is a dataset (derived), else once one is written here.

use creditdata_client::builder;
use creditdata_client::operation::{Operation, OperationMeta};
use serde_json::json;

use crate::failure::Failure;
use crate::output::Output;
use crate::table::Table;

/// The operation a builder sends, named through the generated client: a table that named an
/// operation the client does not have would not compile. (A builder the service deprecates is
/// named all the same: the crate allows `deprecated`, see `main.rs`.)
macro_rules! op {
    ($builder:ident) => {
        <builder::$builder<'static> as Operation>::META
    };
}

/// The hand-written commands and the operation each runs. The datasets' commands are not here:
/// they are derived from the client's list ([`crate::datasets::command_for_dataset`]).
fn commands() -> [(&'static OperationMeta, &'static str); 17] {
    [
        (op!(GetSessions), "sessions list"),
        (op!(CreateSession), "sessions create"),
        (op!(GetSession), "sessions get ID"),
        (op!(UpdateSession), "sessions update ID"),
        (op!(ExtendCustomerInputDeadline), "sessions extend ID"),
        (op!(ResendCustomerNotification), "sessions resend ID"),
        (op!(GetInputRequirements), "sessions requirements ID"),
        (op!(GetPdfReport), "download pdf ID"),
        (op!(GetSourceFile), "datasets source-file ID SOURCE_FILE_ID"),
        (
            op!(GetSourceFileContent),
            "download source-file ID SOURCE_FILE_ID",
        ),
        (op!(GetConsumerPackages), "packages"),
        (
            op!(GetAccountStatementTransactionsExcel),
            "download transactions-excel ID",
        ),
        (
            op!(GetAccountStatementExcel),
            "download statement-excel ID STATEMENT_ID",
        ),
        (
            op!(GetAttachmentContent),
            "download attachment ID ATTACHMENT_ID",
        ),
        (
            op!(GetIdentityVerificationImages),
            "datasets images ID VERIFICATION_ID",
        ),
        (
            op!(GetIdentityVerificationImageContent),
            "download image ID VERIFICATION_ID IMAGE_ID",
        ),
        (
            op!(GetAccountStatementTsv),
            "statement rows ID STATEMENT_ID / download statement-tsv",
        ),
    ]
}

/// The commands that run an operation, if the tool has one: its own command first, then the
/// dataset command when the operation is a dataset.
pub fn command_for(operation: &OperationMeta) -> Option<String> {
    let own = commands()
        .into_iter()
        .find(|(meta, _)| meta.id == operation.id)
        .map(|(_, command)| command.to_string());
    let dataset = crate::datasets::command_for_dataset(operation);
    match (own, dataset) {
        (Some(own), Some(dataset)) => Some(format!("{own} / {dataset}")),
        (own, dataset) => own.or(dataset),
    }
}

/// The words of the hand-written command a command line runs (`sessions resend`), without its
/// arguments: the words of a table entry up to its first placeholder (`ID`).
fn command_words(command: &str) -> Vec<&str> {
    command
        .split_whitespace()
        .take_while(|word| word.chars().any(|c| c.is_ascii_lowercase()))
        .collect()
}

/// The operations the command `words` (the subcommands given, `["sessions", "resend"]`) runs,
/// as the table of hand-written commands says; an entry naming two commands (`... / download
/// statement-tsv`) counts for both.
fn run_by<'t>(
    table: &'t [(&'static OperationMeta, &'static str)],
    words: &[&str],
) -> Vec<&'t OperationMeta> {
    table
        .iter()
        .filter(|(_, command)| {
            command
                .split(" / ")
                .any(|alternative| command_words(alternative) == words)
        })
        .map(|(meta, _)| *meta)
        .collect()
}

/// What the command `words` prints before it runs when the service deprecates an operation it
/// runs: one line per such operation, read from the generated metadata, so a deprecation the
/// vendor publishes reaches the user the day the client is regenerated.
fn deprecation_warnings(
    table: &[(&'static OperationMeta, &'static str)],
    words: &[&str],
) -> Vec<String> {
    run_by(table, words)
        .into_iter()
        .filter(|meta| meta.deprecated)
        .map(|meta| {
            format!(
                "warning: `creditdata {}` runs {} ({} {}), which the service deprecates: it \
                 still answers, but a later release may remove it",
                words.join(" "),
                meta.id,
                meta.method,
                meta.path
            )
        })
        .collect()
}

/// Tells the user on stderr when the command `words` runs an operation the service deprecates
/// (datasets say so themselves: `datasets get`).
pub fn warn_if_deprecated(words: &[&str]) {
    for line in deprecation_warnings(&commands(), words) {
        crate::terminal::note(&line);
    }
}

/// Prints every operation.
pub fn run(out: Output) -> Result<(), Failure> {
    let all = &creditdata_client::operations::ALL;
    if out.is_json() {
        let list: Vec<_> = all
            .iter()
            .map(|op| {
                json!({
                    "operationId": op.id,
                    "method": op.method,
                    "path": op.path,
                    "summary": op.summary,
                    "deprecated": op.deprecated,
                    "command": command_for(op).map(|c| format!("creditdata {c}")),
                    "client": format!("Client::{}", op.rust_name),
                })
            })
            .collect();
        return out.document(&list);
    }
    let mut table = Table::new(["METHOD", "PATH", "OPERATION", "DEPRECATED", "COMMAND"]);
    for op in all {
        table.row([
            op.method.to_string(),
            op.path.to_string(),
            op.id.to_string(),
            if op.deprecated { "yes" } else { "" }.to_string(),
            // An operation the vendor added that no command runs yet is still one call away.
            command_for(op).unwrap_or_else(|| format!("(none yet: Client::{})", op.rust_name)),
        ]);
    }
    out.text(&table.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use creditdata_client::operation::ResponseKind;

    const fn meta(id: &'static str, deprecated: bool) -> OperationMeta {
        OperationMeta {
            id,
            rust_name: "",
            method: "POST",
            path: "/v1/things/{id}/actions/poke",
            summary: "",
            idempotent: false,
            deprecated,
            response: ResponseKind::Json,
        }
    }

    static POKE: OperationMeta = meta("PokeThing", true);
    static READ: OperationMeta = meta("ReadThing", false);

    #[test]
    fn a_command_running_a_deprecated_operation_says_so_and_others_do_not() {
        let table = [
            (&POKE, "things poke ID"),
            (&READ, "things read ID / download thing ID"),
        ];
        let warnings = deprecation_warnings(&table, &["things", "poke"]);
        assert_eq!(
            warnings,
            ["warning: `creditdata things poke` runs PokeThing (POST \
              /v1/things/{id}/actions/poke), which the service deprecates: it still answers, but \
              a later release may remove it"]
        );
        assert!(deprecation_warnings(&table, &["things", "read"]).is_empty());
        assert!(deprecation_warnings(&table, &["things"]).is_empty());
        assert_eq!(run_by(&table, &["download", "thing"]).len(), 1);
    }

    #[test]
    fn every_hand_written_command_is_found_by_its_words_and_warns_as_its_operation_is_marked() {
        for (meta, command) in commands() {
            for alternative in command.split(" / ") {
                let words = command_words(alternative);
                assert!(!words.is_empty(), "{command}");
                assert!(
                    run_by(&commands(), &words).iter().any(|m| m.id == meta.id),
                    "{command}"
                );
                assert_eq!(
                    !deprecation_warnings(&commands(), &words).is_empty(),
                    meta.deprecated,
                    "{command}"
                );
            }
        }
    }

    #[test]
    fn every_hand_written_command_runs_another_operation() {
        let table = commands();
        for (index, (meta, _)) in table.iter().enumerate() {
            assert!(
                !table[..index].iter().any(|(other, _)| other.id == meta.id),
                "{} has two commands",
                meta.id
            );
        }
    }
}
