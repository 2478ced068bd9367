//! What the customer still has to do, and the catalog of packages per country.

use crate::built::Built;
use creditdata_client::types::{
    ConsumerPackage, ConsumerPackagesResponse, DataPackageInput, InputRequirement,
    InputRequirementsResponse,
};
use serde_json::json;

use super::{View, object};
use crate::catalog::{self, ProviderKind};
use crate::store::package_output;

impl View<'_> {
    /// `GET .../input-requirements`: what the customer still has to do, per provider.
    pub fn input_requirements(&self) -> InputRequirementsResponse {
        let mut items = Vec::new();
        for request in &self.record.countries {
            let Some(country) = catalog::country(&request.country) else {
                continue;
            };
            let pending: Vec<DataPackageInput> = request
                .packages
                .iter()
                .filter(|p| p.consented_at.is_none())
                .map(|p| p.package)
                .collect();
            for provider in country.providers {
                let packages: Vec<DataPackageInput> = pending
                    .iter()
                    .copied()
                    .filter(|package| provider.datasets.iter().any(|d| d.package() == *package))
                    .collect();
                if packages.is_empty() {
                    continue;
                }
                let (kind, description) = match provider.kind {
                    ProviderKind::Identity => (
                        "IDENTITY_VERIFICATION",
                        format!(
                            "The subject must verify their identity with {}.",
                            provider.name
                        ),
                    ),
                    ProviderKind::BankAggregator => (
                        "BANK_ACCOUNT_LINK",
                        format!(
                            "The subject must link their bank accounts through {}.",
                            provider.name
                        ),
                    ),
                    ProviderKind::Bureau | ProviderKind::Registry => (
                        "CONSENT",
                        format!(
                            "The subject must consent to the retrieval of their data from {}.",
                            provider.name
                        ),
                    ),
                };
                items.push(InputRequirement::builder().source_id(Some(provider.id.to_owned())).country_code(Some(country.code.to_owned())).extra(object(json!({
                        "type": kind,
                        "description": description,
                        "dataPackages": packages.iter().map(|p| package_output(*p)).collect::<Vec<_>>(),
                        "dueUtc": self.record.deadline,
                    }))).build().built());
            }
        }
        InputRequirementsResponse::builder()
            .input_requirements(Some(items))
            .build()
            .built()
    }
}

/// `GET /v1/consumer/packages`: every catalog country with the packages it offers.
pub fn consumer_packages() -> ConsumerPackagesResponse {
    ConsumerPackagesResponse::builder().packages(Some(
            catalog::COUNTRIES
                .iter()
                .map(|country| ConsumerPackage::builder().country_code(Some(country.code.to_owned())).data_packages(Some(country.packages().into_iter().map(package_output).collect())).extra(object(json!({
                        "countryName": country.name,
                        "sources": country.providers.iter().map(|p| json!({
                            "sourceId": p.id,
                            "name": p.name,
                            "dataPackages": catalog::ALL_PACKAGES
                                .iter()
                                .filter(|package| p.datasets.iter().any(|d| d.package() == **package))
                                .map(|package| package_output(*package))
                                .collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                    }))).build().built())
                .collect(),
        )).build().built()
}
