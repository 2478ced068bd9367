//! Unit tests of the one-way-to-call pass on small progenitor-shaped files.

use super::*;
use proc_macro2::TokenStream;

/// A `Client` method and its builder as progenitor 0.15 generates them.
fn generated(output: TokenStream) -> syn::File {
    let doc = "Returns one Session\n\nSends a `GET` request to `/v1/sessions/{sessionId}`\n\n\
               ```ignore\nlet response = client.get_session()\n    .session_id(session_id)\n    \
               .send()\n    .await;\n```";
    syn::parse2(quote! {
        impl Client {
            pub fn new(baseurl: &str, inner: crate::runtime::ClientState) -> Self {
                todo!()
            }
            #[doc = #doc]
            pub fn get_session(&self) -> builder::GetSession<'_> {
                builder::GetSession::new(self)
            }
        }
        pub mod builder {
            pub struct GetSession<'a> {
                client: &'a super::Client,
            }
            impl<'a> GetSession<'a> {
                ///Sends a `GET` request to `/v1/sessions/{sessionId}`
                pub async fn send(self) -> Result<ResponseValue<#output>, Error<types::ProblemDetails>> {
                    let Self { client, take, body } = self;
                    let take = take.map_err(Error::InvalidRequest)?;
                    let body = body.map_err(Error::InvalidRequest)?;
                    let url = [client.baseurl.as_str(), "/v1/sessions"].concat();
                    #[allow(unused_mut)]
                    let mut request = client
                        .client
                        .get(url)
                        .query(&progenitor_client::QueryParam::new("Take", &take))
                        .json(&body)
                        .build()?;
                    let info = OperationInfo { operation_id: "get_session" };
                    client.pre(&mut request, &info).await?;
                    let result = client.exec(request, &info).await;
                    client.post(&result, &info).await?;
                    let response = result?;
                    match response.status().as_u16() {
                        200u16 => ResponseValue::from_response(response).await,
                        400u16 => Err(Error::ErrorResponse(ResponseValue::from_response(response).await?)),
                        _ => Err(Error::UnexpectedResponse(response)),
                    }
                }
            }
        }
    })
    .unwrap()
}

fn rewritten(output: TokenStream) -> String {
    let mut file = generated(output.clone());
    let outputs = BTreeMap::from([("GetSession".to_string(), syn::parse2(output).unwrap())]);
    one_way_to_call(&mut file, &outputs, &BTreeMap::new()).unwrap();
    prettyplease::unparse(&file)
}

#[test]
fn builders_gain_call_and_hide_send() {
    let text = rewritten(quote!(types::Session));
    let compact: String = text.split_whitespace().collect();
    assert!(
        compact.contains(
            "pubfncall(self,)->impl::std::future::Future<Output=crate::Result<types::Session>>+Send{<Selfascrate::operation::Operation>::call(self)}"
        ),
        "{text}"
    );
    assert!(
        compact.replace(",>", ">").contains("#[doc(hidden)]pubfnsend_with(self,options:::std::option::Option<::std::boxed::Box<crate::call_options::CallOptions>>,)->impl::std::future::Future<Output=crate::Result<crate::call_options::CallResponse<types::Session>>>+Send+'a{"),
        "{text}"
    );
    assert!(
        compact.contains(
            "pubfncall_with_response(self,)->impl::std::future::Future<Output=crate::Result<crate::call_options::CallResponse<types::Session>>,>+Send{<Selfascrate::operation::Operation>::call_with_response(self)}"
        ),
        "{text}"
    );
    assert!(
        compact.contains(
            "pubfnoptions(self,options:crate::call_options::CallOptions,)->crate::call_options::WithOptions<Self>{<Selfascrate::operation::Operation>::options(self,options)}"
        ),
        "{text}"
    );
    // The constructor taking the runtime's state is plumbing: hidden, still callable.
    assert!(
        compact.contains("#[doc(hidden)]pubfnnew(baseurl:&str"),
        "{text}"
    );
    assert!(
        !compact.contains("#[doc(hidden)]pubfnget_session"),
        "{text}"
    );
}

#[test]
fn progenitor_error_is_kept_for_send_but_hidden_from_the_docs() {
    let mut file = generated(quote!(types::Session));
    file.items.insert(
        0,
        syn::parse_quote! {
            #[allow(unused_imports)]
            pub use progenitor_client::{ByteStream, ClientInfo, Error, ResponseValue};
        },
    );
    let outputs = BTreeMap::from([("GetSession".to_string(), syn::parse_quote!(types::Session))]);
    one_way_to_call(&mut file, &outputs, &BTreeMap::new()).unwrap();
    let compact: String = prettyplease::unparse(&file).split_whitespace().collect();
    assert!(
        compact.contains("pubuseprogenitor_client::{ByteStream,ClientInfo,ResponseValue};"),
        "{compact}"
    );
    assert!(
        compact.contains("#[doc(hidden)]#[allow(unused_imports)]pubuseprogenitor_client::Error;"),
        "{compact}"
    );
}

#[test]
fn examples_call_and_name_what_they_get() {
    let text = rewritten(quote!(types::Session));
    assert!(
        text.contains(
            "```ignore\nlet session = client.get_session()\n    .session_id(session_id)\n    .call()\n    .await?;\n```"
        ),
        "{text}"
    );
    assert!(!text.contains(".send()"), "{text}");

    let download = rewritten(quote!(ByteStream));
    assert!(
        download.contains("let download = client.get_session()\n    .session_id(session_id)\n    .download()\n    .await?;"),
        "{download}"
    );
    let nothing = rewritten(quote!(()));
    assert!(
        nothing.contains("```ignore\nclient.get_session()\n    .session_id(session_id)\n    .call()\n    .await?;"),
        "{nothing}"
    );
}

#[test]
fn variable_names_follow_the_type() {
    for (ty, name) in [
        (quote!(types::ScoresResponse), "scores"),
        (quote!(::std::vec::Vec<types::SourceFile>), "source_files"),
        (quote!(::serde_json::Value), "value"),
        (quote!(types::Response), "response"),
    ] {
        assert_eq!(variable_name(&syn::parse2(ty).unwrap()), name);
    }
}

#[test]
fn an_unexpected_shape_is_an_error_not_a_silent_skip() {
    // A builder the generated code does not have.
    let mut file = generated(quote!(types::Session));
    let outputs = BTreeMap::from([
        ("GetSession".to_string(), syn::parse_quote!(types::Session)),
        (
            "GetScores".to_string(),
            syn::parse_quote!(types::ScoresResponse),
        ),
    ]);
    let error = one_way_to_call(&mut file, &outputs, &BTreeMap::new())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("GetScores") && error.contains("call_methods.rs"),
        "{error}"
    );

    // An example that no longer ends with `.send().await;`.
    let mut file: syn::File = syn::parse2(quote! {
        impl Client {
            #[doc = "```ignore\nlet response = client.get_session()\n    .send_it()\n```"]
            pub fn get_session(&self) -> builder::GetSession<'_> { todo!() }
        }
    })
    .unwrap();
    let outputs = BTreeMap::from([("GetSession".to_string(), syn::parse_quote!(types::Session))]);
    let error = one_way_to_call(&mut file, &outputs, &BTreeMap::new())
        .unwrap_err()
        .to_string();
    assert!(error.contains("Client::get_session"), "{error}");
}

#[test]
fn send_ends_in_the_one_door_without_hooks_status_arms_or_progenitor_errors() {
    for (output, answer) in [
        (
            quote!(types::Session),
            "crate::runtime::Json<types::Session>",
        ),
        (quote!(ByteStream), "crate::runtime::Streamed"),
        (quote!(()), "crate::runtime::NoBody"),
    ] {
        // prettyplease may break a long turbofish, leaving a trailing comma.
        let compact: String = rewritten(output)
            .split_whitespace()
            .collect::<String>()
            .replace(",>", ">");
        let door = format!(
            "Ok(request)}};Ok((build()?,::std::option::Option::Some(build)))}})();crate::runtime::send::<{answer},_>(&client.client,&client.inner,<Selfascrate::operation::Operation>::META,&[200u16..=200u16],request,options,)}}"
        );
        // The parameters are unwrapped once; the build step, from the URL on, can run again.
        assert!(
            compact.contains("letbody=body.map_err(crate::runtime::invalid_request)?;letbuild=move||->crate::Result<::reqwest::Request>{leturl="),
            "{compact}"
        );
        assert!(compact.contains(&door), "{compact}");
        for gone in [
            "OperationInfo",
            "client.pre",
            "client.exec",
            "ErrorResponse",
            "ResponseValue::from_response",
            "Error::InvalidRequest",
        ] {
            assert!(!compact.contains(gone), "{gone}: {compact}");
        }
        assert!(
            compact.contains("lettake=take.map_err(crate::runtime::invalid_request)?;"),
            "{compact}"
        );
        assert!(
            compact.contains(".build().map_err(crate::runtime::unbuilt)?;"),
            "{compact}"
        );
    }
}

#[test]
fn a_build_step_that_gives_its_body_away_is_run_once_and_the_door_gets_none() {
    let text = prettyplease::unparse(&generated(quote!(types::Session)))
        .replace(".json(&body)", ".body(body)");
    let mut file: syn::File = syn::parse_str(&text).unwrap();
    let outputs = BTreeMap::from([("GetSession".to_string(), syn::parse_quote!(types::Session))]);
    one_way_to_call(&mut file, &outputs, &BTreeMap::new()).unwrap();
    let compact: String = prettyplease::unparse(&file)
        .split_whitespace()
        .collect::<String>()
        .replace(",>", ">");
    assert!(
        compact.contains(".body(body).build().map_err(crate::runtime::unbuilt)?;Ok((request,::std::option::Option::None::<fn()->crate::Result<::reqwest::Request>>,))})();"),
        "{compact}"
    );
    assert!(!compact.contains("letbuild="), "{compact}");
}

#[test]
fn typed_limit_checks_run_before_the_request_is_built() {
    let mut file = generated(quote!(types::Session));
    let outputs = BTreeMap::from([("GetSession".to_string(), syn::parse_quote!(types::Session))]);
    let checks = BTreeMap::from([(
        "GetSession".to_string(),
        TypedChecks {
            operation: "GetSession".to_string(),
            ranges: vec![("Take".to_string(), 1, 100)],
            body: true,
        },
    )]);
    one_way_to_call(&mut file, &outputs, &checks).unwrap();
    let compact: String = prettyplease::unparse(&file).split_whitespace().collect();
    // Once, before the build step (which a retry runs again).
    let checked = "crate::limits::check_range(\"GetSession\",\"Take\",&take,1i64,100i64)?;crate::limits::check_body(\"GetSession\",&body)?;letbuild=move||->crate::Result<::reqwest::Request>{leturl=";
    assert!(compact.contains(checked), "{compact}");

    // A limit on a parameter the send does not hold fails generation.
    let mut file = generated(quote!(types::Session));
    let checks = BTreeMap::from([(
        "GetSession".to_string(),
        TypedChecks {
            operation: "GetSession".to_string(),
            ranges: vec![("Skip".to_string(), 0, 10)],
            body: false,
        },
    )]);
    let error = one_way_to_call(&mut file, &outputs, &checks)
        .unwrap_err()
        .to_string();
    assert!(error.contains("`Skip`"), "{error}");
}
