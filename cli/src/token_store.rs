//! Where a profile's sign-in (its refresh and access tokens) is kept: the operating system's
//! credential store, or an owner-only file.
//!
//! Both hold the same JSON text (the client's stored sign-in); this module only keeps it safe.
//! The file store refuses a file that others can read, or a directory others can write, as ssh
//! refuses a private key that others can read: tokens that may have leaked are not used.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::profile::{ConfigDir, TokenStoreKind, create_private_dir, write_private_file};

/// The keyring's service name for every entry of this command.
const KEYRING_SERVICE: &str = "creditdata";
/// The largest stored sign-in read from a file: a few tokens, never megabytes.
const MAX_STORED_BYTES: u64 = 256 * 1024;

/// Why a stored sign-in could not be read, written or removed. Names the place, never the
/// content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

/// A profile's token store.
pub enum Store {
    /// The operating system's credential store.
    Keyring(KeyringStore),
    /// `tokens/PROFILE.json` in the configuration directory.
    File(FileStore),
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Store {
    /// Which kind of store.
    pub fn kind(&self) -> TokenStoreKind {
        match self {
            Store::Keyring(_) => TokenStoreKind::Keyring,
            Store::File(_) => TokenStoreKind::File,
        }
    }

    /// Where it is, for `auth status` and messages.
    pub fn describe(&self) -> String {
        match self {
            Store::Keyring(store) => format!(
                "keyring (service {KEYRING_SERVICE:?}, entry {:?})",
                store.account
            ),
            Store::File(store) => format!("file {}", store.path.display()),
        }
    }

    /// The stored text, if any.
    pub fn load_text(&self) -> Result<Option<String>, StoreError> {
        match self {
            Store::Keyring(store) => store.load_text(),
            Store::File(store) => store.load_text(),
        }
    }

    /// Takes the OS lock of this sign-in (see [`crate::token_lock`]): the same file for both
    /// stores, beside the file store's.
    pub fn lock(&self) -> Result<crate::token_lock::Held, StoreError> {
        let path = match self {
            Store::Keyring(store) => &store.lock_path,
            Store::File(store) => &store.lock_path,
        };
        if let Some(dir) = path.parent() {
            create_private_dir(dir).map_err(|f| StoreError(f.message().unwrap_or_default()))?;
            check_directory(dir)?;
        }
        crate::token_lock::acquire(path).map_err(|e| StoreError(e.0))
    }

    /// Replaces the stored text.
    pub fn save_text(&self, text: &str) -> Result<(), StoreError> {
        match self {
            Store::Keyring(store) => store.save_text(text),
            Store::File(store) => store.save_text(text),
        }
    }

    /// Removes the stored text; nothing stored is not an error.
    pub fn clear(&self) -> Result<(), StoreError> {
        match self {
            Store::Keyring(store) => store.clear(),
            Store::File(store) => store.clear(),
        }
    }
}

/// How the store was chosen: it decides what happens when the keyring is not there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// `--token-store`, `CREDITDATA_TOKEN_STORE` or the profile asked for this one.
    Explicitly(TokenStoreKind),
    /// Nobody asked: the keyring where one works, else the file.
    Default,
}

/// The chosen store, and a notice for the person when the default fell back to the file.
pub struct Opened {
    /// The store.
    pub store: Store,
    /// Why the keyring was not used, when it was not asked for and is not available.
    pub fallback_notice: Option<String>,
}

/// Opens the store of `profile`.
pub fn open(requested: Requested, dir: &ConfigDir, profile: &str) -> Result<Opened, StoreError> {
    let file = || Store::File(FileStore::new(dir, profile));
    match requested {
        Requested::Explicitly(TokenStoreKind::File) => Ok(Opened {
            store: file(),
            fallback_notice: None,
        }),
        Requested::Explicitly(TokenStoreKind::Keyring) => {
            let store = KeyringStore::new(dir, profile)?;
            store.probe().map_err(|reason| {
                StoreError(format!(
                    "the system keyring is not available ({reason}); use `--token-store file` to keep the sign-in in an owner-only file under {}",
                    dir.path().display()
                ))
            })?;
            Ok(Opened {
                store: Store::Keyring(store),
                fallback_notice: None,
            })
        }
        Requested::Default => {
            let keyring = KeyringStore::new(dir, profile).and_then(|store| {
                store.probe().map_err(StoreError)?;
                Ok(store)
            });
            match keyring {
                Ok(store) => Ok(Opened {
                    store: Store::Keyring(store),
                    fallback_notice: None,
                }),
                Err(StoreError(reason)) => {
                    let store = file();
                    let notice = format!(
                        "no system keyring is available ({reason}): the sign-in is kept in the owner-only {}",
                        store.describe()
                    );
                    Ok(Opened {
                        store,
                        fallback_notice: Some(notice),
                    })
                }
            }
        }
    }
}

/// An entry of the operating system's credential store.
pub struct KeyringStore {
    entry: keyring::Entry,
    account: String,
    lock_path: PathBuf,
}

impl KeyringStore {
    /// The entry of `profile`. The configuration directory is part of its name, so that two
    /// configurations (a test's, a second account's) never share a sign-in.
    fn new(dir: &ConfigDir, profile: &str) -> Result<KeyringStore, StoreError> {
        let account = format!("{profile}@{}", dir.path().display());
        let entry = keyring::Entry::new(KEYRING_SERVICE, &account)
            .map_err(|e| StoreError(format!("cannot name the keyring entry: {e}")))?;
        Ok(KeyringStore {
            entry,
            account,
            lock_path: lock_path(dir, profile),
        })
    }

    /// Whether the store answers at all (headless machines have no Secret Service).
    fn probe(&self) -> Result<(), String> {
        match self.entry.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keyring_reason(&e)),
        }
    }

    fn load_text(&self) -> Result<Option<String>, StoreError> {
        match self.entry.get_password() {
            Ok(text) => Ok(Some(text)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(StoreError(format!(
                "cannot read the sign-in from the keyring entry {:?}: {}",
                self.account,
                keyring_reason(&e)
            ))),
        }
    }

    fn save_text(&self, text: &str) -> Result<(), StoreError> {
        self.entry.set_password(text).map_err(|e| {
            StoreError(format!(
                "cannot save the sign-in in the keyring entry {:?}: {}",
                self.account,
                keyring_reason(&e)
            ))
        })
    }

    fn clear(&self) -> Result<(), StoreError> {
        match self.entry.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(StoreError(format!(
                "cannot remove the keyring entry {:?}: {}",
                self.account,
                keyring_reason(&e)
            ))),
        }
    }
}

/// The keyring's error in one line. Its variants never carry the secret, except `BadEncoding`,
/// which holds the stored bytes: that one is described, not shown.
fn keyring_reason(error: &keyring::Error) -> String {
    match error {
        keyring::Error::BadEncoding(_) => "the stored value is not UTF-8 text".to_string(),
        keyring::Error::Ambiguous(_) => "several entries match".to_string(),
        other => crate::terminal::one_line(&other.to_string()),
    }
}

/// `tokens/PROFILE.json` in the configuration directory: 0600 in a 0700 directory.
pub struct FileStore {
    path: PathBuf,
    lock_path: PathBuf,
}

/// `tokens/PROFILE.lock`: whoever holds it may refresh the profile's sign-in.
fn lock_path(dir: &ConfigDir, profile: &str) -> PathBuf {
    dir.tokens_dir().join(format!("{profile}.lock"))
}

impl FileStore {
    fn new(dir: &ConfigDir, profile: &str) -> FileStore {
        FileStore {
            path: dir.tokens_dir().join(format!("{profile}.json")),
            lock_path: lock_path(dir, profile),
        }
    }

    /// The file.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load_text(&self) -> Result<Option<String>, StoreError> {
        let path = &self.path;
        let metadata = match std::fs::symlink_metadata(path) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(StoreError(format!(
                    "cannot read the sign-in file {}: {e}",
                    path.display()
                )));
            }
        };
        if !metadata.file_type().is_file() {
            return Err(StoreError(format!(
                "the sign-in file {} is not a regular file (a link or a directory); remove it and run `creditdata login` again",
                path.display()
            )));
        }
        check_private(path, &metadata)?;
        if let Some(dir) = path.parent() {
            check_directory(dir)?;
        }
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_STORED_BYTES + 1).read_to_string(&mut text))
            .map_err(|e| {
                StoreError(format!(
                    "cannot read the sign-in file {}: {e}",
                    path.display()
                ))
            })?;
        if text.len() as u64 > MAX_STORED_BYTES {
            return Err(StoreError(format!(
                "the sign-in file {} is larger than {MAX_STORED_BYTES} bytes: it is not one of ours; remove it and run `creditdata login` again",
                path.display()
            )));
        }
        Ok(Some(text))
    }

    fn save_text(&self, text: &str) -> Result<(), StoreError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(|f| StoreError(f.message().unwrap_or_default()))?;
        check_directory(dir)?;
        write_private_file(&self.path, text.as_bytes())
            .map_err(|f| StoreError(f.message().unwrap_or_default()))
    }

    fn clear(&self) -> Result<(), StoreError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError(format!(
                "cannot remove the sign-in file {}: {e}",
                self.path.display()
            ))),
        }
    }
}

/// Refuses a sign-in file that anyone but its owner can read or write.
#[cfg(unix)]
fn check_private(path: &Path, metadata: &std::fs::Metadata) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(StoreError(format!(
            "the sign-in file {} can be read or written by others (permissions {mode:04o}), so its tokens may have leaked and it is not used; run `creditdata logout` and `creditdata login` to sign in afresh (or `chmod 600` it if you are sure nobody read it)",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &Path, _: &std::fs::Metadata) -> Result<(), StoreError> {
    Ok(())
}

/// Refuses a tokens directory others can write to: they could replace the sign-in with theirs.
#[cfg(unix)]
fn check_directory(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let metadata = std::fs::metadata(dir).map_err(|e| {
        StoreError(format!(
            "cannot inspect the directory {}: {e}",
            dir.display()
        ))
    })?;
    if std::os::unix::fs::MetadataExt::uid(&metadata) != rustix::process::geteuid().as_raw() {
        return Err(StoreError(format!(
            "the directory {} belongs to another user, who could replace the sign-in; it is not used",
            dir.display()
        )));
    }
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(StoreError(format!(
            "the directory {} can be written by others (permissions {mode:04o}), who could replace the sign-in; run `chmod 700` on it",
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_directory(_: &Path) -> Result<(), StoreError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_store_writes_privately_and_reads_back() {
        let temp = tempfile::tempdir().unwrap();
        let dir = ConfigDir::at(temp.path().join("cfg"));
        let opened = open(Requested::Explicitly(TokenStoreKind::File), &dir, "work").unwrap();
        assert!(opened.fallback_notice.is_none());
        let store = opened.store;
        assert_eq!(store.load_text().unwrap(), None);
        store.save_text("{\"a\":1}").unwrap();
        assert_eq!(store.load_text().unwrap().as_deref(), Some("{\"a\":1}"));
        let Store::File(file) = &store else {
            panic!("a file store")
        };
        assert_eq!(file.path(), dir.tokens_dir().join("work.json"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(file.path()), 0o600);
            assert_eq!(mode(&dir.tokens_dir()), 0o700);
        }
        store.clear().unwrap();
        store.clear().unwrap();
        assert_eq!(store.load_text().unwrap(), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let dir = ConfigDir::at(temp.path());
        let store = open(Requested::Explicitly(TokenStoreKind::File), &dir, "p")
            .unwrap()
            .store;
        store.save_text("{\"refresh\":\"secret-value\"}").unwrap();
        let path = dir.tokens_dir().join("p.json");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = store.load_text().unwrap_err().to_string();
        assert!(err.contains("permissions 0644"), "{err}");
        assert!(err.contains(path.to_str().unwrap()), "{err}");
        assert!(!err.contains("secret-value"), "{err}");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(dir.tokens_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = store.load_text().unwrap_err().to_string();
        assert!(err.contains("can be written by others"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_the_file_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let dir = ConfigDir::at(temp.path());
        create_private_dir(&dir.tokens_dir()).unwrap();
        let elsewhere = temp.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "{}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.tokens_dir().join("p.json")).unwrap();
        let store = open(Requested::Explicitly(TokenStoreKind::File), &dir, "p")
            .unwrap()
            .store;
        let err = store.load_text().unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
