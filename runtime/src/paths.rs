//! How a path the model wrote becomes the path a tool reaches: one rule for
//! the file tools (`hermes-tools`), the protected-path guard
//! (`hermes-procs`) and the batch planner ([`crate::batch`]), so that what
//! one of them takes for a file is what the others take for it.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// `path` with a leading `~` (alone or before `/`) replaced by the user's
/// home (`$HOME`). Other paths, and all paths when `HOME` is unset, are
/// returned as they are.
pub fn expand_home(path: &str) -> Cow<'_, Path> {
    let rest = match path.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => return Cow::Borrowed(Path::new(path)),
    };
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Cow::Owned(PathBuf::from(home).join(rest)),
        None => Cow::Borrowed(Path::new(path)),
    }
}

/// The real path a write to `full` reaches: resolved component by
/// component as the kernel would, symlinks followed (a dangling one is the
/// path itself) and `..` applied after them, with the folders that do not
/// exist yet taken as the plain folders a write creates.
pub fn real_write_path(full: &Path) -> std::io::Result<PathBuf> {
    let full = std::path::absolute(full)?;
    let mut real = PathBuf::new();
    for part in full.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => real.push(part.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                real.pop();
            }
            Component::Normal(name) => {
                real.push(name);
                let is_link =
                    std::fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    if let Ok(target) = std::fs::canonicalize(&real) {
                        real = target;
                    }
                }
            }
        }
    }
    Ok(real)
}

/// The real path `raw` (as the model wrote it) reaches from `cwd`: `~`
/// expanded ([`expand_home`]), then [`real_write_path`]; `None` when it
/// cannot be made absolute.
pub fn real_path_from(cwd: &Path, raw: &str) -> Option<PathBuf> {
    real_write_path(&cwd.join(expand_home(raw))).ok()
}
