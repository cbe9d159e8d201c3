//! `search_files`: a regex search of file contents (`target: "content"`,
//! the default), or a search for files by name (`target: "files"`).
//!
//! Content search reads each file in chunks and runs the regex over a
//! chunk at a time (multi-line mode, CRLF-aware), then confirms each hit on
//! its own line, so a file without a match costs one pass of the matcher;
//! with `context`, files are read line by line. `output_mode` picks the
//! shape: matching lines (`content`), the files that match (`files_only`)
//! or the number of matching lines per file (`count`).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::fs::{self, File};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use ignore::overrides::OverrideBuilder;
use ignore::WalkBuilder;
use regex::bytes::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::common::cut_line;
use super::error::FileError;
use super::fsguard::{
    open_regular, read_line_capped, special_kind, special_location, strip_newline, Line,
};
use super::guard::Guard;
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

/// Lines of context shown at most before and after each match.
pub const MAX_CONTEXT: u64 = 20;
/// The largest `offset` honoured; a larger one counts as this.
pub const MAX_SEARCH_OFFSET: u64 = 100_000;
/// Matches from which the content page is shown as one path-grouped text
/// (`matches_text`) instead of an array of objects, as the reference does.
pub const DENSIFY_MIN_MATCHES: usize = 5;
/// What `matches_format` says about `matches_text`.
pub const MATCHES_FORMAT: &str = "grouped by file: a line with the path, then one \
    '  <line>: <content>' line per match in that file";
/// Threads reading files for one content search, at most.
const MAX_WORKERS: usize = 8;
/// Files between the walk and the answer at once (being read, or read and
/// waiting for those before them).
const IN_FLIGHT: usize = 32;
/// Bytes read from a file at a time by the content search.
const CHUNK_BYTES: usize = 128 * 1024;

/// What `search_files` looks for. The reference's legacy names are read
/// too (`grep` for `content`, `find` for `files`), as it reads them: models
/// trained on its older prompts send them. The schema offers only the
/// current names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Lines of files matching a regex.
    #[default]
    #[serde(alias = "grep")]
    Content,
    /// Files whose names match a glob, newest first.
    #[serde(alias = "find")]
    Files,
}

/// How a content search answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The matching lines (and `context` lines around them).
    #[default]
    Content,
    /// The files with at least one matching line.
    FilesOnly,
    /// The number of matching lines of each file.
    Count,
}

/// The arguments of one search.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest<'a> {
    /// A regex (content) or a glob (files).
    pub pattern: &'a str,
    pub target: Target,
    /// Folder or file to search (default: the working directory).
    pub path: Option<&'a str>,
    /// Only files matching this glob (content search).
    pub file_glob: Option<&'a str>,
    /// Results returned at most (default [`DEFAULT_SEARCH_LIMIT`]).
    pub limit: Option<u64>,
    /// Results skipped first (default 0).
    pub offset: Option<u64>,
    pub output_mode: OutputMode,
    /// Lines shown before and after each match (content, default 0).
    pub context: Option<u64>,
}

/// One line of a result: a match, or a line of context around one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchMatch {
    /// The file, as the search path given joined with the path below it.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line's text, without its line ending, cut if long.
    pub content: String,
}

/// Matching lines per file, in path order; serialized as a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counts(pub Vec<(String, u64)>);

impl Counts {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Counts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (path, count) in &self.0 {
            map.serialize_entry(path, count)?;
        }
        map.end()
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The result of a search. Only the fields of the mode used are present.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SearchOutput {
    /// All results, including those not returned: lines (content, with
    /// context lines), files (files_only, files) or matching lines (count).
    pub total_count: u64,
    /// The returned lines (content mode), in path order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<SearchMatch>,
    /// How to read `matches_text`, when the page is shown as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches_format: Option<&'static str>,
    /// The page as text grouped by file (see [`SearchOutput::densify`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches_text: Option<String>,
    /// The returned files (files_only in path order, files newest first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Matching lines per returned file (count mode).
    #[serde(skip_serializing_if = "Counts::is_empty")]
    pub counts: Counts,
    /// True when there are results after this page.
    #[serde(skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// The `offset` that shows the next page, when `truncated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// What to do next, when there is something to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Files left out because the read guard blocks them (secrets).
    #[serde(rename = "_omitted", skip_serializing_if = "Option::is_none")]
    pub omitted: Option<String>,
}

impl SearchOutput {
    /// Shows a content page of [`DENSIFY_MIN_MATCHES`] lines or more as one
    /// text grouped by file (`matches_text`, described by
    /// `matches_format`), which costs the model far fewer tokens than the
    /// array; nothing is lost (trailing white space of a line aside).
    pub fn densify(&mut self) {
        if self.matches.len() < DENSIFY_MIN_MATCHES {
            return;
        }
        let mut text = String::new();
        let mut current: Option<&str> = None;
        for m in &self.matches {
            if current != Some(m.path.as_str()) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&m.path);
                current = Some(&m.path);
            }
            text.push_str(&format!("\n  {}: {}", m.line, m.content.trim_end()));
        }
        self.matches_format = Some(MATCHES_FORMAT);
        self.matches_text = Some(text);
        self.matches.clear();
    }
}

/// Searches under `path` (default: the working directory): file contents
/// with a regex, or file names with a glob (see [`SearchRequest`]).
///
/// Content results come in path order, `offset` of them skipped and at
/// most `limit` (default [`DEFAULT_SEARCH_LIMIT`], clamped to
/// `1..=`[`MAX_SEARCH_LIMIT`]) returned, while `total_count` counts them
/// all; `truncated` and `next_offset` say when there are more. With
/// `context` (at most [`MAX_CONTEXT`]), the lines around each match come
/// too, each once. File results (`target: "files"`) come newest first; a
/// glob without `/` matches a name at any depth, and one not starting with
/// `*` matches the end of a name (`b.py` finds `sub/ab.py`), as the
/// reference does.
///
/// Files the read guard blocks (secrets, see `guard.rs`) are left out and
/// counted in `_omitted`; returned lines are redacted (see `redact.rs`).
///
/// Files ignored by `.ignore`, and inside a git repository by `.gitignore`
/// and `.git/info/exclude` (outside one a `.gitignore` is no rule, as for
/// git and ripgrep, which the reference runs), hidden files and folders,
/// and binary files (a
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
pub fn search(
    base: &Path,
    req: &SearchRequest<'_>,
    guard: Option<&Guard>,
    deadline: Instant,
) -> Result<SearchOutput, FileError> {
    let limit = req
        .limit
        .unwrap_or(DEFAULT_SEARCH_LIMIT)
        .clamp(1, MAX_SEARCH_LIMIT);
    let offset = req.offset.unwrap_or(0).min(MAX_SEARCH_OFFSET);
    let page = Page::new(offset, limit);
    let matcher = match req.target {
        Target::Content => Some(Matcher::new(req.pattern)?),
        Target::Files => None,
    };
    let given = req.path.filter(|p| !p.is_empty()).unwrap_or(".");
    let glob = match req.target {
        Target::Content => req.file_glob.filter(|g| !g.is_empty()).map(str::to_owned),
        Target::Files => Some(name_glob(req.pattern)),
    };
    let walk = Walk::new(base, given, glob.as_deref(), req.file_glob)?;
    let mut run = Run {
        walk,
        guard,
        deadline,
        omitted: 0,
        out_of_time: false,
        cut_lines: 0,
    };
    let mut out = match (req.target, matcher) {
        (Target::Content, Some(matcher)) => match req.output_mode {
            OutputMode::Content => run.lines(&matcher, req.context.unwrap_or(0), page),
            OutputMode::FilesOnly => run.files_only(&matcher, page),
            OutputMode::Count => run.counts(&matcher, page),
        },
        _ => run.files(page),
    };
    let mut hints = Vec::new();
    if let Some(hint) = out.hint.take() {
        hints.push(hint);
    }
    if let Ok(budget) = run.walk.budget.lock() {
        if let Some(first) = &budget.first_skipped {
            hints.push(format!(
                "{} folder(s) were not searched because of their ignore files (first: {first})",
                budget.skipped
            ));
        }
    }
    if run.out_of_time {
        out.truncated = true;
        hints.push(format!(
            "The search stopped after {} s, so files were left unread and the counts are \
             partial. Narrow the path or file_glob",
            MAX_SEARCH_TIME.as_secs()
        ));
    }
    if run.cut_lines > 0 {
        hints.push(format!(
            "{} line(s) longer than {MAX_SEARCH_LINE_BYTES} bytes were searched \
             on their first {MAX_SEARCH_LINE_BYTES} bytes only",
            run.cut_lines
        ));
    }
    if !hints.is_empty() {
        out.hint = Some(hints.join(". "));
    }
    if run.omitted > 0 {
        out.omitted = Some(format!(
            "{} file(s) left out: they hold secrets (credential stores, token stores, \
             .env files) that the file tools do not read",
            run.omitted
        ));
    }
    Ok(out)
}

/// A content search of `pattern` (the old entry point of the tests).
#[cfg(test)]
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
#[cfg(test)]
pub(crate) fn search_files_until(
    base: &Path,
    pattern: &str,
    path: Option<&str>,
    file_glob: Option<&str>,
    limit: Option<u64>,
    deadline: Instant,
) -> Result<SearchOutput, FileError> {
    let req = SearchRequest {
        pattern,
        path,
        file_glob,
        limit,
        ..SearchRequest::default()
    };
    search(base, &req, None, deadline)
}

/// The glob a files search matches names with: as given when it holds a
/// `/` or starts with `*`, else `*` before it (the end of a name).
fn name_glob(pattern: &str) -> String {
    if pattern.contains('/') || pattern.starts_with('*') {
        pattern.to_owned()
    } else {
        format!("*{pattern}")
    }
}

/// Which results of all a call returns: `offset` skipped, then `limit`.
#[derive(Debug, Clone, Copy)]
struct Page {
    offset: u64,
    limit: u64,
}

impl Page {
    fn new(offset: u64, limit: u64) -> Self {
        Page { offset, limit }
    }

    /// Results needed to fill the page, counted from the first.
    fn end(self) -> u64 {
        self.offset + self.limit
    }

    /// Whether result number `index` (0-based) is on the page.
    fn holds(self, index: u64) -> bool {
        index >= self.offset && index < self.end()
    }

    /// Sets `truncated`, `next_offset` and a hint from the total.
    fn finish(self, out: &mut SearchOutput, total: u64, shown: usize, what: &str) {
        out.total_count = total;
        let after = self.offset + shown as u64;
        if total > after {
            out.truncated = true;
            out.next_offset = Some(after);
            out.hint = Some(format!(
                "Showing {what} {}-{after} of {total}. Use offset={after} to see more, or \
                 narrow the pattern, path or file_glob",
                self.offset + 1
            ));
        } else if shown == 0 && total > 0 {
            out.hint = Some(format!(
                "offset {} is past the end: there are {total} {what}",
                self.offset
            ));
        }
    }
}

/// The compiled pattern: for chunks (multi-line, CRLF-aware) and for one
/// line, or only the latter when the pattern anchors to the whole text.
struct Matcher {
    chunk: Option<Regex>,
    line: Regex,
}

impl Matcher {
    fn new(pattern: &str) -> Result<Self, FileError> {
        let build = |p: &str| {
            RegexBuilder::new(p)
                .size_limit(MAX_PATTERN_BYTES)
                .dfa_size_limit(PATTERN_CACHE_BYTES)
                .build()
        };
        let invalid = |e: regex::Error| FileError::InvalidRegex {
            pattern: pattern.to_owned(),
            message: match e {
                regex::Error::CompiledTooBig(_) => format!(
                    "the pattern compiles to more than {MAX_PATTERN_BYTES} bytes (large counted \
                     repetitions such as x{{50000}}, or many Unicode classes); simplify it"
                ),
                e => e.to_string(),
            },
        };
        let line = build(pattern).map_err(invalid)?;
        // `\A` and `\z` mean the start and end of a line here; in a chunk
        // they would not, so such patterns are matched line by line.
        let chunk = if pattern.contains("\\A") || pattern.contains("\\z") {
            None
        } else {
            Some(build(&format!("(?mR:{pattern})")).map_err(invalid)?)
        };
        Ok(Matcher { chunk, line })
    }

    fn line_matches(&self, line: &[u8]) -> bool {
        self.line.is_match(line)
    }
}

/// The walk of one search, from the real search path.
struct Walk {
    root: PathBuf,
    given: String,
    shown_prefix: String,
    builder: WalkBuilder,
    budget: Arc<Mutex<IgnoreBudget>>,
}

impl Walk {
    /// Checks the search path and sets up the walk: ignore files honoured,
    /// hidden files, special folders and folders over the ignore budget
    /// skipped, `glob` (if any) limiting the files.
    fn new(
        base: &Path,
        given: &str,
        glob: Option<&str>,
        shown_glob: Option<&str>,
    ) -> Result<Self, FileError> {
        // The walk starts from the real path, so every path it meets is real
        // and the special folders are recognised whatever led to them.
        let Ok(root) = fs::canonicalize(base.join(hermes_runtime::paths::expand_home(given)))
        else {
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
        let budget = Arc::new(Mutex::new(IgnoreBudget::new(first_dir, held)));
        let budget_in_walk = budget.clone();
        let mut builder = WalkBuilder::new(&root);
        builder
            .hidden(true)
            .ignore(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .parents(true)
            .require_git(true)
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
        if let Some(glob) = glob {
            let shown = shown_glob.filter(|g| !g.is_empty()).unwrap_or(glob);
            let invalid = |e: ignore::Error| FileError::InvalidGlob {
                glob: shown.to_owned(),
                message: e.to_string(),
            };
            let mut overrides = OverrideBuilder::new(&root);
            overrides.add(glob).map_err(invalid)?;
            builder.overrides(overrides.build().map_err(invalid)?);
        }
        Ok(Walk {
            shown_prefix: display_prefix(given),
            given: given.to_owned(),
            root,
            builder,
            budget,
        })
    }

    /// How a file below the root is shown.
    fn shown(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        if rel.as_os_str().is_empty() {
            self.given.clone()
        } else {
            format!("{}{}", self.shown_prefix, rel.to_string_lossy())
        }
    }
}

/// One search under way: the walk and what it met on the way.
struct Run<'g> {
    walk: Walk,
    guard: Option<&'g Guard>,
    deadline: Instant,
    /// Files the read guard left out.
    omitted: u64,
    out_of_time: bool,
    /// Lines longer than [`MAX_SEARCH_LINE_BYTES`].
    cut_lines: u64,
}

impl Run<'_> {
    /// Calls `each` with every regular file of the walk, in path order,
    /// until the deadline or until `each` answers false. With `checked`,
    /// each file's metadata comes too, empty files are skipped and the
    /// guard's refusals left out (counted in `omitted`) here; without it,
    /// no file is stat-ed here (the type comes from the folder listing) and
    /// the reader does both checks (see [`read_file`]), off this thread.
    fn each_file(
        &mut self,
        checked: bool,
        mut each: impl FnMut(&mut Self, &Path, Option<&fs::Metadata>) -> bool,
    ) {
        let walk = self.walk.builder.build();
        for entry in walk.flatten() {
            if Instant::now() >= self.deadline {
                self.out_of_time = true;
                break;
            }
            // Not following symlinks, a FIFO, device or socket is not a file.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let meta = if checked {
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                // Empty, or a kernel file that only claims to be: nothing to read.
                if meta.len() == 0 {
                    continue;
                }
                Some(meta)
            } else {
                None
            };
            if let Some(guard) = self.guard.filter(|_| checked) {
                if guard.read_error(entry.path(), entry.path()).is_some() {
                    self.omitted += 1;
                    continue;
                }
            }
            if !each(self, entry.path(), meta.as_ref()) {
                break;
            }
        }
    }

    /// Content search: walks the files in path order, hands them in
    /// batches to worker threads (as many as the machine has cores, at
    /// most [`MAX_WORKERS`]) to read as `want` says, and calls `take` with
    /// each file's result in path order, until it answers false. At most
    /// [`IN_FLIGHT`] files are read or waiting at once, so memory stays
    /// bounded whatever the tree. Batches keep the hand-overs between
    /// threads (each a wake-up, costly on a busy machine) to a few per
    /// batch rather than per file.
    fn content(
        &mut self,
        matcher: &Matcher,
        want: Want,
        mut take: impl FnMut(&mut Self, &Path, Found) -> bool,
    ) {
        let workers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, MAX_WORKERS);
        // Two batches per worker in flight: one being read, one waiting.
        let batch = (IN_FLIGHT / (2 * workers)).max(1);
        let batches_in_flight = IN_FLIGHT / batch;
        let deadline = self.deadline;
        let guard = self.guard;
        type Done = Vec<(PathBuf, Option<Found>)>;
        // Lines found in the files taken so far: a file not yet taken
        // comes after them all, so it need keep no line past the first
        // `keep` minus these (with many matches, most files keep none).
        let taken = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let (job_tx, job_rx) = mpsc::sync_channel::<(usize, Vec<PathBuf>)>(batches_in_flight);
            let job_rx = Arc::new(Mutex::new(job_rx));
            let (found_tx, found_rx) = mpsc::channel::<(usize, Done)>();
            for _ in 0..workers {
                let jobs = job_rx.clone();
                let found = found_tx.clone();
                let taken = &taken;
                scope.spawn(move || {
                    let mut buf = Vec::new();
                    loop {
                        let job = jobs.lock().map_or(None, |rx| rx.recv().ok());
                        let Some((index, paths)) = job else {
                            return;
                        };
                        let done: Done = paths
                            .into_iter()
                            .map(|path| {
                                let want = match want {
                                    Want::Lines { context, keep } => Want::Lines {
                                        context,
                                        keep: keep.saturating_sub(taken.load(Ordering::Relaxed)),
                                    },
                                    other => other,
                                };
                                let result =
                                    read_file(&path, guard, matcher, want, deadline, &mut buf);
                                (path, result)
                            })
                            .collect();
                        if found.send((index, done)).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(found_tx);
            // Batches that came before those ahead of them.
            let mut waiting: BTreeMap<usize, Done> = BTreeMap::new();
            let mut next = 0usize;
            let mut sent = 0usize;
            let mut open = true;
            // Takes the batches that are next in order; `open` turns false
            // once `take` is done.
            let mut drain = |run: &mut Self,
                             waiting: &mut BTreeMap<usize, Done>,
                             next: &mut usize,
                             open: &mut bool| {
                while let Some(done) = waiting.remove(next) {
                    *next += 1;
                    for (path, found) in done {
                        let Some(found) = found else {
                            continue;
                        };
                        if found.omitted {
                            run.omitted += 1;
                            continue;
                        }
                        run.cut_lines += found.scan.cut_lines;
                        taken.fetch_add(found.count, Ordering::Relaxed);
                        let late = found.scan.out_of_time;
                        if *open && !take(run, &path, found) {
                            *open = false;
                        }
                        if late {
                            run.out_of_time = true;
                            *open = false;
                        }
                    }
                }
            };
            // Sends `paths` as the next batch, first waiting (and taking
            // results) while [`IN_FLIGHT`] files are out; false when the
            // search is over.
            let mut send = |run: &mut Self,
                            paths: Vec<PathBuf>,
                            waiting: &mut BTreeMap<usize, Done>,
                            next: &mut usize,
                            sent: &mut usize,
                            open: &mut bool| {
                while *sent - *next >= batches_in_flight && *open {
                    match found_rx.recv() {
                        Ok((i, done)) => {
                            waiting.insert(i, done);
                        }
                        Err(_) => break,
                    }
                    drain(run, waiting, next, open);
                }
                if !*open || job_tx.send((*sent, paths)).is_err() {
                    return false;
                }
                *sent += 1;
                true
            };
            let mut paths = Vec::with_capacity(batch);
            self.each_file(false, |run, path, _| {
                paths.push(path.to_path_buf());
                if paths.len() < batch {
                    return true;
                }
                let full = std::mem::replace(&mut paths, Vec::with_capacity(batch));
                send(run, full, &mut waiting, &mut next, &mut sent, &mut open)
            });
            if !paths.is_empty() {
                send(self, paths, &mut waiting, &mut next, &mut sent, &mut open);
            }
            drop(job_tx);
            while next < sent {
                match found_rx.recv() {
                    Ok((i, done)) => {
                        waiting.insert(i, done);
                    }
                    Err(_) => break,
                }
                drain(self, &mut waiting, &mut next, &mut open);
            }
        });
    }

    /// Content mode: matching lines (and context), paged.
    fn lines(&mut self, matcher: &Matcher, context: u64, page: Page) -> SearchOutput {
        let context = context.min(MAX_CONTEXT) as usize;
        let mut out = SearchOutput::default();
        let mut total = 0u64;
        let want = Want::Lines {
            context,
            keep: page.end(),
        };
        self.content(matcher, want, |run, path, found| {
            let shown = run.walk.shown(path);
            for (i, (line, content)) in found.kept.into_iter().enumerate() {
                if page.holds(total + i as u64) {
                    out.matches.push(SearchMatch {
                        path: shown.clone(),
                        line,
                        content,
                    });
                }
            }
            total += found.count;
            true
        });
        let shown = out.matches.len();
        page.finish(&mut out, total, shown, "lines");
        out
    }

    /// files_only mode: the files with a match, paged.
    fn files_only(&mut self, matcher: &Matcher, page: Page) -> SearchOutput {
        let mut out = SearchOutput::default();
        let mut total = 0u64;
        self.content(matcher, Want::First, |run, path, found| {
            if found.count > 0 {
                if page.holds(total) {
                    out.files.push(run.walk.shown(path));
                }
                total += 1;
            }
            true
        });
        let shown = out.files.len();
        page.finish(&mut out, total, shown, "files");
        out
    }

    /// count mode: matching lines per file, files paged; `total_count` is
    /// the sum over all files.
    fn counts(&mut self, matcher: &Matcher, page: Page) -> SearchOutput {
        let mut out = SearchOutput::default();
        let mut files = 0u64;
        let mut total = 0u64;
        self.content(matcher, Want::Count, |run, path, found| {
            if found.count > 0 {
                if page.holds(files) {
                    out.counts.0.push((run.walk.shown(path), found.count));
                }
                files += 1;
                total += found.count;
            }
            true
        });
        let shown = out.counts.0.len();
        page.finish(&mut out, files, shown, "files");
        out.total_count = total;
        out
    }

    /// Files target: the files the glob matches, newest first, paged. Only
    /// the newest `offset + limit` are held while walking.
    fn files(&mut self, page: Page) -> SearchOutput {
        let mut out = SearchOutput::default();
        let keep = page.end() as usize;
        // The oldest of the kept files on top, to be dropped first.
        let mut newest: BinaryHeap<Reverse<(SystemTime, Reverse<PathBuf>)>> = BinaryHeap::new();
        let mut total = 0u64;
        self.each_file(true, |_, path, meta| {
            total += 1;
            let mtime = meta
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            newest.push(Reverse((mtime, Reverse(path.to_path_buf()))));
            if newest.len() > keep {
                newest.pop();
            }
            true
        });
        let mut sorted: Vec<_> = newest.into_iter().map(|Reverse(k)| k).collect();
        sorted.sort_by(|a, b| b.cmp(a));
        out.files = sorted
            .into_iter()
            .skip(page.offset as usize)
            .map(|(_, Reverse(path))| self.walk.shown(&path))
            .collect();
        let shown = out.files.len();
        page.finish(&mut out, total, shown, "files");
        out
    }
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

/// What a content search wants of one file.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// Matching lines (and `context` lines around them): all counted, the
    /// first `keep` kept.
    Lines { context: usize, keep: u64 },
    /// Whether any line matches.
    First,
    /// How many lines match.
    Count,
}

/// What one file held.
#[derive(Debug, Default)]
struct Found {
    /// Lines found (matching, and context lines).
    count: u64,
    /// The first of them (number, text cut for showing).
    kept: Vec<(u64, String)>,
    scan: Scan,
    /// The read guard refused the file: it was not opened.
    omitted: bool,
}

/// Reads the file at `path` for a content search; `None` when it is
/// binary, unreadable, empty or not a regular file. A file the read guard
/// refuses is not opened: its result says `omitted`.
fn read_file(
    path: &Path,
    guard: Option<&Guard>,
    matcher: &Matcher,
    want: Want,
    deadline: Instant,
    buf: &mut Vec<u8>,
) -> Option<Found> {
    if guard.is_some_and(|g| g.read_error(path, path).is_some()) {
        return Some(Found {
            omitted: true,
            ..Found::default()
        });
    }
    let (file, meta) = open_regular(path).ok()?;
    // Empty, or a kernel file that only claims to be: nothing to read.
    if !meta.is_file() || meta.len() == 0 {
        return None;
    }
    let mut found = Found::default();
    let (context, keep) = match want {
        Want::Lines { context, keep } => (context, keep),
        Want::First | Want::Count => (0, 0),
    };
    let first_only = matches!(want, Want::First);
    let mut count = 0u64;
    let mut kept = Vec::new();
    let mut hit = |line_no: u64, text: &[u8]| {
        if count < keep {
            let text = String::from_utf8_lossy(text);
            kept.push((line_no, cut_line(&text, MAX_MATCH_LINE_CHARS)));
        }
        count += 1;
        !first_only
    };
    found.scan = if context > 0 || matcher.chunk.is_none() {
        scan_lines(file, matcher, context, deadline, &mut hit)?
    } else {
        scan_chunks(file, matcher, deadline, buf, &mut hit)?
    };
    found.count = count;
    found.kept = kept;
    Some(found)
}

/// How reading one file went.
#[derive(Debug, Default)]
struct Scan {
    /// Lines longer than [`MAX_SEARCH_LINE_BYTES`].
    cut_lines: u64,
    /// The deadline came before the end of the file.
    out_of_time: bool,
}

/// Reads `file` a chunk at a time and calls `hit` with each matching line
/// (1-based number, text without its line ending) until it answers false.
/// `None` for a binary (a NUL byte) or unreadable file. A line longer than
/// [`MAX_SEARCH_LINE_BYTES`] is matched on its first that-many bytes, the
/// rest read past; memory stays within that plus one chunk.
fn scan_chunks(
    mut file: File,
    matcher: &Matcher,
    deadline: Instant,
    buf: &mut Vec<u8>,
    hit: &mut dyn FnMut(u64, &[u8]) -> bool,
) -> Option<Scan> {
    let chunk_re = matcher.chunk.as_ref()?;
    let cap = MAX_SEARCH_LINE_BYTES;
    let mut scan = Scan::default();
    // `buf[..filled]` is what was read and not yet searched; `buf` itself
    // is kept between files (zeroed once, when it grows).
    let mut filled = 0usize;
    // Lines before `buf[0]`.
    let mut lines = 0u64;
    // Reading past the rest of a cut line.
    let mut skipping = false;
    let mut eof = false;
    let mut more = true;
    while more {
        if Instant::now() >= deadline {
            scan.out_of_time = true;
            break;
        }
        let held = filled;
        if buf.len() < held + CHUNK_BYTES {
            buf.resize(held + CHUNK_BYTES, 0);
        }
        let n = loop {
            match file.read(&mut buf[held..held + CHUNK_BYTES]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        };
        filled = held + n;
        if n == 0 {
            eof = true;
        } else if memchr::memchr(0, &buf[held..filled]).is_some() {
            return None;
        }
        // Where the unsearched text starts, and where the line at
        // `buf[start..]` began being read (`held` for a line in progress).
        let mut start = 0;
        let mut line_from = held;
        if skipping {
            match memchr::memchr(b'\n', &buf[..filled]) {
                Some(i) => {
                    start = i + 1;
                    line_from = start;
                    skipping = false;
                }
                None => {
                    filled = 0;
                    if eof {
                        break;
                    }
                    continue;
                }
            }
        }
        // `buf[start..line_from]` holds no line end: one line's start.
        let first_end = memchr::memchr(b'\n', &buf[line_from..filled]).map(|i| line_from + i);
        match first_end {
            Some(end) if end - start > cap => {
                // The first line is too long: matched on its start only.
                scan.cut_lines += 1;
                lines += 1;
                let line = &buf[start..start + cap];
                if matcher.line_matches(line) {
                    more = hit(lines, line);
                }
                start = end + 1;
            }
            None if filled - start > cap => {
                scan.cut_lines += 1;
                lines += 1;
                let line = &buf[start..start + cap];
                if matcher.line_matches(line) {
                    more = hit(lines, line);
                }
                if eof {
                    break;
                }
                filled = 0;
                skipping = true;
                continue;
            }
            None if !eof => {
                // A line in progress: keep it at the front and read on.
                buf.copy_within(start..filled, 0);
                filled -= start;
                continue;
            }
            _ => {}
        }
        let end = if eof {
            filled
        } else {
            memchr::memrchr(b'\n', &buf[start..filled]).map_or(start, |i| start + i + 1)
        };
        if more && start < end {
            let (counted, go_on) = scan_region(&buf[start..end], chunk_re, matcher, lines, hit);
            lines += counted;
            more = go_on;
        }
        if eof {
            break;
        }
        buf.copy_within(end..filled, 0);
        filled -= end;
    }
    Some(scan)
}

/// Finds the matching lines of `region` (whole lines; the last may lack
/// its `\n` at the end of a file), whose first line follows line
/// `before`. Returns the lines in the region and whether `hit` wants more.
fn scan_region(
    region: &[u8],
    chunk_re: &Regex,
    matcher: &Matcher,
    before: u64,
    hit: &mut dyn FnMut(u64, &[u8]) -> bool,
) -> (u64, bool) {
    let mut pos = 0;
    let mut counted_to = 0;
    let mut line_no = before;
    while pos < region.len() {
        let Some(m) = chunk_re.find_at(region, pos) else {
            break;
        };
        // The match is confirmed on the line where it starts.
        let at = m.start().min(region.len());
        let line_start = memchr::memrchr(b'\n', &region[pos..at]).map_or(pos, |i| pos + i + 1);
        if at == region.len() {
            break;
        }
        let line_end = memchr::memchr(b'\n', &region[at..]).map_or(region.len(), |i| at + i);
        line_no += memchr::memchr_iter(b'\n', &region[counted_to..line_start]).count() as u64;
        counted_to = line_start;
        let line = strip_newline(&region[line_start..line_end], true);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if matcher.line_matches(line) && !hit(line_no + 1, line) {
            return (0, false);
        }
        pos = line_end + 1;
    }
    let mut total = memchr::memchr_iter(b'\n', region).count() as u64;
    if region.last().is_some_and(|&b| b != b'\n') {
        total += 1;
    }
    (total, true)
}

/// Reads `file` line by line (each held up to [`MAX_SEARCH_LINE_BYTES`])
/// and calls `hit` with each matching line and, with `context`, the lines
/// around it (each once, in order), until it answers false. `None` for a
/// binary or unreadable file.
fn scan_lines(
    file: File,
    matcher: &Matcher,
    context: usize,
    deadline: Instant,
    hit: &mut dyn FnMut(u64, &[u8]) -> bool,
) -> Option<Scan> {
    let mut reader = BufReader::new(file);
    let mut scan = Scan::default();
    let mut buf = Vec::new();
    // The last `context` lines before this one, cut for showing.
    let mut before: VecDeque<(u64, Vec<u8>)> = VecDeque::new();
    // Lines still to show after the last match.
    let mut after = 0usize;
    let mut line_no = 0u64;
    loop {
        if Instant::now() >= deadline {
            scan.out_of_time = true;
            break;
        }
        let cut = match read_line_capped(&mut reader, &mut buf, MAX_SEARCH_LINE_BYTES) {
            Ok(None) => break,
            Ok(Some(Line::Text { cut })) => cut,
            Ok(Some(Line::Nul)) | Err(_) => return None,
        };
        line_no += 1;
        scan.cut_lines += u64::from(cut);
        let line = strip_newline(&buf, true);
        if matcher.line_matches(line) {
            for (n, text) in before.drain(..) {
                if !hit(n, &text) {
                    return Some(scan);
                }
            }
            if !hit(line_no, line) {
                return Some(scan);
            }
            after = context;
        } else if after > 0 {
            after -= 1;
            if !hit(line_no, line) {
                return Some(scan);
            }
        } else if context > 0 {
            if before.len() == context {
                before.pop_front();
            }
            // Enough bytes for the characters shown of a line.
            let keep = line.len().min(MAX_MATCH_LINE_CHARS * 4 + 4);
            before.push_back((line_no, line[..keep].to_vec()));
        }
    }
    Some(scan)
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

    #[test]
    fn name_globs() {
        assert_eq!(name_glob("*.py"), "*.py");
        assert_eq!(name_glob("b.py"), "*b.py");
        assert_eq!(name_glob("src/*.rs"), "src/*.rs");
    }
}
