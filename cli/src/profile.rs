//! Profiles: named sets of settings (environment, URLs, the sign-in client) in a TOML file.
//!
//! The file is `config.toml` in the configuration directory: `$CREDITDATA_CONFIG` when set,
//! else the platform's configuration directory (`~/.config/creditdata` on Linux). Stored
//! sign-ins of the file store live beside it, in `tokens/`.
//!
//! ```toml
//! [profiles.default]
//! environment = "mock"
//! issuer = "http://127.0.0.1:8080/realms/consumer"
//! client_id = "creditdata-cli"
//! scopes = ["openid", "profile"]
//! token_store = "file"
//! ```
//!
//! Reading is strict: an unknown key or a bad value is an error naming the file, the line and
//! the key, because a misspelt `issuer` silently ignored would send a person's password to the
//! default identity provider. Writing goes through `toml_edit`, so a person's comments and
//! layout survive `creditdata login`, and is atomic (temporary file, fsync, rename), owner-only.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde::Deserialize;
use toml::Spanned;

use crate::failure::Failure;

/// The variable naming the configuration directory.
pub const CONFIG_DIR_VAR: &str = "CREDITDATA_CONFIG";
/// The variable naming the profile.
pub const PROFILE_VAR: &str = "CREDITDATA_PROFILE";
/// The profile used when none is named.
pub const DEFAULT_PROFILE: &str = "default";
/// The longest profile name: it becomes a file name and a keyring entry.
const MAX_PROFILE_NAME: usize = 64;

/// Where a stored sign-in is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TokenStoreKind {
    /// The operating system's credential store (Secret Service on Linux, Keychain on macOS,
    /// Credential Manager on Windows).
    Keyring,
    /// An owner-only file, `tokens/PROFILE.json` in the configuration directory.
    File,
}

impl TokenStoreKind {
    /// The name used in the file, on the command line and in `auth status`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenStoreKind::Keyring => "keyring",
            TokenStoreKind::File => "file",
        }
    }
}

impl fmt::Display for TokenStoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The configuration directory and the files in it.
#[derive(Debug, Clone)]
pub struct ConfigDir {
    path: PathBuf,
}

impl ConfigDir {
    /// `$CREDITDATA_CONFIG`, else the platform's configuration directory + `creditdata`.
    pub fn locate(env: &dyn Fn(&str) -> Option<String>) -> Result<ConfigDir, Failure> {
        if let Some(dir) = env(CONFIG_DIR_VAR).filter(|d| !d.trim().is_empty()) {
            return Ok(ConfigDir {
                path: PathBuf::from(dir),
            });
        }
        let base = dirs::config_dir().ok_or_else(|| {
            Failure::Usage(format!(
                "cannot tell where the configuration directory is (no home directory); set {CONFIG_DIR_VAR} to a directory"
            ))
        })?;
        Ok(ConfigDir {
            path: base.join("creditdata"),
        })
    }

    /// A given directory (tests).
    #[cfg(test)]
    pub fn at(path: impl Into<PathBuf>) -> ConfigDir {
        ConfigDir { path: path.into() }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.path.join("config.toml")
    }

    /// Where the file store keeps sign-ins.
    pub fn tokens_dir(&self) -> PathBuf {
        self.path.join("tokens")
    }

    /// Creates the directory (owner-only) if it does not exist.
    pub fn create(&self) -> Result<(), Failure> {
        create_private_dir(&self.path)
    }
}

/// Creates `dir` and its missing parents; the directory itself owner-only (0700) when it is
/// new. An existing directory is left as it is (it may be shared on purpose).
pub fn create_private_dir(dir: &Path) -> Result<(), Failure> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| {
        Failure::Local(format!(
            "cannot create the directory {}: {e}",
            dir.display()
        ))
    })
}

/// One profile's settings, as read from the file. `None`: not set there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// `production`, `test`, `mock` or a base URL.
    pub environment: Option<String>,
    /// The service's base URL (wins over `environment`).
    pub base_url: Option<String>,
    /// The OpenID Connect issuer people sign in with.
    pub issuer: Option<String>,
    /// The public (native application) client id used to sign in.
    pub client_id: Option<String>,
    /// The scopes asked for when signing in.
    pub scopes: Option<Vec<String>>,
    /// The `prompt` sent when signing in (`consent` for providers that issue a refresh token
    /// only then).
    pub prompt: Option<String>,
    /// Where the sign-in is kept.
    pub token_store: Option<TokenStoreKind>,
}

/// The file's shape. Unknown keys are errors at every level.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    profiles: BTreeMap<String, Spanned<ProfileFile>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    environment: Option<Spanned<String>>,
    base_url: Option<Spanned<String>>,
    issuer: Option<Spanned<String>>,
    client_id: Option<Spanned<String>>,
    scopes: Option<Spanned<Vec<String>>>,
    prompt: Option<Spanned<String>>,
    token_store: Option<Spanned<TokenStoreKind>>,
}

/// The profiles of a configuration file.
#[derive(Debug, Default)]
pub struct Config {
    profiles: BTreeMap<String, Profile>,
}

impl Config {
    /// Reads `file`; a missing file is an empty configuration.
    pub fn load(file: &Path) -> Result<Config, Failure> {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => {
                // It says where a person's token goes: nobody else may have written it.
                if let Some(dir) = file.parent() {
                    check_not_writable_by_others(dir, "directory")?;
                }
                check_not_writable_by_others(file, "file")?;
                text
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => {
                return Err(Failure::Usage(format!(
                    "cannot read the configuration file {}: {e}",
                    file.display()
                )));
            }
        };
        Config::parse(file, &text)
    }

    /// Parses the text of `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Config, Failure> {
        let raw: ConfigFile = toml::from_str(text).map_err(|e| {
            let message = e.message().trim_end();
            match e.span() {
                Some(span) => located(file, text, span, message),
                None => Failure::Usage(format!("{}: {message}", file.display())),
            }
        })?;
        let mut profiles = BTreeMap::new();
        for (name, profile) in raw.profiles {
            let span = profile.span();
            let profile = profile.into_inner();
            check_profile_name(&name).map_err(|m| {
                located(file, text, span.clone(), &format!("[profiles.{name}]: {m}"))
            })?;
            let at = |field: &str, span: Range<usize>, problem: String| {
                located(
                    file,
                    text,
                    span,
                    &format!("profiles.{name}.{field}: {problem}"),
                )
            };
            let text_field = |field: &str,
                              value: Option<Spanned<String>>,
                              check: fn(&str) -> Result<(), String>| {
                checked(value, |v: &String| check(v), |span, p| at(field, span, p))
            };
            let environment = text_field("environment", profile.environment, check_environment)?;
            let base_url = text_field("base_url", profile.base_url, check_url)?;
            let issuer = text_field("issuer", profile.issuer, check_url)?;
            let client_id = text_field("client_id", profile.client_id, check_client_id)?;
            let prompt = text_field("prompt", profile.prompt, check_prompt)?;
            let scopes = checked(
                profile.scopes,
                |scopes: &Vec<String>| scopes.iter().try_for_each(|scope| check_scope(scope)),
                |span, p| at("scopes", span, p),
            )?;
            profiles.insert(
                name,
                Profile {
                    environment,
                    base_url,
                    issuer,
                    client_id,
                    scopes,
                    prompt,
                    token_store: profile.token_store.map(Spanned::into_inner),
                },
            );
        }
        Ok(Config { profiles })
    }

    /// The profile named `name`, if the file has it.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }
}

/// Refuses a configuration file (or its directory) that is not the user's own, or that others
/// can write: whoever can change `base_url` or `issuer` decides where the sign-in goes.
#[cfg(unix)]
fn check_not_writable_by_others(path: &Path, what: &str) -> Result<(), Failure> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let metadata = std::fs::metadata(path).map_err(|e| {
        Failure::Usage(format!(
            "cannot inspect the configuration {what} {}: {e}",
            path.display()
        ))
    })?;
    let me = rustix::process::geteuid().as_raw();
    if metadata.uid() != me {
        return Err(Failure::Usage(format!(
            "the configuration {what} {} belongs to another user (uid {}), who could send your sign-in elsewhere; it is not used: make it yours (`chown`) or set CREDITDATA_CONFIG to a directory of your own",
            path.display(),
            metadata.uid()
        )));
    }
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(Failure::Usage(format!(
            "the configuration {what} {} can be written by others (permissions {mode:04o}), who could send your sign-in elsewhere; it is not used: run `chmod go-w` on it",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_not_writable_by_others(_: &Path, _: &str) -> Result<(), Failure> {
    Ok(())
}

/// An error at `span` of `file`: `FILE:LINE:COLUMN: problem`, as compilers say it.
fn located(file: &Path, text: &str, span: Range<usize>, problem: &str) -> Failure {
    let start = span.start.min(text.len());
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Failure::Usage(format!("{}:{line}:{column}: {problem}", file.display()))
}

/// `value` once `check` accepts it; `located` turns a refusal into the error that points at
/// the value's place in the file.
fn checked<T>(
    value: Option<Spanned<T>>,
    check: impl Fn(&T) -> Result<(), String>,
    located: impl FnOnce(Range<usize>, String) -> Failure,
) -> Result<Option<T>, Failure> {
    let Some(value) = value else {
        return Ok(None);
    };
    let span = value.span();
    let value = value.into_inner();
    check(&value).map_err(|problem| located(span, problem))?;
    Ok(Some(value))
}

/// Profile names become file names and keyring entries: letters, digits, `-`, `_`, `.` (not
/// first), at most 64.
pub fn check_profile_name(name: &str) -> Result<(), String> {
    let good = !name.is_empty()
        && name.len() <= MAX_PROFILE_NAME
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if good {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a usable profile name: use 1 to {MAX_PROFILE_NAME} letters, digits, `-`, `_` or `.` (not first)"
        ))
    }
}

fn check_environment(value: &str) -> Result<(), String> {
    value
        .parse::<creditdata_client::Environment>()
        .map(|_| ())
        .map_err(|e| format!("{e}"))?;
    if value.contains("://") {
        check_url(value)?;
    }
    Ok(())
}

/// An https URL (or http to a loopback address) without user information, query or fragment.
pub fn check_url(value: &str) -> Result<(), String> {
    let url = url::Url::parse(value.trim()).map_err(|e| format!("{value:?} is not a URL ({e})"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if !(url.scheme() == "https" || url.scheme() == "http" && loopback) {
        return Err(format!("{value:?} must use https (or http on loopback)"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{} must not carry a user name or password",
            url.origin().ascii_serialization()
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{value:?} must not have a query or fragment"));
    }
    Ok(())
}

fn check_client_id(value: &str) -> Result<(), String> {
    if value.trim().is_empty() || value.chars().any(char::is_control) {
        return Err(format!(
            "{value:?} is not a client id: it must be non-empty printable text"
        ));
    }
    Ok(())
}

/// OpenID Connect Core §3.1.2.1: space-separated `none`, `login`, `consent`, `select_account`.
pub fn check_prompt(value: &str) -> Result<(), String> {
    let known = ["none", "login", "consent", "select_account"];
    let words: Vec<&str> = value.split(' ').collect();
    if words.iter().all(|w| known.contains(w)) && !(words.contains(&"none") && words.len() > 1) {
        Ok(())
    } else {
        Err(format!(
            "{value:?} is not a prompt: use none, login, consent or select_account (several separated by spaces, none alone)"
        ))
    }
}

/// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
pub fn check_scope(value: &str) -> Result<(), String> {
    let good = !value.is_empty()
        && value
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b));
    if good {
        Ok(())
    } else {
        Err(format!(
            "{value:?} is not a scope: printable ASCII without spaces, `\"` or `\\`"
        ))
    }
}

/// Records `profile` under `name` in `file`: keys set in `profile` are written, the others
/// removed from that profile, everything else in the file (other profiles, comments) kept.
pub fn record(dir: &ConfigDir, name: &str, profile: &Profile) -> Result<(), Failure> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};

    let file = dir.config_file();
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(Failure::Local(format!(
                "cannot read the configuration file {}: {e}",
                file.display()
            )));
        }
    };
    // Refuse to rewrite a file we could not read back: the person's mistake stays theirs to fix.
    Config::parse(&file, &text)?;
    let mut document: DocumentMut = text
        .parse()
        .map_err(|e| Failure::Usage(format!("{}: {e}", file.display())))?;
    let profiles = document
        .entry("profiles")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| {
            Failure::Usage(format!(
                "{}: `profiles` must be a table of profiles ([profiles.NAME])",
                file.display()
            ))
        })?;
    let entry = profiles
        .entry(name)
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .ok_or_else(|| {
            Failure::Usage(format!(
                "{}: profiles.{name} must be a table",
                file.display()
            ))
        })?;
    let mut set = |key: &str, item: Option<Item>| match item {
        Some(item) => {
            entry.insert(key, item);
        }
        None => {
            entry.remove(key);
        }
    };
    set("environment", profile.environment.as_deref().map(value));
    set("base_url", profile.base_url.as_deref().map(value));
    set("issuer", profile.issuer.as_deref().map(value));
    set("client_id", profile.client_id.as_deref().map(value));
    set(
        "scopes",
        profile
            .scopes
            .as_ref()
            .map(|s| value(s.iter().map(String::as_str).collect::<Array>())),
    );
    set("prompt", profile.prompt.as_deref().map(value));
    set(
        "token_store",
        profile.token_store.map(|k| value(k.as_str())),
    );
    dir.create()?;
    write_private_file(&file, document.to_string().as_bytes())
}

/// Writes `bytes` to `path` atomically: an owner-only temporary file beside it, fsync, rename,
/// fsync of the directory. A reader sees the old file or the new one, never a part.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let fail = |what: &str, e: std::io::Error| {
        Failure::Local(format!("cannot {what} {}: {e}", path.display()))
    };
    // tempfile creates it 0600 on Unix.
    let mut temporary =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| fail("create a temporary file for", e))?;
    temporary
        .write_all(bytes)
        .and_then(|()| temporary.as_file().sync_all())
        .map_err(|e| fail("write", e))?;
    temporary
        .persist(path)
        .map_err(|e| fail("replace", e.error))?;
    #[cfg(unix)]
    if let Ok(directory) = std::fs::File::open(dir) {
        // The rename is durable only once the directory is.
        let _ = directory.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(Path::new("/cfg/config.toml"), text).map_err(|f| f.message().unwrap())
    }

    #[test]
    fn a_full_profile_reads() {
        let config = parse(
            "# mine\n[profiles.work]\nenvironment = \"test\"\nissuer = \"https://login.example/realms/consumer\"\nclient_id = \"creditdata-cli\"\nscopes = [\"openid\", \"profile\"]\ntoken_store = \"file\"\n",
        )
        .unwrap();
        let work = config.profile("work").unwrap();
        assert_eq!(work.environment.as_deref(), Some("test"));
        assert_eq!(work.token_store, Some(TokenStoreKind::File));
        assert_eq!(
            work.scopes.as_deref(),
            Some(&["openid".to_string(), "profile".to_string()][..])
        );
        assert!(config.profile("default").is_none());
    }

    #[test]
    fn unknown_keys_name_the_file_line_and_key() {
        let err =
            parse("[profiles.default]\nenvironment = \"mock\"\nisuer = \"https://x.example\"\n")
                .unwrap_err();
        assert!(err.starts_with("/cfg/config.toml:3:1: "), "{err}");
        assert!(err.contains("unknown field `isuer`"), "{err}");
        let err = parse("colour = true\n").unwrap_err();
        assert!(err.contains(":1:1: ") && err.contains("`colour`"), "{err}");
    }

    #[test]
    fn bad_values_name_the_file_line_and_key() {
        let err = parse("[profiles.default]\n\nenvironment = \"staging\"\n").unwrap_err();
        assert!(
            err.starts_with("/cfg/config.toml:3:15: profiles.default.environment: "),
            "{err}"
        );
        assert!(err.contains("unknown environment"), "{err}");
        let err = parse("[profiles.p]\nissuer = \"https://me:pw@idp.example\"\n").unwrap_err();
        assert!(
            err.contains(":2:10: profiles.p.issuer: ") && !err.contains("pw@"),
            "{err}"
        );
        let err = parse("[profiles.p]\ntoken_store = \"disk\"\n").unwrap_err();
        assert!(err.contains(":2:") && err.contains("`keyring`"), "{err}");
        let err = parse("[profiles.p]\nscopes = [\"openid profile\"]\n").unwrap_err();
        assert!(
            err.contains("profiles.p.scopes") && err.contains("not a scope"),
            "{err}"
        );
        let err = parse("[profiles.\"../etc\"]\n").unwrap_err();
        assert!(err.contains("not a usable profile name"), "{err}");
    }

    #[test]
    fn recording_keeps_comments_and_other_profiles_and_is_private() {
        let temp = tempfile::tempdir().unwrap();
        let dir = ConfigDir::at(temp.path().join("creditdata"));
        dir.create().unwrap();
        std::fs::write(
            dir.config_file(),
            "# my settings\n[profiles.other]\nenvironment = \"test\" # kept\n\n[profiles.work]\nbase_url = \"http://127.0.0.1:1\"\n",
        )
        .unwrap();
        let profile = Profile {
            environment: Some("mock".into()),
            issuer: Some("http://127.0.0.1:9/realms/consumer".into()),
            client_id: Some("creditdata-cli".into()),
            scopes: Some(vec!["openid".into(), "profile".into()]),
            token_store: Some(TokenStoreKind::File),
            ..Profile::default()
        };
        record(&dir, "work", &profile).unwrap();
        let text = std::fs::read_to_string(dir.config_file()).unwrap();
        assert!(
            text.contains("# my settings") && text.contains("# kept"),
            "{text}"
        );
        let config = Config::parse(&dir.config_file(), &text).unwrap();
        assert_eq!(config.profile("work"), Some(&profile));
        assert_eq!(
            config.profile("other").unwrap().environment.as_deref(),
            Some("test")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.config_file())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        // A file that does not read is not rewritten.
        std::fs::write(dir.config_file(), "[profiles.work]\nbogus = 1\n").unwrap();
        assert!(record(&dir, "work", &profile).is_err());
        assert_eq!(
            std::fs::read_to_string(dir.config_file()).unwrap(),
            "[profiles.work]\nbogus = 1\n"
        );
    }
}
