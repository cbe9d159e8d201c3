//! The verdict on each simple command of a parsed command line
//! (`parse.rs`): the rules of `command_rules.tsv` against its canonical
//! text, the commands it wraps (`sudo`, `env`, `xargs`, `find -exec`, …)
//! judged in turn, the code it feeds a shell (`sh -c`, `eval`, `| sh`,
//! heredocs, `source <(…)`) parsed and judged again, and holds for what
//! is known only when it runs.

use std::borrow::Cow;
use std::cell::Cell;
use std::time::{Duration, Instant};

use hermes_runtime::Profile;

use super::parse::{self, literal_output, Input, Script, Simple, Word};
use super::rules::{fold_home, Kind, Table, MAX_CHECKED_CHARS};
use hermes_procs::child_env::ChildEnv;

/// How deep code fed to a shell is unwrapped (`sh -c "sh -c '…'"`).
const MAX_NESTING: usize = 4;
/// How deep wrappers are unwrapped (`sudo env nice timeout 5 rm`).
const MAX_WRAPPERS: usize = 8;
/// Characters of nested shell code parsed for one command line, at most.
const MAX_NESTED_CHARS: usize = 4 * MAX_CHECKED_CHARS;
/// Time one command line may take to read; past it, it is held. A
/// 128,000-character line takes about 65 ms in a release build; this
/// bounds a pathological one (and a debug build on a loaded machine).
const MAX_PARSE_TIME: Duration = Duration::from_secs(2);

/// The holds (reasons for approval) that are no rule of the table.
pub(super) const NAME_UNKNOWN: &str =
    "a command whose name is known only when it runs (made by an expansion, a substitution or a file pattern)";
pub(super) const FED_UNKNOWN: &str =
    "a shell running text known only when it runs (piped, decoded or downloaded)";
pub(super) const EVAL_UNKNOWN: &str = "eval of text known only when it runs";
const NESTED: &str = "shell code nested too deeply to read";

/// The shells: what they read from `-c`, a file or stdin is shell code.
pub(super) const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "ash",
    "yash",
    "rbash",
    "fish",
    "busybox-sh",
];

/// Findings in order: (kind, description).
pub(super) type Findings = Vec<(Kind, String)>;

struct Judge<'a> {
    table: &'a Table,
    /// (profile home, user home), folded to `~/.hermes` and `~`.
    homes: (String, String),
    deadline: Instant,
    nested: Cell<usize>,
}

/// The findings on `command` (module docs).
pub(super) fn judge(command: &str, profile: &Profile, table: &Table) -> Findings {
    let judge = Judge {
        table,
        homes: (
            profile.home().to_string_lossy().into_owned(),
            ChildEnv::base().get("HOME").unwrap_or_default().to_string(),
        ),
        deadline: Instant::now() + MAX_PARSE_TIME,
        nested: Cell::new(0),
    };
    let mut out = Findings::new();
    judge.script(command, 0, true, &mut out);
    out
}

/// Whether the old text rules read `text` exactly as the shell does: no
/// quoting, escapes, expansions or heredocs.
fn plain(text: &str) -> bool {
    !text.contains(['\'', '"', '\\', '$', '`']) && !text.contains("<<")
}

fn push(out: &mut Findings, kind: Kind, description: String) {
    if !out.iter().any(|(k, d)| *k == kind && *d == description) {
        out.push((kind, description));
    }
}

/// What a shell reading its standard input is fed.
enum Fed {
    Nothing,
    Known(String),
    Unknown,
}

impl Judge<'_> {
    /// Judges a command line; `certain`: its text is what will run (not a
    /// guess from expansions).
    fn script(&self, text: &str, depth: usize, certain: bool, out: &mut Findings) {
        let max_depth = if depth == 0 {
            parse::MAX_DEPTH
        } else {
            parse::MAX_DEPTH / 4
        };
        let mut script = parse::parse(text, self.deadline, max_depth);
        if let Some(e) = &script.error {
            if plain(text) {
                // Read without the grammar, as the text rules would.
                script.commands.extend(parse::plain_commands(text));
            } else {
                push(
                    out,
                    Kind::Approve,
                    format!(
                        "a command line that does not parse ({e}): held so that nothing runs unread"
                    ),
                );
            }
        }
        for finding in &script.findings {
            match finding {
                parse::Finding::Hard(d) if certain => push(out, Kind::HardLine, d.clone()),
                parse::Finding::Hard(d) => push(out, Kind::Approve, could_be(d)),
                parse::Finding::Hold(d) => push(out, Kind::Approve, d.clone()),
            }
        }
        for cmd in &script.commands {
            self.command(cmd, &cmd.words, &script, depth, certain, 0, out);
        }
        self.pipelines(&script, certain, out);
    }

    /// Each pipeline as one text (`curl … | sh`), for the rules written
    /// for pipes.
    fn pipelines(&self, script: &Script, certain: bool, out: &mut Findings) {
        let mut stages: Vec<(usize, usize, &Simple)> = script
            .commands
            .iter()
            .filter_map(|c| c.pipe.map(|(id, stage)| (id, stage, c)))
            .collect();
        stages.sort_by_key(|(id, stage, _)| (*id, *stage));
        for pipeline in stages.chunk_by(|a, b| a.0 == b.0) {
            if pipeline.len() < 2 {
                continue;
            }
            let (text, bare): (Vec<String>, Vec<String>) = pipeline
                .iter()
                .map(|(_, _, c)| self.canonical(&c.words, c))
                .unzip();
            self.rules(&text.join(" | "), &bare.join(" | "), certain, out);
        }
    }

    /// The canonical text of `words` with `cmd`'s redirections: the name's
    /// folder dropped, paths normalized, words with blanks quoted, lower
    /// case; and the same with unknown parts empty.
    fn canonical(&self, words: &[Word], cmd: &Simple) -> (String, String) {
        let mut text = String::new();
        for (i, w) in words.iter().enumerate() {
            self.canonical_word(&mut text, i, &w.text);
        }
        // Unknown parts empty: the same text when every part is known.
        let mut bare = if words.iter().all(|w| w.text == w.bare) {
            None
        } else {
            let mut bare = String::new();
            for (i, w) in words.iter().enumerate() {
                self.canonical_word(&mut bare, i, &w.bare);
            }
            Some(bare)
        };
        for r in &cmd.redirects {
            let (op, target) = r.split_once(' ').unwrap_or((r, ""));
            let target = self.path(target);
            for s in std::iter::once(&mut text).chain(bare.as_mut()) {
                if !s.is_empty() {
                    s.push(' ');
                }
                s.push_str(op);
                s.push(' ');
                s.push_str(&target);
            }
        }
        let text = lower(text);
        let bare = bare.map_or_else(|| text.clone(), lower);
        (text, bare)
    }

    /// Word `i` of a command appended to `s`: the name without its folder,
    /// an argument normalized as a path.
    fn canonical_word(&self, s: &mut String, i: usize, word: &str) {
        if !s.is_empty() {
            s.push(' ');
        }
        if i == 0 {
            s.push_str(&quote(basename(word)));
        } else {
            s.push_str(&quote(&self.path(word)));
        }
    }

    /// A path argument normalized as the kernel resolves it (`/etc/`,
    /// `//etc`, `/./etc`, `/tmp/..` are `/etc`, `/etc`, `/etc`, `/`), the
    /// homes folded; `name=/path` (dd's `of=`) too.
    fn path<'w>(&self, word: &'w str) -> Cow<'w, str> {
        if !word.contains('/') {
            return Cow::Borrowed(word);
        }
        if let Some((key, value)) = word.split_once('=') {
            if value.starts_with('/') && !key.contains('/') {
                return Cow::Owned(format!("{key}={}", self.path(value)));
            }
        }
        let (prefix, rest) = if let Some(rest) = word.strip_prefix('/') {
            ("", rest)
        } else if let Some(rest) = word.strip_prefix("~/") {
            ("~", rest)
        } else {
            return Cow::Borrowed(word);
        };
        let mut parts: Vec<&str> = Vec::new();
        for seg in rest.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                s => parts.push(s),
            }
        }
        let joined = format!("{prefix}/{}", parts.join("/"));
        if prefix == "~" {
            return Cow::Owned(joined.trim_end_matches('/').to_string());
        }
        let folded = fold_home(&(joined.clone() + "/"), &self.homes.0, "~/.hermes");
        let folded = fold_home(&folded, &self.homes.1, "~");
        if folded == joined.clone() + "/" {
            Cow::Owned(joined)
        } else {
            Cow::Owned(folded.trim_end_matches('/').to_string())
        }
    }

    /// The rules against one canonical text (and its bare form: a hard
    /// line there only could be one).
    fn rules(&self, text: &str, bare: &str, certain: bool, out: &mut Findings) {
        for rule in self.table.all(text) {
            let d = rule.description.clone();
            match rule.kind {
                Kind::HardLine | Kind::Block if !certain => push(out, Kind::Approve, could_be(&d)),
                kind => push(out, kind, d),
            }
        }
        if bare != text {
            for rule in self.table.all(bare) {
                if matches!(rule.kind, Kind::HardLine | Kind::Block) {
                    push(out, Kind::Approve, could_be(&rule.description));
                }
            }
        }
    }

    /// Only the hard-line and block rules.
    fn hard_rules(&self, text: &str, bare: &str, certain: bool, out: &mut Findings) {
        let mut found = Findings::new();
        self.rules(text, bare, certain, &mut found);
        for (kind, d) in found {
            if kind != Kind::Approve || d.starts_with("could be ") {
                push(out, kind, d);
            }
        }
    }

    /// One simple command (or what a wrapper runs: `words`).
    #[allow(clippy::too_many_arguments)]
    fn command(
        &self,
        cmd: &Simple,
        words: &[Word],
        script: &Script,
        depth: usize,
        certain: bool,
        level: usize,
        out: &mut Findings,
    ) {
        let name_known = words
            .first()
            .is_none_or(|w| w.known && !w.expanded && !w.glob);
        if !name_known {
            push(out, Kind::Approve, NAME_UNKNOWN.to_string());
        }
        let (text, bare) = self.canonical(words, cmd);
        if level == 0 {
            self.rules(&text, &bare, certain && name_known, out);
        } else {
            // What a wrapper runs meets the hard lines and blocks; the
            // approval rules match the wrapped text as the reference's do
            // (`find -exec sh -c` is not asked about there either).
            self.hard_rules(&text, &bare, certain && name_known, out);
        }
        let Some((name, args)) = words.split_first() else {
            return;
        };
        let certain = certain && name_known;
        let name = basename(&name.text).to_lowercase();
        if level >= MAX_WRAPPERS {
            push(out, Kind::Approve, NESTED.to_string());
            return;
        }
        for inner in unwrap(&name, args) {
            match inner {
                Inner::Words(w) => self.command(cmd, &w, script, depth, certain, level + 1, out),
                Inner::Code(code) => self.fed(code, depth, certain, out),
            }
        }
        if name == "xargs" && xargs_runs_its_input(args) {
            push(out, Kind::Approve, FED_UNKNOWN.to_string());
        }
        match name.as_str() {
            "eval" => {
                let code = args.iter().all(|w| w.known).then(|| {
                    args.iter()
                        .map(|w| w.text.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                });
                match code {
                    Some(code) => self.fed(Some(code), depth, certain, out),
                    None => push(out, Kind::Approve, EVAL_UNKNOWN.to_string()),
                }
            }
            "source" | "." => {
                if let Some(file) = args.first() {
                    self.file_fed(file, cmd, script, depth, certain, out);
                }
            }
            n if SHELLS.contains(&n) => self.shell(args, cmd, script, depth, certain, out),
            _ => {}
        }
    }

    /// A shell's arguments: `-c CODE`, a file, or its standard input.
    #[allow(clippy::too_many_arguments)]
    fn shell(
        &self,
        args: &[Word],
        cmd: &Simple,
        script: &Script,
        depth: usize,
        certain: bool,
        out: &mut Findings,
    ) {
        match shell_args(args) {
            ShellArgs::Code(Some(code)) => {
                self.fed(code.known.then(|| code.text.clone()), depth, certain, out)
            }
            ShellArgs::Code(None) => {}
            ShellArgs::Stdin => self.stdin_fed(cmd, script, depth, certain, out),
            ShellArgs::File(file) => self.file_fed(file, cmd, script, depth, certain, out),
        }
    }

    /// `source FILE`, `sh FILE`: a process substitution or the standard
    /// input as a file is code fed; a plain file runs as written.
    #[allow(clippy::too_many_arguments)]
    fn file_fed(
        &self,
        file: &Word,
        cmd: &Simple,
        script: &Script,
        depth: usize,
        certain: bool,
        out: &mut Findings,
    ) {
        if let Some(feed) = &file.feed {
            self.fed(feed.clone(), depth, certain, out);
        } else if matches!(
            file.text.as_str(),
            "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"
        ) {
            self.stdin_fed(cmd, script, depth, certain, out);
        }
    }

    fn stdin_fed(
        &self,
        cmd: &Simple,
        script: &Script,
        depth: usize,
        certain: bool,
        out: &mut Findings,
    ) {
        match stdin_of(cmd, script, 0) {
            Fed::Nothing => {}
            Fed::Known(code) => self.fed(Some(code), depth, certain, out),
            Fed::Unknown => push(out, Kind::Approve, FED_UNKNOWN.to_string()),
        }
    }

    /// Code a shell runs: judged as a command line of its own.
    fn fed(&self, code: Option<String>, depth: usize, certain: bool, out: &mut Findings) {
        let Some(code) = code else {
            push(out, Kind::Approve, FED_UNKNOWN.to_string());
            return;
        };
        let total = self.nested.get() + code.len();
        if depth >= MAX_NESTING || total > MAX_NESTED_CHARS {
            push(out, Kind::Approve, NESTED.to_string());
            return;
        }
        self.nested.set(total);
        self.script(&code, depth + 1, certain, out);
    }
}

/// What a shell's arguments make it run.
enum ShellArgs<'w> {
    /// `-c CODE` (`None`: no code given).
    Code(Option<&'w Word>),
    /// Its standard input (no operand, or `-s`, `-i`).
    Stdin,
    /// A script file.
    File(&'w Word),
}

fn shell_args(args: &[Word]) -> ShellArgs<'_> {
    let (mut dash_c, mut dash_s) = (false, false);
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let a = a.text.as_str();
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if a.starts_with("--") {
            i += if matches!(a, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            dash_c |= a.contains('c');
            dash_s |= a.contains(['s', 'i']);
            i += 1 + usize::from(a.contains(['o', 'O']));
            continue;
        }
        break;
    }
    let rest = args.get(i..).unwrap_or_default();
    match rest.first() {
        _ if dash_c => ShellArgs::Code(rest.first()),
        Some(file) if !dash_s => ShellArgs::File(file),
        _ => ShellArgs::Stdin,
    }
}

/// Whether the program `command` starts reads shell code on its standard
/// input: a shell without `-c` or a script (`bash`, `exec bash -i`, `sudo
/// -s`, `su`), a remote or container shell (`ssh host`, `docker exec -it
/// c bash`: a shell name last among its words). `process` judges what is
/// written to it as a command line.
pub(super) fn reads_shell_code(command: &str) -> bool {
    let script = parse::parse(command, Instant::now() + MAX_PARSE_TIME, parse::MAX_DEPTH);
    script.commands.iter().any(|c| reads_code(&c.words, 0))
}

fn reads_code(words: &[Word], level: usize) -> bool {
    let Some((name, args)) = words.split_first() else {
        return false;
    };
    let name = basename(&name.text).to_lowercase();
    let flag = |f: &[&str]| args.iter().any(|a| f.contains(&a.text.as_str()));
    if SHELLS.contains(&name.as_str()) {
        return matches!(shell_args(args), ShellArgs::Stdin)
            || matches!(shell_args(args), ShellArgs::File(f) if f.text == "/dev/stdin");
    }
    let interactive = match name.as_str() {
        "ssh" | "mosh" | "telnet" => true,
        "su" | "runuser" => !flag(&["-c", "--command"]),
        "sudo" | "doas" => flag(&["-s", "-i", "--shell", "--login"]),
        _ => false,
    };
    if interactive {
        return true;
    }
    if level < MAX_WRAPPERS {
        for inner in unwrap(&name, args) {
            if let Inner::Words(w) = inner {
                if reads_code(&w, level + 1) {
                    return true;
                }
            }
        }
    }
    // `docker exec -it c bash`, `kubectl exec -it p -- sh`, `chroot /x bash`.
    args.iter().enumerate().any(|(i, w)| {
        SHELLS.contains(&basename(&w.text))
            && args
                .get(i + 1..)
                .unwrap_or_default()
                .iter()
                .all(|a| a.text.starts_with('-') && !a.text.contains('c'))
    })
}

/// `xargs -I{} sh -c {}`: the code a shell runs is the input's text.
fn xargs_runs_its_input(args: &[Word]) -> bool {
    let mut replace = None;
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t == "-I" {
            replace = args.get(i + 1).map(|w| w.text.clone());
        } else if let Some(r) = t
            .strip_prefix("-I")
            .or_else(|| t.strip_prefix("--replace="))
        {
            replace = Some(r.to_string());
        } else if t == "-i" || t == "--replace" {
            replace = Some("{}".to_string());
        }
    }
    let Some(replace) = replace.filter(|r| !r.is_empty()) else {
        return false;
    };
    unwrap("xargs", args).iter().any(|inner| match inner {
        Inner::Words(w) => w.first().is_some_and(|n| SHELLS.contains(&basename(&n.text)))
            && matches!(shell_args(&w[1..]), ShellArgs::Code(Some(code)) if code.text.trim() == replace),
        Inner::Code(_) => false,
    })
}

/// What a command's standard input gives it (through its pipe, a few
/// stages back at most).
fn stdin_of(cmd: &Simple, script: &Script, hops: usize) -> Fed {
    match &cmd.input {
        Input::Text(Some(t)) => Fed::Known(t.clone()),
        Input::Text(None) => Fed::Unknown,
        Input::Inherit | Input::File => Fed::Nothing,
        Input::Pipe => {
            let Some((id, stage)) = cmd.pipe else {
                return Fed::Unknown;
            };
            let prev = script
                .commands
                .iter()
                .find(|c| c.pipe == Some((id, stage.wrapping_sub(1))));
            let Some(prev) = prev.filter(|_| hops < 8) else {
                return Fed::Unknown;
            };
            let pipe_in = match stdin_of(prev, script, hops + 1) {
                Fed::Known(t) => Some(t),
                _ => None,
            };
            match literal_output(prev, pipe_in.as_deref()) {
                Some(t) => Fed::Known(t),
                None => Fed::Unknown,
            }
        }
    }
}

fn could_be(description: &str) -> String {
    format!("could be {description}: parts of it are known only when it runs")
}

fn basename(name: &str) -> &str {
    match name.rsplit_once('/') {
        Some((_, base)) if !base.is_empty() => base,
        _ => name,
    }
}

/// Lower case, in place for ASCII.
fn lower(mut text: String) -> String {
    if text.is_ascii() {
        text.make_ascii_lowercase();
        text
    } else {
        text.to_lowercase()
    }
}

/// A word as the rules see it: quoted when it holds blanks or shell
/// operators, so `rm -rf '/ x'` is no `rm -rf /`.
fn quote(word: &str) -> Cow<'_, str> {
    if word.is_empty() {
        return Cow::Borrowed("''");
    }
    if word.contains(|c: char| c.is_whitespace() || ";&|<>()`'\"".contains(c)) {
        Cow::Owned(format!("'{}'", word.replace('\'', "")))
    } else {
        Cow::Borrowed(word)
    }
}

/// What a wrapper runs.
enum Inner {
    /// A command, as words.
    Words(Vec<Word>),
    /// Shell code (`None`: known only when it runs).
    Code(Option<String>),
}

/// Wrappers: the options that take an argument, and how many operands
/// come before the command.
const WRAPPERS: &[(&str, &[&str], usize)] = &[
    (
        "sudo",
        &[
            "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R",
        ],
        0,
    ),
    ("doas", &["-u", "-C"], 0),
    ("env", &["-u", "-C", "--unset", "--chdir"], 0),
    ("nice", &["-n", "--adjustment"], 0),
    ("ionice", &["-c", "-n", "-p", "-P", "-u"], 0),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    ("stdbuf", &["-i", "-o", "-e"], 0),
    ("taskset", &[], 1),
    ("chroot", &["--userspec", "--groups"], 1),
    ("nohup", &[], 0),
    ("setsid", &[], 0),
    ("builtin", &[], 0),
    ("command", &[], 0),
    ("exec", &["-a"], 0),
    ("time", &["-o", "-f", "--output", "--format"], 0),
    ("unbuffer", &[], 0),
    ("fakeroot", &[], 0),
    ("catchsegv", &[], 0),
    ("pkexec", &["--user"], 0),
    ("busybox", &[], 0),
    (
        "strace",
        &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-X",
        ],
        0,
    ),
    ("ltrace", &["-o", "-e", "-p", "-s", "-u", "-n"], 0),
    (
        "systemd-run",
        &[
            "-u",
            "-p",
            "--unit",
            "--property",
            "-E",
            "--setenv",
            "--uid",
            "--gid",
            "-M",
        ],
        0,
    ),
    ("unshare", &[], 0),
    ("nsenter", &["-t", "--target"], 0),
    (
        "flock",
        &["-w", "-E", "--timeout", "--conflict-exit-code"],
        1,
    ),
    (
        "xargs",
        &[
            "-I",
            "-L",
            "-n",
            "-P",
            "-d",
            "-E",
            "-s",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-lines",
            "--replace",
        ],
        0,
    ),
    ("watch", &["-n", "--interval", "-c", "-q"], 0),
    ("su", &["-s", "-g", "-G", "-w", "--shell", "--group"], 0),
    (
        "runuser",
        &["-s", "-g", "-G", "-u", "--shell", "--group", "--user"],
        0,
    ),
];

fn literal_word(text: &str) -> Word {
    Word {
        text: text.to_string(),
        bare: text.to_string(),
        known: true,
        ..Word::default()
    }
}

/// What `name ARGS…` runs in turn (module docs).
fn unwrap(name: &str, args: &[Word]) -> Vec<Inner> {
    if name == "find" {
        return find_exec(args);
    }
    let Some((_, with_arg, operands)) = WRAPPERS.iter().find(|(n, _, _)| *n == name) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut i = 0;
    let mut code = None;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        // Queries, not runs.
        if name == "command" && (t == "-v" || t == "-V") {
            return Vec::new();
        }
        // `su -c CODE`, `flock F -c CODE`, `env -S 'CMD ARGS'`.
        if matches!(t, "-c" | "--command") && matches!(name, "su" | "runuser" | "flock") {
            code = Some(
                args.get(i + 1)
                    .and_then(|w| w.known.then(|| w.text.clone())),
            );
            i += 2;
            continue;
        }
        if name == "env" && (t == "-S" || t.starts_with("--split-string")) {
            if let Some(s) = args.get(i + 1) {
                let words: Vec<Word> = s.text.split_whitespace().map(literal_word).collect();
                out.push(Inner::Words(words));
            }
            return out;
        }
        let takes = with_arg.contains(&t);
        i += 1 + usize::from(takes && !t.contains('='));
    }
    if let Some(code) = code {
        out.push(Inner::Code(code));
        return out;
    }
    if name == "env" {
        while args.get(i).is_some_and(|w| {
            w.text
                .split_once('=')
                .is_some_and(|(k, _)| !k.is_empty() && !k.contains('/'))
        }) {
            i += 1;
        }
    }
    if matches!(name, "su" | "runuser") {
        return out;
    }
    i += operands;
    let rest = args.get(i..).unwrap_or_default();
    if rest.is_empty() {
        return out;
    }
    if name == "watch" {
        let known = rest.iter().all(|w| w.known);
        let code: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
        out.push(Inner::Code(known.then(|| code.join(" "))));
        return out;
    }
    out.push(Inner::Words(rest.to_vec()));
    out
}

/// The commands of `find … -exec CMD … ;` (and `-execdir`, `-ok`,
/// `-okdir`; ended by `;` or `+`).
fn find_exec(args: &[Word]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if !matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let mut words = Vec::new();
        while let Some(w) = args.get(i) {
            i += 1;
            if w.text == ";" || w.text == "+" {
                break;
            }
            words.push(w.clone());
        }
        if !words.is_empty() {
            out.push(Inner::Words(words));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalized() {
        let table = match super::super::rules::table() {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        let j = Judge {
            table,
            homes: ("/x/y/profile".into(), "/home/u".into()),
            deadline: Instant::now() + MAX_PARSE_TIME,
            nested: Cell::new(0),
        };
        assert_eq!(j.path("/etc/"), "/etc");
        assert_eq!(j.path("//etc"), "/etc");
        assert_eq!(j.path("/./etc"), "/etc");
        assert_eq!(j.path("/tmp/.."), "/");
        assert_eq!(j.path("/"), "/");
        assert_eq!(j.path("/home/u/"), "~");
        assert_eq!(j.path("/home/u/.ssh/x"), "~/.ssh/x");
        assert_eq!(j.path("of=//dev/sda"), "of=/dev/sda");
        assert_eq!(j.path("~/"), "~");
        assert_eq!(j.path("x/y/"), "x/y/");
    }
}
