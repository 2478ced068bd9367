//! The overlay stage: applies OAI Overlay documents (Overlay Specification 1.0 and 1.1) to the
//! vendored OpenAPI description.
//!
//! An overlay is a list of actions, each a `target` ([RFC 9535] JSONPath) and a modifier:
//! `update` (merge a value into every selected node), `remove: true` (delete every selected
//! node) or, since 1.1, `copy` (merge the value of the one node another JSONPath selects). An
//! action with several modifiers does what the specification says (`remove: true` wins, then
//! `update`), with a warning naming the ignored field; one with none does nothing, with a
//! warning.
//! Actions apply in order, each to the result of the one before, overlay after overlay.
//!
//! This applier is **strict**: an action whose target selects nothing is an error, because it
//! means the upstream document moved and the overlay no longer does what its author meant.
//! [`ApplyOptions::lenient`] turns those into warnings. Every problem of a run is collected and
//! returned together, so one run shows all of them.
//!
//! **Outlived actions.** An overlay fills a gap of the published description; when the vendor
//! starts publishing what an action supplies, the run names the action (file, index,
//! description) and says it can be deleted:
//!
//! - an `update`/`copy` whose every value is already in the document changes nothing: a warning
//!   (values it changes are corrections and are not reported; empty objects only make sure a
//!   node exists);
//! - one whose merge would append array entries the document already has (the result would be
//!   `required: [a, a]`) is an error in strict mode and a warning with `--lenient`;
//! - a `remove` whose target selects nothing while the place it removes from exists: what it
//!   removes is gone (strict: an error, as for any target selecting nothing; lenient: a
//!   warning). Where that place is gone too, the document moved, and the message says so;
//! - a `remove` that later actions undo exactly (remove a `type`, then set the same one) is
//!   checked by applying everything without it; if the result is the same, a warning names it
//!   and the later actions that then change nothing.
//!
//! Merge rules (see [`apply`] for the details and the spec sections they come from):
//!
//! | selected node | `update` value | 1.0 | 1.1 |
//! |---|---|---|---|
//! | object | object | recursive merge | recursive merge |
//! | array | array | concatenated (1.0 is ambiguous; see [`apply`]) | concatenated |
//! | array | object or primitive | appended | appended |
//! | primitive | primitive | error | replaces the node |
//! | anything else | | error | error |
//!
//! Inside a recursive merge, a property in both places merges by kind: primitive replaces
//! primitive, arrays concatenate, objects merge; other pairings are errors. `null` is a primitive
//! (RFC 8259). Existing keys keep their position; new keys are appended in the update's order.
//!
//! [RFC 9535]: https://www.rfc-editor.org/rfc/rfc9535

mod apply;
mod error;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use serde_json_path::JsonPath;

use crate::document::{self, DocumentError, Format, json_type};

pub use apply::{ActionOutcome, ApplyOptions, ApplyReport, apply};
pub use error::{ActionRef, OverlayError, OverlayErrors, OverlayWarning};

/// The feature set an overlay declares in its `overlay` field: `major.minor`; the patch number
/// does not change behaviour (Overlay Specification, section "Versions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OverlayVersion {
    /// Overlay 1.0.x: `update` and `remove`; an array target takes `update` as one new item.
    V1_0,
    /// Overlay 1.1.x: adds `copy`, primitive replacement and array concatenation.
    V1_1,
}

impl OverlayVersion {
    /// Reads an `overlay` field: `1.0.<patch>` (with an optional `-suffix`, as the 1.0 schema
    /// allows) or `1.1.<patch>`. Anything else is a version this applier does not know.
    pub fn parse(text: &str) -> Option<OverlayVersion> {
        let mut parts = text.splitn(3, '.');
        let (major, minor, patch) = (parts.next()?, parts.next()?, parts.next()?);
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (patch, suffix) = match patch.split_once('-') {
            Some((patch, suffix)) => (patch, Some(suffix)),
            None => (patch, None),
        };
        if major != "1" || !digits(patch) || suffix.is_some_and(str::is_empty) {
            return None;
        }
        match (minor, suffix) {
            ("0", _) => Some(OverlayVersion::V1_0),
            ("1", None) => Some(OverlayVersion::V1_1),
            _ => None,
        }
    }
}

impl fmt::Display for OverlayVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OverlayVersion::V1_0 => "1.0",
            OverlayVersion::V1_1 => "1.1",
        })
    }
}

/// The overlay's `info` object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    /// What the overlay is for.
    pub title: String,
    /// The overlay document's own version (not the specification's).
    pub version: String,
    /// A longer description (1.1; accepted in 1.0 overlays too).
    pub description: Option<String>,
}

/// What an action does to each node its target selects.
#[derive(Debug, Clone)]
pub enum Operation {
    /// Merge this value into each selected node.
    Update(Value),
    /// Remove each selected node from its parent object or array.
    Remove,
    /// Merge the value of the one node `source` selects into each selected node (1.1).
    Copy {
        /// The `copy` expression as written.
        source: String,
        /// The parsed expression.
        path: JsonPath,
    },
    /// Nothing: the action has a `target` and no modifier (valid against the schemas of 1.0
    /// and 1.1, which require only `target`). Reported as a warning.
    Nothing,
}

/// One validated action of an overlay.
#[derive(Debug, Clone)]
pub struct Action {
    /// Position in the overlay's `actions` array, from 0.
    pub index: usize,
    /// The `target` expression as written.
    pub target: String,
    /// The parsed `target`.
    pub path: JsonPath,
    /// The action's `description`, if any.
    pub description: Option<String>,
    /// What the action does.
    pub operation: Operation,
    /// `x-creditdata-target-may-vanish: true`: a target that selects nothing is a warning even in
    /// strict mode. Set on the pins `regen` writes: a pin whose operation the vendor removed
    /// keeps nothing, and the removal is the change report's to tell, not an overlay error.
    pub target_may_vanish: bool,
}

/// The action extension that lets a target select nothing without failing a strict run.
pub const TARGET_MAY_VANISH: &str = "x-creditdata-target-may-vanish";

impl Action {
    /// Names this action of the overlay read from `origin` in messages.
    pub fn reference(&self, origin: &str) -> ActionRef {
        ActionRef {
            origin: origin.to_string(),
            index: self.index,
            description: self.description.clone(),
            target: self.target.clone(),
        }
    }
}

/// A validated Overlay document, ready to [`apply`].
#[derive(Debug, Clone)]
pub struct Overlay {
    /// Where the overlay came from (its path, or another name); used in every message.
    pub origin: String,
    /// The specification version it declares, which selects the merge rules.
    pub version: OverlayVersion,
    /// Its `info` object.
    pub info: Info,
    /// Its `extends` field: the document it was written for. Informational only; the caller
    /// chooses the document to apply it to.
    pub extends: Option<String>,
    /// Its actions, in order.
    pub actions: Vec<Action>,
    /// What validation noticed without refusing the overlay: fields the specification says
    /// have no impact, actions without a modifier. [`apply`] reports them with the run.
    pub warnings: Vec<OverlayWarning>,
}

impl Overlay {
    /// Reads, parses (JSON or YAML, by extension or content) and validates the overlay at `path`.
    pub fn load(path: &Path) -> Result<Overlay, OverlayErrors> {
        let value = document::load(path)?;
        Overlay::from_value(&value, &path.display().to_string())
    }

    /// Parses `text` as `format` and validates it; `origin` names it in messages.
    pub fn parse(text: &str, format: Format, origin: &str) -> Result<Overlay, OverlayErrors> {
        let value = document::parse(text, format, origin)?;
        Overlay::from_value(&value, origin)
    }

    /// Validates an already parsed overlay document. Reports every problem found, not only the
    /// first: missing or mistyped fields, unknown fields (other than `x-` extensions), an
    /// unsupported version, bad JSONPath, `copy` in 1.0. Actions with several modifiers or none
    /// are valid (the specification gives them a meaning) and noted in [`Overlay::warnings`].
    pub fn from_value(value: &Value, origin: &str) -> Result<Overlay, OverlayErrors> {
        let mut v = Validator {
            origin,
            errors: Vec::new(),
            no_modifier: Vec::new(),
            ignored: Vec::new(),
        };
        let overlay = v.overlay(value);
        match overlay {
            Some(mut overlay) if v.errors.is_empty() => {
                overlay.warnings = v.warnings(&overlay.actions);
                Ok(overlay)
            }
            _ => Err(OverlayErrors::new(v.errors)),
        }
    }
}

/// The result of [`apply_files`]: the changed document, the format it was read in, and the
/// report.
#[derive(Debug)]
pub struct Applied {
    /// The document with every overlay applied.
    pub document: Value,
    /// The format the document was read in (by extension, else by content).
    pub format: Format,
    /// What each action selected, and the warnings.
    pub report: ApplyReport,
}

/// Loads the document at `spec` and the overlays at `overlays`, then applies the overlays in the
/// order given. Reports the problems of every file together; nothing is applied if any file
/// cannot be read or any overlay is invalid.
pub fn apply_files(
    spec: &Path,
    overlays: &[PathBuf],
    options: &ApplyOptions,
) -> Result<Applied, OverlayErrors> {
    let mut errors = Vec::new();
    let document = read_document(spec).map_err(|e| errors.push(e.into())).ok();
    let mut loaded = Vec::new();
    for path in overlays {
        match Overlay::load(path) {
            Ok(overlay) => loaded.push(overlay),
            Err(e) => errors.extend(e.errors),
        }
    }
    match document {
        Some((mut document, format)) if errors.is_empty() => {
            let report = apply(&mut document, &loaded, options)?;
            Ok(Applied {
                document,
                format,
                report,
            })
        }
        _ => Err(OverlayErrors::new(errors)),
    }
}

/// Like [`document::load`], but also says which format the text was in, so output can match it.
fn read_document(path: &Path) -> Result<(Value, Format), DocumentError> {
    let text = std::fs::read_to_string(path).map_err(|source| DocumentError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let format = Format::detect(path, &text);
    let value = document::parse(&text, format, &path.display().to_string())?;
    Ok((value, format))
}

const OVERLAY_FIELDS: &[&str] = &["overlay", "info", "extends", "actions"];
const INFO_FIELDS: &[&str] = &["title", "version", "description"];
const ACTION_FIELDS: &[&str] = &["target", "description", "update", "remove", "copy"];

/// Collects every problem of one overlay document instead of stopping at the first.
struct Validator<'a> {
    origin: &'a str,
    errors: Vec<OverlayError>,
    /// Actions (by index) that have no modifier at all.
    no_modifier: Vec<usize>,
    /// Fields of valid actions that the specification says have no impact.
    ignored: Vec<IgnoredField>,
}

/// A field the specification says has no impact in its action.
struct IgnoredField {
    index: usize,
    field: &'static str,
    because: &'static str,
}

impl Validator<'_> {
    /// The warnings of a valid overlay, in the order of its actions.
    fn warnings(&self, actions: &[Action]) -> Vec<OverlayWarning> {
        let mut warnings = Vec::new();
        for action in actions {
            let reference = action.reference(self.origin);
            for ignored in self.ignored.iter().filter(|i| i.index == action.index) {
                warnings.push(OverlayWarning::IgnoredField {
                    action: reference.clone(),
                    field: ignored.field,
                    because: ignored.because,
                });
            }
            if self.no_modifier.contains(&action.index) {
                warnings.push(OverlayWarning::NoModifier { action: reference });
            }
        }
        warnings
    }

    fn invalid(&mut self, at: impl Into<String>, message: impl Into<String>) {
        let mut at = at.into();
        // Said the way action references say it, so every line reads the index the same way.
        if at.starts_with("actions[") {
            at.push_str(" (0-based)");
        }
        self.errors.push(OverlayError::Invalid {
            origin: self.origin.to_string(),
            at,
            message: message.into(),
        });
    }

    fn overlay(&mut self, value: &Value) -> Option<Overlay> {
        let Some(root) = value.as_object() else {
            self.invalid(
                "the document",
                format!(
                    "an Overlay document is an object with `overlay`, `info` and `actions`, found \
                     {}",
                    json_type(value)
                ),
            );
            return None;
        };
        self.unknown_fields(root, OVERLAY_FIELDS, "", "the Overlay Object");
        let version = self.version(root.get("overlay"));
        let info = self.info(root.get("info"));
        let extends = self.optional_string(root, "extends", "extends");
        let actions = self.actions(root.get("actions"), version);
        Some(Overlay {
            origin: self.origin.to_string(),
            version: version?,
            info: info?,
            extends,
            actions: actions?,
            warnings: Vec::new(),
        })
    }

    fn version(&mut self, value: Option<&Value>) -> Option<OverlayVersion> {
        match value {
            None => {
                self.invalid(
                    "overlay",
                    "missing: name the Overlay Specification version, e.g. `overlay: 1.1.0`",
                );
                None
            }
            Some(Value::String(text)) => {
                let version = OverlayVersion::parse(text);
                if version.is_none() {
                    self.invalid(
                        "overlay",
                        format!(
                            "unsupported Overlay Specification version {text:?}: this applier \
                             supports 1.0.x and 1.1.x; write `overlay: 1.1.0` and check the \
                             actions against 1.1"
                        ),
                    );
                }
                version
            }
            Some(other) => {
                self.invalid(
                    "overlay",
                    format!(
                        "must be a string such as \"1.1.0\", found {} (in YAML, quote a version \
                         like `1.0`, which reads as a number)",
                        json_type(other)
                    ),
                );
                None
            }
        }
    }

    fn info(&mut self, value: Option<&Value>) -> Option<Info> {
        let info = match value {
            None => {
                self.invalid(
                    "info",
                    "missing: an overlay needs `info` with `title` and `version`",
                );
                return None;
            }
            Some(Value::Object(info)) => info,
            Some(other) => {
                self.invalid(
                    "info",
                    format!(
                        "must be an object with `title` and `version`, found {}",
                        json_type(other)
                    ),
                );
                return None;
            }
        };
        self.unknown_fields(info, INFO_FIELDS, "info.", "the Info Object");
        let title = self.required_string(info, "title", "info.title");
        let version = self.required_string(info, "version", "info.version");
        let description = self.optional_string(info, "description", "info.description");
        Some(Info {
            title: title?,
            version: version?,
            description,
        })
    }

    fn actions(
        &mut self,
        value: Option<&Value>,
        version: Option<OverlayVersion>,
    ) -> Option<Vec<Action>> {
        let items = match value {
            None => {
                self.invalid(
                    "actions",
                    "missing: an overlay needs a non-empty list of actions",
                );
                return None;
            }
            Some(Value::Array(items)) if items.is_empty() => {
                self.invalid(
                    "actions",
                    "is empty: the Overlay Specification requires at least one action",
                );
                return None;
            }
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.invalid(
                    "actions",
                    format!("must be an array of actions, found {}", json_type(other)),
                );
                return None;
            }
        };
        let mut actions = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            // The schemas of 1.0 and 1.1 require unique actions; a repeated one is a copy-paste
            // slip, and a repeated array update would append twice.
            if let Some(first) = items[..index].iter().position(|earlier| earlier == item) {
                self.invalid(
                    format!("actions[{index}]"),
                    format!("repeats actions[{first}] exactly; actions must be unique: delete one"),
                );
            }
            if let Some(action) = self.action(index, item, version) {
                actions.push(action);
            }
        }
        (actions.len() == items.len()).then_some(actions)
    }

    fn action(
        &mut self,
        index: usize,
        value: &Value,
        version: Option<OverlayVersion>,
    ) -> Option<Action> {
        let at = format!("actions[{index}]");
        let Some(object) = value.as_object() else {
            self.invalid(
                at,
                format!(
                    "an action is an object with `target` and one of `update`, `remove: true` or \
                     `copy`, found {}",
                    json_type(value)
                ),
            );
            return None;
        };
        self.unknown_fields(object, ACTION_FIELDS, &format!("{at}."), "an Action Object");
        let description = self.optional_string(object, "description", &format!("{at}.description"));
        let target = self.required_string(object, "target", &format!("{at}.target"));
        let origin = self.origin;
        let reference = |target: &str| ActionRef {
            origin: origin.to_string(),
            index,
            description: description.clone(),
            target: target.to_string(),
        };

        let path = target
            .as_deref()
            .and_then(|target| self.json_path(&reference(target), "target", target));

        // A mistyped `remove` or `copy` is reported as such, not again as "changes nothing".
        let mut mistyped = false;
        let remove = match object.get("remove") {
            None => false,
            Some(Value::Bool(remove)) => *remove,
            Some(other) => {
                mistyped = true;
                self.invalid(
                    format!("{at}.remove"),
                    format!("must be true or false, found {}", json_type(other)),
                );
                false
            }
        };
        let update = object.get("update");
        let copy = match object.get("copy") {
            None => None,
            Some(Value::String(source)) => {
                if version == Some(OverlayVersion::V1_0) {
                    self.invalid(
                        format!("{at}.copy"),
                        "`copy` is an Overlay 1.1 action: declare `overlay: 1.1.0`",
                    );
                }
                let path = target
                    .as_deref()
                    .and_then(|target| self.json_path(&reference(target), "copy", source));
                Some((source, path))
            }
            Some(other) => {
                mistyped = true;
                self.invalid(
                    format!("{at}.copy"),
                    format!(
                        "must be a JSONPath string selecting the node to copy, found {}",
                        json_type(other)
                    ),
                );
                None
            }
        };

        // The specification gives every combination a meaning (Action Object, `update` and
        // `copy`): `remove: true` wins over both. For `update` with `copy`, 1.1 says each "has
        // no impact" when the other is set; read literally the action would do nothing, which
        // no author means, so the `update` written out in the action applies (the speakeasy
        // peer reads it so too). The ignored field is worth a warning: its author meant
        // something by it.
        let ignored = |field: &'static str, because: &'static str| IgnoredField {
            index,
            field,
            because,
        };
        // A `copy` expression is validated even where it is ignored: the document is still
        // wrong, and the field may stop being ignored when the action is edited.
        let invalid_copy = matches!(copy, Some((_, None)));
        let mut ignored_fields = Vec::new();
        let operation = if remove {
            if update.is_some() {
                ignored_fields.push(ignored("update", "`remove` is true"));
            }
            if object.contains_key("copy") {
                ignored_fields.push(ignored("copy", "`remove` is true"));
            }
            Operation::Remove
        } else if let Some(update) = update {
            if object.contains_key("copy") {
                ignored_fields.push(ignored("copy", "`update` is set"));
            }
            Operation::Update(update.clone())
        } else if let Some((source, Some(path))) = copy {
            Operation::Copy {
                source: source.clone(),
                path,
            }
        } else if mistyped || invalid_copy {
            // Already reported; not again as "changes nothing".
            return None;
        } else {
            self.no_modifier.push(index);
            Operation::Nothing
        };
        if invalid_copy {
            return None;
        }
        self.ignored.extend(ignored_fields);
        let target_may_vanish = match object.get(TARGET_MAY_VANISH) {
            None => false,
            Some(Value::Bool(flag)) => *flag,
            Some(other) => {
                self.invalid(
                    format!("{at}.{TARGET_MAY_VANISH}"),
                    format!("must be true or false, found {}", json_type(other)),
                );
                return None;
            }
        };
        Some(Action {
            index,
            target: target?,
            path: path?,
            description,
            operation,
            target_may_vanish,
        })
    }

    fn json_path(
        &mut self,
        action: &ActionRef,
        field: &'static str,
        expression: &str,
    ) -> Option<JsonPath> {
        if let Some(position) = too_deep(expression) {
            self.errors.push(OverlayError::InvalidJsonPath {
                action: action.clone(),
                field,
                expression: expression.to_string(),
                position,
                message: format!(
                    "brackets and parentheses nest more than {MAX_NESTING} deep, more than this \
                     applier accepts"
                ),
            });
            return None;
        }
        match JsonPath::parse(expression) {
            Ok(path) => Some(path),
            Err(e) => {
                self.errors.push(OverlayError::InvalidJsonPath {
                    action: action.clone(),
                    field,
                    expression: expression.to_string(),
                    position: e.position(),
                    message: e.message().to_string(),
                });
                None
            }
        }
    }

    fn required_string(
        &mut self,
        object: &Map<String, Value>,
        key: &str,
        at: &str,
    ) -> Option<String> {
        match object.get(key) {
            None => {
                self.invalid(at, "missing: this field is required");
                None
            }
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => {
                self.invalid(at, format!("must be a string, found {}", json_type(other)));
                None
            }
        }
    }

    fn optional_string(
        &mut self,
        object: &Map<String, Value>,
        key: &str,
        at: &str,
    ) -> Option<String> {
        match object.get(key) {
            None => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => {
                self.invalid(at, format!("must be a string, found {}", json_type(other)));
                None
            }
        }
    }

    fn unknown_fields(
        &mut self,
        object: &Map<String, Value>,
        known: &[&str],
        prefix: &str,
        what: &str,
    ) {
        for key in object.keys() {
            if !known.contains(&key.as_str()) && !key.starts_with("x-") {
                self.invalid(
                    format!("{prefix}{key}"),
                    format!(
                        "unknown field: {what} has only `{}` and `x-` extensions; fix the name, \
                         or prefix it with `x-` if it is an extension",
                        known.join("`, `")
                    ),
                );
            }
        }
    }
}

/// How deep `[` and `(` may nest in a JSONPath expression. serde_json_path 0.7 parses nested
/// filters in time exponential in their depth (about 50 ms at 12 levels, seconds at 16) and
/// recurses without bound (thousands of parentheses overflow the stack), so a mistyped or hostile
/// target could hang or abort the run. Real targets nest 2 to 5 levels.
const MAX_NESTING: usize = 12;

/// The offset of the first bracket or parenthesis nested deeper than [`MAX_NESTING`], if any.
/// Brackets inside string literals do not count.
fn too_deep(expression: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    let mut escaped = false;
    for (offset, c) in expression.char_indices() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == open {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '(' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(offset);
                }
            }
            ']' | ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}
