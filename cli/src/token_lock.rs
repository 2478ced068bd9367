//! The OS lock a process holds while it refreshes a profile's sign-in, so that processes
//! sharing it refresh one at a time.
//!
//! Refresh tokens rotate: four `creditdata auth token` started together near expiry would
//! present the same refresh token, and the provider, seeing the rotated one again, ends the
//! sign-in for all of them. An advisory `flock` on `tokens/PROFILE.lock` (for the keyring
//! store as for the file store) is held from loading the sign-in through the refresh to
//! saving it; the client loads again once it holds it and uses what another process saved.
//! The kernel drops the lock with the process, so a crash leaves nothing stale behind.

use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why the lock could not be taken: what happened and to which file (no secret in it). The
/// token store turns it into its own error.
#[derive(Debug)]
pub struct LockError(pub String);

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LockError {}

/// How long to wait for another process's refresh: a refresh is one request with a timeout
/// well under this.
const WAIT: Duration = Duration::from_secs(60);

/// The lock, held until dropped.
pub struct Held {
    #[cfg(unix)]
    _file: rustix::fd::OwnedFd,
}

/// Takes the lock at `path` (created `0600`, never through a link), waiting up to [`WAIT`].
#[cfg(unix)]
pub fn acquire(path: &Path) -> Result<Held, LockError> {
    use rustix::fs::{FlockOperation, Mode, OFlags, flock, open};
    let file = open(
        path,
        OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| {
        LockError(format!(
            "cannot open the sign-in's lock file {}: {e}",
            path.display()
        ))
    })?;
    let started = Instant::now();
    loop {
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Held { _file: file }),
            Err(rustix::io::Errno::WOULDBLOCK) | Err(rustix::io::Errno::INTR)
                if started.elapsed() < WAIT =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(LockError(format!(
                    "another creditdata has been renewing this sign-in for over {} s (lock {}); try again",
                    WAIT.as_secs(),
                    path.display()
                )));
            }
            Err(e) => {
                return Err(LockError(format!(
                    "cannot lock the sign-in ({}): {e}",
                    path.display()
                )));
            }
        }
    }
}

/// No shared-lock primitive is used off Unix: processes there are not kept apart.
#[cfg(not(unix))]
pub fn acquire(_: &Path) -> Result<Held, LockError> {
    Ok(Held {})
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_lock_excludes_another_holder_until_dropped() {
        use rustix::fs::{FlockOperation, Mode, OFlags, flock, open};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.lock");
        let first = acquire(&path).unwrap();
        // flock belongs to the open file: a second open, even in this process, is another
        // holder, as another process would be.
        let other = open(&path, OFlags::RDWR, Mode::empty()).unwrap();
        assert_eq!(
            flock(&other, FlockOperation::NonBlockingLockExclusive),
            Err(rustix::io::Errno::WOULDBLOCK)
        );
        drop(first);
        flock(&other, FlockOperation::NonBlockingLockExclusive).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_place_of_the_lock_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "").unwrap();
        let path = dir.path().join("p.lock");
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(acquire(&path).is_err());
    }
}
