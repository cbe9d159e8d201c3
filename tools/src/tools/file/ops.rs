//! The logic of the four file tools: `read_file`, `write_file`, `patch` and `search_files`.
//!
//! Each function takes `base`, the working directory that relative paths are
//! resolved against (absolute paths are used as they are; `~` is not
//! expanded). The outputs derive `serde::Serialize`; errors are [`FileError`],
//! whose `Display` text says what went wrong and what to do next.
//!
//! Shapes follow the reference tool set where it makes sense:
//! - `read_file` numbers lines as `N|text` (1-based, no padding), joined by
//!   `\n`; lines longer than [`MAX_LINE_CHARS`] characters are cut and marked
//!   with [`LINE_CUT_MARKER`]; a page is at most [`MAX_READ_LIMIT`] lines and
//!   [`MAX_READ_CHARS`] characters, and a cut page says where to go on.
//! - `patch` is an exact find-and-replace and returns a unified diff.
//! - `search_files` returns `{path, line, content}` matches.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use ignore::overrides::OverrideBuilder;
use ignore::WalkBuilder;
use regex::Regex;
use serde::Serialize;

/// Lines returned by `read_file` when no limit is given.
pub const DEFAULT_READ_LIMIT: u64 = 500;
/// The most lines `read_file` returns in one call.
pub const MAX_READ_LIMIT: u64 = 2000;
/// Characters of one line that `read_file` shows before cutting it.
pub const MAX_LINE_CHARS: usize = 2000;
/// The most characters of numbered content that one `read_file` call returns.
pub const MAX_READ_CHARS: usize = 100_000;
/// Appended to a line that was cut.
pub const LINE_CUT_MARKER: &str = "... [truncated]";
/// Matches returned by `search_files` when no limit is given.
pub const DEFAULT_SEARCH_LIMIT: u64 = 50;
/// The most matches `search_files` returns in one call.
pub const MAX_SEARCH_LIMIT: u64 = 1000;
/// Characters of a matching line that `search_files` shows before cutting it.
pub const MAX_MATCH_LINE_CHARS: usize = 500;
/// Characters of diff preview that `patch` returns before cutting it.
pub const MAX_DIFF_CHARS: usize = 8000;

/// Bytes looked at to decide whether a file is binary.
const BINARY_SAMPLE_BYTES: usize = 8192;
/// Lines of unchanged context around each change in a diff.
const DIFF_CONTEXT: usize = 3;
/// Directory entries looked at when suggesting similar file names.
const SIMILAR_SCAN_LIMIT: usize = 1000;
/// Similar file names suggested at most.
const SIMILAR_MAX: usize = 5;

/// File extensions refused by `read_file` without looking at the content.
const BINARY_EXTENSIONS: &[&str] = &[
    "7z", "a", "avi", "bin", "bmp", "bz2", "class", "dat", "db", "dll", "dmg", "doc", "docx",
    "dylib", "eot", "exe", "flac", "gif", "gz", "ico", "iso", "jar", "jpeg", "jpg", "lib", "mkv",
    "mov", "mp3", "mp4", "o", "obj", "ogg", "otf", "pdf", "png", "ppt", "pptx", "pyc", "pyo",
    "rar", "so", "sqlite", "sqlite3", "tar", "tgz", "tif", "tiff", "ttf", "wasm", "wav", "webm",
    "webp", "woff", "woff2", "xls", "xlsx", "xz", "zip", "zst",
];

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Why a file tool failed. `Display` gives a message meant for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// The `path` argument was empty.
    EmptyPath,
    /// The file does not exist; `similar` holds names from the same folder.
    FileNotFound { path: String, similar: Vec<String> },
    /// The file or folder to search does not exist.
    SearchPathNotFound { path: String },
    /// A folder was given where a file is needed.
    IsDirectory { path: String },
    /// The file looks binary and is not shown as text.
    Binary { path: String, reason: String },
    /// The file is not valid UTF-8, so it cannot be edited as text.
    NotUtf8 { path: String },
    /// The operating system refused access.
    PermissionDenied { path: String, action: &'static str },
    /// Any other I/O failure.
    Io {
        path: String,
        action: &'static str,
        message: String,
    },
    /// `patch` was given an empty `old_string`.
    EmptyOldString,
    /// `patch` was given the same text as `old_string` and `new_string`.
    NoChange,
    /// `old_string` does not occur in the file.
    TextNotFound { path: String, hint: Option<String> },
    /// `old_string` occurs `count` times and `replace_all` was false.
    NotUnique { path: String, count: u64 },
    /// The search pattern is not a valid regex.
    InvalidRegex { pattern: String, message: String },
    /// The `file_glob` is not a valid glob.
    InvalidGlob { glob: String, message: String },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyPath => write!(f, "path must not be empty"),
            Self::FileNotFound { path, similar } => {
                write!(f, "File not found: {path}")?;
                if !similar.is_empty() {
                    write!(f, ". Similar files: {}", similar.join(", "))?;
                }
                Ok(())
            }
            Self::SearchPathNotFound { path } => write!(
                f,
                "Path not found: {path}. Give an existing file or directory to search, \
                 or leave path out to search the working directory"
            ),
            Self::IsDirectory { path } => write!(
                f,
                "{path} is a directory, not a file. Use search_files to look inside it"
            ),
            Self::Binary { path, reason } => write!(
                f,
                "Cannot read binary file {path} ({reason}). Only text files can be read; \
                 use the terminal to inspect binary files"
            ),
            Self::NotUtf8 { path } => write!(
                f,
                "{path} is not valid UTF-8 text, so it cannot be patched. \
                 Use write_file to replace it whole"
            ),
            Self::PermissionDenied { path, action } => {
                write!(f, "Permission denied: cannot {action} {path}")
            }
            Self::Io {
                path,
                action,
                message,
            } => write!(f, "Failed to {action} {path}: {message}"),
            Self::EmptyOldString => write!(
                f,
                "old_string must not be empty. To create or overwrite a whole file, use write_file"
            ),
            Self::NoChange => write!(
                f,
                "old_string and new_string are identical, so there is nothing to change"
            ),
            Self::TextNotFound { path, hint } => {
                write!(
                    f,
                    "Could not find old_string in {path}. It must match the file exactly, \
                     including white space and indentation; use read_file to check the \
                     current text"
                )?;
                if let Some(hint) = hint {
                    write!(f, ". {hint}")?;
                }
                Ok(())
            }
            Self::NotUnique { path, count } => write!(
                f,
                "old_string occurs {count} times in {path}. Include more surrounding \
                 context to make it unique, or set replace_all to true to replace every \
                 occurrence"
            ),
            Self::InvalidRegex { pattern, message } => {
                write!(f, "Invalid regex pattern {pattern:?}: {message}")
            }
            Self::InvalidGlob { glob, message } => {
                write!(f, "Invalid file_glob {glob:?}: {message}")
            }
        }
    }
}

impl std::error::Error for FileError {}

impl FileError {
    fn from_io(err: &io::Error, path: &str, action: &'static str) -> Self {
        match err.kind() {
            io::ErrorKind::PermissionDenied => Self::PermissionDenied {
                path: path.to_owned(),
                action,
            },
            io::ErrorKind::IsADirectory => Self::IsDirectory {
                path: path.to_owned(),
            },
            _ => Self::Io {
                path: path.to_owned(),
                action,
                message: err.to_string(),
            },
        }
    }
}

// ---------------------------------------------------------------------------
// Outputs
// ---------------------------------------------------------------------------

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

/// The result of a find-and-replace edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatchOutput {
    /// The path edited, resolved against the working directory.
    pub resolved_path: String,
    /// How many occurrences were replaced.
    pub replacements: u64,
    /// A unified diff of the change (cut after [`MAX_DIFF_CHARS`] characters).
    pub diff: String,
}

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

// ---------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------

fn resolve(base: &Path, path: &str) -> Result<PathBuf, FileError> {
    if path.is_empty() {
        return Err(FileError::EmptyPath);
    }
    Ok(base.join(path))
}

fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Cuts `text` to `max` characters, marking the cut.
fn cut_line(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((idx, _)) => format!("{}{LINE_CUT_MARKER}", &text[..idx]),
    }
}

/// Reads as many bytes as fit into `buf`, stopping early only at end of file.
fn read_sample(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Says why `sample` (the start of a file) looks binary, if it does.
fn binary_reason(sample: &[u8]) -> Option<String> {
    if sample.is_empty() {
        return None;
    }
    if sample.contains(&0) {
        return Some("it contains NUL bytes".to_owned());
    }
    // Bytes in invalid UTF-8 sequences, ignoring a sequence cut off by the
    // end of the sample.
    let mut invalid = 0usize;
    let mut rest = sample;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(_) => break,
            Err(e) => match e.error_len() {
                Some(len) => {
                    invalid += len;
                    rest = &rest[e.valid_up_to() + len..];
                }
                None => break,
            },
        }
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b))
        .count();
    // More than 30% of the sample unreadable as text.
    if (invalid + control) * 10 > sample.len() * 3 {
        return Some("most of it is not valid UTF-8 text".to_owned());
    }
    None
}

fn binary_extension(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    BINARY_EXTENSIONS
        .contains(&ext.as_str())
        .then(|| format!("a .{ext} file"))
}

/// Reads one line (up to and including `\n`) into `buf`, keeping at most
/// `cap` bytes of it and skipping the rest. Returns `None` at end of file,
/// else whether bytes were skipped.
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<bool>> {
    buf.clear();
    let mut any = false;
    let mut skipped = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(skipped));
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(pos) => (pos + 1, true),
            None => (chunk.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        let keep = take.min(room);
        buf.extend_from_slice(&chunk[..keep]);
        if keep < take {
            skipped = true;
        }
        reader.consume(take);
        if done {
            return Ok(Some(skipped));
        }
    }
}

/// Strips one trailing `\n` (and a `\r` before it, if `crlf`).
fn strip_newline(mut line: &[u8], crlf: bool) -> &[u8] {
    if let Some(rest) = line.strip_suffix(b"\n") {
        line = rest;
        if crlf {
            if let Some(rest) = line.strip_suffix(b"\r") {
                line = rest;
            }
        }
    }
    line
}

/// Names in the folder of `path` that look like what was meant.
fn similar_files(full: &Path, given: &str) -> Vec<String> {
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

fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(idx) if idx > 0 => (&name[..idx], &name[idx + 1..]),
        _ => (name, ""),
    }
}

/// Levenshtein distance over characters; names are short, so O(n*m) is fine.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(128).collect();
    let b: Vec<char> = b.chars().take(128).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Opens `full` for reading text, refusing folders and binary files.
/// Returns the open file (rewound) and its size.
fn open_text_file(full: &Path, given: &str) -> Result<(File, u64), FileError> {
    let meta = match fs::metadata(full) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(FileError::FileNotFound {
                path: given.to_owned(),
                similar: similar_files(full, given),
            })
        }
        Err(e) => return Err(FileError::from_io(&e, given, "read")),
    };
    if meta.is_dir() {
        return Err(FileError::IsDirectory {
            path: given.to_owned(),
        });
    }
    if !meta.is_file() {
        return Err(FileError::Io {
            path: given.to_owned(),
            action: "read",
            message: "not a regular file (a device, FIFO or socket)".to_owned(),
        });
    }
    if let Some(reason) = binary_extension(full) {
        return Err(FileError::Binary {
            path: given.to_owned(),
            reason,
        });
    }
    let mut file = File::open(full).map_err(|e| FileError::from_io(&e, given, "read"))?;
    let mut sample = vec![0u8; BINARY_SAMPLE_BYTES];
    let n =
        read_sample(&mut file, &mut sample).map_err(|e| FileError::from_io(&e, given, "read"))?;
    if let Some(reason) = binary_reason(&sample[..n]) {
        return Err(FileError::Binary {
            path: given.to_owned(),
            reason,
        });
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| FileError::from_io(&e, given, "read"))?;
    Ok((file, meta.len()))
}

// ---------------------------------------------------------------------------
// read_file
// ---------------------------------------------------------------------------

/// Reads a page of a text file with numbered lines.
///
/// `offset` is the 1-based first line (default 1; 0 counts as 1); `limit`
/// the number of lines (default [`DEFAULT_READ_LIMIT`], clamped to
/// `1..=`[`MAX_READ_LIMIT`]). A leading UTF-8 byte-order mark is not shown;
/// invalid UTF-8 bytes are shown as U+FFFD; `\r` before `\n` is kept.
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

    let (file, file_size) = open_text_file(&full, path)?;
    let mut reader = BufReader::new(file);
    // Enough bytes to hold MAX_LINE_CHARS + 1 characters of any UTF-8.
    let cap = (MAX_LINE_CHARS + 1) * 4;
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    let mut content = String::new();
    let mut chars_used = 0usize;
    let mut shown = 0u64;
    let mut budget_hit = false;

    while let Some(skipped) = read_line_capped(&mut reader, &mut buf, cap)
        .map_err(|e| FileError::from_io(&e, path, "read"))?
    {
        line_no += 1;
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

// ---------------------------------------------------------------------------
// write_file
// ---------------------------------------------------------------------------

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `target` by way of a temporary file in the same folder
/// and a rename, so readers see either the old or the new file whole.
/// An existing file's permissions are kept.
fn atomic_write(target: &Path, bytes: &[u8], given: &str) -> Result<(), FileError> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    let old_perms = fs::metadata(target).ok().map(|m| m.permissions());

    let (tmp_path, mut tmp) = create_temp(&dir, &name, given)?;
    let result = (|| {
        tmp.write_all(bytes)?;
        tmp.sync_all()?;
        if let Some(perms) = old_perms {
            fs::set_permissions(&tmp_path, perms)?;
        }
        drop(tmp);
        fs::rename(&tmp_path, target)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp_path);
        return Err(FileError::from_io(&e, given, "write"));
    }
    Ok(())
}

fn create_temp(dir: &Path, name: &str, given: &str) -> Result<(PathBuf, File), FileError> {
    let pid = std::process::id();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last_err = None;
    for _ in 0..16 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp_path = dir.join(format!(".{name}.{pid}.{nanos}.{n}.tmp"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp_path)
        {
            Ok(file) => return Ok((tmp_path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(FileError::from_io(&e, given, "write")),
        }
    }
    let err = last_err.unwrap_or_else(|| io::Error::other("could not create a temporary file"));
    Err(FileError::from_io(&err, given, "write"))
}

/// Where a write to `full` should land: through a symlink to its target.
fn write_target(full: &Path) -> PathBuf {
    match fs::symlink_metadata(full) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(full).unwrap_or_else(|_| full.to_path_buf())
        }
        _ => full.to_path_buf(),
    }
}

/// Writes `content` to a file, replacing it whole, creating missing parent
/// directories. The write is atomic (temporary file and rename in the same
/// folder); writing through a symlink writes its target.
pub fn write_file(base: &Path, path: &str, content: &str) -> Result<WriteFileOutput, FileError> {
    let full = resolve(base, path)?;
    let target = write_target(&full);
    let existing = fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(fs::Metadata::is_dir) {
        return Err(FileError::IsDirectory {
            path: path.to_owned(),
        });
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

// ---------------------------------------------------------------------------
// patch
// ---------------------------------------------------------------------------

/// Replaces `old_string` with `new_string` in a file, exactly (no fuzzy
/// matching). Without `replace_all`, `old_string` must occur exactly once.
/// The file is rewritten atomically and a unified diff is returned.
pub fn patch(
    base: &Path,
    path: &str,
    old_string: &str,
    new_string: &str,
    replace_all: bool,
) -> Result<PatchOutput, FileError> {
    let full = resolve(base, path)?;
    if old_string.is_empty() {
        return Err(FileError::EmptyOldString);
    }
    if old_string == new_string {
        return Err(FileError::NoChange);
    }
    let (mut file, _) = open_text_file(&full, path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| FileError::from_io(&e, path, "read"))?;
    let old = String::from_utf8(bytes).map_err(|_| FileError::NotUtf8 {
        path: path.to_owned(),
    })?;

    let starts: Vec<usize> = old.match_indices(old_string).map(|(i, _)| i).collect();
    if starts.is_empty() {
        return Err(FileError::TextNotFound {
            path: path.to_owned(),
            hint: not_found_hint(&old, old_string),
        });
    }
    if starts.len() > 1 && !replace_all {
        return Err(FileError::NotUnique {
            path: path.to_owned(),
            count: starts.len() as u64,
        });
    }
    let new = old.replace(old_string, new_string);
    atomic_write(&write_target(&full), new.as_bytes(), path)?;
    let diff = unified_diff(&old, &new, &starts, old_string, new_string, path);
    Ok(PatchOutput {
        resolved_path: display(&full),
        replacements: starts.len() as u64,
        diff,
    })
}

/// A cheap guess at why `needle` was not found, if one applies.
fn not_found_hint(haystack: &str, needle: &str) -> Option<String> {
    if needle.contains('\n') && !needle.contains("\r\n") && haystack.contains("\r\n") {
        let crlf = needle.replace('\n', "\r\n");
        if haystack.contains(&crlf) {
            return Some(
                "The file uses CRLF (\\r\\n) line endings; write old_string and \
                 new_string with \\r\\n"
                    .to_owned(),
            );
        }
    }
    let trimmed = needle.trim();
    if !trimmed.is_empty() && trimmed != needle && haystack.contains(trimmed) {
        return Some(
            "The text occurs without the leading or trailing white space given in old_string"
                .to_owned(),
        );
    }
    None
}

/// Start offsets of lines in `text`; a trailing empty piece after a final
/// `\n` is not a line.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(
        text.match_indices('\n')
            .map(|(i, _)| i + 1)
            .filter(|&i| i < text.len()),
    );
    if text.is_empty() {
        starts.clear();
    }
    starts
}

/// Index of the line holding byte `pos` (`pos` may be `text.len()`).
fn line_of(starts: &[usize], pos: usize) -> usize {
    starts.partition_point(|&s| s <= pos).saturating_sub(1)
}

/// A changed run of lines: old lines `old.0..old.1`, new lines `new.0..new.1`.
struct Change {
    old: (usize, usize),
    new: (usize, usize),
}

/// Index of the line starting at byte `pos`, or the line count at the end.
fn line_index(starts: &[usize], text_len: usize, line_count: usize, pos: usize) -> usize {
    if pos >= text_len {
        line_count
    } else {
        line_of(starts, pos)
    }
}

/// Builds a unified diff from the known replacement sites, without a
/// general diff algorithm: each site changes the whole lines it touches.
fn unified_diff(
    old: &str,
    new: &str,
    sites: &[usize],
    old_string: &str,
    new_string: &str,
    name: &str,
) -> String {
    let old_starts = line_starts(old);
    let new_starts = line_starts(new);
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let (old_len, new_len) = (old_string.len(), new_string.len());

    // Byte spans of whole old lines touched by the sites, merged when they
    // share or touch a line. A span ends right after a site only when both the old
    // and the new text end a line there; otherwise it runs to the end of
    // the line the site ends in.
    let mut spans: Vec<(usize, usize, usize)> = Vec::new(); // (start, end, sites)
    for (k, &site) in sites.iter().enumerate() {
        let start = old_starts
            .get(line_of(&old_starts, site))
            .copied()
            .unwrap_or(0);
        let after = site + old_len;
        // Where this replacement ends in the new text.
        let new_after = (after + (k + 1) * new_len).saturating_sub((k + 1) * old_len);
        let new_ends_line = new_after == 0 || new.as_bytes().get(new_after - 1) == Some(&b'\n');
        let clean = after >= old.len() || (old_string.ends_with('\n') && new_ends_line);
        let end = if clean {
            after.min(old.len())
        } else {
            old[after..].find('\n').map_or(old.len(), |i| after + i + 1)
        };
        match spans.last_mut() {
            Some(last) if start <= last.1 => {
                last.1 = last.1.max(end);
                last.2 += 1;
            }
            _ => spans.push((start, end, 1)),
        }
    }

    let mut changes: Vec<Change> = Vec::new();
    let mut sites_before = 0usize;
    for (start, end, count) in spans {
        // Text outside the sites is unchanged, so a position moves by the
        // size difference of the replacements before it.
        let shift = |pos: usize, n: usize| (pos + n * new_len).saturating_sub(n * old_len);
        let new_start = shift(start, sites_before);
        sites_before += count;
        let new_end = shift(end, sites_before);
        changes.push(Change {
            old: (
                line_index(&old_starts, old.len(), old_lines.len(), start),
                line_index(&old_starts, old.len(), old_lines.len(), end),
            ),
            new: (
                line_index(&new_starts, new.len(), new_lines.len(), new_start),
                line_index(&new_starts, new.len(), new_lines.len(), new_end),
            ),
        });
    }

    let mut out = format!("--- a/{name}\n+++ b/{name}\n");
    let mut i = 0;
    while i < changes.len() {
        // Changes whose context windows touch share one hunk.
        let mut j = i;
        while j + 1 < changes.len() && changes[j + 1].old.0 <= changes[j].old.1 + 2 * DIFF_CONTEXT {
            j += 1;
        }
        let (first, last) = (&changes[i], &changes[j]);
        let before = first.old.0.min(first.new.0).min(DIFF_CONTEXT);
        let after = old_lines
            .len()
            .saturating_sub(last.old.1)
            .min(new_lines.len().saturating_sub(last.new.1))
            .min(DIFF_CONTEXT);
        let (old_from, old_to) = (first.old.0 - before, last.old.1 + after);
        let (new_from, new_to) = (first.new.0 - before, last.new.1 + after);
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(old_from, old_to),
            hunk_range(new_from, new_to)
        ));
        let mut cursor = old_from;
        for change in &changes[i..=j] {
            for line in lines(&old_lines, cursor, change.old.0) {
                push_diff_line(&mut out, ' ', line);
            }
            for line in lines(&old_lines, change.old.0, change.old.1) {
                push_diff_line(&mut out, '-', line);
            }
            for line in lines(&new_lines, change.new.0, change.new.1) {
                push_diff_line(&mut out, '+', line);
            }
            cursor = change.old.1;
        }
        for line in lines(&old_lines, cursor, old_to) {
            push_diff_line(&mut out, ' ', line);
        }
        i = j + 1;
    }
    if out.chars().count() > MAX_DIFF_CHARS {
        let cut = out
            .char_indices()
            .nth(MAX_DIFF_CHARS)
            .map_or(out.len(), |(idx, _)| idx);
        let cut = out[..cut].rfind('\n').map_or(cut, |nl| nl + 1);
        let rest = out[cut..].lines().count();
        out.truncate(cut);
        out.push_str(&format!("... [diff truncated, {rest} more lines]\n"));
    }
    out
}

/// Lines `from..to` of `all`, or none if the range is out of bounds.
fn lines<'a>(all: &'a [&'a str], from: usize, to: usize) -> &'a [&'a str] {
    all.get(from..to).unwrap_or_default()
}

/// A unified-diff range for lines `from..to` (0-based), in the usual
/// `start,count` form: `start` alone when the count is 1, and the line
/// before when the count is 0.
fn hunk_range(from: usize, to: usize) -> String {
    match to - from {
        1 => format!("{}", from + 1),
        0 => format!("{from},0"),
        n => format!("{},{n}", from + 1),
    }
}

fn push_diff_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

// ---------------------------------------------------------------------------
// search_files
// ---------------------------------------------------------------------------

/// Searches file contents under `path` (default: the working directory)
/// with a regex, line by line.
///
/// Files ignored by `.gitignore`, `.ignore` or `.git/info/exclude` (inside a
/// git repository or not), hidden files and folders, and binary files (those
/// with a NUL byte) are skipped; symlinks are not followed. `file_glob`
/// (gitignore-style, e.g. `*.rs`) limits the files searched. Matches come in
/// path order; `limit` (default [`DEFAULT_SEARCH_LIMIT`], clamped to
/// `1..=`[`MAX_SEARCH_LIMIT`]) caps how many are returned, while
/// `total_count` counts them all. A match's `path` is the search path as
/// given joined with the file's path below it, so it can be passed straight
/// to `read_file`.
pub fn search_files(
    base: &Path,
    pattern: &str,
    path: Option<&str>,
    file_glob: Option<&str>,
    limit: Option<u64>,
) -> Result<SearchOutput, FileError> {
    let regex = Regex::new(pattern).map_err(|e| FileError::InvalidRegex {
        pattern: pattern.to_owned(),
        message: e.to_string(),
    })?;
    let limit = limit
        .unwrap_or(DEFAULT_SEARCH_LIMIT)
        .clamp(1, MAX_SEARCH_LIMIT);
    let given = path.filter(|p| !p.is_empty()).unwrap_or(".");
    let root = base.join(given);
    if fs::metadata(&root).is_err() {
        return Err(FileError::SearchPathNotFound {
            path: given.to_owned(),
        });
    }
    let shown_prefix = display_prefix(given);

    let mut walk = WalkBuilder::new(&root);
    walk.hidden(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
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
    let mut buf = Vec::new();
    for entry in walk.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        let shown_path = if rel.as_os_str().is_empty() {
            given.to_owned()
        } else {
            format!("{shown_prefix}{}", rel.to_string_lossy())
        };
        let room = (limit as usize).saturating_sub(out.matches.len());
        let Ok(file) = File::open(entry.path()) else {
            continue;
        };
        if let Some((count, found)) = search_file(file, &regex, &shown_path, room, &mut buf) {
            out.total_count += count;
            out.matches.extend(found);
        }
    }
    if out.total_count > out.matches.len() as u64 {
        out.truncated = true;
        out.hint = Some(format!(
            "Showing the first {} of {} matching lines. Narrow the pattern, path or \
             file_glob, or raise limit, to see others",
            out.matches.len(),
            out.total_count
        ));
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

/// Searches one file. Returns the number of matching lines and the first
/// `room` matches, or `None` for a binary or unreadable file.
fn search_file(
    file: File,
    regex: &Regex,
    shown_path: &str,
    room: usize,
    buf: &mut Vec<u8>,
) -> Option<(u64, Vec<SearchMatch>)> {
    let mut reader = BufReader::new(file);
    let mut count = 0u64;
    let mut found = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        match reader.read_until(b'\n', buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
        if buf.contains(&0) {
            return None;
        }
        line_no += 1;
        let text = String::from_utf8_lossy(strip_newline(buf, true));
        if regex.is_match(&text) {
            count += 1;
            if found.len() < room {
                found.push(SearchMatch {
                    path: shown_path.to_owned(),
                    line: line_no,
                    content: cut_line(&text, MAX_MATCH_LINE_CHARS),
                });
            }
        }
    }
    Some((count, found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_helpers() {
        assert_eq!(line_starts(""), Vec::<usize>::new());
        assert_eq!(line_starts("a\nb\n"), vec![0, 2]);
        assert_eq!(line_starts("a\nb"), vec![0, 2]);
        let starts = line_starts("ab\ncd\n");
        assert_eq!(line_of(&starts, 0), 0);
        assert_eq!(line_of(&starts, 2), 0);
        assert_eq!(line_of(&starts, 3), 1);
        assert_eq!(line_of(&starts, 6), 1);
    }

    #[test]
    fn hunk_ranges() {
        assert_eq!(hunk_range(0, 1), "1");
        assert_eq!(hunk_range(2, 2), "2,0");
        assert_eq!(hunk_range(0, 3), "1,3");
    }

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

    #[test]
    fn binary_sniffing() {
        assert!(binary_reason(b"hello\nworld\n").is_none());
        assert!(binary_reason(b"").is_none());
        assert!(binary_reason(b"abc\0def").is_some());
        assert!(binary_reason(&[0xff; 64]).is_some());
        assert!(binary_reason("héllo wörld".as_bytes()).is_none());
        // A multibyte character cut off by the end of the sample is fine.
        assert!(binary_reason(&"ab€".as_bytes()[..4]).is_none());
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
