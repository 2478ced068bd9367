//! The overlay engine against the fixture suites other Overlay implementations publish (read in
//! place from `../shared/fixtures/overlay-peers`, never copied; the test skips when the folder
//! is absent).
//!
//! Every case is run. A case agrees when its `expected.*` document comes out (compared as data)
//! or, for `expect-error.txt`, when applying fails. Where we differ on purpose, the case is in
//! [`KNOWN`] with the reason, usually the sentence of the Overlay Specification we follow; the
//! test fails on any disagreement not listed there, and on a listed case that now agrees, so the
//! list stays exactly the set of disagreements.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use creditdata_codegen::document;
use creditdata_codegen::overlay::{ApplyOptions, Overlay, OverlayError, apply};
use serde_json::Value;

const PEERS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/fixtures/overlay-peers"
);

/// Why a case comes out differently here.
#[derive(Debug, Clone, Copy)]
enum Known {
    /// The case expects a zero-node target to be a silent no-op (1.1: "the action succeeds
    /// without changing the target document"). Our strict default refuses it (the upstream
    /// document moved under the overlay); `--lenient` gives exactly the peer's result, which
    /// the test checks.
    StrictRefusesZeroMatch,
    /// We give a different result than the peer, for the reason given.
    Differs(&'static str),
}

const V1_0_PRIMITIVE_TARGET: &str = "Overlay 1.0, Action Object: \"The result of the `target` \
    JSONPath expression MUST be zero or more objects or arrays (not primitive types or `null` \
    values)\". We refuse a primitive target in a 1.0 overlay, with the fix (declare 1.1.0, where \
    a primitive replaces a primitive); the peer replaces it as 1.1 does";

const V1_0_KIND_MISMATCH: &str = "Overlay 1.0, Action Object: \"If the `target` selects an object \
    node, the value of this field MUST be an object\", and the properties of `update` \"MUST be \
    compatible with the target object\". We refuse the mismatch; the peer replaces the node";

const V1_1_KIND_MISMATCH: &str = "Overlay 1.1, Action Object: \"Other property value combinations \
    are incompatible and result in an error\". We refuse; the peer's lax mode replaces the node";

const ACTIONS_REQUIRED: &str = "Overlay 1.0 and 1.1, Overlay Object: `actions` is REQUIRED and \
    \"The array MUST contain at least one value\". We refuse the overlay; the peer applies it as a \
    no-op";

/// Every case where this engine and the peer's expectation differ, `source/case` → why.
const KNOWN: &[(&str, Known)] = &[
    (
        "oas-overlay-java/immutable",
        Known::Differs(
            "Overlay Object: `info` is REQUIRED; Action Object: `target` is \"A RFC9535 JSONPath \
             query expression\", and `info.version` (no `$`) is not one. We refuse the overlay, \
             leaving the document unchanged; the peer logs the error and returns the document \
             unchanged, which the fixture records as the expected document. The same files in \
             openapi-overlays-js expect an error, and agree",
        ),
    ),
    ("openapi-format/combi", Known::StrictRefusesZeroMatch),
    (
        "openapi-format/extends-local",
        Known::Differs(ACTIONS_REQUIRED),
    ),
    (
        "openapi-format/params",
        Known::Differs(
            "Overlay 1.1, Action Object: \"An array value of the `update` or `copy` property is \
             concatenated with an array value of the target property\" (1.0: properties are \
             \"recursively merged\", with no rule matching array entries). We append the new \
             parameter; the peer merges it into the existing parameter of the same name",
        ),
    ),
    (
        "openapi-overlays-dotnet/primitive-array-update",
        Known::Differs(V1_0_PRIMITIVE_TARGET),
    ),
    (
        "openapi-overlays-dotnet/primitive-update",
        Known::Differs(V1_0_PRIMITIVE_TARGET),
    ),
    (
        "openapi-overlays-dotnet/reusable-action-special-chars",
        Known::Differs(
            "`x-$ref` and `x-components` are specification extensions, to which Overlay 1.0 \
             gives no meaning; reusable actions (`$ref`, `components`) are Overlay 1.2, which \
             this engine does not implement. Here the actions have only a `target` and change \
             nothing (with a warning); the peer resolves the extensions",
        ),
    ),
    (
        "openapi-overlays-js/empty",
        Known::Differs(ACTIONS_REQUIRED),
    ),
    (
        "roas/v1_0-bad_remove_and_update",
        Known::Differs(
            "Overlay 1.0 and 1.1, Action Object, `update`: \"This field has no impact if the \
             `remove` field of this action object is `true`\". The combination is valid and \
             means remove (we warn about the ignored `update`); the peer refuses it. Here we \
             refuse only because `$.foo` selects nothing (strict default)",
        ),
    ),
    (
        "roas/v1_1-bad_copy_and_update",
        Known::Differs(
            "Overlay 1.1, Action Object, `copy`: \"This field has no impact if the `remove` \
             field of this action object is `true` or if the `update` field contains a value\". \
             The combination is valid and the update applies (we warn about the ignored \
             `copy`); the peer refuses it. Here we refuse only because `$.dest` selects nothing \
             (strict default)",
        ),
    ),
    (
        "speakeasy-openapi/apply-overlay",
        Known::Differs(
            "Action Object: `target` is \"A RFC9535 JSONPath query expression\"; \
             `$.tags[...].description~` is not one (the trailing `~` is the peer's own \
             extension). We refuse the overlay; it also updates primitive targets in 1.0",
        ),
    ),
    (
        "speakeasy-openapi/compare-roundtrip",
        Known::Differs(V1_0_PRIMITIVE_TARGET),
    ),
    (
        "speakeasy-openapi/copy-ignored-with-update",
        Known::StrictRefusesZeroMatch,
    ),
    (
        "speakeasy-openapi/inline-v100-typemismatchreplace--array-replaces-object",
        Known::Differs(V1_0_KIND_MISMATCH),
    ),
    (
        "speakeasy-openapi/inline-v100-typemismatchreplace--object-replaces-scalar",
        Known::Differs(V1_0_PRIMITIVE_TARGET),
    ),
    (
        "speakeasy-openapi/inline-v100-typemismatchreplace--scalar-replaces-object",
        Known::Differs(V1_0_KIND_MISMATCH),
    ),
    (
        "speakeasy-openapi/inline-v110-recursivetypemismatch-lax--array-target-with-object-update-replaces-gracefully",
        Known::Differs(V1_1_KIND_MISMATCH),
    ),
    (
        "speakeasy-openapi/inline-v110-recursivetypemismatch-lax--scalar-target-with-object-update-replaces-gracefully",
        Known::Differs(V1_1_KIND_MISMATCH),
    ),
    (
        "speakeasy-openapi/strict-onechange",
        Known::Differs(V1_0_PRIMITIVE_TARGET),
    ),
];

#[derive(Debug)]
struct Case {
    id: String,
    input: PathBuf,
    overlay: PathBuf,
    expected: Expectation,
}

#[derive(Debug)]
enum Expectation {
    Document(PathBuf),
    Error(String),
}

/// What the engine did with one case.
#[derive(Debug)]
enum Outcome {
    Document(Value),
    Refused(Vec<String>, bool),
}

fn file_named(dir: &Path, stem: &str) -> Option<PathBuf> {
    ["yaml", "yml", "json"]
        .iter()
        .map(|ext| dir.join(format!("{stem}.{ext}")))
        .find(|path| path.is_file())
}

fn cases(root: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("readable peers folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    sources.sort();
    for source in sources {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&source)
            .expect("readable source folder")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let id = format!(
                "{}/{}",
                source.file_name().unwrap().to_string_lossy(),
                dir.file_name().unwrap().to_string_lossy()
            );
            let input = file_named(&dir, "input").unwrap_or_else(|| panic!("{id}: no input"));
            let overlay = file_named(&dir, "overlay").unwrap_or_else(|| panic!("{id}: no overlay"));
            let expected = match file_named(&dir, "expected") {
                Some(path) => Expectation::Document(path),
                None => Expectation::Error(
                    std::fs::read_to_string(dir.join("expect-error.txt"))
                        .unwrap_or_else(|e| {
                            panic!("{id}: neither expected.* nor expect-error.txt: {e}")
                        })
                        .trim()
                        .to_string(),
                ),
            };
            cases.push(Case {
                id,
                input,
                overlay,
                expected,
            });
        }
    }
    cases
}

fn run(case: &Case, options: &ApplyOptions) -> Outcome {
    let overlay = match Overlay::load(&case.overlay) {
        Ok(overlay) => overlay,
        Err(e) => return Outcome::Refused(e.errors.iter().map(|e| e.to_string()).collect(), false),
    };
    let mut document = document::load(&case.input)
        .unwrap_or_else(|e| panic!("{}: input does not load: {e}", case.id));
    match apply(&mut document, &[overlay], options) {
        Ok(_) => Outcome::Document(document),
        Err(e) => {
            let only_zero_match = e.errors.iter().all(OverlayError::is_zero_match);
            Outcome::Refused(
                e.errors.iter().map(|e| e.to_string()).collect(),
                only_zero_match,
            )
        }
    }
}

/// Whether `outcome` is what the case expects. A refusal agrees with an expected error only for
/// the same reason: a refusal that is only our strict zero-match rule agrees only where the peer
/// expects exactly that (its reason says the target matched nothing).
fn agrees(case: &Case, outcome: &Outcome) -> bool {
    match (&case.expected, outcome) {
        (Expectation::Document(path), Outcome::Document(actual)) => {
            let expected = document::load(path)
                .unwrap_or_else(|e| panic!("{}: expected document does not load: {e}", case.id));
            &expected == actual
        }
        (Expectation::Error(reason), Outcome::Refused(_, zero_match_only)) => {
            !zero_match_only
                || ["did not match", "selects nothing", "ZeroMatch"]
                    .iter()
                    .any(|words| reason.contains(words))
        }
        _ => false,
    }
}

#[test]
fn the_engine_agrees_with_the_peer_suites_except_where_listed() {
    let root = Path::new(PEERS);
    if !root.is_dir() {
        eprintln!("skipped: no peer fixtures at {}", root.display());
        return;
    }
    let known: BTreeMap<&str, Known> = KNOWN.iter().copied().collect();
    let cases = cases(root);
    let mut problems = Vec::new();
    let mut summary = Vec::new();
    for case in &cases {
        let strict = run(case, &ApplyOptions::default());
        let strict_agrees = agrees(case, &strict);
        let verdict = match (known.get(case.id.as_str()), strict_agrees) {
            (None, true) => "agrees".to_string(),
            (None, false) => {
                problems.push(format!(
                    "{}: unlisted disagreement\n  expected: {:?}\n  got: {:?}",
                    case.id,
                    case.expected,
                    short(&strict)
                ));
                "DISAGREES (unlisted)".to_string()
            }
            (Some(_), true) => {
                problems.push(format!(
                    "{}: listed in KNOWN but now agrees; remove it from the list",
                    case.id
                ));
                "agrees (listed!)".to_string()
            }
            (Some(Known::StrictRefusesZeroMatch), false) => {
                let lenient = run(case, &ApplyOptions { lenient: true });
                let zero_match_only = matches!(strict, Outcome::Refused(_, true));
                if !(zero_match_only && agrees(case, &lenient)) {
                    problems.push(format!(
                        "{}: listed as a zero-match refusal, but strict says {:?} and lenient \
                         says {:?}",
                        case.id,
                        short(&strict),
                        short(&lenient)
                    ));
                }
                "strict refuses a zero-node target; --lenient agrees".to_string()
            }
            (Some(Known::Differs(reason)), false) => format!("differs: {reason}"),
        };
        summary.push(format!("{}: {verdict}", case.id));
    }
    for entry in known.keys() {
        if !cases.iter().any(|c| c.id == *entry) {
            problems.push(format!("{entry}: listed in KNOWN but no such case"));
        }
    }
    eprintln!("{} cases:\n{}", cases.len(), summary.join("\n"));
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

fn short(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Document(d) => {
            let text = d.to_string();
            text.chars().take(600).collect()
        }
        Outcome::Refused(errors, _) => errors.join(" | "),
    }
}
