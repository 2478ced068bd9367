//! `--query CCC:PACKAGE,...`: one country and its data packages, as the session input wants it.

use std::fmt;
use std::str::FromStr;

use creditdata_client::types::{
    DataPackageInput, QueryParameterInput, QueryParameterInputCountryCode,
};

/// One `--query` value: a country (ISO 3166-1 alpha-3, upper case) and its packages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuerySpec {
    /// The country, upper case (the request type checks the form the service accepts).
    pub country: QueryParameterInputCountryCode,
    /// The packages, in the order given, without repeats.
    pub packages: Vec<DataPackageInput>,
}

impl QuerySpec {
    /// The request element.
    pub fn to_input(&self) -> Result<QueryParameterInput, creditdata_client::Error> {
        Ok(QueryParameterInput::builder()
            .country_code(self.country.clone())
            .data_packages(self.packages.clone())
            .build()?)
    }
}

fn valid_packages() -> String {
    DataPackageInput::ALL
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads a data package name: any case, `-` or `_` between words.
pub fn parse_package(text: &str) -> Result<DataPackageInput, String> {
    let normalized = text.trim().to_ascii_uppercase().replace('-', "_");
    normalized.parse::<DataPackageInput>().map_err(|_| {
        format!(
            "unknown data package {text:?}; valid data packages: {} (any case, `-` or `_`)",
            valid_packages()
        )
    })
}

impl FromStr for QuerySpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let Some((country, packages)) = text.split_once(':') else {
            return Err(format!(
                "{text:?} is not COUNTRY:PACKAGE[,PACKAGE...] (e.g. GBR:CREDIT_HISTORY,SCORE); valid data packages: {}",
                valid_packages()
            ));
        };
        let country = country.trim();
        if country.len() != 3 || !country.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(format!(
                "{country:?} is not an ISO 3166-1 alpha-3 country code (three letters, e.g. GBR)"
            ));
        }
        let mut parsed = Vec::new();
        for name in packages.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let package = parse_package(name)?;
            if !parsed.contains(&package) {
                parsed.push(package);
            }
        }
        if parsed.is_empty() {
            return Err(format!(
                "no data package given for {country}; valid data packages: {}",
                valid_packages()
            ));
        }
        let country = country.to_ascii_uppercase().parse().map_err(|_| {
            format!(
                "{country:?} is not an ISO 3166-1 alpha-3 country code (three letters, e.g. GBR)"
            )
        })?;
        Ok(QuerySpec {
            country,
            packages: parsed,
        })
    }
}

impl fmt::Display for QuerySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let packages: Vec<String> = self.packages.iter().map(ToString::to_string).collect();
        write!(f, "{}:{}", self.country.as_str(), packages.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_package_round_trips() {
        for package in DataPackageInput::ALL {
            assert_eq!(parse_package(&package.to_string()).unwrap(), package);
        }
    }

    #[test]
    fn names_in_any_case_and_kebab_case() {
        let q: QuerySpec = "gbr:credit-history, Score,CREDIT_HISTORY,bank_account_categorization"
            .parse()
            .unwrap();
        assert_eq!(q.country.as_str(), "GBR");
        assert_eq!(
            q.packages,
            vec![
                DataPackageInput::CreditHistory,
                DataPackageInput::Score,
                DataPackageInput::BankAccountCategorization
            ]
        );
        assert_eq!(
            q.to_string(),
            "GBR:CREDIT_HISTORY,SCORE,BANK_ACCOUNT_CATEGORIZATION"
        );
    }

    #[test]
    fn mistakes_say_what_is_valid() {
        let err = "GBR:SCORE,CREDIT".parse::<QuerySpec>().unwrap_err();
        assert!(err.contains("unknown data package \"CREDIT\""), "{err}");
        assert!(err.contains("CREDIT_HISTORY, SCORE, BANK_ACCOUNT_CATEGORIZATION, IDENTIFICATION"));
        assert!(
            "GBR"
                .parse::<QuerySpec>()
                .unwrap_err()
                .contains("COUNTRY:PACKAGE")
        );
        assert!(
            "GB:SCORE"
                .parse::<QuerySpec>()
                .unwrap_err()
                .contains("alpha-3")
        );
        assert!(
            "GBR:"
                .parse::<QuerySpec>()
                .unwrap_err()
                .contains("no data package")
        );
        assert!("ÄÖÜ:SCORE".parse::<QuerySpec>().is_err());
    }
}
