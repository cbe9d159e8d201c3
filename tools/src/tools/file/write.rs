//! `write_file`: replaces a file whole, atomically; and the atomic write
//! that `patch` uses too.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::Serialize;

use super::common::{display, resolve, MAX_EDIT_FILE_BYTES};
use super::error::FileError;
use super::fsguard::{real_write_path, special_kind, special_location};

/// The result of writing a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteFileOutput {
    /// The path written, resolved against the working directory.
    pub resolved_path: String,
    /// Bytes written (UTF-8 length of the content).
    pub bytes_written: u64,
    /// True when missing parent directories were created.
    pub dirs_created: bool,
    /// True when the file did not exist before.
    pub created: bool,
}

/// Writes `bytes` to `target` by way of a temporary file in the same folder
/// and a rename, so readers see either the old or the new file whole.
/// A new file gets the usual permissions (0666 less the umask), an existing
/// file keeps its own.
pub(super) fn atomic_write(target: &Path, bytes: &[u8], given: &str) -> Result<(), FileError> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let old_perms = fs::metadata(target).ok().map(|m| m.permissions());
    let failed = |e: &io::Error| FileError::from_io(e, given, "write");
    // Dropped on an error, the temporary file is removed.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(
            old_perms
                .clone()
                .unwrap_or_else(|| fs::Permissions::from_mode(0o666)),
        )
        .tempfile_in(dir)
        .map_err(|e| failed(&e))?;
    tmp.write_all(bytes).map_err(|e| failed(&e))?;
    tmp.as_file().sync_all().map_err(|e| failed(&e))?;
    if let Some(perms) = old_perms {
        // The umask applied when the temporary file was created.
        fs::set_permissions(tmp.path(), perms).map_err(|e| failed(&e))?;
    }
    tmp.persist(target).map_err(|e| failed(&e.error))?;
    Ok(())
}

/// Writes `content` to a file, replacing it whole, creating missing parent
/// directories. The write is atomic (temporary file and rename in the same
/// folder); writing through a symlink writes its target.
///
/// Refused, with nothing written: content over [`MAX_EDIT_FILE_BYTES`], and
/// a path whose real location is special (under [`SPECIAL_ROOTS`] or on a
/// kernel file system, or an existing device, FIFO or socket, which the
/// rename would otherwise replace).
pub fn write_file(base: &Path, path: &str, content: &str) -> Result<WriteFileOutput, FileError> {
    let full = resolve(base, path)?;
    if content.len() as u64 > MAX_EDIT_FILE_BYTES {
        return Err(FileError::ContentTooLarge {
            path: path.to_owned(),
            size: content.len() as u64,
        });
    }
    let special = |reason: String| FileError::Special {
        path: path.to_owned(),
        action: "write",
        reason,
    };
    let target = real_write_path(&full).map_err(|e| FileError::from_io(&e, path, "write"))?;
    if let Some(reason) = special_location(&target) {
        return Err(special(reason));
    }
    let existing = fs::symlink_metadata(&target).ok();
    if let Some(meta) = &existing {
        if meta.is_dir() {
            return Err(FileError::IsDirectory {
                path: path.to_owned(),
            });
        }
        if let Some(kind) = special_kind(meta) {
            return Err(special(format!("it is {kind}, not a regular file")));
        }
    }
    let mut dirs_created = false;
    if let Some(parent) = target.parent() {
        if !parent.as_os_str().is_empty() && !parent.exists() {
            fs::create_dir_all(parent)
                .map_err(|e| FileError::from_io(&e, path, "create the parent directories of"))?;
            dirs_created = true;
        }
    }
    atomic_write(&target, content.as_bytes(), path)?;
    Ok(WriteFileOutput {
        resolved_path: display(&full),
        bytes_written: content.len() as u64,
        dirs_created,
        created: existing.is_none(),
    })
}
