//! A command line read as bash will read it (`syntax.rs` gives its syntax
//! tree), then every simple command in it (lists, pipelines, subshells,
//! groups, loops, functions, `$(…)`, backticks, process substitutions) as
//! words with their quotes removed and the expansions of known literals
//! applied (`$'\x72m'`, `"r"m`, `{rm,-rf,/}`, `$IFS`, `$HOME`, variables
//! assigned a literal earlier in the line, `$(printf rm)`). What only the
//! running shell can know is marked, never guessed: `judge.rs` decides on
//! it.

use std::collections::HashMap;
use std::time::Instant;

use super::syntax::{self, Body, Cmd, Part, Redir, SimpleAst, Target, WordAst};

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

/// Parses `text` (by `deadline`) into its simple commands, walking its
/// tree `max_depth` levels deep at most (constructs nest a quarter of
/// that: a walk takes about four levels for each).
pub(super) fn parse(text: &str, deadline: Instant, max_depth: usize) -> Script {
    let program = syntax::parse(text, max_depth / 4, deadline);
    let mut walk = Walk {
        heredocs: &program.heredocs,
        vars: HashMap::new(),
        out: Script {
            error: program.error.clone(),
            ..Script::default()
        },
        pipes: 0,
        max_depth,
    };
    if program.too_deep {
        walk.hold_too_deep();
    }
    for cmd in &program.cmds {
        walk.statement(cmd, None, 0);
    }
    walk.out
}

/// Declaration builtins: their `NAME=value` operands assign.
const DECLARATIONS: &[&str] = &["export", "declare", "typeset", "local", "readonly"];

struct Walk<'a> {
    heredocs: &'a [Body],
    /// Variables assigned a literal earlier (`None`: assigned, unknown).
    vars: HashMap<String, Option<String>>,
    out: Script,
    pipes: usize,
    max_depth: usize,
}

/// Where a part of a word stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quoting {
    Unquoted,
    /// In `"…"` (or a heredoc's expansions).
    Double,
}

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

impl Walk<'_> {
    fn hold_too_deep(&mut self) {
        let reason = "a command nested too deeply to read".to_string();
        if !self.out.findings.contains(&Finding::Hold(reason.clone())) {
            self.out.findings.push(Finding::Hold(reason));
        }
    }

    fn deep(&mut self, depth: usize) -> bool {
        if depth > self.max_depth {
            self.hold_too_deep();
            return true;
        }
        false
    }

    /// Any command.
    fn statement(&mut self, cmd: &Cmd, pipe: Option<(usize, usize)>, depth: usize) {
        if self.deep(depth) {
            return;
        }
        match cmd {
            Cmd::Simple(s) => self.command(s, pipe, depth),
            Cmd::Pipeline(stages) => {
                self.pipes += 1;
                let id = self.pipes;
                for (i, stage) in stages.iter().enumerate() {
                    if i > 0 && !matches!(stage, Cmd::Simple(_)) {
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
            Cmd::AndOr(items) => {
                for item in items {
                    self.statement(item, None, depth + 1);
                }
            }
            Cmd::Background(inner) => self.statement(inner, None, depth + 1),
            Cmd::Compound {
                body,
                words,
                redirects,
            } => {
                for w in words {
                    self.substitutions(w, depth + 1);
                }
                for c in body {
                    self.statement(c, None, depth + 1);
                }
                // Its redirections, judged on their own.
                let (list, input) = self.redirections(redirects, depth + 1);
                if !list.is_empty() || input != Input::Inherit {
                    self.out.commands.push(Simple {
                        words: Vec::new(),
                        redirects: list,
                        input,
                        pipe: None,
                    });
                }
            }
            Cmd::Function { name, body } => {
                self.fork_bomb(name, body);
                self.statement(body, None, depth + 1);
            }
        }
    }

    /// The commands of the substitutions in a word that is no argument
    /// (`for x in WORDS`, `case WORD`, a test's operand).
    fn substitutions(&mut self, word: &[Part], depth: usize) {
        for part in word {
            match part {
                Part::Sub(cmds, _) | Part::ProcSub(cmds, _) | Part::Opaque(_, cmds) => {
                    for c in cmds {
                        self.statement(c, None, depth + 1);
                    }
                }
                Part::Double(parts) => self.substitutions(parts, depth + 1),
                Part::Lit(_) | Part::Single(_) | Part::AnsiC(_) | Part::Var(..) => {}
            }
        }
    }

    /// `NAME=value`: known when its value is one known word.
    fn assign(&mut self, name: &str, value: Option<String>) {
        // Assigned twice to different values: known only when it runs.
        let entry = self
            .vars
            .entry(name.to_string())
            .or_insert_with(|| value.clone());
        if *entry != value {
            *entry = None;
        }
    }

    fn assignment(&mut self, a: &syntax::Assign, depth: usize) {
        let words = self.words(&a.value, depth + 1);
        let value = match words.as_slice() {
            _ if a.append => None,
            [w] if w.known => Some(w.text.clone()),
            [] => Some(String::new()),
            _ => None,
        };
        self.assign(&a.name, value);
    }

    /// Canonical redirections and the standard input they give.
    fn redirections(&mut self, redirects: &[Redir], depth: usize) -> (Vec<String>, Input) {
        let mut list = Vec::new();
        let mut input = Input::Inherit;
        for r in redirects {
            match &r.target {
                Target::Heredoc(index) => input = Input::Text(self.heredoc(*index, depth + 1)),
                Target::Word(word) if r.op == "<<<" => {
                    let words = self.words(word, depth + 1);
                    let known = words.iter().all(|w| w.known);
                    let text: Vec<String> = words.into_iter().map(|w| w.text).collect();
                    input = Input::Text(known.then(|| text.join(" ") + "\n"));
                }
                Target::Word(word) => {
                    let words = self.words(word, depth + 1);
                    let feed = words.iter().find_map(|w| w.feed.clone());
                    let target = words
                        .iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    if r.op.starts_with('<') && !r.op.contains('>') {
                        // `sh < <(cmd)` reads what `cmd` prints.
                        input = match feed {
                            Some(text) => Input::Text(text),
                            None => Input::File,
                        };
                    }
                    list.push(format!("{} {target}", r.op));
                }
            }
        }
        (list, input)
    }

    /// A heredoc's text: literal for a quoted delimiter, else with its
    /// expansions applied (unknown when one is not known); the commands
    /// of its substitutions are judged.
    fn heredoc(&mut self, index: usize, depth: usize) -> Option<String> {
        let heredocs = self.heredocs;
        match heredocs.get(index)? {
            Body::Literal(text) => Some(text.clone()),
            Body::Parts(parts) => {
                let mut out = String::new();
                let mut known = true;
                for part in parts {
                    if let Part::Lit(text) = part {
                        out.push_str(&unescape_heredoc(text));
                        continue;
                    }
                    let mut acc = Acc::new();
                    self.part(part, Quoting::Double, &mut acc, depth + 1);
                    known &= acc.cur.known;
                    out.push_str(&acc.cur.text);
                }
                known.then_some(out)
            }
        }
    }

    fn command(&mut self, s: &SimpleAst, pipe: Option<(usize, usize)>, depth: usize) {
        let mut words = Vec::new();
        for w in &s.words {
            words.extend(self.words(w, depth + 1));
        }
        if words.is_empty() {
            for a in &s.assigns {
                self.assignment(a, depth + 1);
            }
        } else {
            // `X=1 cmd`: for the command only; its value's substitutions
            // still run.
            for a in &s.assigns {
                self.words(&a.value, depth + 1);
            }
            self.declaration(&words);
        }
        let (redirects, mut input) = self.redirections(&s.redirects, depth + 1);
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

    /// `export NAME=value` (and `declare`, `local`, …) assigns as
    /// `NAME=value` alone does.
    fn declaration(&mut self, words: &[Word]) {
        let Some((name, args)) = words.split_first() else {
            return;
        };
        if !DECLARATIONS.contains(&name.text.as_str()) {
            return;
        }
        for arg in args {
            let Some((var, value)) = arg.text.split_once('=') else {
                continue;
            };
            let var = var.strip_suffix('+').unwrap_or(var);
            let plain = var.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if plain {
                let known = arg.known && !arg.text.contains("+=");
                self.assign(var, known.then(|| value.to_string()));
            }
        }
    }

    /// The words one written word gives.
    fn words(&mut self, word: &WordAst, depth: usize) -> Vec<Word> {
        let mut acc = Acc::new();
        for part in word {
            self.part(part, Quoting::Unquoted, &mut acc, depth);
        }
        acc.finish();
        acc.done
    }

    /// Adds what `part` gives to the word being built.
    fn part(&mut self, part: &Part, quoting: Quoting, acc: &mut Acc, depth: usize) {
        if self.deep(depth) {
            acc.unknown("");
            return;
        }
        let quoted = quoting == Quoting::Double;
        match part {
            Part::Lit(text) if quoted => {
                let v = unescape_double(text);
                acc.push(&v, &v);
            }
            Part::Lit(text) => self.literal(text, acc),
            Part::Single(inner) => acc.push(inner, inner),
            Part::AnsiC(inner) => {
                let value = ansi_c(inner);
                acc.push(&value, &value);
            }
            // `"$@"` with no positional parameters is no word at all.
            Part::Double(parts) if matches!(parts.as_slice(), [Part::Var(n, _)] if n == "@") => {}
            Part::Double(parts) => {
                acc.started = true;
                for p in parts {
                    self.part(p, Quoting::Double, acc, depth + 1);
                }
            }
            Part::Var(name, text) => self.expansion(name, text, quoted, acc),
            Part::Sub(cmds, text) => {
                let before = self.out.commands.len();
                for c in cmds {
                    self.statement(c, None, depth + 1);
                }
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
            Part::ProcSub(cmds, text) => {
                let before = self.out.commands.len();
                for c in cmds {
                    self.statement(c, None, depth + 1);
                }
                let feed = self.substitution_output(before);
                acc.unknown(text);
                acc.cur.feed = Some(feed);
            }
            Part::Opaque(text, cmds) => {
                // `${x:-…}`, `$((…))`: their substitutions run; the value
                // is known only when it runs.
                for c in cmds {
                    self.statement(c, None, depth + 1);
                }
                acc.unknown(text);
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
                // A `[` no `]` closes is a plain character (`[ -f x ]`).
                '[' if !chars.as_str().contains(']') => out.push(c),
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

    /// `$NAME`, `${NAME}`: its value when known before the command runs.
    fn expansion(&mut self, name: &str, text: &str, quoted: bool, acc: &mut Acc) {
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@' || c == '*');
        match self.known_var(name).filter(|_| plain) {
            Some(value) if quoted => acc.push(&value, &value),
            Some(value) => acc.split(&value, false),
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
    fn fork_bomb(&mut self, name: &str, body: &Cmd) {
        let mut calls = 0;
        let mut forked = false;
        let mut stack = vec![(body, false)];
        while let Some((cmd, in_fork)) = stack.pop() {
            match cmd {
                Cmd::Simple(s) => {
                    if let Some([Part::Lit(first)]) = s.words.first().map(Vec::as_slice) {
                        if first == name {
                            calls += 1;
                            forked |= in_fork;
                        }
                    }
                    for w in &s.words {
                        push_substitutions(w, in_fork, &mut stack);
                    }
                }
                Cmd::Pipeline(stages) => stack.extend(stages.iter().map(|c| (c, true))),
                Cmd::AndOr(items) => stack.extend(items.iter().map(|c| (c, in_fork))),
                Cmd::Background(inner) => stack.push((inner, true)),
                Cmd::Compound { body, words, .. } => {
                    stack.extend(body.iter().map(|c| (c, in_fork)));
                    for w in words {
                        push_substitutions(w, in_fork, &mut stack);
                    }
                }
                Cmd::Function { body, .. } => stack.push((body, in_fork)),
            }
        }
        if calls >= 2 && forked {
            self.out
                .findings
                .push(Finding::Hard("fork bomb".to_string()));
        }
    }
}

/// The commands of a word's substitutions, for a walk over commands.
fn push_substitutions<'c>(word: &'c [Part], fork: bool, stack: &mut Vec<(&'c Cmd, bool)>) {
    for part in word {
        match part {
            Part::Sub(cmds, _) | Part::ProcSub(cmds, _) | Part::Opaque(_, cmds) => {
                stack.extend(cmds.iter().map(|c| (c, fork)));
            }
            Part::Double(parts) => push_substitutions(parts, fork, stack),
            Part::Lit(_) | Part::Single(_) | Part::AnsiC(_) | Part::Var(..) => {}
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

    /// The words bash passes to the last command of `line` (run in an
    /// empty folder, so no pattern matches).
    fn bash_words(line: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("x.sh");
        let script = format!("a() {{ printf '%s\\0' \"$@\"; }}\n{line}\n");
        std::fs::write(&file, script).unwrap_or_else(|e| panic!("{e}"));
        let out = hermes_procs::child_env::ChildEnv::base()
            .command("bash")
            .arg(&file)
            .current_dir(dir.path())
            .output()
            .unwrap_or_else(|e| panic!("bash: {e}"));
        String::from_utf8_lossy(&out.stdout)
            .split_terminator('\0')
            .map(str::to_string)
            .collect()
    }

    /// Quote removal, escapes and the expansions known before a command
    /// runs give the words bash itself passes.
    #[test]
    fn words_are_what_bash_passes() {
        let lines = [
            "a 'r'm -rf \"/\" r\\m \\r\\m r''m r\"\"m",
            "a $'\\x72\\x6d' $'\\162\\155' $'\\u0072m' $'a\\'b' $'\\t' $'\\cA'",
            "a \"a b\" 'c d'e \"a\\\"b\" \"a\\\\b\" \"a\\$b\" \"a\\`b\" \"a\\qb\" 'a\\qb' a\\ b",
            "a {rm,-rf,/tmp/x} a{b,c}d {1..3} x{a..c} \\{a,b\\} '{a,b}' {a} {}",
            "a rm$IFS-rf$IFS/ $\"translated\" \"nested $'x' here\"",
            "a \"$@\" $* \"${@}\" x$1y a=b c==d --flag=value",
            "a \"multi\nline\" a\\\nb",
            "a $(printf rm) \"$(printf '%s' 'a b')\" `printf x` $(echo a b) \"$(echo a b)\"",
            "x='r m'; a $x \"$x\" ${x} \"${x}\"",
            "x=1; x=1; y=$x; a $y",
            "export v=rm; a $v",
            "a [ -f x ] \"[\" ]",
            "a $ a$ \"$\" '$'",
        ];
        let mut disagree = Vec::new();
        for line in lines {
            let s = parse(line, Instant::now() + Duration::from_secs(5), MAX_DEPTH);
            let ours: Vec<String> = s
                .commands
                .last()
                .map(|c| c.words.iter().skip(1).map(|w| w.text.clone()).collect())
                .unwrap_or_default();
            let bash = bash_words(line);
            if ours != bash {
                disagree.push(format!("{line:?}:\n  ours {ours:?}\n  bash {bash:?}"));
            }
        }
        assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    }

    #[test]
    fn braces_and_escapes() {
        assert_eq!(brace_expand("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(brace_expand("{1..3}"), ["1", "2", "3"]);
        assert_eq!(ansi_c("\\162\\155"), "rm");
        assert_eq!(printf(&["\\162\\155 %s", "x"]).as_deref(), Some("rm x"));
    }
}
