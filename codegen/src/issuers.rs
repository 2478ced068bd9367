//! The identity providers the description names: for each OAuth2 security scheme with an
//! authorization code flow, its OpenID Connect issuer, written as constants into
//! `generated-client/src/generated_issuers.rs`, so the client reads no file at run time (and
//! its package needs nothing outside the crate).

use std::fmt::Write as _;

use serde_json::Value;

/// The path an OpenID Connect issuer's authorization endpoint has below the issuer (Keycloak's
/// layout, which the description's URLs follow).
pub const AUTHORIZATION_SUFFIX: &str = "/protocol/openid-connect/auth";

/// Each security scheme with an authorization code flow, in the description's order: its name,
/// and its issuer (`authorizationUrl` without [`AUTHORIZATION_SUFFIX`]), or `None` when that
/// URL is not of an OpenID Connect issuer.
pub fn issuers(effective: &Value) -> Vec<(String, Option<String>)> {
    let Some(schemes) = effective
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    schemes
        .iter()
        .filter_map(|(name, scheme)| {
            let url = scheme
                .pointer("/flows/authorizationCode/authorizationUrl")
                .and_then(Value::as_str)?;
            let issuer = url
                .trim_end_matches('/')
                .strip_suffix(AUTHORIZATION_SUFFIX)
                .map(str::to_string);
            Some((name.clone(), issuer))
        })
        .collect()
}

/// `generated_issuers.rs`: `header`, then the constant the client's `environment.rs` reads.
pub fn generate(effective: &Value, header: &str) -> String {
    let mut out = String::from(header);
    out.push_str(
        "\n//! Leaf (generated): the OpenID Connect issuers of the description's security schemes\n\
         //! (`codegen/src/issuers.rs`).\n\n\
         /// Each security scheme with an authorization code flow: its name, and its issuer (the\n\
         /// flow's `authorizationUrl` without `/protocol/openid-connect/auth`), or `None` when\n\
         /// that URL is not of an OpenID Connect issuer.\n\
         pub(crate) const SECURITY_SCHEME_ISSUERS: &[(&str, Option<&str>)] = &[\n",
    );
    for (name, issuer) in issuers(effective) {
        let issuer = match issuer {
            Some(issuer) => format!("Some({issuer:?})"),
            None => "None".to_string(),
        };
        let _ = writeln!(out, "    ({name:?}, {issuer}),");
    }
    out.push_str("];\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_authorization_code_scheme_gets_its_issuer_or_none() {
        let document = json!({"components": {"securitySchemes": {
            "live": {"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": "https://login.bank.test/realms/live/protocol/openid-connect/auth"}}},
            "odd": {"type": "oauth2", "flows": {"authorizationCode": {
                "authorizationUrl": "https://login.bank.test/authorize"}}},
            "machines": {"type": "oauth2", "flows": {"clientCredentials": {
                "tokenUrl": "https://login.bank.test/token"}}},
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"}
        }}});
        assert_eq!(
            issuers(&document),
            vec![
                (
                    "live".to_string(),
                    Some("https://login.bank.test/realms/live".to_string())
                ),
                ("odd".to_string(), None),
            ]
        );
        let code = generate(&document, "// header\n");
        assert!(code.starts_with("// header\n"), "{code}");
        assert!(
            code.contains(r#"("live", Some("https://login.bank.test/realms/live")),"#),
            "{code}"
        );
        assert!(code.contains(r#"("odd", None),"#), "{code}");
        assert!(!code.contains("machines"), "{code}");
    }

    #[test]
    fn a_description_without_schemes_gives_an_empty_table() {
        let code = generate(&json!({"openapi": "3.0.3"}), "");
        assert!(code.contains("= &[\n];"), "{code}");
    }
}
