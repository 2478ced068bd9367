//! operationIds: missing, duplicate, or distinct but the same Rust names after progenitor's
//! `sanitize`; each finding suggests a free name derived from the method and path by the rule of
//! [`crate::operation_names`].

use std::collections::HashMap;

use serde_json::{Value, json};

use super::Op;
use crate::operation_names::{self, Taken};
use crate::preflight::ctx::Ctx;
use crate::preflight::names::{self, CLIENT_METHODS};
use crate::preflight::report::{Problem, SuggestedFix};

/// Checks the operationIds of every operation together.
pub(super) fn check(ctx: &mut Ctx, ops: &[Op]) {
    let id_of = |op: &Op| {
        op.map
            .get("operationId")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    // The pipeline names an operation without operationId before preflight runs
    // (`operation_names`); a document checked on its own gets the same names suggested.
    let mut taken = Taken::of_ids(
        ops.iter()
            .filter_map(|op| op.map.get("operationId").and_then(Value::as_str)),
    );
    let mut suggest = |op: &Op| taken.claim(&operation_names::candidates(op.method, op.path));

    let mut exact: HashMap<String, &Op> = HashMap::new();
    let mut idents: HashMap<String, (&Op, String)> = HashMap::new();
    for op in ops {
        let label = op.label();
        // serde reads `null` as an absent optional field.
        let id_value = op.map.get("operationId").filter(|v| !v.is_null());
        let Some(id) = id_of(op) else {
            if id_value.is_none() {
                let name = suggest(op);
                ctx.report(
                    &op.loc,
                    Problem::MissingOperationId,
                    format!(
                        "{label} has no operationId. progenitor names the client method after it \
                         and refuses the document without one (`path {} is missing operation ID`).",
                        op.path
                    ),
                    SuggestedFix::update(
                        op.loc.path(),
                        format!("{label} needs an operationId; this one is derived from method and path, as the pipeline names it."),
                        json!({ "operationId": name }),
                    ),
                );
            }
            continue;
        };
        if let Some(first) = exact.get(&id) {
            let name = suggest(op);
            ctx.report(
                &op.loc.key("operationId"),
                Problem::DuplicateOperationId,
                format!(
                    "{label} has the operationId `{id}` of {} as well; progenitor refuses \
                     duplicates (`duplicate operation ID: {id}`).",
                    first.label()
                ),
                SuggestedFix::update(
                    op.loc.path(),
                    format!("A unique operationId for {label}, derived from method and path."),
                    json!({ "operationId": name }),
                ),
            );
            continue;
        }
        exact.insert(id.clone(), op);
        let (method, builder) = names::operation_idents(&id);
        let clash = idents
            .get(&method)
            .or_else(|| idents.get(&builder))
            .map(|(other, other_id)| format!("{} (operationId `{other_id}`)", other.label()));
        let clash = clash.or_else(|| {
            CLIENT_METHODS
                .contains(&method.as_str())
                .then(|| format!("the generated `Client::{method}`"))
        });
        if let Some(other) = clash {
            let name = suggest(op);
            ctx.report(
                &op.loc.key("operationId"),
                Problem::OperationNameCollision,
                format!(
                    "{label}: the operationId `{id}` becomes the method `{method}` and the builder \
                     `{builder}`, which {other} already takes. progenitor generates both and the \
                     code does not compile (and types it names after the operation are shared)."
                ),
                SuggestedFix::update(
                    op.loc.path(),
                    format!("An operationId for {label} whose Rust names are its own."),
                    json!({ "operationId": name }),
                ),
            );
            continue;
        }
        idents.insert(method, (op, id.clone()));
        idents.insert(builder, (op, id.clone()));
    }
}
