//! The typed change model: what changed, where, and what it does to existing users.

use std::fmt;

use serde::Serialize;

/// The version of the JSON shape of [`ChangeReport`]. Bumped when a field is removed or changes
/// meaning; new fields and new change kinds do not bump it (consumers ignore what they do not
/// know). Documented in `codegen/CHANGE-REPORT.md`, described by
/// `codegen/change-report.schema.json`.
pub const SCHEMA_VERSION: u32 = 1;

/// Does a client built from the old document still work against a server of the new one?
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// Every call that worked still works and means the same.
    Yes,
    /// Calls still succeed, but something the caller relied on is silently gone or ignored.
    Degraded,
    /// Some calls that worked now fail (refused by the server, or undecodable by the client).
    No,
}

/// Does Rust code written against the old `creditdata-client` still compile?
///
/// Judged by Cargo's semver rules, the ones `cargo semver-checks` applies. The generated structs
/// and enums are `#[non_exhaustive]` (`codegen/src/forward_compatible.rs`): code outside the crate
/// builds them and matches them with a wildcard, so a new field or variant is compatible, while a
/// removed or retyped one is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Yes,
    No,
}

/// Does code written against the old `creditdata-client`, rebuilt against the new one, still do
/// what it did? A change can keep every call working and every line compiling and still change a
/// decision: the `api-version` every call sends, a dataset joining the default readiness gate, a
/// default the service applies when the caller omits a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// Unchanged code does what it did.
    Same,
    /// Unchanged code may do something else: a different answer, a longer wait, another decision.
    Changed,
}

/// Which side of an exchange a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    /// Sent by the client (parameters, request bodies).
    Request,
    /// Sent by the server (response bodies, headers).
    Response,
}

macro_rules! catalogue {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $title:literal; )*) => {
        /// Every kind of change the report knows. The JSON name is the snake_case form.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ChangeKind {
            $( $(#[$doc])* $variant, )*
        }

        impl ChangeKind {
            /// The catalogue, in report order.
            pub const ALL: &'static [ChangeKind] = &[$(ChangeKind::$variant),*];

            /// The name used in JSON and in the text report.
            pub fn name(self) -> &'static str {
                match self { $(ChangeKind::$variant => $name,)* }
            }

            /// A short title for people.
            pub fn title(self) -> &'static str {
                match self { $(ChangeKind::$variant => $title,)* }
            }
        }
    };
}

catalogue! {
    OperationAdded = "operation_added", "operation added";
    OperationRemoved = "operation_removed", "operation removed";
    /// Same method and path, another operationId: the Rust method is renamed.
    OperationIdChanged = "operation_id_changed", "operationId changed (rename)";
    /// The vendor publishes an operationId for an operation whose derived name a pin keeps: the
    /// Rust method keeps its name.
    OperationIdPublished = "operation_id_published", "operationId published (pinned name kept)";
    OperationDeprecated = "operation_deprecated", "operation deprecated";
    OperationNoLongerDeprecated = "operation_no_longer_deprecated", "operation no longer deprecated";
    OptionalParameterAdded = "optional_parameter_added", "optional parameter added";
    RequiredParameterAdded = "required_parameter_added", "required parameter added";
    ParameterRemoved = "parameter_removed", "parameter removed";
    ParameterNowRequired = "parameter_now_required", "parameter now required";
    ParameterNowOptional = "parameter_now_optional", "parameter now optional";
    ParameterTypeChanged = "parameter_type_changed", "parameter type changed";
    /// A path parameter renamed in the template: same URL, renamed builder method.
    ParameterRenamed = "parameter_renamed", "path parameter renamed";
    ParameterDeprecated = "parameter_deprecated", "parameter deprecated";
    /// The default the service applies when the caller omits the parameter: calls unchanged get
    /// another answer.
    ParameterDefaultChanged = "parameter_default_changed", "parameter default changed";
    RequestBodyAdded = "request_body_added", "request body added";
    RequestBodyRemoved = "request_body_removed", "request body removed";
    RequestBodyNowRequired = "request_body_now_required", "request body now required";
    RequestBodyNowOptional = "request_body_now_optional", "request body now optional";
    RequestBodyTypeChanged = "request_body_type_changed", "request body type changed";
    OptionalRequestMemberAdded = "optional_request_member_added", "optional request body member added";
    RequiredRequestMemberAdded = "required_request_member_added", "required request body member added";
    RequestMemberRemoved = "request_member_removed", "request body member removed";
    RequestMemberNowRequired = "request_member_now_required", "request body member now required";
    RequestMemberNowOptional = "request_member_now_optional", "request body member now optional";
    RequestMemberNowNullable = "request_member_now_nullable", "request body member now nullable";
    RequestMemberNoLongerNullable = "request_member_no_longer_nullable", "request body member no longer nullable";
    RequestMemberTypeChanged = "request_member_type_changed", "request body member type changed";
    RequestEnumValueAdded = "request_enum_value_added", "enum value added (request position)";
    RequestEnumValueRemoved = "request_enum_value_removed", "enum value removed (request position)";
    RequestConstraintChanged = "request_constraint_changed", "validation constraint changed (request position)";
    RequestMediaTypeAdded = "request_media_type_added", "request media type added";
    RequestMediaTypeRemoved = "request_media_type_removed", "request media type removed";
    ResponsePropertyAdded = "response_property_added", "response property added";
    ResponsePropertyRemoved = "response_property_removed", "response property removed";
    ResponsePropertyNowRequired = "response_property_now_required", "response property now always present";
    ResponsePropertyNowOptional = "response_property_now_optional", "response property now optional";
    ResponsePropertyNowNullable = "response_property_now_nullable", "response property now nullable";
    ResponsePropertyNoLongerNullable = "response_property_no_longer_nullable", "response property no longer nullable";
    ResponsePropertyTypeChanged = "response_property_type_changed", "response property type changed";
    ResponseBodyTypeChanged = "response_body_type_changed", "response body type changed";
    ResponseEnumValueAdded = "response_enum_value_added", "enum value added (response position)";
    ResponseEnumValueRemoved = "response_enum_value_removed", "enum value removed (response position)";
    ResponseConstraintChanged = "response_constraint_changed", "validation constraint changed (response position)";
    ResponseMediaTypeAdded = "response_media_type_added", "response media type added";
    ResponseMediaTypeRemoved = "response_media_type_removed", "response media type removed";
    SuccessStatusAdded = "success_status_added", "success status added";
    SuccessStatusRemoved = "success_status_removed", "success status removed";
    ErrorStatusAdded = "error_status_added", "error status added";
    ErrorStatusRemoved = "error_status_removed", "error status removed";
    ResponseHeaderAdded = "response_header_added", "response header added";
    ResponseHeaderRemoved = "response_header_removed", "response header removed";
    SecuritySchemeAdded = "security_scheme_added", "security scheme added";
    SecuritySchemeRemoved = "security_scheme_removed", "security scheme removed";
    SecuritySchemeChanged = "security_scheme_changed", "security scheme type changed";
    SecurityFlowAdded = "security_flow_added", "OAuth2 flow added";
    SecurityFlowRemoved = "security_flow_removed", "OAuth2 flow removed";
    SecurityUrlChanged = "security_url_changed", "security URL changed";
    SecurityScopeAdded = "security_scope_added", "OAuth2 scope added";
    SecurityScopeRemoved = "security_scope_removed", "OAuth2 scope removed";
    SecurityRequirementChanged = "security_requirement_changed", "security requirement changed";
    ServerAdded = "server_added", "server added";
    ServerRemoved = "server_removed", "server removed";
    ServerChanged = "server_changed", "server URL changed";
    SchemaAdded = "schema_added", "schema added";
    /// The Rust type (and its builder) becomes `#[deprecated]`.
    SchemaDeprecated = "schema_deprecated", "schema deprecated";
    /// The Rust field (and its builder setter) becomes `#[deprecated]`.
    MemberDeprecated = "member_deprecated", "schema member deprecated";
    SchemaRemoved = "schema_removed", "schema removed";
    /// The same shape under a new component name: the Rust type is renamed.
    SchemaRenamed = "schema_renamed", "schema renamed";
    DocumentVersionChanged = "document_version_changed", "info.version changed";
    /// A header value the generated code sends as a constant (`api-version`, `Accept`) changed:
    /// every call sends it with no line of the caller's changed.
    RequestHeaderValueChanged = "request_header_value_changed", "request header value changed";
    /// The default readiness gate judges more: a dataset joins it, or a gated dataset reports its
    /// providers in more places.
    ReadinessGateWidened = "readiness_gate_widened", "default readiness gate widened";
    /// The default readiness gate judges less: a dataset leaves it (deprecated, or its pin
    /// moved), or a gated dataset reports its providers in fewer places.
    ReadinessGateNarrowed = "readiness_gate_narrowed", "default readiness gate narrowed";
    /// An incompatible difference in the generated Rust API that no other change explains (a
    /// generator change, or a document change the catalogue does not model).
    GeneratedCodeChanged = "generated_code_changed", "generated Rust API changed";
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a changed node is: its RFC 6901 JSON pointer in the effective document (what the
/// generator saw) and in the published description it came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Location {
    pub effective: String,
    /// `None` when the node is not in the published description (an overlay or the pipeline
    /// supplied it), or when that published description was not available to the comparison.
    pub published: Option<String>,
}

/// One change between two effective documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub kind: ChangeKind,
    /// One line for people, naming the thing that changed.
    pub summary: String,
    /// The previous value, where the change replaces one (a type, a name, a URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The new value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The operationIds affected (the new ones; the old one for a removed operation).
    pub operations: Vec<String>,
    /// Where the node was, in the old documents (`None` for an addition).
    pub old: Option<Location>,
    /// Where the node is, in the new documents (`None` for a removal).
    pub new: Option<Location>,
    pub wire: Wire,
    pub source: Source,
    /// Whether unchanged code, rebuilt, still does what it did.
    pub behaviour: Behaviour,
    /// Why these impacts: what an old client or old Rust code runs into.
    pub reason: String,
    /// The generated Rust items the change touches (`Client::get_session`, `types::Session`,
    /// `types::Session.nickname`, `builder::GetSessions::skip`).
    pub rust: Vec<String>,
}

impl Change {
    /// Whether existing users are affected: deployed clients, compiling code, or what unchanged
    /// code does.
    pub fn is_breaking(&self) -> bool {
        self.wire != Wire::Yes || self.source == Source::No || self.behaviour == Behaviour::Changed
    }

    /// The impact group the report lists this change under.
    pub fn group(&self) -> Group {
        match (self.wire, self.behaviour, self.source) {
            (Wire::No, _, _) => Group::BreaksDeployedClients,
            (Wire::Degraded, _, _) => Group::DegradesDeployedClients,
            (Wire::Yes, Behaviour::Changed, _) => Group::ChangesBehaviour,
            (Wire::Yes, Behaviour::Same, Source::No) => Group::BreaksRustCode,
            (Wire::Yes, Behaviour::Same, Source::Yes) => Group::Compatible,
        }
    }
}

/// The report's sections, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    BreaksDeployedClients,
    DegradesDeployedClients,
    /// Compiles and calls as before, and does something else: worse than a compile error,
    /// which at least is loud.
    ChangesBehaviour,
    BreaksRustCode,
    Compatible,
}

impl Group {
    pub const ALL: [Group; 5] = [
        Group::BreaksDeployedClients,
        Group::DegradesDeployedClients,
        Group::ChangesBehaviour,
        Group::BreaksRustCode,
        Group::Compatible,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Group::BreaksDeployedClients => {
                "Breaks deployed clients (wire: no): calls that worked fail against the new service"
            }
            Group::DegradesDeployedClients => {
                "Degrades deployed clients (wire: degraded): calls succeed, but something is silently lost or ignored"
            }
            Group::ChangesBehaviour => {
                "Changes what existing code does (behaviour: changed): it compiles and its calls work, and it may decide differently"
            }
            Group::BreaksRustCode => {
                "Breaks Rust code at compile time (wire: yes, source: no): update callers when upgrading"
            }
            Group::Compatible => "Compatible (wire: yes, source: yes)",
        }
    }
}

/// A Rust name kept by `overlays/90-keep-names.overlay.yaml` although the vendor renamed it, or
/// named by the pipeline where the vendor gives no name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Pin {
    pub kind: PinKind,
    /// The name the generated client keeps.
    pub kept: String,
    /// The vendor's name, as recorded when the pin was written; for a derived operation name,
    /// the operationId the published description has now (empty when it has none).
    pub published: String,
    /// `METHOD /path` for an operation pin; the component pointer for a schema pin.
    pub at: String,
    pub status: PinStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PinKind {
    OperationId,
    /// An operationId the pipeline derived from method and path (`crate::operation_names`).
    DerivedOperationId,
    Schema,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PinStatus {
    /// The published description still uses the recorded name: the pin is doing its job. For a
    /// derived operation name: the published description gives none, or one of its own.
    Active,
    /// The published description uses the kept name again: the pin can be deleted.
    Redundant,
    /// The published description uses a third name: look at the pin.
    Outdated,
    /// No published description was available to check the pin against.
    Unchecked,
}

/// The suggested next version of `creditdata-client`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Semver {
    pub current: String,
    pub suggested: String,
    pub bump: Bump,
    /// The rule applied, for people.
    pub rule: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bump {
    None,
    Patch,
    Minor,
    Major,
}

/// Counts and verdicts over all changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub changes: usize,
    /// The worst wire impact (`yes` when there is no change).
    pub wire: Wire,
    /// The worst source impact.
    pub source: Source,
    /// `changed` when any change changes what unchanged code does.
    pub behaviour: Behaviour,
    /// Any change with wire impact other than `yes`, source impact `no`, or behaviour `changed`.
    pub breaking: bool,
    pub breaks_deployed_clients: usize,
    pub degrades_deployed_clients: usize,
    /// Changes of what existing code does (wire `yes`, behaviour `changed`).
    pub changes_behaviour: usize,
    pub breaks_rust_code: usize,
    pub compatible: usize,
}

/// Whether the generated Rust API of both sides was compared, and what that found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RustCheck {
    /// False when the generated code of one side was not available.
    pub checked: bool,
    /// Incompatible differences between the old and the new generated API, e.g.
    /// `types::Session: field nickname added`.
    pub incompatible: Vec<String>,
}

/// The whole report. Its JSON form is the published shape (see [`SCHEMA_VERSION`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangeReport {
    pub schema_version: u32,
    pub summary: Summary,
    /// `None` when the caller did not say which version it compares against.
    pub semver: Option<Semver>,
    /// Sorted: by group (worst first), then kind, then location.
    pub changes: Vec<Change>,
    pub pins: Vec<Pin>,
    pub rust_api: RustCheck,
    /// Which published descriptions were available: where one was not, `published` pointers
    /// of that side are `null` for that reason alone.
    pub published_available: Availability,
}

/// Whether something was available for the old and for the new side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Availability {
    pub old: bool,
    pub new: bool,
}

impl ChangeReport {
    /// Whether nothing a generated client exposes changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Whether a change affects existing users (see [`Change::is_breaking`]).
    pub fn is_breaking(&self) -> bool {
        self.summary.breaking
    }

    /// The renames `--keep-names` can pin: operationId changes and schema renames.
    pub fn renames(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| {
            matches!(
                c.kind,
                ChangeKind::OperationIdChanged | ChangeKind::SchemaRenamed
            )
        })
    }

    /// The exit status `cargo xtask drift` uses: 0 no change, 3 compatible changes only, 4 a
    /// breaking change.
    pub fn exit_code(&self) -> u8 {
        if self.is_empty() {
            0
        } else if self.is_breaking() {
            4
        } else {
            3
        }
    }

    /// The JSON form (the published shape), pretty-printed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report serializes") + "\n"
    }
}
