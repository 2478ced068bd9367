//! The export's files on disk: owner-only directories, files written atomically while their
//! SHA-256 is computed, and the check that a file still is what the manifest says.

use std::fs::{DirBuilder, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use creditdata_client::download::{BodyStream, sanitize_file_name};
use futures::StreamExt;
use sha2::{Digest, Sha256};

/// Temporary files are hidden and carry this prefix and [`TEMP_SUFFIX`]: never a final name.
pub const TEMP_PREFIX: &str = ".creditdata-";
/// See [`TEMP_PREFIX`].
pub const TEMP_SUFFIX: &str = ".part";

/// What a file write or check failed on (no file content in it: only the path and the cause).
#[derive(Debug)]
pub struct StoreError(pub String);

impl StoreError {
    fn io(path: &Path, error: std::io::Error) -> StoreError {
        StoreError(format!("{}: {error}", path.display()))
    }
}

/// Removes the temporary files a crashed or killed export left in `dir` (and below it, when
/// `recursive`). Called only while holding the [`super::lock::DirectoryLock`], so no other export is
/// writing them.
pub fn remove_leftovers(dir: &Path, recursive: bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if kind.is_dir() {
            if recursive {
                remove_leftovers(&entry.path(), true);
            }
        } else if kind.is_file() && name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A file's size and SHA-256 (lowercase hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digested {
    pub bytes: u64,
    pub sha256: String,
}

/// Creates `dir` and its missing parents, readable by the owner only (0700 on Unix): the tree
/// holds personal data. An existing directory is kept as it is.
pub fn create_private_dir_all(dir: &Path) -> Result<(), StoreError> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| StoreError::io(dir, e))
}

/// A temporary file next to `target`, owner-only (tempfile creates it 0600), removed when
/// dropped before [`place`] (an error, or Ctrl-C dropping the export's futures).
fn temporary_next_to(target: &Path) -> Result<tempfile::NamedTempFile, StoreError> {
    let dir = parent_of(target);
    create_private_dir_all(dir)?;
    tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)
        .map_err(|e| StoreError::io(target, e))
}

/// Syncs the temporary file to disk and renames it over `target`, then syncs the directory so
/// that the new name survives a crash. Blocking: run it off the async thread.
fn place(temporary: tempfile::NamedTempFile, target: &Path) -> Result<(), StoreError> {
    temporary
        .as_file()
        .sync_all()
        .map_err(|e| StoreError::io(target, e))?;
    // The `PersistError` owns the temporary file; dropping it removes the file.
    temporary
        .persist(target)
        .map_err(|e| StoreError::io(target, e.error))?;
    #[cfg(unix)]
    let _ = File::open(parent_of(target)).and_then(|dir| dir.sync_all());
    Ok(())
}

async fn place_off_thread(
    temporary: tempfile::NamedTempFile,
    target: &Path,
) -> Result<(), StoreError> {
    let owned_target = target.to_path_buf();
    tokio::task::spawn_blocking(move || place(temporary, &owned_target))
        .await
        .map_err(|e| StoreError(format!("{}: {e}", target.display())))?
}

/// Writes `content` to `target` atomically (temporary file, fsync, rename).
pub async fn write_bytes(target: &Path, content: &[u8]) -> Result<Digested, StoreError> {
    let mut temporary = temporary_next_to(target)?;
    temporary
        .write_all(content)
        .map_err(|e| StoreError::io(target, e))?;
    place_off_thread(temporary, target).await?;
    Ok(digest_of(content))
}

/// Streams a download's body to `target` atomically, hashing it on the way. The body stream is
/// the client's, which fails on a body shorter or longer than its `Content-Length`.
pub async fn write_stream(
    target: &Path,
    mut body: BodyStream,
    mut on_chunk: impl FnMut(u64),
) -> Result<Digested, WriteStreamError> {
    let mut temporary = temporary_next_to(target).map_err(WriteStreamError::Store)?;
    let mut hasher = Sha256::new();
    let mut written: u64 = 0;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(WriteStreamError::Client)?;
        hasher.update(&chunk);
        temporary
            .write_all(&chunk)
            .map_err(|e| WriteStreamError::Store(StoreError::io(target, e)))?;
        written += chunk.len() as u64;
        on_chunk(chunk.len() as u64);
    }
    place_off_thread(temporary, target)
        .await
        .map_err(WriteStreamError::Store)?;
    Ok(Digested {
        bytes: written,
        sha256: hex(&hasher.finalize()),
    })
}

/// Why [`write_stream`] failed: the download, or the local file.
#[derive(Debug)]
pub enum WriteStreamError {
    Client(creditdata_client::Error),
    Store(StoreError),
}

/// Size and SHA-256 of `content`.
pub fn digest_of(content: &[u8]) -> Digested {
    Digested {
        bytes: content.len() as u64,
        sha256: hex(&Sha256::digest(content)),
    }
}

/// Whether the file at `path` has exactly this size and SHA-256; with `keep_content`, also its
/// content (for datasets, whose ids lead to the session's other files). `None`: missing, torn
/// or changed. Blocking: run it off the async thread.
pub fn verify(path: &Path, expected: &Digested, keep_content: bool) -> Option<Option<Vec<u8>>> {
    let mut file = File::open(path).ok()?;
    let metadata = file.metadata().ok()?;
    if !metadata.is_file() || metadata.len() != expected.bytes {
        return None;
    }
    let mut hasher = Sha256::new();
    let mut content = keep_content.then(|| Vec::with_capacity(expected.bytes as usize));
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let read = file.read(&mut buffer).ok()?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        if let Some(content) = content.as_mut() {
            content.extend_from_slice(&buffer[..read]);
        }
        total += read as u64;
    }
    (total == expected.bytes && hex(&hasher.finalize()) == expected.sha256).then_some(content)
}

/// [`verify`] on the blocking pool.
pub async fn verify_off_thread(
    path: PathBuf,
    expected: Digested,
    keep_content: bool,
) -> Option<Option<Vec<u8>>> {
    tokio::task::spawn_blocking(move || verify(&path, &expected, keep_content))
        .await
        .ok()
        .flatten()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut text, b| {
        let _ = write!(text, "{b:02x}");
        text
    })
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// A file name for an id the service chose: the id itself when it is a safe, plain file name
/// component, otherwise its safe form plus a short hash of the id, so that two ids never share
/// a name and no id can point outside its directory.
pub fn name_for_id(id: &str) -> String {
    match sanitize_file_name(id) {
        Some(safe) if safe == id && !id.starts_with('.') => id.to_string(),
        safe => {
            let tag = &digest_of(id.as_bytes()).sha256[..16];
            match safe {
                Some(safe) => format!("{}-{tag}", safe.trim_start_matches('.')),
                None => format!("id-{tag}"),
            }
        }
    }
}

/// A file extension (with its dot) worth keeping: short, ASCII letters and digits only.
pub fn extension_of(name: Option<&str>) -> Option<String> {
    let (_, extension) = name?.rsplit_once('.')?;
    (!extension.is_empty()
        && extension.len() <= 8
        && extension.chars().all(|c| c.is_ascii_alphanumeric()))
    .then(|| format!(".{}", extension.to_ascii_lowercase()))
}

/// An extension for the common content types of images and documents.
pub fn extension_for_content_type(content_type: Option<&str>) -> Option<String> {
    let essence = content_type?.split(';').next()?.trim().to_ascii_lowercase();
    let extension = match essence.as_str() {
        "image/jpeg" => "jpg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/tiff" => "tiff",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "application/xml" | "text/xml" => "xml",
        "text/plain" => "txt",
        "text/tab-separated-values" => "tsv",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => "xlsx",
        _ => return None,
    };
    Some(format!(".{extension}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_plain_distinct_names() {
        assert_eq!(name_for_id("att-1"), "att-1");
        let dots = name_for_id("..");
        assert!(
            !dots.contains('/') && dots != ".." && !dots.starts_with('.'),
            "{dots}"
        );
        let a = name_for_id("a/b");
        let b = name_for_id("a\\b");
        assert_ne!(a, b);
        assert!(!a.contains('/') && !b.contains('\\'), "{a} {b}");
        assert!(!name_for_id(".hidden").starts_with('.'));
    }

    #[test]
    fn extensions_are_short_and_plain() {
        assert_eq!(extension_of(Some("scan.PNG")).as_deref(), Some(".png"));
        assert_eq!(extension_of(Some("x.tar.gz")).as_deref(), Some(".gz"));
        assert_eq!(extension_of(Some("noext")), None);
        assert_eq!(extension_of(Some("a.b c")), None);
        assert_eq!(
            extension_for_content_type(Some("image/jpeg; q=1")).as_deref(),
            Some(".jpg")
        );
    }

    #[test]
    fn a_torn_or_changed_file_does_not_verify() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"hello").unwrap();
        let expected = digest_of(b"hello");
        assert_eq!(
            verify(&path, &expected, true),
            Some(Some(b"hello".to_vec()))
        );
        std::fs::write(&path, b"hell").unwrap();
        assert_eq!(verify(&path, &expected, false), None);
        std::fs::write(&path, b"jello").unwrap();
        assert_eq!(verify(&path, &expected, false), None);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(verify(&path, &expected, false), None);
    }
}
