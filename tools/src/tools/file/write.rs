//! `write_file`: replaces a file whole, atomically; and the atomic write
//! that `patch` uses too.

use std::borrow::Cow;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::Serialize;

use super::common::{display, resolve};
use super::error::{FileError, MAX_EDIT_FILE_BYTES};
use super::fsguard::{real_write_path, special_kind, special_location};

/// The result of writing a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct WriteFileOutput {
    /// The path written, resolved against the working directory.
    pub resolved_path: String,
    /// Bytes written (UTF-8 length of the content).
    pub bytes_written: u64,
    /// True when missing parent directories were created.
    pub dirs_created: bool,
    /// True when the file did not exist before.
    pub created: bool,
    /// Set when the file changed since this session last read it.
    #[serde(rename = "_warning", skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
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
///
/// Content for a `.json`, `.yaml`/`.yml` or `.toml` file must parse (see
/// [`check_syntax`]). An existing file keeps its conventions: CRLF line
/// endings when its start has them, and its UTF-8 byte order mark.
pub fn write_file(base: &Path, path: &str, content: &str) -> Result<WriteFileOutput, FileError> {
    let full = resolve(base, path)?;
    write_text(&full, path, content)
}

/// [`write_file`] on a path already resolved (and guarded): what `patch`
/// writes through too, so its results are checked and kept the same way.
pub(super) fn write_text(
    full: &Path,
    path: &str,
    content: &str,
) -> Result<WriteFileOutput, FileError> {
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
    check_syntax(path, content)?;
    let target = real_write_path(full).map_err(|e| FileError::from_io(&e, path, "write"))?;
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
    let content = match existing.is_some() {
        true => keep_conventions(&target, content),
        false => content.into(),
    };
    atomic_write(&target, content.as_bytes(), path)?;
    Ok(WriteFileOutput {
        resolved_path: display(full),
        bytes_written: content.len() as u64,
        dirs_created,
        created: existing.is_none(),
        warning: None,
    })
}

/// The UTF-8 byte order mark.
pub(super) const BOM: &str = "\u{feff}";
/// Characters of a file's start that decide its line ending.
const ENDING_SAMPLE_CHARS: usize = 4096;

/// The line ending a text's start uses: `\r\n` if it has any there, else
/// `\n` if it has one, else none (one line, or empty).
pub(super) fn line_ending(text: &str) -> Option<&'static str> {
    let end = text
        .char_indices()
        .nth(ENDING_SAMPLE_CHARS)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..end];
    if head.contains("\r\n") {
        Some("\r\n")
    } else if head.contains('\n') {
        Some("\n")
    } else {
        None
    }
}

/// `text` with every line ending (`\r\n`, `\r`, `\n`) made `ending`.
pub(super) fn with_endings<'t>(text: &'t str, ending: &str) -> Cow<'t, str> {
    let uniform = match ending {
        "\n" => !text.contains('\r'),
        _ => {
            let crlf = text.matches("\r\n").count();
            crlf == text.matches('\n').count() && crlf == text.matches('\r').count()
        }
    };
    if uniform {
        return text.into();
    }
    let lf = text.replace("\r\n", "\n").replace('\r', "\n");
    match ending {
        "\n" => lf.into(),
        _ => lf.replace('\n', ending).into(),
    }
}

/// `content` made to follow the file `target` already is: CRLF endings if
/// its start uses them, its byte order mark if it has one (and `content`
/// does not).
fn keep_conventions<'c>(target: &Path, content: &'c str) -> Cow<'c, str> {
    let mut head = Vec::with_capacity(ENDING_SAMPLE_CHARS);
    if let Ok(file) = fs::File::open(target) {
        let _ = io::Read::read_to_end(
            &mut io::Read::take(file, ENDING_SAMPLE_CHARS as u64),
            &mut head,
        );
    }
    let head = String::from_utf8_lossy(&head);
    let mut out: Cow<'c, str> = content.into();
    if line_ending(&head) == Some("\r\n") {
        out = match with_endings(content, "\r\n") {
            Cow::Borrowed(_) => out,
            Cow::Owned(s) => s.into(),
        };
    }
    if head.starts_with(BOM) && !out.starts_with(BOM) {
        out = format!("{BOM}{out}").into();
    }
    out
}

/// Refuses content that does not parse as the format its extension names
/// (`.json`; `.yaml`, `.yml`: syntax only, so several documents and
/// custom tags are fine; `.toml`), with the parser's line and column.
pub(super) fn check_syntax(path: &str, content: &str) -> Result<(), FileError> {
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let refused = |format, message: String, line: usize, column: usize| FileError::InvalidSyntax {
        path: path.to_owned(),
        format,
        message,
        line: line as u64,
        column: column as u64,
    };
    match ext.as_deref() {
        Some("json") => match serde_json::from_str::<serde::de::IgnoredAny>(content) {
            Ok(_) => Ok(()),
            Err(e) => {
                let text = e.to_string();
                let message = text.split(" at line ").next().unwrap_or(&text).to_owned();
                Err(refused("JSON", message, e.line(), e.column()))
            }
        },
        Some("yaml" | "yml") => {
            let mut parser = saphyr_parser::Parser::new_from_str(content);
            while let Some(event) = parser.next_event() {
                match event {
                    Ok((saphyr_parser::Event::StreamEnd, _)) => break,
                    Ok(_) => {}
                    Err(e) => {
                        let at = e.marker();
                        return Err(refused(
                            "YAML",
                            e.info().to_owned(),
                            at.line(),
                            at.col() + 1,
                        ));
                    }
                }
            }
            Ok(())
        }
        Some("toml") => match content.parse::<toml::Table>() {
            Ok(_) => Ok(()),
            Err(e) => {
                let at = e.span().map_or(0, |s| s.start).min(content.len());
                let before = content.get(..at).unwrap_or(content);
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                Err(refused("TOML", e.message().trim().to_owned(), line, column))
            }
        },
        _ => Ok(()),
    }
}
