//! The export's files on disk, confined to the export's tree: every path is taken relative to
//! the directory opened at the start, one component at a time, never through a link, and only
//! into directories this user alone owns and can write (Unix). Files are written atomically
//! while their SHA-256 is computed, and checked against the manifest without following links
//! or blocking on what is not a regular file.
//!
//! Not on Unix, paths are joined to the root and used as they are (no link or owner check):
//! the tree is as safe as its directory's permissions.

use std::ffi::OsString;
use std::fs::{DirBuilder, File};
use std::io::{BufReader, Read, Seek, Write};
#[cfg(unix)]
use std::path::Component;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    fn io(path: &Path, error: impl std::fmt::Display) -> StoreError {
        StoreError(format!("{}: {error}", path.display()))
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

/// The export's tree: its root, opened once, and every file below it by a relative path.
#[derive(Clone)]
pub struct Tree {
    root: Arc<PathBuf>,
    #[cfg(unix)]
    fd: Arc<rustix::fd::OwnedFd>,
}

impl Tree {
    /// Opens `root` (created owner-only if missing), refusing a directory that another user
    /// owns or that others can write.
    pub fn open(root: &Path) -> Result<Tree, StoreError> {
        create_private_dir_all(root)?;
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let fd = rustix::fs::open(
                root,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| StoreError::io(root, e))?;
            unix::check_private(&fd, root)?;
            Ok(Tree {
                root: Arc::new(root.to_path_buf()),
                fd: Arc::new(fd),
            })
        }
        #[cfg(not(unix))]
        Ok(Tree {
            root: Arc::new(root.to_path_buf()),
        })
    }

    /// The root as the user named it.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `rel` as a path the user can find (for messages).
    fn shown(&self, rel: &Path) -> PathBuf {
        self.root.join(rel)
    }

    /// Creates directory `rel` and its missing parents inside the tree (owner-only).
    pub fn create_dir_all(&self, rel: &Path) -> Result<(), StoreError> {
        #[cfg(unix)]
        return self.dir(rel, true).map(drop);
        #[cfg(not(unix))]
        create_private_dir_all(&self.shown(rel))
    }

    /// Writes `content` to `rel` atomically (temporary file, fsync, rename).
    pub async fn write_bytes(&self, rel: &Path, content: &[u8]) -> Result<Digested, StoreError> {
        let mut temporary = self.temporary(rel)?;
        temporary
            .file
            .write_all(content)
            .map_err(|e| StoreError::io(&self.shown(rel), e))?;
        place_off_thread(temporary).await?;
        Ok(digest_of(content))
    }

    /// Streams a download's body to `rel` atomically, hashing it on the way. The body stream
    /// is the client's, which fails on a body shorter or longer than its `Content-Length`.
    pub async fn write_stream(
        &self,
        rel: &Path,
        mut body: BodyStream,
        mut on_chunk: impl FnMut(u64),
    ) -> Result<Digested, WriteStreamError> {
        let mut temporary = self.temporary(rel).map_err(WriteStreamError::Store)?;
        let mut hasher = Sha256::new();
        let mut written: u64 = 0;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(WriteStreamError::Client)?;
            hasher.update(&chunk);
            temporary
                .file
                .write_all(&chunk)
                .map_err(|e| WriteStreamError::Store(StoreError::io(&self.shown(rel), e)))?;
            written += chunk.len() as u64;
            on_chunk(chunk.len() as u64);
        }
        place_off_thread(temporary)
            .await
            .map_err(WriteStreamError::Store)?;
        Ok(Digested {
            bytes: written,
            sha256: hex(&hasher.finalize()),
        })
    }

    /// Whether the file at `rel` has exactly this size and SHA-256 (`false`: missing, torn,
    /// changed, or not a regular file: a link, a FIFO..., said on stderr). Blocking: run it off
    /// the async thread.
    pub fn verify(&self, rel: &Path, expected: &Digested) -> bool {
        self.verify_read(rel, expected, |_| ()).is_some()
    }

    /// [`Tree::verify`], reading the file once: `read` gets its content as a stream (a
    /// listing's, whose ids lead to the session's other files) while it is hashed; its result
    /// only when the whole file verifies. Memory holds what `read` keeps, not the file.
    pub fn verify_read<T>(
        &self,
        rel: &Path,
        expected: &Digested,
        read: impl FnOnce(&mut dyn Read) -> T,
    ) -> Option<T> {
        let file = self.open_regular(rel).ok()?;
        let metadata = file.metadata().ok()?;
        if metadata.len() != expected.bytes {
            return None;
        }
        let mut reader = BufReader::with_capacity(64 * 1024, Hashing::new(file));
        let value = read(&mut reader);
        // Whatever `read` left (all of it, for a plain check) is hashed too.
        std::io::copy(&mut reader, &mut std::io::sink()).ok()?;
        let digested = reader.into_inner().finish();
        (digested == *expected).then_some(value)
    }

    /// [`Tree::verify`] on the blocking pool.
    pub async fn verify_off_thread(&self, rel: PathBuf, expected: Digested) -> bool {
        self.verify_read_off_thread(rel, expected, |_| ())
            .await
            .is_some()
    }

    /// [`Tree::verify_read`] on the blocking pool.
    pub async fn verify_read_off_thread<T: Send + 'static>(
        &self,
        rel: PathBuf,
        expected: Digested,
        read: impl FnOnce(&mut dyn Read) -> T + Send + 'static,
    ) -> Option<T> {
        let tree = self.clone();
        tokio::task::spawn_blocking(move || tree.verify_read(&rel, &expected, read))
            .await
            .ok()
            .flatten()
    }

    /// Streams a JSON answer's body (a dataset, a listing) to `rel` atomically, hashing it on
    /// the way and refusing more than `bound` bytes, then reads it back with `read` before it
    /// takes its name: an answer `read` refuses (not JSON...) is not placed. When its bytes are
    /// `earlier`'s and the file there still verifies, that file is left as it was
    /// (`unchanged`).
    pub async fn write_listing<T: Send + 'static>(
        &self,
        rel: &Path,
        mut body: BodyStream,
        bound: Bound,
        mut on_chunk: impl FnMut(u64),
        earlier: Option<Digested>,
        read: impl FnOnce(&mut dyn Read) -> Result<T, String> + Send + 'static,
    ) -> Result<WrittenListing<T>, WriteStreamError> {
        let shown = self.shown(rel);
        let io = |e: std::io::Error| WriteStreamError::Store(StoreError::io(&shown, e));
        let mut temporary = self.temporary(rel).map_err(WriteStreamError::Store)?;
        let mut hasher = Sha256::new();
        let mut written: u64 = 0;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(WriteStreamError::Client)?;
            written += chunk.len() as u64;
            if written > bound.bytes {
                return Err(WriteStreamError::Refused(
                    format!("the answer is larger than {} {}", bound.name, bound.bytes)
                        + bound.advice,
                ));
            }
            hasher.update(&chunk);
            temporary.file.write_all(&chunk).map_err(io)?;
            on_chunk(chunk.len() as u64);
        }
        let digested = Digested {
            bytes: written,
            sha256: hex(&hasher.finalize()),
        };
        let tree = self.clone();
        let rel = rel.to_path_buf();
        let joined = self.shown(&rel);
        let done = tokio::task::spawn_blocking(move || {
            let shown = tree.shown(&rel);
            let io = |e: std::io::Error| WriteStreamError::Store(StoreError::io(&shown, e));
            let mut file = temporary.file.try_clone().map_err(io)?;
            file.rewind().map_err(io)?;
            let value = read(&mut BufReader::with_capacity(64 * 1024, file))
                .map_err(WriteStreamError::Refused)?;
            let same = earlier.as_ref() == Some(&digested);
            let unchanged = same && tree.verify(&rel, &digested);
            // Left unplaced, the temporary file is removed when dropped.
            if !unchanged {
                temporary.place().map_err(WriteStreamError::Store)?;
            }
            Ok(WrittenListing {
                digested,
                unchanged,
                // The service's bytes are the last run's, but the file there no longer held
                // them (torn, changed, removed): put back as it was.
                repaired: same && !unchanged,
                read: value,
            })
        });
        done.await
            .map_err(|e| WriteStreamError::Store(StoreError::io(&joined, e)))?
    }

    /// The content of the regular file at `rel` (a manifest), never through a link and never
    /// blocking on a FIFO.
    pub fn read(&self, rel: &Path) -> std::io::Result<Vec<u8>> {
        let mut file = self.open_regular(rel)?;
        let mut content = Vec::new();
        file.read_to_end(&mut content)?;
        Ok(content)
    }

    /// Removes the temporary files a crashed or killed export left in `rel` (and below it,
    /// when `recursive`). Called only while holding the directory's lock, so no other export
    /// is writing them.
    pub fn remove_leftovers(&self, rel: &Path, recursive: bool) {
        #[cfg(unix)]
        {
            let Ok(dir) = self.dir(rel, false) else {
                return;
            };
            for (name, is_dir) in unix::entries(&dir) {
                if is_dir {
                    if recursive {
                        self.remove_leftovers(&rel.join(&name), true);
                    }
                } else if is_temporary(&name) {
                    let _ =
                        rustix::fs::unlinkat(&dir, name.as_os_str(), rustix::fs::AtFlags::empty());
                }
            }
        }
        #[cfg(not(unix))]
        {
            let Ok(entries) = std::fs::read_dir(self.shown(rel)) else {
                return;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let name = entry.file_name();
                if kind.is_dir() {
                    if recursive {
                        self.remove_leftovers(&rel.join(&name), true);
                    }
                } else if kind.is_file() && is_temporary(&name) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }

    /// Opens the regular file at `rel` for reading, or says why not.
    fn open_regular(&self, rel: &Path) -> std::io::Result<File> {
        #[cfg(unix)]
        {
            let (parent, name) = split(rel)?;
            let dir = self
                .dir(parent, false)
                .map_err(|e| std::io::Error::other(e.0))?;
            let file = unix::open_regular(&dir, &name);
            if let Err(error) = &file
                && error.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(path = %self.shown(rel).display(), %error, "not kept: fetched again");
            }
            file
        }
        #[cfg(not(unix))]
        {
            let file = File::open(self.shown(rel))?;
            if !file.metadata()?.is_file() {
                return Err(std::io::Error::other("not a regular file"));
            }
            Ok(file)
        }
    }

    /// A temporary file in `rel`'s directory (created if missing), owner-only, removed when
    /// dropped before it is placed (an error, or Ctrl-C dropping the export's futures).
    fn temporary(&self, rel: &Path) -> Result<Temporary, StoreError> {
        let shown = self.shown(rel);
        let (parent, name) = split(rel).map_err(|e| StoreError::io(&shown, e))?;
        #[cfg(unix)]
        {
            let dir = self.dir(parent, true)?;
            let (file, temporary_name) =
                unix::create_temporary(&dir).map_err(|e| StoreError::io(&shown, e))?;
            Ok(Temporary {
                file,
                dir,
                name: temporary_name,
                target: name,
                shown,
                placed: false,
            })
        }
        #[cfg(not(unix))]
        {
            let dir = self.shown(parent);
            create_private_dir_all(&dir)?;
            let temporary = tempfile::Builder::new()
                .prefix(TEMP_PREFIX)
                .suffix(TEMP_SUFFIX)
                .tempfile_in(&dir)
                .map_err(|e| StoreError::io(&shown, e))?;
            let file = temporary
                .as_file()
                .try_clone()
                .map_err(|e| StoreError::io(&shown, e))?;
            Ok(Temporary {
                file,
                temporary: Some(temporary),
                target: dir.join(name),
                shown,
            })
        }
    }

    /// Directory `rel` of the tree, opened component by component from the root without
    /// following a link, each one owned by this user and not writable by others; `create`
    /// makes the missing ones (owner-only).
    #[cfg(unix)]
    fn dir(&self, rel: &Path, create: bool) -> Result<rustix::fd::OwnedFd, StoreError> {
        let mut current = unix::open_dir(&*self.fd, Path::new("."), false)
            .map_err(|e| StoreError::io(&self.root, e))?;
        let mut walked = PathBuf::new();
        for component in rel.components() {
            let Component::Normal(name) = component else {
                return Err(StoreError(format!(
                    "{}: not a plain path inside the export",
                    self.shown(rel).display()
                )));
            };
            walked.push(name);
            let shown = self.shown(&walked);
            let next = unix::open_dir(&current, Path::new(name), create).map_err(|e| {
                if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR {
                    StoreError(format!(
                        "{}: a link or not a directory; the export writes only inside its own \
                         tree, never through links: remove it, or export into another directory",
                        shown.display()
                    ))
                } else {
                    StoreError::io(&shown, e)
                }
            })?;
            unix::check_private(&next, &shown)?;
            current = next;
        }
        Ok(current)
    }
}

/// The most bytes an answer written by [`Tree::write_listing`] may have, what the bound is
/// called and what to do when an answer is larger.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub bytes: u64,
    pub name: &'static str,
    pub advice: &'static str,
}

/// A file being written, not yet under its name.
struct Temporary {
    file: File,
    #[cfg(unix)]
    dir: rustix::fd::OwnedFd,
    #[cfg(unix)]
    name: OsString,
    #[cfg(unix)]
    placed: bool,
    #[cfg(not(unix))]
    temporary: Option<tempfile::NamedTempFile>,
    #[cfg(unix)]
    target: OsString,
    #[cfg(not(unix))]
    target: PathBuf,
    shown: PathBuf,
}

impl Temporary {
    /// Syncs it to disk and renames it over its target, then syncs the directory so that the
    /// new name survives a crash. Blocking.
    fn place(mut self) -> Result<(), StoreError> {
        self.file
            .sync_all()
            .map_err(|e| StoreError::io(&self.shown, e))?;
        #[cfg(unix)]
        {
            // Renaming replaces whatever has the name (a link included) without following it.
            rustix::fs::renameat(
                &self.dir,
                self.name.as_os_str(),
                &self.dir,
                self.target.as_os_str(),
            )
            .map_err(|e| StoreError::io(&self.shown, e))?;
            self.placed = true;
            let _ = rustix::fs::fsync(&self.dir);
            Ok(())
        }
        #[cfg(not(unix))]
        {
            let temporary = self.temporary.take().expect("placed once");
            temporary
                .persist(&self.target)
                .map_err(|e| StoreError::io(&self.shown, e.error))?;
            Ok(())
        }
    }
}

#[cfg(unix)]
impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.placed {
            let _ = rustix::fs::unlinkat(
                &self.dir,
                self.name.as_os_str(),
                rustix::fs::AtFlags::empty(),
            );
        }
    }
}

async fn place_off_thread(temporary: Temporary) -> Result<(), StoreError> {
    let shown = temporary.shown.clone();
    tokio::task::spawn_blocking(move || temporary.place())
        .await
        .map_err(|e| StoreError::io(&shown, e))?
}

/// `rel`'s directory and file name.
fn split(rel: &Path) -> std::io::Result<(&Path, OsString)> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name.to_os_string())),
        _ => Err(std::io::Error::other("not a file path")),
    }
}

fn is_temporary(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)
}

/// Why [`Tree::write_stream`] or [`Tree::write_listing`] failed: the download, the local
/// file, or what the service sent (a listing too large or unreadable: this file's failure,
/// not the export's).
#[derive(Debug)]
pub enum WriteStreamError {
    Client(creditdata_client::Error),
    Store(StoreError),
    Refused(String),
}

/// A listing [`Tree::write_listing`] wrote (or found unchanged), and what `read` made of it.
pub struct WrittenListing<T> {
    pub digested: Digested,
    /// The file already held these bytes and was left as it was.
    pub unchanged: bool,
    /// The last run wrote these bytes, but the file no longer held them: written again.
    pub repaired: bool,
    pub read: T,
}

/// A reader that hashes what passes through it.
struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> Hashing<R> {
    fn new(inner: R) -> Hashing<R> {
        Hashing {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    fn finish(self) -> Digested {
        Digested {
            bytes: self.bytes,
            sha256: hex(&self.hasher.finalize()),
        }
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.hasher.update(&buffer[..read]);
        self.bytes += read as u64;
        Ok(read)
    }
}

/// The Unix system calls behind [`Tree`], each relative to an opened directory.
#[cfg(unix)]
mod unix {
    use std::ffi::{OsStr, OsString};
    use std::fs::File;
    use std::path::Path;

    use rustix::fd::{AsFd, OwnedFd};
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    use super::{StoreError, TEMP_PREFIX, TEMP_SUFFIX};

    /// Opens the directory `name` in `dir` without following a link; `create`: makes it
    /// (owner-only) when missing.
    pub fn open_dir(dir: impl AsFd, name: &Path, create: bool) -> Result<OwnedFd, Errno> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&dir, name, flags, Mode::empty()) {
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, name, Mode::RWXU) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(error) => return Err(error),
                }
                rustix::fs::openat(&dir, name, flags, Mode::empty())
            }
            other => other,
        }
    }

    /// Refuses a directory another user owns or others can write: they could swap what it
    /// holds under the export.
    pub fn check_private(dir: impl AsFd, shown: &Path) -> Result<(), StoreError> {
        let stat = rustix::fs::fstat(dir).map_err(|e| StoreError::io(shown, e))?;
        let ours = stat.st_uid == rustix::process::geteuid().as_raw();
        let shared = stat.st_mode & 0o022 != 0;
        if ours && !shared {
            return Ok(());
        }
        Err(StoreError(format!(
            "{}: {}; the export writes only into directories its user alone can write: {}",
            shown.display(),
            if ours {
                "others can write into it"
            } else {
                "owned by another user"
            },
            if ours {
                "remove their write permission (chmod go-w), or export into another directory"
            } else {
                "export into a directory of your own"
            }
        )))
    }

    /// Opens the regular file `name` in `dir` for reading: never through a link, never
    /// blocking (a FIFO is refused, not read).
    pub fn open_regular(dir: impl AsFd, name: &OsStr) -> std::io::Result<File> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).map_err(|e| match e {
            Errno::LOOP => std::io::Error::other("a link, not a file"),
            other => std::io::Error::from(other),
        })?;
        let stat = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(std::io::Error::other(
                "not a regular file (a FIFO, a device or a directory)",
            ));
        }
        Ok(File::from(fd))
    }

    /// Creates a new temporary file in `dir`, owner-only: its handle and name. Readable too: a
    /// listing is read back before it takes its name.
    pub fn create_temporary(dir: impl AsFd) -> std::io::Result<(File, OsString)> {
        let flags =
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        loop {
            let name = format!(
                "{TEMP_PREFIX}{}{TEMP_SUFFIX}",
                uuid::Uuid::new_v4().simple()
            );
            match rustix::fs::openat(&dir, name.as_str(), flags, Mode::RUSR | Mode::WUSR) {
                Ok(fd) => return Ok((File::from(fd), OsString::from(name))),
                Err(Errno::EXIST) => continue,
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// The entries of `dir` (but `.` and `..`): each name, and whether it is a directory
    /// (a link never is).
    pub fn entries(dir: impl AsFd) -> Vec<(OsString, bool)> {
        let Ok(listing) = rustix::fs::Dir::read_from(&dir) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in listing.flatten() {
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsString::from(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name));
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                        .map(|stat| FileType::from_raw_mode(stat.st_mode))
                        .unwrap_or(FileType::Unknown)
                }
                kind => kind,
            };
            found.push((name, kind == FileType::Directory));
        }
        found
    }
}

/// Size and SHA-256 of `content`.
pub fn digest_of(content: &[u8]) -> Digested {
    Digested {
        bytes: content.len() as u64,
        sha256: hex(&Sha256::digest(content)),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut text, b| {
        let _ = write!(text, "{b:02x}");
        text
    })
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
        let tree = Tree::open(dir.path()).unwrap();
        let path = dir.path().join("f");
        let rel = Path::new("f");
        std::fs::write(&path, b"hello").unwrap();
        let expected = digest_of(b"hello");
        let first_byte = |reader: &mut dyn Read| {
            let mut byte = [0u8; 1];
            reader.read_exact(&mut byte).map(|()| byte[0]).ok()
        };
        assert!(tree.verify(rel, &expected));
        // What the reader leaves is hashed too.
        assert_eq!(
            tree.verify_read(rel, &expected, first_byte),
            Some(Some(b'h'))
        );
        std::fs::write(&path, b"hell").unwrap();
        assert!(!tree.verify(rel, &expected));
        std::fs::write(&path, b"jello").unwrap();
        assert!(!tree.verify(rel, &expected));
        assert_eq!(tree.verify_read(rel, &expected, first_byte), None);
        std::fs::remove_file(&path).unwrap();
        assert!(!tree.verify(rel, &expected));
    }
}
