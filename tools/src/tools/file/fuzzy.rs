//! The matching chain of `patch`: find `old_string` in a file even when
//! the model's copy drifted from it (indentation, white space, escapes,
//! typographic characters, a few changed lines), then put `new_string` in
//! its place, re-indented to the file's indentation.
//!
//! The strategies run in the reference's order and the first that finds
//! anything decides: exact, line-trimmed, whitespace-normalized,
//! indentation-flexible, escape-normalized, trimmed-boundary,
//! unicode-normalized, block-anchor, context-aware. Several matches are an
//! error unless `replace_all` is set. Positions are byte offsets into the
//! file's text; every comparison is paid from a [`Budget`], so a huge file
//! or pattern ends in [`MatchError::TooComplex`] instead of running on.

use std::fmt;

use super::error::{FileError, MAX_EDIT_FILE_BYTES};
use super::seqmatch::{self, Budget, Exhausted, Matcher, Op};

/// Comparison steps one edit may take (about a second at worst).
pub const MATCH_BUDGET: u64 = 20_000_000;

/// How many lines a closest-lines hint may score before it stops looking.
const HINT_MAX_LINES: usize = 100_000;

/// The strategy that found the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Exact,
    LineTrimmed,
    WhitespaceNormalized,
    IndentationFlexible,
    EscapeNormalized,
    TrimmedBoundary,
    UnicodeNormalized,
    BlockAnchor,
    ContextAware,
}

impl Strategy {
    /// The chain, in the order it is tried.
    pub const CHAIN: [Strategy; 9] = [
        Strategy::Exact,
        Strategy::LineTrimmed,
        Strategy::WhitespaceNormalized,
        Strategy::IndentationFlexible,
        Strategy::EscapeNormalized,
        Strategy::TrimmedBoundary,
        Strategy::UnicodeNormalized,
        Strategy::BlockAnchor,
        Strategy::ContextAware,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Exact => "exact",
            Strategy::LineTrimmed => "line_trimmed",
            Strategy::WhitespaceNormalized => "whitespace_normalized",
            Strategy::IndentationFlexible => "indentation_flexible",
            Strategy::EscapeNormalized => "escape_normalized",
            Strategy::TrimmedBoundary => "trimmed_boundary",
            Strategy::UnicodeNormalized => "unicode_normalized",
            Strategy::BlockAnchor => "block_anchor",
            Strategy::ContextAware => "context_aware",
        }
    }

    fn find(self, content: &str, pattern: &str, budget: &mut Budget) -> Found {
        match self {
            Strategy::Exact => exact(content, pattern, budget),
            Strategy::LineTrimmed => by_lines(content, pattern, py_strip, budget),
            Strategy::WhitespaceNormalized => whitespace_normalized(content, pattern, budget),
            Strategy::IndentationFlexible => by_lines(content, pattern, py_lstrip, budget),
            Strategy::EscapeNormalized => escape_normalized(content, pattern, budget),
            Strategy::TrimmedBoundary => trimmed_boundary(content, pattern, budget),
            Strategy::UnicodeNormalized => unicode_normalized(content, pattern, budget),
            Strategy::BlockAnchor => block_anchor(content, pattern, budget),
            Strategy::ContextAware => context_aware(content, pattern, budget),
        }
    }
}

/// Why no replacement was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchError {
    /// `old_string` is empty.
    EmptyOld,
    /// `old_string` and `new_string` are the same.
    Identical,
    /// Several places matched and `replace_all` was not set.
    Ambiguous { count: usize },
    /// `old_string` and `new_string` carry `\'` or `\"` that the matched
    /// text does not: an escaping artifact of the tool call.
    EscapeDrift { sequence: &'static str },
    /// No strategy found the text; `hint` shows the closest lines.
    NotFound { hint: Option<String> },
    /// The comparisons needed exceed [`MATCH_BUDGET`].
    TooComplex,
    /// The result would exceed `max_len` bytes.
    TooLarge { count: usize, size: u64 },
}

/// The words for a matching failure, as the model reads them; `NotFound`
/// without the closest lines (`v4a` adds them).
impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            MatchError::EmptyOld => FileError::EmptyOldString.to_string(),
            MatchError::Identical => FileError::NoChange.to_string(),
            MatchError::Ambiguous { count } => format!(
                "the lines to replace occur {count} times; include more context to make them unique"
            ),
            MatchError::EscapeDrift { sequence } => format!(
                "the lines carry {sequence} that the file does not (an escaping mistake; \
                 send the quotes without the backslash)"
            ),
            MatchError::NotFound { .. } => "the lines to replace were not found".to_owned(),
            MatchError::TooComplex => {
                "the fuzzy search for the lines would take too long; copy them exactly".to_owned()
            }
            MatchError::TooLarge { size, .. } => {
                format!(
                    "the result would be {size} bytes, over the {MAX_EDIT_FILE_BYTES}-byte limit"
                )
            }
        };
        f.write_str(&text)
    }
}

/// A successful replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub content: String,
    pub count: usize,
    pub strategy: Strategy,
}

/// Byte spans `(start, end)` a strategy matched, ascending by start.
type Spans = Vec<(usize, usize)>;
type Found = Result<Spans, Exhausted>;

/// Finds `old` in `content` with the chain and replaces it by `new`
/// (every match with `replace_all`, else exactly one). A result over
/// `max_len` bytes is refused before it is built whole.
pub fn find_and_replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    max_len: u64,
) -> Result<Replaced, MatchError> {
    find_and_replace_within(
        content,
        old,
        new,
        replace_all,
        max_len,
        &mut Budget::new(MATCH_BUDGET),
    )
}

/// [`find_and_replace`] paying from a budget the caller holds (a V4A
/// patch shares one among its hunks).
pub fn find_and_replace_within(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    max_len: u64,
    budget: &mut Budget,
) -> Result<Replaced, MatchError> {
    if old.is_empty() {
        return Err(MatchError::EmptyOld);
    }
    if old == new {
        return Err(MatchError::Identical);
    }
    let too_complex = |_: Exhausted| MatchError::TooComplex;
    // Exact matches are counted and replaced without holding their
    // positions (a file of a million one-letter matches stays cheap).
    let count = content.matches(old).count();
    if count > 0 {
        if count > 1 && !replace_all {
            return Err(MatchError::Ambiguous { count });
        }
        let replacement = unescape_controls(new, |c| old.contains(c));
        let size = (content.len() as u64)
            .saturating_sub((count * old.len()) as u64)
            .saturating_add((count as u64).saturating_mul(replacement.len() as u64));
        if size > max_len {
            return Err(MatchError::TooLarge { count, size });
        }
        let mut out = String::with_capacity(size as usize);
        let mut copied = 0;
        for (at, _) in content.match_indices(old) {
            out.push_str(&content[copied..at]);
            out.push_str(&replacement);
            copied = at + old.len();
        }
        out.push_str(&content[copied..]);
        return Ok(Replaced {
            content: out,
            count,
            strategy: Strategy::Exact,
        });
    }
    for strategy in Strategy::CHAIN.into_iter().skip(1) {
        let spans = strategy.find(content, old, budget).map_err(too_complex)?;
        if spans.is_empty() {
            continue;
        }
        if spans.len() > 1 && !replace_all {
            return Err(MatchError::Ambiguous { count: spans.len() });
        }
        if let Some(sequence) = escape_drift(content, &spans, old, new, budget)? {
            return Err(MatchError::EscapeDrift { sequence });
        }
        let holds = |c: char| spans.iter().any(|&(s, e)| content[s..e].contains(c));
        let mut replacement = unescape_controls(new, holds);
        if strategy == Strategy::UnicodeNormalized && spans.len() == 1 {
            let (s, e) = spans[0];
            replacement =
                keep_unicode(&content[s..e], old, &replacement, budget).map_err(too_complex)?;
        }
        let out = apply(content, &spans, &replacement, old, max_len)?;
        return Ok(Replaced {
            content: out,
            count: spans.len(),
            strategy,
        });
    }
    Err(MatchError::NotFound {
        hint: closest_lines(old, content, budget),
    })
}

// ---------------------------------------------------------------------------
// Python's notions of white space and lines
// ---------------------------------------------------------------------------

/// White space as Python's `str.strip()` sees it.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

fn py_lstrip(s: &str) -> &str {
    s.trim_start_matches(py_space)
}

/// Lines as Python's `str.splitlines()` cuts them.
fn py_splitlines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let breaks = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if breaks {
            out.push(&s[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some(&(_, '\n')) = chars.peek() {
                    chars.next();
                    end += 1;
                }
            }
            start = end;
        }
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Where each `\n`-separated line of a text starts (`u32`: files are
/// capped far below 4 GiB), so a line is found without holding slices.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<u32>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str, budget: &mut Budget) -> Result<Self, Exhausted> {
        budget.spend(text.len() as u64 / 64)?;
        let mut starts = vec![0u32];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| (i + 1) as u32),
        );
        Ok(Self { text, starts })
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    fn get(&self, i: usize) -> &'a str {
        let start = self.starts[i] as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.text.len(), |&next| next as usize - 1);
        &self.text[start..end]
    }

    /// The span of lines `from..to`, without the `\n` after the last.
    fn span(&self, from: usize, to: usize) -> (usize, usize) {
        let start = self.starts[from] as usize;
        let end = self
            .starts
            .get(to)
            .map_or(self.text.len(), |&next| next as usize - 1);
        (start, end.min(self.text.len()))
    }
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

fn exact(content: &str, pattern: &str, budget: &mut Budget) -> Found {
    budget.spend(content.len() as u64 / 16)?;
    Ok(content
        .match_indices(pattern)
        .map(|(i, m)| (i, i + m.len()))
        .collect())
}

/// Blocks of whole lines equal to the pattern's lines once both sides went
/// through `norm`.
fn by_lines(content: &str, pattern: &str, norm: fn(&str) -> &str, budget: &mut Budget) -> Found {
    let lines = Lines::new(content, budget)?;
    let wanted: Vec<&str> = pattern.split('\n').map(norm).collect();
    blocks_where(&lines, wanted.len(), budget, |k, line| {
        norm(line) == wanted[k]
    })
}

/// Blocks of `m` lines whose line `k` passes `same(k, line)` for every `k`.
fn blocks_where(
    lines: &Lines<'_>,
    m: usize,
    budget: &mut Budget,
    same: impl Fn(usize, &str) -> bool,
) -> Found {
    let mut out = Vec::new();
    if m == 0 || lines.len() < m {
        return Ok(out);
    }
    for i in 0..=lines.len() - m {
        let mut all = true;
        for k in 0..m {
            let line = lines.get(i + k);
            budget.spend(1 + line.len() as u64 / 8)?;
            if !same(k, line) {
                all = false;
                break;
            }
        }
        if all {
            out.push(lines.span(i, i + m));
        }
    }
    Ok(out)
}

/// Runs of spaces and tabs made one space.
fn collapse_blanks(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if c == ' ' || c == '\t' {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

fn whitespace_normalized(content: &str, pattern: &str, budget: &mut Budget) -> Found {
    let norm = collapse_blanks(content);
    let found = exact(&norm, &collapse_blanks(pattern), budget)?;
    if found.is_empty() {
        return Ok(found);
    }
    Ok(blank_spans_back(content, &norm, &found))
}

/// Maps spans in the blank-collapsed text back onto the original, the way
/// the reference pairs the two texts position by position: a run's first
/// blank is paired with the collapsed space when it is a space itself (or
/// when a tab is the run's last blank), and the run's other blanks with
/// what follows. A span starts at the first original position paired at
/// or after its start and ends after the last one paired with its last
/// position; a span ending in a space also takes the rest of the run.
fn blank_spans_back(orig: &str, norm: &str, spans: &[(usize, usize)]) -> Spans {
    let (o, n) = (orig.as_bytes(), norm.as_bytes());
    let blank = |b: u8| b == b' ' || b == b'\t';
    // The pairing, walked once, forward: `pair(i)` is original byte i's
    // position in the collapsed text.
    let mut walk = Pairing { o, n, oi: 0, ni: 0 };
    let mut out = Vec::with_capacity(spans.len());
    for &(ns, ne) in spans {
        // First original position paired at or after `ns`.
        let start = loop {
            match walk.peek() {
                Some(p) if p < ns => walk.step(),
                Some(_) => break walk.oi,
                None => break o.len(),
            }
        };
        // Last original position paired with `ne - 1`, plus one.
        let mut end = None;
        loop {
            match walk.peek() {
                Some(p) if p < ne - 1 => walk.step(),
                Some(p) if p == ne - 1 => {
                    end = Some(walk.oi + 1);
                    walk.step();
                }
                _ => break,
            }
        }
        let mut end = end.unwrap_or_else(|| {
            // The reference counts the fallback in characters.
            orig[start.min(orig.len())..]
                .char_indices()
                .nth(norm[ns..ne].chars().count())
                .map_or(orig.len(), |(i, _)| start + i)
        });
        if ne < n.len() && n[ne - 1] == b' ' {
            while end < o.len() && blank(o[end]) {
                end += 1;
            }
        }
        out.push((start, end.min(o.len())));
    }
    out
}

/// The position-by-position pairing of [`blank_spans_back`].
struct Pairing<'a> {
    o: &'a [u8],
    n: &'a [u8],
    oi: usize,
    ni: usize,
}

impl Pairing<'_> {
    /// Where the current original byte is paired, `None` past the end.
    fn peek(&self) -> Option<usize> {
        if self.oi >= self.o.len() {
            None
        } else if self.ni >= self.n.len() {
            Some(self.n.len())
        } else {
            Some(self.ni)
        }
    }

    fn step(&mut self) {
        let (oi, ni) = (self.oi, self.ni);
        self.oi += 1;
        if ni >= self.n.len() {
            return;
        }
        let blank = |b: u8| b == b' ' || b == b'\t';
        // Equal bytes move on together; a blank paired with the collapsed
        // space moves it on only when the run ends after it.
        let run_ends = blank(self.o[oi])
            && self.n[ni] == b' '
            && self.oi < self.o.len()
            && !blank(self.o[self.oi]);
        if self.o[oi] == self.n[ni] || run_ends {
            self.ni += 1;
        }
    }
}

fn escape_normalized(content: &str, pattern: &str, budget: &mut Budget) -> Found {
    let unescaped = pattern
        .replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\r", "\r");
    if unescaped == pattern {
        return Ok(Vec::new());
    }
    exact(content, &unescaped, budget)
}

fn trimmed_boundary(content: &str, pattern: &str, budget: &mut Budget) -> Found {
    let wanted: Vec<&str> = pattern.split('\n').collect();
    let m = wanted.len();
    let lines = Lines::new(content, budget)?;
    let edge = |k: usize| k == 0 || k == m - 1;
    blocks_where(&lines, m, budget, |k, line| {
        if edge(k) {
            py_strip(line) == py_strip(wanted[k])
        } else {
            line == wanted[k]
        }
    })
}

/// Typographic characters and their ASCII stand-ins.
const TYPOGRAPHIC: [(char, &str); 8] = [
    ('\u{201c}', "\""),
    ('\u{201d}', "\""),
    ('\u{2018}', "'"),
    ('\u{2019}', "'"),
    ('\u{2014}', "--"),
    ('\u{2013}', "-"),
    ('\u{2026}', "..."),
    ('\u{a0}', " "),
];

fn ascii_for(c: char) -> Option<&'static str> {
    TYPOGRAPHIC.iter().find(|(t, _)| *t == c).map(|(_, a)| *a)
}

/// `s` with its typographic characters replaced; `None` when it has none.
fn typographic_to_ascii(s: &str) -> Option<String> {
    if !s.chars().any(|c| ascii_for(c).is_some()) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match ascii_for(c) {
            Some(a) => out.push_str(a),
            None => out.push(c),
        }
    }
    Some(out)
}

fn unicode_normalized(content: &str, pattern: &str, budget: &mut Budget) -> Found {
    let norm_content = typographic_to_ascii(content);
    let norm_pattern = typographic_to_ascii(pattern);
    if norm_content.is_none() && norm_pattern.is_none() {
        return Ok(Vec::new());
    }
    let nc = norm_content.as_deref().unwrap_or(content);
    let np = norm_pattern.as_deref().unwrap_or(pattern);
    let mut found = exact(nc, np, budget)?;
    if found.is_empty() {
        found = by_lines(nc, np, py_strip, budget)?;
    }
    Ok(typographic_spans_back(content, &found))
}

/// Maps spans of the typographic-to-ASCII text back onto the original: a
/// span starting inside an expansion (the second `-` of an em dash) is
/// dropped; its end is the first original character placed at or after
/// the span's end.
fn typographic_spans_back(orig: &str, spans: &[(usize, usize)]) -> Spans {
    let mut out = Vec::with_capacity(spans.len());
    let mut chars = orig.char_indices().peekable();
    let mut norm_pos = 0usize;
    let width = |c: char| ascii_for(c).map_or(c.len_utf8(), str::len);
    for &(ns, ne) in spans {
        // Advance to the first character placed at or after `ns`.
        while let Some(&(_, c)) = chars.peek() {
            if norm_pos >= ns {
                break;
            }
            norm_pos += width(c);
            chars.next();
        }
        let Some(&(start, _)) = chars.peek() else {
            continue;
        };
        if norm_pos != ns {
            continue;
        }
        // Walk on (a copy) to the end without losing the cursor for the
        // next span, which starts at or after this one's end.
        let mut end_walk = chars.clone();
        let mut pos = norm_pos;
        let mut end = orig.len();
        while let Some(&(i, c)) = end_walk.peek() {
            if pos >= ne {
                end = i;
                break;
            }
            pos += width(c);
            end_walk.next();
        }
        out.push((start, end));
    }
    out
}

fn block_anchor(content: &str, pattern: &str, budget: &mut Budget) -> Found {
    let norm_pattern = typographic_to_ascii(pattern);
    let np = norm_pattern.as_deref().unwrap_or(pattern);
    let wanted: Vec<&str> = np.split('\n').collect();
    let m = wanted.len();
    if m < 2 {
        return Ok(Vec::new());
    }
    let norm_content = typographic_to_ascii(content);
    let nc = norm_content.as_deref().unwrap_or(content);
    let norm_lines = Lines::new(nc, budget)?;
    let orig_lines = Lines::new(content, budget)?;
    if norm_lines.len() < m {
        return Ok(Vec::new());
    }
    let (first, last) = (py_strip(wanted[0]), py_strip(wanted[m - 1]));
    let mut candidates = Vec::new();
    for i in 0..=norm_lines.len() - m {
        budget.spend(1)?;
        if py_strip(norm_lines.get(i)) == first && py_strip(norm_lines.get(i + m - 1)) == last {
            candidates.push(i);
        }
    }
    let threshold = if candidates.len() == 1 { 0.50 } else { 0.70 };
    let middle: Vec<char> = wanted[1..m - 1].join("\n").chars().collect();
    let mut out = Vec::new();
    for i in candidates {
        let keep = if m <= 2 {
            true
        } else {
            let (s, e) = norm_lines.span(i + 1, i + m - 1);
            let block: Vec<char> = nc[s..e].chars().collect();
            seqmatch::ratio(&block, &middle, budget)? >= threshold
        };
        if keep {
            out.push(orig_lines.span(i, i + m));
        }
    }
    Ok(out)
}

fn context_aware(content: &str, pattern: &str, budget: &mut Budget) -> Found {
    let wanted: Vec<Vec<char>> = pattern
        .split('\n')
        .map(|l| py_strip(l).chars().collect())
        .collect();
    let m = wanted.len();
    let lines = Lines::new(content, budget)?;
    let mut out = Vec::new();
    if lines.len() < m {
        return Ok(out);
    }
    let needed = m as f64 * 0.5;
    let mut line_chars = Vec::new();
    for i in 0..=lines.len() - m {
        let mut similar = 0usize;
        for (k, want) in wanted.iter().enumerate() {
            // Enough lines already agree, or too few are left to get there.
            if similar as f64 >= needed || ((similar + m - k) as f64) < needed {
                break;
            }
            line_chars.clear();
            line_chars.extend(py_strip(lines.get(i + k)).chars());
            budget.spend(1)?;
            if seqmatch::ratio_at_least(want, &line_chars, 0.80, budget)?.is_some() {
                similar += 1;
            }
        }
        if similar as f64 >= needed {
            out.push(lines.span(i, i + m));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Building the replacement
// ---------------------------------------------------------------------------

/// Whether `old` and `new` both carry `\'` or `\"` that none of the
/// matched text does.
fn escape_drift(
    content: &str,
    spans: &[(usize, usize)],
    old: &str,
    new: &str,
    budget: &mut Budget,
) -> Result<Option<&'static str>, MatchError> {
    let suspects = ["\\'", "\\\""];
    if !suspects.iter().any(|s| new.contains(s)) {
        return Ok(None);
    }
    let total: usize = spans.iter().map(|(s, e)| e - s).sum();
    budget
        .spend(total as u64)
        .map_err(|_| MatchError::TooComplex)?;
    let matched: String = spans.iter().map(|&(s, e)| &content[s..e]).collect();
    Ok(suspects
        .into_iter()
        .find(|s| new.contains(s) && old.contains(s) && !matched.contains(s)))
}

/// `new` with `\t` / `\r` written out as the characters, each only when
/// the matched text holds that character (so a file that really contains
/// the two characters `\t` keeps them).
fn unescape_controls(new: &str, holds: impl Fn(char) -> bool) -> String {
    let mut out = new.to_owned();
    if out.contains("\\t") && holds('\t') {
        out = out.replace("\\t", "\t");
    }
    if out.contains("\\r") && holds('\r') {
        out = out.replace("\\r", "\r");
    }
    out
}

/// After a typographic match: `new` applied to the file's own text, so the
/// parts the model did not change keep their curly quotes and dashes.
fn keep_unicode(
    region: &str,
    old: &str,
    new: &str,
    budget: &mut Budget,
) -> Result<String, Exhausted> {
    let norm_old = typographic_to_ascii(old).unwrap_or_else(|| old.to_owned());
    let norm_region = typographic_to_ascii(region);
    if norm_region.as_deref().unwrap_or(region) != norm_old {
        return Ok(new.to_owned());
    }
    // Each character of `region` and where it starts in the ASCII text.
    let region_chars: Vec<(usize, char)> = {
        let mut pos = 0;
        region
            .chars()
            .map(|c| {
                let at = pos;
                pos += ascii_for(c).map_or(1, |a| a.chars().count());
                (at, c)
            })
            .collect()
    };
    let old_chars: Vec<char> = norm_old.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    let matcher = Matcher::new(&new_chars, budget)?;
    let mut out = String::with_capacity(new.len());
    for (op, a0, a1, b0, b1) in matcher.ops(&old_chars, budget)? {
        match op {
            Op::Equal => {
                // From the character placed at `a0` (or the first, as the
                // reference falls back) to the first placed at or past `a1`.
                let from = region_chars
                    .binary_search_by_key(&a0, |&(at, _)| at)
                    .unwrap_or(0);
                region_chars[from..]
                    .iter()
                    .take_while(|&&(at, _)| at < a1)
                    .for_each(|&(_, c)| out.push(c));
            }
            Op::Replace | Op::Insert => out.extend(&new_chars[b0..b1]),
            Op::Delete => {}
        }
    }
    Ok(out)
}

/// The spaces and tabs a line starts with.
fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn first_text_line(s: &str) -> Option<&str> {
    s.split('\n').find(|l| !py_strip(l).is_empty())
}

/// `new` moved from the indentation `old` starts at to the one the matched
/// `region` starts at, keeping its lines' relative indentation; blank
/// lines stay as they are, lines indented less than `old` go to the
/// region's indentation.
fn reindent<'n>(region: &str, old: &str, new: &'n str) -> std::borrow::Cow<'n, str> {
    let (Some(old_first), Some(file_first)) = (first_text_line(old), first_text_line(region))
    else {
        return new.into();
    };
    let (from, to) = (indent_of(old_first), indent_of(file_first));
    if new.is_empty() || from == to {
        return new.into();
    }
    let mut out = String::with_capacity(new.len() + to.len() * 4);
    for (i, line) in new.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if py_strip(line).is_empty() {
            out.push_str(line);
        } else if let Some(rest) = line.strip_prefix(from) {
            out.push_str(to);
            out.push_str(rest);
        } else {
            out.push_str(to);
            out.push_str(line.trim_start_matches([' ', '\t']));
        }
    }
    out.into()
}

/// Puts `new`, re-indented per span from the indentation of the model's
/// `old` to the file's, in place of every span.
fn apply(
    content: &str,
    spans: &[(usize, usize)],
    new: &str,
    old: &str,
    max_len: u64,
) -> Result<String, MatchError> {
    let piece = |s: usize, e: usize| reindent(&content[s..e], old, new);
    let overlapping = spans.windows(2).any(|w| w[1].0 < w[0].1);
    if overlapping {
        return apply_overlapping(content, spans, &piece, max_len);
    }
    // Sizes first, so an oversized result is refused unbuilt.
    let mut size = content.len() as u64;
    for &(s, e) in spans {
        size = size - (e - s) as u64 + piece(s, e).len() as u64;
    }
    if size > max_len {
        return Err(MatchError::TooLarge {
            count: spans.len(),
            size,
        });
    }
    let mut out = String::with_capacity(size as usize);
    let mut copied = 0;
    for &(s, e) in spans {
        out.push_str(&content[copied..s]);
        out.push_str(&piece(s, e));
        copied = e;
    }
    out.push_str(&content[copied..]);
    Ok(out)
}

/// Overlapping spans (a line-based strategy under `replace_all` matching
/// blocks that share lines) replaced as the reference does: from the last
/// to the first, each cut at its original character positions in the text
/// already changed after it.
fn apply_overlapping<'n>(
    content: &str,
    spans: &[(usize, usize)],
    piece: &dyn Fn(usize, usize) -> std::borrow::Cow<'n, str>,
    max_len: u64,
) -> Result<String, MatchError> {
    // Each splice moves the text after it: refused when that adds up.
    if (spans.len() as u64).saturating_mul(content.len() as u64) > MATCH_BUDGET {
        return Err(MatchError::TooComplex);
    }
    let mut offsets: Vec<usize> = spans.iter().flat_map(|&(s, e)| [s, e]).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut chars_before = Vec::with_capacity(offsets.len());
    let (mut prev, mut count) = (0, 0);
    for &o in &offsets {
        count += content[prev..o].chars().count();
        prev = o;
        chars_before.push(count);
    }
    let char_at = |byte: usize| offsets.binary_search(&byte).map_or(0, |i| chars_before[i]);
    let mut text: Vec<char> = content.chars().collect();
    let mut order: Vec<(usize, usize)> = spans.to_vec();
    order.sort_by_key(|span| std::cmp::Reverse(span.0));
    for (s, e) in order {
        let (cs, ce) = (char_at(s), char_at(e));
        let p: Vec<char> = piece(s, e).chars().collect();
        let (cs, ce) = (
            cs.min(text.len()),
            ce.min(text.len()).max(cs.min(text.len())),
        );
        text.splice(cs..ce, p);
        if text.len() as u64 > max_len {
            return Err(MatchError::TooLarge {
                count: spans.len(),
                size: text.len() as u64,
            });
        }
    }
    Ok(text.into_iter().collect())
}

// ---------------------------------------------------------------------------
// The no-match hint
// ---------------------------------------------------------------------------

/// Up to three places in `content` most like the first non-blank line of
/// `old`, each with two lines around it, numbered as `read_file` does.
pub fn closest_lines(old: &str, content: &str, budget: &mut Budget) -> Option<String> {
    let old_lines = py_splitlines(old);
    let lines = py_splitlines(content);
    if old_lines.is_empty() || lines.is_empty() {
        return None;
    }
    let anchor: Vec<char> = old_lines
        .iter()
        .map(|l| py_strip(l))
        .find(|l| !l.is_empty())?
        .chars()
        .collect();
    let mut scored: Vec<(f64, usize)> = Vec::new();
    let mut line_chars = Vec::new();
    for (i, line) in lines.iter().enumerate().take(HINT_MAX_LINES) {
        let stripped = py_strip(line);
        if stripped.is_empty() {
            continue;
        }
        line_chars.clear();
        line_chars.extend(stripped.chars());
        // Strictly above 0.3: the smallest float above it as the floor.
        match seqmatch::ratio_at_least(
            &anchor,
            &line_chars,
            f64::from_bits(0.3f64.to_bits() + 1),
            budget,
        ) {
            Ok(Some(r)) => scored.push((r, i)),
            Ok(None) => {}
            Err(Exhausted) => break,
        }
    }
    // Best first; equal scores keep file order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut seen = Vec::new();
    let mut parts = Vec::new();
    for &(_, i) in scored.iter().take(3) {
        let from = i.saturating_sub(2);
        let to = (i + old_lines.len() + 2).min(lines.len());
        if seen.contains(&(from, to)) {
            continue;
        }
        seen.push((from, to));
        let snippet: Vec<String> = (from..to)
            .map(|n| format!("{:4}| {}", n + 1, lines[n]))
            .collect();
        parts.push(snippet.join("\n"));
    }
    (!parts.is_empty()).then(|| parts.join("\n---\n"))
}

#[cfg(test)]
#[path = "fuzzy_tests.rs"]
mod tests;
