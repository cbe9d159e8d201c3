//! Unified diffs of an edit, for `patch` (both modes), kept to
//! [`MAX_DIFF_CHARS`] characters.
//!
//! The lines both texts share at the start and at the end are passed over
//! first (one forward and one backward pass, no tables); only the changed
//! middle, with its context, goes to `similar`'s line differ. That keeps
//! the differ's line tables to the edit's size: a one-line change at the
//! end of a ten-million-line file costs what a one-line file does. A
//! middle over [`MAX_DIFFED_LINES`] lines (a replace-all over the whole
//! file, line endings changed everywhere) is shown as one hunk replacing
//! it, streamed line by line into the capped text: a correct diff, not a
//! minimal one, at constant memory.

use std::time::Duration;

use similar::{Algorithm, DiffOp, DiffTag, TextDiff};

/// Characters of diff that `patch` returns before cutting it.
pub const MAX_DIFF_CHARS: usize = 8000;
/// Lines (old and new together) of changed middle handed to the line differ.
pub const MAX_DIFFED_LINES: usize = 20_000;
/// Time the line differ may take before it settles for a coarser diff.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);
/// Lines of unchanged context around each change.
pub const DIFF_CONTEXT: usize = 3;

/// Collects diff lines up to [`MAX_DIFF_CHARS`] characters and counts the
/// lines after the first that did not fit.
#[derive(Default)]
pub struct DiffSink {
    out: String,
    chars: usize,
    cut_lines: usize,
}

impl DiffSink {
    /// One line, given in parts that end with its `\n`.
    pub fn line(&mut self, parts: &[&str]) {
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

    /// A line of a file, marked ` `, `-` or `+`.
    fn file_line(&mut self, mark: &str, line: &str) {
        if line.ends_with('\n') {
            self.line(&[mark, line]);
        } else {
            self.line(&[mark, line, "\n"]);
            self.line(&["\\ No newline at end of file\n"]);
        }
    }

    pub fn finish(mut self) -> String {
        if self.cut_lines > 0 {
            self.out.push_str(&format!(
                "... [diff truncated, {} more lines]\n",
                self.cut_lines
            ));
        }
        self.out
    }
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

/// Byte length of the lines `old` and `new` share at their start, and how
/// many lines that is.
fn common_prefix(old: &str, new: &str) -> (usize, usize) {
    let (mut bytes, mut lines) = (0, 0);
    for (a, b) in old.split_inclusive('\n').zip(new.split_inclusive('\n')) {
        if a != b {
            break;
        }
        bytes += a.len();
        lines += 1;
    }
    (bytes, lines)
}

/// Byte length of the whole lines `old` and `new` share at their end.
fn common_suffix(old: &str, new: &str) -> usize {
    let mut bytes = 0;
    for (a, b) in old
        .split_inclusive('\n')
        .rev()
        .zip(new.split_inclusive('\n').rev())
    {
        if a != b {
            break;
        }
        bytes += a.len();
    }
    bytes
}

/// The byte offset `n` lines before the end of `text` (its start if fewer).
fn last_lines_start(text: &str, n: usize) -> usize {
    text.split_inclusive('\n')
        .rev()
        .take(n)
        .map(str::len)
        .fold(text.len(), |at, len| at - len)
}

/// The byte length of the first `n` lines of `text`.
fn first_lines_len(text: &str, n: usize) -> usize {
    text.split_inclusive('\n').take(n).map(str::len).sum()
}

/// The unified diff from `old` to `new` (empty when they are equal), with
/// `name` in its `--- a/` and `+++ b/` lines.
pub fn unified(old: &str, new: &str, name: &str) -> String {
    labelled(old, new, &format!("a/{name}"), &format!("b/{name}"))
}

/// The unified diff from `old` to `new` under the given file labels.
pub fn labelled(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    if old == new {
        return String::new();
    }
    let mut sink = DiffSink::default();
    sink.line(&["--- ", old_label, "\n"]);
    sink.line(&["+++ ", new_label, "\n"]);
    let (prefix, prefix_lines) = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    // The changed middle with up to DIFF_CONTEXT shared lines either side.
    let from = last_lines_start(&old[..prefix], DIFF_CONTEXT);
    let before_lines = old[from..prefix].split_inclusive('\n').count();
    let tail = first_lines_len(&old[old.len() - suffix..], DIFF_CONTEXT);
    let old_win = &old[from..old.len() - suffix + tail];
    let new_win = &new[from..new.len() - suffix + tail];
    let offset = prefix_lines - before_lines;
    let middle_lines =
        old_win.split_inclusive('\n').count() + new_win.split_inclusive('\n').count();
    if middle_lines <= MAX_DIFFED_LINES {
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .timeout(DIFF_TIMEOUT)
            .diff_lines(old_win, new_win);
        let (olds, news) = (diff.old_slices(), diff.new_slices());
        for group in diff.grouped_ops(DIFF_CONTEXT) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let (o0, n0) = (first.old_range().start, first.new_range().start);
            let (o1, n1) = (last.old_range().end, last.new_range().end);
            sink.line(&[&format!(
                "@@ -{} +{} @@\n",
                hunk_range(offset + o0, offset + o1),
                hunk_range(offset + n0, offset + n1)
            )]);
            for op in &group {
                render_op(&mut sink, op, olds, news);
            }
        }
    } else {
        // One hunk: the shared context, every old middle line out, every
        // new one in.
        let old_mid = &old[prefix..old.len() - suffix];
        let new_mid = &new[prefix..new.len() - suffix];
        let after = old[old.len() - suffix..old.len() - suffix + tail]
            .split_inclusive('\n')
            .count();
        let old_count = before_lines + old_mid.split_inclusive('\n').count() + after;
        let new_count = before_lines + new_mid.split_inclusive('\n').count() + after;
        sink.line(&[&format!(
            "@@ -{} +{} @@\n",
            hunk_range(offset, offset + old_count),
            hunk_range(offset, offset + new_count)
        )]);
        old[from..prefix]
            .split_inclusive('\n')
            .for_each(|l| sink.file_line(" ", l));
        old_mid
            .split_inclusive('\n')
            .for_each(|l| sink.file_line("-", l));
        new_mid
            .split_inclusive('\n')
            .for_each(|l| sink.file_line("+", l));
        old[old.len() - suffix..old.len() - suffix + tail]
            .split_inclusive('\n')
            .for_each(|l| sink.file_line(" ", l));
    }
    sink.finish()
}

fn render_op(sink: &mut DiffSink, op: &DiffOp, olds: &[&str], news: &[&str]) {
    let (tag, old_range, new_range) = op.as_tag_tuple();
    match tag {
        DiffTag::Equal => olds[old_range].iter().for_each(|l| sink.file_line(" ", l)),
        DiffTag::Delete => olds[old_range].iter().for_each(|l| sink.file_line("-", l)),
        DiffTag::Insert => news[new_range].iter().for_each(|l| sink.file_line("+", l)),
        DiffTag::Replace => {
            olds[old_range].iter().for_each(|l| sink.file_line("-", l));
            news[new_range].iter().for_each(|l| sink.file_line("+", l));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_change_in_a_long_file_has_true_line_numbers() {
        let old: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 50\n", "line fifty\n");
        assert_eq!(
            unified(&old, &new, "f"),
            "--- a/f\n+++ b/f\n@@ -47,7 +47,7 @@\n line 47\n line 48\n line 49\n\
             -line 50\n+line fifty\n line 51\n line 52\n line 53\n"
        );
    }

    #[test]
    fn separate_changes_make_separate_hunks_and_equal_texts_none() {
        let old: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=30)
            .map(|i| match i {
                2 => "two\n".to_owned(),
                28 => "\n".to_owned(),
                i => format!("{i}\n"),
            })
            .collect();
        let d = unified(&old, &new, "f");
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        assert!(d.contains("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n"), "{d}");
        assert!(d.contains("@@ -25,6 +25,6 @@\n"), "{d}");
        assert_eq!(unified(&old, &old, "f"), "");
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let d = unified("a\nb", "a\nc", "f");
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n\
             +c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn a_huge_middle_is_one_streamed_hunk_cut_to_the_cap() {
        let old = "a\n".repeat(200_000);
        let new = "b\n".repeat(200_000);
        let d = unified(&old, &new, "f");
        assert!(
            d.starts_with("--- a/f\n+++ b/f\n@@ -1,200000 +1,200000 @@\n-a\n"),
            "{d:.100}"
        );
        assert!(d.ends_with("more lines]\n"));
        assert!(d.chars().count() < MAX_DIFF_CHARS + 100);
    }
}
