//! `read_file`: a page of a text file, its lines numbered `N|text`
//! (1-based, no padding), joined by `\n`; lines longer than
//! [`MAX_LINE_CHARS`] characters are cut and marked with
//! [`LINE_CUT_MARKER`]; a page is at most [`MAX_READ_LIMIT`] lines and
//! [`MAX_READ_CHARS`] characters, and a cut page says where to go on.

use std::fs;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use super::common::{cut_line, escape_controls, resolve, LINE_CUT_MARKER};
use super::error::FileError;
use super::fsguard::{
    kernel_read_rule, open_text_file, read_kernel_file, read_line_capped, strip_newline,
    KernelRead, Line,
};

/// Lines returned by `read_file` when no limit is given.
pub const DEFAULT_READ_LIMIT: u64 = 500;
/// The most lines `read_file` returns in one call.
pub const MAX_READ_LIMIT: u64 = 2000;
/// Characters of one line that `read_file` shows before cutting it.
pub const MAX_LINE_CHARS: usize = 2000;
/// The most characters of numbered content that one `read_file` call returns.
pub const MAX_READ_CHARS: usize = 100_000;

/// The largest notebook whose cells are extracted (bytes); a bigger one
/// is read as the JSON text it is.
pub const MAX_NOTEBOOK_BYTES: u64 = 16 * 1024 * 1024;

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
    /// True when the content is text extracted from a document (the cells
    /// of a Jupyter notebook), not the file's own lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extracted_document: Option<bool>,
    /// Said when the same page was read several times in a row.
    #[serde(rename = "_warning", skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
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
#[cfg(test)]
pub fn read_file(
    base: &Path,
    path: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<ReadFileOutput, FileError> {
    read_file_cut(base, path, offset, limit, MAX_LINE_CHARS)
}

/// [`read_file`] with lines cut at `max_line_chars` (at most
/// [`MAX_LINE_CHARS`]; the profile's `tool_output.max_line_length`).
pub fn read_file_cut(
    base: &Path,
    path: &str,
    offset: Option<u64>,
    limit: Option<u64>,
    max_line_chars: usize,
) -> Result<ReadFileOutput, FileError> {
    let max_line_chars = max_line_chars.clamp(1, MAX_LINE_CHARS);
    let full = resolve(base, path)?;
    let (offset, limit) = page_bounds(offset, limit);

    // The harmless kernel files (`/proc/cpuinfo`, `/dev/null`, ...; the
    // read guard refused the rest by name): read whole, bounded.
    let real = fs::canonicalize(&full).unwrap_or_else(|_| full.clone());
    if kernel_read_rule(&real) == KernelRead::Readable {
        let bytes = read_kernel_file(&real, path)?;
        let size = bytes.len() as u64;
        return page(
            BufReader::new(&bytes[..]),
            path,
            offset,
            limit,
            size,
            max_line_chars,
        );
    }
    let (mut file, file_size, _) = open_text_file(&full, path)?;
    if is_notebook(&full) && file_size <= MAX_NOTEBOOK_BYTES {
        let mut bytes = Vec::new();
        file.by_ref()
            .take(MAX_NOTEBOOK_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| FileError::from_io(&e, path, "read"))?;
        if let Some(text) = notebook_text(&bytes) {
            let mut out = page(
                BufReader::new(text.as_bytes()),
                path,
                offset,
                limit,
                file_size,
                max_line_chars,
            )?;
            out.extracted_document = Some(true);
            return Ok(out);
        }
        // Not a notebook after all: read as the text it is.
        file.seek(SeekFrom::Start(0))
            .map_err(|e| FileError::from_io(&e, path, "read"))?;
    }
    page(
        BufReader::new(file),
        path,
        offset,
        limit,
        file_size,
        max_line_chars,
    )
}

/// Numbers the lines `offset..offset + limit` of `reader` (the text of
/// `path`, `file_size` bytes on disk) into a page.
pub(super) fn page<R: BufRead>(
    mut reader: R,
    path: &str,
    offset: u64,
    limit: u64,
    file_size: u64,
    max_line_chars: usize,
) -> Result<ReadFileOutput, FileError> {
    let last_wanted = offset.saturating_add(limit - 1);
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
        let mut line = cut_line(&text, max_line_chars);
        if skipped && !line.ends_with(LINE_CUT_MARKER) {
            line.push_str(LINE_CUT_MARKER);
        }
        let rendered = format!("{line_no}|{}", escape_controls(&line));
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
        extracted_document: None,
        warning: None,
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

/// The first line and the line count a read of `offset` and `limit`
/// (as given) shows: 1-based, 0 counting as 1; the count defaults to
/// [`DEFAULT_READ_LIMIT`] and is clamped to `1..=`[`MAX_READ_LIMIT`].
pub fn page_bounds(offset: Option<u64>, limit: Option<u64>) -> (u64, u64) {
    (
        offset.unwrap_or(1).max(1),
        limit.unwrap_or(DEFAULT_READ_LIMIT).clamp(1, MAX_READ_LIMIT),
    )
}

/// Whether `path` names a Jupyter notebook.
fn is_notebook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
}

/// A notebook as far as its text goes: outputs and metadata are skipped
/// while parsing, never held.
#[derive(Deserialize)]
struct Notebook {
    #[serde(default)]
    cells: Option<Vec<Cell>>,
    /// Notebooks of format 3 keep their cells in worksheets.
    #[serde(default)]
    worksheets: Vec<Worksheet>,
}

#[derive(Deserialize)]
struct Worksheet {
    #[serde(default)]
    cells: Vec<Cell>,
}

#[derive(Deserialize)]
struct Cell {
    #[serde(default)]
    cell_type: String,
    #[serde(default)]
    source: Source,
}

/// A cell's source: one string, or a list of lines.
#[derive(Deserialize, Default)]
#[serde(untagged)]
enum Source {
    Text(String),
    Lines(Vec<SourceLine>),
    #[default]
    None,
    #[allow(dead_code)]
    Other(IgnoredAny),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SourceLine {
    Text(String),
    #[allow(dead_code)]
    Other(IgnoredAny),
}

impl Source {
    fn text(&self) -> String {
        match self {
            Source::Text(t) => t.clone(),
            Source::Lines(lines) => lines
                .iter()
                .filter_map(|l| match l {
                    SourceLine::Text(t) => Some(t.as_str()),
                    SourceLine::Other(_) => None,
                })
                .collect(),
            Source::None | Source::Other(_) => String::new(),
        }
    }
}

/// The text of a Jupyter notebook's cells, as the reference shows it: each
/// markdown, code or raw cell under a `# ── Code cell N ──` header (kinds
/// numbered apart, raw cells not numbered), cells apart by an empty line.
/// `None` when `bytes` is not a notebook with readable cells.
pub(super) fn notebook_text(bytes: &[u8]) -> Option<String> {
    let nb: Notebook = serde_json::from_slice(bytes).ok()?;
    let cells = match nb.cells {
        Some(cells) => cells,
        None => nb.worksheets.into_iter().flat_map(|w| w.cells).collect(),
    };
    let mut counts = [0u32; 3];
    let mut out: Vec<String> = Vec::new();
    for cell in &cells {
        let (label, slot) = match cell.cell_type.as_str() {
            "markdown" => ("Markdown", 0),
            "code" => ("Code", 1),
            "raw" => ("Raw", 2),
            _ => continue,
        };
        counts[slot] += 1;
        let header = if slot == 2 {
            format!("# ── {label} cell ──")
        } else {
            format!("# ── {label} cell {} ──", counts[slot])
        };
        out.push(header);
        out.push(cell.source.text().trim_end_matches('\n').to_owned());
        out.push(String::new());
    }
    if out.is_empty() {
        return None;
    }
    let joined = out.join("\n");
    Some(format!("{}\n", joined.trim_end_matches('\n')))
}
