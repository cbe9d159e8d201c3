//! Helpers shared by the file tools' unit tests.

use std::fs;
use std::path::Path;

use tempfile::TempDir;

use super::error::FileError;
use super::search::SearchOutput;

pub(super) fn tmp() -> TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("cannot create a temp dir: {e}"),
    }
}

pub(super) fn put(dir: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, bytes).unwrap();
}

pub(super) fn numbered(range: std::ops::RangeInclusive<u64>) -> String {
    range
        .map(|i| format!("{i}|l{i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn many_lines(n: u64) -> String {
    (1..=n).map(|i| format!("l{i}\n")).collect()
}

pub(super) fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

pub(super) fn search_tree() -> TempDir {
    let dir = tmp();
    let d = dir.path();
    // A git repository: its `.gitignore` is a rule.
    fs::create_dir(d.join(".git")).unwrap();
    put(d, ".gitignore", "ignored/\n*.log\n");
    put(d, ".ignore", "secret.txt\n");
    put(d, "src/a.rs", "fn main() {}\nlet foo = 1;\n");
    put(d, "ignored/b.rs", "foo here\n");
    put(d, "x.log", "foo log\n");
    put(d, "secret.txt", "foo secret\n");
    put(d, ".hidden/h.txt", "foo hidden\n");
    put(d, "c.txt", "foo\nfoo2\nfoo3\n");
    put(d, "bin.dat", b"foo\x00bin\n");
    dir
}

pub(super) fn paths_and_lines(out: &SearchOutput) -> Vec<(String, u64)> {
    out.matches
        .iter()
        .map(|m| (m.path.clone(), m.line))
        .collect()
}

/// A file of `len` bytes: `head`, then a hole (NUL bytes that take no disk).
pub(super) fn sparse(dir: &Path, rel: &str, head: &[u8], len: u64) {
    let path = dir.join(rel);
    fs::write(&path, head).unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

pub(super) fn fifo(dir: &Path, rel: &str) -> std::path::PathBuf {
    let path = dir.join(rel);
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    path
}

pub(super) fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fs::symlink_metadata(path).unwrap().file_type().is_fifo()
}

/// Runs `f` on a thread and fails the test if it has not answered within
/// 20 s; the FIFO is then opened for writing, which frees a reader blocked
/// in `open`, so the test ends either way.
pub(super) fn answers_in_time<T: Send + 'static>(
    fifo: &Path,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    use std::os::unix::fs::OpenOptionsExt;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(20)) {
        Ok(v) => v,
        Err(_) => {
            let _ = fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                .open(fifo);
            panic!("still blocked on the FIFO after 20 s");
        }
    }
}

pub(super) fn special_err(err: &FileError, action: &str) {
    let FileError::Special { action: a, .. } = err else {
        panic!("expected a special-file refusal, got {err:?}");
    };
    assert_eq!(*a, action, "{err}");
}

/// `../` enough times to climb from `dir` to `/`.
pub(super) fn up_to_root(dir: &Path) -> String {
    "../".repeat(fs::canonicalize(dir).unwrap().components().count())
}
