//! Every variant of every polymorphic shape, and a variant no one described, served by a
//! loopback stub and decoded by the generated client of `decode-shapes.yaml`: each comes back
//! as the variant it is, whole, and serializes back to what was sent.

use creditdata_client::Error;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::generated::{Client, types};
use crate::support::MockServer;

/// A client of the test document against a stub answering `GET route` with `body`.
async fn serving(route: &str, body: &Value) -> (MockServer, Client) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let client = client_for(&server);
    (server, client)
}

fn client_for(server: &MockServer) -> Client {
    let (http, state) = crate::parts(&server.uri());
    Client::new_with_client(&server.uri(), http, state)
}

/// What a decoded value writes back, as JSON.
fn written<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serializes")
}

/// Whether two JSON values say the same: members in any order, numbers by value (a typed
/// `f64` member writes `1800` back as `1800.0`).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Asserts that `value` serializes back to what was `sent`.
pub(crate) fn assert_written_back<T: serde::Serialize>(value: &T, sent: &Value) {
    let written = written(value);
    assert!(
        same(&written, sent),
        "written back\n{written}\nsent\n{sent}"
    );
}

#[tokio::test]
async fn each_income_decodes_as_the_variant_its_type_names_and_an_unknown_type_is_kept_whole() {
    let body = json!({"incomes": [
        {"$type": "employment", "sourceId": "S1", "monthlyAmount": 3100.5, "employerName": "Acme Ltd"},
        {"$type": "self-employment", "sourceId": "S2", "monthlyAmount": 1800, "businessName": "Doe Joinery"},
        {"$type": "pension", "sourceId": "S3", "monthlyAmount": 950, "pensionProvider": "Civil Service"},
        {"$type": "rental", "sourceId": "S4", "monthlyAmount": 700, "propertyAddress": "1 High St"},
        {"sourceId": "S5", "monthlyAmount": 1}
    ]});
    let (_server, client) = serving("/incomes", &body).await;
    let answer = client.get_incomes().call().await.expect("decodes");
    let [employment, self_employment, pension, rental, untyped] =
        answer.incomes.as_deref().unwrap_or_default()
    else {
        panic!("five incomes: {answer:?}");
    };
    let types::IncomesResponseIncomesItem::EmploymentIncome(employment) = employment else {
        panic!("employment: {employment:?}");
    };
    assert_eq!(employment.employer_name.as_deref(), Some("Acme Ltd"));
    let types::IncomesResponseIncomesItem::SelfEmploymentIncome(self_employment) = self_employment
    else {
        panic!("self-employment: {self_employment:?}");
    };
    // The member the first variant lacks: what the untagged decoding lost.
    assert_eq!(
        self_employment.business_name.as_deref(),
        Some("Doe Joinery")
    );
    assert_eq!(self_employment.source_id.as_deref(), Some("S2"));
    let types::IncomesResponseIncomesItem::PensionIncome(pension) = pension else {
        panic!("pension: {pension:?}");
    };
    assert_eq!(pension.pension_provider.as_deref(), Some("Civil Service"));
    let types::IncomesResponseIncomesItem::Unrecognized(rental) = rental else {
        panic!("an unknown $type is no known variant: {rental:?}");
    };
    assert_eq!(rental.discriminator(), Some("rental"));
    assert_eq!(rental.json().to_value(), body["incomes"][3]);
    let types::IncomesResponseIncomesItem::Unrecognized(untyped) = untyped else {
        panic!("no $type is no known variant: {untyped:?}");
    };
    assert_eq!(untyped.discriminator(), None);
    assert_written_back(&answer, &body);
}

#[tokio::test]
async fn a_numeric_discriminator_with_a_mapping_decodes_each_forecast_and_keeps_a_new_one() {
    let body = json!([
        {"$type": 0, "city": "Leeds"},
        {"$type": 1, "temperatureC": 14, "summary": "Mild"},
        {"$type": 2, "news": "Fair today"},
        {"$type": 7, "pollen": "high"}
    ]);
    let (_server, client) = serving("/forecasts", &body).await;
    let forecasts = client.get_forecasts().call().await.expect("decodes");
    assert!(
        matches!(&forecasts[0], types::WeatherForecastBase::City(f) if f.city == "Leeds"),
        "{forecasts:?}"
    );
    assert!(
        matches!(&forecasts[1], types::WeatherForecastBase::TimeSeries(f)
            if f.summary == "Mild" && f.temperature_c == Some(14)),
        "{forecasts:?}"
    );
    assert!(
        matches!(&forecasts[2], types::WeatherForecastBase::LocalNews(f) if f.news == "Fair today"),
        "{forecasts:?}"
    );
    let types::WeatherForecastBase::Unrecognized(new) = &forecasts[3] else {
        panic!("{forecasts:?}");
    };
    assert_eq!(new.discriminator(), Some("7"));
    assert_written_back(&forecasts, &body);
}

#[tokio::test]
async fn without_a_mapping_the_schema_names_are_the_discriminator_values() {
    for (pet, expected) in [
        (json!({"petType": "Cat", "meows": true}), "Cat"),
        (json!({"petType": "Dog", "barks": false}), "Dog"),
        (json!({"petType": "Hamster", "wheel": true}), "unknown"),
    ] {
        let (_server, client) = serving("/pet", &pet).await;
        let answer = client.get_pet().call().await.expect("decodes");
        let got = match &answer {
            types::GetPetResponse::Cat(cat) => {
                assert_eq!(cat.meows, Some(true));
                "Cat"
            }
            types::GetPetResponse::Dog(dog) => {
                assert_eq!(dog.barks, Some(false));
                "Dog"
            }
            types::GetPetResponse::Unrecognized(other) => {
                assert_eq!(other.discriminator(), Some("Hamster"));
                "unknown"
            }
        };
        assert_eq!(got, expected, "{pet}");
        assert_written_back(&answer, &pet);
    }
}

#[tokio::test]
async fn variants_that_extend_a_base_use_its_discriminator() {
    let body = json!([
        {"TypeName": "Rectangle", "name": "door", "height": 200, "width": 80},
        {"TypeName": "Circle", "name": "clock", "radius": 15},
        {"TypeName": "Triangle", "name": "roof", "base": 9}
    ]);
    let (_server, client) = serving("/shapes", &body).await;
    let shapes = client.get_shapes().call().await.expect("decodes");
    assert!(
        matches!(&shapes[0], types::GetShapesResponseItem::Rectangle(r)
            if r.height == Some(200) && r.width == Some(80) && r.name.as_deref() == Some("door")),
        "{shapes:?}"
    );
    assert!(
        matches!(&shapes[1], types::GetShapesResponseItem::Circle(c) if c.radius == Some(15)),
        "{shapes:?}"
    );
    assert!(
        matches!(&shapes[2], types::GetShapesResponseItem::Unrecognized(t) if t.discriminator() == Some("Triangle")),
        "{shapes:?}"
    );
    assert_written_back(&shapes, &body);
}

#[tokio::test]
async fn a_value_unlike_the_variant_its_discriminator_names_is_a_decode_error() {
    let body = json!({"incomes": [{"$type": "employment", "monthlyAmount": "a lot"}]});
    let (_server, client) = serving("/incomes", &body).await;
    let error = client.get_incomes().call().await.unwrap_err();
    let Error::Decode(decode) = &error else {
        panic!("a decode error: {error:?}");
    };
    let message = error.to_string();
    assert!(
        message.contains("GetIncomes")
            && message.contains("does not match the variant its $type names"),
        "{message}"
    );
    assert!(
        !message.contains("a lot"),
        "no value of the body: {message}"
    );
    assert_eq!(decode.path.as_deref(), Some("incomes[0]"), "{decode:?}");
}

#[tokio::test]
async fn without_a_discriminator_the_variant_that_keeps_the_object_best_wins_and_nothing_is_lost() {
    let body = json!({
        "amounts": [
            {"amount": 12.5, "currency": "GBP"},
            {"text": "twelve pounds"},
            {"amount": 3, "note": "kept"},
            {"other": 1},
            "not an object"
        ],
        "either": {"text": "hello", "author": "Jane"}
    });
    let (_server, client) = serving("/values", &body).await;
    let values = client.get_values().call().await.expect("decodes");
    let amounts = &values.amounts;
    assert!(
        matches!(&amounts[0], types::ValuesResponseAmountsItem::Variant0(v)
            if v.amount == 12.5 && v.currency.as_deref() == Some("GBP")),
        "{amounts:?}"
    );
    assert!(
        matches!(&amounts[1], types::ValuesResponseAmountsItem::Variant1(v) if v.text == "twelve pounds"),
        "{amounts:?}"
    );
    // A member no variant knows is kept by the variant that fits (its unknown members).
    let types::ValuesResponseAmountsItem::Variant0(kept) = &amounts[2] else {
        panic!("{amounts:?}");
    };
    assert_eq!(
        kept.extra.get("note").map(|raw| raw.get()),
        Some(r#""kept""#)
    );
    // What no variant decodes is kept whole.
    for unknown in &amounts[3..] {
        assert!(
            matches!(unknown, types::ValuesResponseAmountsItem::Unrecognized(u) if u.discriminator().is_none()),
            "{amounts:?}"
        );
    }
    // Of two variants that both decode (every member optional), the one that knows the members.
    assert!(
        matches!(&values.either, Some(types::ValuesResponseEither::Note(note))
            if note.text.as_deref() == Some("hello") && note.author.as_deref() == Some("Jane")),
        "{values:?}"
    );
    assert_written_back(&values, &body);
}

#[tokio::test]
async fn unknown_members_of_every_shape_are_kept_readable_and_written_back_as_sent() {
    // Known members first, in the type's order: then the text written back is the text sent.
    let text = r#"{"id":"x-1","sourceId":"S1","score":{"value":712,"band":"B"},"tags":["a","b"],"empty":null,"big":123456789012345678901234567890,"deep":[[[[[1]]]]],"score":"again"}"#;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/padded"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(text, "application/json"))
        .mount(&server)
        .await;
    let item = client_for(&server)
        .get_padded()
        .call()
        .await
        .expect("decodes");
    assert_eq!(item.source_id.as_deref(), Some("S1"));
    assert_eq!(item.id.as_deref(), Some("x-1"));
    assert_eq!(
        item.extra.names().collect::<Vec<_>>(),
        ["score", "tags", "empty", "big", "deep", "score"]
    );
    assert_eq!(item.extra.get("score").map(|r| r.get()), Some(r#""again""#));
    assert_eq!(
        item.extra.decode::<Vec<String>>("tags").unwrap().unwrap(),
        ["a", "b"]
    );
    // A number beyond u64 and f64 precision is kept as its digits.
    assert_eq!(
        item.extra.get("big").map(|r| r.get()),
        Some("123456789012345678901234567890")
    );
    assert_eq!(serde_json::to_string(&item).unwrap(), text);
    // Debug names the members, never their values (personal data).
    let debug = format!("{item:?}");
    assert!(
        debug.contains("\"tags\"") && !debug.contains("712"),
        "{debug}"
    );
}
