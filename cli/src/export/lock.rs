//! One export per directory: an advisory lock that the operating system holds on the export
//! directory itself for the export's process, and releases when the process ends, however it
//! ends.
//!
//! The lock is on the directory, not on a file in it: a file can be removed (by a cleanup, or
//! by an export that no longer held it) while its lock is held, and a second export would then
//! lock a new file beside it. The lock file only names the process that took the lock last,
//! for the message; it is never removed and never decides anything, so an empty or old one
//! cannot make two exports share a directory, nor block one.
//!
//! Not on Unix, the lock file is the lock (created exclusively, removed by the export that
//! created it): a crash leaves it, and the message then says to remove it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file naming the lock's holder, in the export directory.
pub const LOCK_FILE: &str = ".creditdata-export.lock";

/// The export's claim on its directory, held while this value lives (the process's lifetime).
pub struct DirectoryLock {
    _held: File,
    #[cfg(not(unix))]
    created: PathBuf,
}

impl DirectoryLock {
    /// Takes the lock of `root`, or says which process holds it.
    #[cfg(unix)]
    pub fn take(root: &Path) -> Result<DirectoryLock, String> {
        use rustix::fs::{FlockOperation, flock};
        let directory = File::open(root).map_err(|e| format!("{}: {e}", root.display()))?;
        match flock(&directory, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(error) if error == rustix::io::Errno::WOULDBLOCK => {
                return Err(format!(
                    "{}: another export ({}) is writing into this directory; wait for it to \
                     end, or export into another directory",
                    root.display(),
                    holder(root)
                ));
            }
            Err(error) => {
                return Err(format!(
                    "{}: cannot lock the directory for this export: {error}",
                    root.display()
                ));
            }
        }
        // Who holds it, for the message above; a failure to say so changes nothing.
        let _ = write_holder(&root.join(LOCK_FILE), false);
        Ok(DirectoryLock { _held: directory })
    }

    /// Takes the lock of `root`, or says which process holds it.
    #[cfg(not(unix))]
    pub fn take(root: &Path) -> Result<DirectoryLock, String> {
        let path = root.join(LOCK_FILE);
        match write_holder(&path, true) {
            Ok(file) => Ok(DirectoryLock {
                _held: file,
                created: path,
            }),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(format!(
                "{}: another export ({}) is writing into this directory; wait for it to end, \
                 or export into another directory (if no export runs, remove {})",
                root.display(),
                holder(root),
                path.display()
            )),
            Err(error) => Err(format!("{}: {error}", path.display())),
        }
    }
}

/// Not on Unix, the file is the lock and this export created it: it removes it.
#[cfg(not(unix))]
impl Drop for DirectoryLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.created);
    }
}

/// Writes this process's id into the lock file, owner-only and never through a link planted
/// at its name; `exclusive`: only if it does not exist yet.
fn write_holder(path: &PathBuf, exclusive: bool) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if exclusive {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let mut file = options.open(path)?;
    writeln!(file, "{}", std::process::id())?;
    Ok(file)
}

/// The lock's holder as its lock file names it, for the message.
fn holder(root: &Path) -> String {
    let text = std::fs::read_to_string(root.join(LOCK_FILE)).unwrap_or_default();
    match text.trim().parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => "another process".to_string(),
    }
}
