//! Document-level changes: components added, removed and renamed; security schemes, flows,
//! URLs, scopes and requirements; servers.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use serde_json::Value;

use super::{Draft, Walker, compact};
use crate::diff::model::{ChangeKind, Source, Wire};
use crate::diff::schema;
use crate::document::pointer::escape;

impl<'a> Walker<'a> {
    pub(super) fn components(&mut self) {
        let names = |doc: &Value| -> BTreeSet<String> {
            doc.pointer("/components/schemas")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let (a, b) = (names(self.old), names(self.new));
        let renamed_to: BTreeSet<String> = self.renamed.values().cloned().collect();
        let variant_of = |doc: &Value, name: &str| {
            schema::component(doc, name)
                .and_then(|s| s.get(crate::open_enums::REQUEST_VARIANT_MARK))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let renamed = self.renamed.clone();
        for (old, new) in &renamed {
            // A request-side copy follows its original: reported with it.
            if let Some(original) = variant_of(self.old, old)
                && renamed.contains_key(&original)
            {
                continue;
            }
            let copies: Vec<Option<String>> = renamed
                .iter()
                .filter(|(o, _)| variant_of(self.old, o).as_deref() == Some(old.as_str()))
                .flat_map(|(o, n)| {
                    [
                        Some(format!("types::{}", o.to_upper_camel_case())),
                        Some(format!("types::{}", n.to_upper_camel_case())),
                    ]
                })
                .collect();
            self.record(
                Draft::new(ChangeKind::SchemaRenamed, format!("schema {old} is now {new} (same shape)"))
                    .at(Some(&format!("/components/schemas/{}", escape(old))), Some(&format!("/components/schemas/{}", escape(new))))
                    .values(old.clone(), new.clone())
                    .impact(
                        Wire::Yes,
                        Source::No,
                        format!(
                            "same JSON on the wire, but the Rust type is renamed from {} to {}: pin the old name with `cargo xtask regen --keep-names`",
                            old.to_upper_camel_case(),
                            new.to_upper_camel_case()
                        ),
                    )
                    .rust([Some(format!("types::{}", old.to_upper_camel_case())), Some(format!("types::{}", new.to_upper_camel_case()))])
                    .rust(copies),
            );
        }
        for name in b.difference(&a) {
            if renamed_to.contains(name) {
                continue;
            }
            self.record(
                Draft::new(ChangeKind::SchemaAdded, format!("schema {name} added"))
                    .at(None, Some(&format!("/components/schemas/{}", escape(name))))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "a new Rust type; nothing existing changes",
                    )
                    .rust([Some(format!("types::{}", name.to_upper_camel_case()))]),
            );
        }
        let kept: Vec<(String, String)> = a
            .intersection(&b)
            .filter(|name| !renamed.contains_key(*name))
            .map(|name| (name.clone(), name.clone()))
            .chain(renamed.clone())
            .collect();
        for (old, new) in kept {
            if variant_of(self.new, &new).is_none() {
                self.deprecations(&old, &new);
            }
        }
        for name in a.difference(&b) {
            if self.renamed.contains_key(name) {
                continue;
            }
            self.record(
                Draft::new(ChangeKind::SchemaRemoved, format!("schema {name} removed"))
                    .at(Some(&format!("/components/schemas/{}", escape(name))), None)
                    .impact(
                        Wire::Yes,
                        Source::No,
                        "the Rust type is gone; where it was used, the changes of those places are listed separately",
                    )
                    .rust([Some(format!("types::{}", name.to_upper_camel_case()))]),
            );
        }
    }

    /// A component schema, or one of its members, newly deprecated: `codegen/src/deprecations.rs`
    /// marks its Rust item `#[deprecated]`, which warns and breaks nothing. A request-side copy
    /// is reported with its original (the caller skips it).
    fn deprecations(&mut self, old: &str, new: &str) {
        let (Some(a), Some(b)) = (
            schema::component(self.old, old),
            schema::component(self.new, new),
        ) else {
            return;
        };
        let deprecated = |s: &Value| s.get("deprecated") == Some(&Value::Bool(true));
        let at = format!("/components/schemas/{}", escape(new));
        let rust = new.to_upper_camel_case();
        if !deprecated(a) && deprecated(b) {
            self.record(
                Draft::new(
                    ChangeKind::SchemaDeprecated,
                    format!("schema {new} deprecated"),
                )
                .at(
                    Some(&format!("/components/schemas/{}", escape(old))),
                    Some(&at),
                )
                .impact(
                    Wire::Yes,
                    Source::Yes,
                    "still accepted and sent; code naming the Rust type gets a deprecation warning",
                )
                .rust([Some(format!("types::{rust}"))]),
            );
        }
        let members = |s: &'a Value| s.get("properties").and_then(Value::as_object);
        let (Some(ma), Some(mb)) = (members(a), members(b)) else {
            return;
        };
        for (name, member) in mb {
            if deprecated(member) && ma.get(name).is_some_and(|m| !deprecated(m)) {
                self.record(
                    Draft::new(
                        ChangeKind::MemberDeprecated,
                        format!("{new}.{name} deprecated"),
                    )
                    .at(
                        Some(&format!("/components/schemas/{}/properties/{}", escape(old), escape(name))),
                        Some(&format!("{at}/properties/{}", escape(name))),
                    )
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "still accepted and sent; code reading or setting the Rust field gets a deprecation warning",
                    )
                    .rust([Some(format!("types::{rust}.{name}"))]),
                );
            }
        }
    }

    pub(super) fn security(&mut self) {
        let schemes = |doc: &'a Value| -> BTreeMap<String, &'a Value> {
            doc.pointer("/components/securitySchemes")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect())
                .unwrap_or_default()
        };
        let (a, b) = (schemes(self.old), schemes(self.new));
        let at = |name: &str| format!("/components/securitySchemes/{}", escape(name));
        for (name, sb) in &b {
            let Some(sa) = a.get(name) else {
                self.record(
                    Draft::new(
                        ChangeKind::SecuritySchemeAdded,
                        format!("security scheme {name} added"),
                    )
                    .at(None, Some(&at(name)))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "an additional way to authenticate; requirements are compared separately",
                    ),
                );
                continue;
            };
            self.scheme_pair(name, &at(name), sa, sb);
        }
        for name in a.keys() {
            if !b.contains_key(name) {
                self.record(
                    Draft::new(ChangeKind::SecuritySchemeRemoved, format!("security scheme {name} removed"))
                        .at(Some(&at(name)), None)
                        .impact(
                            Wire::No,
                            Source::Yes,
                            "clients authenticating this way are refused; creditdata-client's auth is configured, not generated, so its code is unchanged",
                        ),
                );
            }
        }
        let (ra, rb) = (self.old.get("security"), self.new.get("security"));
        if requirements(ra) != requirements(rb) {
            let draft = requirement_change(
                "the document-wide security requirement changed".into(),
                "/security",
                "/security",
                ra,
                rb,
            );
            self.record(draft);
        }
    }

    fn scheme_pair(&mut self, name: &str, at: &str, a: &Value, b: &Value) {
        let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        for key in ["type", "scheme", "in", "name"] {
            if field(a, key) != field(b, key) {
                self.record(
                    Draft::new(ChangeKind::SecuritySchemeChanged, format!("security scheme {name}: {key} changed"))
                        .at(Some(at), Some(at))
                        .values(field(a, key), field(b, key))
                        .impact(Wire::No, Source::Yes, "credentials of the old kind are refused; configure the client for the new one"),
                );
                return;
            }
        }
        if field(a, "openIdConnectUrl") != field(b, "openIdConnectUrl") {
            self.record(
                Draft::new(
                    ChangeKind::SecurityUrlChanged,
                    format!("security scheme {name}: OpenID Connect discovery URL changed"),
                )
                .at(
                    Some(&format!("{at}/openIdConnectUrl")),
                    Some(&format!("{at}/openIdConnectUrl")),
                )
                .values(field(a, "openIdConnectUrl"), field(b, "openIdConnectUrl"))
                .impact(
                    Wire::No,
                    Source::Yes,
                    "clients configured with the old issuer cannot discover the token endpoint",
                ),
            );
        }
        let flows = |v: &Value| -> BTreeMap<String, Value> {
            v.get("flows")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        };
        let (fa, fb) = (flows(a), flows(b));
        let used = |flow: &str| flow == "clientCredentials";
        for (flow, vb) in &fb {
            let pf = format!("{at}/flows/{}", escape(flow));
            let Some(va) = fa.get(flow) else {
                self.record(
                    Draft::new(
                        ChangeKind::SecurityFlowAdded,
                        format!("security scheme {name}: {flow} flow added"),
                    )
                    .at(None, Some(&pf))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "an additional way to obtain tokens",
                    ),
                );
                continue;
            };
            for url in ["tokenUrl", "authorizationUrl", "refreshUrl"] {
                if field(va, url) != field(vb, url) {
                    let breaks = used(flow) && url == "tokenUrl";
                    self.record(
                        Draft::new(ChangeKind::SecurityUrlChanged, format!("security scheme {name}: {flow} {url} changed"))
                            .at(Some(&format!("{pf}/{url}")), Some(&format!("{pf}/{url}")))
                            .values(field(va, url), field(vb, url))
                            .impact(
                                if breaks { Wire::No } else { Wire::Yes },
                                Source::Yes,
                                if breaks {
                                    "clients configured with the old token URL can no longer get tokens: update their configuration"
                                } else {
                                    "creditdata-client does not use this URL (it authenticates with client credentials)"
                                },
                            ),
                    );
                }
            }
            let scopes = |v: &Value| -> BTreeSet<String> {
                v.get("scopes")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let (sa, sb) = (scopes(va), scopes(vb));
            for scope in sb.difference(&sa) {
                self.record(
                    Draft::new(
                        ChangeKind::SecurityScopeAdded,
                        format!("security scheme {name}: {flow} scope {scope} added"),
                    )
                    .at(None, Some(&format!("{pf}/scopes/{}", escape(scope))))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "a scope that can be requested; requirements are compared separately",
                    ),
                );
            }
            for scope in sa.difference(&sb) {
                self.record(
                    Draft::new(
                        ChangeKind::SecurityScopeRemoved,
                        format!("security scheme {name}: {flow} scope {scope} removed"),
                    )
                    .at(Some(&format!("{pf}/scopes/{}", escape(scope))), None)
                    .impact(
                        if used(flow) { Wire::No } else { Wire::Yes },
                        Source::Yes,
                        if used(flow) {
                            "clients that request this scope get their token request refused"
                        } else {
                            "creditdata-client does not use this flow"
                        },
                    ),
                );
            }
        }
        for flow in fa.keys() {
            if !fb.contains_key(flow) {
                self.record(
                    Draft::new(ChangeKind::SecurityFlowRemoved, format!("security scheme {name}: {flow} flow removed"))
                        .at(Some(&format!("{at}/flows/{}", escape(flow))), None)
                        .impact(
                            if used(flow) { Wire::No } else { Wire::Yes },
                            Source::Yes,
                            if used(flow) {
                                "creditdata-client authenticates with this flow: clients can no longer get tokens"
                            } else {
                                "creditdata-client does not use this flow (it authenticates with client credentials)"
                            },
                        ),
                );
            }
        }
    }

    pub(super) fn servers(&mut self) {
        let servers = |doc: &Value| -> Vec<(String, String)> {
            doc.get("servers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|s| {
                    (
                        s.get("url")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        s.get("description")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    )
                })
                .collect()
        };
        let (a, b) = (servers(self.old), servers(self.new));
        let mut moved = BTreeSet::new();
        for (i, (url_b, desc_b)) in b.iter().enumerate() {
            if a.iter().any(|(u, _)| u == url_b) || desc_b.is_empty() {
                continue;
            }
            if let Some((j, (url_a, _))) = a
                .iter()
                .enumerate()
                .find(|(_, (u, d))| d == desc_b && !b.iter().any(|(ub, _)| ub == u))
            {
                moved.insert(url_a.clone());
                moved.insert(url_b.clone());
                self.record(
                    Draft::new(
                        ChangeKind::ServerChanged,
                        format!("server {desc_b:?} moved"),
                    )
                    .at(
                        Some(&format!("/servers/{j}/url")),
                        Some(&format!("/servers/{i}/url")),
                    )
                    .values(url_a.clone(), url_b.clone())
                    .impact(
                        Wire::No,
                        Source::Yes,
                        "clients configured with the old base URL fail: update their configuration",
                    ),
                );
            }
        }
        for (i, (url, desc)) in b.iter().enumerate() {
            if !moved.contains(url) && !a.iter().any(|(u, _)| u == url) {
                self.record(
                    Draft::new(
                        ChangeKind::ServerAdded,
                        format!("server {url} added{}", suffix(desc)),
                    )
                    .at(None, Some(&format!("/servers/{i}")))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "an additional base URL; nothing existing changes",
                    ),
                );
            }
        }
        for (i, (url, desc)) in a.iter().enumerate() {
            if !moved.contains(url) && !b.iter().any(|(u, _)| u == url) {
                self.record(
                    Draft::new(
                        ChangeKind::ServerRemoved,
                        format!("server {url} removed{}", suffix(desc)),
                    )
                    .at(Some(&format!("/servers/{i}")), None)
                    .impact(
                        Wire::No,
                        Source::Yes,
                        "clients configured with this base URL fail",
                    ),
                );
            }
        }
    }
}

fn suffix(description: &str) -> String {
    if description.is_empty() {
        String::new()
    } else {
        format!(" ({description})")
    }
}

/// A security requirement as a set of alternatives, each a map of scheme → scopes.
type Requirement = BTreeSet<BTreeMap<String, BTreeSet<String>>>;

pub(super) fn requirements(value: Option<&Value>) -> Requirement {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|alt| {
            alt.iter()
                .map(|(scheme, scopes)| {
                    let scopes = scopes
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                    (scheme.clone(), scopes)
                })
                .collect()
        })
        .collect()
}

pub(super) fn requirement_change(
    summary: String,
    po: &str,
    pn: &str,
    a: Option<&Value>,
    b: Option<&Value>,
) -> Draft {
    let (ra, rb) = (requirements(a), requirements(b));
    // An old client satisfies one old alternative; it still works if that alternative, or a
    // weaker one (same schemes, fewer scopes), is still accepted. No requirement at all accepts
    // everything.
    let still_ok = rb.is_empty()
        || rb.iter().any(|alt| alt.is_empty())
        || ra.iter().all(|old_alt| {
            rb.iter().any(|new_alt| {
                new_alt.keys().eq(old_alt.keys())
                    && new_alt
                        .iter()
                        .all(|(s, scopes)| scopes.is_subset(&old_alt[s]))
            })
        });
    let show = |v: Option<&Value>| v.map(compact).unwrap_or_else(|| "(none)".into());
    Draft::new(ChangeKind::SecurityRequirementChanged, summary)
        .at(Some(po), Some(pn))
        .values(show(a), show(b))
        .impact(
            if still_ok { Wire::Yes } else { Wire::No },
            Source::Yes,
            if still_ok {
                "every way of authenticating that worked is still accepted"
            } else {
                "credentials that satisfied the old requirement may be refused"
            },
        )
}
