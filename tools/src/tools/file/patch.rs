//! `patch`: an exact find-and-replace in a file, returning a unified diff.
//!
//! `patch` and `write_file` refuse files and results over
//! [`MAX_EDIT_FILE_BYTES`], the size of a replacement being computed before
//! it is built; the diff is built in one forward pass and kept to
//! [`MAX_DIFF_CHARS`].

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use super::common::{display, resolve, MAX_EDIT_FILE_BYTES};
use super::error::FileError;
use super::fsguard::open_text_file;
use super::write::atomic_write;

/// Characters of diff preview that `patch` returns before cutting it.
pub const MAX_DIFF_CHARS: usize = 8000;
/// Lines of unchanged context around each change in a diff.
const DIFF_CONTEXT: usize = 3;

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
    fn hunk_ranges() {
        assert_eq!(hunk_range(0, 1), "1");
        assert_eq!(hunk_range(2, 2), "2,0");
        assert_eq!(hunk_range(0, 3), "1,3");
    }
}
