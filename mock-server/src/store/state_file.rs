//! The state file: the sessions, the identity provider's sign-ins and (when generated here) the
//! signing key, written whole and owner-only so a crash never leaves half a state.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SessionRecord;
use crate::idp::grants::IdentityState;

/// The state file's content (its `Debug` shows neither the key nor the sessions).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateFile {
    /// Format version.
    pub version: u32,
    /// The token signing key (PKCS#8 PEM), so tokens outlive a restart.
    pub signing_key_pem: Option<String>,
    /// Sessions, oldest first.
    pub sessions: Vec<SessionRecord>,
    /// Users' sign-ins (refresh tokens as digests) and revoked access tokens; absent in files
    /// written before users could sign in.
    #[serde(default)]
    pub identity: IdentityState,
}

/// Current state-file format.
pub const STATE_VERSION: u32 = 1;

/// How deep a session's described member starts in the file: the file, its `sessions`, the
/// session, its members.
const MEMBER_NESTING: usize = 4;

/// serde_json reads at most this many nested objects and arrays (its recursion limit, 128,
/// counts one more): whatever the mock accepts must fit, or the next start fails.
const READABLE_NESTING: usize = 127;

const _: () = assert!(
    MEMBER_NESTING + crate::described::members::MAX_MEMBER_DEPTH <= READABLE_NESTING,
    "a member the mock accepts would make a state file it cannot read"
);

/// Why the state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// I/O.
    #[error("state file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a state file of this version.
    #[error("state file {path} is not a creditdata-mock state file: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl StateFile {
    /// Reads `path`; a missing file is `Ok(None)`.
    pub fn load(path: &Path) -> Result<Option<StateFile>, StateError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(StateError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let state: StateFile =
            serde_json::from_slice(&bytes).map_err(|error| StateError::Format {
                path: path.to_owned(),
                message: error.to_string(),
            })?;
        if state.version != STATE_VERSION {
            return Err(StateError::Format {
                path: path.to_owned(),
                message: format!(
                    "version {} (this mock reads version {STATE_VERSION})",
                    state.version
                ),
            });
        }
        Ok(Some(state))
    }

    /// Writes `path` so that it always holds one whole state, readable by its owner alone (it
    /// holds the signing key and e-mail addresses): a new temporary file in the same directory
    /// (random name, created exclusively with mode 0600, so nothing already there is written
    /// through), synced, renamed over `path`, and the directory synced so the rename survives a
    /// crash. On any failure the temporary file is removed and `path` is untouched.
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let io = |source| StateError::Io {
            path: path.to_owned(),
            source,
        };
        let bytes = serde_json::to_vec_pretty(self).map_err(|error| StateError::Format {
            path: path.to_owned(),
            message: error.to_string(),
        })?;
        let directory = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "state".into());
        // tempfile opens with O_CREAT | O_EXCL and mode 0600 on Unix.
        let mut temporary = tempfile::Builder::new()
            .prefix(&format!(".{file_name}."))
            .suffix(".tmp")
            .tempfile_in(&directory)
            .map_err(io)?;
        temporary.write_all(&bytes).map_err(io)?;
        temporary.as_file().sync_all().map_err(io)?;
        temporary.persist(path).map_err(|error| io(error.error))?;
        sync_directory(&directory).map_err(io)
    }
}

impl std::fmt::Debug for StateFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateFile")
            .field("version", &self.version)
            .field(
                "signing_key_pem",
                &self.signing_key_pem.as_ref().map(|_| "<redacted>"),
            )
            .field("sessions", &self.sessions.len())
            .field("identity", &self.identity)
            .finish()
    }
}

/// Makes a rename in `directory` durable.
#[cfg(unix)]
fn sync_directory(directory: &Path) -> std::io::Result<()> {
    std::fs::File::open(directory)?.sync_all()
}

/// Windows has no directory handles to sync; the rename is as durable as the file system makes it.
#[cfg(not(unix))]
fn sync_directory(_directory: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::store::tests::record;

    #[test]
    fn state_file_round_trips_atomically() {
        let directory = tempfile::tempdir().expect("tempdir");
        let path = directory.path().join("state.json");
        assert!(StateFile::load(&path).expect("load").is_none());
        let now = Utc::now();
        let state = StateFile {
            version: STATE_VERSION,
            signing_key_pem: None,
            sessions: vec![record(now)],
            identity: IdentityState::default(),
        };
        state.save(&path).expect("save");
        let loaded = StateFile::load(&path).expect("load").expect("present");
        assert_eq!(loaded.sessions.len(), 1);
        assert_eq!(loaded.sessions[0].created_at, now);
        let leftovers = std::fs::read_dir(directory.path()).expect("dir").count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
        std::fs::write(&path, b"{").expect("write");
        assert!(StateFile::load(&path).is_err());
    }

    /// The deepest member the mock accepts loads again; the nesting it sits at is what
    /// [`MEMBER_NESTING`] says (one level more fails at load, so the sum is exact).
    #[test]
    fn the_deepest_member_accepted_loads_again() {
        use crate::described::{MAX_MEMBER_DEPTH, members::nesting};
        let directory = tempfile::tempdir().expect("tempdir");
        let path = directory.path().join("state.json");
        let nested = |depth: usize| {
            let mut value = serde_json::json!("bottom");
            for _ in 0..depth {
                value = serde_json::json!([value]);
            }
            value
        };
        let save = |depth: usize| {
            let mut session = record(Utc::now());
            session
                .described_members
                .insert("metadata".into(), nested(depth));
            StateFile {
                version: STATE_VERSION,
                signing_key_pem: None,
                sessions: vec![session],
                identity: IdentityState::default(),
            }
            .save(&path)
            .expect("save");
        };
        save(MAX_MEMBER_DEPTH);
        let loaded = StateFile::load(&path).expect("loads").expect("present");
        assert_eq!(
            nesting(&loaded.sessions[0].described_members["metadata"]),
            MAX_MEMBER_DEPTH
        );
        save(READABLE_NESTING - MEMBER_NESTING);
        assert!(StateFile::load(&path).is_ok());
        save(READABLE_NESTING - MEMBER_NESTING + 1);
        let error = StateFile::load(&path).expect_err("one level too deep");
        assert!(error.to_string().contains("recursion limit"), "{error}");
    }
}
