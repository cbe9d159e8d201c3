//! The ignore files `search_files`'s walk reads whole, kept within a
//! budget ([`MAX_IGNORE_BYTES`]) and refused when they are not regular files.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::fsguard::{open_regular, special_kind, special_location};

/// The most bytes of ignore files (`.gitignore`, `.ignore`,
/// `.git/info/exclude`) `search_files` lets its walk hold at once: those of
/// a folder and of every folder above it, summed. The walk reads them whole
/// and compiles each line into a matcher (about half a MiB of memory per KiB
/// of wildcard patterns), so a folder over this budget, or with an ignore
/// file that is not a regular file, is not entered; the search is refused
/// when that folder is the search path or above it.
pub const MAX_IGNORE_BYTES: u64 = 128 * 1024;

/// The size of a file the search walk would read whole (an ignore file,
/// or a file naming a git folder), or why it is not safe to read. A
/// missing one (or a dangling symlink) is not read: size 0.
pub(super) fn walk_read_size(path: &Path) -> Result<u64, String> {
    let Ok(meta) = fs::metadata(path) else {
        return Ok(0);
    };
    let shown = path.display();
    if let Some(reason) = fs::canonicalize(path)
        .ok()
        .and_then(|real| special_location(&real))
    {
        return Err(format!("{shown}: {reason}"));
    }
    if !meta.is_file() {
        let kind = special_kind(&meta).unwrap_or("a special file");
        return Err(format!("{shown} is {kind}, not a regular file"));
    }
    Ok(meta.len())
}

/// The first line of a small regular file, read non-blocking and capped.
pub(super) fn first_line(path: &Path) -> Option<String> {
    let (file, meta) = open_regular(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(MAX_IGNORE_BYTES).read_to_end(&mut text).ok()?;
    let text = String::from_utf8_lossy(&text);
    text.lines().next().map(str::to_owned)
}

/// The bytes of the files the search walk reads whole in folder `dir`, or
/// why one of them is not safe to read: `.gitignore`, `.ignore`, and
/// `info/exclude` of its git folder (for a worktree, found through the
/// `.git` file and the git folder's `commondir`, both counted and read here
/// with a cap). The walk follows symlinks and blocks on FIFOs there.
pub(super) fn ignore_bytes(dir: &Path) -> Result<u64, String> {
    let mut files = vec![dir.join(".gitignore"), dir.join(".ignore")];
    let git = dir.join(".git");
    match fs::metadata(&git) {
        Ok(meta) if meta.is_dir() => files.push(git.join("info/exclude")),
        Ok(meta) if meta.is_file() => {
            let gitdir = (walk_read_size(&git)? <= MAX_IGNORE_BYTES)
                .then(|| first_line(&git))
                .flatten()
                .and_then(|line| line.strip_prefix("gitdir: ").map(PathBuf::from));
            if let Some(gitdir) = gitdir {
                let commondir = gitdir.join("commondir");
                if walk_read_size(&commondir)? <= MAX_IGNORE_BYTES {
                    if let Some(common) = first_line(&commondir) {
                        let common = if common.starts_with('.') {
                            gitdir.join(common)
                        } else {
                            PathBuf::from(common)
                        };
                        files.push(common.join("info/exclude"));
                    }
                }
                files.push(commondir);
            }
            files.push(git);
        }
        // Missing, or special: the walk only opens a `.git` that is a file.
        _ => {}
    }
    files.iter().try_fold(0u64, |sum, file| {
        Ok(sum.saturating_add(walk_read_size(file)?))
    })
}

/// Keeps the search walk's ignore files within [`MAX_IGNORE_BYTES`]. The
/// walk goes depth first, so the folders whose ignore files it holds are
/// those on the way down to the folder it is entering: a stack, as deep as
/// the tree, of those with ignore files and the bytes held down to each.
pub(super) struct IgnoreBudget {
    held: Vec<(PathBuf, u64)>,
    /// Folders not entered, and the reason for the first.
    pub(super) skipped: u64,
    pub(super) first_skipped: Option<String>,
}

impl IgnoreBudget {
    /// Starts with the bytes held for the search path and the folders
    /// above it.
    pub(super) fn new(root: PathBuf, held: u64) -> Self {
        Self {
            held: vec![(root, held)],
            skipped: 0,
            first_skipped: None,
        }
    }

    /// Whether the walk may enter folder `dir`.
    pub(super) fn admit(&mut self, dir: &Path) -> bool {
        while self.held.len() > 1 && !self.held.last().is_some_and(|(d, _)| dir.starts_with(d)) {
            self.held.pop();
        }
        let own = match ignore_bytes(dir) {
            Ok(0) => return true,
            Ok(own) => own,
            Err(problem) => return self.skip(problem),
        };
        let above = self.held.last().map_or(0, |&(_, bytes)| bytes);
        let total = above.saturating_add(own);
        if total > MAX_IGNORE_BYTES {
            return self.skip(over_ignore_budget(dir, total));
        }
        self.held.push((dir.to_path_buf(), total));
        true
    }

    fn skip(&mut self, reason: String) -> bool {
        self.skipped += 1;
        self.first_skipped.get_or_insert(reason);
        false
    }
}

pub(super) fn over_ignore_budget(dir: &Path, total: u64) -> String {
    format!(
        "the ignore files of {} and the folders above it hold {total} bytes, \
         over the {MAX_IGNORE_BYTES}-byte budget",
        dir.display()
    )
}
