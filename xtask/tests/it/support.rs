//! What every test of the `xtask` binary needs: where the workspace is, the binary itself, and a
//! loopback server standing in for the publisher.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

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
/// returns the base URL. The server thread ends after 32 connections.
pub fn serve(routes: Vec<(&'static str, Vec<u8>)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(32) {
            let Ok(stream) = stream else { continue };
            answer(stream, &routes);
        }
    });
    base
}

fn answer(mut stream: TcpStream, routes: &[(&'static str, Vec<u8>)]) {
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
    let target = head.split_whitespace().nth(1).unwrap_or("");
    let path = target.split('?').next().unwrap_or("");
    let (status, body) = match routes.iter().find(|(p, _)| *p == path) {
        Some((_, body)) => ("200 OK", body.as_slice()),
        None => ("404 Not Found", &b"not here"[..]),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(body);
}
