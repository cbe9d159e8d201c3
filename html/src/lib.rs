//! `hermes-html`: HTML to readable markdown-ish text (what `web_extract`
//! gives the model), without a DOM: a small tokenizer
//! and a writer that knows the common elements.
//!
//! Scripts, styles, templates, SVG, frames and the document head are
//! dropped (the `<title>` is kept apart). When the page has a `<main>` (else
//! an `<article>`), only its first one is rendered: the page's content
//! without the navigation around it. Headings become `#` lines, list items
//! `- ` / `1. ` lines, links `[text](url)` with the URL resolved against the
//! page's, images `[IMAGE: alt]`, `<pre>` a fenced block, inline code
//! backquoted, table cells `|`-separated. White space is collapsed outside
//! `<pre>`; character references are decoded.
//!
//! A hostile page costs no more than an ordinary one of its size: time and
//! memory are linear in the input. The tokenizer only goes forward and keeps
//! no list of tokens (the page is read twice: once for the title and the
//! content range, once to write). The writer's state is bounded whatever the
//! nesting: lists nested deeper than [`MAX_DEPTH`] are flattened into the
//! deepest one (not indented further), a link opened inside an open link
//! closes it (as browsers do), bold / italic / code markers are written at
//! their outermost level only. The text stops at [`Limits::max_output`]
//! bytes and the conversion at [`Limits::deadline`]; either way the text
//! ends with a note saying the page was cut.

use std::ops::Range;
use std::time::Instant;

use url::Url;

/// Bytes of text one HTML page is converted into at most by
/// [`to_markdown`] (the conversion stops there and says so): as much as
/// `web_extract` reads of a page.
pub const MAX_TEXT_BYTES: usize = 5 * 1024 * 1024;

/// List nesting levels the writer follows: a list deeper than this is
/// rendered as part of the deepest one (same indentation, `- ` items).
pub const MAX_DEPTH: usize = 64;
/// Characters of the title kept.
const MAX_TITLE_CHARS: usize = 1_000;
/// Tokens between two looks at the clock.
const CLOCK_EVERY: usize = 1_024;
/// A character reference name longer than this is no reference.
const MAX_REFERENCE_NAME: usize = 32;
/// Tag names are kept up to this length: longer ones are no element the
/// writer knows (the longest, `blockquote` and `figcaption`, have 10).
const NAME_CAP: usize = 12;

/// Elements whose content is never shown.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "head",
    "select", "button",
];
/// Elements that start and end a paragraph.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "aside",
    "ul",
    "ol",
    "table",
    "blockquote",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "form",
    "fieldset",
    "address",
    "details",
    "summary",
    "body",
    "html",
];
/// Elements without content or end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// What one conversion may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes of text written at most; the conversion stops there.
    pub max_output: usize,
    /// When the conversion stops, whatever it reached.
    pub deadline: Option<Instant>,
}

/// Why a conversion stopped before the end of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The text reached [`Limits::max_output`].
    Output,
    /// [`Limits::deadline`] passed.
    Deadline,
}

/// A converted page.
#[derive(Debug)]
pub struct Converted {
    pub title: String,
    /// The text converted (without the note).
    pub text: String,
    pub stopped: Option<Stop>,
    /// When the conversion stopped early, a note saying so.
    pub note: Option<String>,
}

impl Converted {
    /// The title, and the text ending with the note when there is one.
    pub fn into_parts(self) -> (String, String) {
        let mut text = self.text;
        if let Some(note) = self.note {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&note);
        }
        (self.title, text)
    }
}

/// The page's title (if any) and its text, within the text size of a page
/// ([`MAX_TEXT_BYTES`]) and without a deadline.
pub fn to_markdown(html: &str, base_url: &str) -> (String, String) {
    let limits = Limits {
        max_output: MAX_TEXT_BYTES,
        deadline: None,
    };
    convert(html, base_url, limits).into_parts()
}

/// The page's title and text within `limits`.
pub fn convert(html: &str, base_url: &str, limits: Limits) -> Converted {
    convert_counting(html, base_url, limits).0
}

/// [`convert`], and the bytes the writer wrote (rewrites included): the
/// measure of its work, which the tests hold linear in the input.
fn convert_counting(html: &str, base_url: &str, limits: Limits) -> (Converted, usize) {
    let mut clock = Clock::new(limits.deadline);
    let outline = match Outline::of(html, &mut clock) {
        Ok(outline) => outline,
        Err(stop) => {
            let page = Converted {
                title: String::new(),
                text: String::new(),
                stopped: Some(stop),
                note: Some(note(stop, limits)),
            };
            return (page, 0);
        }
    };
    let range = outline.main.or(outline.article).unwrap_or(0..usize::MAX);
    let mut w = Writer::new(base_url);
    let tokens = Tokens::new(html).skip(range.start).take(range.len());
    let stopped = w.run(tokens, limits.max_output, &mut clock);
    let written = w.written;
    let page = Converted {
        title: outline.title,
        text: w.finish(limits.max_output),
        stopped,
        note: stopped.map(|stop| note(stop, limits)),
    };
    (page, written)
}

/// The note ending a text that was cut.
fn note(stop: Stop, limits: Limits) -> String {
    match stop {
        Stop::Output => format!(
            "[Text cut: the page's text reached its limit of {}; the rest of the page was not converted.]",
            human_bytes(limits.max_output)
        ),
        Stop::Deadline => "[Text cut: the page's time limit was reached during conversion; \
                           the rest of the page was not converted.]"
            .to_string(),
    }
}

/// `5 MB` for whole MiBs, else bytes.
fn human_bytes(n: usize) -> String {
    const MB: usize = 1024 * 1024;
    if n >= MB && n.is_multiple_of(MB) {
        format!("{} MB", n / MB)
    } else {
        format!("{n} bytes")
    }
}

/// Looks at the clock every [`CLOCK_EVERY`] ticks.
struct Clock {
    deadline: Option<Instant>,
    ticks: usize,
}

impl Clock {
    fn new(deadline: Option<Instant>) -> Self {
        Clock { deadline, ticks: 0 }
    }

    /// One token more; whether the deadline has passed (checked on the
    /// first tick and every [`CLOCK_EVERY`] after).
    fn expired(&mut self) -> bool {
        let look = self.ticks.is_multiple_of(CLOCK_EVERY);
        self.ticks = self.ticks.wrapping_add(1);
        look && self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// A tag name, ASCII-lowercased, kept up to [`NAME_CAP`] bytes (no
/// allocation per tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Name {
    bytes: [u8; NAME_CAP],
    len: u8,
}

impl Name {
    /// `raw` is ASCII alphanumerics, `-` and `:` (see the tokenizer).
    fn new(raw: &str) -> Self {
        let mut bytes = [0u8; NAME_CAP];
        let len = raw.len().min(NAME_CAP);
        for (b, r) in bytes.iter_mut().zip(raw.bytes()) {
            *b = r.to_ascii_lowercase();
        }
        Name {
            bytes,
            len: u8::try_from(len).unwrap_or(0),
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Text(&'a str),
    Start {
        name: Name,
        attrs: &'a str,
        self_closing: bool,
    },
    End(Name),
}

/// The tokens of a page, one at a time, going forward only.
struct Tokens<'a> {
    rest: &'a str,
    /// Inside script / style / textarea / title: raw text up to this end tag.
    raw_until: Option<Name>,
}

impl<'a> Tokens<'a> {
    fn new(html: &'a str) -> Self {
        Tokens {
            rest: html,
            raw_until: None,
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let rest = self.rest;
            if rest.is_empty() {
                return None;
            }
            if let Some(name) = self.raw_until.take() {
                let end = find_end_tag(rest, name.as_str()).unwrap_or(rest.len());
                self.rest = &rest[end..];
                if end == 0 {
                    continue;
                }
                return Some(Token::Text(&rest[..end]));
            }
            let Some(lt) = rest.find('<') else {
                self.rest = "";
                return Some(Token::Text(rest));
            };
            if lt > 0 {
                self.rest = &rest[lt..];
                return Some(Token::Text(&rest[..lt]));
            }
            if let Some(after) = rest.strip_prefix("<!--") {
                self.rest = after.find("-->").map_or("", |i| &after[i + 3..]);
                continue;
            }
            if let Some(after) = rest.strip_prefix("<![CDATA[") {
                let end = after.find("]]>").unwrap_or(after.len());
                self.rest = after.get(end + 3..).unwrap_or("");
                return Some(Token::Text(&after[..end]));
            }
            if rest.starts_with("<!") || rest.starts_with("<?") {
                self.rest = rest.find('>').map_or("", |i| &rest[i + 1..]);
                continue;
            }
            let closing = rest.starts_with("</");
            let name_start = if closing { 2 } else { 1 };
            let after_lt = &rest[name_start..];
            if !after_lt.starts_with(|c: char| c.is_ascii_alphabetic()) {
                // A lone `<` is text.
                self.rest = &rest[1..];
                return Some(Token::Text(&rest[..1]));
            }
            let name_len = after_lt
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':'))
                .unwrap_or(after_lt.len());
            let name = Name::new(&after_lt[..name_len]);
            let attrs_start = name_start + name_len;
            let (attrs_end, next) = tag_end(rest, attrs_start);
            let inner = &rest[attrs_start..attrs_end];
            self.rest = &rest[next..];
            if closing {
                return Some(Token::End(name));
            }
            let self_closing = inner.trim_end().ends_with('/');
            if matches!(name.as_str(), "script" | "style" | "textarea" | "title") && !self_closing {
                self.raw_until = Some(name);
            }
            return Some(Token::Start {
                name,
                attrs: inner,
                self_closing,
            });
        }
    }
}

/// Where a tag's attribute text ends and the index just past its `>`,
/// honouring quoted attribute values (both the end of `s` when there is no `>`).
fn tag_end(s: &str, from: usize) -> (usize, usize) {
    let mut quote: Option<u8> = None;
    for (i, &c) in s.as_bytes()[from..].iter().enumerate() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(c),
            (None, b'>') => return (from + i, from + i + 1),
            _ => {}
        }
    }
    (s.len(), s.len())
}

/// Where the end tag `</name` (any case) starts.
fn find_end_tag(hay: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = hay[from..].find("</") {
        let at = from + i;
        let after = &hay.as_bytes()[at + 2..];
        if after.len() >= name.len() && after[..name.len()].eq_ignore_ascii_case(name.as_bytes()) {
            return Some(at);
        }
        from = at + 2;
    }
    None
}

/// Case-insensitive search for a non-empty ASCII needle.
fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() || h.len() < n.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// The value of attribute `want` in a tag's attribute text.
fn attr(attrs: &str, want: &str) -> Option<String> {
    let mut rest = attrs;
    while let Some(pos) = find_ci(rest, want) {
        let before = rest[..pos].chars().next_back();
        let after = &rest[pos + want.len()..];
        rest = after;
        if before.is_some_and(|c| !c.is_whitespace()) {
            continue;
        }
        let Some(value) = after.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        let raw = match value.chars().next() {
            Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
            _ => value
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap_or(""),
        };
        return Some(decode_entities(raw));
    }
    None
}

/// What the first pass learns: the title and the token range of the first
/// `<main>` and `<article>`.
struct Outline {
    title: String,
    main: Option<Range<usize>>,
    article: Option<Range<usize>>,
}

/// The token range inside the first element of one name, followed through
/// one pass.
#[derive(Default)]
struct Span {
    start: Option<usize>,
    end: Option<usize>,
    depth: usize,
}

impl Span {
    fn see(&mut self, i: usize, token: &Token<'_>, want: &str) {
        if self.end.is_some() {
            return;
        }
        match token {
            Token::Start { name, .. } if name.as_str() == want => {
                if self.start.is_none() {
                    self.start = Some(i + 1);
                }
                self.depth += 1;
            }
            Token::End(name) if name.as_str() == want && self.start.is_some() => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.end = Some(i);
                }
            }
            _ => {}
        }
    }

    fn range(&self) -> Option<Range<usize>> {
        self.start.map(|s| s..self.end.unwrap_or(usize::MAX))
    }
}

impl Outline {
    fn of(html: &str, clock: &mut Clock) -> Result<Outline, Stop> {
        let mut title = None;
        let mut in_title = false;
        let (mut main, mut article) = (Span::default(), Span::default());
        for (i, t) in Tokens::new(html).enumerate() {
            if clock.expired() {
                return Err(Stop::Deadline);
            }
            if in_title {
                in_title = false;
                if let Token::Text(text) = t {
                    title = Some(title_text(text));
                }
            }
            if title.is_none() && matches!(t, Token::Start { name, .. } if name.as_str() == "title")
            {
                in_title = true;
            }
            main.see(i, &t, "main");
            article.see(i, &t, "article");
        }
        Ok(Outline {
            title: title.unwrap_or_default(),
            main: main.range(),
            article: article.range(),
        })
    }
}

/// The title as one line of at most [`MAX_TITLE_CHARS`] characters.
fn title_text(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = 0usize;
    let mut space = false;
    decode_into(raw, |piece| {
        for c in piece.chars() {
            if chars >= MAX_TITLE_CHARS {
                return;
            }
            if c.is_whitespace() {
                space = !out.is_empty();
                continue;
            }
            if space {
                out.push(' ');
                chars += 1;
                space = false;
            }
            out.push(c);
            chars += 1;
        }
    });
    out
}

struct Writer {
    out: String,
    /// Bytes written into `out` so far, rewrites included.
    written: usize,
    /// The page's URL, links are resolved against; `None` if unparsable.
    base: Option<Url>,
    skip_depth: usize,
    pre_depth: usize,
    /// Per open list, at most [`MAX_DEPTH`]: `None` for `ul`, the next
    /// number for `ol`.
    lists: Vec<Option<u32>>,
    /// Lists open beyond [`MAX_DEPTH`], flattened into the deepest one.
    lists_beyond: usize,
    /// The open link: its href and where its text starts in `out`.
    link: Option<(Option<String>, usize)>,
    /// Open elements per [`Marker`].
    markers: [usize; 3],
}

/// Inline elements written as a marker before and after their text.
#[derive(Debug, Clone, Copy)]
enum Marker {
    Code = 0,
    Strong = 1,
    Emphasis = 2,
}

impl Marker {
    fn text(self) -> &'static str {
        match self {
            Marker::Code => "`",
            Marker::Strong => "**",
            Marker::Emphasis => "_",
        }
    }
}

impl Writer {
    fn new(base: &str) -> Self {
        Writer {
            out: String::new(),
            written: 0,
            base: Url::parse(base).ok(),
            skip_depth: 0,
            pre_depth: 0,
            lists: Vec::new(),
            lists_beyond: 0,
            link: None,
            markers: [0; 3],
        }
    }

    /// Writes the tokens until they end, the text reaches `max_output`
    /// bytes or the clock runs out.
    fn run<'a>(
        &mut self,
        tokens: impl Iterator<Item = Token<'a>>,
        max_output: usize,
        clock: &mut Clock,
    ) -> Option<Stop> {
        for t in tokens {
            if self.out.len() >= max_output {
                return Some(Stop::Output);
            }
            if clock.expired() {
                return Some(Stop::Deadline);
            }
            match t {
                Token::Text(text) => self.text(text),
                Token::Start {
                    name,
                    attrs,
                    self_closing,
                } => {
                    let name = name.as_str();
                    self.start(name, attrs);
                    if self_closing && !VOID.contains(&name) {
                        self.end(name);
                    }
                }
                Token::End(name) => self.end(name.as_str()),
            }
        }
        // The last token may have gone past the limit (a text reaching it
        // exactly is whole).
        (self.out.len() > max_output).then_some(Stop::Output)
    }

    fn put(&mut self, s: &str) {
        self.written += s.len();
        self.out.push_str(s);
    }

    fn put_char(&mut self, c: char) {
        self.written += c.len_utf8();
        self.out.push(c);
    }

    fn text(&mut self, text: &str) {
        if self.skip_depth > 0 {
            return;
        }
        if self.pre_depth > 0 {
            decode_into(text, |piece| self.put(piece));
            return;
        }
        // White space collapsed to one space, none at a line's start.
        decode_into(text, |piece| {
            for c in piece.chars() {
                if !c.is_whitespace() {
                    self.put_char(c);
                } else if !self.out.is_empty() && !self.out.ends_with([' ', '\n']) {
                    self.put_char(' ');
                }
            }
        });
    }

    fn start(&mut self, name: &str, attrs: &str) {
        if SKIPPED.contains(&name) || name == "title" {
            if !VOID.contains(&name) {
                self.skip_depth += 1;
            }
            return;
        }
        if self.skip_depth > 0 {
            return;
        }
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.paragraph();
                let level = usize::from(name.as_bytes()[1] - b'0');
                self.put(&"######"[..level]);
                self.put(" ");
            }
            "br" => self.newline(),
            "hr" => {
                self.paragraph();
                self.put("---");
                self.paragraph();
            }
            "li" => {
                self.newline();
                for _ in 1..self.lists.len() {
                    self.put("  ");
                }
                match self.lists.last_mut() {
                    Some(Some(n)) if self.lists_beyond == 0 => {
                        let marker = format!("{n}. ");
                        *n = n.saturating_add(1);
                        self.put(&marker);
                    }
                    _ => self.put("- "),
                }
            }
            "ul" | "ol" => {
                self.paragraph();
                if self.lists.len() < MAX_DEPTH {
                    self.lists.push((name == "ol").then_some(1));
                } else {
                    self.lists_beyond += 1;
                }
            }
            "tr" => self.newline(),
            "td" | "th" if !self.out.ends_with('\n') && !self.out.is_empty() => {
                self.put(" | ");
            }
            "pre" => {
                self.paragraph();
                self.put("```\n");
                self.pre_depth += 1;
            }
            "code" if self.pre_depth == 0 => self.marker(Marker::Code, true),
            "strong" | "b" => self.marker(Marker::Strong, true),
            "em" | "i" => self.marker(Marker::Emphasis, true),
            "a" => {
                // Links do not nest: a new one closes the open one.
                self.close_link();
                let href = attr(attrs, "href").and_then(|h| resolve(self.base.as_ref(), &h));
                self.link = Some((href, self.out.len()));
            }
            "img" => {
                if let Some(alt) = attr(attrs, "alt").filter(|a| !a.trim().is_empty()) {
                    self.put("[IMAGE: ");
                    self.put(alt.trim());
                    self.put("]");
                }
            }
            _ if BLOCKS.contains(&name) => self.paragraph(),
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        if SKIPPED.contains(&name) || name == "title" {
            self.skip_depth = self.skip_depth.saturating_sub(1);
            return;
        }
        if self.skip_depth > 0 {
            return;
        }
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => self.paragraph(),
            "ul" | "ol" => {
                if self.lists_beyond > 0 {
                    self.lists_beyond -= 1;
                } else {
                    self.lists.pop();
                }
                self.paragraph();
            }
            "pre" => {
                self.pre_depth = self.pre_depth.saturating_sub(1);
                if !self.out.ends_with('\n') {
                    self.put("\n");
                }
                self.put("```");
                self.paragraph();
            }
            "code" if self.pre_depth == 0 => self.marker(Marker::Code, false),
            "strong" | "b" => self.marker(Marker::Strong, false),
            "em" | "i" => self.marker(Marker::Emphasis, false),
            "a" => self.close_link(),
            _ if BLOCKS.contains(&name) => self.paragraph(),
            _ => {}
        }
    }

    /// Opens or closes a marked element; the marker is written at the
    /// outermost level only, and an end tag without a start is ignored.
    fn marker(&mut self, marker: Marker, open: bool) {
        let depth = &mut self.markers[marker as usize];
        let write = if open {
            *depth += 1;
            *depth == 1
        } else if *depth > 0 {
            *depth -= 1;
            *depth == 0
        } else {
            false
        };
        if write {
            self.put(marker.text());
        }
    }

    /// Writes the open link's text as `[text](href)`. Each byte of `out`
    /// is inside one link at most, so rewriting is linear in all.
    fn close_link(&mut self) {
        let Some((href, start)) = self.link.take() else {
            return;
        };
        let Some(href) = href else {
            return;
        };
        let raw = &self.out[start..];
        // The white space around the text stays outside the brackets.
        let lead = raw.chars().next().filter(|c| c.is_whitespace());
        let trail = raw.chars().next_back().filter(|c| c.is_whitespace());
        let text = raw.trim().to_string();
        if text.is_empty() {
            return;
        }
        self.out.truncate(start);
        if let Some(c) = lead {
            self.put_char(c);
        }
        self.put("[");
        self.put(&text);
        self.put("](");
        self.put(&href);
        self.put(")");
        if let Some(c) = trail {
            self.put_char(c);
        }
    }

    /// Drops trailing spaces and tabs (each is dropped once, so the scans
    /// add up to what was written). The open link's text may have started
    /// among them: it then starts where the text now ends.
    fn trim_trailing_spaces(&mut self) {
        let len = self.out.trim_end_matches([' ', '\t']).len();
        self.out.truncate(len);
        if let Some((_, start)) = &mut self.link {
            *start = (*start).min(len);
        }
    }

    fn newline(&mut self) {
        self.trim_trailing_spaces();
        if !self.out.is_empty() {
            self.put("\n");
        }
    }

    fn paragraph(&mut self) {
        self.trim_trailing_spaces();
        if self.out.is_empty() || self.out.ends_with("\n\n") {
            return;
        }
        self.put(if self.out.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        });
    }

    /// The text of at most `max_output` bytes: lines without trailing
    /// blanks, at most one empty line in a row, trimmed.
    fn finish(mut self, max_output: usize) -> String {
        let mut cut = max_output.min(self.out.len());
        while !self.out.is_char_boundary(cut) {
            cut -= 1;
        }
        self.out.truncate(cut);
        let mut text = String::with_capacity(self.out.len());
        let mut blank = 0;
        for line in self.out.lines().map(str::trim_end) {
            if line.is_empty() {
                blank += 1;
                if blank > 1 {
                    continue;
                }
            } else {
                blank = 0;
            }
            if !text.is_empty() || blank == 0 {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(line);
            }
        }
        let trimmed = text.trim();
        if trimmed.len() == text.len() {
            text
        } else {
            trimmed.to_string()
        }
    }
}

/// Resolves a link against the page's URL, as a browser does; `None` for
/// fragments and script links. A link that does not resolve (or a page
/// whose URL does not parse) is kept as written.
fn resolve(base: Option<&Url>, href: &str) -> Option<String> {
    let href = href.trim();
    let lower = href.to_ascii_lowercase();
    if href.is_empty() || href.starts_with('#') || lower.starts_with("javascript:") {
        return None;
    }
    let resolved = match base {
        Some(base) => base.join(href),
        None => Url::parse(href),
    };
    Some(resolved.map_or_else(|_| href.to_string(), String::from))
}

/// Decodes character references: numeric ones and the common named ones
/// (an unknown name is left as written).
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    decode_into(text, |piece| out.push_str(piece));
    out
}

/// Decodes character references in `text`, handing the result on in
/// pieces (no allocation). A name is looked at for at most
/// [`MAX_REFERENCE_NAME`] bytes, so each `&` costs a bounded look-ahead.
fn decode_into(text: &str, mut emit: impl FnMut(&str)) {
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        if amp > 0 {
            emit(&rest[..amp]);
        }
        rest = &rest[amp..];
        let after = &rest.as_bytes()[1..];
        let window = &after[..after.len().min(MAX_REFERENCE_NAME + 1)];
        let name_len = window
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'#'))
            .unwrap_or(window.len());
        // The name is ASCII, so `1 + name_len` is a character boundary.
        let name = &rest[1..1 + name_len];
        let mut buf = [0u8; 4];
        let decoded = if name_len > MAX_REFERENCE_NAME {
            None
        } else if let Some(num) = name.strip_prefix('#') {
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => num.parse().ok(),
            };
            code.and_then(char::from_u32)
                .map(|c| &*c.encode_utf8(&mut buf))
        } else {
            named(name)
        };
        match decoded {
            Some(s) => {
                emit(s);
                rest = &rest[1 + name_len..];
                rest = rest.strip_prefix(';').unwrap_or(rest);
            }
            None => {
                emit("&");
                rest = &rest[1..];
            }
        }
    }
    if !rest.is_empty() {
        emit(rest);
    }
}

fn named(name: &str) -> Option<&'static str> {
    Some(match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        "nbsp" => " ",
        "mdash" => "—",
        "ndash" => "–",
        "hellip" => "…",
        "copy" => "©",
        "reg" => "®",
        "trade" => "™",
        "laquo" => "«",
        "raquo" => "»",
        "lsquo" => "‘",
        "rsquo" => "’",
        "ldquo" => "“",
        "rdquo" => "”",
        "bull" => "•",
        "middot" => "·",
        "times" => "×",
        "euro" => "€",
        "deg" => "°",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> String {
        to_markdown(html, "https://example.com/docs/page.html").1
    }

    fn limits(max_output: usize) -> Limits {
        Limits {
            max_output,
            deadline: None,
        }
    }

    /// The text and the writer's work for `html` under the default limits.
    fn counted(html: &str) -> (String, usize) {
        let (page, written) = convert_counting(html, BASE, limits(MAX_TEXT_BYTES));
        (page.into_parts().1, written)
    }

    const BASE: &str = "https://example.com/docs/page.html";

    /// Bytes the writer may write per input byte: a `<li>` (4 bytes) at
    /// the deepest level writes a newline, the indentation and a marker.
    const PER_BYTE: usize = 2 * MAX_DEPTH / 4 + 8;

    fn leading_spaces(text: &str) -> usize {
        text.lines()
            .map(|l| l.len() - l.trim_start_matches(' ').len())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn lists_deeper_than_the_cap_are_not_indented_further() {
        let n = 3 * MAX_DEPTH;
        let html = format!("{}{}", "<ul>".repeat(n), "<li>x".repeat(n));
        let text = md(&html);
        assert_eq!(text.lines().filter(|l| l.trim() == "- x").count(), n);
        assert_eq!(leading_spaces(&text), 2 * (MAX_DEPTH - 1));
        // Closed properly, the levels come back in order.
        let html = format!(
            "{}<li>deep{}<li>top</li></ol>",
            "<ol><li>a".repeat(n),
            "</li></ol>".repeat(n - 1)
        );
        let text = md(&html);
        assert!(text.ends_with("\n2. top"), "{text}");
        assert_eq!(leading_spaces(&text), 2 * (MAX_DEPTH - 1));
        // Items of the lists beyond the cap are bullets (their numbers
        // would be the deepest tracked list's).
        let html = format!("{}<li>x<li>y", "<ol>".repeat(MAX_DEPTH + 1));
        let text = md(&html);
        let items: Vec<&str> = text.lines().map(str::trim_start).collect();
        assert_eq!(items, ["- x", "- y"], "{text}");
    }

    #[test]
    fn links_and_markers_do_not_nest() {
        let n = 1000;
        let html = format!("{}t{}", "<a href=\"x\">".repeat(n), "</a>".repeat(n));
        assert_eq!(md(&html), "[t](https://example.com/docs/x)");
        let html = "<a href=\"a\">one <a href=\"b\">two</a> three</a>";
        assert_eq!(
            md(html),
            "[one](https://example.com/docs/a) [two](https://example.com/docs/b) three"
        );
        let html = format!(
            "{}x{}",
            "<b><i><code>".repeat(n),
            "</code></i></b>".repeat(n)
        );
        assert_eq!(md(&html), "**_`x`_**");
        assert_eq!(md("a</b></em></code>b"), "ab");
        // A link whose text began among spaces a paragraph then dropped.
        assert_eq!(md("<pre>x   <a href=\"y\"><p></a>z"), "```\nx\n\nz");
        assert_eq!(
            md("<td>a<td> <a href=\"y\"><br>link</a>"),
            "a |\n[link](https://example.com/docs/y)"
        );
    }

    #[test]
    fn the_text_stops_at_its_size_limit_and_says_so() {
        let html = "<p>paragraph of some text</p>".repeat(10_000);
        let page = convert(&html, BASE, limits(1_000));
        assert_eq!(page.stopped, Some(Stop::Output));
        assert!(page.text.len() <= 1_000, "{}", page.text.len());
        assert!(page.text.starts_with("paragraph of some text\n\n"));
        let (_, text) = page.into_parts();
        assert!(
            text.ends_with("its limit of 1000 bytes; the rest of the page was not converted.]"),
            "{text}"
        );
        // A cut inside a character keeps the text valid.
        let page = convert(&"<p>é".repeat(1_000), BASE, limits(11));
        assert!(
            page.text.len() <= 11 && page.text.starts_with('é'),
            "{:?}",
            page.text
        );
        // Under the limit or exactly at it, nothing is said.
        for html in ["<p>short</p>", "<p>exactly 16 bytes"] {
            let page = convert(html, BASE, limits(16));
            assert_eq!((page.stopped, page.note), (None, None), "{html}");
        }
        // One byte more is cut.
        let page = convert("<p>exactly 16 bytes!", BASE, limits(16));
        assert_eq!(
            (page.stopped, page.text.as_str()),
            (Some(Stop::Output), "exactly 16 bytes")
        );
    }

    #[test]
    fn the_conversion_stops_at_its_deadline() {
        let html = "<p>text</p>".repeat(10_000);
        let passed = Limits {
            max_output: usize::MAX,
            deadline: Some(Instant::now()),
        };
        let page = convert(&html, BASE, passed);
        assert_eq!(page.stopped, Some(Stop::Deadline));
        assert_eq!(page.text, "");
        assert!(page
            .note
            .as_deref()
            .is_some_and(|n| n.contains("time limit")));
        let later = Limits {
            max_output: usize::MAX,
            deadline: Some(Instant::now() + std::time::Duration::from_secs(600)),
        };
        let page = convert(&html, BASE, later);
        assert_eq!(page.stopped, None);
        assert_eq!(page.text.lines().filter(|l| *l == "text").count(), 10_000);
    }

    #[test]
    fn the_title_is_one_bounded_line() {
        let html = format!("<title>a\n  b{}</title><p>x", "c".repeat(10_000));
        let (title, text) = to_markdown(&html, BASE);
        assert!(title.starts_with("a bccc"), "{title}");
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS);
        assert_eq!(text, "x");
    }

    /// The pages of issue 11 and their relatives, at size `k`.
    fn hostile(k: usize) -> Vec<(&'static str, String)> {
        vec![
            (
                "nested lists",
                format!("{}{}", "<ul>".repeat(k), "<li>x".repeat(k)),
            ),
            (
                "nested ordered lists",
                format!("{}{}", "<ol>".repeat(k), "<li>x".repeat(k)),
            ),
            (
                "nested links",
                format!("{}t{}", "<a href=\"x\">".repeat(k), "</a>".repeat(k)),
            ),
            (
                "nested divs",
                format!("{}t{}", "<div>".repeat(k), "</div>".repeat(k)),
            ),
            (
                "nested bold",
                format!("{}t{}", "<b>".repeat(k), "</b>".repeat(k)),
            ),
            (
                "nested pre",
                format!("{}t  \n{}", "<pre>".repeat(k), "<br>".repeat(k)),
            ),
            (
                "nested main",
                format!("{}t{}", "<main>".repeat(k), "</main>".repeat(k)),
            ),
            ("open tags", "<a href=\"x".repeat(k)),
            ("lone brackets", "<".repeat(k)),
            ("references", format!("&{}", "a".repeat(k))),
            ("ampersands", "&#x41&lt;&&amp".repeat(k)),
            ("cells", "<tr><td>x".repeat(k)),
            ("headings", "<h6>".repeat(k)),
            (
                "spaces",
                format!("<pre>{}</pre>{}", " ".repeat(k), "<br>".repeat(k)),
            ),
        ]
    }

    #[test]
    fn work_and_text_are_linear_in_the_page() {
        for k in [100, 1_000, 10_000, 40_000] {
            for (what, html) in hostile(k) {
                let (text, written) = counted(&html);
                let bound = PER_BYTE * html.len() + 64;
                assert!(
                    written <= bound,
                    "{what} (k={k}): wrote {written} bytes for {} (bound {bound})",
                    html.len()
                );
                assert!(
                    text.len() <= bound,
                    "{what} (k={k}): text of {} bytes",
                    text.len()
                );
            }
        }
    }

    /// A small deterministic generator (xorshift), so the property runs
    /// without a dependency and the same cases every time.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    #[test]
    fn any_tag_soup_is_converted_in_linear_work_within_the_limit() {
        const PIECES: &[&str] = &[
            "<ul>",
            "<ol>",
            "<li>",
            "</li>",
            "</ul>",
            "</ol>",
            "<a href=\"p?q=1\">",
            "</a>",
            "<a href='#x'>",
            "<b>",
            "</b>",
            "<em>",
            "<code>",
            "</code>",
            "<pre>",
            "</pre>",
            "<p>",
            "</p>",
            "<div>",
            "<br>",
            "<hr>",
            "<h2>",
            "</h2>",
            "<table>",
            "<tr>",
            "<td>",
            "<img alt=\"pic\">",
            "<script>",
            "</script>",
            "<style>x{}</style>",
            "<title>t",
            "</title>",
            "<main>",
            "</main>",
            "<article>",
            "<!-- c ",
            "-->",
            "<![CDATA[d]]>",
            "<!doctype html>",
            "<",
            ">",
            "\"",
            "'",
            "&amp;",
            "&#233;",
            "&nope;",
            "&",
            " ",
            "\n",
            "word",
            "é",
            "<svg>",
            "</svg>",
            "</",
            "<x-long-custom-element>",
            "/>",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        // Few pieces that move the writer's state, for short pages that
        // find odd neighbours; all of them for long pages that add up costs.
        const STATE: &[&str] = &[
            "<pre>",
            "</pre>",
            " ",
            "x",
            "<a href=y>",
            "</a>",
            "<p>",
            "<br>",
            "<td>",
            "<li>",
            "<ol>",
            "</ol>",
            "<b>",
            "</b>",
            "é",
        ];
        for case in 0..20_000 {
            let (pieces, len) = if case % 20 == 0 {
                (PIECES, 1 + rng.below(3_000))
            } else {
                (STATE, 1 + rng.below(24))
            };
            let html: String = (0..len).map(|_| pieces[rng.below(pieces.len())]).collect();
            let (text, written) = counted(&html);
            let bound = PER_BYTE * html.len() + 64;
            assert!(
                written <= bound,
                "case {case}: wrote {written} for {} bytes: {html:.300}",
                html.len()
            );
            assert!(text.len() <= bound, "case {case}");
            let max_output = 1 + rng.below(500);
            let page = convert(&html, BASE, limits(max_output));
            assert!(
                page.text.len() <= max_output,
                "case {case}: {} > {max_output}",
                page.text.len()
            );
            assert_eq!(page.stopped.is_some(), page.note.is_some());
        }
    }

    #[test]
    fn references_are_decoded_with_a_bounded_look_ahead() {
        assert_eq!(
            decode_entities("&#x1F600; &#128512; &#xZZ; &#; &"),
            "😀 😀 &#xZZ; &#; &"
        );
        let long = format!("&{}; &amp;", "a".repeat(100));
        assert_eq!(decode_entities(&long), format!("&{}; &", "a".repeat(100)));
        let at_cap = format!("&#{}65;", "0".repeat(MAX_REFERENCE_NAME - 3));
        assert_eq!(decode_entities(&at_cap), "A");
    }

    #[test]
    fn a_page_becomes_readable_text() {
        let html = r#"<!DOCTYPE html><html><head><title>The &amp; Title</title>
            <style>body { color: red }</style><script>var x = "<p>no</p>";</script></head>
            <body><nav><a href="/">Home</a></nav>
            <main><h1>Hello   world</h1><p>First <b>bold</b> and <em>soft</em>
            with a <a href="guide.html#x">guide</a> and <a href="https://other.org/a">out</a>.</p>
            <ul><li>one</li><li>two <code>x()</code></li></ul>
            <ol><li>a</li><li>b</li></ol>
            <pre>  keep
    spacing</pre>
            <img src="i.png" alt="A chart"><!-- hidden -->
            <table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>
            </main><footer>foot</footer></body></html>"#;
        let (title, text) = to_markdown(html, "https://example.com/docs/page.html");
        assert_eq!(title, "The & Title");
        let want = "# Hello world\n\n\
            First **bold** and _soft_ with a [guide](https://example.com/docs/guide.html#x) and [out](https://other.org/a).\n\n\
            - one\n- two `x()`\n\n\
            1. a\n2. b\n\n\
            ```\n  keep\n    spacing\n```\n\n\
            [IMAGE: A chart]\n\n\
            k | v\n1 | 2";
        assert_eq!(text, want);
    }

    #[test]
    fn without_main_the_body_is_rendered() {
        assert_eq!(
            md("<p>a&nbsp;b &lt;c&gt; &#233;&#x41; &bogus;</p><p>next</p>"),
            "a b <c> éA &bogus;\n\nnext"
        );
        assert_eq!(md("plain <br> text<br/>more"), "plain\ntext\nmore");
        assert_eq!(md("a < b and c > d"), "a < b and c > d");
    }

    #[test]
    fn links_resolve_against_the_page() {
        let base = Url::parse("https://example.com/docs/page.html?q=1").unwrap();
        let base = Some(&base);
        for (href, resolved) in [
            ("/root", "https://example.com/root"),
            ("sib", "https://example.com/docs/sib"),
            ("//cdn.net/x", "https://cdn.net/x"),
            ("?p=2", "https://example.com/docs/page.html?p=2"),
            ("../up/./a/../b?x#y", "https://example.com/up/b?x#y"),
            ("a b.html", "https://example.com/docs/a%20b.html"),
            ("HTTP://Example.COM", "http://example.com/"),
            ("mailto:a@b", "mailto:a@b"),
            // Not a URL: kept as written.
            ("http://[::1", "http://[::1"),
        ] {
            assert_eq!(resolve(base, href).as_deref(), Some(resolved), "{href}");
        }
        assert_eq!(resolve(base, "#top"), None);
        assert_eq!(resolve(base, "javascript:void(0)"), None);
        // Without a page URL, only absolute links resolve.
        assert_eq!(resolve(None, "/root").as_deref(), Some("/root"));
        assert_eq!(
            resolve(None, "HTTPS://a.b").as_deref(),
            Some("https://a.b/")
        );
        assert_eq!(
            attr(r#" class="x" href='a b.html' "#, "href").as_deref(),
            Some("a b.html")
        );
        assert_eq!(
            attr(r#" data-href="no" href=yes>"#, "href").as_deref(),
            Some("yes")
        );
    }
}
