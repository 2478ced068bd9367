//! The providers of a dataset the mock has no hand-written data for (one the description added):
//! the providers of each requested country that serve a package the session requested answer
//! it, under the session's life cycle, and the items of the made-up answer come from the
//! providers that answered.

use creditdata_client::types::SourceStatus;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::View;
use crate::catalog::{self, Provider};
use crate::described::example::{self, Unmakeable};
use crate::store::CountryRequest;

impl View<'_> {
    /// The `sources` of a described dataset: a country the catalog does not serve, or where no
    /// provider serves a package the session requested, is `UNSUPPORTED_COUNTRY`; each provider
    /// of a requested package (the catalog says which packages a provider serves) waits for the
    /// customer until the customer has consented to one of them, then follows the same rules as
    /// every dataset (a forced outcome, the provider delay, the simulated failures). A provider
    /// of a package the session never requested is not asked, as for the hand-written datasets
    /// (which answer `PACKAGE_UPGRADE_REQUIRED` for their own package): the mock cannot tell
    /// which package a dataset it only knows from the description belongs to, so it lists only
    /// providers the session asked for something, and a failure it draws for one of them is the
    /// failure every other dataset of that provider shows.
    pub fn described_sources(&self) -> Vec<Value> {
        let mut sources = Vec::new();
        for request in &self.record.countries {
            let code = request.country.as_str();
            let Some(country) = catalog::country(code) else {
                sources.push(source(None, code, SourceStatus::UnsupportedCountry));
                continue;
            };
            let mut asked = 0;
            for provider in country.providers {
                let Some(status) = self.described_status(request, provider) else {
                    continue;
                };
                asked += 1;
                sources.push(source(Some(provider.id), code, status));
            }
            if asked == 0 {
                sources.push(source(None, code, SourceStatus::UnsupportedCountry));
            }
        }
        sources
    }

    /// The status of `provider` for a described dataset, or `None` when it serves none of the
    /// packages requested in `request`: consent to any of those packages starts its clock.
    fn described_status(
        &self,
        request: &CountryRequest,
        provider: &Provider,
    ) -> Option<SourceStatus> {
        let serves = |package| provider.datasets.iter().any(|d| d.package() == package);
        let requested: Vec<_> = request
            .packages
            .iter()
            .filter(|p| serves(p.package))
            .collect();
        if requested.is_empty() {
            return None;
        }
        let consented = requested.iter().filter_map(|p| p.consented_at).min();
        Some(self.status_since_consent(consented, provider))
    }

    /// Makes a made-up answer `body` (of `schema`) follow the session: its `sources` member
    /// becomes [`View::described_sources`], and each list of items that name their `sourceId`
    /// holds one or two items per provider that answered `SUCCESS` (none before that), each
    /// with that provider's id and country.
    pub fn follow_providers(
        &self,
        document: &Value,
        schema: &Value,
        body: &mut Value,
        rng: &mut ChaCha8Rng,
    ) -> Result<(), Unmakeable> {
        let schema = example::merged(document, schema);
        let Value::Object(members) = body else {
            return Ok(());
        };
        let sources = self.described_sources();
        let answered: Vec<(String, String)> = sources
            .iter()
            .filter(|source| source["status"] == json!(SourceStatus::Success))
            .filter_map(|source| {
                Some((
                    source["sourceId"].as_str()?.to_owned(),
                    source["countryCode"].as_str()?.to_owned(),
                ))
            })
            .collect();
        for (name, value) in members.iter_mut() {
            if name == "sources" {
                if value.is_array() {
                    *value = Value::Array(sources.clone());
                }
                continue;
            }
            let names_its_source = value
                .as_array()
                .and_then(|items| items.first())
                .is_some_and(|item| item.get("sourceId").is_some());
            if !names_its_source {
                continue;
            }
            let Some(member_schema) = schema.pointer(&format!(
                "/properties/{}",
                name.replace('~', "~0").replace('/', "~1")
            )) else {
                continue;
            };
            let items_schema = example::merged(document, member_schema)
                .get("items")
                .cloned()
                .unwrap_or(json!({}));
            let mut items = Vec::new();
            for (source_id, country) in &answered {
                for _ in 0..rng.gen_range(1..=2) {
                    let mut item = example::example(document, &items_schema, rng)?;
                    if let Value::Object(item) = &mut item {
                        item.insert("sourceId".into(), json!(source_id));
                        if item.get("countryCode").is_some_and(Value::is_string) {
                            item.insert("countryCode".into(), json!(country));
                        }
                    }
                    items.push(item);
                }
            }
            *value = Value::Array(items);
        }
        Ok(())
    }
}

fn source(id: Option<&str>, country: &str, status: SourceStatus) -> Value {
    json!({ "sourceId": id, "countryCode": country, "status": status })
}
