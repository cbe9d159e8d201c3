//! `search_files`: a regex search of file contents, line by line,
//! returning `{path, line, content}` matches.

use std::fs::{self, File};
use std::io::BufReader;
use std::path::Path;
use std::time::{Duration, Instant};

use ignore::overrides::OverrideBuilder;
use ignore::WalkBuilder;
use regex::{Regex, RegexBuilder};
use serde::Serialize;

use super::common::cut_line;
use super::error::FileError;
use super::fsguard::{
    open_regular, read_line_capped, special_kind, special_location, strip_newline, Line,
};
use super::ignore_budget::{ignore_bytes, over_ignore_budget, IgnoreBudget, MAX_IGNORE_BYTES};

/// Matches returned by `search_files` when no limit is given.
pub const DEFAULT_SEARCH_LIMIT: u64 = 50;
/// The most matches `search_files` returns in one call.
pub const MAX_SEARCH_LIMIT: u64 = 1000;
/// Characters of a matching line that `search_files` shows before cutting it.
pub const MAX_MATCH_LINE_CHARS: usize = 500;
/// Bytes of one line that `search_files` matches against. A longer line is
/// matched on its first this-many bytes only (the rest is read past, never
/// held), and the result's hint says lines were cut.
pub const MAX_SEARCH_LINE_BYTES: usize = 1024 * 1024;
/// The most memory a search pattern may compile to (bytes). Matching costs
/// up to the line's length times the pattern's size, so a pattern such as
/// `x{50000}` is refused rather than left to take minutes a line.
pub const MAX_PATTERN_BYTES: usize = 256 * 1024;
/// The matcher's cache (bytes): large enough that a pattern within
/// [`MAX_PATTERN_BYTES`] keeps the fast matcher on long lines.
const PATTERN_CACHE_BYTES: usize = 16 * 1024 * 1024;
/// How long one search may read files: past it, the search stops and
/// answers what it found, saying so.
pub const MAX_SEARCH_TIME: Duration = Duration::from_secs(60);

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchMatch {
    /// The file, as the search path given joined with the path below it.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line's text, without its line ending, cut if long.
    pub content: String,
}

/// The result of a content search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchOutput {
    /// Matching lines in all searched files, including those not returned.
    pub total_count: u64,
    /// The first matches, in path order, at most `limit` of them.
    pub matches: Vec<SearchMatch>,
    /// True when more lines matched than were returned.
    pub truncated: bool,
    /// What to do next, when there is something to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Searches file contents under `path` (default: the working directory)
/// with a regex, line by line.
///
/// Files ignored by `.gitignore`, `.ignore` or `.git/info/exclude` (inside a
/// git repository or not), hidden files and folders, and binary files (a
/// NUL byte anywhere: the file is dropped, its matches too, as soon as the
/// chunk holding it is read) are skipped; symlinks are not followed.
/// `file_glob` (gitignore-style, e.g. `*.rs`) limits the files searched.
/// Matches come in path order; `limit` (default [`DEFAULT_SEARCH_LIMIT`],
/// clamped to `1..=`[`MAX_SEARCH_LIMIT`]) caps how many are returned, while
/// `total_count` counts them all. A match's `path` is the search path as
/// given joined with the file's path below it, so it can be passed straight
/// to `read_file`.
///
/// A line longer than [`MAX_SEARCH_LINE_BYTES`] is matched on its first
/// [`MAX_SEARCH_LINE_BYTES`] bytes only, as a pager would show it: the rest
/// is read past without being held, and the hint says how many lines were
/// cut. (Skipping such lines would hide matches at the start of minified
/// files, which is what a search of them usually looks for.)
///
/// Special files are never opened: a search path that resolves under
/// [`SPECIAL_ROOTS`] (or onto a kernel file system) is refused, the walk
/// never enters such folders, and devices, FIFOs, sockets and files of
/// size 0 met on the way are skipped. The walk reads ignore files whole
/// (following symlinks), so a folder with an ignore file that is not a
/// regular file, or whose ignore files and those above it exceed
/// [`MAX_IGNORE_BYTES`], is not entered (the hint says so), and the search
/// is refused when that folder is the search path or above it.
pub fn search_files(
    base: &Path,
    pattern: &str,
    path: Option<&str>,
    file_glob: Option<&str>,
    limit: Option<u64>,
) -> Result<SearchOutput, FileError> {
    search_files_until(
        base,
        pattern,
        path,
        file_glob,
        limit,
        Instant::now() + MAX_SEARCH_TIME,
    )
}

/// [`search_files`] that stops reading at `deadline`.
pub(crate) fn search_files_until(
    base: &Path,
    pattern: &str,
    path: Option<&str>,
    file_glob: Option<&str>,
    limit: Option<u64>,
    deadline: Instant,
) -> Result<SearchOutput, FileError> {
    let regex = RegexBuilder::new(pattern)
        .size_limit(MAX_PATTERN_BYTES)
        .dfa_size_limit(PATTERN_CACHE_BYTES)
        .build()
        .map_err(|e| FileError::InvalidRegex {
            pattern: pattern.to_owned(),
            message: match e {
                regex::Error::CompiledTooBig(_) => format!(
                    "the pattern compiles to more than {MAX_PATTERN_BYTES} bytes (large counted \
                     repetitions such as x{{50000}}, or many Unicode classes); simplify it"
                ),
                e => e.to_string(),
            },
        })?;
    let limit = limit
        .unwrap_or(DEFAULT_SEARCH_LIMIT)
        .clamp(1, MAX_SEARCH_LIMIT);
    let given = path.filter(|p| !p.is_empty()).unwrap_or(".");
    // The walk starts from the real path, so every path it meets is real
    // and the special folders are recognised whatever led to them.
    let Ok(root) = fs::canonicalize(base.join(given)) else {
        return Err(FileError::SearchPathNotFound {
            path: given.to_owned(),
        });
    };
    let refuse = |reason: String| FileError::Special {
        path: given.to_owned(),
        action: "search",
        reason,
    };
    if let Some(reason) = special_location(&root) {
        return Err(refuse(reason));
    }
    if let Some(kind) = fs::metadata(&root).ok().as_ref().and_then(special_kind) {
        return Err(refuse(format!(
            "it is {kind}, not a regular file or folder"
        )));
    }
    // The walk reads the ignore files of the search path and of every
    // folder above it before anything else.
    let first_dir = if root.is_dir() {
        root.clone()
    } else {
        root.parent()
            .map_or_else(|| root.clone(), Path::to_path_buf)
    };
    let mut held = 0u64;
    for dir in first_dir.ancestors() {
        let own = ignore_bytes(dir).map_err(|p| refuse(format!("the ignore file {p}")))?;
        held = held.saturating_add(own);
    }
    if held > MAX_IGNORE_BYTES {
        return Err(refuse(over_ignore_budget(&first_dir, held)));
    }
    let shown_prefix = display_prefix(given);

    let budget = std::sync::Arc::new(std::sync::Mutex::new(IgnoreBudget::new(first_dir, held)));
    let budget_in_walk = budget.clone();
    let mut walk = WalkBuilder::new(&root);
    walk.hidden(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            special_location(entry.path()).is_none()
                && budget_in_walk
                    .lock()
                    .is_ok_and(|mut budget| budget.admit(entry.path()))
        });
    if let Some(glob) = file_glob.filter(|g| !g.is_empty()) {
        let invalid = |e: ignore::Error| FileError::InvalidGlob {
            glob: glob.to_owned(),
            message: e.to_string(),
        };
        let mut overrides = OverrideBuilder::new(&root);
        overrides.add(glob).map_err(invalid)?;
        walk.overrides(overrides.build().map_err(invalid)?);
    }

    let mut out = SearchOutput {
        total_count: 0,
        matches: Vec::new(),
        truncated: false,
        hint: None,
    };
    let mut cut_lines = 0u64;
    let mut buf = Vec::new();
    let mut out_of_time = false;
    for entry in walk.build().flatten() {
        if Instant::now() >= deadline {
            out_of_time = true;
            break;
        }
        // Not following symlinks, a FIFO, device or socket is not a file.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        // Empty, or a kernel file that only claims to be: nothing to read.
        if entry.metadata().map_or(true, |m| m.len() == 0) {
            continue;
        }
        let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        let shown_path = if rel.as_os_str().is_empty() {
            given.to_owned()
        } else {
            format!("{shown_prefix}{}", rel.to_string_lossy())
        };
        let room = (limit as usize).saturating_sub(out.matches.len());
        let Ok((file, meta)) = open_regular(entry.path()) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        if let Some(found) = search_file(file, &regex, &shown_path, room, &mut buf, deadline) {
            out.total_count += found.count;
            out.matches.extend(found.matches);
            cut_lines += found.cut_lines;
            if found.out_of_time {
                out_of_time = true;
                break;
            }
        }
    }
    let mut hints = Vec::new();
    if out.total_count > out.matches.len() as u64 {
        out.truncated = true;
        hints.push(format!(
            "Showing the first {} of {} matching lines. Narrow the pattern, path or \
             file_glob, or raise limit, to see others",
            out.matches.len(),
            out.total_count
        ));
    }
    if let Ok(budget) = budget.lock() {
        if let Some(first) = &budget.first_skipped {
            hints.push(format!(
                "{} folder(s) were not searched because of their ignore files (first: {first})",
                budget.skipped
            ));
        }
    }
    if out_of_time {
        out.truncated = true;
        hints.push(format!(
            "The search stopped after {} s, so files were left unread and the counts are \
             partial. Narrow the path or file_glob",
            MAX_SEARCH_TIME.as_secs()
        ));
    }
    if cut_lines > 0 {
        hints.push(format!(
            "{cut_lines} line(s) longer than {MAX_SEARCH_LINE_BYTES} bytes were searched \
             on their first {MAX_SEARCH_LINE_BYTES} bytes only"
        ));
    }
    if !hints.is_empty() {
        out.hint = Some(hints.join(". "));
    }
    Ok(out)
}

/// The text put before a path below the search root.
fn display_prefix(given: &str) -> String {
    let trimmed = given.trim_end_matches('/');
    if trimmed.is_empty() && given.starts_with('/') {
        "/".to_owned()
    } else if trimmed.is_empty() || trimmed == "." {
        String::new()
    } else {
        format!("{}/", trimmed.strip_prefix("./").unwrap_or(trimmed))
    }
}

/// What one file held.
struct FileMatches {
    /// Matching lines.
    count: u64,
    /// The first of them, as many as there was room for.
    matches: Vec<SearchMatch>,
    /// Lines longer than [`MAX_SEARCH_LINE_BYTES`].
    cut_lines: u64,
    /// The deadline came before the end of the file.
    out_of_time: bool,
}

/// Searches one file, a line of at most [`MAX_SEARCH_LINE_BYTES`] at a time
/// (see [`search_files`]). `None` for a binary or unreadable file.
fn search_file(
    file: File,
    regex: &Regex,
    shown_path: &str,
    room: usize,
    buf: &mut Vec<u8>,
    deadline: Instant,
) -> Option<FileMatches> {
    let mut reader = BufReader::new(file);
    let mut found = FileMatches {
        count: 0,
        matches: Vec::new(),
        cut_lines: 0,
        out_of_time: false,
    };
    let mut line_no = 0u64;
    loop {
        if Instant::now() >= deadline {
            found.out_of_time = true;
            break;
        }
        let cut = match read_line_capped(&mut reader, buf, MAX_SEARCH_LINE_BYTES) {
            Ok(None) => break,
            Ok(Some(Line::Text { cut })) => cut,
            Ok(Some(Line::Nul)) | Err(_) => return None,
        };
        line_no += 1;
        found.cut_lines += u64::from(cut);
        let text = String::from_utf8_lossy(strip_newline(buf, true));
        if regex.is_match(&text) {
            found.count += 1;
            if found.matches.len() < room {
                found.matches.push(SearchMatch {
                    path: shown_path.to_owned(),
                    line: line_no,
                    content: cut_line(&text, MAX_MATCH_LINE_CHARS),
                });
            }
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_prefixes() {
        assert_eq!(display_prefix("."), "");
        assert_eq!(display_prefix("./"), "");
        assert_eq!(display_prefix("src"), "src/");
        assert_eq!(display_prefix("src/"), "src/");
        assert_eq!(display_prefix("./src"), "src/");
        assert_eq!(display_prefix("/abs/dir"), "/abs/dir/");
        assert_eq!(display_prefix("/"), "/");
    }
}
