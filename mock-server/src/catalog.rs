//! What the mock offers: countries, their (fictional) data providers, and which datasets each
//! provider delivers for which data package.
//!
//! Every provider, bank and company name here is invented.

use creditdata_client::types::DataPackageInput;

/// A dataset of the API (one family of endpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dataset {
    /// `person-details`
    PersonDetails,
    /// `identity-verifications` (+ images)
    IdentityVerifications,
    /// `attachments`
    Attachments,
    /// `negative-tradelines`
    NegativeTradelines,
    /// `positive-tradelines`
    PositiveTradelines,
    /// `court-and-insolvencies`
    CourtAndInsolvencies,
    /// `legal-entities`
    LegalEntities,
    /// `registry-incomes`
    RegistryIncomes,
    /// `immovables`
    Immovables,
    /// `metrics`
    Metrics,
    /// `source-files`
    SourceFiles,
    /// `scores`
    Scores,
    /// `account-statements` (+ Excel, TSV)
    AccountStatements,
    /// `categorizations` and `categorizations-summary`
    Categorizations,
}

impl Dataset {
    /// The data package a session must request to receive this dataset.
    pub fn package(self) -> DataPackageInput {
        use Dataset::*;
        match self {
            PersonDetails | IdentityVerifications | Attachments => DataPackageInput::Identification,
            NegativeTradelines | PositiveTradelines | CourtAndInsolvencies | LegalEntities
            | RegistryIncomes | Immovables | Metrics | SourceFiles => {
                DataPackageInput::CreditHistory
            }
            Scores => DataPackageInput::Score,
            AccountStatements | Categorizations => DataPackageInput::BankAccountCategorization,
        }
    }
}

/// What kind of institution a provider is; drives which data it produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// A credit bureau: tradelines, metrics, scores, original reports.
    Bureau,
    /// A public register: courts, companies, property, tax.
    Registry,
    /// An account-information aggregator: bank statements and their categorization.
    BankAggregator,
    /// An identity-verification service: person details, ID checks, mandates.
    Identity,
}

/// One data provider of one country.
#[derive(Debug, PartialEq)]
pub struct Provider {
    /// The `sourceId` the API reports.
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// What it is.
    pub kind: ProviderKind,
    /// The datasets it delivers.
    pub datasets: &'static [Dataset],
}

impl Provider {
    /// Whether this provider delivers `dataset`.
    pub fn delivers(&self, dataset: Dataset) -> bool {
        self.datasets.contains(&dataset)
    }
}

/// A country the mock has providers for.
#[derive(Debug, PartialEq)]
pub struct Country {
    /// ISO 3166-1 alpha-3.
    pub code: &'static str,
    /// ISO 3166-1 alpha-2 (IBANs, phone formats).
    pub alpha2: &'static str,
    /// English short name.
    pub name: &'static str,
    /// ISO 4217 currency.
    pub currency: &'static str,
    /// International dialling prefix.
    pub phone_prefix: &'static str,
    /// Its providers.
    pub providers: &'static [Provider],
    /// Given names (all within Latin-1, so the PDF's standard fonts can show them).
    pub given_names: &'static [&'static str],
    /// Family names.
    pub family_names: &'static [&'static str],
    /// Cities with a postal code.
    pub cities: &'static [(&'static str, &'static str)],
    /// Street names.
    pub streets: &'static [&'static str],
    /// Retail banks (for account statements and tradeline creditors).
    pub banks: &'static [&'static str],
    /// Employers (salary payers).
    pub employers: &'static [&'static str],
    /// Income tax rate used for registry incomes, in percent.
    pub tax_rate_percent: u32,
    /// Rough monthly net salary range in the local currency.
    pub salary_range: (u32, u32),
}

impl Country {
    /// Whether any provider of this country delivers data of `package`.
    pub fn offers(&self, package: DataPackageInput) -> bool {
        self.providers
            .iter()
            .any(|provider| provider.datasets.iter().any(|d| d.package() == package))
    }

    /// The packages offered here, in the API's order.
    pub fn packages(&self) -> Vec<DataPackageInput> {
        ALL_PACKAGES
            .into_iter()
            .filter(|package| self.offers(*package))
            .collect()
    }
}

/// Every data package, in the order of the API description.
pub const ALL_PACKAGES: [DataPackageInput; 4] = [
    DataPackageInput::CreditHistory,
    DataPackageInput::Score,
    DataPackageInput::BankAccountCategorization,
    DataPackageInput::Identification,
];

use Dataset::*;

const BUREAU_FULL: &[Dataset] = &[
    NegativeTradelines,
    PositiveTradelines,
    Metrics,
    SourceFiles,
    Scores,
];
const BUREAU_NEGATIVE_ONLY: &[Dataset] = &[NegativeTradelines, Metrics, SourceFiles, Scores];
const BANK: &[Dataset] = &[AccountStatements, Categorizations];
const IDENTITY: &[Dataset] = &[PersonDetails, IdentityVerifications, Attachments];

/// The countries the mock offers, with their providers.
pub static COUNTRIES: &[Country] = &[
    Country {
        code: "GBR",
        alpha2: "GB",
        name: "United Kingdom",
        currency: "GBP",
        phone_prefix: "+44",
        providers: &[
            Provider {
                id: "GBR_ALBION_CREDIT",
                name: "Albion Credit Bureau",
                kind: ProviderKind::Bureau,
                datasets: BUREAU_FULL,
            },
            Provider {
                id: "GBR_BRITANNIA_REGISTRY",
                name: "Britannia Court & Company Registry",
                kind: ProviderKind::Registry,
                datasets: &[CourtAndInsolvencies, LegalEntities, Immovables, SourceFiles],
            },
            Provider {
                id: "GBR_THAMES_OPENBANKING",
                name: "Thames Open Banking",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
            Provider {
                id: "GBR_KESTREL_ID",
                name: "Kestrel Identity",
                kind: ProviderKind::Identity,
                datasets: IDENTITY,
            },
        ],
        given_names: &[
            "Oliver",
            "Amelia",
            "Harry",
            "Isla",
            "George",
            "Emily",
            "Jack",
            "Sophie",
            "Thomas",
            "Charlotte",
        ],
        family_names: &[
            "Whitfield",
            "Ashworth",
            "Pemberton",
            "Hargreaves",
            "Caldwell",
            "Fairbanks",
            "Thornton",
            "Holloway",
        ],
        cities: &[
            ("Leeds", "LS1 4AP"),
            ("Bristol", "BS1 5TR"),
            ("Norwich", "NR2 1QE"),
            ("York", "YO1 7HH"),
        ],
        streets: &[
            "Mill Lane",
            "Station Road",
            "Church Street",
            "Victoria Road",
        ],
        banks: &[
            "Pennine Bank",
            "Severn Building Society",
            "Crown & Anchor Bank",
        ],
        employers: &[
            "Harbourside Logistics Ltd",
            "Greywell Engineering plc",
            "Northgate Health Trust",
        ],
        tax_rate_percent: 20,
        salary_range: (2100, 4800),
    },
    Country {
        code: "DEU",
        alpha2: "DE",
        name: "Germany",
        currency: "EUR",
        phone_prefix: "+49",
        providers: &[
            Provider {
                id: "DEU_RHEINLAND_KREDIT",
                name: "Rheinland Kreditauskunft",
                kind: ProviderKind::Bureau,
                datasets: BUREAU_FULL,
            },
            Provider {
                id: "DEU_BUNDESREGISTER_NORD",
                name: "Bundesregister Nord",
                kind: ProviderKind::Registry,
                datasets: &[CourtAndInsolvencies, LegalEntities, SourceFiles],
            },
            Provider {
                id: "DEU_ELBE_KONTODATEN",
                name: "Elbe Kontodaten",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
        ],
        given_names: &[
            "Lukas", "Anna", "Felix", "Lea", "Jonas", "Marie", "Paul", "Sophie",
        ],
        family_names: &[
            "Müller", "Schäfer", "Becker", "Hoffmann", "Krüger", "Wagner", "Lehmann",
        ],
        cities: &[
            ("Hamburg", "20095"),
            ("Köln", "50667"),
            ("Leipzig", "04109"),
            ("Freiburg", "79098"),
        ],
        streets: &[
            "Lindenstraße",
            "Bahnhofstraße",
            "Gartenweg",
            "Schillerplatz",
        ],
        banks: &["Hansebank", "Sparkasse Elbtal", "Volksbank Rheinaue"],
        employers: &[
            "Nordwerk GmbH",
            "Brückner Logistik AG",
            "Stadtwerke Auental",
        ],
        tax_rate_percent: 27,
        salary_range: (2300, 4600),
    },
    Country {
        code: "SWE",
        alpha2: "SE",
        name: "Sweden",
        currency: "SEK",
        phone_prefix: "+46",
        providers: &[
            Provider {
                id: "SWE_NORRSKEN_UC",
                name: "Norrsken Kreditupplysning",
                kind: ProviderKind::Bureau,
                datasets: BUREAU_NEGATIVE_ONLY,
            },
            Provider {
                id: "SWE_MALAREN_REGISTER",
                name: "Mälaren Skatte- och Fastighetsregister",
                kind: ProviderKind::Registry,
                datasets: &[
                    RegistryIncomes,
                    Immovables,
                    LegalEntities,
                    CourtAndInsolvencies,
                    SourceFiles,
                ],
            },
            Provider {
                id: "SWE_ORESUND_OPENBANKING",
                name: "Öresund Open Banking",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
            Provider {
                id: "SWE_NORDLJUS_EID",
                name: "Nordljus eID",
                kind: ProviderKind::Identity,
                datasets: IDENTITY,
            },
        ],
        given_names: &[
            "Erik", "Astrid", "Lars", "Ingrid", "Nils", "Sofia", "Anders", "Maja",
        ],
        family_names: &[
            "Lindqvist",
            "Sjöberg",
            "Åkesson",
            "Bergström",
            "Holmgren",
            "Nyström",
        ],
        cities: &[
            ("Uppsala", "753 20"),
            ("Göteborg", "411 05"),
            ("Umeå", "903 26"),
            ("Malmö", "211 22"),
        ],
        streets: &["Storgatan", "Kungsgatan", "Sjövägen", "Björkallén"],
        banks: &["Vikingbanken", "Sparbanken Mälardalen", "Norrlandsbanken"],
        employers: &[
            "Fjällström Bygg AB",
            "Kustlinjen Transport AB",
            "Region Mälaren",
        ],
        tax_rate_percent: 31,
        salary_range: (26000, 52000),
    },
    Country {
        code: "FIN",
        alpha2: "FI",
        name: "Finland",
        currency: "EUR",
        phone_prefix: "+358",
        providers: &[
            Provider {
                id: "FIN_AURORA_LUOTTO",
                name: "Aurora Luottotieto",
                kind: ProviderKind::Bureau,
                datasets: BUREAU_FULL,
            },
            Provider {
                id: "FIN_TAMMI_REGISTRY",
                name: "Tammi Tax & Property Registry",
                kind: ProviderKind::Registry,
                datasets: &[
                    RegistryIncomes,
                    Immovables,
                    LegalEntities,
                    CourtAndInsolvencies,
                    SourceFiles,
                ],
            },
            Provider {
                id: "FIN_SAIMAA_ACCOUNTS",
                name: "Saimaa Account Data",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
            Provider {
                id: "FIN_SISU_ID",
                name: "Sisu Identity",
                kind: ProviderKind::Identity,
                datasets: IDENTITY,
            },
        ],
        given_names: &[
            "Mikko", "Aino", "Juha", "Emilia", "Antti", "Helmi", "Ville", "Sanna",
        ],
        family_names: &[
            "Virtanen",
            "Korhonen",
            "Mäkinen",
            "Nieminen",
            "Heikkinen",
            "Laaksonen",
        ],
        cities: &[
            ("Tampere", "33100"),
            ("Turku", "20100"),
            ("Oulu", "90100"),
            ("Jyväskylä", "40100"),
        ],
        streets: &["Koivukatu", "Rantatie", "Kirkkokatu", "Myllytie"],
        banks: &["Pohjolan Säästöpankki", "Järvipankki", "Kaleva Bank"],
        employers: &[
            "Kuusiston Kone Oy",
            "Saaristo Logistiikka Oy",
            "Pirkanmaan Terveys",
        ],
        tax_rate_percent: 25,
        salary_range: (2400, 4500),
    },
    Country {
        code: "EST",
        alpha2: "EE",
        name: "Estonia",
        currency: "EUR",
        phone_prefix: "+372",
        providers: &[
            Provider {
                id: "EST_KALEV_KREDIIT",
                name: "Kalev Krediidiinfo",
                kind: ProviderKind::Bureau,
                datasets: BUREAU_FULL,
            },
            Provider {
                id: "EST_TOOMPEA_REGISTRY",
                name: "Toompea Registry",
                kind: ProviderKind::Registry,
                datasets: &[
                    RegistryIncomes,
                    Immovables,
                    LegalEntities,
                    CourtAndInsolvencies,
                    SourceFiles,
                ],
            },
            Provider {
                id: "EST_BALTICSEA_OPENBANKING",
                name: "Baltic Sea Open Banking (EE)",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
            Provider {
                id: "EST_LINNUS_EID",
                name: "Linnus eID",
                kind: ProviderKind::Identity,
                datasets: IDENTITY,
            },
        ],
        given_names: &[
            "Kristjan", "Liis", "Margus", "Kadri", "Rasmus", "Triin", "Andres", "Kertu",
        ],
        family_names: &["Tamm", "Saar", "Sepp", "Mägi", "Kask", "Kukk", "Rebane"],
        cities: &[
            ("Tallinn", "10111"),
            ("Tartu", "51004"),
            ("Pärnu", "80010"),
            ("Narva", "20308"),
        ],
        streets: &[
            "Pikk tänav",
            "Kase tänav",
            "Mere puiestee",
            "Vabaduse väljak",
        ],
        banks: &["Lõunapank", "Toompea Pank", "Saare Hoiupank"],
        employers: &[
            "Virumaa Puit OÜ",
            "Läänemere Logistika AS",
            "Tartu Tarkvara OÜ",
        ],
        tax_rate_percent: 22,
        salary_range: (1500, 3200),
    },
    Country {
        code: "LVA",
        alpha2: "LV",
        name: "Latvia",
        currency: "EUR",
        phone_prefix: "+371",
        providers: &[
            Provider {
                id: "LVA_DAUGAVA_KREDITINFO",
                name: "Daugava Kreditinfo",
                kind: ProviderKind::Bureau,
                datasets: BUREAU_FULL,
            },
            Provider {
                id: "LVA_BALTICSEA_OPENBANKING",
                name: "Baltic Sea Open Banking (LV)",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
        ],
        given_names: &["Janis", "Liga", "Andris", "Ilze", "Martins", "Laura"],
        family_names: &["Berzins", "Kalnins", "Ozols", "Liepa", "Krumins"],
        cities: &[
            ("Riga", "LV-1050"),
            ("Jelgava", "LV-3001"),
            ("Liepaja", "LV-3401"),
        ],
        streets: &["Brivibas iela", "Elizabetes iela", "Dzirnavu iela"],
        banks: &["Daugavas Banka", "Vidzeme Krajbanka"],
        employers: &["Gauja Koks SIA", "Rigas Ostas Logistika SIA"],
        tax_rate_percent: 23,
        salary_range: (1200, 2800),
    },
    Country {
        code: "LTU",
        alpha2: "LT",
        name: "Lithuania",
        currency: "EUR",
        phone_prefix: "+370",
        providers: &[
            Provider {
                id: "LTU_NEMUNAS_CREDIT",
                name: "Nemunas Credit Bureau",
                kind: ProviderKind::Bureau,
                datasets: &[NegativeTradelines, PositiveTradelines, Metrics, SourceFiles],
            },
            Provider {
                id: "LTU_BALTICSEA_OPENBANKING",
                name: "Baltic Sea Open Banking (LT)",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
            Provider {
                id: "LTU_GEDIMINAS_ID",
                name: "Gediminas Identity",
                kind: ProviderKind::Identity,
                datasets: IDENTITY,
            },
        ],
        given_names: &["Lukas", "Gabija", "Mantas", "Ieva", "Tomas", "Austeja"],
        family_names: &["Kazlauskas", "Petrauskas", "Jankauskas", "Stankevicius"],
        cities: &[
            ("Vilnius", "LT-01103"),
            ("Kaunas", "LT-44280"),
            ("Klaipeda", "LT-91246"),
        ],
        streets: &["Gedimino prospektas", "Laisves aleja", "Pilies gatve"],
        banks: &["Nemuno Bankas", "Baltijos Taupomasis Bankas"],
        employers: &["Kursiu Logistika UAB", "Zalgirio Statyba UAB"],
        tax_rate_percent: 20,
        salary_range: (1300, 3000),
    },
    Country {
        code: "POL",
        alpha2: "PL",
        name: "Poland",
        currency: "PLN",
        phone_prefix: "+48",
        providers: &[
            Provider {
                id: "POL_WISLA_BIURO",
                name: "Wisla Biuro Kredytowe",
                kind: ProviderKind::Bureau,
                datasets: BUREAU_FULL,
            },
            Provider {
                id: "POL_MAZOWSZE_REJESTR",
                name: "Rejestr Mazowsze",
                kind: ProviderKind::Registry,
                datasets: &[CourtAndInsolvencies, LegalEntities, Immovables, SourceFiles],
            },
            Provider {
                id: "POL_WARTA_OPENBANKING",
                name: "Warta Open Banking",
                kind: ProviderKind::BankAggregator,
                datasets: BANK,
            },
            Provider {
                id: "POL_TATRA_ID",
                name: "Tatra Identity",
                kind: ProviderKind::Identity,
                datasets: IDENTITY,
            },
        ],
        given_names: &["Jakub", "Zofia", "Piotr", "Anna", "Kacper", "Julia"],
        family_names: &["Nowak", "Wojcik", "Mazur", "Krawczyk", "Zajac"],
        cities: &[
            ("Kraków", "31-001"),
            ("Gdansk", "80-001"),
            ("Poznan", "61-001"),
        ],
        streets: &["ulica Dluga", "ulica Kwiatowa", "ulica Polna"],
        banks: &["Bank Wislany", "Baltycki Bank Spoldzielczy"],
        employers: &["Mazowieckie Zaklady Sp. z o.o.", "Odra Transport S.A."],
        tax_rate_percent: 17,
        salary_range: (5200, 11000),
    },
];

/// The catalog entry of `code` (alpha-3, upper case), if the mock offers that country.
pub fn country(code: &str) -> Option<&'static Country> {
    COUNTRIES.iter().find(|country| country.code == code)
}

/// The English name of any ISO alpha-3 country (catalog name first, else the ISO long name).
pub fn country_name(code: &str) -> String {
    if let Some(country) = country(code) {
        return country.name.to_owned();
    }
    celes::Country::from_alpha3(code)
        .map(|country| country.long_name.to_owned())
        .unwrap_or_else(|_| code.to_owned())
}

/// The provider with `source_id`, and its country.
pub fn provider(source_id: &str) -> Option<(&'static Country, &'static Provider)> {
    COUNTRIES.iter().find_map(|country| {
        country
            .providers
            .iter()
            .find(|provider| provider.id == source_id)
            .map(|provider| (country, provider))
    })
}
