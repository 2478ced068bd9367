//! The scores a credit bureau computes from what it holds about the subject: the bureau's own
//! report (a source file) and the `scores` dataset show the same ones.

use crate::built::Built;
use creditdata_client::types::{Score, ScoreType, ScoreUnavailableReason};

use super::{CountryData, Dossier, RiskTier, fnv1a};
use crate::catalog::Provider;

/// The scores a bureau computes from what it knows about the subject.
pub fn score_items(dossier: &Dossier, data: &CountryData, provider: &Provider) -> Vec<Score> {
    let credit = &data.credit;
    let code = Some(data.country.code.to_owned());
    let source_id = Some(provider.id.to_owned());
    let unavailable = |type_: ScoreType, reason: ScoreUnavailableReason| {
        Score::builder()
            .type_(type_)
            .source_id(source_id.clone())
            .country_code(code.clone())
            .unavailable_reason(Some(reason))
            .build()
            .built()
    };
    let main_type = if data.country.code == "GBR" {
        ScoreType::FicoScore
    } else {
        ScoreType::RiskScoreV1
    };
    if credit.positive.is_empty() && credit.negative.is_empty() && !data.home {
        // A foreign bureau that has never heard of the subject cannot score them.
        return vec![
            unavailable(main_type, ScoreUnavailableReason::InfoMissing),
            unavailable(
                ScoreType::ProbabilityOfDefault,
                ScoreUnavailableReason::InfoMissing,
            ),
        ];
    }
    if credit
        .court
        .iter()
        .any(|c| c.kind == "DEBT_RESTRUCTURING" && c.status == "PENDING")
    {
        return vec![
            unavailable(main_type, ScoreUnavailableReason::DebtsSettledWithAgreement),
            unavailable(
                ScoreType::ProbabilityOfDefault,
                ScoreUnavailableReason::DebtsSettledWithAgreement,
            ),
        ];
    }
    // A 0..1 quality from the risk tier and the bureau's own defaults.
    let seed = fnv1a(format!("{}/{}", dossier.session, provider.id).as_bytes());
    let jitter = (seed % 1000) as f64 / 1000.0;
    let base: f64 = match dossier.person.risk {
        RiskTier::Good => 0.80 + 0.18 * jitter,
        RiskTier::Fair => 0.55 + 0.2 * jitter,
        RiskTier::Poor => 0.2 + 0.25 * jitter,
    };
    let unsettled = credit
        .negative
        .iter()
        .filter(|e| e.settled.is_none())
        .count() as f64;
    let quality = (base - 0.08 * unsettled).clamp(0.01, 0.99);
    let (original, normalized) = if main_type == ScoreType::FicoScore {
        let value = (300.0 + 550.0 * quality).round();
        (
            format!("{value}"),
            format!("{:.2}", (value - 300.0) / 550.0),
        )
    } else {
        let value = (1000.0 * quality).round();
        (format!("{value}"), format!("{:.2}", value / 1000.0))
    };
    let probability = (0.35 * (1.0 - quality).powi(3)).max(0.002);
    vec![
        Score::builder()
            .type_(main_type)
            .source_id(source_id.clone())
            .country_code(code.clone())
            .original_value(Some(original))
            .normalized_value(Some(normalized))
            .build()
            .built(),
        Score::builder()
            .type_(ScoreType::ProbabilityOfDefault)
            .source_id(source_id)
            .country_code(code)
            .original_value(Some(format!("{:.2}%", probability * 100.0)))
            .normalized_value(Some(format!("{probability:.4}")))
            .build()
            .built(),
    ]
}
