//! A command line read as bash will read it: tree-sitter's bash grammar,
//! then every simple command in it (lists, pipelines, subshells, groups,
//! loops, functions, `$(…)`, backticks, process substitutions) as words
//! with their quotes removed and the expansions of known literals applied
//! (`$'\x72m'`, `"r"m`, `{rm,-rf,/}`, `$IFS`, `$HOME`, variables assigned a
//! literal earlier in the line, `$(printf rm)`). What only the running
//! shell can know is marked, never guessed: `judge.rs` decides on it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Instant;

use tree_sitter::{Node, ParseOptions, Parser, Tree};

/// How deep the syntax tree of a command line is walked; deeper nesting
/// is held. Code fed to a shell is walked a quarter as deep (four levels
/// of it at most), so the walk stays within a small thread stack.
pub(super) const MAX_DEPTH: usize = 256;
/// Words one word may brace-expand to.
const MAX_BRACE_WORDS: usize = 256;
/// Characters of literal output computed for one `echo` / `printf`.
const MAX_OUTPUT: usize = 128_000;

/// One word as the shell will pass it.
#[derive(Debug, Clone, Default)]
pub(super) struct Word {
    /// Its value; parts known only when it runs are kept as written.
    pub text: String,
    /// Its value with those parts empty.
    pub bare: String,
    /// No part is known only when it runs.
    pub known: bool,
    /// Some part is a substitution's output, read from its command
    /// (`$(printf rm)`): a guess, not what the shell is certain to see.
    pub expanded: bool,
    /// It has an unquoted `*`, `?` or `[` (a file pattern).
    pub glob: bool,
    /// A process substitution `<(…)`: the text a reader of it reads, when
    /// known (`Some(None)`: read from a command whose output is unknown).
    pub feed: Option<Option<String>>,
}

/// Where a simple command's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Input {
    /// Not redirected.
    Inherit,
    /// A heredoc or here-string: its text when known.
    Text(Option<String>),
    /// The previous stage of its pipeline.
    Pipe,
    /// A file (`< file`).
    File,
}

/// One simple command.
#[derive(Debug, Clone)]
pub(super) struct Simple {
    pub words: Vec<Word>,
    /// Its redirections, canonical (`> /dev/sda`), lower-cased by the judge.
    pub redirects: Vec<String>,
    pub input: Input,
    /// (pipeline, stage) when it is a stage of a pipeline.
    pub pipe: Option<(usize, usize)>,
}

/// Something the walk found that is no simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Finding {
    /// Certain to be a hard line.
    Hard(String),
    /// Held for approval.
    Hold(String),
}

/// A parsed command line.
#[derive(Debug, Default)]
pub(super) struct Script {
    pub commands: Vec<Simple>,
    pub findings: Vec<Finding>,
    /// Why it did not parse (position and what), if it did not.
    pub error: Option<String>,
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()
            .map(|()| parser)
    });
}

fn parse_tree(text: &str, deadline: Instant) -> Result<Tree, String> {
    PARSER.with(|cell| {
        let mut guard = cell.borrow_mut();
        let Some(parser) = guard.as_mut() else {
            return Err("the bash grammar could not be loaded".to_string());
        };
        let bytes = text.as_bytes();
        let mut read = |i: usize, _| bytes.get(i..).unwrap_or_default();
        let mut stop = |_: &tree_sitter::ParseState| Instant::now() > deadline;
        let options = ParseOptions::new().progress_callback(&mut stop);
        let tree = parser.parse_with_options(&mut read, None, Some(options));
        // A cancelled parse leaves state behind for the next one.
        parser.reset();
        tree.ok_or_else(|| "it is too complex to read in time".to_string())
    })
}

/// Parses `text` (by `deadline`) into its simple commands, walking its
/// tree `max_depth` levels deep at most.
pub(super) fn parse(text: &str, deadline: Instant, max_depth: usize) -> Script {
    let tree = match parse_tree(text, deadline) {
        Ok(tree) => tree,
        Err(e) => {
            return Script {
                error: Some(e),
                ..Script::default()
            }
        }
    };
    let root = tree.root_node();
    let mut walk = Walk {
        src: text,
        vars: HashMap::new(),
        out: Script::default(),
        pipes: 0,
        max_depth,
    };
    if root.has_error() {
        walk.out.error = Some(first_error(root, text));
    }
    walk.statement(root, None, 0);
    walk.out
}

/// Where the first syntax error is, as bash users count (line:column).
fn first_error(root: Node, src: &str) -> String {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let at = node.start_position();
            let what = if node.is_missing() {
                format!("a missing `{}`", node.kind())
            } else {
                let t = src.get(node.byte_range()).unwrap_or_default();
                format!("unexpected `{}`", t.chars().take(20).collect::<String>())
            };
            return format!("{what} at line {}, column {}", at.row + 1, at.column + 1);
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    "a syntax error".to_string()
}

struct Walk<'a> {
    src: &'a str,
    /// Variables assigned a literal earlier (`None`: assigned, unknown).
    vars: HashMap<String, Option<String>>,
    out: Script,
    pipes: usize,
    max_depth: usize,
}

/// The word being built and the words finished (a word may split or
/// brace-expand into several).
#[derive(Default)]
struct Acc {
    done: Vec<Word>,
    cur: Word,
    started: bool,
    /// `cur` holds an unquoted brace (a brace expansion candidate).
    brace: bool,
}

impl Acc {
    fn new() -> Self {
        Acc {
            cur: Word {
                known: true,
                ..Word::default()
            },
            ..Acc::default()
        }
    }

    fn push(&mut self, text: &str, bare: &str) {
        self.cur.text.push_str(text);
        self.cur.bare.push_str(bare);
        self.started = true;
    }

    fn unknown(&mut self, source: &str) {
        self.push(source, "");
        self.cur.known = false;
        self.cur.expanded = true;
    }

    /// An unquoted expansion's value: split at blanks into words;
    /// `guessed`: the value of a substitution, read from its command.
    fn split(&mut self, value: &str, guessed: bool) {
        self.cur.expanded |= guessed;
        let mut first = true;
        for piece in value.split([' ', '\t', '\n']) {
            if !first && self.started {
                self.finish();
            }
            first = false;
            if !piece.is_empty() {
                self.push(piece, piece);
                self.cur.expanded |= guessed;
            }
        }
    }

    fn finish(&mut self) {
        if self.started {
            let word = std::mem::replace(
                &mut self.cur,
                Word {
                    known: true,
                    ..Word::default()
                },
            );
            if self.brace && word.known {
                for text in brace_expand(&word.text) {
                    self.done.push(Word {
                        bare: text.clone(),
                        text,
                        ..word.clone()
                    });
                }
            } else {
                self.done.push(word);
            }
        }
        self.started = false;
        self.brace = false;
    }
}

fn is_assignment_free_command(words: &[Word]) -> bool {
    words.is_empty()
}

impl<'a> Walk<'a> {
    fn text(&self, node: Node) -> &'a str {
        self.src.get(node.byte_range()).unwrap_or_default()
    }

    fn deep(&mut self, depth: usize) -> bool {
        if depth > self.max_depth {
            let reason = "a command nested too deeply to read".to_string();
            if !self.out.findings.contains(&Finding::Hold(reason.clone())) {
                self.out.findings.push(Finding::Hold(reason));
            }
            return true;
        }
        false
    }

    /// Any node that holds commands.
    fn statement(&mut self, node: Node, pipe: Option<(usize, usize)>, depth: usize) {
        if self.deep(depth) {
            return;
        }
        match node.kind() {
            "command" => self.command(node, &[], pipe, depth),
            "redirected_statement" => self.redirected(node, pipe, depth),
            "pipeline" => {
                let id = self.next_pipe();
                let mut cursor = node.walk();
                let stages: Vec<Node> = node.named_children(&mut cursor).collect();
                for (i, stage) in stages.into_iter().enumerate() {
                    if i > 0 && !matches!(stage.kind(), "command" | "redirected_statement") {
                        // `… | (sh)`, `… | { sh; }`: what its commands read
                        // is the pipe's text, unknown here.
                        let before = self.out.commands.len();
                        self.statement(stage, None, depth + 1);
                        for c in self.out.commands.get_mut(before..).unwrap_or_default() {
                            if c.input == Input::Inherit {
                                c.input = Input::Text(None);
                            }
                        }
                    } else {
                        self.statement(stage, Some((id, i)), depth + 1);
                    }
                }
            }
            "function_definition" => {
                self.fork_bomb(node);
                self.children(node, depth);
            }
            "variable_assignment" => self.assignment(node, depth),
            "heredoc_body" | "heredoc_start" | "heredoc_end" | "comment" => {}
            _ => self.children(node, depth),
        }
    }

    fn children(&mut self, node: Node, depth: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.statement(child, None, depth + 1);
        }
    }

    fn next_pipe(&mut self) -> usize {
        self.pipes += 1;
        self.pipes
    }

    fn assignment(&mut self, node: Node, depth: usize) {
        let name = node
            .child_by_field_name("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let value = match node.child_by_field_name("value") {
            Some(v) => {
                let words = self.words(v, depth + 1);
                match words.as_slice() {
                    [w] if w.known => Some(w.text.clone()),
                    [] => Some(String::new()),
                    _ => None,
                }
            }
            None => Some(String::new()),
        };
        let value = if self.text(node).contains("+=") {
            None
        } else {
            value
        };
        if !name.is_empty() {
            // Assigned twice to different values: known only when it runs.
            let entry = self.vars.entry(name).or_insert_with(|| value.clone());
            if *entry != value {
                *entry = None;
            }
        }
    }

    /// `statement > file`, `cmd <<EOF`: the redirections belong to the
    /// command (or, for a compound body, are judged on their own).
    fn redirected(&mut self, node: Node, pipe: Option<(usize, usize)>, depth: usize) {
        let mut cursor = node.walk();
        let redirects: Vec<Node> = node
            .children_by_field_name("redirect", &mut cursor)
            .collect();
        // `cat <<EOF | sh`: the grammar puts `| sh` inside the heredoc.
        let mut inner_pipe = None;
        for r in &redirects {
            let mut c = r.walk();
            for child in r.named_children(&mut c) {
                if child.kind() == "pipeline" && inner_pipe.is_none() {
                    inner_pipe = Some(child);
                }
            }
        }
        let (body_pipe, next) = match inner_pipe {
            Some(_) => {
                let id = self.next_pipe();
                (Some((id, 0)), Some(id))
            }
            None => (pipe, None),
        };
        match node.child_by_field_name("body") {
            Some(body) if body.kind() == "command" => {
                self.command(body, &redirects, body_pipe, depth + 1)
            }
            Some(body) => {
                self.statement(body, body_pipe, depth + 1);
                let (list, input) = self.redirections(&redirects, depth + 1);
                if !list.is_empty() || input != Input::Inherit {
                    self.out.commands.push(Simple {
                        words: Vec::new(),
                        redirects: list,
                        input,
                        pipe: None,
                    });
                }
            }
            None => {}
        }
        // Commands the grammar nests in a heredoc redirect (`<<EOF && ls`).
        for r in &redirects {
            let mut c = r.walk();
            let children: Vec<Node> = r.named_children(&mut c).collect();
            for child in children {
                match child.kind() {
                    "pipeline" if Some(child) == inner_pipe => {
                        let id = next.unwrap_or_default();
                        let mut c2 = child.walk();
                        let stages: Vec<Node> = child.named_children(&mut c2).collect();
                        for (i, stage) in stages.into_iter().enumerate() {
                            self.statement(stage, Some((id, i + 1)), depth + 1);
                        }
                    }
                    "heredoc_body" | "heredoc_start" | "heredoc_end" => {}
                    k if r.kind() == "heredoc_redirect"
                        && (k.ends_with("statement")
                            || k == "command"
                            || k == "list"
                            || k == "pipeline"
                            || k == "subshell") =>
                    {
                        self.statement(child, None, depth + 1)
                    }
                    _ => {}
                }
            }
        }
    }

    /// Canonical redirections and the standard input they give.
    fn redirections(&mut self, nodes: &[Node], depth: usize) -> (Vec<String>, Input) {
        let mut list = Vec::new();
        let mut input = Input::Inherit;
        for r in nodes {
            match r.kind() {
                "file_redirect" => {
                    let mut op = String::new();
                    let mut target = Vec::new();
                    let mut c = r.walk();
                    let children: Vec<Node> = r.children(&mut c).collect();
                    for child in children {
                        if child.kind() == "file_descriptor" {
                            continue;
                        }
                        if child.is_named() {
                            target.extend(self.words(child, depth + 1));
                        } else {
                            op.push_str(self.text(child));
                        }
                    }
                    let feed = target.iter().find_map(|w| w.feed.clone());
                    let target = target
                        .iter()
                        .map(|w| w.text.clone())
                        .collect::<Vec<_>>()
                        .join(" ");
                    if op.starts_with('<') && !op.contains('>') {
                        // `sh < <(cmd)` reads what `cmd` prints.
                        input = match feed {
                            Some(text) => Input::Text(text),
                            None => Input::File,
                        };
                    }
                    list.push(format!("{op} {target}"));
                }
                "heredoc_redirect" => {
                    input = Input::Text(self.heredoc(*r, depth + 1));
                }
                "herestring_redirect" => {
                    let mut c = r.walk();
                    let children: Vec<Node> = r.named_children(&mut c).collect();
                    let mut words = Vec::new();
                    for child in children {
                        words.extend(self.words(child, depth + 1));
                    }
                    let known = words.iter().all(|w| w.known);
                    let text: Vec<String> = words.into_iter().map(|w| w.text).collect();
                    input = Input::Text(known.then(|| text.join(" ") + "\n"));
                }
                _ => {}
            }
        }
        (list, input)
    }

    /// A heredoc's text: literal for a quoted delimiter, else with its
    /// expansions applied (unknown when one is not known); the commands
    /// of its substitutions are judged.
    fn heredoc(&mut self, node: Node, depth: usize) -> Option<String> {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let quoted = children
            .iter()
            .find(|c| c.kind() == "heredoc_start")
            .is_some_and(|s| self.text(*s).contains(['\'', '"', '\\']));
        let body = children.iter().find(|c| c.kind() == "heredoc_body")?;
        if quoted {
            return Some(self.text(*body).to_string());
        }
        let mut out = String::new();
        let mut known = true;
        let mut at = body.start_byte();
        let mut c = body.walk();
        let parts: Vec<Node> = body.named_children(&mut c).collect();
        for part in parts {
            out.push_str(&unescape_heredoc(
                self.src.get(at..part.start_byte()).unwrap_or_default(),
            ));
            at = part.end_byte();
            if part.kind() == "heredoc_content" {
                out.push_str(&unescape_heredoc(self.text(part)));
                continue;
            }
            let mut acc = Acc::new();
            self.part(part, true, &mut acc, depth + 1);
            known &= acc.cur.known;
            out.push_str(&acc.cur.text);
        }
        out.push_str(&unescape_heredoc(
            self.src.get(at..body.end_byte()).unwrap_or_default(),
        ));
        known.then_some(out)
    }

    fn command(&mut self, node: Node, outer: &[Node], pipe: Option<(usize, usize)>, depth: usize) {
        let mut words = Vec::new();
        let mut redirect_nodes: Vec<Node> = outer.to_vec();
        let mut assignments = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let mut word_nodes: Vec<Node> = Vec::new();
        for child in children {
            match child.kind() {
                "variable_assignment" => assignments.push(child),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    redirect_nodes.push(child)
                }
                "command_name" => word_nodes.extend(child.named_child(0)),
                "subshell" | "compound_statement" => self.statement(child, None, depth + 1),
                _ => word_nodes.push(child),
            }
        }
        // Nodes with nothing between them are one word to bash (the
        // grammar splits `rm$IFS-rf$IFS/` at a lone `$`).
        let mut groups: Vec<Vec<Node>> = Vec::new();
        for n in word_nodes {
            match groups.last_mut() {
                Some(g) if g.last().is_some_and(|l| l.end_byte() == n.start_byte()) => g.push(n),
                _ => groups.push(vec![n]),
            }
        }
        for group in groups {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            if group.iter().any(|n| has_lone_dollar(*n)) {
                let text = self
                    .src
                    .get(first.start_byte()..last.end_byte())
                    .unwrap_or_default();
                let mut acc = Acc::new();
                self.unquoted(text, &mut acc);
                acc.finish();
                words.extend(acc.done);
                continue;
            }
            let mut acc = Acc::new();
            for n in &group {
                self.part(*n, false, &mut acc, depth + 1);
            }
            acc.finish();
            words.extend(acc.done);
        }
        if is_assignment_free_command(&words) {
            for a in assignments {
                self.assignment(a, depth + 1);
            }
        } else {
            // `X=1 cmd`: for the command only; its value's substitutions
            // still run.
            for a in assignments {
                if let Some(v) = a.child_by_field_name("value") {
                    self.words(v, depth + 1);
                }
            }
        }
        let (redirects, mut input) = self.redirections(&redirect_nodes, depth + 1);
        if input == Input::Inherit && pipe.is_some_and(|(_, stage)| stage > 0) {
            input = Input::Pipe;
        }
        if words.is_empty() && redirects.is_empty() {
            return;
        }
        self.out.commands.push(Simple {
            words,
            redirects,
            input,
            pipe,
        });
    }

    /// The words one argument node gives.
    fn words(&mut self, node: Node, depth: usize) -> Vec<Word> {
        let mut acc = Acc::new();
        self.part(node, false, &mut acc, depth);
        acc.finish();
        acc.done
    }

    /// Adds what `node` gives to the word being built.
    fn part(&mut self, node: Node, quoted: bool, acc: &mut Acc, depth: usize) {
        if self.deep(depth) {
            acc.unknown("");
            return;
        }
        let text = self.text(node);
        match node.kind() {
            "word" | "number" if !quoted => self.literal(text, acc),
            "raw_string" => {
                let inner = text
                    .strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                acc.push(inner, inner);
            }
            "ansi_c_string" => {
                let inner = text
                    .strip_prefix("$'")
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(text);
                let value = ansi_c(inner);
                acc.push(&value, &value);
            }
            "string" | "translated_string" => {
                // Text between the parts is literal; `$"…"` holds a string.
                acc.started = true;
                let mut at = node.start_byte();
                let mut c = node.walk();
                let parts: Vec<Node> = node.children(&mut c).collect();
                for p in parts {
                    let gap = self.src.get(at..p.start_byte()).unwrap_or_default();
                    let gap = unescape_double(gap);
                    acc.push(&gap, &gap);
                    at = p.end_byte();
                    match p.kind() {
                        "\"" | "$\"" | "$" => {}
                        "string_content" => {
                            let v = unescape_double(self.text(p));
                            acc.push(&v, &v);
                        }
                        "string" => self.part(p, true, acc, depth + 1),
                        _ => self.part(p, true, acc, depth + 1),
                    }
                }
            }
            "concatenation" => {
                let mut at = node.start_byte();
                let mut c = node.walk();
                let parts: Vec<Node> = node.children(&mut c).collect();
                for p in parts {
                    // Unnamed pieces (`{`, `,`) are literal words too.
                    let gap = self.src.get(at..p.start_byte()).unwrap_or_default();
                    self.literal(gap, acc);
                    at = p.end_byte();
                    if p.is_named() {
                        self.part(p, quoted, acc, depth + 1);
                    } else {
                        self.literal(self.text(p), acc);
                    }
                }
            }
            "simple_expansion" | "expansion" => self.expansion(node, quoted, acc, depth),
            "command_substitution" => {
                let before = self.out.commands.len();
                self.children(node, depth + 1);
                match self.substitution_output(before) {
                    Some(out) => {
                        let out = out.trim_end_matches('\n').to_string();
                        if quoted {
                            acc.push(&out, &out);
                            acc.cur.expanded = true;
                        } else {
                            acc.split(&out, true);
                        }
                    }
                    None => acc.unknown(text),
                }
            }
            "process_substitution" => {
                let before = self.out.commands.len();
                self.children(node, depth + 1);
                let feed = self.substitution_output(before);
                acc.unknown(text);
                acc.cur.feed = Some(feed);
            }
            "arithmetic_expansion" => {
                self.children(node, depth + 1);
                acc.unknown(text);
            }
            _ => {
                // Patterns, regexes, test operators, `word` inside quotes:
                // their text; substitutions in them still run.
                self.children(node, depth + 1);
                if quoted {
                    acc.push(text, text);
                } else {
                    self.literal(text, acc);
                }
            }
        }
    }

    /// The literal output of the one command a substitution ran, if known
    /// (`$(printf rm)`, `<(echo …)`); the commands stay to be judged.
    fn substitution_output(&self, before: usize) -> Option<String> {
        match self.out.commands.get(before..) {
            Some([one]) => literal_output(one, None),
            _ => None,
        }
    }

    /// Unquoted literal text: backslash escapes removed, patterns and
    /// braces noted.
    fn literal(&mut self, text: &str, acc: &mut Acc) {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars();
        let mut escaped_brace = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('\n') | None => {}
                    Some(n) => {
                        if matches!(n, '{' | '}' | ',') {
                            escaped_brace = true;
                        }
                        out.push(n);
                    }
                },
                '*' | '?' | '[' => {
                    acc.cur.glob = true;
                    out.push(c);
                }
                '{' => {
                    acc.brace = true;
                    out.push(c);
                }
                _ => out.push(c),
            }
        }
        if escaped_brace {
            // An escaped brace is no expansion: stay literal.
            acc.brace = false;
        }
        acc.push(&out, &out);
    }

    /// An unquoted word the grammar split wrongly, read from its text:
    /// literals and plain `$NAME` / `${NAME}`; anything else (quotes,
    /// substitutions) makes it known only when it runs.
    fn unquoted(&mut self, text: &str, acc: &mut Acc) {
        if text.contains(['\'', '"', '`', '(']) {
            acc.unknown(text);
            return;
        }
        let mut rest = text;
        while !rest.is_empty() {
            let at = rest.find('$').unwrap_or(rest.len());
            self.literal(&rest[..at], acc);
            rest = &rest[at..];
            let Some(after) = rest.strip_prefix('$') else {
                break;
            };
            let (name, len) = if let Some(b) = after.strip_prefix('{') {
                match b.find('}') {
                    Some(end) => (&b[..end], end + 2),
                    None => (b, b.len() + 1),
                }
            } else if after.starts_with(|c: char| c.is_ascii_digit() || c == '@' || c == '*') {
                (&after[..1], 1)
            } else {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            };
            match self.known_var(name).filter(|_| !name.is_empty()) {
                Some(v) => acc.split(&v, false),
                None if name.is_empty() => self.literal("$", acc),
                None => acc.unknown(&rest[..(len + 1).min(rest.len())]),
            }
            rest = rest.get(len + 1..).unwrap_or_default();
        }
    }

    fn expansion(&mut self, node: Node, quoted: bool, acc: &mut Acc, depth: usize) {
        let text = self.text(node);
        // `${…}` with an operator: its substitutions run; the value is
        // known only when it runs.
        let name = text
            .trim_start_matches('$')
            .trim_start_matches('{')
            .trim_end_matches('}');
        let plain = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@' || c == '*');
        if !plain || name.is_empty() {
            self.children(node, depth + 1);
            acc.unknown(text);
            return;
        }
        match self.known_var(name) {
            Some(value) => {
                if quoted {
                    acc.push(&value, &value);
                } else {
                    acc.split(&value, false);
                }
            }
            None => acc.unknown(text),
        }
    }

    /// A variable whose value is known before the command runs.
    fn known_var(&self, name: &str) -> Option<String> {
        match name {
            "IFS" if !self.vars.contains_key("IFS") => Some(" ".to_string()),
            "HOME" => Some("~".to_string()),
            // The terminal runs a command with no positional parameters.
            "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "@" | "*" => Some(String::new()),
            _ => self.vars.get(name).cloned().flatten(),
        }
    }

    /// `f(){ f|f& }`: a function that starts itself twice, in a pipeline
    /// or in the background, multiplies until the machine stops.
    fn fork_bomb(&mut self, node: Node) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = self.text(name);
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let mut calls = 0;
        let mut forked = false;
        let mut stack = vec![(body, false)];
        while let Some((n, in_fork)) = stack.pop() {
            if n.kind() == "command" {
                let called = n
                    .child_by_field_name("name")
                    .is_some_and(|c| self.text(c) == name);
                if called {
                    calls += 1;
                    forked |= in_fork;
                }
            }
            let fork = in_fork
                || n.kind() == "pipeline"
                || n.next_sibling().is_some_and(|s| s.kind() == "&");
            let mut c = n.walk();
            for child in n.children(&mut c) {
                let bg = child.next_sibling().is_some_and(|s| s.kind() == "&");
                stack.push((child, fork || bg));
            }
        }
        if calls >= 2 && forked {
            self.out
                .findings
                .push(Finding::Hard("fork bomb".to_string()));
        }
    }
}

/// A command line without quotes, escapes or expansions, read without
/// the grammar (for one it could not parse): commands split at `;`, `&`,
/// `|`, parentheses and newlines, words at blanks, braces expanded.
pub(super) fn plain_commands(text: &str) -> Vec<Simple> {
    text.split([';', '&', '|', '(', ')', '\n'])
        .filter_map(|part| {
            let words: Vec<Word> = part
                .split_whitespace()
                .filter(|w| !matches!(*w, "{" | "}" | "!"))
                .flat_map(brace_expand)
                .map(|t| Word {
                    glob: t.contains(['*', '?', '[']),
                    bare: t.clone(),
                    text: t,
                    known: true,
                    ..Word::default()
                })
                .collect();
            (!words.is_empty()).then(|| Simple {
                words,
                redirects: Vec::new(),
                input: Input::Inherit,
                pipe: None,
            })
        })
        .collect()
}

/// Whether a word holds a `$` the grammar left alone (no expansion).
fn has_lone_dollar(node: Node) -> bool {
    if !node.is_named() {
        return node.kind() == "$";
    }
    if node.kind() != "concatenation" {
        return false;
    }
    let mut c = node.walk();
    let found = node
        .children(&mut c)
        .any(|n| !n.is_named() && n.kind() == "$");
    found
}

/// What a command prints, when it is `echo`, `printf` or `cat` of known
/// text (`pipe_in`: what its pipe gives it, if known).
pub(super) fn literal_output(cmd: &Simple, pipe_in: Option<&str>) -> Option<String> {
    if !cmd.words.iter().all(|w| w.known) || !cmd.redirects.is_empty() {
        return None;
    }
    let (name, args) = cmd.words.split_first()?;
    let args: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let out = match name.text.rsplit('/').next().unwrap_or_default() {
        "echo" => {
            let mut escapes = false;
            let mut newline = true;
            let mut rest = args.as_slice();
            while let Some((first, tail)) = rest.split_first() {
                let flags = first
                    .strip_prefix('-')
                    .filter(|f| !f.is_empty() && f.chars().all(|c| matches!(c, 'n' | 'e' | 'E')));
                let Some(flags) = flags else { break };
                newline &= !flags.contains('n');
                escapes |= flags.contains('e');
                rest = tail;
            }
            let mut text = rest.join(" ");
            if escapes {
                text = ansi_c(&text);
            }
            if newline {
                text.push('\n');
            }
            text
        }
        "printf" => printf(&args)?,
        // `… | base64 -d`: decoded here as it will be there.
        "base64"
            if args
                .iter()
                .all(|a| matches!(*a, "-d" | "--decode" | "-i" | "-di"))
                && !args.is_empty() =>
        {
            let input = match &cmd.input {
                Input::Text(text) => text.clone()?,
                Input::Pipe => pipe_in?.to_string(),
                _ => return None,
            };
            let clean: String = input.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes =
                base64::Engine::decode(&base64::engine::general_purpose::STANDARD, clean).ok()?;
            String::from_utf8(bytes).ok()?
        }
        "cat" if args.is_empty() || args == ["-"] => match &cmd.input {
            Input::Text(text) => text.clone()?,
            Input::Pipe => pipe_in?.to_string(),
            _ => return None,
        },
        _ => return None,
    };
    (out.len() <= MAX_OUTPUT).then_some(out)
}

/// `printf FORMAT ARGS…`: escapes and `%s`/`%b`/`%c`/`%d`, the format
/// reused while arguments remain. `None` for what it cannot know.
fn printf(args: &[&str]) -> Option<String> {
    let (format, mut rest) = args.split_first()?;
    let format = if *format == "--" {
        let (f, r) = rest.split_first()?;
        rest = r;
        f
    } else {
        format
    };
    let mut out = String::new();
    for _ in 0..1000 {
        let mut chars = ansi_c(format)
            .chars()
            .peekable()
            .collect::<Vec<_>>()
            .into_iter();
        let mut used = false;
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let mut spec = chars.next()?;
            while spec.is_ascii_digit() || matches!(spec, '-' | '.' | '+' | ' ' | '#') {
                spec = chars.next()?;
            }
            let arg = || rest.first().copied().unwrap_or_default();
            match spec {
                '%' => out.push('%'),
                's' | 'd' | 'i' | 'u' => {
                    out.push_str(arg());
                    rest = rest.get(1..).unwrap_or_default();
                    used = true;
                }
                'b' => {
                    out.push_str(&ansi_c(arg()));
                    rest = rest.get(1..).unwrap_or_default();
                    used = true;
                }
                'c' => {
                    out.extend(arg().chars().next());
                    rest = rest.get(1..).unwrap_or_default();
                    used = true;
                }
                _ => return None,
            }
            if out.len() > MAX_OUTPUT {
                return None;
            }
        }
        if rest.is_empty() || !used {
            break;
        }
    }
    Some(out)
}

/// `$'…'` (and `echo -e`, `printf`) escapes.
pub(super) fn ansi_c(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut number = |radix: u32, max: usize, first: Option<char>| {
            let mut digits: String = first.into_iter().collect();
            while digits.len() < max {
                match chars.peek() {
                    Some(d) if d.is_digit(radix) => {
                        digits.push(*d);
                        chars.next();
                    }
                    _ => break,
                }
            }
            u32::from_str_radix(&digits, radix)
                .ok()
                .and_then(char::from_u32)
        };
        let decoded = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'e' | 'E' => Some('\u{1b}'),
            'f' => Some('\u{c}'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '?' => Some(e),
            '0'..='7' => number(8, 3, Some(e)),
            'x' => number(16, 2, None),
            'u' => number(16, 4, None),
            'U' => number(16, 8, None),
            'c' => chars.next().map(|c| char::from((c as u8) & 0x1f)),
            other => {
                out.push('\\');
                Some(other)
            }
        };
        out.extend(decoded);
    }
    out
}

/// Backslashes inside double quotes: only before `$`, backquote, `"`,
/// `\` and a newline are they escapes.
fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                    continue;
                }
                Some(n @ ('$' | '`' | '"' | '\\')) => {
                    out.push(*n);
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// Backslashes in an unquoted heredoc: before `$`, backquote, `\`, newline.
fn unescape_heredoc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                    continue;
                }
                Some(n @ ('$' | '`' | '\\')) => {
                    out.push(*n);
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

/// Bash's brace expansion of a known word: `{a,b}c` → `ac bc`, `{1..3}`;
/// at most [`MAX_BRACE_WORDS`] words (past that, the word as written).
pub(super) fn brace_expand(word: &str) -> Vec<String> {
    let mut pending = vec![word.to_string()];
    let mut results = Vec::new();
    while let Some(w) = pending.pop() {
        if results.len() + pending.len() > MAX_BRACE_WORDS {
            return vec![word.to_string()];
        }
        match one_brace(&w) {
            Some(expanded) => pending.extend(expanded.into_iter().rev()),
            None => results.push(w),
        }
    }
    results
}

/// The first brace group of `w` expanded, if it has one.
fn one_brace(w: &str) -> Option<Vec<String>> {
    let bytes = w.as_bytes();
    for (open, b) in bytes.iter().enumerate() {
        if *b != b'{' {
            continue;
        }
        let mut level = 0;
        let mut commas = Vec::new();
        for (i, c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => level += 1,
                b'}' => {
                    level -= 1;
                    if level == 0 {
                        let (pre, inner, post) = (&w[..open], &w[open + 1..i], &w[i + 1..]);
                        if !commas.is_empty() {
                            let mut parts = Vec::new();
                            let mut at = open + 1;
                            for c in &commas {
                                parts.push(&w[at..*c]);
                                at = c + 1;
                            }
                            parts.push(&w[at..i]);
                            return Some(parts.iter().map(|p| format!("{pre}{p}{post}")).collect());
                        }
                        if let Some(seq) = sequence(inner) {
                            return Some(seq.iter().map(|p| format!("{pre}{p}{post}")).collect());
                        }
                        break;
                    }
                }
                b',' if level == 1 => commas.push(i),
                _ => {}
            }
        }
    }
    None
}

/// `1..5`, `a..e` (bounded).
fn sequence(inner: &str) -> Option<Vec<String>> {
    let (a, b) = inner.split_once("..")?;
    if let (Ok(a), Ok(b)) = (a.parse::<i64>(), b.parse::<i64>()) {
        if (a - b).unsigned_abs() as usize >= MAX_BRACE_WORDS {
            return None;
        }
        let range: Vec<i64> = if a <= b {
            (a..=b).collect()
        } else {
            (b..=a).rev().collect()
        };
        return Some(range.iter().map(|n| n.to_string()).collect());
    }
    let (a, b) = (a.chars().next()?, b.chars().next()?);
    if inner.len() != 4 || !a.is_ascii_alphabetic() || !b.is_ascii_alphabetic() {
        return None;
    }
    let (lo, hi) = (a.min(b) as u8, a.max(b) as u8);
    let mut v: Vec<String> = (lo..=hi).map(|c| char::from(c).to_string()).collect();
    if a > b {
        v.reverse();
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn names(text: &str) -> Vec<Vec<String>> {
        let s = parse(text, Instant::now() + Duration::from_secs(5), MAX_DEPTH);
        s.commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn words_lose_their_quotes() {
        assert_eq!(names("'r'm -rf \"/\""), [["rm", "-rf", "/"]]);
        assert_eq!(names("$'\\x72m' -rf /"), [["rm", "-rf", "/"]]);
        assert_eq!(names("r\\m x"), [["rm", "x"]]);
        assert_eq!(
            names("echo {rm,-rf,/tmp/x}"),
            [["echo", "rm", "-rf", "/tmp/x"]]
        );
        assert_eq!(plain_commands("{rm,-rf,/tmp/x}").len(), 1);
        assert_eq!(names("rm$IFS-rf$IFS/"), [["rm", "-rf", "/"]]);
        assert_eq!(names("x=rm; $x y"), [["rm", "y"]]);
    }

    #[test]
    fn substitutions_are_commands_too() {
        let got = names("echo $(rm -rf x) `ls`");
        assert!(
            got.contains(&vec!["rm".into(), "-rf".into(), "x".into()]),
            "{got:?}"
        );
        assert!(got.contains(&vec!["ls".to_string()]), "{got:?}");
    }

    #[test]
    fn braces_and_escapes() {
        assert_eq!(brace_expand("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(brace_expand("{1..3}"), ["1", "2", "3"]);
        assert_eq!(ansi_c("\\162\\155"), "rm");
        assert_eq!(printf(&["\\162\\155 %s", "x"]).as_deref(), Some("rm x"));
    }
}
