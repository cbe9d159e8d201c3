//! `read_file`: a page of a text file, its lines numbered `N|text`
//! (1-based, no padding), joined by `\n`; lines longer than
//! [`MAX_LINE_CHARS`] characters are cut and marked with
//! [`LINE_CUT_MARKER`]; a page is at most [`MAX_READ_LIMIT`] lines and
//! [`MAX_READ_CHARS`] characters, and a cut page says where to go on.

use std::io::BufReader;
use std::path::Path;

use serde::Serialize;

use super::common::{cut_line, resolve, LINE_CUT_MARKER};
use super::error::FileError;
use super::fsguard::{open_text_file, read_line_capped, strip_newline, Line};

/// Lines returned by `read_file` when no limit is given.
pub const DEFAULT_READ_LIMIT: u64 = 500;
/// The most lines `read_file` returns in one call.
pub const MAX_READ_LIMIT: u64 = 2000;
/// Characters of one line that `read_file` shows before cutting it.
pub const MAX_LINE_CHARS: usize = 2000;
/// The most characters of numbered content that one `read_file` call returns.
pub const MAX_READ_CHARS: usize = 100_000;

/// A page of a text file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadFileOutput {
    /// Lines as `N|text`, joined by `\n`; empty for an empty file.
    pub content: String,
    /// Lines in the whole file (a last line without `\n` counts).
    pub total_lines: u64,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// True when lines after this page were not shown.
    pub truncated: bool,
    /// The `offset` that reads on from here, when `truncated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// What to do next, when there is something to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Reads a page of a text file with numbered lines.
///
/// `offset` is the 1-based first line (default 1; 0 counts as 1); `limit`
/// the number of lines (default [`DEFAULT_READ_LIMIT`], clamped to
/// `1..=`[`MAX_READ_LIMIT`]). A leading UTF-8 byte-order mark is not shown;
/// invalid UTF-8 bytes are shown as U+FFFD; `\r` before `\n` is kept.
///
/// The whole file is read once (to count its lines), a line at a time with
/// at most a few KiB of it held, so memory stays bounded whatever the file;
/// a NUL byte anywhere makes the file binary and stops the read there (a
/// sparse file's holes are NUL, so a huge sparse file is refused at its
/// first hole instead of read to the end).
pub fn read_file(
    base: &Path,
    path: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<ReadFileOutput, FileError> {
    let full = resolve(base, path)?;
    let offset = offset.unwrap_or(1).max(1);
    let limit = limit.unwrap_or(DEFAULT_READ_LIMIT).clamp(1, MAX_READ_LIMIT);
    let last_wanted = offset.saturating_add(limit - 1);

    let (file, file_size, _) = open_text_file(&full, path)?;
    let mut reader = BufReader::new(file);
    // Enough bytes to hold MAX_LINE_CHARS + 1 characters of any UTF-8.
    let cap = (MAX_LINE_CHARS + 1) * 4;
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    let mut content = String::new();
    let mut chars_used = 0usize;
    let mut shown = 0u64;
    let mut budget_hit = false;

    while let Some(line) = read_line_capped(&mut reader, &mut buf, cap)
        .map_err(|e| FileError::from_io(&e, path, "read"))?
    {
        line_no += 1;
        let Line::Text { cut: skipped } = line else {
            return Err(FileError::Binary {
                path: path.to_owned(),
                reason: format!("it contains NUL bytes, the first on line {line_no}"),
            });
        };
        if line_no < offset || line_no > last_wanted || budget_hit {
            continue;
        }
        let mut bytes = strip_newline(&buf, false);
        if line_no == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        let text = String::from_utf8_lossy(bytes);
        let mut line = cut_line(&text, MAX_LINE_CHARS);
        if skipped && !line.ends_with(LINE_CUT_MARKER) {
            line.push_str(LINE_CUT_MARKER);
        }
        let rendered = format!("{line_no}|{line}");
        let added = rendered.chars().count() + usize::from(shown > 0);
        if shown > 0 && chars_used + added > MAX_READ_CHARS {
            budget_hit = true;
            continue;
        }
        if shown > 0 {
            content.push('\n');
        }
        content.push_str(&rendered);
        chars_used += added;
        shown += 1;
    }
    let total_lines = line_no;

    let mut out = ReadFileOutput {
        content,
        total_lines,
        file_size,
        truncated: false,
        next_offset: None,
        hint: None,
    };
    if shown == 0 {
        if total_lines > 0 {
            out.hint = Some(format!(
                "offset {offset} is past the end of the file, which has {total_lines} lines"
            ));
        }
        return Ok(out);
    }
    let last_shown = offset + shown - 1;
    if last_shown < total_lines {
        let next = last_shown + 1;
        out.truncated = true;
        out.next_offset = Some(next);
        out.hint = Some(if budget_hit {
            format!(
                "Output stopped at the {MAX_READ_CHARS}-character limit after line {last_shown} \
                 (showing {offset}-{last_shown} of {total_lines} lines). \
                 Use offset={next} to continue reading"
            )
        } else {
            format!(
                "Use offset={next} to continue reading \
                 (showing {offset}-{last_shown} of {total_lines} lines)"
            )
        });
    }
    Ok(out)
}
