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
/// operation the client does not have would not compile.
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
