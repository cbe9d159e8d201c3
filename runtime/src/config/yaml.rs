//! A YAML document as a tree of positioned nodes, built from
//! `saphyr-parser`'s events under fixed budgets.
//!
//! The parser never expands aliases; this builder does, counting every
//! node and scalar byte an alias copies against the same budget as the
//! text itself, so a billion-laughs document is refused after
//! [`MAX_NODES`] nodes or [`MAX_EXPANDED_BYTES`] bytes instead of growing
//! without bound. Nesting deeper than [`MAX_DEPTH`] is refused too. On a
//! syntax error the top-level entries completed before it are kept: a
//! broken section does not take the ones before it down.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};

/// Nesting levels (mappings and sequences) a document may open.
pub const MAX_DEPTH: usize = 64;
/// Nodes a document may hold, aliases counted as the nodes they copy.
pub const MAX_NODES: usize = 100_000;
/// Scalar bytes a document may hold, aliases counted as the bytes they copy.
pub const MAX_EXPANDED_BYTES: usize = 8 << 20;

/// A position in the text: line and column, both from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    fn of(span: &Span) -> Pos {
        Pos {
            line: span.start.line(),
            col: span.start.col() + 1,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// A scalar: its text, whether it was plain (unquoted, so it may be a
    /// number, a boolean or null), and a tag other than the core ones.
    Scalar {
        text: String,
        plain: bool,
        tag: Option<String>,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: Kind,
    pub pos: Pos,
}

impl Node {
    /// The scalar's text when it is a plain or quoted scalar.
    pub fn scalar(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Whether this is YAML's null: an empty or `~` / `null` plain scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, Kind::Scalar { text, plain: true, tag: None }
            if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// What the node is, for "expected X, found Y" messages.
    pub fn describe(&self) -> &'static str {
        match &self.kind {
            Kind::Seq(_) => "a list",
            Kind::Map(_) => "a mapping",
            Kind::Scalar { .. } if self.is_null() => "nothing (null)",
            Kind::Scalar { plain: false, .. } => "a string",
            Kind::Scalar { text, .. } => {
                if parse_bool(text).is_some() {
                    "a boolean"
                } else if parse_int(text).is_some() {
                    "an integer"
                } else if parse_float(text).is_some() {
                    "a number"
                } else {
                    "a string"
                }
            }
        }
    }
}

/// YAML 1.1 booleans, as PyYAML (the reference's parser) reads them.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Some(true),
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// A plain integer: decimal (with `_` separators, as YAML 1.1 allows) or
/// `0x` hexadecimal, optionally signed.
pub(crate) fn parse_int(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        i64::from_str_radix(hex, 16).ok()?
    } else {
        let clean: String = digits.chars().filter(|c| *c != '_').collect();
        if clean.is_empty() || !clean.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('_')
        {
            return None;
        }
        clean.parse::<i64>().ok()?
    };
    Some(if negative { -value } else { value })
}

/// A plain finite number (`.inf` and `.nan` are not settings).
pub(crate) fn parse_float(text: &str) -> Option<f64> {
    if let Some(i) = parse_int(text) {
        return Some(i as f64);
    }
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let looks_numeric = clean
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && clean.bytes().any(|b| b.is_ascii_digit());
    if !looks_numeric {
        return None;
    }
    clean.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Why a document could not be read (wholly or from some point on).
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

/// The parsed document: its root (when there was one) and the error that
/// stopped the reading, if any. With an error, the root holds the
/// top-level entries completed before it.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pub root: Option<Node>,
    pub error: Option<SyntaxError>,
}

/// A collection being built: its position, anchor, and what it holds so far.
struct Open {
    pos: Pos,
    anchor: usize,
    items: Vec<Node>,
    is_map: bool,
    /// Nodes and scalar bytes inside it, for the anchor's weight.
    weight: Weight,
}

#[derive(Debug, Clone, Copy, Default)]
struct Weight {
    nodes: usize,
    bytes: usize,
}

struct Builder {
    stack: Vec<Open>,
    anchors: HashMap<usize, (Node, Weight)>,
    total: Weight,
    /// The finished root, or (on an error) the completed top-level pairs.
    root: Option<Node>,
    documents: usize,
}

impl Builder {
    fn charge(&mut self, w: Weight, pos: Pos) -> Result<(), SyntaxError> {
        self.total.nodes += w.nodes;
        self.total.bytes += w.bytes;
        if self.total.nodes > MAX_NODES {
            return Err(SyntaxError {
                pos,
                message: format!(
                    "the document holds more than {MAX_NODES} values (aliases count as \
                     the values they repeat); a configuration file is far smaller"
                ),
            });
        }
        if self.total.bytes > MAX_EXPANDED_BYTES {
            return Err(SyntaxError {
                pos,
                message: format!(
                    "the document's text, with aliases repeated, exceeds {} MiB",
                    MAX_EXPANDED_BYTES >> 20
                ),
            });
        }
        Ok(())
    }

    /// A finished node goes into its parent (or becomes the root).
    fn attach(&mut self, node: Node, anchor: usize, w: Weight) {
        if anchor != 0 {
            self.anchors.insert(anchor, (node.clone(), w));
        }
        match self.stack.last_mut() {
            Some(parent) => {
                parent.weight.nodes += w.nodes;
                parent.weight.bytes += w.bytes;
                parent.items.push(node);
            }
            None => self.root = Some(node),
        }
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), SyntaxError> {
        let pos = Pos::of(&span);
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(SyntaxError {
                        pos,
                        message: "the file holds more than one YAML document (`---`); \
                                  a configuration is one"
                            .into(),
                    });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let w = Weight {
                    nodes: 1,
                    bytes: text.len(),
                };
                self.charge(w, pos)?;
                // `!!str` makes a plain scalar a string; the other core tags
                // say what the text already shows; any other tag is kept, to
                // be refused where the value is read.
                let forced_str = tag
                    .as_ref()
                    .is_some_and(|t| t.is_yaml_core_schema() && t.suffix == "str");
                let tag = tag
                    .filter(|t| !t.is_yaml_core_schema())
                    .map(|t| t.to_string());
                let node = Node {
                    kind: Kind::Scalar {
                        text: text.into_owned(),
                        plain: matches!(style, ScalarStyle::Plain) && !forced_str,
                        tag,
                    },
                    pos,
                };
                self.attach(node, anchor, w);
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(SyntaxError {
                        pos,
                        message: format!("nesting deeper than {MAX_DEPTH} levels"),
                    });
                }
                self.charge(Weight { nodes: 1, bytes: 0 }, pos)?;
                self.stack.push(Open {
                    pos,
                    anchor,
                    items: Vec::new(),
                    is_map: matches!(event, Event::MappingStart(..)),
                    weight: Weight { nodes: 1, bytes: 0 },
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(open) = self.stack.pop() else {
                    return Ok(());
                };
                let kind = if open.is_map {
                    let mut pairs = Vec::with_capacity(open.items.len() / 2);
                    let mut items = open.items.into_iter();
                    while let (Some(k), Some(v)) = (items.next(), items.next()) {
                        pairs.push((k, v));
                    }
                    Kind::Map(pairs)
                } else {
                    Kind::Seq(open.items)
                };
                let node = Node {
                    kind,
                    pos: open.pos,
                };
                self.attach(node, open.anchor, open.weight);
            }
            Event::Alias(id) => {
                let Some((node, w)) = self.anchors.get(&id).cloned() else {
                    return Err(SyntaxError {
                        pos,
                        message: "an alias names no anchor defined before it".into(),
                    });
                };
                self.charge(w, pos)?;
                let node = Node { pos, ..node };
                self.attach(node, 0, w);
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
        Ok(())
    }

    /// After an error: the root mapping with the top-level pairs completed
    /// so far (a key whose value was not finished is dropped).
    fn salvage(mut self) -> Option<Node> {
        if let Some(root) = self.root.take() {
            return Some(root);
        }
        let bottom = self.stack.drain(..).next()?;
        if !bottom.is_map {
            return None;
        }
        let mut pairs = Vec::new();
        let mut items = bottom.items.into_iter();
        while let (Some(k), Some(v)) = (items.next(), items.next()) {
            pairs.push((k, v));
        }
        Some(Node {
            kind: Kind::Map(pairs),
            pos: bottom.pos,
        })
    }
}

fn scan_error(e: &ScanError) -> SyntaxError {
    SyntaxError {
        pos: Pos {
            line: e.marker().line(),
            col: e.marker().col() + 1,
        },
        message: e.info().to_string(),
    }
}

/// Parses `text` into a tree, within the budgets.
pub(crate) fn parse(text: &str) -> Document {
    let mut parser = Parser::new_from_str(text);
    let mut builder = Builder {
        stack: Vec::new(),
        anchors: HashMap::new(),
        total: Weight::default(),
        root: None,
        documents: 0,
    };
    let mut error = None;
    while let Some(next) = parser.next_event() {
        let result = match next {
            Ok((event, span)) => builder.event(event, span),
            Err(e) => Err(scan_error(&e)),
        };
        if let Err(e) = result {
            error = Some(e);
            break;
        }
    }
    Document {
        root: builder.salvage(),
        error,
    }
}

/// Whether `text` is one well-formed YAML document within the budgets
/// above: the first problem, with its position, or `None`. For tools that
/// check a `.yaml` file they write.
pub fn validate(text: &str) -> Option<SyntaxError> {
    parse(text).error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        let doc = parse("a:\n  b: [1, 2]\n");
        let root = doc.root.unwrap();
        let Kind::Map(pairs) = &root.kind else {
            panic!()
        };
        let Kind::Map(inner) = &pairs[0].1.kind else {
            panic!()
        };
        assert_eq!(inner[0].0.pos, Pos { line: 2, col: 3 });
        let Kind::Seq(items) = &inner[0].1.kind else {
            panic!()
        };
        assert_eq!(items[1].pos, Pos { line: 2, col: 10 });
    }

    #[test]
    fn aliases_are_budgeted() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for name in 'b'..='k' {
            text += &format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n");
            prev = name;
        }
        let doc = parse(&text);
        let e = doc.error.unwrap();
        assert!(e.message.contains("more than 100000 values"), "{e:?}");
    }

    #[test]
    fn validate_reports_the_first_problem() {
        assert_eq!(validate("a: [1, 2]\nb: {c: d}\n"), None);
        let e = validate("a: [1, 2\nb: 3\n").unwrap();
        assert_eq!(e.pos.line, 2, "{e:?}");
    }

    #[test]
    fn depth_is_bounded() {
        let text = "[".repeat(10_000);
        let doc = parse(&text);
        assert!(doc.error.is_some());
    }

    #[test]
    fn a_syntax_error_keeps_the_sections_before_it() {
        let doc = parse("a:\n  b: 1\nc: [1, 2\nd: 3\n");
        assert!(doc.error.is_some());
        let root = doc.root.unwrap();
        let Kind::Map(pairs) = &root.kind else {
            panic!()
        };
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].0.scalar(), Some("a"));
    }

    #[test]
    fn scalars_as_pyyaml_reads_them() {
        assert_eq!(parse_int("50_000"), Some(50_000));
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("-3"), Some(-3));
        assert_eq!(parse_int("1.5"), None);
        assert_eq!(parse_float("2.5"), Some(2.5));
        assert_eq!(parse_float(".inf"), None);
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("Yes"), Some(true));
    }
}
