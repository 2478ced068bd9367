//! Preflight: everything that would make progenitor fail or panic on an OpenAPI 3.0 document,
//! found before it runs and reported all at once.
//!
//! progenitor 0.15 (with typify 0.8) stops at the first problem, and many of its problems are
//! panics (`todo!`, `assert!`, `unwrap`) whose message names no node of the document. Each check
//! here mirrors one of those places in its source (named in the rustdoc of [`Problem`]) and
//! reports the JSON pointer of the node to change, what is wrong in plain words, and an OAI
//! Overlay action that fixes it.
//!
//! The checks read the document as JSON, the way openapiv3 would deserialize it (first key wins
//! where openapiv3 is order-sensitive, `$ref`s resolved the way progenitor resolves them). When
//! they find nothing, progenitor itself is run on the document as a last check, so a clean
//! report means generation succeeds; a failure there is reported as
//! [`Problem::GeneratorFailure`], narrowed down to the operation or schema that causes it.

use serde_json::{Map, Value};

mod ctx;
mod deser;
mod loc;
mod merges;
pub(crate) mod names;
mod operations;
mod provenance;
mod refs;
mod report;
mod safety;
mod schemas;

use ctx::Ctx;
use loc::Loc;
pub use report::{Finding, Problem, Report, SuggestedFix};

/// Runs every check on `document` (an OpenAPI 3.0 document as JSON), and when they find nothing,
/// runs progenitor itself with the settings this project generates with and narrows any failure
/// down to one node ([`locate_generator_failure`]). Never panics.
pub fn preflight(document: &Value) -> Report {
    let mut report = preflight_static(document);
    if report.is_clean() {
        report
            .findings
            .extend(locate_generator_failure(document).findings);
    }
    report
}

/// progenitor's own verdict on `document`, narrowed down to every component schema and
/// operation that makes it fail: an empty report when it generates. For a failure the static
/// checks did not foresee; the pipeline calls it only when generation failed, so that a clean
/// document is generated once. Runs progenitor at most [`default_generator_runs`] times.
pub fn locate_generator_failure(document: &Value) -> Report {
    narrow_generator_failure(document, default_generator_runs(document)).report
}

/// What [`narrow_generator_failure`] found, and what it cost.
#[derive(Clone, Debug)]
pub struct Narrowing {
    /// Every failing schema (or set of schemas that fail together) and operation, each with a
    /// fix aimed at the node that makes it fail; empty when progenitor generates.
    pub report: Report,
    /// How many times progenitor ran.
    pub generator_runs: usize,
    /// False when the budget ran out first: the report then ends with a finding saying so.
    pub complete: bool,
}

/// Like [`locate_generator_failure`], with an explicit budget of progenitor runs. Each schema
/// is first tried on its own (a small document each), so a document with `n` schemas and `m`
/// operations needs about `n` runs plus a few per failure found.
pub fn narrow_generator_failure(document: &Value, max_generator_runs: usize) -> Narrowing {
    let narrowed = safety::check(document, &crate::generate::settings(), max_generator_runs);
    Narrowing {
        report: Report {
            findings: narrowed.findings,
        },
        generator_runs: narrowed.runs,
        complete: narrowed.complete,
    }
}

/// The budget [`locate_generator_failure`] gives a document: twice its schemas and operations,
/// plus room for the fixes. Linear in the document's size; each run is on a part of it.
pub fn default_generator_runs(document: &Value) -> usize {
    let count = |pointer: &str| {
        document
            .pointer(pointer)
            .and_then(Value::as_object)
            .map_or(0, Map::len)
    };
    let operations: usize = document
        .get("paths")
        .and_then(Value::as_object)
        .map_or(0, |paths| {
            paths
                .values()
                .filter_map(Value::as_object)
                .map(Map::len)
                .sum()
        });
    64 + 2 * (count("/components/schemas") + operations)
}

/// The checks derived from progenitor's and typify's source, without running them.
pub fn preflight_static(document: &Value) -> Report {
    let mut ctx = Ctx::new(document);
    if !document.is_object() {
        ctx.report(
            &Loc::root(),
            Problem::NotAnObject,
            format!(
                "The document is {}, not a JSON object; progenitor cannot read it at all.",
                crate::document::json_type(document)
            ),
            SuggestedFix::update(
                "$".into(),
                "An OpenAPI document is an object; start from the published description again.",
                serde_json::json!({}),
            ),
        );
        return ctx.finish();
    }
    deser::check(&mut ctx);
    operations::check(&mut ctx);
    schemas::check_components(&mut ctx);
    merges::check(&mut ctx);
    refs::check(&mut ctx);
    ctx.finish()
}
