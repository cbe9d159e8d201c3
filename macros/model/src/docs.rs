//! Doc comments become descriptions.
//!
//! The text before the first rustdoc heading (`# ...`) is the description:
//! lines wrapped inside a paragraph are joined with a space, paragraphs are
//! kept apart by a blank line. A `# Arguments` section, in rustdoc's usual
//! form, describes parameters:
//!
//! ```text
//! # Arguments
//! * `path` - The file to read.
//! * `limit` - How many lines; wrapped lines
//!   continue the item.
//! ```
//!
//! A doc comment written on the parameter itself wins over that section.

use std::collections::BTreeMap;

use proc_macro2::Span;

/// The parts of a doc comment the macro uses.
#[derive(Debug, Clone, Default)]
pub struct Docs {
    pub description: String,
    /// Where the description's lines are written (one span per doc
    /// attribute, in order), so the lints can point into them.
    pub description_spans: Vec<Span>,
    /// From a `# Arguments` section: parameter name → description.
    pub arguments: BTreeMap<String, String>,
    /// Where each `# Arguments` item is written.
    pub argument_spans: BTreeMap<String, Vec<Span>>,
}

/// The raw lines of every `#[doc = "..."]` attribute, in order, each with
/// the span of its attribute.
fn doc_lines(attrs: &[syn::Attribute]) -> Vec<(String, Span)> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                let value = s.value();
                let span = s.span();
                if value.trim().is_empty() {
                    // `///` alone: a paragraph break (`lines()` yields nothing for "").
                    lines.push((String::new(), span));
                }
                for line in value.lines() {
                    lines.push((line.strip_prefix(' ').unwrap_or(line).to_string(), span));
                }
            }
        }
    }
    lines
}

/// Joins wrapped lines into paragraphs, paragraphs with a blank line.
fn paragraphs(lines: &[String]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.join("\n\n")
}

/// Extracts the description and the `# Arguments` section.
pub fn extract_docs(attrs: &[syn::Attribute]) -> Docs {
    let lines = doc_lines(attrs);
    let mut description = Vec::new();
    let mut description_spans = Vec::new();
    let mut arguments = BTreeMap::new();
    let mut argument_spans = BTreeMap::new();
    let mut section: Option<String> = None;
    type Item = (String, Vec<String>, Vec<Span>);
    let mut current_arg: Option<Item> = None;

    let flush = |arg: &mut Option<Item>,
                 map: &mut BTreeMap<String, String>,
                 spans: &mut BTreeMap<String, Vec<Span>>| {
        if let Some((name, text, item_spans)) = arg.take() {
            map.insert(name.clone(), paragraphs(&text));
            spans.insert(name, item_spans);
        }
    };

    for (line, span) in &lines {
        let trimmed = line.trim_start();
        if let Some(heading) = trimmed.strip_prefix("# ") {
            flush(&mut current_arg, &mut arguments, &mut argument_spans);
            section = Some(heading.trim().to_ascii_lowercase());
            continue;
        }
        match section.as_deref() {
            None => {
                description.push(line.clone());
                if !line.trim().is_empty() {
                    description_spans.push(*span);
                }
            }
            Some("arguments" | "parameters" | "args") => {
                if let Some((name, rest)) = argument_item(trimmed) {
                    flush(&mut current_arg, &mut arguments, &mut argument_spans);
                    current_arg = Some((name, vec![rest], vec![*span]));
                } else if let Some((_, text, spans)) = current_arg.as_mut() {
                    text.push(line.clone());
                    spans.push(*span);
                }
            }
            Some(_) => {}
        }
    }
    flush(&mut current_arg, &mut arguments, &mut argument_spans);

    Docs {
        description: paragraphs(&description),
        description_spans,
        arguments,
        argument_spans,
    }
}

/// Parses `* \`name\` - text`, `- \`name\`: text` and the like.
fn argument_item(line: &str) -> Option<(String, String)> {
    let rest = line
        .strip_prefix("* ")
        .or_else(|| line.strip_prefix("- "))?
        .trim_start();
    let rest = rest.strip_prefix('`')?;
    let end = rest.find('`')?;
    let name = rest[..end].trim().to_string();
    let text = rest[end + 1..]
        .trim_start()
        .trim_start_matches(['-', ':', '—', '–'])
        .trim()
        .to_string();
    (!name.is_empty()).then_some((name, text))
}

/// Removes `#[doc]` attributes (doc comments are not allowed on parameters
/// once the macro has read them).
pub fn strip_doc_attrs(attrs: &mut Vec<syn::Attribute>) {
    attrs.retain(|a| !a.path().is_ident("doc"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(src: &str) -> Docs {
        let item: syn::ItemFn = syn::parse_str(&format!("{src}\nfn f() {{}}")).unwrap();
        extract_docs(&item.attrs)
    }

    #[test]
    fn paragraphs_and_wrapping() {
        let d = docs("/// Read a file\n/// and number lines.\n///\n/// Second paragraph.");
        assert_eq!(
            d.description,
            "Read a file and number lines.\n\nSecond paragraph."
        );
    }

    #[test]
    fn arguments_section() {
        let d = docs(
            "/// Does it.\n///\n/// # Arguments\n/// * `path` - The path\n///   continued.\n/// - `limit`: How many.\n///\n/// # Errors\n/// Never.",
        );
        assert_eq!(d.description, "Does it.");
        assert_eq!(d.arguments["path"], "The path continued.");
        assert_eq!(d.arguments["limit"], "How many.");
        assert_eq!(d.arguments.len(), 2);
    }
}
