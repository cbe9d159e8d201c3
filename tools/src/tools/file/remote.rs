//! The file tools on another machine (a remote backend's,
//! `crate::backend::shell::Shell`): the same answers as on this one,
//! from the same page, match, diff and patch code, with the file's bytes
//! moved by small `sh` scripts through the backend's connection.
//!
//! What holds: the read block-list and the write deny-list by name, on
//! the path as given (absolute: `~` is the machine's home, a relative path
//! joins the session's directory there) and on its real path as the
//! machine resolves it (`readlink -f`), checked before anything is
//! written and before a read's content is used; the size caps; the
//! syntax check of JSON, YAML and TOML; redaction and control-character
//! escaping. What differs: a file is read whole up to
//! [`MAX_EDIT_FILE_BYTES`] (larger ones are refused, not paged), the read
//! state (unchanged pages, stale writes) is this machine's only, and
//! search runs the machine's `find` and `grep -E` (POSIX extended regular
//! expressions, hidden files and folders skipped, no ignore files, no
//! context lines; file names matched by `find -name`, in name order).

use std::borrow::Cow;
use std::io::BufReader;
use std::path::Path;
use std::time::Duration;

use hermes_procs::redact::{redact_for, Scope};
use hermes_procs::shell_quote;
use hermes_runtime::ToolContext;

use super::error::{FileError, MAX_EDIT_FILE_BYTES};
use super::guard::Guard;
use super::patch::{self, PatchOutput};
use super::read::{self, ReadFileOutput};
use super::search::{OutputMode, SearchMatch, SearchOutput, SearchRequest, Target};
use super::write::{check_syntax, WriteFileOutput, BOM};
use super::{common, diff, fuzzy, v4a};
use crate::backend::shell::Shell;

/// The longest one file operation may take.
const FILE_TIMEOUT: Duration = Duration::from_secs(60);

/// `path` as the machine names it: `~` its home, relative joined to the
/// session's directory there.
fn absolute(shell: &Shell, path: &str) -> Result<String, FileError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(FileError::EmptyPath);
    }
    // The session's directory and home there are known once it is set up.
    shell
        .prepare()
        .map_err(|e| backend_error(path, "reach", e))?;
    if path.contains('\0') {
        return Err(FileError::Refused(format!(
            "Refused: the path {path:?} holds a NUL character"
        )));
    }
    Ok(if path == "~" {
        shell.home()
    } else if let Some(rest) = path.strip_prefix("~/") {
        format!("{}/{rest}", shell.home().trim_end_matches('/'))
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", shell.cwd().trim_end_matches('/'))
    })
}

fn backend_error(path: &str, action: &'static str, why: String) -> FileError {
    FileError::Io {
        path: path.to_string(),
        action,
        message: why,
    }
}

/// The real path of `abs` on the machine (its folder's, with its name,
/// for a file that does not exist yet).
fn real_path(shell: &Shell, abs: &str, given: &str) -> Result<String, FileError> {
    let script = format!(
        "p={p}\nif [ -e \"$p\" ] || [ -L \"$p\" ]; then r=$(readlink -f -- \"$p\") || r=$p\nelse d=$(dirname -- \"$p\"); b=$(basename -- \"$p\"); r=$(readlink -f -- \"$d\" 2>/dev/null) && r=\"${{r%/}}/$b\" || r=$p; fi\nprintf '%s' \"$r\"\n",
        p = shell_quote(abs)
    );
    let exec = shell
        .exec(&script, None, FILE_TIMEOUT, 64 * 1024)
        .map_err(|e| backend_error(given, "resolve", e))?;
    let real = String::from_utf8_lossy(&exec.stdout).to_string();
    Ok(if real.is_empty() {
        abs.to_string()
    } else {
        real
    })
}

/// A file's real path and bytes, after the read guard.
fn fetch(
    ctx: &ToolContext,
    shell: &Shell,
    given: &str,
    action: &'static str,
) -> Result<(String, Vec<u8>), FileError> {
    let abs = absolute(shell, given)?;
    let guard = Guard::for_remote(ctx, &shell.cwd());
    if let Some(refused) = guard.remote_read_error(Path::new(&abs), Path::new(&abs)) {
        return Err(FileError::Refused(refused));
    }
    let script = format!(
        "p={p}\nr=$(readlink -f -- \"$p\" 2>/dev/null) || r=$p\nprintf '%s\\000' \"$r\"\n[ -e \"$p\" ] || exit 20\n[ -d \"$p\" ] && exit 21\n[ -f \"$p\" ] || exit 22\n[ -r \"$p\" ] || exit 23\nhead -c {cap} -- \"$p\"\n",
        p = shell_quote(&abs),
        cap = MAX_EDIT_FILE_BYTES + 1
    );
    let exec = shell
        .exec(
            &script,
            None,
            FILE_TIMEOUT,
            MAX_EDIT_FILE_BYTES as usize + 8192,
        )
        .map_err(|e| backend_error(given, action, e))?;
    let (real, bytes) = match exec.stdout.iter().position(|b| *b == 0) {
        Some(at) => (
            String::from_utf8_lossy(&exec.stdout[..at]).to_string(),
            exec.stdout[at + 1..].to_vec(),
        ),
        None => (abs.clone(), Vec::new()),
    };
    if let Some(refused) = guard.remote_read_error(Path::new(&abs), Path::new(&real)) {
        return Err(FileError::Refused(refused));
    }
    match exec.code {
        0 => {}
        20 => {
            return Err(FileError::FileNotFound {
                path: given.to_string(),
                similar: Vec::new(),
            })
        }
        21 => {
            return Err(FileError::IsDirectory {
                path: given.to_string(),
            })
        }
        22 => {
            return Err(FileError::Refused(format!(
                "Refused to {action} {given}: it is not a regular file"
            )))
        }
        23 => {
            return Err(FileError::PermissionDenied {
                path: given.to_string(),
                action,
            })
        }
        code => {
            return Err(backend_error(
                given,
                action,
                format!(
                    "exit {code} on the {} backend: {}",
                    shell.name(),
                    exec.stderr
                ),
            ))
        }
    }
    if bytes.len() as u64 > MAX_EDIT_FILE_BYTES {
        return Err(FileError::FileTooLarge {
            path: given.to_string(),
            size: bytes.len() as u64,
        });
    }
    Ok((real, bytes))
}

/// The write guard on the machine's path: its real path, or the refusal.
fn check_write(
    ctx: &ToolContext,
    shell: &Shell,
    given: &str,
    action: &str,
) -> Result<String, FileError> {
    let abs = absolute(shell, given)?;
    let real = real_path(shell, &abs, given)?;
    let guard = Guard::for_remote(ctx, &shell.cwd());
    match guard.write_error(Path::new(&abs), Path::new(&real), action) {
        Some(refused) => Err(FileError::Refused(refused)),
        None => Ok(abs),
    }
}

/// Writes `content` whole to `abs` (checked already), creating its folder;
/// (created, dirs created).
fn put(shell: &Shell, abs: &str, given: &str, content: &[u8]) -> Result<(bool, bool), FileError> {
    let script = format!(
        "p={p}\nd=$(dirname -- \"$p\")\n[ -d \"$p\" ] && exit 21\nc=0; [ -e \"$p\" ] || c=1\nm=0; [ -d \"$d\" ] || {{ mkdir -p -- \"$d\" || exit 24; m=1; }}\nif [ $c = 1 ]; then t=\"$d/.hermes-write-$$\"; cat > \"$t\" && mv -f -- \"$t\" \"$p\" || {{ rm -f -- \"$t\"; exit 25; }}\nelse cat > \"$p\" || exit 25; fi\nprintf '%s %s' $c $m\n",
        p = shell_quote(abs)
    );
    let exec = shell
        .exec(&script, Some(content), FILE_TIMEOUT, 64)
        .map_err(|e| backend_error(given, "write", e))?;
    match exec.code {
        0 => {
            let text = String::from_utf8_lossy(&exec.stdout);
            let mut flags = text.split(' ');
            Ok((flags.next() == Some("1"), flags.next() == Some("1")))
        }
        21 => Err(FileError::IsDirectory {
            path: given.to_string(),
        }),
        code => Err(backend_error(
            given,
            "write",
            format!(
                "exit {code} on the {} backend: {}",
                shell.name(),
                exec.stderr
            ),
        )),
    }
}

/// `read_file` on the machine.
pub fn read_file(
    ctx: &ToolContext,
    shell: &Shell,
    path: &str,
    offset: Option<u64>,
    limit: Option<u64>,
    max_line: usize,
) -> Result<ReadFileOutput, FileError> {
    let (_real, bytes) = fetch(ctx, shell, path, "read")?;
    let (offset, limit) = read::page_bounds(offset, limit);
    let size = bytes.len() as u64;
    let mut out = read::page(
        BufReader::new(&bytes[..]),
        path,
        offset,
        limit,
        size,
        max_line.clamp(1, read::MAX_LINE_CHARS),
    )?;
    if let Cow::Owned(clean) = redact_for(ctx.profile(), &out.content, Scope::FileRead) {
        out.content = clean;
    }
    Ok(out)
}

/// `write_file` on the machine.
pub fn write_file(
    ctx: &ToolContext,
    shell: &Shell,
    path: &str,
    content: &str,
) -> Result<WriteFileOutput, FileError> {
    if content.len() as u64 > MAX_EDIT_FILE_BYTES {
        return Err(FileError::ContentTooLarge {
            path: path.to_string(),
            size: content.len() as u64,
        });
    }
    let abs = check_write(ctx, shell, path, "write")?;
    check_syntax(path, content)?;
    let (created, dirs_created) = put(shell, &abs, path, content.as_bytes())?;
    Ok(WriteFileOutput {
        resolved_path: abs,
        bytes_written: content.len() as u64,
        dirs_created,
        created,
        warning: None,
    })
}

/// `patch` mode replace on the machine.
pub fn patch_replace(
    ctx: &ToolContext,
    shell: &Shell,
    path: &str,
    old_string: &str,
    new_string: &str,
    replace_all: bool,
) -> Result<PatchOutput, FileError> {
    let abs = check_write(ctx, shell, path, "patch")?;
    if old_string.is_empty() {
        return Err(FileError::EmptyOldString);
    }
    if old_string == new_string {
        return Err(FileError::NoChange);
    }
    let (_real, bytes) = fetch(ctx, shell, path, "read")?;
    let text = String::from_utf8(bytes).map_err(|_| FileError::NotUtf8 {
        path: path.to_owned(),
    })?;
    let (bom, old) = match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text.as_str()),
    };
    let replaced = fuzzy::find_and_replace(
        old,
        old_string,
        new_string,
        replace_all,
        MAX_EDIT_FILE_BYTES,
    )
    .map_err(|e| patch::match_error(e, path))?;
    let count = replaced.count;
    let strategy = replaced.strategy;
    let new = patch::with_file_endings(old, replaced.content, count, path)?;
    check_syntax(path, &new)?;
    put(shell, &abs, path, format!("{bom}{new}").as_bytes())?;
    Ok(PatchOutput {
        success: true,
        resolved_path: Some(abs.clone()),
        replacements: Some(count as u64),
        match_strategy: (strategy != fuzzy::Strategy::Exact).then(|| strategy.name()),
        diff: diff::unified(old, &new, path),
        files_modified: vec![abs],
        ..PatchOutput::default()
    })
}

/// The machine's files as a V4A patch sees them, every path through the
/// write guard.
struct RemoteFiles<'a> {
    ctx: &'a ToolContext,
    shell: &'a Shell,
}

impl v4a::Files for RemoteFiles<'_> {
    fn read(&mut self, path: &str) -> Result<String, FileError> {
        check_write(self.ctx, self.shell, path, "patch")?;
        let (_real, bytes) = fetch(self.ctx, self.shell, path, "read")?;
        String::from_utf8(bytes).map_err(|_| FileError::NotUtf8 {
            path: path.to_owned(),
        })
    }

    fn write(&mut self, path: &str, content: &str) -> Result<(), FileError> {
        let abs = check_write(self.ctx, self.shell, path, "patch")?;
        check_syntax(path, content)?;
        put(self.shell, &abs, path, content.as_bytes()).map(|_| ())
    }

    fn delete(&mut self, path: &str) -> Result<(), FileError> {
        let abs = check_write(self.ctx, self.shell, path, "delete")?;
        let script = format!(
            "p={p}\n[ -d \"$p\" ] && exit 21\n[ -e \"$p\" ] || exit 20\nrm -f -- \"$p\"\n",
            p = shell_quote(&abs)
        );
        let exec = self
            .shell
            .exec(&script, None, FILE_TIMEOUT, 64)
            .map_err(|e| backend_error(path, "delete", e))?;
        match exec.code {
            0 => Ok(()),
            20 => Err(FileError::FileNotFound {
                path: path.to_string(),
                similar: Vec::new(),
            }),
            21 => Err(FileError::IsDirectory {
                path: path.to_string(),
            }),
            code => Err(backend_error(
                path,
                "delete",
                format!(
                    "exit {code} on the {} backend: {}",
                    self.shell.name(),
                    exec.stderr
                ),
            )),
        }
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), FileError> {
        let src = check_write(self.ctx, self.shell, from, "move")?;
        let dst = check_write(self.ctx, self.shell, to, "move")?;
        let script = format!(
            "[ -e {d} ] && exit 26\n[ -f {s} ] || exit 20\nmkdir -p -- \"$(dirname -- {d})\" && mv -- {s} {d}\n",
            s = shell_quote(&src),
            d = shell_quote(&dst)
        );
        let exec = self
            .shell
            .exec(&script, None, FILE_TIMEOUT, 64)
            .map_err(|e| backend_error(from, "move", e))?;
        match exec.code {
            0 => Ok(()),
            20 => Err(FileError::FileNotFound {
                path: from.to_string(),
                similar: Vec::new(),
            }),
            26 => Err(FileError::MoveTargetExists {
                path: to.to_string(),
            }),
            code => Err(backend_error(
                from,
                "move",
                format!(
                    "exit {code} on the {} backend: {}",
                    self.shell.name(),
                    exec.stderr
                ),
            )),
        }
    }
}

/// `patch` mode patch (V4A) on the machine.
pub fn patch_v4a(ctx: &ToolContext, shell: &Shell, text: &str) -> Result<PatchOutput, FileError> {
    let mut resolved: Vec<String> = Vec::new();
    for path in v4a::header_paths(text) {
        if patch::climbs(&path) {
            return Err(FileError::PatchTraversal { path });
        }
        let abs = check_write(ctx, shell, &path, "patch")?;
        if !resolved.contains(&abs) {
            resolved.push(abs);
        }
    }
    let ops = v4a::parse(text).map_err(|e| FileError::PatchParse {
        message: e.to_string(),
    })?;
    let mut files = RemoteFiles { ctx, shell };
    match v4a::apply(&ops, &mut files, MAX_EDIT_FILE_BYTES) {
        Ok(done) => Ok(PatchOutput {
            success: true,
            resolved_path: (resolved.len() == 1).then(|| resolved[0].clone()),
            diff: patch::cut_diff(done.diff),
            files_modified: resolved,
            files_created: done.created,
            files_deleted: done.deleted,
            ..PatchOutput::default()
        }),
        Err(v4a::Failure::Invalid(errors)) => Err(FileError::PatchInvalid { errors }),
        Err(v4a::Failure::Partial { errors, .. }) => Err(FileError::PatchPartial {
            errors,
            done: "some operations (see the files)".into(),
        }),
    }
}

/// Results returned when the request gives no limit, and at most.
const DEFAULT_LIMIT: u64 = 50;
const MAX_LIMIT: u64 = 1000;
/// Output of one remote search kept at most.
const MAX_SEARCH_OUTPUT: usize = 8 * 1024 * 1024;

/// `search_files` on the machine: `find` and `grep -nHE` for content,
/// `find -name` for files; hidden files and folders skipped.
pub fn search(
    ctx: &ToolContext,
    shell: &Shell,
    req: &SearchRequest<'_>,
) -> Result<SearchOutput, FileError> {
    let given = req.path.filter(|p| !p.is_empty()).unwrap_or(".");
    let abs = absolute(shell, given)?;
    let guard = Guard::for_remote(ctx, &shell.cwd());
    if let Some(refused) = guard.remote_read_error(Path::new(&abs), Path::new(&abs)) {
        return Err(FileError::Refused(refused));
    }
    let limit = req.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let offset = req.offset.unwrap_or(0);
    let root = shell_quote(&abs);
    let script = match req.target {
        Target::Content => {
            let name = req
                .file_glob
                .filter(|g| !g.is_empty())
                .map(|g| format!("-name {}", shell_quote(g)))
                .unwrap_or_default();
            format!(
                "[ -e {root} ] || exit 20\nif [ -d {root} ]; then cd {root} && find . -name '.?*' -prune -o -type f {name} -exec grep -nHE -e {pat} -- {{}} + 2>/dev/null\nelse grep -nHE -e {pat} -- {root} 2>/dev/null; fi\nexit 0\n",
                pat = shell_quote(req.pattern)
            )
        }
        Target::Files => format!(
            "[ -e {root} ] || exit 20\ncd {root} && find . -name '.?*' -prune -o -type f -name {pat} -print 2>/dev/null\nexit 0\n",
            pat = shell_quote(req.pattern)
        ),
    };
    let exec = shell
        .exec(&script, None, FILE_TIMEOUT, MAX_SEARCH_OUTPUT)
        .map_err(|e| backend_error(given, "search", e))?;
    if exec.code == 20 {
        return Err(FileError::SearchPathNotFound {
            path: given.to_string(),
        });
    }
    let text = String::from_utf8_lossy(&exec.stdout);
    let shown_path = |rel: &str| -> String {
        if rel.starts_with('/') {
            // The search path was a file: grep names it as given to it.
            return given.to_string();
        }
        let rel = rel.strip_prefix("./").unwrap_or(rel);
        if given == "." {
            rel.to_string()
        } else {
            format!("{}/{rel}", given.trim_end_matches('/'))
        }
    };
    let mut out = SearchOutput::default();
    let mut omitted = 0u64;
    let readable = |rel: &str| -> bool {
        let full = if rel.starts_with('/') {
            rel.to_string()
        } else {
            format!(
                "{}/{}",
                abs.trim_end_matches('/'),
                rel.strip_prefix("./").unwrap_or(rel)
            )
        };
        guard
            .remote_read_error(Path::new(&full), Path::new(&full))
            .is_none()
    };
    match req.target {
        Target::Files => {
            let mut files: Vec<String> = Vec::new();
            for line in text.lines().filter(|l| !l.is_empty()) {
                if readable(line) {
                    files.push(shown_path(line));
                } else {
                    omitted += 1;
                }
            }
            files.sort();
            out.total_count = files.len() as u64;
            out.files = page_of(files, offset, limit, &mut out);
        }
        Target::Content => {
            let mut hits: Vec<SearchMatch> = Vec::new();
            for line in text.lines() {
                let mut parts = line.splitn(3, ':');
                let (Some(file), Some(no), Some(content)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let Ok(no) = no.parse::<u64>() else { continue };
                if !readable(file) {
                    omitted += 1;
                    continue;
                }
                hits.push(SearchMatch {
                    path: shown_path(file),
                    line: no,
                    content: content.to_string(),
                });
            }
            hits.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
            match req.output_mode {
                OutputMode::Content => {
                    out.total_count = hits.len() as u64;
                    out.matches = page_of(hits, offset, limit, &mut out);
                }
                OutputMode::FilesOnly => {
                    let mut files: Vec<String> = hits.iter().map(|h| h.path.clone()).collect();
                    files.dedup();
                    out.total_count = files.len() as u64;
                    out.files = page_of(files, offset, limit, &mut out);
                }
                OutputMode::Count => {
                    let mut counts: Vec<(String, u64)> = Vec::new();
                    for h in &hits {
                        match counts.last_mut() {
                            Some((p, n)) if *p == h.path => *n += 1,
                            _ => counts.push((h.path.clone(), 1)),
                        }
                    }
                    out.total_count = hits.len() as u64;
                    out.counts.0 = page_of(counts, offset, limit, &mut out);
                }
            }
        }
    }
    if omitted > 0 {
        out.omitted = Some(format!(
            "{omitted} result(s) left out: the read guard blocks their files (secrets)"
        ));
    }
    for found in &mut out.matches {
        if let Cow::Owned(clean) = redact_for(ctx.profile(), &found.content, Scope::FileRead) {
            found.content = clean;
        }
        if let Cow::Owned(inert) = common::escape_controls(&found.content) {
            found.content = inert;
        }
    }
    out.densify();
    Ok(out)
}

/// `items[offset..offset + limit]`, marking `out` truncated when more follow.
fn page_of<T>(items: Vec<T>, offset: u64, limit: u64, out: &mut SearchOutput) -> Vec<T> {
    let total = items.len() as u64;
    let end = offset.saturating_add(limit);
    if end < total {
        out.truncated = true;
        out.next_offset = Some(end);
    }
    items
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .collect()
}
