//! Helpers shared by the file tools: resolving a path against the working
//! directory, showing it, cutting long lines, and suggesting similar names
//! when a file is missing.

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use super::error::FileError;
use super::guard::expand_home;

/// Appended to a line that was cut.
pub const LINE_CUT_MARKER: &str = "... [truncated]";
/// The largest file the file tools edit or write (bytes): `patch` refuses a
/// bigger file, and a replacement whose result would be bigger, and
/// `write_file` refuses bigger content. Nothing is written when refused.
pub const MAX_EDIT_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Directory entries looked at when suggesting similar file names.
pub(super) const SIMILAR_SCAN_LIMIT: usize = 1000;
/// Similar file names suggested at most.
pub(super) const SIMILAR_MAX: usize = 5;

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

/// Names in the folder of `path` that look like what was meant.
pub(super) fn similar_files(full: &Path, given: &str) -> Vec<String> {
    let Some(name) = full.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let Some(dir) = full.parent() else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let wanted = name.to_lowercase();
    let (wanted_stem, wanted_ext) = split_ext(&wanted);
    let mut scored: Vec<(u32, usize, String)> = Vec::new();
    for entry in entries.take(SIMILAR_SCAN_LIMIT).flatten() {
        let Ok(candidate) = entry.file_name().into_string() else {
            continue;
        };
        let lower = candidate.to_lowercase();
        if lower == wanted {
            continue;
        }
        let (stem, ext) = split_ext(&lower);
        let distance = edit_distance(&wanted, &lower);
        let score = if !wanted_stem.is_empty() && stem == wanted_stem {
            4
        } else if lower.starts_with(&wanted)
            || wanted.starts_with(&lower)
            || lower.contains(&wanted)
        {
            3
        } else if lower.chars().count() > 2 && wanted.contains(&lower) {
            2
        } else if distance <= (wanted.chars().count() / 4).max(1)
            || (ext == wanted_ext
                && edit_distance(stem, wanted_stem) <= (wanted_stem.chars().count() / 3).max(1))
        {
            // A typo: a near name, or a near stem with the same extension.
            1
        } else {
            0
        };
        if score > 0 {
            scored.push((score, distance, candidate));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let prefix = match given.rfind('/') {
        Some(idx) => &given[..=idx],
        None => "",
    };
    scored
        .into_iter()
        .take(SIMILAR_MAX)
        .map(|(_, _, name)| format!("{prefix}{name}"))
        .collect()
}

pub(super) fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(idx) if idx > 0 => (&name[..idx], &name[idx + 1..]),
        _ => (name, ""),
    }
}

/// Levenshtein distance over characters, on names of any length cut to
/// their first 128 characters (a file name has at most 255 bytes).
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let cut = |s: &str| s.char_indices().nth(128).map_or(s.len(), |(i, _)| i);
    strsim::levenshtein(&a[..cut(a)], &b[..cut(b)])
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
