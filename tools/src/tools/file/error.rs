//! [`FileError`]: why a file tool failed, in words meant for the model.

use std::io;

/// Folders holding kernel interfaces and devices, not stored files: never
/// read, written or searched into, whatever path leads there.
pub const SPECIAL_ROOTS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// The largest file the file tools edit or write (bytes): `patch` refuses a
/// bigger file, and a replacement whose result would be bigger, and
/// `write_file` refuses bigger content. Nothing is written when refused.
pub const MAX_EDIT_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Why a file tool failed. `Display` gives a message meant for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// The `path` argument was empty.
    #[error("path must not be empty")]
    EmptyPath,
    /// A guard refused the path (see `guard.rs`); the text says why.
    #[error("{0}")]
    Refused(String),
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
    /// `old_string` was not found, even by the fuzzy strategies; `hint`
    /// shows the closest lines of the file.
    #[error(
        "Could not find old_string in {path}, not even allowing for differences \
         in indentation, white space, escapes or typographic quotes. Use \
         read_file to check the current text, or search_files to find it{}",
        hint.as_ref().map_or_else(String::new, |hint| format!(
            "\n\nThe closest lines (did you mean one of these?):\n{hint}"
        ))
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
    /// `old_string` and `new_string` both carry `\'` or `\"` that the
    /// matched text of the file does not: a tool-call escaping artifact.
    #[error(
        "Nothing was changed in {path}: old_string and new_string contain {sequence} \
         but the matching text in the file does not. The backslash is most likely \
         an escaping mistake; read the file again and send the quotes without it"
    )]
    EscapeDrift { path: String, sequence: String },
    /// The fuzzy search for `old_string` needed more comparisons than allowed.
    #[error(
        "Gave up looking for old_string in {path}: no exact match, and the fuzzy \
         search would take too long for a file and old_string this large. Give a \
         shorter old_string copied exactly from the file (read_file shows it)"
    )]
    MatchTooComplex { path: String },
    /// `patch` was given an unknown `mode`.
    #[error(
        "Unknown mode {mode:?}: use \"replace\" (old_string/new_string) or \"patch\" (a V4A patch)"
    )]
    UnknownMode { mode: String },
    /// A required argument of the chosen `mode` is missing.
    #[error("{what}")]
    MissingArgument { what: &'static str },
    /// A V4A header path climbs out with `..`.
    #[error(
        "The patch names {path:?}, which contains a '..' component. Name files in \
         patch headers by a path from the working directory without '..', or by \
         an absolute path"
    )]
    PatchTraversal { path: String },
    /// A V4A move's destination exists already.
    #[error("{path} already exists; nothing was moved onto it")]
    MoveTargetExists { path: String },
    /// The V4A patch does not parse.
    #[error("Could not parse the patch: {message}")]
    PatchParse { message: String },
    /// Checking the V4A patch failed; nothing was written.
    #[error(
        "The patch was not applied and no file was changed:{}",
        errors.iter().map(|e| format!("\n  - {e}")).collect::<String>()
    )]
    PatchInvalid { errors: Vec<String> },
    /// Some V4A operations failed after others were done.
    #[error(
        "The patch was applied only in part (check the files, e.g. with git diff). \
         Done: {done}. Failed:{}",
        errors.iter().map(|e| format!("\n  - {e}")).collect::<String>()
    )]
    PatchPartial { errors: Vec<String>, done: String },
    /// Content for a `.json`, `.yaml`/`.yml` or `.toml` file does not parse.
    #[error(
        "Refused to write {path}: the content is not valid {format} ({message}, \
         line {line}, column {column}). Nothing was written or changed; fix the \
         content and write it again"
    )]
    InvalidSyntax {
        path: String,
        format: &'static str,
        message: String,
        line: u64,
        column: u64,
    },
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
    pub(super) fn from_io(err: &io::Error, path: &str, action: &'static str) -> Self {
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
