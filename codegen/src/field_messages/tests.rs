//! Unit tests of the field-messages pass on small generated files.

use super::*;
use quote::quote;
use serde_json::json;

fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "paths": {"/v1/people": {"get": {
            "operationId": "GetPeople",
            "parameters": [
                {"name": "Code", "in": "query", "schema": {"type": "string", "pattern": "^[A-Z]$"}},
                {"name": "PersonId", "in": "query", "schema": {"type": "string", "format": "uuid"}}
            ]
        }}},
        "components": {"schemas": {"Person": {"type": "object", "properties": {
            "mailAddress": {"type": "string", "format": "email", "maxLength": 9}
        }}}}
    })
}

fn generated() -> syn::File {
    syn::parse_quote! {
        pub mod types {
            pub struct Person {
                #[serde(rename = "mailAddress")]
                pub mail_address: PersonMailAddress,
            }
            pub struct PersonMailAddress(::std::string::String);
            impl ::std::str::FromStr for PersonMailAddress {
                type Err = self::error::ConversionError;
                fn from_str(value: &str) -> ::std::result::Result<Self, self::error::ConversionError> {
                    if value.chars().count() > 9usize {
                        return Err("longer than 9 characters".into());
                    }
                    Ok(Self(value.to_string()))
                }
            }
            pub struct GetPeopleCode(::std::string::String);
            impl ::std::str::FromStr for GetPeopleCode {
                type Err = self::error::ConversionError;
                fn from_str(value: &str) -> ::std::result::Result<Self, self::error::ConversionError> {
                    if PATTERN.find(value).is_none() {
                        return Err("doesn't match pattern \"^[A-Z]$\"".into());
                    }
                    Ok(Self(value.to_string()))
                }
            }
            pub mod builder {
                pub struct Person {
                    mail_address: ::std::result::Result<super::PersonMailAddress, ::std::string::String>,
                }
                impl ::std::default::Default for Person {
                    fn default() -> Self {
                        Self { mail_address: Err("no value supplied for mail_address".to_string()) }
                    }
                }
                impl Person {
                    pub fn mail_address<T>(mut self, value: T) -> Self
                    where
                        T: ::std::convert::TryInto<super::PersonMailAddress>,
                        T::Error: ::std::fmt::Display,
                    {
                        self.mail_address = value.try_into().map_err(|e| {
                            format!("error converting supplied value for mail_address: {e}")
                        });
                        self
                    }
                }
            }
        }
        pub mod builder {
            pub struct GetPeople<'a> {
                client: &'a super::Client,
                code: Result<Option<types::GetPeopleCode>, String>,
                person_id: Result<Option<::uuid::Uuid>, String>,
            }
            impl<'a> GetPeople<'a> {
                pub fn code<V>(mut self, value: V) -> Self
                where
                    V: std::convert::TryInto<types::GetPeopleCode>,
                {
                    self.code = value.try_into().map(Some).map_err(|_| {
                        "conversion to `GetPeopleCode` for code failed".to_string()
                    });
                    self
                }
                pub fn person_id<V>(mut self, value: V) -> Self
                where
                    V: std::convert::TryInto<::uuid::Uuid>,
                {
                    self.person_id = value.try_into().map(Some).map_err(|_| {
                        "conversion to `:: uuid :: Uuid` for person_id failed".to_string()
                    });
                    self
                }
            }
        }
    }
}

fn assert_no_warnings(warnings: Vec<FieldMessagesError>) {
    assert!(warnings.is_empty(), "{warnings:?}");
}

fn text(file: &syn::File) -> String {
    prettyplease::unparse(file)
}

#[test]
fn newtype_refusals_name_their_member_or_parameter_and_email_is_checked() {
    let mut file = generated();
    assert_no_warnings(name_fields(&mut file, &document()));
    let code = text(&file);
    assert!(
        code.contains(r#"Err("mailAddress: longer than 9 characters".into())"#),
        "{code}"
    );
    assert!(
        code.contains(r#"Err("Code: doesn't match pattern \"^[A-Z]$\"".into())"#),
        "{code}"
    );
    assert!(
        code.contains("if !crate::email::is_email_address(value)"),
        "{code}"
    );
    assert!(
        code.contains("mailAddress is not an e-mail address"),
        "{code}"
    );
    // Only the member whose schema says `format: email` is checked as one.
    assert_eq!(code.matches("is_email_address(value)").count(), 1, "{code}");
}

#[test]
fn builder_messages_name_the_wire_member_and_keep_the_reason() {
    let mut file = generated();
    assert_no_warnings(name_fields(&mut file, &document()));
    let code = text(&file);
    assert!(
        code.contains(r#"Err("mailAddress is required".to_string())"#),
        "{code}"
    );
    // The newtype's reason names the member already.
    assert!(code.contains(r#"format!("{e}")"#), "{code}");
    assert!(code.contains(".map_err(|e| e.to_string())"), "{code}");
    assert!(
        code.contains("PersonId is not a UUID (such as 123e4567-e89b-12d3-a456-426614174000): {e}"),
        "{code}"
    );
    assert!(
        code.contains("<V as ::std::convert::TryInto<::uuid::Uuid>>::Error: ::std::fmt::Display"),
        "{code}"
    );
    for text in GENERATED_TEXT {
        assert!(!code.contains(text), "{text} left in {code}");
    }
}

#[test]
fn a_newtype_without_an_origin_or_with_an_unknown_refusal_is_a_warning_and_keeps_its_message() {
    let mut file = generated();
    let mut doc = document();
    doc["paths"] = json!({});
    let warnings: Vec<String> = name_fields(&mut file, &doc)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        warnings.iter().any(|w| w.contains("types::GetPeopleCode")
            && w.contains("field_messages.rs")
            && w.contains("keep the generator's message")),
        "{warnings:?}"
    );
    let code = text(&file);
    assert!(
        code.contains(r#"Err("doesn't match pattern \"^[A-Z]$\"".into())"#),
        "the newtype with no field to name keeps its message: {code}"
    );
    assert!(
        code.contains(r#"Err("mailAddress: longer than 9 characters".into())"#),
        "the other refusals are still named: {code}"
    );

    let mut file: syn::File = syn::parse2(quote! {
        pub mod types {
            pub struct Person { pub code: PersonCode }
            pub struct PersonCode(String);
            impl ::std::str::FromStr for PersonCode {
                type Err = ConversionError;
                fn from_str(value: &str) -> Result<Self, ConversionError> {
                    Err(format!("bad {}", value).into())
                }
            }
        }
    })
    .unwrap();
    let warnings: Vec<String> = name_fields(&mut file, &document())
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("types::PersonCode") && w.contains("shape")),
        "{warnings:?}"
    );
    assert!(text(&file).contains(r#"Err(format!("bad {}", value).into())"#));
}
