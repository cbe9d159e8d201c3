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
//!
//! Memory is bounded by limits, not by the input: a line is read with a cap
//! checked while reading ([`MAX_LINE_CHARS`] for `read_file`,
//! [`MAX_SEARCH_LINE_BYTES`] for `search_files`) and a NUL byte makes a
//! file binary as soon as the chunk holding it is read; `patch` and
//! `write_file` refuse files and results over [`MAX_EDIT_FILE_BYTES`], the
//! size of a replacement being computed before it is built; the diff is
//! built in one forward pass and kept to [`MAX_DIFF_CHARS`].
//!
//! Special files are never read, written or searched: anything whose real
//! path (symlinks and `..` resolved) is under [`SPECIAL_ROOTS`] or on a
//! kernel file system mounted elsewhere, devices, FIFOs and sockets, and
//! files that report a size of 0 but are not empty. A FIFO is refused
//! before it is opened (opening one for reading blocks until a writer
//! comes), and files are opened non-blocking so one swapped in meanwhile
//! cannot block either.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use ignore::overrides::OverrideBuilder;
use ignore::WalkBuilder;
use regex::{Regex, RegexBuilder};
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
/// The largest file the file tools edit or write (bytes): `patch` refuses a
/// bigger file, and a replacement whose result would be bigger, and
/// `write_file` refuses bigger content. Nothing is written when refused.
pub const MAX_EDIT_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// The most bytes of ignore files (`.gitignore`, `.ignore`,
/// `.git/info/exclude`) `search_files` lets its walk hold at once: those of
/// a folder and of every folder above it, summed. The walk reads them whole
/// and compiles each line into a matcher (about half a MiB of memory per KiB
/// of wildcard patterns), so a folder over this budget, or with an ignore
/// file that is not a regular file, is not entered; the search is refused
/// when that folder is the search path or above it.
pub const MAX_IGNORE_BYTES: u64 = 128 * 1024;
/// Folders holding kernel interfaces and devices, not stored files: never
/// read, written or searched into, whatever path leads there.
pub const SPECIAL_ROOTS: [&str; 3] = ["/proc", "/sys", "/dev"];

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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// The `path` argument was empty.
    #[error("path must not be empty")]
    EmptyPath,
    /// The file does not exist; `similar` holds names from the same folder.
    #[error("File not found: {path}{}", similar_text(similar))]
    FileNotFound { path: String, similar: Vec<String> },
    /// The file or folder to search does not exist.
    #[error(
        "Path not found: {path}. Give an existing file or directory to search, \
         or leave path out to search the working directory"
    )]
    SearchPathNotFound { path: String },
    /// A folder was given where a file is needed.
    #[error("{path} is a directory, not a file. Use search_files to look inside it")]
    IsDirectory { path: String },
    /// The file looks binary and is not shown as text.
    #[error(
        "Cannot read binary file {path} ({reason}). Only text files can be read; \
         use the terminal to inspect binary files"
    )]
    Binary { path: String, reason: String },
    /// The file is not valid UTF-8, so it cannot be edited as text.
    #[error(
        "{path} is not valid UTF-8 text, so it cannot be patched. \
         Use write_file to replace it whole"
    )]
    NotUtf8 { path: String },
    /// The operating system refused access.
    #[error("Permission denied: cannot {action} {path}")]
    PermissionDenied { path: String, action: &'static str },
    /// Any other I/O failure.
    #[error("Failed to {action} {path}: {message}")]
    Io {
        path: String,
        action: &'static str,
        message: String,
    },
    /// `patch` was given an empty `old_string`.
    #[error("old_string must not be empty. To create or overwrite a whole file, use write_file")]
    EmptyOldString,
    /// `patch` was given the same text as `old_string` and `new_string`.
    #[error("old_string and new_string are identical, so there is nothing to change")]
    NoChange,
    /// `old_string` does not occur in the file.
    #[error(
        "Could not find old_string in {path}. It must match the file exactly, \
         including white space and indentation; use read_file to check the \
         current text{}",
        hint.as_ref().map_or_else(String::new, |hint| format!(". {hint}"))
    )]
    TextNotFound { path: String, hint: Option<String> },
    /// `old_string` occurs `count` times and `replace_all` was false.
    #[error(
        "old_string occurs {count} times in {path}. Include more surrounding \
         context to make it unique, or set replace_all to true to replace every \
         occurrence"
    )]
    NotUnique { path: String, count: u64 },
    /// The search pattern is not a valid regex.
    #[error("Invalid regex pattern {pattern:?}: {message}")]
    InvalidRegex { pattern: String, message: String },
    /// The `file_glob` is not a valid glob.
    #[error("Invalid file_glob {glob:?}: {message}")]
    InvalidGlob { glob: String, message: String },
    /// The path is a special file (see [`SPECIAL_ROOTS`]), not a regular one.
    #[error(
        "Cannot {action} {path}: {reason}. The file tools only work on regular files \
         outside {}; nothing was done",
        SPECIAL_ROOTS.join(", ")
    )]
    Special {
        path: String,
        action: &'static str,
        reason: String,
    },
    /// The file to patch is over [`MAX_EDIT_FILE_BYTES`].
    #[error(
        "{path} is {size} bytes, over the {} limit of patch; nothing was changed. \
         Edit files this large with the terminal",
        limit_text()
    )]
    FileTooLarge { path: String, size: u64 },
    /// The content to write is over [`MAX_EDIT_FILE_BYTES`].
    #[error(
        "The content for {path} is {size} bytes, over the {} limit of write_file; \
         nothing was written",
        limit_text()
    )]
    ContentTooLarge { path: String, size: u64 },
    /// Replacing would make the file bigger than [`MAX_EDIT_FILE_BYTES`].
    #[error(
        "Replacing the {count} occurrences of old_string would make {path} {size} \
         bytes, over the {} limit; nothing was changed. Replace fewer occurrences \
         (a longer old_string without replace_all) or use the terminal",
        limit_text()
    )]
    ResultTooLarge { path: String, count: u64, size: u64 },
}

/// The names [`FileError::FileNotFound`] suggests, as its message ends.
fn similar_text(similar: &[String]) -> String {
    if similar.is_empty() {
        String::new()
    } else {
        format!(". Similar files: {}", similar.join(", "))
    }
}

/// [`MAX_EDIT_FILE_BYTES`] as the errors say it.
fn limit_text() -> String {
    format!(
        "{}-byte ({} MiB)",
        MAX_EDIT_FILE_BYTES,
        MAX_EDIT_FILE_BYTES / (1024 * 1024)
    )
}

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

/// What [`read_line_capped`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// A line in the buffer; `cut` when bytes past the cap were read past.
    Text { cut: bool },
    /// A NUL byte: the file is binary. Reading stopped in that chunk.
    Nul,
}

/// Reads one line (up to and including `\n`) into `buf`, keeping at most
/// `cap` bytes of it and reading past the rest, so a line of any length
/// costs at most `cap` bytes of memory. Each chunk is checked for NUL as it
/// is read: a NUL ends the read with [`Line::Nul`] at once. Returns `None`
/// at end of file.
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<Line>> {
    buf.clear();
    let mut any = false;
    let mut cut = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(Line::Text { cut }));
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(pos) => (pos + 1, true),
            None => (chunk.len(), false),
        };
        if chunk[..take].contains(&0) {
            return Ok(Some(Line::Nul));
        }
        let room = cap.saturating_sub(buf.len());
        let keep = take.min(room);
        buf.extend_from_slice(&chunk[..keep]);
        if keep < take {
            cut = true;
        }
        reader.consume(take);
        if done {
            return Ok(Some(Line::Text { cut }));
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

/// Levenshtein distance over characters, on names of any length cut to
/// their first 128 characters (a file name has at most 255 bytes).
fn edit_distance(a: &str, b: &str) -> usize {
    let cut = |s: &str| s.char_indices().nth(128).map_or(s.len(), |(i, _)| i);
    strsim::levenshtein(&a[..cut(a)], &b[..cut(b)])
}

// ---------------------------------------------------------------------------
// Special files
// ---------------------------------------------------------------------------

/// Why the real path `real` (symlinks and `..` resolved) is off limits, if
/// it is: under one of [`SPECIAL_ROOTS`], or on a kernel file system
/// mounted elsewhere (a bind mount of `/proc`, say). A path that does not
/// exist yet is judged by its nearest existing folder.
fn special_location(real: &Path) -> Option<String> {
    if let Some(root) = SPECIAL_ROOTS.iter().find(|root| real.starts_with(root)) {
        let place = if real == Path::new(root) {
            (*root).to_owned()
        } else {
            format!("{} is under {root}, which", real.display())
        };
        return Some(format!(
            "{place} holds kernel interfaces and devices, not regular files"
        ));
    }
    kernel_fs(real).map(|kind| {
        format!(
            "{} is on a {kind} file system (kernel interfaces, not regular files)",
            real.display()
        )
    })
}

/// The kernel file system `path` (or its nearest existing folder) is on,
/// if it is one.
#[cfg(target_os = "linux")]
fn kernel_fs(path: &Path) -> Option<&'static str> {
    use nix::sys::statfs::{self, FsType};
    const KINDS: [(FsType, &str); 11] = [
        (statfs::PROC_SUPER_MAGIC, "proc"),
        (statfs::SYSFS_MAGIC, "sysfs"),
        (statfs::DEBUGFS_MAGIC, "debugfs"),
        (statfs::TRACEFS_MAGIC, "tracefs"),
        (statfs::SECURITYFS_MAGIC, "securityfs"),
        (statfs::CGROUP_SUPER_MAGIC, "cgroup"),
        (statfs::CGROUP2_SUPER_MAGIC, "cgroup2"),
        (statfs::BPF_FS_MAGIC, "bpf"),
        (statfs::DEVPTS_SUPER_MAGIC, "devpts"),
        (statfs::SELINUX_MAGIC, "selinuxfs"),
        (statfs::SMACK_MAGIC, "smackfs"),
    ];
    let kind = path
        .ancestors()
        .find_map(|p| statfs::statfs(p).ok())?
        .filesystem_type();
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|&(_, name)| name)
}

#[cfg(not(target_os = "linux"))]
fn kernel_fs(_path: &Path) -> Option<&'static str> {
    None
}

/// What `meta` describes when it is neither a regular file, a folder nor a
/// symlink: a device, a FIFO or a socket.
fn special_kind(meta: &fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// Opens the regular file `real` for reading without ever blocking in
/// `open`: non-blocking, so a FIFO swapped in after the checks cannot hang
/// the call, and checked again on the open handle.
fn open_regular(real: &Path) -> io::Result<(File, fs::Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(real)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

/// The real path a write to `full` reaches: resolved component by
/// component as the kernel would, symlinks followed (a dangling one is the
/// path itself) and `..` applied after them, with the folders that do not
/// exist yet taken as the plain folders `write_file` will create.
fn real_write_path(full: &Path) -> io::Result<PathBuf> {
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
                let is_link = fs::symlink_metadata(&real).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    if let Ok(target) = fs::canonicalize(&real) {
                        real = target;
                    }
                }
            }
        }
    }
    Ok(real)
}

/// The size of a file the search walk would read whole (an ignore file,
/// or a file naming a git folder), or why it is not safe to read. A
/// missing one (or a dangling symlink) is not read: size 0.
fn walk_read_size(path: &Path) -> Result<u64, String> {
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
fn first_line(path: &Path) -> Option<String> {
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
fn ignore_bytes(dir: &Path) -> Result<u64, String> {
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
struct IgnoreBudget {
    held: Vec<(PathBuf, u64)>,
    /// Folders not entered, and the reason for the first.
    skipped: u64,
    first_skipped: Option<String>,
}

impl IgnoreBudget {
    /// Starts with the bytes held for the search path and the folders
    /// above it.
    fn new(root: PathBuf, held: u64) -> Self {
        Self {
            held: vec![(root, held)],
            skipped: 0,
            first_skipped: None,
        }
    }

    /// Whether the walk may enter folder `dir`.
    fn admit(&mut self, dir: &Path) -> bool {
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

fn over_ignore_budget(dir: &Path, total: u64) -> String {
    format!(
        "the ignore files of {} and the folders above it hold {total} bytes, \
         over the {MAX_IGNORE_BYTES}-byte budget",
        dir.display()
    )
}

/// Opens `full` for reading text, refusing folders, special files and
/// binary files. Returns the open file (rewound), its size and its real
/// path (where a rewrite must land).
fn open_text_file(full: &Path, given: &str) -> Result<(File, u64, PathBuf), FileError> {
    let special = |reason: String| FileError::Special {
        path: given.to_owned(),
        action: "read",
        reason,
    };
    let real = match fs::canonicalize(full) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(FileError::FileNotFound {
                path: given.to_owned(),
                similar: similar_files(full, given),
            })
        }
        Err(e) => return Err(FileError::from_io(&e, given, "read")),
    };
    if let Some(reason) = special_location(&real) {
        return Err(special(reason));
    }
    // Looked at before opening: opening a FIFO for reading blocks.
    let meta = fs::metadata(&real).map_err(|e| FileError::from_io(&e, given, "read"))?;
    if meta.is_dir() {
        return Err(FileError::IsDirectory {
            path: given.to_owned(),
        });
    }
    if !meta.is_file() {
        let kind = special_kind(&meta).unwrap_or("a special file");
        return Err(special(format!("it is {kind}, not a regular file")));
    }
    if let Some(reason) = binary_extension(full) {
        return Err(FileError::Binary {
            path: given.to_owned(),
            reason,
        });
    }
    let (mut file, meta) =
        open_regular(&real).map_err(|e| FileError::from_io(&e, given, "read"))?;
    if !meta.is_file() {
        let kind = special_kind(&meta).unwrap_or("a special file");
        return Err(special(format!("it is {kind}, not a regular file")));
    }
    sniff(&mut file, meta.len(), given)?;
    Ok((file, meta.len(), real))
}

/// Reads the start of an open file of reported size `size` and rewinds it:
/// refuses it when it reports a size of 0 but is not empty (the kernel's
/// files do, wherever they are mounted) or when it looks binary.
fn sniff(file: &mut File, size: u64, given: &str) -> Result<(), FileError> {
    let mut sample = vec![0u8; BINARY_SAMPLE_BYTES];
    let n = read_sample(file, &mut sample).map_err(|e| FileError::from_io(&e, given, "read"))?;
    if size == 0 && n > 0 {
        return Err(FileError::Special {
            path: given.to_owned(),
            action: "read",
            reason: "it reports a size of 0 bytes but is not empty, as kernel files do, \
                     so it is not a regular file"
                .to_owned(),
        });
    }
    if let Some(reason) = binary_reason(&sample[..n]) {
        return Err(FileError::Binary {
            path: given.to_owned(),
            reason,
        });
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| FileError::from_io(&e, given, "read"))?;
    Ok(())
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

// ---------------------------------------------------------------------------
// write_file
// ---------------------------------------------------------------------------

/// Writes `bytes` to `target` by way of a temporary file in the same folder
/// and a rename, so readers see either the old or the new file whole.
/// A new file gets the usual permissions (0666 less the umask), an existing
/// file keeps its own.
fn atomic_write(target: &Path, bytes: &[u8], given: &str) -> Result<(), FileError> {
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

// ---------------------------------------------------------------------------
// patch
// ---------------------------------------------------------------------------

/// Replaces `old_string` with `new_string` in a file, exactly (no fuzzy
/// matching). Without `replace_all`, `old_string` must occur exactly once.
/// The file is rewritten atomically and a unified diff is returned.
///
/// A file over [`MAX_EDIT_FILE_BYTES`] is refused, and so is a replacement
/// whose result would be: its size (file size plus occurrences times the
/// size difference) is computed before anything is built.
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
    let (file, size, real) = open_text_file(&full, path)?;
    let too_large = |size: u64| FileError::FileTooLarge {
        path: path.to_owned(),
        size,
    };
    if size > MAX_EDIT_FILE_BYTES {
        return Err(too_large(size));
    }
    // The size is read again through a capped reader: it may have grown.
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_EDIT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::from_io(&e, path, "read"))?;
    if bytes.len() as u64 > MAX_EDIT_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let old = String::from_utf8(bytes).map_err(|_| FileError::NotUtf8 {
        path: path.to_owned(),
    })?;

    let count = old.matches(old_string).count() as u64;
    if count == 0 {
        return Err(FileError::TextNotFound {
            path: path.to_owned(),
            hint: not_found_hint(&old, old_string),
        });
    }
    if count > 1 && !replace_all {
        return Err(FileError::NotUnique {
            path: path.to_owned(),
            count,
        });
    }
    let new_size = (old.len() as u64)
        .saturating_sub(count.saturating_mul(old_string.len() as u64))
        .saturating_add(count.saturating_mul(new_string.len() as u64));
    if new_size > MAX_EDIT_FILE_BYTES {
        return Err(FileError::ResultTooLarge {
            path: path.to_owned(),
            count,
            size: new_size,
        });
    }
    let mut new = String::with_capacity(new_size as usize);
    let mut copied = 0;
    for (site, _) in old.match_indices(old_string) {
        new.push_str(&old[copied..site]);
        new.push_str(new_string);
        copied = site + old_string.len();
    }
    new.push_str(&old[copied..]);
    atomic_write(&real, new.as_bytes(), path)?;
    let diff = unified_diff(&old, &new, old_string, new_string, path);
    Ok(PatchOutput {
        resolved_path: display(&full),
        replacements: count,
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

// The diff is built in one forward pass over the old and the new text:
// memory is a few counters and the shown text, time is linear in the file
// (several replacements on one long line cost no rescans of it). Each
// helper below moves forward only; asked for an earlier position it starts
// over from the beginning, so a wrong order costs time, never a wrong answer.
// A general line differ (`similar`, with its deadline) was tried here and
// kept out: its line tables of both texts come before any deadline, 448 MB
// for a one-line change at the end of a 10 Mi-line file (within the input
// cap; 38 MB here). The replacement sites already say which lines changed.

fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// Lines in `text`, as `split_inclusive('\n')` counts them.
fn line_count(text: &str) -> usize {
    count_newlines(text.as_bytes()) + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The start of the line holding a byte position.
#[derive(Clone)]
struct LineStart<'a> {
    text: &'a [u8],
    scanned: usize,
    start: usize,
}

impl<'a> LineStart<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            scanned: 0,
            start: 0,
        }
    }

    fn of(&mut self, pos: usize) -> usize {
        let pos = pos.min(self.text.len());
        if pos < self.scanned {
            (self.scanned, self.start) = (0, 0);
        }
        if let Some(i) = self.text[self.scanned..pos]
            .iter()
            .rposition(|&b| b == b'\n')
        {
            self.start = self.scanned + i + 1;
        }
        self.scanned = pos;
        self.start
    }
}

/// The end of the line holding a byte position: just after its `\n`, or
/// the end of the text.
#[derive(Clone)]
struct LineEnd<'a> {
    text: &'a [u8],
    from: usize,
    end: usize,
}

impl<'a> LineEnd<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            from: 0,
            end: 0,
        }
    }

    fn of(&mut self, pos: usize) -> usize {
        let pos = pos.min(self.text.len());
        if pos < self.from || pos >= self.end {
            self.from = pos;
            self.end = self.text[pos..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(self.text.len(), |i| pos + i + 1);
        }
        self.end
    }
}

/// The index of the line starting at a byte position, or the line count at
/// the end of the text.
#[derive(Clone)]
struct LineIndex<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
    count: usize,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            pos: 0,
            line: 0,
            count: line_count(text),
        }
    }

    fn of(&mut self, pos: usize) -> usize {
        if pos >= self.text.len() {
            return self.count;
        }
        if pos < self.pos {
            (self.pos, self.line) = (0, 0);
        }
        self.line += count_newlines(&self.text[self.pos..pos]);
        self.pos = pos;
        self.line
    }
}

/// Hands out whole lines (with their `\n`) by index.
struct LineWalk<'a> {
    text: &'a str,
    rest: std::str::SplitInclusive<'a, char>,
    next: usize,
}

impl<'a> LineWalk<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            rest: text.split_inclusive('\n'),
            next: 0,
        }
    }

    /// Calls `each` with lines `from..to` (0-based) that exist.
    fn each(&mut self, from: usize, to: usize, mut each: impl FnMut(&'a str)) {
        if from < self.next {
            self.rest = self.text.split_inclusive('\n');
            self.next = 0;
        }
        while self.next < from {
            if self.rest.next().is_none() {
                return;
            }
            self.next += 1;
        }
        while self.next < to {
            let Some(line) = self.rest.next() else {
                return;
            };
            each(line);
            self.next += 1;
        }
    }
}

/// A changed run of lines: old lines `old.0..old.1`, new lines `new.0..new.1`.
#[derive(Debug, Clone, Copy)]
struct Change {
    old: (usize, usize),
    new: (usize, usize),
}

/// The changes of a replace-all, in order, found from the replacement
/// sites without a general diff algorithm: each site changes the whole
/// lines it touches, and sites sharing or touching a line make one change.
#[derive(Clone)]
struct Changes<'a> {
    old: &'a str,
    new: &'a str,
    old_len: usize,
    new_len: usize,
    old_ends_line: bool,
    sites: std::iter::Peekable<std::str::MatchIndices<'a, &'a str>>,
    /// Sites looked at so far.
    seen: usize,
    /// Sites in the changes returned so far.
    done: usize,
    starts: LineStart<'a>,
    ends: LineEnd<'a>,
    old_index: LineIndex<'a>,
    new_index: LineIndex<'a>,
}

impl<'a> Changes<'a> {
    fn new(old: &'a str, new: &'a str, old_string: &'a str, new_string: &str) -> Self {
        Self {
            old,
            new,
            old_len: old_string.len(),
            new_len: new_string.len(),
            old_ends_line: old_string.ends_with('\n'),
            sites: old.match_indices(old_string).peekable(),
            seen: 0,
            done: 0,
            starts: LineStart::new(old),
            ends: LineEnd::new(old),
            old_index: LineIndex::new(old),
            new_index: LineIndex::new(new),
        }
    }

    /// Where text at old position `pos` is in the new text, with `n`
    /// replacements before it.
    fn shift(&self, pos: usize, n: usize) -> usize {
        (pos + n * self.new_len).saturating_sub(n * self.old_len)
    }

    /// The byte span of whole old lines touched by the site at `site`. It
    /// ends right after the site only when both the old and the new text
    /// end a line there; otherwise it runs to the end of the line the site
    /// ends in.
    fn span(&mut self, site: usize) -> (usize, usize) {
        self.seen += 1;
        let start = self.starts.of(site);
        let after = site + self.old_len;
        let new_after = self.shift(after, self.seen);
        let new_ends_line =
            new_after == 0 || self.new.as_bytes().get(new_after - 1) == Some(&b'\n');
        let clean = after >= self.old.len() || (self.old_ends_line && new_ends_line);
        let end = if clean {
            after.min(self.old.len())
        } else {
            self.ends.of(after)
        };
        (start, end)
    }
}

impl Iterator for Changes<'_> {
    type Item = Change;

    fn next(&mut self) -> Option<Change> {
        let (site, _) = self.sites.next()?;
        let (start, mut end) = self.span(site);
        let mut count = 1;
        while let Some(&(next, _)) = self.sites.peek() {
            if self.starts.of(next) > end {
                break;
            }
            self.sites.next();
            end = end.max(self.span(next).1);
            count += 1;
        }
        // Text outside the sites is unchanged, so a position moves by the
        // size difference of the replacements before it.
        let new_start = self.shift(start, self.done);
        self.done += count;
        let new_end = self.shift(end, self.done);
        Some(Change {
            old: (self.old_index.of(start), self.old_index.of(end)),
            new: (self.new_index.of(new_start), self.new_index.of(new_end)),
        })
    }
}

/// Collects diff lines up to [`MAX_DIFF_CHARS`] characters and counts the
/// lines after the first that did not fit.
#[derive(Default)]
struct DiffSink {
    out: String,
    chars: usize,
    cut_lines: usize,
}

impl DiffSink {
    /// One line, given in parts that end with its `\n`.
    fn line(&mut self, parts: &[&str]) {
        if self.cut_lines == 0 {
            let n: usize = parts.iter().map(|p| p.chars().count()).sum();
            if self.chars + n <= MAX_DIFF_CHARS {
                parts.iter().for_each(|p| self.out.push_str(p));
                self.chars += n;
                return;
            }
        }
        self.cut_lines += 1;
    }

    /// A line of the file, marked ` `, `-` or `+`.
    fn file_line(&mut self, mark: &str, line: &str) {
        if line.ends_with('\n') {
            self.line(&[mark, line]);
        } else {
            self.line(&[mark, line, "\n"]);
            self.line(&["\\ No newline at end of file\n"]);
        }
    }

    fn finish(mut self) -> String {
        if self.cut_lines > 0 {
            self.out.push_str(&format!(
                "... [diff truncated, {} more lines]\n",
                self.cut_lines
            ));
        }
        self.out
    }
}

/// A unified diff of replacing every `old_string` in `old` by `new_string`
/// (giving `new`), with [`DIFF_CONTEXT`] lines of context, cut after
/// [`MAX_DIFF_CHARS`] characters.
fn unified_diff(old: &str, new: &str, old_string: &str, new_string: &str, name: &str) -> String {
    let changes = Changes::new(old, new, old_string, new_string);
    let (old_count, new_count) = (line_count(old), line_count(new));
    let mut sink = DiffSink::default();
    sink.line(&["--- a/", name, "\n"]);
    sink.line(&["+++ b/", name, "\n"]);
    let (mut old_lines, mut new_lines) = (LineWalk::new(old), LineWalk::new(new));
    // One pass finds where each hunk ends (its header needs that), a second
    // one, behind it, prints the hunk.
    let mut ahead = changes.clone().peekable();
    let mut body = changes;
    while let Some(first) = ahead.next() {
        // Changes whose context windows touch share one hunk.
        let (mut last, mut n) = (first, 1);
        while let Some(next) = ahead.next_if(|c| c.old.0 <= last.old.1 + 2 * DIFF_CONTEXT) {
            last = next;
            n += 1;
        }
        let before = first.old.0.min(first.new.0).min(DIFF_CONTEXT);
        let after = old_count
            .saturating_sub(last.old.1)
            .min(new_count.saturating_sub(last.new.1))
            .min(DIFF_CONTEXT);
        let (old_from, old_to) = (first.old.0 - before, last.old.1 + after);
        let (new_from, new_to) = (first.new.0 - before, last.new.1 + after);
        sink.line(&[&format!(
            "@@ -{} +{} @@\n",
            hunk_range(old_from, old_to),
            hunk_range(new_from, new_to)
        )]);
        let mut cursor = old_from;
        for change in body.by_ref().take(n) {
            old_lines.each(cursor, change.old.0, |l| sink.file_line(" ", l));
            old_lines.each(change.old.0, change.old.1, |l| sink.file_line("-", l));
            new_lines.each(change.new.0, change.new.1, |l| sink.file_line("+", l));
            cursor = change.old.1;
        }
        old_lines.each(cursor, old_to, |l| sink.file_line(" ", l));
    }
    sink.finish()
}

/// A unified-diff range for lines `from..to` (0-based), in the usual
/// `start,count` form: `start` alone when the count is 1, and the line
/// before when the count is 0.
fn hunk_range(from: usize, to: usize) -> String {
    match to.saturating_sub(from) {
        1 => format!("{}", from + 1),
        0 => format!("{from},0"),
        n => format!("{},{n}", from + 1),
    }
}

// ---------------------------------------------------------------------------
// search_files
// ---------------------------------------------------------------------------

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
    fn line_helpers() {
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("a\nb\n"), 2);
        assert_eq!(line_count("a\nb"), 2);
        let text = "ab\ncd\nef";
        let mut starts = LineStart::new(text);
        assert_eq!([0, 2, 3, 5, 6, 8].map(|p| starts.of(p)), [0, 0, 3, 3, 6, 6]);
        // Asked for an earlier position, it starts over.
        assert_eq!(starts.of(1), 0);
        let mut ends = LineEnd::new(text);
        assert_eq!([0, 1, 2, 3, 6, 8].map(|p| ends.of(p)), [3, 3, 3, 6, 8, 8]);
        assert_eq!(ends.of(0), 3);
        let mut index = LineIndex::new(text);
        assert_eq!([0, 3, 6, 8].map(|p| index.of(p)), [0, 1, 2, 3]);
        assert_eq!(index.of(3), 1);
        let mut walk = LineWalk::new(text);
        let mut seen = Vec::new();
        walk.each(1, 9, |l| seen.push(l));
        walk.each(0, 1, |l| seen.push(l));
        assert_eq!(seen, ["cd\n", "ef", "ab\n"]);
    }

    #[test]
    fn line_reads_are_capped_and_stop_at_nul() {
        let mut buf = Vec::new();
        let mut reader = io::BufReader::with_capacity(4, &b"abcdefgh\nxy\nz"[..]);
        let mut next = || read_line_capped(&mut reader, &mut buf, 3).unwrap();
        assert_eq!(next(), Some(Line::Text { cut: true }));
        assert_eq!(next(), Some(Line::Text { cut: false }));
        assert_eq!(next(), Some(Line::Text { cut: false }));
        assert_eq!(next(), None);
        // The NUL is seen in the chunk holding it, long before the line's end.
        let mut text = b"ok\n".to_vec();
        text.extend_from_slice(b"aa\0");
        text.extend(std::iter::repeat_n(b'b', 100_000));
        let mut reader = io::BufReader::with_capacity(8, &text[..]);
        assert_eq!(
            read_line_capped(&mut reader, &mut buf, 1 << 20).unwrap(),
            Some(Line::Text { cut: false })
        );
        assert_eq!(
            read_line_capped(&mut reader, &mut buf, 1 << 20).unwrap(),
            Some(Line::Nul)
        );
        assert!(buf.len() <= 8, "held {} bytes", buf.len());
    }

    #[test]
    fn files_reporting_size_0_with_content_are_refused() {
        // The /proc pattern, met through an open handle as it would be on
        // a kernel file system mounted anywhere.
        let mut file = File::open("/proc/self/status").unwrap();
        let size = file.metadata().unwrap().len();
        assert_eq!(size, 0);
        let err = sniff(&mut file, size, "status").unwrap_err();
        assert!(matches!(err, FileError::Special { .. }), "{err:?}");
        assert!(err.to_string().contains("size of 0 bytes"), "{err}");
        // A really empty file and a text file pass, rewound.
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("e"), "").unwrap();
        let mut empty = File::open(dir.path().join("e")).unwrap();
        sniff(&mut empty, 0, "e").unwrap();
        fs::write(dir.path().join("t"), "text\n").unwrap();
        let mut text = File::open(dir.path().join("t")).unwrap();
        sniff(&mut text, 5, "t").unwrap();
        let mut back = String::new();
        text.read_to_string(&mut back).unwrap();
        assert_eq!(back, "text\n");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn kernel_file_systems_are_recognised_where_mounted() {
        assert_eq!(kernel_fs(Path::new("/proc/self")), Some("proc"));
        // Judged by the nearest existing folder when the path is missing.
        assert_eq!(kernel_fs(Path::new("/proc/no/such/file")), Some("proc"));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(kernel_fs(dir.path()), None);
        assert_eq!(kernel_fs(&dir.path().join("missing/x")), None);
    }

    #[test]
    fn write_paths_resolve_like_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("/proc", dir.path().join("p")).unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        // Through a symlink, then `..` from where it leads.
        assert_eq!(
            real_write_path(&dir.path().join("p/self/../x")).unwrap(),
            Path::new("/proc/x")
        );
        // `..` out of folders still to be created, then into a symlink.
        assert_eq!(
            real_write_path(&dir.path().join("new/../p/y")).unwrap(),
            Path::new("/proc/y")
        );
        assert_eq!(
            real_write_path(&dir.path().join("./d/new/../z.txt")).unwrap(),
            real_dir.join("d/z.txt")
        );
        assert!(special_location(Path::new("/proc/y")).is_some());
        assert!(special_location(Path::new("/sys")).is_some());
        assert!(special_location(Path::new("/device")).is_none());
        assert!(special_location(&real_dir.join("d/z.txt")).is_none());
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
