//! What the standard `OTEL_*` environment variables ask for: export traces (and where), stay
//! off, or refuse a setting this pipeline cannot honour.
//!
//! `opentelemetry-otlp` 0.33 reads the endpoint, headers, timeout, compression and protocol
//! variables itself, and `opentelemetry_sdk` the sampler (`OTEL_TRACES_SAMPLER`) and batch
//! (`OTEL_BSP_*`) ones; neither reads `OTEL_SDK_DISABLED` or `OTEL_TRACES_EXPORTER`, and the
//! exporter sends to `localhost:4318` when no endpoint is set and silently falls back to
//! http/protobuf when `grpc` is asked for. Those decisions are made here.

use opentelemetry::KeyValue;

/// The variables, as the OpenTelemetry specification names them.
pub const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
pub const TRACES_EXPORTER: &str = "OTEL_TRACES_EXPORTER";
pub const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
pub const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
pub const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
pub const TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
pub const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
pub const RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";

/// The one protocol this pipeline speaks.
const HTTP_PROTOBUF: &str = "http/protobuf";

/// What the environment asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Export nothing: no endpoint is set, `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
    Off,
    /// Export over OTLP/HTTP (protobuf) to this URL (the traces endpoint itself).
    Export { endpoint: String },
    /// A setting cannot be honoured; nothing is exported. The message names the variable and
    /// what to do, never its value (an endpoint can carry credentials).
    Refused(String),
}

/// Reads the plan from `env` (a variable's value; an empty value counts as unset, as the
/// specification says).
pub fn plan(env: &dyn Fn(&str) -> Option<String>) -> Plan {
    let var = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if var(SDK_DISABLED).is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
        return Plan::Off;
    }
    let (endpoint_var, endpoint) = match (var(TRACES_ENDPOINT), var(ENDPOINT)) {
        // The signal's own endpoint is used as is; the general one gets the signal's path.
        (Some(endpoint), _) => (TRACES_ENDPOINT, endpoint.trim().to_owned()),
        (None, Some(base)) => (
            ENDPOINT,
            format!("{}/v1/traces", base.trim().trim_end_matches('/')),
        ),
        (None, None) => return Plan::Off,
    };
    if let Some(exporters) = var(TRACES_EXPORTER) {
        let names: Vec<String> = exporters
            .split(',')
            .map(|name| name.trim().to_ascii_lowercase())
            .collect();
        if names.iter().any(|name| name == "none") {
            return Plan::Off;
        }
        if !names.iter().any(|name| name == "otlp") {
            return Plan::Refused(format!(
                "{TRACES_EXPORTER} names no exporter this program has (it has `otlp` and \
                 `none`): traces are not exported; set it to otlp or unset it"
            ));
        }
    }
    let (protocol_var, protocol) = match (var(TRACES_PROTOCOL), var(PROTOCOL)) {
        (Some(protocol), _) => (TRACES_PROTOCOL, protocol),
        (None, Some(protocol)) => (PROTOCOL, protocol),
        (None, None) => (PROTOCOL, HTTP_PROTOBUF.to_owned()),
    };
    let protocol = protocol.trim().to_ascii_lowercase();
    if protocol != HTTP_PROTOBUF {
        let named = match protocol.as_str() {
            "grpc" | "http/json" => format!("`{protocol}`"),
            _ => "not a protocol of the specification".to_owned(),
        };
        return Plan::Refused(format!(
            "{protocol_var} is {named}: this program sends OTLP over http/protobuf only, so \
             traces are not exported; set it to http/protobuf and point {endpoint_var} at the \
             collector's OTLP/HTTP port (usually 4318)"
        ));
    }
    match url::Url::parse(&endpoint) {
        // Normalised (punycode, percent-encoding): what the exporter's URI parser accepts.
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Plan::Export {
                endpoint: url.into(),
            }
        }
        _ => Plan::Refused(format!(
            "{endpoint_var} is not an http:// or https:// URL: traces are not exported"
        )),
    }
}

/// The resource's attributes: `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`, values
/// percent-decoded), then `service.name` from `OTEL_SERVICE_NAME`, else from those attributes,
/// else `default_service_name` (the specification's order; the SDK's own detectors would let
/// `OTEL_RESOURCE_ATTRIBUTES` win over `OTEL_SERVICE_NAME`).
pub fn resource_attributes(
    env: &dyn Fn(&str) -> Option<String>,
    default_service_name: &'static str,
) -> Vec<KeyValue> {
    let mut attributes: Vec<(String, String)> = Vec::new();
    if let Some(list) = env(RESOURCE_ATTRIBUTES) {
        for entry in list.split(',') {
            let Some((key, value)) = entry.split_once('=') else {
                continue;
            };
            let key = key.trim();
            if key.is_empty() {
                continue;
            }
            let value = percent_encoding::percent_decode_str(value.trim())
                .decode_utf8_lossy()
                .into_owned();
            attributes.retain(|(known, _)| known != key);
            attributes.push((key.to_owned(), value));
        }
    }
    let service_name = env(SERVICE_NAME)
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| {
            attributes
                .iter()
                .find(|(key, _)| key == "service.name")
                .map(|(_, value)| value.clone())
        })
        .unwrap_or_else(|| default_service_name.to_owned());
    attributes.retain(|(key, _)| key != "service.name");
    attributes.push(("service.name".to_owned(), service_name));
    attributes
        .into_iter()
        .map(|(key, value)| KeyValue::new(key, value))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(vars: &[(&str, &str)]) -> Plan {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        plan(&move |name| {
            vars.iter()
                .find(|(key, _)| key == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn nothing_is_exported_without_an_endpoint() {
        assert_eq!(plan_of(&[]), Plan::Off);
        assert_eq!(plan_of(&[(ENDPOINT, "  ")]), Plan::Off);
        assert_eq!(
            plan_of(&[(SERVICE_NAME, "svc"), (PROTOCOL, "grpc")]),
            Plan::Off
        );
    }

    #[test]
    fn the_general_endpoint_gets_the_traces_path_and_the_traces_endpoint_wins_as_is() {
        assert_eq!(
            plan_of(&[(ENDPOINT, "http://127.0.0.1:4318/")]),
            Plan::Export {
                endpoint: "http://127.0.0.1:4318/v1/traces".into()
            }
        );
        assert_eq!(
            plan_of(&[
                (ENDPOINT, "http://127.0.0.1:4318"),
                (TRACES_ENDPOINT, "https://collector.example/custom")
            ]),
            Plan::Export {
                endpoint: "https://collector.example/custom".into()
            }
        );
    }

    #[test]
    fn disabled_sdk_and_the_none_exporter_turn_it_off() {
        let endpoint = (ENDPOINT, "http://127.0.0.1:4318");
        assert_eq!(plan_of(&[endpoint, (SDK_DISABLED, "TRUE")]), Plan::Off);
        assert_eq!(plan_of(&[endpoint, (TRACES_EXPORTER, "none")]), Plan::Off);
        assert!(matches!(
            plan_of(&[endpoint, (SDK_DISABLED, "false"), (TRACES_EXPORTER, "otlp")]),
            Plan::Export { .. }
        ));
        let Plan::Refused(message) = plan_of(&[endpoint, (TRACES_EXPORTER, "zipkin")]) else {
            panic!("zipkin is refused");
        };
        assert!(message.contains(TRACES_EXPORTER), "{message}");
    }

    #[test]
    fn another_protocol_is_refused_by_name_and_a_bad_endpoint_without_its_value() {
        let endpoint = (ENDPOINT, "http://127.0.0.1:4317");
        let Plan::Refused(message) = plan_of(&[endpoint, (PROTOCOL, "grpc")]) else {
            panic!("grpc is refused");
        };
        assert!(
            message.contains("OTEL_EXPORTER_OTLP_PROTOCOL is `grpc`"),
            "{message}"
        );
        assert!(matches!(
            plan_of(&[
                endpoint,
                (PROTOCOL, "grpc"),
                (TRACES_PROTOCOL, "http/protobuf")
            ]),
            Plan::Export { .. }
        ));
        let secret = "user:s3cret@";
        let Plan::Refused(message) = plan_of(&[(ENDPOINT, &format!("ftp://{secret}host"))]) else {
            panic!("ftp is refused");
        };
        assert!(
            message.contains(ENDPOINT) && !message.contains("s3cret"),
            "{message}"
        );
    }

    #[test]
    fn the_service_name_comes_from_its_variable_then_the_attributes_then_the_default() {
        let name_of = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let attributes = resource_attributes(
                &move |name| {
                    vars.iter()
                        .find(|(key, _)| key == name)
                        .map(|(_, v)| v.clone())
                },
                "creditdata",
            );
            attributes
                .iter()
                .filter(|kv| kv.key.as_str() == "service.name")
                .map(|kv| kv.value.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(name_of(&[]), ["creditdata"]);
        assert_eq!(
            name_of(&[(RESOURCE_ATTRIBUTES, "service.name=from%20attrs,team=risk")]),
            ["from attrs"]
        );
        assert_eq!(
            name_of(&[
                (RESOURCE_ATTRIBUTES, "service.name=from-attrs"),
                (SERVICE_NAME, "from-var")
            ]),
            ["from-var"]
        );
    }
}
