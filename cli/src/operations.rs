//! `creditdata operations`: every operation the client knows, and the command that runs it.

use creditdata_client::operation::OperationMeta;
use serde_json::json;

use crate::failure::Failure;
use crate::output::Output;
use crate::table::Table;

/// The command that runs an operation, by operationId (the datasets' plain GETs are found by
/// path, see [`crate::datasets::command_for_path`]).
const COMMANDS: &[(&str, &str)] = &[
    ("GetSessions", "sessions list"),
    ("CreateSession", "sessions create"),
    ("GetSession", "sessions get ID"),
    ("UpdateSession", "sessions update ID"),
    ("ExtendCustomerInputDeadline", "sessions extend ID"),
    ("ResendCustomerNotification", "sessions resend ID"),
    ("GetInputRequirements", "sessions requirements ID"),
    ("GetPdfReport", "download pdf ID"),
    ("GetSourceFile", "datasets source-file ID SOURCE_FILE_ID"),
    (
        "GetSourceFileContent",
        "download source-file ID SOURCE_FILE_ID",
    ),
    ("GetConsumerPackages", "packages"),
    (
        "GetAccountStatementTransactionsExcel",
        "download transactions-excel ID",
    ),
    (
        "GetAccountStatementExcel",
        "download statement-excel ID STATEMENT_ID",
    ),
    (
        "GetAttachmentContent",
        "download attachment ID ATTACHMENT_ID",
    ),
    (
        "GetIdentityVerificationImages",
        "datasets images ID VERIFICATION_ID",
    ),
    (
        "GetIdentityVerificationImageContent",
        "download image ID VERIFICATION_ID IMAGE_ID",
    ),
    (
        "GetAccountStatementTsv",
        "statement rows ID STATEMENT_ID / download statement-tsv",
    ),
];

/// The command for one operation, if the tool has one.
pub fn command_for(operation: &OperationMeta) -> Option<String> {
    COMMANDS
        .iter()
        .find(|(id, _)| *id == operation.id)
        .map(|(_, command)| (*command).to_string())
        .or_else(|| crate::datasets::command_for_path(operation.path))
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
            command_for(op).unwrap_or_default(),
        ]);
    }
    out.text(&table.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_a_command() {
        for op in &creditdata_client::operations::ALL {
            assert!(
                command_for(op).is_some(),
                "no command runs {} ({} {})",
                op.id,
                op.method,
                op.path
            );
        }
        for (id, _) in COMMANDS {
            assert!(
                creditdata_client::operations::ALL
                    .iter()
                    .any(|op| op.id == *id),
                "{id} is not an operation of the client"
            );
        }
    }
}
