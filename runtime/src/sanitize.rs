//! Sanitizing of tool error text before it is shown to the model.
//!
//! A tool's error message is fed back into the model's context, so any text in
//! it that looks like conversation structure (role tags, code fences, CDATA
//! sections) is removed first, the result is capped in length, and it is
//! prefixed with `[TOOL_ERROR] `.
//!
//! The passes run in this order, each over the whole text, once:
//! 1. role tags such as `<user>` or `</tool_call>` (ASCII case-insensitive,
//!    plus the few non-ASCII letters the reference treats as case variants);
//! 2. code-fence openers at a line start, with an optional `json`, `xml`,
//!    `html` or `markdown` tag and the white space on both sides;
//! 3. code-fence closers at a line end, with the white space around them;
//! 4. `<![CDATA[ ... ]]>` blocks, lazily, across lines.
//!
//! Then, if the text is longer than [`MAX_ERROR_CHARS`] characters (Unicode
//! scalar values, not bytes), it keeps the first `MAX_ERROR_CHARS - 3` and
//! appends `...`. The text is not trimmed. The cap applies before the prefix
//! is added, so the whole output can be up to 2013 characters long.

use std::sync::LazyLock;

use regex::Regex;

/// The prefix put in front of every sanitized tool error.
pub const TOOL_ERROR_PREFIX: &str = "[TOOL_ERROR] ";

/// The most characters kept from the message (before the prefix is added).
pub const MAX_ERROR_CHARS: usize = 2000;

/// Role names whose opening and closing tags are removed.
const ROLE_TAGS: [&str; 9] = [
    "tool_call",
    "function_call",
    "result",
    "response",
    "output",
    "input",
    "system",
    "assistant",
    "user",
];

/// White space as the reference's regex engine sees it: Unicode `White_Space`
/// plus the four information separators U+001C..U+001F.
const WS: &str = r"[\s\x{1C}-\x{1F}]";

/// A character class matching `c` in any case the reference accepts.
///
/// Besides the ASCII pair, the reference's case-insensitive matching also
/// takes U+0130 and U+0131 for `i`, and U+017F for `s`.
fn case_class(c: char) -> String {
    match c {
        'i' | 'I' => r"[iI\x{130}\x{131}]".to_owned(),
        's' | 'S' => r"[sS\x{17F}]".to_owned(),
        c if c.is_ascii_alphabetic() => {
            format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
        }
        c => regex::escape(&c.to_string()),
    }
}

fn role_tag_pattern() -> String {
    let names: Vec<String> = ROLE_TAGS
        .iter()
        .map(|name| name.chars().map(case_class).collect())
        .collect();
    format!("</?(?:{})>", names.join("|"))
}

/// Compiles a pattern fixed in this file.
///
/// `None` only if a pattern here is malformed (a unit test checks they all
/// compile); the pass is then skipped instead of panicking.
fn fixed_regex(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

fn fence_open_pattern() -> String {
    format!(r"(?m)^{WS}*```(?:json|xml|html|markdown)?{WS}*")
}

fn fence_close_pattern() -> String {
    format!(r"(?m){WS}*```{WS}*$")
}

const CDATA_PATTERN: &str = r"(?s)<!\[CDATA\[.*?\]\]>";

static ROLE_TAG_RE: LazyLock<Option<Regex>> = LazyLock::new(|| fixed_regex(&role_tag_pattern()));
static FENCE_OPEN_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| fixed_regex(&fence_open_pattern()));
static FENCE_CLOSE_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| fixed_regex(&fence_close_pattern()));
static CDATA_RE: LazyLock<Option<Regex>> = LazyLock::new(|| fixed_regex(CDATA_PATTERN));

/// Removes every match of `re` from `text`, in one left-to-right pass.
fn remove_all(re: &Option<Regex>, text: String) -> String {
    match re {
        Some(re) => match re.replace_all(&text, "") {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(changed) => changed,
        },
        None => text,
    }
}

/// Sanitizes a tool error message for the model's context.
///
/// See the module documentation for the exact rules. An empty message gives
/// `"[TOOL_ERROR] "` alone.
pub fn sanitize_tool_error(msg: &str) -> String {
    let text = remove_all(&ROLE_TAG_RE, msg.to_owned());
    let text = remove_all(&FENCE_OPEN_RE, text);
    let text = remove_all(&FENCE_CLOSE_RE, text);
    let text = remove_all(&CDATA_RE, text);

    let mut out = String::with_capacity(TOOL_ERROR_PREFIX.len() + text.len().min(8 * 1024));
    out.push_str(TOOL_ERROR_PREFIX);
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        None => out.push_str(&text),
        Some(_) => {
            let keep = MAX_ERROR_CHARS - 3;
            let cut = text
                .char_indices()
                .nth(keep)
                .map_or(text.len(), |(idx, _)| idx);
            out.push_str(&text[..cut]);
            out.push_str("...");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_fixed_patterns_compile() {
        assert!(Regex::new(&role_tag_pattern()).is_ok());
        assert!(Regex::new(&fence_open_pattern()).is_ok());
        assert!(Regex::new(&fence_close_pattern()).is_ok());
        assert!(Regex::new(CDATA_PATTERN).is_ok());
    }
}
