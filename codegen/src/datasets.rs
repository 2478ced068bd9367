//! The datasets of a session, derived from the effective document, and the client code that
//! names them (`generated-client/src/generated_datasets.rs`: `Dataset`, below readiness) and
//! reads them all (`generated-client/src/generated_session_datasets.rs`: `SessionDatasets`,
//! above it), two files so that the client's imports run one way.
//!
//! A dataset is a JSON `GET` below [`SESSION_PATH`] that needs nothing but the session's id:
//!
//! - the method is `get`, the path starts with `/v1/sessions/{sessionId}/` and has no other
//!   path parameter (`.../identity-verifications/{verificationId}/images` is not a dataset);
//! - no other parameter is required (an optional query parameter is left unset, so a vendor
//!   adding one to a dataset does not take the dataset away from its readers), and no request
//!   body is required;
//! - every `2xx` answer it declares has content, all of it `application/json`, the media type
//!   the generated client decodes: a PDF, an Excel file or a TSV download is not a dataset, nor
//!   is a `+json` type, which progenitor hands over as a byte stream.
//!
//! That includes `input-requirements`: it answers the rule like any other, and an export that
//! keeps what the customer still owed next to the data makes the data's gaps explainable.
//! Excluding it would take a hand-written exception, which the next release would not know.
//!
//! A dataset is named after its path below the session, segments joined with `-`
//! (`person-details`): the path stays when the vendor adds or renames an operationId, so the
//! CLI's names, the export's file names and the Rust names (`Dataset::PersonDetails`,
//! `SessionDatasets::person_details`) stay with it.

use std::collections::BTreeMap;

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use crate::document::{self as openapi, resolve};
use crate::listings::{self, Listing};
use crate::readiness::{self, Reporting};

/// The session every dataset belongs to; its one path parameter is the only input a dataset
/// takes.
pub const SESSION_PATH: &str = "/v1/sessions/{sessionId}";

/// One dataset of a session, as the effective document declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionDataset {
    /// The path below the session, segments joined with `-`: `person-details`.
    pub name: String,
    /// The operation's id (the naming stage gives one to every operation).
    pub operation_id: String,
    /// The path template, `/v1/sessions/{sessionId}/person-details`.
    pub path: String,
    /// Whether the description deprecates the operation (read only when asked).
    pub deprecated: bool,
    /// The operation's summary, or empty.
    pub summary: String,
    /// The operation's description, or empty (a deprecation usually says what replaces it).
    pub description: String,
    /// Where its answer says how far its providers have got (see [`crate::readiness`]).
    pub reporting: Reporting,
    /// The entries it lists that other operations take by id, as its links say (see
    /// [`crate::listings`]).
    pub listing: Option<Listing>,
}

impl SessionDataset {
    /// `PersonDetails`.
    pub fn variant(&self) -> String {
        self.name.to_upper_camel_case()
    }

    /// `person_details`.
    pub fn field(&self) -> String {
        self.name.to_snake_case()
    }

    /// What `#[deprecated]` says: the description's own words when it has some.
    pub fn deprecation_note(&self) -> String {
        let own = [&self.description, &self.summary]
            .into_iter()
            .map(|text| text.trim())
            .find(|text| text.to_ascii_lowercase().starts_with("deprecated"));
        match own {
            Some(text) => text.to_string(),
            None => format!("The service deprecates `{}`.", self.operation_id),
        }
    }
}

/// `Dataset::listing`'s answer for one dataset.
fn listing_code(listing: Option<&Listing>) -> TokenStream {
    let Some(listing) = listing else {
        return quote!(None);
    };
    let member = match &listing.member {
        Some(member) => quote!(Some(#member)),
        None => quote!(None),
    };
    let id = &listing.id;
    let metas = listing.entry_operations.iter().map(|operation_id| {
        let builder = format_ident!("{}", operation_id.to_upper_camel_case());
        quote!(<crate::builder::#builder<'static> as crate::operation::Operation>::META)
    });
    quote! {
        {
            const ENTRY_OPERATIONS: &[&crate::operation::OperationMeta] = &[#(#metas),*];
            Some(crate::dataset_shapes::Listing {
                member: #member,
                id: #id,
                entry_operations: ENTRY_OPERATIONS,
            })
        }
    }
}

/// The datasets cannot be named or generated; each variant says which operation and what to do.
#[derive(Debug, thiserror::Error)]
pub enum DatasetsError {
    #[error(
        "GET {path} would be a dataset of the session but has no operationId; the naming stage \
         gives every operation one, so run the whole pipeline (cargo xtask regen)"
    )]
    MissingOperationId { path: String },
    #[error(
        "GET {path} would be the dataset `{name}`, which is not a plain file name (letters, digits, \
         `-`, `_`) as the CLI and the export need; rename the path with an overlay"
    )]
    NotAFileName { path: String, name: String },
    #[error(
        "GET {path} would be the dataset `{name}`, whose Rust name `{rust}` is not an identifier; \
         rename the path with an overlay or teach codegen/src/datasets.rs a name for it"
    )]
    NotAnIdentifier {
        path: String,
        name: String,
        rust: String,
    },
    #[error(
        "GET {first} and GET {second} would both be the dataset `{rust}`; give one of the paths \
         another name with an overlay"
    )]
    SameName {
        first: String,
        second: String,
        rust: String,
    },
    #[error(
        "the dataset `{name}` ({operation_id}) has no generated output type; this is a generator bug"
    )]
    NoOutputType { name: String, operation_id: String },
    #[error(
        "the output type `{ty}` of {operation_id} does not parse ({message}); this is a generator bug"
    )]
    BadOutputType {
        operation_id: String,
        ty: String,
        message: String,
    },
    #[error("GET {path}, the dataset `{name}`: {message}")]
    Listing {
        path: String,
        name: String,
        message: String,
    },
    #[error("generated dataset code is not valid Rust ({0}); this is a generator bug")]
    InvalidCode(String),
}

/// Every dataset of a session in `doc`, in document order.
pub fn session_datasets(doc: &Value) -> Result<Vec<SessionDataset>, DatasetsError> {
    let below = format!("{SESSION_PATH}/");
    let mut found: Vec<SessionDataset> = Vec::new();
    for op in openapi::operations(doc) {
        let Some(rest) = op.path.strip_prefix(&below) else {
            continue;
        };
        if op.method != "get"
            || rest.is_empty()
            || rest.contains('{')
            || !only_the_session_is_required(doc, &op)
            || !answers_json(doc, op.operation)
        {
            continue;
        }
        let operation_id = op
            .operation
            .get("operationId")
            .and_then(Value::as_str)
            .ok_or_else(|| DatasetsError::MissingOperationId {
                path: op.path.to_string(),
            })?;
        let text = |key: &str| {
            op.operation
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let name = rest.trim_end_matches('/').replace('/', "-");
        let listing =
            listings::listing(doc, op.operation).map_err(|message| DatasetsError::Listing {
                path: op.path.to_string(),
                name: name.clone(),
                message,
            })?;
        let dataset = SessionDataset {
            name,
            operation_id: operation_id.to_string(),
            path: op.path.to_string(),
            deprecated: op
                .operation
                .get("deprecated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            summary: text("summary"),
            description: text("description"),
            reporting: readiness::reporting(doc, op.operation),
            listing,
        };
        check_names(&found, &dataset)?;
        found.push(dataset);
    }
    Ok(found)
}

/// The session's id is the one input the operation cannot do without.
fn only_the_session_is_required(doc: &Value, op: &openapi::Operation<'_>) -> bool {
    let parameters = op
        .item
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .chain(op.operation.get("parameters").and_then(Value::as_array))
        .flatten()
        .map(|parameter| resolve(doc, parameter));
    let body_required = op
        .operation
        .get("requestBody")
        .map(|body| resolve(doc, body))
        .and_then(|body| body.get("required"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    !body_required
        && parameters.into_iter().all(|parameter| {
            let location = parameter.get("in").and_then(Value::as_str);
            let name = parameter.get("name").and_then(Value::as_str);
            let required = parameter
                .get("required")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            (location == Some("path") && name == Some("sessionId")) || !required
        })
}

/// Every success answer declared has content, and all of it is JSON.
fn answers_json(doc: &Value, operation: &Value) -> bool {
    let Some(responses) = operation.get("responses").and_then(Value::as_object) else {
        return false;
    };
    let successes: Vec<&Value> = responses
        .iter()
        .filter(|(status, _)| status.starts_with('2'))
        .map(|(_, response)| resolve(doc, response))
        .collect();
    !successes.is_empty()
        && successes.iter().all(|response| {
            response
                .get("content")
                .and_then(Value::as_object)
                .is_some_and(|content| {
                    !content.is_empty()
                        && content
                            .keys()
                            .all(|media_type| is_json_media_type(media_type))
                })
        })
}

fn is_json_media_type(media_type: &str) -> bool {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .eq_ignore_ascii_case("application/json")
}

/// The Rust names of `dataset` are identifiers and no earlier dataset has them.
fn check_names(earlier: &[SessionDataset], dataset: &SessionDataset) -> Result<(), DatasetsError> {
    // The name becomes a command-line value and `datasets/NAME.json` in an export.
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if dataset.name.is_empty() || !dataset.name.chars().all(plain) {
        return Err(DatasetsError::NotAFileName {
            path: dataset.path.clone(),
            name: dataset.name.clone(),
        });
    }
    for rust in [dataset.variant(), dataset.field()] {
        if syn::parse_str::<Ident>(&rust).is_err() && !is_raw_identifier(&rust) {
            return Err(DatasetsError::NotAnIdentifier {
                path: dataset.path.clone(),
                name: dataset.name.clone(),
                rust,
            });
        }
    }
    // `session_id` is the field that says which session was read.
    if dataset.field() == "session_id" {
        return Err(DatasetsError::SameName {
            first: SESSION_PATH.to_string(),
            second: dataset.path.clone(),
            rust: dataset.field(),
        });
    }
    for other in earlier {
        for (mine, theirs) in [
            (dataset.variant(), other.variant()),
            (dataset.field(), other.field()),
        ] {
            if mine == theirs {
                return Err(DatasetsError::SameName {
                    first: other.path.clone(),
                    second: dataset.path.clone(),
                    rust: mine,
                });
            }
        }
    }
    Ok(())
}

/// A keyword (`type`, `match`) that is an identifier once written `r#type`.
fn is_raw_identifier(text: &str) -> bool {
    !matches!(text, "self" | "Self" | "super" | "crate" | "_")
        && syn::parse_str::<Ident>(&format!("r#{text}")).is_ok()
}

fn ident(text: &str) -> Ident {
    match syn::parse_str::<Ident>(text) {
        Ok(ident) => ident,
        Err(_) => Ident::new_raw(text, Span::call_site()),
    }
}

/// `generated_datasets.rs`: the [`session_datasets`] of `effective` as the client's `Dataset`
/// enum, `SessionDatasets` struct and their typed reads, with `header` at the top.
/// `success_types` maps each operationId to its generated output type
/// ([`crate::generate::Generated::success_types`]).
///
/// The file is mounted by `generated-client/src/lib.rs` and leans on
/// `generated-client/src/session_datasets.rs` for what does not depend on the list
/// (`read`, `json_of`, the concurrency).
pub fn generate(
    effective: &Value,
    success_types: &BTreeMap<String, String>,
    header: &str,
) -> Result<DatasetFiles, DatasetsError> {
    let datasets = session_datasets(effective)?;
    let mut types = Vec::new();
    for dataset in &datasets {
        let text = success_types.get(&dataset.operation_id).ok_or_else(|| {
            DatasetsError::NoOutputType {
                name: dataset.name.clone(),
                operation_id: dataset.operation_id.clone(),
            }
        })?;
        let ty = syn::parse_str::<syn::Type>(text).map_err(|e| DatasetsError::BadOutputType {
            operation_id: dataset.operation_id.clone(),
            ty: text.clone(),
            message: e.to_string(),
        })?;
        if !decodes_json(&ty) {
            return Err(DatasetsError::BadOutputType {
                operation_id: dataset.operation_id.clone(),
                ty: text.clone(),
                message: "a dataset's body is JSON, decoded; this one is not".into(),
            });
        }
        types.push(ty);
    }
    let gate = crate::behaviour::default_gate(effective, &datasets);
    let api_versions = crate::behaviour::api_versions(effective);
    let behaviour: Vec<(bool, String)> = datasets
        .iter()
        .map(|d| {
            (
                gate.get(&d.name).copied().unwrap_or(false),
                api_versions
                    .get(&d.operation_id)
                    .cloned()
                    .unwrap_or_else(|| crate::behaviour::document_version(effective).to_string()),
            )
        })
        .collect();
    let (list, reads) = code(&datasets, &types, &behaviour);
    let file = |tokens: TokenStream| -> Result<String, DatasetsError> {
        let file: syn::File =
            syn::parse2(tokens).map_err(|e| DatasetsError::InvalidCode(e.to_string()))?;
        Ok(format!("{header}\n{}", prettyplease::unparse(&file)))
    };
    Ok(DatasetFiles {
        list: file(list)?,
        reads: file(reads)?,
    })
}

/// The two generated files of the datasets, headers included.
#[derive(Debug, Clone)]
pub struct DatasetFiles {
    /// `generated_datasets.rs`: the `Dataset` enum and what the description says of each.
    pub list: String,
    /// `generated_session_datasets.rs`: `SessionDatasets` and the typed read of each dataset.
    pub reads: String,
}

/// Whether the generated output is a decoded value (not `ByteStream`, not `()`).
fn decodes_json(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Tuple(tuple) => !tuple.elems.is_empty(),
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .is_none_or(|segment| segment.ident != "ByteStream"),
        _ => true,
    }
}

/// The Rust code of [`generate`], the list and the reads; `behaviour` gives, per dataset, whether it is in the default
/// readiness gate and the `api-version` its operation sends ([`crate::behaviour`]).
fn code(
    datasets: &[SessionDataset],
    types: &[syn::Type],
    behaviour: &[(bool, String)],
) -> (TokenStream, TokenStream) {
    let count = proc_macro2::Literal::usize_unsuffixed(datasets.len());
    let any_deprecated = datasets.iter().any(|d| d.deprecated);
    // Our own items of a deprecated dataset are `#[deprecated]` too, so that a user reading
    // them hears the vendor; the code below that must name every dataset says why it may.
    let allow_ours = any_deprecated.then(|| {
        quote! {
            #[allow(deprecated, reason = "every dataset is listed, the deprecated ones too")]
        }
    });

    let mut variants = Vec::new();
    let mut all = Vec::new();
    let mut names = Vec::new();
    let mut metas = Vec::new();
    let mut notes = Vec::new();
    let mut fields = Vec::new();
    let mut fetched = Vec::new();
    let mut into_json = Vec::new();
    let mut fetches = Vec::new();
    let mut slots = Vec::new();
    let mut puts = Vec::new();
    let mut finish = Vec::new();
    let mut to_json = Vec::new();
    let mut failures = Vec::new();
    let mut reports = Vec::new();
    let mut reports_readiness = Vec::new();
    let mut readiness_properties = Vec::new();
    let mut listing_arms = Vec::new();
    let mut gated_arms = Vec::new();
    let mut version_arms = Vec::new();
    let mut debugs = Vec::new();
    let mut stores = Vec::new();
    for ((dataset, ty), (gated, api_version)) in datasets.iter().zip(types).zip(behaviour) {
        let variant = format_ident!("{}", dataset.variant());
        gated_arms.push(quote!(Dataset::#variant => #gated,));
        version_arms.push(quote!(Dataset::#variant => #api_version,));
        let field = ident(&dataset.field());
        let name = &dataset.name;
        let id = &dataset.operation_id;
        let path = &dataset.path;
        let builder = format_ident!("{}", dataset.operation_id.to_upper_camel_case());
        let method = ident(&dataset.operation_id.to_snake_case());
        let deprecated = dataset.deprecated;
        let summary = dataset.summary.trim();
        let variant_doc = if summary.is_empty() {
            format!(" `GET {path}` (`{id}`).")
        } else {
            format!(" `GET {path}` (`{id}`): {summary}")
        };
        let field_doc = format!(" `{name}`: the result of `{id}`.");
        let (deprecation, allow_call) = if deprecated {
            let note = dataset.deprecation_note();
            (
                Some(quote!(#[deprecated(note = #note)])),
                Some(quote! {
                    #[allow(deprecated, reason = "read only when asked: SessionDatasetsRequest::include_deprecated")]
                }),
            )
        } else {
            (None, None)
        };

        variants.push(quote! {
            #[doc = #variant_doc]
            #deprecation
            #variant,
        });
        all.push(quote!(Dataset::#variant));
        names.push(quote!(Dataset::#variant => #name,));
        metas.push(quote! {
            Dataset::#variant => <crate::builder::#builder<'static> as crate::operation::Operation>::META,
        });
        let note = if deprecated {
            let note = dataset.deprecation_note();
            quote!(Some(#note))
        } else {
            quote!(None)
        };
        notes.push(quote!(Dataset::#variant => #note,));
        fetched.push(quote!(#variant(Result<#ty, Error>),));
        into_json.push(quote!(Fetched::#variant(result) => json_of(result.as_ref()),));
        let report = readiness::report_code(&dataset.reporting, &variant);
        let reports_flag = dataset.reporting.reports();
        let read = if reports_flag {
            quote!(value)
        } else {
            quote!(_)
        };
        reports_readiness.push(quote!(Dataset::#variant => #reports_flag,));
        let properties = readiness::properties_code(&dataset.reporting);
        readiness_properties.push(quote!(Dataset::#variant => #properties,));
        let listing = listing_code(dataset.listing.as_ref());
        listing_arms.push(quote!(Dataset::#variant => #listing,));
        fetches.push(quote! {
            #allow_call
            Dataset::#variant => Box::pin(async move {
                Fetched::#variant(
                    crate::operation::call_with(client.#method().session_id(session_id), options)
                        .await,
                )
            }),
        });
        slots.push(quote!(#field: Option<Result<#ty, Error>>,));
        puts.push(quote!(Fetched::#variant(result) => self.#field = Some(result),));
        if deprecated {
            let doc = format!(
                " `{name}` (deprecated): `None` unless asked for \
                 ([`include_deprecated`](crate::session_datasets::SessionDatasetsRequest::include_deprecated))."
            );
            fields.push(quote! {
                #[doc = #doc]
                #deprecation
                pub #field: Option<Result<#ty, Error>>,
            });
            finish.push(quote!(#field: self.#field,));
            to_json.push(quote! {
                if let Some(result) = &self.#field {
                    all.push((Dataset::#variant, json_of(result.as_ref())));
                }
            });
            failures.push(quote! {
                if let Some(Err(error)) = &self.#field {
                    failed.push((Dataset::#variant, error));
                }
            });
            reports.push(quote! {
                match &self.#field {
                    None => {}
                    Some(Err(error)) => all.push((Dataset::#variant, crate::readiness::Report::ReadFailed(error))),
                    Some(Ok(#read)) => all.push((Dataset::#variant, #report)),
                }
            });
            debugs.push(quote! {
                if let Some(result) = &self.#field {
                    list.entry(&Dataset::#variant.name(), &Shown(result.as_ref().map(|_| ())));
                }
            });
            stores.push(quote!(Fetched::#variant(result) => self.#field = Some(result),));
        } else {
            fields.push(quote! {
                #[doc = #field_doc]
                pub #field: Result<#ty, Error>,
            });
            finish.push(quote!(#field: read(self.#field, Dataset::#variant),));
            to_json.push(quote! {
                all.push((Dataset::#variant, json_of(self.#field.as_ref())));
            });
            failures.push(quote! {
                if let Err(error) = &self.#field {
                    failed.push((Dataset::#variant, error));
                }
            });
            reports.push(quote! {
                match &self.#field {
                    Err(error) => all.push((Dataset::#variant, crate::readiness::Report::ReadFailed(error))),
                    Ok(#read) => all.push((Dataset::#variant, #report)),
                }
            });
            debugs.push(quote! {
                list.entry(&Dataset::#variant.name(), &Shown(self.#field.as_ref().map(|_| ())));
            });
            stores.push(quote!(Fetched::#variant(result) => self.#field = result,));
        }
    }

    let list = quote! {
        //! Every JSON dataset of a session, as the API description lists them: the
        //! [`Dataset`] enum and what the description says of each (its operation, where its
        //! answer reports readiness, what it lists). Below readiness and the reads
        //! (`generated_session_datasets.rs`), which use it. Written by
        //! `codegen/src/datasets.rs`, which says what a dataset is.

        /// One JSON dataset of a session: a JSON `GET` below `/v1/sessions/{sessionId}` that
        /// needs nothing but the session's id. A new release of the API description may add
        /// datasets, hence `#[non_exhaustive]`: match with a wildcard arm, or iterate
        /// [`Dataset::ALL`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Dataset {
            #(#variants)*
        }

        #allow_ours
        impl Dataset {
            /// Every JSON dataset, in the order of the API description.
            pub const ALL: [Dataset; #count] = [#(#all),*];

            /// Its name as the CLI and the export spell it: its path below the session, with
            /// `-` between segments (`person-details`).
            pub fn name(self) -> &'static str {
                match self {
                    #(#names)*
                }
            }

            /// Its operation: id, method, path, summary.
            pub fn operation(self) -> &'static crate::operation::OperationMeta {
                match self {
                    #(#metas)*
                }
            }

            /// Its operation's id, as errors name it.
            pub fn operation_id(self) -> &'static str {
                self.operation().id
            }

            /// Whether the service deprecates the dataset (read only when asked).
            pub fn deprecated(self) -> bool {
                self.deprecation().is_some()
            }

            /// What the service says about the dataset's deprecation (often what replaces
            /// it), if it deprecates it.
            pub fn deprecation(self) -> Option<&'static str> {
                match self {
                    #(#notes)*
                }
            }

            /// Whether the dataset's answer says how far its providers have got (a
            /// `sources` list, or a dataset-level `status`): found in the API description by
            /// the answer's shape. One that does not (attachments, source files) is
            /// [`not_reported`](crate::readiness::Readiness::not_reported).
            pub fn reports_readiness(self) -> bool {
                match self {
                    #(#reports_readiness)*
                }
            }

            /// Where the dataset's answer reports readiness, by the names its JSON members
            /// have (found by the same shapes as [`reports_readiness`](Self::reports_readiness)):
            /// for a reader of the answer's bytes that does not decode it into its type. Each
            /// provider's or the dataset's status is the entry's `status` member.
            pub fn readiness_properties(self) -> crate::dataset_shapes::ReadinessProperties {
                match self {
                    #(#readiness_properties)*
                }
            }

            /// Whether the dataset is in the default readiness gate
            /// ([`Gate::Default`](crate::readiness::Gate::Default)): what
            /// [`wait_for_data`](crate::Client::wait_for_data) waits for and
            /// [`Readiness::is_complete`](crate::readiness::Readiness::is_complete) judges when the
            /// caller does not name datasets. Pinned when the client was first generated
            /// (`overlays/91-keep-behaviour.overlay.yaml`): a dataset a later release of the API
            /// adds is read and reported, but not gated, so that code written before it decides
            /// as it did.
            pub fn gated_by_default(self) -> bool {
                match self {
                    #(#gated_arms)*
                }
            }

            /// The `api-version` header its read sends: the version of the API description the
            /// operation was first generated from (pinned; the service answers a request in the
            /// version it asks for).
            pub fn api_version(self) -> &'static str {
                match self {
                    #(#version_arms)*
                }
            }

            /// The entries the dataset's answer lists that other operations take by id
            /// (the attachments, each one's content), as the API description's links say;
            /// `None` for a dataset that lists none. For a reader of the answer's bytes: each
            /// entry's id is read from [`Listing::id`](crate::session_datasets::Listing::id).
            pub fn listing(self) -> Option<crate::dataset_shapes::Listing> {
                match self {
                    #(#listing_arms)*
                }
            }
        }

    };
    let reads = quote! {
        //! The [`SessionDatasets`] read by
        //! [`Client::session_datasets`](crate::Client::session_datasets): every JSON dataset
        //! of a session, each with the typed read of its operation. Written by
        //! `codegen/src/datasets.rs`.

        #[allow(unused_imports)]
        use std::future::Future;
        #[allow(unused_imports)]
        use std::pin::Pin;

        #[allow(unused_imports)]
        use uuid::Uuid;

        #[allow(unused_imports)]
        use crate::dataset_read::{json_of, read};
        #[allow(unused_imports)]
        use crate::error::Error;
        #[allow(unused_imports)]
        use crate::generated_datasets::Dataset;
        #[allow(unused_imports)]
        use crate::{Client, types};

        /// Every JSON dataset of one session, each with its own result. A deprecated dataset
        /// is `None` unless it was asked for. A new release of the API description may add
        /// fields, hence `#[non_exhaustive]`.
        ///
        /// A read that succeeded says nothing about whether the data has arrived: a dataset
        /// whose providers are still waiting is a `200` with empty lists. Ask
        /// [`readiness`](SessionDatasets::readiness) or
        /// [`is_complete`](SessionDatasets::is_complete) before deciding on it.
        ///
        /// Its `Debug` output shows the session's id and, for each dataset read, whether the
        /// read succeeded (or its error), never the data.
        #[derive(Clone)]
        #[non_exhaustive]
        pub struct SessionDatasets {
            /// The session read.
            pub session_id: Uuid,
            #(#fields)*
            /// The datasets [`readiness`](SessionDatasets::readiness) judges: as the read or
            /// the wait was asked ([`Gate::Default`](crate::readiness::Gate::Default) unless
            /// the caller named others).
            pub(crate) gate: crate::readiness::Gate,
        }

        #allow_ours
        impl SessionDatasets {
            /// Each dataset that was read, as JSON, or its error, in the order of
            /// [`Dataset::ALL`].
            pub fn to_json(&self) -> Vec<(Dataset, Result<serde_json::Value, Error>)> {
                let mut all = Vec::with_capacity(#count);
                #(#to_json)*
                all
            }

            /// The datasets whose read failed, with their errors (a read that succeeded may
            /// still hold no data yet: see [`readiness`](SessionDatasets::readiness)).
            pub fn failures(&self) -> Vec<(Dataset, &Error)> {
                let mut failed = Vec::new();
                #(#failures)*
                failed
            }

            /// What each dataset read says about readiness, in the order of
            /// [`Dataset::ALL`]; a deprecated dataset not read is left out.
            pub(crate) fn reports(&self) -> Vec<(Dataset, crate::readiness::Report<'_>)> {
                let mut all = Vec::with_capacity(#count);
                #(#reports)*
                all
            }

            /// Each dataset read, by name: whether it was read, or its error.
            fn debug_entries(&self, list: &mut std::fmt::DebugMap<'_, '_>) {
                use crate::dataset_read::Shown;
                #(#debugs)*
            }

            /// Replaces a dataset's result with a newer read.
            pub(crate) fn store(&mut self, fetched: Fetched) {
                match fetched {
                    #(#stores)*
                }
            }
        }

        #allow_ours
        impl std::fmt::Debug for SessionDatasets {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                struct Datasets<'a>(&'a SessionDatasets);
                #allow_ours
                impl std::fmt::Debug for Datasets<'_> {
                    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        let mut list = f.debug_map();
                        self.0.debug_entries(&mut list);
                        list.finish()
                    }
                }
                f.debug_struct("SessionDatasets")
                    .field("session_id", &self.session_id)
                    .field("datasets", &Datasets(self))
                    .finish()
            }
        }

        /// What one read returned, before it goes into its field.
        #allow_ours
        #[allow(
            clippy::large_enum_variant,
            reason = "each value is moved once, into its slot: boxing would only add an allocation"
        )]
        pub(crate) enum Fetched {
            #(#fetched)*
        }

        #allow_ours
        impl Fetched {
            /// The value as JSON, or its error.
            pub(crate) fn into_json(self) -> Result<serde_json::Value, Error> {
                match self {
                    #(#into_json)*
                }
            }
        }

        /// Reads one dataset through its typed operation, with `options` (those of the read of
        /// every dataset, or of a wait) when there are any.
        pub(crate) fn fetch<'c>(
            client: &'c Client,
            session_id: Uuid,
            dataset: Dataset,
            options: Option<&crate::call_options::CallOptions>,
        ) -> Pin<Box<dyn Future<Output = Fetched> + Send + 'c>> {
            let options = options.cloned();
            match dataset {
                #(#fetches)*
            }
        }

        /// The fields being filled, one slot per dataset.
        #allow_ours
        #[derive(Default)]
        pub(crate) struct Slots {
            #(#slots)*
        }

        #allow_ours
        impl Slots {
            /// Puts a read into its slot.
            pub(crate) fn put(&mut self, fetched: Fetched) {
                match fetched {
                    #(#puts)*
                }
            }

            /// The datasets of `session_id`, judged on `gate`; a dataset that was not read is
            /// an error, a deprecated one not read is `None`.
            pub(crate) fn finish(self, session_id: Uuid, gate: crate::readiness::Gate) -> SessionDatasets {
                SessionDatasets {
                    session_id,
                    #(#finish)*
                    gate,
                }
            }
        }
    };
    (list, reads)
}
