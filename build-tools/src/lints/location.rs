//! Where a model-facing text is written: the tool and file it belongs to,
//! the spans that spell it, and the line and column of a word inside it.

use std::collections::BTreeSet;

use hermes_tool_facts::is_name_char;
use hermes_tool_model::ParamKind;
use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::discover::DiscoveredTool;
use crate::Diagnostic;

/// A tool and the text of its file.
pub(super) struct Place<'a> {
    pub(super) tool: &'a DiscoveredTool,
    pub(super) source: &'a str,
}

/// A model-facing text and where it is written.
pub(super) struct Text<'a> {
    pub(super) text: &'a str,
    /// Where the source spells it (doc comment lines or a literal); empty
    /// for text known only from the schema.
    pub(super) spans: &'a [Span],
    /// "the description of `x`", for messages.
    pub(super) whose: String,
    /// Where in the parameters schema the text is, for text known only
    /// from the schema.
    pub(super) pointer: Option<&'a str>,
}

/// The whole words of `text` (runs of tool-name characters) with their byte offsets.
pub(super) fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !is_name_char(c))
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// Byte offsets where `needle` occurs in `hay`; as a whole word when `whole_word`.
pub(super) fn occurrences(hay: &str, needle: &str, whole_word: bool) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    hay.match_indices(needle)
        .map(|(i, _)| i)
        .filter(|&i| {
            !whole_word
                || (!hay[..i].chars().next_back().is_some_and(is_name_char)
                    && !hay[i + needle.len()..]
                        .chars()
                        .next()
                        .is_some_and(is_name_char))
        })
        .collect()
}

/// Where in the source the `nth` occurrence of `needle` within `spans` is:
/// (1-based line, 0-based column in characters).
pub(super) fn locate(
    source: &str,
    spans: &[Span],
    needle: &str,
    whole_word: bool,
    nth: usize,
) -> Option<(usize, usize)> {
    let mut seen_starts = BTreeSet::new();
    let mut found = Vec::new();
    for span in spans {
        let (start, end) = (span.start(), span.end());
        if start.line == 0 || !seen_starts.insert((start.line, start.column)) {
            continue;
        }
        for (i, line) in source
            .lines()
            .enumerate()
            .skip(start.line - 1)
            .take(end.line.saturating_sub(start.line) + 1)
        {
            let line_no = i + 1;
            let from = if line_no == start.line {
                start.column
            } else {
                0
            };
            let to = if line_no == end.line {
                end.column
            } else {
                usize::MAX
            };
            let region: String = line
                .chars()
                .skip(from)
                .take(to.saturating_sub(from))
                .collect();
            for at in occurrences(&region, needle, whole_word) {
                found.push((line_no, from + region[..at].chars().count()));
            }
        }
        if found.len() > nth {
            break;
        }
    }
    found.get(nth).copied()
}

/// Places a diagnostic on `needle` in the text's source, or on the tool's
/// name when the text has no source (nested schema descriptions).
pub(super) fn place(
    d: Diagnostic,
    here: &Place<'_>,
    text: &Text<'_>,
    needle: &str,
    whole_word: bool,
    at: usize,
) -> Diagnostic {
    let nth = occurrences(&text.text[..at], needle, whole_word).len();
    match locate(here.source, text.spans, needle, whole_word, nth) {
        Some((line, column0)) => d
            .at(&here.tool.file, line, column0)
            .underline(needle.chars().count()),
        None => on_param(
            here.tool,
            text.pointer.unwrap_or_default(),
            d.at_span(&here.tool.file, here.tool.name_span()),
        ),
    }
}

/// Moves `d` onto the type of the parameter whose schema `pointer`
/// (into `parameters`) is in, when the source declares that parameter.
pub(super) fn on_param(t: &DiscoveredTool, pointer: &str, d: Diagnostic) -> Diagnostic {
    let Some(rest) = pointer.strip_prefix("/properties/") else {
        return d;
    };
    let name = rest
        .split('/')
        .next()
        .unwrap_or_default()
        .replace("~1", "/")
        .replace("~0", "~");
    let param = t
        .tool
        .schema_params()
        .find(|p| matches!(&p.kind, ParamKind::Property { name: n, .. } if *n == name));
    match param {
        Some(p) => d.at_span(&t.file, p.ty.span()),
        None => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_only() {
        assert_eq!(
            occurrences("patch dispatch patch-x patch.", "patch", true),
            vec![0, 23]
        );
        let w: Vec<_> = words("use `read_file`, then patch.")
            .map(|(_, w)| w)
            .collect();
        assert_eq!(w, ["use", "read_file", "then", "patch"]);
    }
}
