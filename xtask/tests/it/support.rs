//! What every test of the `xtask` binary needs: where the workspace is, the binary itself, and a
//! loopback server standing in for the publisher.

use std::path::{Path, PathBuf};
use std::process::Command;

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// The built `xtask` binary, run from the workspace root. A proxy from the environment must not
/// carry the tests' loopback requests elsewhere, so the proxy variables are removed.
pub fn xtask() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xtask"));
    command.current_dir(workspace_root());
    for var in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ] {
        command.env_remove(var);
    }
    command
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Serves `routes` (path, query ignored → body, 200) on 127.0.0.1, 404 for anything else;
/// returns the base URL. The server runs on a runtime of its own thread for the rest of the test
/// process (the xtask under test is a blocking child process). It is never dropped, so
/// wiremock's verification in `Drop`, which can spin inside a runtime (docs/traps.md), never
/// runs.
#[allow(
    clippy::disallowed_methods,
    reason = "never dropped: the server waits on `pending()` until the process ends"
)]
pub fn serve(routes: Vec<(&'static str, Vec<u8>)>) -> String {
    let (base_tx, base_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the stand-in publisher");
        runtime.block_on(async move {
            let server = MockServer::start().await;
            for (route, body) in routes {
                Mock::given(method("GET"))
                    .and(path(route))
                    .respond_with(ResponseTemplate::new(200).set_body_bytes(body))
                    .mount(&server)
                    .await;
            }
            base_tx
                .send(server.uri())
                .expect("the test waits for the address");
            std::future::pending::<()>().await;
        });
    });
    base_rx.recv().expect("the stand-in publisher started")
}

/// Where [`with_unnamed_dataset`] adds its operation, and the name the pipeline derives for it.
pub const UNNAMED_DATASET: (&str, &str) = (
    "/v1/sessions/{sessionId}/probe-readings",
    "GetProbeReadings",
);

/// The vendored description with one more dataset below a session, published without an
/// operationId and with a JSON answer: the most common vendor change, made from
/// `spec/openapi.json` as it is (the session parameter is copied from a dataset of the current
/// release), so it survives releases. Written as JSON into `dir`.
pub fn with_unnamed_dataset(dir: &Path) -> PathBuf {
    use creditdata_codegen::document::{self, Format};
    let mut spec = document::load(&workspace_root().join("spec/openapi.json")).unwrap();
    let parameters = document::operations(&spec)
        .find(|op| {
            op.method == "get"
                && op
                    .path
                    .strip_prefix("/v1/sessions/{sessionId}/")
                    .is_some_and(|rest| !rest.contains('/'))
        })
        .and_then(|op| op.operation.get("parameters").cloned())
        .expect("the vendored description has a dataset below a session");
    let operation = serde_json::json!({
        "summary": "Returns the probe readings.",
        "parameters": parameters,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {
            "type": "object",
            "properties": {"readings": {"type": "array", "items": {"type": "string"}}}
        }}}}}
    });
    spec["paths"].as_object_mut().unwrap().insert(
        UNNAMED_DATASET.0.into(),
        serde_json::json!({"get": operation}),
    );
    let path = dir.join("with-unnamed-dataset.json");
    std::fs::write(&path, document::to_string(&spec, Format::Json)).unwrap();
    path
}
