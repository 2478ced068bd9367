//! The fetch stage against a loopback server: downloads, validation, comparison and writing.
//! Nothing here leaves 127.0.0.1.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use creditdata_codegen::fetch::{self, FetchError, Options, Source, Urls, VendoredCopy};
use creditdata_codegen::pipeline::sha256_hex;

/// The frozen copy of `spec/` (1.0), so a vendor release changes nothing here.
fn spec_dir() -> PathBuf {
    crate::frozen::spec_dir()
}

/// One canned answer.
#[derive(Clone)]
struct Answer {
    status: &'static str,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

fn ok(body: impl Into<Vec<u8>>) -> Answer {
    Answer {
        status: "200 OK",
        headers: Vec::new(),
        body: body.into(),
    }
}

/// A tiny HTTP/1.1 server on 127.0.0.1: one answer per path, every request recorded as
/// (path, Accept header).
struct Server {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

impl Server {
    fn start(routes: Vec<(&'static str, Answer)>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: HashMap<&'static str, Answer> = routes.into_iter().collect();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().take(64) {
                let Ok(stream) = stream else { continue };
                answer(stream, &routes, &seen);
            }
        });
        Server { addr, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn urls(&self) -> Urls {
        Urls::new(&self.url("/openapi.json"), &self.url("/openapi.yaml")).unwrap()
    }
}

fn answer(
    mut stream: TcpStream,
    routes: &HashMap<&'static str, Answer>,
    seen: &Mutex<Vec<(String, String)>>,
) {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let accept = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("accept")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_default();
    seen.lock().unwrap().push((path.clone(), accept));
    let found = routes.get(path.as_str()).cloned();
    let a = found.unwrap_or(Answer {
        status: "404 Not Found",
        headers: Vec::new(),
        body: b"not here".to_vec(),
    });
    if a.status == "hang" {
        std::thread::sleep(Duration::from_secs(5));
        return;
    }
    let mut out = format!(
        "HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        a.status,
        a.body.len()
    );
    for (name, value) in &a.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&a.body);
}

fn vendored_bytes() -> (Vec<u8>, Vec<u8>) {
    (
        std::fs::read(spec_dir().join("openapi.json")).unwrap(),
        std::fs::read(spec_dir().join("openapi.yaml")).unwrap(),
    )
}

fn options() -> Options {
    Options {
        timeout: Duration::from_secs(10),
        ..Options::default()
    }
}

#[test]
fn downloads_both_with_accept_headers_and_follows_redirects() {
    let (json, yaml) = vendored_bytes();
    let server = Server::start(vec![
        ("/openapi.json", ok(json.clone())),
        ("/openapi.yaml", ok(yaml.clone())),
        (
            "/moved.json",
            Answer {
                status: "301 Moved Permanently",
                headers: vec![("Location", "/openapi.json".into())],
                body: Vec::new(),
            },
        ),
    ]);
    let urls = Urls::new(&server.url("/moved.json"), &server.url("/openapi.yaml")).unwrap();
    let published = fetch::download(&urls, &options()).unwrap();
    assert_eq!(published.json, json, "bytes as published");
    assert_eq!(published.yaml, yaml, "bytes as published");
    assert_eq!(published.version, "3.1.1");
    assert_eq!(published.operation_count(), 31);
    let requests = server.requests.lock().unwrap().clone();
    let paths: Vec<&str> = requests.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["/moved.json", "/openapi.json", "/openapi.yaml"]);
    assert_eq!(requests[0].1, "application/json");
    assert!(
        requests[2].1.starts_with("application/yaml"),
        "{:?}",
        requests[2]
    );
}

#[test]
fn a_status_other_than_2xx_names_status_and_url() {
    let server = Server::start(vec![("/openapi.yaml", ok("openapi: 3.1.0\n"))]);
    let e = fetch::download(&server.urls(), &options()).unwrap_err();
    assert!(matches!(e, FetchError::Status { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("/openapi.json answered 404 Not Found"),
        "{msg}"
    );
}

#[test]
fn nothing_listening_is_cannot_reach() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let urls = Urls::from_one(&format!("http://127.0.0.1:{port}/openapi.json")).unwrap();
    let e = fetch::download(&urls, &options()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "cannot reach http://127.0.0.1:{port}/openapi.json: "
        )),
        "{msg}"
    );
    assert!(e.vendored_unchanged());
}

#[test]
fn a_server_that_never_answers_times_out() {
    let server = Server::start(vec![(
        "/openapi.json",
        Answer {
            status: "hang",
            headers: Vec::new(),
            body: Vec::new(),
        },
    )]);
    let options = Options {
        timeout: Duration::from_secs(1),
        ..Options::default()
    };
    let e = fetch::download(&server.urls(), &options).unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("cannot reach"), "{msg}");
    assert!(msg.contains("timed out"), "{msg}");
}

#[test]
fn bodies_over_the_limit_are_refused() {
    let server = Server::start(vec![
        ("/openapi.json", ok(vec![b' '; 2048])),
        ("/openapi.yaml", ok("openapi: 3.1.0\n")),
    ]);
    let options = Options {
        max_bytes: 1024,
        ..options()
    };
    let e = fetch::download(&server.urls(), &options).unwrap_err();
    assert!(matches!(e, FetchError::TooLarge { .. }), "{e:?}");
    assert!(e.to_string().contains("1024-byte limit"), "{e}");
}

#[test]
fn unparseable_documents_name_url_line_and_column() {
    let urls = Urls::new("http://127.0.0.1:9/a.json", "http://127.0.0.1:9/a.yaml").unwrap();
    let e = fetch::validate(
        &urls,
        b"{\"openapi\": \"3.1.0\",\n  oops}".to_vec(),
        Vec::new(),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("http://127.0.0.1:9/a.json is not valid JSON (line 2, column"),
        "{msg}"
    );
    let e = fetch::validate(
        &urls,
        b"{\"openapi\": \"3.1.0\"}".to_vec(),
        b"openapi: 3.1.0\npaths: [a,\n".to_vec(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("http://127.0.0.1:9/a.yaml is not valid YAML (line"),
        "{e}"
    );
    let e = fetch::validate(&urls, vec![0xff, 0xfe], Vec::new()).unwrap_err();
    assert!(e.to_string().contains("not UTF-8"), "{e}");
}

#[test]
fn documents_that_are_not_openapi_3_say_what_was_found() {
    let urls = Urls::new("http://127.0.0.1:9/a.json", "http://127.0.0.1:9/a.yaml").unwrap();
    let e = fetch::validate(
        &urls,
        br#"{"swagger": "2.0"}"#.to_vec(),
        b"swagger: '2.0'\n".to_vec(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "http://127.0.0.1:9/a.json is not an OpenAPI 3.x description: found a Swagger document \
         (`swagger: \"2.0\"`)"
    );
    let e = fetch::validate(
        &urls,
        br#"{"openapi": "3.1.0"}"#.to_vec(),
        b"openapi: 3.1\n".to_vec(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "http://127.0.0.1:9/a.yaml is not an OpenAPI 3.x description: found `openapi: 3.1` (a \
         number)"
    );
}

#[test]
fn json_and_yaml_that_disagree_report_pointers() {
    let urls = Urls::new("http://127.0.0.1:9/a.json", "http://127.0.0.1:9/a.yaml").unwrap();
    let e = fetch::validate(
        &urls,
        br#"{"openapi": "3.1.0", "info": {"version": "1"}, "paths": {"/a": {}}}"#.to_vec(),
        b"openapi: 3.1.0\ninfo:\n  version: '2'\npaths:\n  /b: {}\n".to_vec(),
    )
    .unwrap_err();
    let FetchError::Disagree {
        count, pointers, ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert_eq!(*count, 3);
    assert_eq!(
        pointers,
        &["~ /info/version", "- /paths/~1a", "+ /paths/~1b"]
    );
}

/// A copy of spec/ in a temporary directory.
fn spec_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["source.toml", "openapi.json", "openapi.yaml"] {
        std::fs::copy(spec_dir().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

#[test]
fn the_vendored_copy_compares_as_up_to_date_and_writes_nothing() {
    let (json, yaml) = vendored_bytes();
    let dir = spec_copy();
    let source = Source::load(dir.path()).unwrap();
    let urls = Urls::from_one("http://127.0.0.1:9/openapi.json").unwrap();
    let published = fetch::validate(&urls, json, yaml).unwrap();
    let vendored = VendoredCopy::read(dir.path(), &source).unwrap();
    let comparison = fetch::compare(&published, &vendored, &source);
    assert!(comparison.is_up_to_date(), "{comparison}");
    let written = fetch::write(dir.path(), &source, &vendored, &published, false).unwrap();
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn a_reformatted_publication_is_only_formatting_and_is_written_as_published() {
    let (json, yaml) = vendored_bytes();
    let dir = spec_copy();
    let source_before = std::fs::read_to_string(dir.path().join("source.toml")).unwrap();
    let source = Source::load(dir.path()).unwrap();
    // The same data, compact.
    let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let compact = serde_json::to_vec(&value).unwrap();
    let urls = Urls::from_one("http://127.0.0.1:9/openapi.json").unwrap();
    let published = fetch::validate(&urls, compact.clone(), yaml.clone()).unwrap();
    let vendored = VendoredCopy::read(dir.path(), &source).unwrap();
    let comparison = fetch::compare(&published, &vendored, &source);
    assert!(!comparison.is_up_to_date());
    assert!(comparison.only_formatting_differs(), "{comparison}");
    assert!(
        comparison
            .to_string()
            .contains("Only formatting differs: the data is the same."),
        "{comparison}"
    );

    let written = fetch::write(dir.path(), &source, &vendored, &published, false).unwrap();
    assert_eq!(written.files, ["openapi.json", "source.toml"]);
    assert_eq!(
        std::fs::read(dir.path().join("openapi.json")).unwrap(),
        compact
    );
    assert_eq!(
        std::fs::read(dir.path().join("openapi.yaml")).unwrap(),
        yaml
    );
    let source_after = std::fs::read_to_string(dir.path().join("source.toml")).unwrap();
    let expected = source_before.replace(&sha256_hex(&json), &sha256_hex(&compact));
    assert_eq!(
        source_after, expected,
        "only the digest changes, comments kept"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

#[test]
fn saved_urls_replace_the_placeholders() {
    let (json, yaml) = vendored_bytes();
    let dir = spec_copy();
    let source = Source::load(dir.path()).unwrap();
    let urls = Urls::from_one("https://publisher.example/openapi/v2.yml").unwrap();
    let published = fetch::validate(&urls, json, yaml).unwrap();
    let vendored = VendoredCopy::read(dir.path(), &source).unwrap();
    let written = fetch::write(dir.path(), &source, &vendored, &published, true).unwrap();
    assert_eq!(written.files, ["source.toml"]);
    let text = std::fs::read_to_string(dir.path().join("source.toml")).unwrap();
    let saved = Source::load(dir.path()).unwrap();
    assert!(!saved.publisher.placeholder);
    assert_eq!(
        saved.publisher.json_url,
        "https://publisher.example/openapi/v2.json"
    );
    assert_eq!(
        saved.publisher.yaml_url,
        "https://publisher.example/openapi/v2.yml"
    );
    assert!(text.starts_with("# Where the publisher serves"), "{text}");
    assert_eq!(
        saved
            .publisher_urls(&dir.path().join("source.toml"))
            .unwrap(),
        urls
    );
}
