//! HTML to readable markdown-ish text, without a DOM: a small tokenizer
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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token<'a> {
    Text(&'a str),
    Start {
        name: String,
        attrs: &'a str,
        self_closing: bool,
    },
    End(String),
}

/// The page's title (if any) and its text.
pub fn to_markdown(html: &str, base_url: &str) -> (String, String) {
    let tokens = tokenize(html);
    let title = title(&tokens);
    let range = content_range(&tokens, "main")
        .or_else(|| content_range(&tokens, "article"))
        .unwrap_or(0..tokens.len());
    let mut w = Writer::new(base_url);
    w.run(&tokens[range]);
    (title, w.finish())
}

fn tokenize(html: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut rest = html;
    let mut raw_until: Option<String> = None;
    while !rest.is_empty() {
        // Inside script / style / textarea-like raw text: skip to the end tag.
        if let Some(name) = raw_until.take() {
            let end = find_ci(rest, &format!("</{name}")).unwrap_or(rest.len());
            tokens.push(Token::Text(&rest[..end]));
            rest = &rest[end..];
            continue;
        }
        let Some(lt) = rest.find('<') else {
            tokens.push(Token::Text(rest));
            break;
        };
        if lt > 0 {
            tokens.push(Token::Text(&rest[..lt]));
            rest = &rest[lt..];
        }
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |i| &after[i + 3..]);
            continue;
        }
        if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>").unwrap_or(after.len());
            tokens.push(Token::Text(&after[..end]));
            rest = after.get(end + 3..).unwrap_or("");
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            rest = rest.find('>').map_or("", |i| &rest[i + 1..]);
            continue;
        }
        let closing = rest.starts_with("</");
        let name_start = if closing { 2 } else { 1 };
        let name_len = rest[name_start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':'))
            .unwrap_or(rest.len() - name_start);
        if name_len == 0 || !rest[name_start..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            // A lone `<` is text.
            tokens.push(Token::Text(&rest[..1]));
            rest = &rest[1..];
            continue;
        }
        let name = rest[name_start..name_start + name_len].to_ascii_lowercase();
        let end = tag_end(rest, name_start + name_len);
        let inner = &rest[name_start + name_len..end.saturating_sub(1).max(name_start + name_len)];
        rest = &rest[end..];
        if closing {
            tokens.push(Token::End(name));
        } else {
            let self_closing = inner.trim_end().ends_with('/');
            if matches!(name.as_str(), "script" | "style" | "textarea" | "title") && !self_closing {
                raw_until = Some(name.clone());
            }
            tokens.push(Token::Start {
                name,
                attrs: inner,
                self_closing,
            });
        }
    }
    tokens
}

/// Index just past the `>` closing a tag, honouring quoted attribute values.
fn tag_end(s: &str, from: usize) -> usize {
    let mut quote: Option<char> = None;
    for (i, c) in s[from..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return from + i + 1,
            _ => {}
        }
    }
    s.len()
}

/// Case-insensitive search for an ASCII needle.
fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..h.len().saturating_sub(n.len() - 1)).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// The value of attribute `want` in a tag's attribute text.
fn attr(attrs: &str, want: &str) -> Option<String> {
    let mut rest = attrs;
    while let Some(pos) = find_ci(rest, want) {
        let before = rest[..pos].chars().last();
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

fn title(tokens: &[Token<'_>]) -> String {
    let mut it = tokens.iter();
    while let Some(t) = it.next() {
        if matches!(t, Token::Start { name, .. } if name == "title") {
            if let Some(Token::Text(text)) = it.next() {
                return collapse(&decode_entities(text)).trim().to_string();
            }
        }
    }
    String::new()
}

/// The tokens inside the first `<name>` element, when there is one.
fn content_range(tokens: &[Token<'_>], name: &str) -> Option<std::ops::Range<usize>> {
    let start = tokens
        .iter()
        .position(|t| matches!(t, Token::Start { name: n, .. } if n == name))?;
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(start) {
        match t {
            Token::Start { name: n, .. } if n == name => depth += 1,
            Token::End(n) if n == name => {
                depth -= 1;
                if depth == 0 {
                    return Some(start + 1..i);
                }
            }
            _ => {}
        }
    }
    Some(start + 1..tokens.len())
}

struct Writer<'b> {
    out: String,
    base: &'b str,
    skip_depth: usize,
    pre_depth: usize,
    /// Per open list: `None` for `ul`, the next number for `ol`.
    lists: Vec<Option<u32>>,
    /// Open links: their href and where their text starts in `out`.
    links: Vec<(Option<String>, usize)>,
}

impl<'b> Writer<'b> {
    fn new(base: &'b str) -> Self {
        Writer {
            out: String::new(),
            base,
            skip_depth: 0,
            pre_depth: 0,
            lists: Vec::new(),
            links: Vec::new(),
        }
    }

    fn run(&mut self, tokens: &[Token<'_>]) {
        for t in tokens {
            match t {
                Token::Text(text) => self.text(text),
                Token::Start {
                    name,
                    attrs,
                    self_closing,
                } => {
                    self.start(name, attrs);
                    if *self_closing && !VOID.contains(&name.as_str()) {
                        self.end(name);
                    }
                }
                Token::End(name) => self.end(name),
            }
        }
    }

    fn text(&mut self, text: &str) {
        if self.skip_depth > 0 {
            return;
        }
        let decoded = decode_entities(text);
        if self.pre_depth > 0 {
            self.out.push_str(&decoded);
            return;
        }
        let collapsed = collapse(&decoded);
        if collapsed == " " && (self.out.is_empty() || self.out.ends_with([' ', '\n'])) {
            return;
        }
        if self.out.ends_with([' ', '\n']) {
            self.out.push_str(collapsed.trim_start());
        } else {
            self.out.push_str(&collapsed);
        }
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
                self.out.push_str(&"#".repeat(level));
                self.out.push(' ');
            }
            "br" => self.newline(),
            "hr" => {
                self.paragraph();
                self.out.push_str("---");
                self.paragraph();
            }
            "li" => {
                self.newline();
                let indent = "  ".repeat(self.lists.len().saturating_sub(1));
                self.out.push_str(&indent);
                match self.lists.last_mut() {
                    Some(Some(n)) => {
                        self.out.push_str(&format!("{n}. "));
                        *n += 1;
                    }
                    _ => self.out.push_str("- "),
                }
            }
            "ul" => {
                self.paragraph();
                self.lists.push(None);
            }
            "ol" => {
                self.paragraph();
                self.lists.push(Some(1));
            }
            "tr" => self.newline(),
            "td" | "th" if !self.out.ends_with('\n') && !self.out.is_empty() => {
                self.out.push_str(" | ");
            }
            "pre" => {
                self.paragraph();
                self.out.push_str("```\n");
                self.pre_depth += 1;
            }
            "code" if self.pre_depth == 0 => self.out.push('`'),
            "strong" | "b" => self.out.push_str("**"),
            "em" | "i" => self.out.push('_'),
            "a" => {
                let href = attr(attrs, "href").and_then(|h| resolve(self.base, &h));
                self.links.push((href, self.out.len()));
            }
            "img" => {
                if let Some(alt) = attr(attrs, "alt").filter(|a| !a.trim().is_empty()) {
                    self.out.push_str(&format!("[IMAGE: {}]", alt.trim()));
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
                self.lists.pop();
                self.paragraph();
            }
            "pre" => {
                self.pre_depth = self.pre_depth.saturating_sub(1);
                if !self.out.ends_with('\n') {
                    self.out.push('\n');
                }
                self.out.push_str("```");
                self.paragraph();
            }
            "code" if self.pre_depth == 0 => self.out.push('`'),
            "strong" | "b" => self.out.push_str("**"),
            "em" | "i" => self.out.push('_'),
            "a" => {
                if let Some((href, start)) = self.links.pop() {
                    let raw = &self.out[start..];
                    let lead = raw.starts_with(' ');
                    let text = raw.trim().to_string();
                    if let Some(href) = href.filter(|_| !text.is_empty()) {
                        self.out.truncate(start);
                        if lead {
                            self.out.push(' ');
                        }
                        self.out.push_str(&format!("[{text}]({href})"));
                    }
                }
            }
            _ if BLOCKS.contains(&name) => self.paragraph(),
            _ => {}
        }
    }

    fn newline(&mut self) {
        trim_trailing_spaces(&mut self.out);
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn paragraph(&mut self) {
        trim_trailing_spaces(&mut self.out);
        if self.out.is_empty() || self.out.ends_with("\n\n") {
            return;
        }
        self.out.push_str(if self.out.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        });
    }

    fn finish(self) -> String {
        let mut lines: Vec<&str> = Vec::new();
        let mut blank = 0;
        for line in self.out.lines().map(str::trim_end) {
            if line.trim().is_empty() {
                blank += 1;
                if blank > 1 {
                    continue;
                }
            } else {
                blank = 0;
            }
            lines.push(line);
        }
        lines.join("\n").trim().to_string()
    }
}

fn trim_trailing_spaces(s: &mut String) {
    let len = s.trim_end_matches([' ', '\t']).len();
    s.truncate(len);
}

/// Runs of white space as one space.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if !space {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out
}

/// Resolves a link against the page's URL; `None` for fragments and
/// script links.
fn resolve(base: &str, href: &str) -> Option<String> {
    let href = href.trim();
    let lower = href.to_ascii_lowercase();
    if href.is_empty() || href.starts_with('#') || lower.starts_with("javascript:") {
        return None;
    }
    if let Some(colon) = href.find(':') {
        if href[..colon]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Some(href.to_string());
        }
    }
    let (scheme, rest) = base.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", &rest[..authority_end]);
    if let Some(net) = href.strip_prefix("//") {
        return Some(format!("{scheme}://{net}"));
    }
    if href.starts_with('/') {
        return Some(format!("{origin}{href}"));
    }
    let path = &rest[authority_end..];
    let path = path.split(['?', '#']).next().unwrap_or("");
    if href.starts_with('?') {
        return Some(format!("{origin}{path}{href}"));
    }
    let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
    Some(format!("{origin}{dir}{href}"))
}

/// Decodes character references: numeric ones and the common named ones
/// (an unknown name is left as written).
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '#'))
            .map_or(rest.len(), |i| i + 1);
        let name = &rest[1..end];
        let decoded = if let Some(num) = name.strip_prefix('#') {
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => num.parse().ok(),
            };
            code.and_then(char::from_u32).map(String::from)
        } else {
            named(name).map(String::from)
        };
        match decoded {
            Some(s) => {
                out.push_str(&s);
                rest = &rest[end..];
                rest = rest.strip_prefix(';').unwrap_or(rest);
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
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
        let base = "https://example.com/docs/page.html?q=1";
        assert_eq!(
            resolve(base, "/root").as_deref(),
            Some("https://example.com/root")
        );
        assert_eq!(
            resolve(base, "sib").as_deref(),
            Some("https://example.com/docs/sib")
        );
        assert_eq!(
            resolve(base, "//cdn.net/x").as_deref(),
            Some("https://cdn.net/x")
        );
        assert_eq!(
            resolve(base, "?p=2").as_deref(),
            Some("https://example.com/docs/page.html?p=2")
        );
        assert_eq!(resolve(base, "mailto:a@b").as_deref(), Some("mailto:a@b"));
        assert_eq!(resolve(base, "#top"), None);
        assert_eq!(resolve(base, "javascript:void(0)"), None);
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
