//! Helpers shared by the file tools: resolving a path against the working
//! directory, showing it, cutting long lines.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::error::FileError;
use hermes_runtime::paths::expand_home;

/// Appended to a line that was cut.
pub const LINE_CUT_MARKER: &str = "... [truncated]";

/// `path` as given by the model, resolved against the working directory
/// `base`, with a leading `~` expanded to the user's home.
pub(super) fn resolve(base: &Path, path: &str) -> Result<PathBuf, FileError> {
    if path.is_empty() {
        return Err(FileError::EmptyPath);
    }
    Ok(base.join(expand_home(path)))
}

pub(super) fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Cuts `text` to `max` characters, marking the cut.
pub(super) fn cut_line(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((idx, _)) => format!("{}{LINE_CUT_MARKER}", &text[..idx]),
    }
}

/// `text` with the characters that would act on a terminal or hide text
/// written as escapes, so file content reaches the model as inert text:
/// C0 control characters (except tab) and DEL as `\xHH` (`\x1b[31m` for a
/// colour escape), C1 controls (U+0080–U+009F) and the Unicode
/// bidirectional controls (U+202A–U+202E, U+2066–U+2069) as `\u{HHHH}`.
/// A carriage return at the very end (a CRLF line) is kept. A backslash is
/// not escaped: a file holding the text `\x1b` reads the same as one
/// holding the byte.
pub(super) fn escape_controls(text: &str) -> Cow<'_, str> {
    let body = text.strip_suffix('\r').unwrap_or(text);
    let acts = |c: char| {
        (c < ' ' && c != '\t')
            || c == '\u{7f}'
            || ('\u{80}'..='\u{9f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    if !body.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in body.chars() {
        if !acts(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        }
    }
    if body.len() < text.len() {
        out.push('\r');
    }
    Cow::Owned(out)
}
