//! `Debug` for values that hold personal data (e-mail addresses, names, identity codes, account
//! numbers, dataset contents) or secrets: it shows what identifies the value (ids, times,
//! statuses, counts) and elides the rest as `..`, so a `{:?}` in a log line, a panic message or a
//! test failure never carries them.

/// Implements `Debug` for `$type` showing only the listed fields; the others (personal data,
/// dataset contents or secrets) are elided as `..`.
macro_rules! debug_showing {
    ($type:ident { $($field:ident),* $(,)? }) => {
        impl std::fmt::Debug for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($type))
                    $(.field(stringify!($field), &self.$field))*
                    .finish_non_exhaustive()
            }
        }
    };
}

pub(crate) use debug_showing;

#[cfg(test)]
mod tests {
    use chrono::{TimeZone as _, Utc};
    use uuid::Uuid;

    use crate::config::{MockConfig, TestUser};
    use crate::data::{Dossier, DossierCache};
    use crate::idp::{Caller, Claims, IdTokenClaims};
    use crate::problem::Problem;
    use crate::store::state_file::{STATE_VERSION, StateFile};
    use crate::store::{
        CountryRequest, Notification, NotificationKind, PackageRequest, Progress, SessionRecord,
        Store,
    };

    const EMAIL: &str = "jane.roe@example.com";
    const OPERATOR: &str = "Olga Operator";
    const USERNAME: &str = "olga.operator";
    const PASSWORD: &str = "correct horse battery staple";

    fn record() -> SessionRecord {
        let now = Utc
            .with_ymd_and_hms(2026, 1, 5, 10, 0, 0)
            .single()
            .expect("time");
        SessionRecord {
            id: Uuid::from_u128(7),
            created_at: now,
            created_by_name: OPERATOR.into(),
            organizational_unit_name: Some("Retail".into()),
            subject_email: EMAIL.into(),
            countries: ["FIN", "GBR"]
                .into_iter()
                .map(|code| CountryRequest {
                    country: code.into(),
                    packages: crate::catalog::ALL_PACKAGES
                        .iter()
                        .map(|package| PackageRequest {
                            package: *package,
                            requested_at: now,
                            consented_at: Some(now),
                        })
                        .collect(),
                })
                .collect(),
            deadline: now,
            progress: Progress::CompletedByCustomer { at: now },
            notifications: vec![Notification {
                sent_at: now,
                kind: NotificationKind::Onboarding,
                to: EMAIL.into(),
            }],
            source_overrides: Default::default(),
            described_members: Default::default(),
        }
    }

    /// Everything personal the dossier of `record` holds, as text.
    fn personal_data(dossier: &Dossier) -> Vec<String> {
        let person = &dossier.person;
        let mut found = vec![
            person.given_name.clone(),
            person.family_name.clone(),
            person.email.clone(),
            person.phone.clone(),
            person.identity_code.clone(),
            person.address.street.clone(),
            person.document.number.clone(),
            person.birth_date.to_string(),
        ];
        for data in &dossier.countries {
            for account in &data.accounts {
                found.extend([account.iban.clone(), account.holder.clone()]);
                found.extend(account.transactions.iter().map(|t| t.description.clone()));
            }
            let credit = &data.credit;
            found.extend(credit.positive.iter().map(|t| t.creditor.clone()));
            found.extend(credit.negative.iter().map(|e| e.creditor.clone()));
            found.extend(credit.court.iter().map(|c| c.case_number.clone()));
            found.extend(credit.companies.iter().map(|c| c.registry_code.clone()));
            found.extend(credit.properties.iter().map(|p| p.registry_number.clone()));
            if let Some(identity) = &data.identity {
                found.extend(identity.attachments.iter().map(|a| a.file_name.clone()));
                found.extend(
                    identity
                        .verification
                        .images
                        .iter()
                        .map(|i| i.file_name.clone()),
                );
            }
        }
        found.retain(|text| text.len() >= 4);
        found.sort();
        found.dedup();
        found
    }

    /// The personal values or secrets `debug` shows.
    fn shown<'a>(debug: &str, secrets: &'a [String]) -> Vec<&'a str> {
        secrets
            .iter()
            .map(String::as_str)
            .filter(|secret| debug.contains(secret))
            .collect()
    }

    #[test]
    fn debug_output_shows_no_personal_data_or_secrets() {
        let record = record();
        let dossier = Dossier::generate(&record);
        let mut secrets = personal_data(&dossier);
        assert!(secrets.len() > 20, "{} personal values", secrets.len());
        secrets.extend([EMAIL, OPERATOR, USERNAME, PASSWORD].map(String::from));

        let mut store = Store::default();
        store.sessions.insert(record.id, record.clone());
        let state_file = StateFile {
            version: STATE_VERSION,
            signing_key_pem: None,
            sessions: vec![record.clone()],
            identity: Default::default(),
        };
        let cache = DossierCache::default();
        cache.get(&record);
        let user = TestUser {
            username: USERNAME.into(),
            password: PASSWORD.into(),
            name: OPERATOR.into(),
            email: Some(EMAIL.into()),
        };
        let config = MockConfig {
            users: vec![user.clone()],
            ..MockConfig::default()
        };
        let caller = Caller {
            client_id: "creditdata-cli".into(),
            username: USERNAME.into(),
            name: Some(OPERATOR.into()),
        };
        let claims = Claims {
            exp: 2,
            iat: 1,
            jti: "jti".into(),
            iss: "issuer".into(),
            aud: "audience".into(),
            sub: crate::idp::user_subject(USERNAME),
            typ: "Bearer".into(),
            azp: "creditdata-cli".into(),
            scope: "openid email".into(),
            preferred_username: USERNAME.into(),
            client_id: None,
            name: Some(OPERATOR.into()),
            sid: None,
            auth_time: Some(1),
        };
        let id_token = IdTokenClaims {
            iss: "issuer".into(),
            sub: crate::idp::user_subject(USERNAME),
            aud: "creditdata-cli".into(),
            exp: 2,
            iat: 1,
            auth_time: 1,
            nonce: None,
            azp: "creditdata-cli".into(),
            sid: "sid".into(),
            typ: "ID".into(),
            at_hash: None,
            name: OPERATOR.into(),
            preferred_username: USERNAME.into(),
            email: Some(EMAIL.into()),
            email_verified: Some(true),
        };
        let problem = Problem::bad_request(format!("Delivery to {EMAIL} failed."));

        let outputs: Vec<(&str, String)> = vec![
            ("SessionRecord", format!("{record:?} {record:#?}")),
            ("Notification", format!("{:?}", record.notifications[0])),
            ("Store", format!("{store:?} {store:#?}")),
            ("StateFile", format!("{state_file:?}")),
            ("Dossier", format!("{dossier:?} {dossier:#?}")),
            ("Person", format!("{:?}", dossier.person)),
            ("CountryData", format!("{:?}", dossier.countries)),
            ("DossierCache", format!("{cache:?}")),
            ("TestUser", format!("{user:?}")),
            ("MockConfig", format!("{config:?}")),
            ("Caller", format!("{caller:?}")),
            ("Claims", format!("{claims:?}")),
            ("IdTokenClaims", format!("{id_token:?}")),
            ("Problem", format!("{problem:?}")),
        ];
        let leaks: Vec<String> = outputs
            .iter()
            .filter_map(|(what, debug)| {
                let leaked = shown(debug, &secrets);
                (!leaked.is_empty()).then(|| format!("{what} shows {leaked:?}"))
            })
            .collect();
        assert!(leaks.is_empty(), "{}", leaks.join("\n"));
        // What identifies a session is still there, so the output stays useful.
        let debug = format!("{record:?}");
        assert!(debug.contains(&record.id.to_string()), "{debug}");
        assert!(debug.contains("CompletedByCustomer"), "{debug}");
    }
}
