//! `person-details`: who the subject is, as the providers that identified them report it.

use crate::built::Built;
use creditdata_client::types::{
    AddressSourcedValue, DateOnlySourcedValue, DocumentSourcedValue, MaritalStatusTypeSourcedValue,
    PersonDetailsResponse, PersonalIdentityCodeSourcedValue, StringSourcedValue,
    UntypedSourcedValue,
};
use serde_json::{Value, json};

use super::{View, object};
use crate::catalog::Dataset;

impl View<'_> {
    /// `GET .../person-details`
    pub fn person_details(&self) -> PersonDetailsResponse {
        let delivered = self.delivered(Dataset::PersonDetails);
        let ids: Vec<String> = delivered.iter().map(|(_, p)| p.id.to_owned()).collect();
        let person = &self.dossier.person;
        let all = || (!ids.is_empty()).then(|| ids.clone());
        let strings = |value: &str| -> Vec<StringSourcedValue> {
            all().map_or_else(Vec::new, |ids| {
                vec![
                    StringSourcedValue::builder()
                        .value(Some(value.to_owned()))
                        .source_ids(Some(ids))
                        .build()
                        .built(),
                ]
            })
        };
        let untyped =
            |value: Value| -> Option<(Value, Vec<String>)> { all().map(|ids| (value, ids)) };
        let home_ids: Vec<String> = delivered
            .iter()
            .filter(|(data, _)| data.home)
            .map(|(_, p)| p.id.to_owned())
            .collect();
        let mut addresses: Vec<AddressSourcedValue> = untyped(person.address.to_json())
            .map(|(value, ids)| {
                AddressSourcedValue::builder()
                    .value(Some(object_with(value, "addressType", "CURRENT")))
                    .source_ids(Some(ids))
                    .build()
                    .built()
            })
            .into_iter()
            .collect();
        if let Some(previous) = &person.previous_address
            && !home_ids.is_empty()
        {
            addresses.push(
                AddressSourcedValue::builder()
                    .value(Some(object_with(
                        previous.to_json(),
                        "addressType",
                        "PREVIOUS",
                    )))
                    .source_ids(Some(home_ids.clone()))
                    .build()
                    .built(),
            );
        }
        PersonDetailsResponse::builder()
            .sources(Some(self.sources(Dataset::PersonDetails)))
            .given_names(Some(strings(&person.given_name)))
            .family_names(Some(strings(&person.family_name)))
            .birth_dates(Some(
                untyped(json!(person.birth_date.to_string()))
                    .map(|(value, ids)| {
                        DateOnlySourcedValue::builder()
                            .value(Some(value))
                            .source_ids(Some(ids))
                            .build()
                            .built()
                    })
                    .into_iter()
                    .collect(),
            ))
            .personal_identity_codes(Some(
                untyped(json!({
                    "code": person.identity_code,
                    "countryCode": person.home.code,
                    "type": "NATIONAL_IDENTITY_NUMBER",
                }))
                .map(|(value, ids)| {
                    PersonalIdentityCodeSourcedValue::builder()
                        .value(Some(value))
                        .source_ids(Some(ids))
                        .build()
                        .built()
                })
                .into_iter()
                .collect(),
            ))
            .telephones(Some(strings(&person.phone)))
            .emails(Some(strings(&person.email)))
            .addresses(Some(addresses))
            .documents(Some(
                untyped(person.document.to_json())
                    .map(|(value, ids)| {
                        DocumentSourcedValue::builder()
                            .value(Some(value))
                            .source_ids(Some(ids))
                            .build()
                            .built()
                    })
                    .into_iter()
                    .collect(),
            ))
            .citizenships(Some(strings(person.home.code)))
            .marital_statuses(Some(
                untyped(json!(person.marital_status))
                    .map(|(value, ids)| {
                        MaritalStatusTypeSourcedValue::builder()
                            .value(Some(value))
                            .source_ids(Some(ids))
                            .build()
                            .built()
                    })
                    .into_iter()
                    .collect(),
            ))
            .underage_children_counts(Some(
                untyped(json!(person.children))
                    .map(|(value, ids)| {
                        UntypedSourcedValue::builder()
                            .value(Some(value))
                            .source_ids(Some(ids))
                            .build()
                            .built()
                    })
                    .into_iter()
                    .collect(),
            ))
            .build()
            .built()
    }
}

fn object_with(value: Value, key: &str, item: &str) -> Value {
    let mut map = object(value);
    map.insert(key.to_owned(), json!(item));
    Value::Object(map)
}
