//! The small primitives every process module uses: a lock that survives
//! a panic, shell quoting, waiting on descriptors, and the process's
//! private folder with the commands' own folders in it. A leaf: it names
//! nothing else of the crate.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::Duration;

use crate::scan;

/// A poisoned lock only means another thread panicked mid-update; the data
/// (output bytes, an exit code) is still usable.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `'text'` for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The process's private folder for the files its shells read and write
/// (terminal session state, resident shells' scripts): named once per
/// process (its pid and random letters, under `/dev/shm` where that is a
/// writable memory file system, else under the system's temporary folder: these
/// small files are written on every command, and a disk file system
/// makes that cost more than the command), created with mode 0700 when
/// missing (again after a shutdown removed it); `None` when it cannot be
/// made, or what is there is not a private folder of ours.
pub fn private_dir() -> Option<&'static Path> {
    static DIR: LazyLock<Option<PathBuf>> = LazyLock::new(|| {
        use std::os::unix::fs::PermissionsExt;
        let prefix = format!("{PRIVATE_PREFIX}{}-", std::process::id());
        let make = |parent: &Path| {
            remove_stale_private_dirs(parent);
            tempfile::Builder::new()
                .prefix(&prefix)
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir_in(parent)
                .ok()
        };
        let dir = make(Path::new("/dev/shm")).or_else(|| make(&std::env::temp_dir()))?;
        Some(dir.keep())
    });
    let dir = DIR.as_deref()?;
    ensure_private_dir(dir).then_some(dir)
}

/// How private folders are named: this, the pid of their process, `-`,
/// random letters.
const PRIVATE_PREFIX: &str = "hermes-terminal-";

/// Removes the private folders under `parent` that processes of our user
/// left when they ended without a shutdown (a crash, a test binary): on
/// `/dev/shm` they would hold memory until the machine restarts.
fn remove_stale_private_dirs(parent: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let me = nix::unistd::getuid().as_raw();
    for entry in entries.flatten() {
        if !scan::left_by_gone_process(&entry.file_name(), PRIVATE_PREFIX) {
            continue;
        }
        let ours =
            std::fs::symlink_metadata(entry.path()).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if ours {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn ensure_private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return false;
        }
    }
    // Not a symlink, ours, and private.
    std::fs::symlink_metadata(dir).is_ok_and(|m| {
        m.is_dir()
            && m.uid() == nix::unistd::getuid().as_raw()
            && m.permissions().mode() & 0o077 == 0
    })
}

/// Which of `fds` are readable (or closed), after waiting up to `limit`
/// for any to be.
pub(crate) fn poll_readable<const N: usize>(
    fds: &[std::os::fd::BorrowedFd<'_>; N],
    limit: Duration,
) -> [bool; N] {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = Timespec {
        tv_sec: i64::try_from(limit.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(limit.subsec_nanos()),
    };
    let mut polled: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::new(fd, PollFlags::IN))
        .collect();
    match poll(&mut polled, Some(&timeout)) {
        Ok(_) => std::array::from_fn(|i| !polled[i].revents().is_empty()),
        // Interrupted, or out of memory for the poll: look again shortly
        // (never a busy loop).
        Err(_) => {
            std::thread::sleep(limit.min(Duration::from_millis(10)));
            [false; N]
        }
    }
}

/// A command's own folder inside [`private_dir`] (its session state, the
/// one place there a sandboxed command may write); removed when dropped.
#[derive(Debug)]
pub(crate) struct OwnDir(pub(crate) PathBuf);

impl OwnDir {
    /// A new folder named `{prefix}{n}` (mode 0700, never one that exists).
    pub(crate) fn create(prefix: &str) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = private_dir()
            .ok_or_else(|| std::io::Error::other("no private folder for the command's files"))?;
        let path = dir.join(format!("{prefix}{}", N.fetch_add(1, Ordering::Relaxed)));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(OwnDir(path))
    }
}

impl Drop for OwnDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
