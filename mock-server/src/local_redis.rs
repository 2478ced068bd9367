//! A throwaway `redis-server` for the tests of the shared rate limit and the shared export (the
//! client's and the command's): started on a free loopback port with a temporary directory and
//! no persistence, waited for (bounded), stopped when dropped, panic or not; and a minimal RESP
//! client to look at what it holds.
//!
//! Where `redis-server` is not installed a test skips, saying so on stderr, unless
//! [`REQUIRE_VAR`] is set (CI's `.ci/run` sets it after installing Debian's `redis-server`):
//! then its absence is a failure.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Set (to anything but `0` or empty) where Redis must be there: a test that would skip fails.
pub const REQUIRE_VAR: &str = "CREDITDATA_REQUIRE_REDIS";

/// How long a server may take to answer its first `PING`.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Every read and write of the RESP client is bounded by this.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Where `redis-server` is, from `path` (a `PATH` value): `Ok(None)` when it is absent and not
/// `required`, an error naming [`REQUIRE_VAR`] when it is absent and required.
pub fn locate(path: Option<OsString>, required: bool) -> Result<Option<PathBuf>, String> {
    let found = path.and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("redis-server"))
            .find(|candidate| candidate.is_file())
    });
    match (found, required) {
        (Some(binary), _) => Ok(Some(binary)),
        (None, false) => Ok(None),
        (None, true) => Err(format!(
            "redis-server is not installed, and {REQUIRE_VAR} says the tests need it (CI \
             installs Debian's redis-server in .ci/run): install it (apt-get install \
             redis-server) or unset {REQUIRE_VAR} to skip these tests"
        )),
    }
}

/// Whether [`REQUIRE_VAR`] is set.
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0")
}

/// A key and its value as `DUMP` serializes it.
pub type Dumped = (Vec<u8>, Vec<u8>);

/// A running `redis-server` of a test.
pub struct LocalRedis {
    binary: PathBuf,
    port: u16,
    password: Option<String>,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl LocalRedis {
    /// Starts a server, or `None` (said on stderr, naming `test`) when `redis-server` is absent
    /// and not required. Panics when it is required and absent, or does not start.
    pub fn start_or_skip(test: &str) -> Option<LocalRedis> {
        LocalRedis::start_with_password_or_skip(test, None)
    }

    /// [`start_or_skip`](Self::start_or_skip) with `requirepass`.
    pub fn start_with_password_or_skip(test: &str, password: Option<&str>) -> Option<LocalRedis> {
        let binary = match locate(std::env::var_os("PATH"), required()) {
            Ok(Some(binary)) => binary,
            Ok(None) => {
                eprintln!(
                    "skipped {test}: redis-server is not installed (apt-get install \
                     redis-server; CI requires it through {REQUIRE_VAR})"
                );
                return None;
            }
            Err(message) => panic!("{test}: {message}"),
        };
        let dir = tempfile::tempdir().expect("a temporary directory for redis-server");
        let mut server = LocalRedis {
            binary,
            port: 0,
            password: password.map(str::to_string),
            dir,
            child: None,
        };
        server.port = free_port();
        server.spawn().unwrap_or_else(|e| panic!("{test}: {e}"));
        Some(server)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let mut command = Command::new(&self.binary);
        command
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--daemonize", "no"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(password) = &self.password {
            command.args(["--requirepass", password]);
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.binary.display()))?;
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(answer) = self.command(&["PING"])
                && answer == Resp::Simple("PONG".into())
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(format!(
                    "redis-server on port {} did not answer within {START_TIMEOUT:?}",
                    self.port
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT/0`, with the password when there is one.
    pub fn url(&self) -> String {
        match &self.password {
            Some(password) => format!("redis://:{password}@127.0.0.1:{}/0", self.port),
            None => format!("redis://127.0.0.1:{}/0", self.port),
        }
    }

    /// Kills the server at once (`SIGKILL`: a crash, no goodbye to its clients) and waits for
    /// it; what it held is gone (no persistence).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, empty.
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        self.spawn()
    }

    /// Runs one command and returns its answer (bounded by a few seconds).
    pub fn command(&self, args: &[&str]) -> Result<Resp, String> {
        let address = SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.port);
        let stream = TcpStream::connect_timeout(&address.into(), IO_TIMEOUT)
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .set_read_timeout(Some(IO_TIMEOUT))
            .and_then(|()| stream.set_write_timeout(Some(IO_TIMEOUT)))
            .map_err(|e| e.to_string())?;
        let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
        let mut reader = BufReader::new(stream);
        if let Some(password) = &self.password {
            writer
                .write_all(&encode(&["AUTH", password]))
                .map_err(|e| e.to_string())?;
            read_resp(&mut reader)?;
        }
        writer.write_all(&encode(args)).map_err(|e| e.to_string())?;
        read_resp(&mut reader)
    }

    /// Every key the server holds, with everything of its value as `DUMP` serializes it
    /// (small strings and sorted-set members appear there as they are): what a test scans for
    /// secrets and personal data.
    pub fn dump_everything(&self) -> Result<Vec<Dumped>, String> {
        let Resp::Array(keys) = self.command(&["KEYS", "*"])? else {
            return Err("KEYS did not answer an array".into());
        };
        let mut everything = Vec::new();
        for key in keys {
            let Resp::Bulk(Some(key)) = key else { continue };
            let name = String::from_utf8_lossy(&key).into_owned();
            let dumped = match self.command(&["DUMP", &name])? {
                Resp::Bulk(Some(bytes)) => bytes,
                _ => Vec::new(),
            };
            everything.push((key, dumped));
        }
        Ok(everything)
    }

    /// The directory the server runs in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A free port on 127.0.0.1 (the listener is closed before the server takes it).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}

/// A RESP answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    /// `+OK`
    Simple(String),
    /// `-ERR ...`
    Error(String),
    /// `:1`
    Integer(i64),
    /// `$n` (`None`: `$-1`)
    Bulk(Option<Vec<u8>>),
    /// `*n`
    Array(Vec<Resp>),
}

fn encode(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn read_resp(reader: &mut impl BufRead) -> Result<Resp, String> {
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|e| e.to_string())?;
    let line = line.trim_end_matches(['\r', '\n']);
    let (kind, rest) = line.split_at(line.len().min(1));
    let number = || rest.parse::<i64>().map_err(|e| format!("{line}: {e}"));
    match kind {
        "+" => Ok(Resp::Simple(rest.to_string())),
        "-" => Ok(Resp::Error(rest.to_string())),
        ":" => Ok(Resp::Integer(number()?)),
        "$" => {
            let Ok(length) = usize::try_from(number()?) else {
                return Ok(Resp::Bulk(None));
            };
            let mut bytes = vec![0; length + 2];
            reader.read_exact(&mut bytes).map_err(|e| e.to_string())?;
            bytes.truncate(length);
            Ok(Resp::Bulk(Some(bytes)))
        }
        "*" => {
            let count = usize::try_from(number()?).unwrap_or(0);
            let mut items = Vec::with_capacity(count.min(1024));
            for _ in 0..count {
                items.push(read_resp(reader)?);
            }
            Ok(Resp::Array(items))
        }
        _ => Err(format!("not a RESP answer: {line:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absent_server_is_skipped_unless_required_and_then_it_fails() {
        let empty = tempfile::tempdir().unwrap();
        let path = Some(empty.path().as_os_str().to_owned());
        assert_eq!(locate(path.clone(), false), Ok(None));
        let error = locate(path, true).unwrap_err();
        assert!(error.contains(REQUIRE_VAR), "{error}");
        assert_eq!(locate(None, false), Ok(None));
    }

    #[test]
    fn a_present_server_is_found_on_the_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("redis-server"), b"").unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
        assert_eq!(
            locate(Some(path), true),
            Ok(Some(dir.path().join("redis-server")))
        );
    }

    #[test]
    fn resp_answers_are_read() {
        let text = b"*3\r\n+OK\r\n$4\r\na\r\nb\r\n$-1\r\n:7\r\n".to_vec();
        let mut reader = BufReader::new(&text[..]);
        assert_eq!(
            read_resp(&mut reader).unwrap(),
            Resp::Array(vec![
                Resp::Simple("OK".into()),
                Resp::Bulk(Some(b"a\r\nb".to_vec())),
                Resp::Bulk(None),
            ])
        );
        assert_eq!(read_resp(&mut reader).unwrap(), Resp::Integer(7));
    }
}
