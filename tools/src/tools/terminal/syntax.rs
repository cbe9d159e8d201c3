//! bash's grammar, read by hand: a command line as the syntax tree the
//! approval check walks (`parse.rs`). Lists (`;`, `&`, `&&`, `||`,
//! newlines), pipelines (`|`, `|&`, `!`), simple commands (assignments,
//! words, redirections, heredocs), compound commands (`{ }`, `( )`, `if`,
//! `while`, `until`, `for`, `select`, `case`, `[[ ]]`, `(( ))`), function
//! definitions, and in words the quotes (`'…'`, `"…"`, `$'…'`, `$"…"`),
//! backslashes, and every expansion that runs code or reads a variable
//! (`$NAME`, `${…}`, `$(…)`, backticks, `$((…))`, `<(…)`, `>(…)`).
//!
//! Words keep what they were written as; `parse.rs` removes quotes and
//! applies what it can know. One pass, no backtracking but for `$((`
//! (arithmetic or a substitution of a subshell, as bash decides), and
//! nesting bounded (a line nested deeper is cut there and said so).

use std::time::Instant;

/// One word as written: its parts in order.
pub(super) type WordAst = Vec<Part>;

/// A piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    /// Unquoted text (inside `"…"` or a heredoc: text between expansions),
    /// backslashes as written.
    Lit(String),
    /// `'…'`: its inside.
    Single(String),
    /// `$'…'`: its inside, escapes as written.
    AnsiC(String),
    /// `"…"` (and `$"…"`).
    Double(Vec<Part>),
    /// `$NAME`, `$1`, `$?`, `${NAME}`: the name, and the text as written.
    Var(String, String),
    /// `${…}` with an operator, `$((…))`, `$[…]`, an array `(…)`: its
    /// text; the commands of the substitutions in it.
    Opaque(String, Vec<Cmd>),
    /// `$(…)` or a backquoted command: its commands and its text.
    Sub(Vec<Cmd>, String),
    /// `<(…)` or `>(…)`.
    ProcSub(Vec<Cmd>, String),
}

/// A redirection: its operator (`>`, `>>`, `2>&`'s `>&`, `<`, `<<<`, …,
/// without a descriptor number) and what it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Redir {
    pub op: String,
    pub target: Target,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    Word(WordAst),
    /// A heredoc: its index in [`Program::heredocs`].
    Heredoc(usize),
}

/// A heredoc's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Body {
    /// A quoted delimiter: the text as it is.
    Literal(String),
    /// Expansions applied: text (`Lit`, backslashes as written) and
    /// expansions.
    Parts(Vec<Part>),
}

/// `NAME=value` (or `NAME+=value`) before a command or alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Assign {
    pub name: String,
    pub append: bool,
    pub value: WordAst,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SimpleAst {
    pub assigns: Vec<Assign>,
    pub words: Vec<WordAst>,
    pub redirects: Vec<Redir>,
}

/// A command of any kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cmd {
    Simple(SimpleAst),
    /// Two stages or more.
    Pipeline(Vec<Cmd>),
    /// `a && b || c`: its commands.
    AndOr(Vec<Cmd>),
    /// `cmd &`.
    Background(Box<Cmd>),
    /// `{ }`, `( )`, `if`, loops, `case`, `[[ ]]`, `(( ))`: the commands
    /// in it, the words it reads itself (`for x in WORDS`, `case WORD`,
    /// patterns, test operands), its redirections.
    Compound {
        body: Vec<Cmd>,
        words: Vec<WordAst>,
        redirects: Vec<Redir>,
    },
    Function {
        name: String,
        body: Box<Cmd>,
    },
}

/// A parsed command line.
#[derive(Debug, Default)]
pub(super) struct Program {
    pub cmds: Vec<Cmd>,
    pub heredocs: Vec<Body>,
    /// The first syntax error, where bash users count (line:column).
    pub error: Option<String>,
    /// Nested deeper than allowed: cut there.
    pub too_deep: bool,
}

/// Parses `src`; constructs nest `max_nesting` deep at most; past
/// `deadline` the rest is left unread (an error saying so).
pub(super) fn parse(src: &str, max_nesting: usize, deadline: Instant) -> Program {
    let mut p = Parser {
        src,
        pos: 0,
        nesting: 0,
        max_nesting,
        deadline,
        steps: 0,
        error: None,
        too_deep: false,
        pending: Vec::new(),
        heredocs: Vec::new(),
    };
    let cmds = p.list(Stop::default());
    p.eof_heredocs();
    Program {
        cmds,
        heredocs: p.heredocs,
        error: p.error,
        too_deep: p.too_deep,
    }
}

/// What ends a list besides the end of the text.
#[derive(Clone, Copy, Default)]
struct Stop {
    /// Reserved words that end it (`then`, `fi`, `done`, `}`, …).
    words: &'static [&'static str],
    /// A `)` ends it.
    paren: bool,
    /// `;;`, `;&`, `;;&` end it (a `case` item).
    case: bool,
}

/// Reserved words that only end what another one began.
const RESERVED: &[&str] = &["then", "else", "elif", "fi", "do", "done", "esac", "}"];

struct Pending {
    index: usize,
    delimiter: String,
    strip_tabs: bool,
    quoted: bool,
}

struct Parser<'s> {
    src: &'s str,
    pos: usize,
    nesting: usize,
    max_nesting: usize,
    deadline: Instant,
    steps: usize,
    error: Option<String>,
    too_deep: bool,
    /// Heredocs whose bodies start after the next newline.
    pending: Vec<Pending>,
    heredocs: Vec<Body>,
}

fn is_meta(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
    )
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + k).copied()
    }

    fn starts(&self, s: &str) -> bool {
        self.src.as_bytes()[self.pos.min(self.src.len())..].starts_with(s.as_bytes())
    }

    fn rest(&self) -> &'s str {
        self.src.get(self.pos..).unwrap_or_default()
    }

    fn slice(&self, from: usize) -> &'s str {
        self.src.get(from..self.pos).unwrap_or_default()
    }

    /// Moves past one character (all of its UTF-8 bytes).
    fn bump(&mut self) -> Option<char> {
        let c = self.rest().chars().next()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn fail(&mut self, what: String) {
        if self.error.is_some() || self.too_deep {
            return;
        }
        let before = self.src.get(..self.pos).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        self.error = Some(format!("{what} at line {line}, column {column}"));
    }

    fn unexpected(&mut self) {
        let near: String = self.rest().chars().take(20).collect();
        self.fail(format!("unexpected `{near}`"));
    }

    fn missing(&mut self, what: &str) {
        self.fail(format!("a missing `{what}`"));
    }

    /// Enters a nested construct; `false` (and the rest cut) past the cap.
    fn enter(&mut self) -> bool {
        if self.nesting >= self.max_nesting {
            self.too_deep = true;
            self.pos = self.src.len();
            return false;
        }
        self.nesting += 1;
        true
    }

    fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    /// Blanks, line continuations and a comment (not the newline).
    fn blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                Some(b'#') => {
                    let end = self.rest().find('\n').unwrap_or(self.rest().len());
                    self.pos += end;
                }
                _ => return,
            }
        }
    }

    /// Blanks and newlines (where a command may continue on the next line).
    fn linebreaks(&mut self) {
        loop {
            self.blanks();
            if self.peek() == Some(b'\n') {
                self.newline();
            } else {
                return;
            }
        }
    }

    /// Consumes a newline, then the bodies of the heredocs it ends.
    fn newline(&mut self) {
        self.pos += 1;
        let pending = std::mem::take(&mut self.pending);
        for h in pending {
            let mut body = String::new();
            loop {
                let rest = self.rest();
                if rest.is_empty() {
                    break;
                }
                let (line, len) = match rest.find('\n') {
                    Some(i) => (&rest[..i], i + 1),
                    None => (rest, rest.len()),
                };
                self.pos += len;
                let line = if h.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                if line == h.delimiter {
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            self.set_body(h.index, body, h.quoted);
        }
    }

    /// Heredocs still waiting at the end of the text have empty bodies.
    fn eof_heredocs(&mut self) {
        for h in std::mem::take(&mut self.pending) {
            self.set_body(h.index, String::new(), h.quoted);
        }
    }

    fn set_body(&mut self, index: usize, text: String, quoted: bool) {
        let body = if quoted {
            Body::Literal(text)
        } else {
            let mut sub = self.sub(&text);
            let parts = sub.heredoc_parts();
            let heredocs = std::mem::take(&mut sub.heredocs);
            self.absorb(sub.error, sub.too_deep, heredocs);
            Body::Parts(parts)
        };
        if let Some(slot) = self.heredocs.get_mut(index) {
            *slot = body;
        }
    }

    /// A parser of other text (a backquoted command, a heredoc body) at
    /// this one's nesting, sharing its heredoc table.
    fn sub<'t>(&mut self, text: &'t str) -> Parser<'t> {
        Parser {
            src: text,
            pos: 0,
            nesting: self.nesting,
            max_nesting: self.max_nesting,
            deadline: self.deadline,
            steps: self.steps,
            error: None,
            too_deep: false,
            pending: Vec::new(),
            heredocs: std::mem::take(&mut self.heredocs),
        }
    }

    fn absorb(&mut self, error: Option<String>, too_deep: bool, heredocs: Vec<Body>) {
        self.heredocs = heredocs;
        if self.error.is_none() {
            self.error = error;
        }
        if too_deep {
            self.too_deep = true;
            self.pos = self.src.len();
        }
    }

    /// The unquoted word at the cursor as text, if it is a plain one.
    fn bare_word(&self) -> &'s str {
        let rest = self.rest();
        let end = rest
            .bytes()
            .position(|b| is_meta(b) || matches!(b, b'\'' | b'"' | b'\\' | b'$' | b'`'))
            .unwrap_or(rest.len());
        &rest[..end]
    }

    /// The reserved word `w` at the cursor (a whole word).
    fn at_word(&self, w: &str) -> bool {
        self.bare_word() == w
    }

    fn take_word(&mut self, w: &str) -> bool {
        if self.at_word(w) {
            self.pos += w.len();
            true
        } else {
            false
        }
    }

    fn expect_word(&mut self, w: &str) {
        self.linebreaks();
        if !self.take_word(w) {
            self.missing(w);
        }
    }

    /// Whether the list ends here.
    fn ends(&self, stop: Stop) -> bool {
        match self.peek() {
            None => true,
            Some(b')') => stop.paren,
            Some(b';') if self.starts(";;") || self.starts(";&") => stop.case,
            _ => {
                let w = self.bare_word();
                !w.is_empty() && stop.words.contains(&w)
            }
        }
    }

    /// Commands up to `stop`.
    fn list(&mut self, stop: Stop) -> Vec<Cmd> {
        let mut cmds = Vec::new();
        loop {
            self.linebreaks();
            if self.ends(stop) {
                return cmds;
            }
            self.steps += 1;
            if self.steps.is_multiple_of(64) && Instant::now() > self.deadline {
                self.fail("it is too complex to read in time".to_string());
                self.pos = self.src.len();
                return cmds;
            }
            let Some(cmd) = self.and_or() else {
                // A token no command may start with.
                self.unexpected();
                match self.bare_word().len() {
                    0 => {
                        self.bump();
                    }
                    n => self.pos += n,
                }
                continue;
            };
            self.blanks();
            if self.peek() == Some(b'&') && self.peek_at(1) != Some(b'&') {
                self.pos += 1;
                cmds.push(Cmd::Background(Box::new(cmd)));
                continue;
            }
            if self.peek() == Some(b';') && !self.starts(";;") && !self.starts(";&") {
                self.pos += 1;
            } else if self.peek() == Some(b'\n') {
                self.newline();
            } else if !self.ends(stop) {
                // `(a) b`, `{ a; } b`: no separator before the next.
                self.unexpected();
            }
            cmds.push(cmd);
        }
    }

    fn and_or(&mut self) -> Option<Cmd> {
        self.joined(
            Self::pipeline,
            |p| (p.starts("&&") || p.starts("||")).then_some(2),
            Cmd::AndOr,
        )
    }

    fn pipeline(&mut self) -> Option<Cmd> {
        self.blanks();
        while self.take_word("!") || self.take_word("coproc") {
            self.blanks();
        }
        self.joined(
            Self::command,
            |p| match (p.peek(), p.peek_at(1)) {
                (Some(b'|'), Some(b'|')) => None,
                (Some(b'|'), Some(b'&')) => Some(2),
                (Some(b'|'), _) => Some(1),
                _ => None,
            },
            Cmd::Pipeline,
        )
    }

    /// `ITEM (SEP ITEM)…`: items read by `item`, joined by the operator
    /// `sep` finds (its length; `None`: none here), a line break allowed
    /// after one; two items or more are `wrap`ped.
    fn joined(
        &mut self,
        item: fn(&mut Self) -> Option<Cmd>,
        sep: fn(&Self) -> Option<usize>,
        wrap: fn(Vec<Cmd>) -> Cmd,
    ) -> Option<Cmd> {
        let mut items: Vec<Cmd> = item(self).into_iter().collect();
        loop {
            self.blanks();
            let Some(len) = sep(self) else { break };
            self.pos += len;
            self.linebreaks();
            match item(self) {
                Some(c) => items.push(c),
                None => {
                    self.unexpected();
                    break;
                }
            }
        }
        match items.len() {
            0 => None,
            1 => items.pop(),
            _ => Some(wrap(items)),
        }
    }

    /// One command of any kind, `None` when none starts here.
    fn command(&mut self) -> Option<Cmd> {
        self.blanks();
        let word = self.bare_word();
        let compound = match word {
            "{" => Some(self.group()),
            "if" => Some(self.if_clause()),
            "while" | "until" => Some(self.while_clause(word.len())),
            "for" | "select" => Some(self.for_clause(word.len())),
            "case" => Some(self.case_clause()),
            "[[" => Some(self.test_clause()),
            "function" => return self.function_keyword(),
            _ if RESERVED.contains(&word) => return None,
            "" if self.starts("((") => match self.arith_body(2) {
                (Some(_), cmds) => Some((cmds, Vec::new())),
                (None, _) => Some(self.subshell()),
            },
            "" if self.peek() == Some(b'(') => Some(self.subshell()),
            _ => None,
        };
        match compound {
            Some((body, words)) => {
                let redirects = self.trailing_redirects();
                Some(Cmd::Compound {
                    body,
                    words,
                    redirects,
                })
            }
            None => self.simple(),
        }
    }

    fn group(&mut self) -> (Vec<Cmd>, Vec<WordAst>) {
        self.pos += 1;
        if !self.enter() {
            return (Vec::new(), Vec::new());
        }
        let body = self.list(Stop {
            words: &["}"],
            ..Stop::default()
        });
        self.expect_word("}");
        self.leave();
        (body, Vec::new())
    }

    fn subshell(&mut self) -> (Vec<Cmd>, Vec<WordAst>) {
        self.pos += 1;
        if !self.enter() {
            return (Vec::new(), Vec::new());
        }
        let body = self.list(Stop {
            paren: true,
            ..Stop::default()
        });
        self.close_paren();
        self.leave();
        (body, Vec::new())
    }

    fn close_paren(&mut self) {
        self.linebreaks();
        if self.peek() == Some(b')') {
            self.pos += 1;
        } else {
            self.missing(")");
        }
    }

    fn if_clause(&mut self) -> (Vec<Cmd>, Vec<WordAst>) {
        self.pos += 2;
        if !self.enter() {
            return (Vec::new(), Vec::new());
        }
        let mut body = Vec::new();
        loop {
            body.extend(self.list(Stop {
                words: &["then"],
                ..Stop::default()
            }));
            self.expect_word("then");
            body.extend(self.list(Stop {
                words: &["elif", "else", "fi"],
                ..Stop::default()
            }));
            if !self.take_word("elif") {
                break;
            }
        }
        if self.take_word("else") {
            body.extend(self.list(Stop {
                words: &["fi"],
                ..Stop::default()
            }));
        }
        self.expect_word("fi");
        self.leave();
        (body, Vec::new())
    }

    fn while_clause(&mut self, len: usize) -> (Vec<Cmd>, Vec<WordAst>) {
        self.pos += len;
        if !self.enter() {
            return (Vec::new(), Vec::new());
        }
        let mut body = self.list(Stop {
            words: &["do"],
            ..Stop::default()
        });
        body.extend(self.do_group());
        self.leave();
        (body, Vec::new())
    }

    /// `do LIST done` (or `{ LIST }`, which bash takes too).
    fn do_group(&mut self) -> Vec<Cmd> {
        self.linebreaks();
        if self.take_word("{") {
            let body = self.list(Stop {
                words: &["}"],
                ..Stop::default()
            });
            self.expect_word("}");
            return body;
        }
        self.expect_word("do");
        let body = self.list(Stop {
            words: &["done"],
            ..Stop::default()
        });
        self.expect_word("done");
        body
    }

    fn for_clause(&mut self, len: usize) -> (Vec<Cmd>, Vec<WordAst>) {
        self.pos += len;
        if !self.enter() {
            return (Vec::new(), Vec::new());
        }
        self.blanks();
        let mut body = Vec::new();
        let mut words = Vec::new();
        if self.starts("((") {
            let (_, cmds) = self.arith_body(2);
            body.extend(cmds);
        } else {
            let name = self.bare_word();
            if name.is_empty() || !name.bytes().all(is_name) {
                self.unexpected();
            }
            self.pos += name.len();
            self.linebreaks();
            if self.take_word("in") {
                loop {
                    self.blanks();
                    match self.peek() {
                        None | Some(b';' | b'\n') => break,
                        Some(b) if is_meta(b) => {
                            self.unexpected();
                            break;
                        }
                        _ => words.push(self.word()),
                    }
                }
            }
        }
        self.blanks();
        if self.peek() == Some(b';') {
            self.pos += 1;
        }
        body.extend(self.do_group());
        self.leave();
        (body, words)
    }

    fn case_clause(&mut self) -> (Vec<Cmd>, Vec<WordAst>) {
        self.pos += 4;
        if !self.enter() {
            return (Vec::new(), Vec::new());
        }
        self.blanks();
        let mut words = vec![self.word()];
        self.linebreaks();
        if !self.take_word("in") {
            self.missing("in");
        }
        let mut body = Vec::new();
        loop {
            self.linebreaks();
            if self.peek().is_none() || self.take_word("esac") {
                break;
            }
            if self.peek() == Some(b'(') {
                self.pos += 1;
            }
            // Patterns: WORD [| WORD]… )
            loop {
                self.blanks();
                match self.peek() {
                    Some(b'|') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    None => break,
                    Some(b) if is_meta(b) => {
                        self.unexpected();
                        self.pos += 1;
                    }
                    _ => words.push(self.word()),
                }
            }
            body.extend(self.list(Stop {
                words: &["esac"],
                case: true,
                ..Stop::default()
            }));
            for end in [";;&", ";;", ";&"] {
                if self.starts(end) {
                    self.pos += end.len();
                    break;
                }
            }
            if self.peek().is_none() {
                self.missing("esac");
                break;
            }
        }
        self.leave();
        (body, words)
    }

    /// `[[ … ]]`: its operands are words; `&&`, `||`, `!`, `(`, `)`, `<`,
    /// `>` are its own operators; after `=~` a regex up to a blank.
    fn test_clause(&mut self) -> (Vec<Cmd>, Vec<WordAst>) {
        self.pos += 2;
        if !self.enter() {
            return (Vec::new(), Vec::new());
        }
        let mut words = Vec::new();
        let mut regex_next = false;
        loop {
            self.linebreaks();
            if self.take_word("]]") {
                break;
            }
            match self.peek() {
                None => {
                    self.missing("]]");
                    break;
                }
                Some(b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b'!' | b';') => {
                    self.pos += 1;
                }
                _ if regex_next => {
                    let from = self.pos;
                    let mut depth = 0usize;
                    while let Some(b) = self.peek() {
                        match b {
                            b'(' => depth += 1,
                            b')' if depth > 0 => depth -= 1,
                            b' ' | b'\t' | b'\n' if depth == 0 => break,
                            b'\\' => self.pos += 1,
                            _ => {}
                        }
                        self.pos += 1;
                    }
                    self.pos = self.pos.min(self.src.len());
                    words.push(vec![Part::Lit(self.slice(from).to_string())]);
                    regex_next = false;
                    continue;
                }
                _ => {
                    regex_next = self.at_word("=~");
                    words.push(self.word());
                }
            }
        }
        self.leave();
        (Vec::new(), words)
    }

    /// The inside of `((…))` / `$((…))` from the cursor `open` bytes
    /// before it, to its `))`: its text and the commands of its
    /// substitutions. `None` text when a lone `)` closes it first (then
    /// it was a subshell, and the cursor is back where it was).
    fn arith_body(&mut self, open: usize) -> (Option<String>, Vec<Cmd>) {
        let start = self.pos;
        self.pos += open;
        if !self.enter() {
            return (None, Vec::new());
        }
        let mut cmds = Vec::new();
        let mut depth = 0usize;
        let text = loop {
            match self.peek() {
                None => {
                    self.missing("))");
                    break Some(self.slice(start).to_string());
                }
                Some(b'(') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b')') if depth > 0 => {
                    depth -= 1;
                    self.pos += 1;
                }
                Some(b')') if self.peek_at(1) == Some(b')') => {
                    self.pos += 2;
                    break Some(self.slice(start).to_string());
                }
                Some(b')') => {
                    self.pos = start;
                    break None;
                }
                Some(b) => self.inner(b, false, &mut cmds),
            }
        };
        self.leave();
        (text, cmds)
    }

    /// Inside `((…))` or `${…}` (`parameter`), past its own brackets: what
    /// the byte `b` at the cursor starts (an expansion, whose commands go to
    /// `cmds`; a quoted string; an escape; a newline), or one character.
    fn inner(&mut self, b: u8, parameter: bool, cmds: &mut Vec<Cmd>) {
        match b {
            b'$' => take_cmds(self.dollar(!parameter), cmds),
            b'`' => take_cmds(self.backquoted(), cmds),
            b'"' => take_cmds(self.double(), cmds),
            b'\'' if parameter => {
                self.single();
            }
            b'\\' => {
                self.pos += 1;
                self.bump();
            }
            b'\n' => self.newline(),
            _ => {
                self.bump();
            }
        }
    }

    /// `function NAME [()] BODY`.
    fn function_keyword(&mut self) -> Option<Cmd> {
        self.pos += "function".len();
        self.blanks();
        let name = self.bare_word().to_string();
        if name.is_empty() {
            self.unexpected();
            return None;
        }
        self.pos += name.len();
        self.blanks();
        if self.starts("()") {
            self.pos += 2;
        } else if self.peek() == Some(b'(') {
            self.pos += 1;
            self.blanks();
            if self.peek() == Some(b')') {
                self.pos += 1;
            }
        }
        self.function_body(name)
    }

    fn function_body(&mut self, name: String) -> Option<Cmd> {
        self.linebreaks();
        if !self.enter() {
            return None;
        }
        let body = self.command();
        self.leave();
        match body {
            Some(body) => Some(Cmd::Function {
                name,
                body: Box::new(body),
            }),
            None => {
                self.missing("{");
                None
            }
        }
    }

    /// Redirections after a compound command.
    fn trailing_redirects(&mut self) -> Vec<Redir> {
        let mut out = Vec::new();
        loop {
            self.blanks();
            match self.redirect_len() {
                Some(fd_len) => out.extend(self.redirect(fd_len)),
                None => return out,
            }
        }
    }

    /// At a redirection: the length of its descriptor (`2`, `{fd}`).
    fn redirect_len(&self) -> Option<usize> {
        let rest = self.rest().as_bytes();
        let fd = if rest.first() == Some(&b'{') {
            rest.iter()
                .position(|b| *b == b'}')
                .filter(|end| {
                    rest.get(1..*end)
                        .is_some_and(|n| n.iter().all(|b| is_name(*b)))
                })
                .map(|end| end + 1)
                .unwrap_or(usize::MAX)
        } else {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        };
        let op = rest.get(fd..)?;
        match op {
            [b'<' | b'>', b'(', ..] => None,
            [b'<' | b'>', ..] => Some(fd),
            [b'&', b'>', ..] if fd == 0 => Some(0),
            _ => None,
        }
    }

    fn redirect(&mut self, fd_len: usize) -> Option<Redir> {
        self.pos += fd_len;
        let op = [
            "<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "<", ">",
        ]
        .into_iter()
        .find(|op| self.starts(op))?;
        self.pos += op.len();
        self.blanks();
        if matches!(op, "<<" | "<<-") {
            let from = self.pos;
            let _ = self.word();
            let raw = self.slice(from);
            if raw.is_empty() {
                self.missing("heredoc delimiter");
            }
            let quoted = raw.contains(['\'', '"', '\\']);
            let delimiter: String = raw
                .chars()
                .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                .collect();
            let index = self.heredocs.len();
            self.heredocs.push(Body::Literal(String::new()));
            self.pending.push(Pending {
                index,
                delimiter,
                strip_tabs: op == "<<-",
                quoted,
            });
            return Some(Redir {
                op: op.to_string(),
                target: Target::Heredoc(index),
            });
        }
        let target = self.word();
        if target.is_empty() {
            self.fail(format!("a missing target of `{op}`"));
        }
        Some(Redir {
            op: op.to_string(),
            target: Target::Word(target),
        })
    }

    /// A simple command (or `NAME() BODY`).
    fn simple(&mut self) -> Option<Cmd> {
        let mut s = SimpleAst::default();
        loop {
            self.blanks();
            let Some(b) = self.peek() else { break };
            if let Some(fd_len) = self.redirect_len() {
                s.redirects.extend(self.redirect(fd_len));
                continue;
            }
            match b {
                b'(' if s.words.len() == 1 && s.assigns.is_empty() && s.redirects.is_empty() => {
                    let name = match s.words.first().map(Vec::as_slice) {
                        Some([Part::Lit(name)]) => name.clone(),
                        _ => {
                            self.unexpected();
                            break;
                        }
                    };
                    self.pos += 1;
                    self.blanks();
                    if self.peek() == Some(b')') {
                        self.pos += 1;
                    } else {
                        self.missing(")");
                    }
                    return self.function_body(name);
                }
                b'<' | b'>' if self.peek_at(1) == Some(b'(') => s.words.push(self.word()),
                b'(' => {
                    // `echo a (b)`: no function definition.
                    self.unexpected();
                    break;
                }
                _ if is_meta(b) => break,
                _ => {
                    if s.words.is_empty() {
                        if let Some(a) = self.assignment() {
                            s.assigns.push(a);
                            continue;
                        }
                    }
                    s.words.push(self.word());
                }
            }
        }
        let empty = s.words.is_empty() && s.assigns.is_empty() && s.redirects.is_empty();
        (!empty).then_some(Cmd::Simple(s))
    }

    /// `NAME=…`, `NAME+=…`, `NAME[…]=…` at the cursor.
    fn assignment(&mut self) -> Option<Assign> {
        let bytes = self.rest().as_bytes();
        if !bytes.first().copied().is_some_and(is_name_start) {
            return None;
        }
        let name_len = bytes.iter().take_while(|b| is_name(**b)).count();
        let mut at = name_len;
        if bytes.get(at) == Some(&b'[') {
            at += bytes.get(at..)?.iter().position(|b| *b == b']')? + 1;
        }
        let append = bytes.get(at) == Some(&b'+');
        at += usize::from(append);
        if bytes.get(at) != Some(&b'=') {
            return None;
        }
        let name = self.rest().get(..name_len)?.to_string();
        self.pos += at + 1;
        let value = if self.peek() == Some(b'(') {
            vec![self.array()]
        } else {
            self.word()
        };
        Some(Assign {
            name,
            append,
            value,
        })
    }

    /// An array value `(a b c)`.
    fn array(&mut self) -> Part {
        let start = self.pos;
        self.pos += 1;
        let mut cmds = Vec::new();
        loop {
            self.linebreaks();
            match self.peek() {
                None => {
                    self.missing(")");
                    break;
                }
                Some(b')') => {
                    self.pos += 1;
                    break;
                }
                Some(b) if is_meta(b) => {
                    self.unexpected();
                    self.pos += 1;
                }
                _ => {
                    for p in self.word() {
                        take_cmds(p, &mut cmds);
                    }
                }
            }
        }
        Part::Opaque(self.slice(start).to_string(), cmds)
    }

    /// One unquoted word.
    fn word(&mut self) -> WordAst {
        let mut g = Gather::default();
        while let Some(b) = self.peek() {
            let part = match b {
                b'<' | b'>' if self.peek_at(1) == Some(b'(') && g.is_empty() => {
                    self.process_substitution()
                }
                // `declare -a x=(1 2)`: an array operand.
                b'(' if g.parts.is_empty() && assigns_to(&g.lit) => {
                    g.flush();
                    self.array()
                }
                _ if is_meta(b) => break,
                b'\\' => {
                    self.pos += 1;
                    match self.bump() {
                        Some('\n') => {}
                        Some(c) => {
                            g.lit.push('\\');
                            g.lit.push(c);
                        }
                        None => g.lit.push('\\'),
                    }
                    continue;
                }
                b'\'' => self.single(),
                b'"' => self.double(),
                b'`' => self.backquoted(),
                b'$' => self.dollar(false),
                _ => {
                    let run = self.run_until(|b| {
                        is_meta(b) || matches!(b, b'\\' | b'\'' | b'"' | b'`' | b'$')
                    });
                    g.lit.push_str(run);
                    continue;
                }
            };
            g.push(part);
        }
        g.finish()
    }

    /// The text from the cursor up to the first byte `stop` takes (or the
    /// end), the cursor moved past it.
    fn run_until(&mut self, stop: impl Fn(u8) -> bool) -> &'s str {
        let rest = self.rest();
        let end = rest.bytes().position(stop).unwrap_or(rest.len());
        self.pos += end;
        &rest[..end]
    }

    fn single(&mut self) -> Part {
        self.pos += 1;
        let rest = self.rest();
        match rest.find('\'') {
            Some(end) => {
                self.pos += end + 1;
                Part::Single(rest[..end].to_string())
            }
            None => {
                self.missing("'");
                self.pos = self.src.len();
                Part::Single(rest.to_string())
            }
        }
    }

    /// `"…"` from its opening quote.
    fn double(&mut self) -> Part {
        self.pos += 1;
        let (parts, closed) = self.quoted_parts(Some(b'"'));
        if !closed {
            self.missing("\"");
        }
        Part::Double(parts)
    }

    /// Text where only backslashes, `$` and backquotes are special (inside
    /// `"…"`, a heredoc body): up to `close` (past it: `true`), or to the
    /// end when `close` is `None`.
    fn quoted_parts(&mut self, close: Option<u8>) -> (Vec<Part>, bool) {
        let mut g = Gather::default();
        while let Some(b) = self.peek() {
            let part = match b {
                _ if Some(b) == close => {
                    self.pos += 1;
                    return (g.finish(), true);
                }
                b'\\' => {
                    g.lit.push('\\');
                    self.pos += 1;
                    g.lit.extend(self.bump());
                    continue;
                }
                b'$' => self.dollar(true),
                b'`' => self.backquoted(),
                _ => {
                    let run =
                        self.run_until(|b| Some(b) == close || matches!(b, b'\\' | b'$' | b'`'));
                    g.lit.push_str(run);
                    continue;
                }
            };
            g.push(part);
        }
        (g.finish(), close.is_none())
    }

    /// A backquoted command: its text unescaped (`\``, `\\`, `\$`), then
    /// read as commands.
    fn backquoted(&mut self) -> Part {
        let start = self.pos;
        self.pos += 1;
        let mut code = String::new();
        loop {
            match self.bump() {
                None => {
                    self.missing("`");
                    break;
                }
                Some('`') => break,
                Some('\\') => match self.bump() {
                    Some(c @ ('`' | '\\' | '$')) => code.push(c),
                    Some(c) => {
                        code.push('\\');
                        code.push(c);
                    }
                    None => code.push('\\'),
                },
                Some(c) => code.push(c),
            }
        }
        let raw = self.slice(start).to_string();
        if !self.enter() {
            return Part::Sub(Vec::new(), raw);
        }
        let mut sub = self.sub(&code);
        let cmds = sub.list(Stop::default());
        sub.eof_heredocs();
        let (error, too_deep, heredocs) = (sub.error, sub.too_deep, sub.heredocs);
        self.absorb(error, too_deep, heredocs);
        self.leave();
        Part::Sub(cmds, raw)
    }

    /// `<(…)` / `>(…)`.
    fn process_substitution(&mut self) -> Part {
        let start = self.pos;
        self.pos += 1;
        let (cmds, _) = self.subshell();
        Part::ProcSub(cmds, self.slice(start).to_string())
    }

    /// What starts with `$` (`quoted`: inside `"…"` or a heredoc).
    fn dollar(&mut self, quoted: bool) -> Part {
        let start = self.pos;
        let next = self.peek_at(1);
        match next {
            Some(b'\'') if !quoted => {
                self.pos += 2;
                let rest = self.rest().as_bytes();
                let mut end = 0;
                while let Some(b) = rest.get(end) {
                    match b {
                        b'\\' => end += 2,
                        b'\'' => break,
                        _ => end += 1,
                    }
                }
                let end = end.min(rest.len());
                let inner = self.rest().get(..end).unwrap_or_default().to_string();
                self.pos += end;
                if self.peek() == Some(b'\'') {
                    self.pos += 1;
                } else {
                    self.missing("'");
                }
                Part::AnsiC(inner)
            }
            Some(b'"') if !quoted => {
                self.pos += 1;
                self.double()
            }
            Some(b'(') if self.peek_at(2) == Some(b'(') => {
                self.pos += 1;
                match self.arith_body(2) {
                    (Some(_), cmds) => Part::Opaque(self.slice(start).to_string(), cmds),
                    (None, _) => {
                        // `$( (…) )`: a substitution of a subshell.
                        self.pos = start;
                        self.command_substitution()
                    }
                }
            }
            Some(b'(') => self.command_substitution(),
            Some(b'[') => {
                self.pos += 2;
                let mut cmds = Vec::new();
                let mut depth = 0usize;
                loop {
                    match self.peek() {
                        None => {
                            self.missing("]");
                            break;
                        }
                        Some(b'[') => depth += 1,
                        Some(b']') if depth == 0 => {
                            self.pos += 1;
                            break;
                        }
                        Some(b']') => depth -= 1,
                        Some(b'$') => {
                            let p = self.dollar(true);
                            take_cmds(p, &mut cmds);
                            continue;
                        }
                        _ => {}
                    }
                    self.bump();
                }
                Part::Opaque(self.slice(start).to_string(), cmds)
            }
            Some(b'{') => self.parameter(),
            Some(b) if is_name_start(b) => {
                self.pos += 1;
                let len = self.rest().bytes().take_while(|b| is_name(*b)).count();
                self.pos += len;
                let raw = self.slice(start);
                Part::Var(raw[1..].to_string(), raw.to_string())
            }
            Some(b) if b.is_ascii_digit() || b"@*#?$!-".contains(&b) => {
                self.pos += 2;
                let raw = self.slice(start);
                Part::Var(raw[1..].to_string(), raw.to_string())
            }
            _ => {
                self.pos += 1;
                Part::Lit("$".to_string())
            }
        }
    }

    fn command_substitution(&mut self) -> Part {
        let start = self.pos;
        self.pos += 1;
        let (cmds, _) = self.subshell();
        Part::Sub(cmds, self.slice(start).to_string())
    }

    /// `${…}`: a plain `${NAME}` is a variable; anything else is opaque,
    /// with the commands of its substitutions.
    fn parameter(&mut self) -> Part {
        let start = self.pos;
        self.pos += 2;
        if !self.enter() {
            return Part::Opaque(String::new(), Vec::new());
        }
        let mut cmds = Vec::new();
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => {
                    self.missing("}");
                    break;
                }
                Some(b'}') if depth == 0 => {
                    self.pos += 1;
                    break;
                }
                Some(b'}') => {
                    depth -= 1;
                    self.pos += 1;
                }
                Some(b'{') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b) => self.inner(b, true, &mut cmds),
            }
        }
        self.leave();
        let raw = self.slice(start).to_string();
        let inner = raw
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix('}'))
            .unwrap_or_default();
        let plain = !inner.is_empty() && (inner.bytes().all(is_name) || matches!(inner, "@" | "*"));
        if plain {
            Part::Var(inner.to_string(), raw)
        } else {
            Part::Opaque(raw, cmds)
        }
    }

    /// A heredoc body with expansions: text and expansions, to the end.
    fn heredoc_parts(&mut self) -> Vec<Part> {
        self.quoted_parts(None).0
    }
}

/// A word's parts as they are read: literal text gathered into one `Lit`
/// until another kind of part comes.
#[derive(Default)]
struct Gather {
    parts: Vec<Part>,
    lit: String,
}

impl Gather {
    fn is_empty(&self) -> bool {
        self.parts.is_empty() && self.lit.is_empty()
    }

    fn push(&mut self, part: Part) {
        match part {
            Part::Lit(text) => self.lit.push_str(&text),
            part => {
                self.flush();
                self.parts.push(part);
            }
        }
    }

    fn flush(&mut self) {
        if !self.lit.is_empty() {
            self.parts.push(Part::Lit(std::mem::take(&mut self.lit)));
        }
    }

    fn finish(mut self) -> Vec<Part> {
        self.flush();
        self.parts
    }
}

/// Whether `text` is `NAME=` or `NAME+=`.
fn assigns_to(text: &str) -> bool {
    let name = text
        .strip_suffix("+=")
        .or_else(|| text.strip_suffix('='))
        .unwrap_or_default();
    name.bytes().next().is_some_and(is_name_start) && name.bytes().all(is_name)
}

/// The commands a part runs (its substitutions), moved into `out`.
fn take_cmds(part: Part, out: &mut Vec<Cmd>) {
    match part {
        Part::Sub(cmds, _) | Part::ProcSub(cmds, _) | Part::Opaque(_, cmds) => out.extend(cmds),
        Part::Double(parts) => {
            for p in parts {
                take_cmds(p, out);
            }
        }
        Part::Lit(_) | Part::Single(_) | Part::AnsiC(_) | Part::Var(..) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn program(text: &str) -> Program {
        parse(text, 64, Instant::now() + Duration::from_secs(5))
    }

    fn ok(text: &str) -> Vec<Cmd> {
        let p = program(text);
        assert_eq!(p.error, None, "{text:?}");
        p.cmds
    }

    fn lit(s: &str) -> WordAst {
        vec![Part::Lit(s.to_string())]
    }

    #[test]
    fn lists_pipelines_and_words() {
        let cmds = ok("a 'b c' | d && e; f &\n g");
        assert_eq!(cmds.len(), 3);
        assert!(
            matches!(&cmds[0], Cmd::AndOr(items) if matches!(&items[0], Cmd::Pipeline(s) if s.len() == 2))
        );
        assert!(matches!(&cmds[1], Cmd::Background(_)));
        let Cmd::Simple(g) = &cmds[2] else {
            panic!("{cmds:?}")
        };
        assert_eq!(g.words, vec![lit("g")]);
    }

    #[test]
    fn compound_commands_parse() {
        for text in [
            "if a; then b; elif c; then d; else e; fi",
            "while read x; do echo \"$x\"; done < f",
            "for f in *.rs; do wc -l \"$f\"; done | sort",
            "for ((i=0; i<3; i++)); do echo $i; done",
            "case $x in a|b) echo 1;; (c) echo 2;& *) ;; esac",
            "[[ -f x && $y =~ ^(a|b)$ ]] && echo ok",
            "(( x > 1 )) || { echo a; echo b; }",
            "f() { f | f & }; f",
            "function g { :; }",
            "cat <<'EOF' > notes.md\n# notes\nEOF\necho done",
            "x=(a b $(c)) y=1 cmd 2>&1 >>log &>/dev/null <<<word",
            "echo $(( 1 + $(printf 2) )) $((3)) $[4] ${x:-$(y)} ${#z}",
            "echo \"a $(b \"c\") `d`\" $'e\\'f' $\"g\"",
            "a\\\n b # comment\n",
        ] {
            ok(text);
        }
    }

    #[test]
    fn heredoc_bodies_are_read_after_the_line() {
        let p = program("cat <<EOF | sh && echo x\nrm $HOME\nEOF\necho after");
        assert_eq!(p.error, None);
        assert_eq!(p.cmds.len(), 2);
        assert!(matches!(&p.heredocs[0], Body::Parts(parts) if parts.len() == 3));
        let p = program("cat <<-'E'\n\tliteral $x\n\tE\n");
        assert_eq!(p.heredocs, vec![Body::Literal("literal $x\n".to_string())]);
    }

    #[test]
    fn errors_say_where() {
        let e = program("echo a; fi").error.unwrap_or_default();
        assert!(e.contains("line 1, column 9"), "{e}");
        assert!(program("if x; then y")
            .error
            .is_some_and(|e| e.contains("fi")));
        assert!(program("echo 'a").error.is_some());
        assert!(program("a | ; b").error.is_some());
        assert!(program("; a").error.is_some());
    }

    /// What `bash -n` says of `text`: whether it parses.
    fn bash_parses(text: &str) -> bool {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("x.sh");
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
        hermes_procs::child_env::ChildEnv::base()
            .command("bash")
            .arg("-n")
            .arg(&file)
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or_else(|e| panic!("bash: {e}"))
    }

    /// The parser and bash itself agree on which texts parse: constructs
    /// of every kind, and the mistakes a model makes.
    #[test]
    fn bash_agrees_on_what_parses() {
        let texts = [
            "a; b & c && d || e | f |& g",
            "! a | b",
            "time a -x",
            "coproc cat",
            "x=1",
            "x=1 y=(a b) cmd",
            "declare -a c=(1 2) d+=x",
            "> f",
            "3<>file cat; exec {fd}>out",
            "a &> f; a &>> f; a >| f; a 2>&1 <&0 >&-",
            "cat <<A <<B\na\nA\nb\nB\necho after",
            "cat <<-EOF\n\tx $y\n\tEOF",
            "cat <<'E' | sh\nrm -rf /\nE",
            "cat <<< \"x $y\"",
            "diff <(a) >(b)",
            "echo ${x//a/b} ${x:-$(y)} ${#x} ${x[0]} ${!p} \"${x%\"y\"}\"",
            "echo $((1 + $(x) * (2 - 3))) $[4] $(( (1) ))",
            "echo $( (a) ) $( (b); c )",
            "echo $(case x in a) echo 1;; esac)",
            "echo \"a $(b \"c\") d\" `e \\`f\\``",
            "echo $'a\\'b' $\"t\" 'x'\"y\"z",
            "a\\\n b # comment\n# only a comment",
            "if a; then b; elif c; then d; else e; fi",
            "if a\nthen\n  b\nfi",
            "while read -r l; do echo \"$l\"; done < f",
            "until a; do b; done",
            "for f in *.rs; do wc -l \"$f\"; done | sort -n",
            "for f; do :; done",
            "for ((i = 0; i < 3; i++)); do echo $i; done",
            "select x in a b; do break; done",
            "case $x in a|b) c;; (d) e;& *) f;;& esac",
            "case x in\n  a)\n    b\n    ;;\nesac",
            "[[ -f x && ( $y == z* || $y =~ ^(a|b)$ ) ]] && echo ok",
            "(( x > 1 )) || { a; b; }",
            "f() { f | f & }; f",
            "function g { :; }",
            "function h() ( a )",
            "k() { a; } > log 2>&1",
            "{ a; } && ( b ) | { c; }",
            "echo } { ]] fi done",
            "a &&\n b ||\n c |\n d",
            "echo a; fi",
            "if a; then b",
            "echo 'open",
            "echo \"open",
            "echo $(open",
            "a | ; b",
            "; a",
            "a && || b",
            "{ a }",
            "( a",
            "a )",
            "echo a (b)",
            "(a) b",
            "for do done",
            "case x in a) b",
            "while a; do b",
            "then a",
        ];
        let mut disagree = Vec::new();
        for text in texts {
            let ours = program(text).error;
            if ours.is_none() != bash_parses(text) {
                disagree.push(format!("{text:?}: ours {ours:?}"));
            }
        }
        assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    }

    #[test]
    fn nesting_is_cut_not_overflowed() {
        let deep = "$(".repeat(10_000) + "x" + &")".repeat(10_000);
        let p = program(&deep);
        assert!(p.too_deep);
    }
}
