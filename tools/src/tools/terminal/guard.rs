//! What `terminal` checks before a command runs: the rules of
//! `command_rules.tsv` (hard-line blocks, blocks, and patterns that need
//! the user's approval), matched twice.
//!
//! 1. Against each simple command as bash will run it (`judge.rs`, over
//!    the syntax tree of `parse.rs`): its words with quotes removed and
//!    known expansions applied, wrappers (`sudo`, `env`, `timeout 5`,
//!    `xargs`, `find -exec`, …) unwrapped, paths normalized; every pipeline
//!    as its stages joined by ` | `; and the code a shell is fed (`sh -c`,
//!    `eval`, `| sh`, heredocs, `source <(…)`), judged again. What only
//!    the running shell can know (a command name made by an expansion,
//!    unknown text fed to a shell) is held for approval.
//! 2. Against the whole text, as the reference matches it, normalized so
//!    spelling tricks do not hide it: ANSI escapes and NUL bytes dropped,
//!    Unicode compatibility forms folded (NFKC: full-width letters become
//!    ASCII), line continuations joined, the user's and the profile's
//!    absolute home folders written as `~/` and `~/.hermes/`, backslash
//!    escapes and empty quotes (`r\m`, `r''m`) removed, `$IFS` read as a
//!    space. Rules see these variants, in order: the normalized text; the
//!    same with a line break at every command start outside quotes (`a; b`,
//!    `a && b`, `(b)`, `{ b; }`), so rules anchored at a command start
//!    (`@cmd@`) find `b`; and the script of every `sh -c '...'`
//!    (recursively, a few levels deep). This keeps every verdict of the
//!    reference (whose rules are written for whole texts: `DROP TABLE` in
//!    a `psql -c` string, `chmod +x x && ./x`).
//!
//! The strictest verdict of the two wins.

use std::sync::LazyLock;

use hermes_runtime::Profile;
use regex::Regex;
use unicode_normalization::UnicodeNormalization;

use super::rules::{fold_home, Kind, Rule, MAX_CHECKED_CHARS};
use hermes_procs::child_env::ChildEnv;

/// How deep `sh -c '...'` scripts are unwrapped.
const MAX_NESTING: usize = 4;

/// Texts checked per command at most (the command, its marked form and
/// unwrapped `sh -c` scripts): a command of thousands of `sh -c` calls
/// costs no more than this many.
const MAX_VARIANTS: usize = 64;

/// What the check says about a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Runs without asking.
    Allow,
    /// Never runs, whatever the approvals or the operator's switch.
    HardLine(String),
    /// Never runs (e.g. guessing the sudo password), unless the profile
    /// configured what makes it legitimate.
    Block(String),
    /// Runs once approved; the description is the approval key.
    Approve(String),
}

pub(super) use super::judge::reads_shell_code;

/// Checks `command` for `profile`: the strictest verdict of the two
/// passes (module docs): a hard line, else a block, else the first rule
/// or hold needing approval.
pub fn check(command: &str, profile: &Profile) -> Verdict {
    let table = match super::rules::table() {
        Ok(table) => table,
        // Cannot happen with the shipped table (a test parses it); if it
        // did, nothing may run unchecked.
        Err(e) => return Verdict::HardLine(format!("the command rules are broken: {e}")),
    };
    if command.chars().count() > MAX_CHECKED_CHARS {
        return Verdict::HardLine(format!(
            "command too long to check (over {MAX_CHECKED_CHARS} characters)"
        ));
    }
    let parsed = super::judge::judge(command, profile, table);
    // The text rules: every variant scanned once, its matches kept.
    let matched: Vec<Vec<&Rule>> = variants(command, profile)
        .iter()
        .map(|v| table.all(v))
        .collect();
    let text = |kind: Kind| {
        matched
            .iter()
            .find_map(|rules| rules.iter().find(|r| r.kind == kind))
            .map(|r| r.description.clone())
    };
    let parsed_first = |kind: Kind| {
        parsed
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, d)| d.clone())
    };
    if let Some(d) = parsed_first(Kind::HardLine).or_else(|| text(Kind::HardLine)) {
        return Verdict::HardLine(d);
    }
    if profile.secret("SUDO_PASSWORD").is_none() {
        if let Some(d) = parsed_first(Kind::Block).or_else(|| text(Kind::Block)) {
            return Verdict::Block(d);
        }
    }
    match text(Kind::Approve).or_else(|| parsed_first(Kind::Approve)) {
        Some(d) => Verdict::Approve(d),
        None => Verdict::Allow,
    }
}

/// The texts the rules see (module docs), without duplicates.
fn variants(command: &str, profile: &Profile) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending = vec![(normalize(command, profile), 0usize)];
    while let Some((text, depth)) = pending.pop() {
        if out.len() >= MAX_VARIANTS {
            break;
        }
        let marked = mark_command_starts(&text);
        if depth < MAX_NESTING {
            for script in shell_c_scripts(&marked).into_iter().take(MAX_VARIANTS) {
                pending.push((script, depth + 1));
            }
        }
        for v in [text, marked] {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// The fixed patterns of the normalization (a test compiles each).
const CONTINUATION_PATTERN: &str = r"\\\r?\n";
const ESCAPE_PATTERN: &str = r"\\([^\n])";
const EMPTY_QUOTES_PATTERN: &str = r#"''|"""#;
const IFS_PATTERN: &str = r"\$\{IFS\b[^}]*\}|\$IFS\b";
const SHELL_C_PATTERN: &str = r#"(?:^|[\n`]|\$\()\s*(?:sudo\s+(?:-\S+\s+(?:[^-\s]\S*\s+)?)*)?(?:env\s+(?:\w+=\S*\s+)*)?(?:(?:exec|nohup|setsid|time)\s+(?:-\S+\s+)*)*(?:\S*/)?(?:bash|sh|zsh|ksh|dash)\s+(?:-\S+\s+)*-[a-z]*c[a-z]*\s+(?:'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s;&|]+))"#;

static CONTINUATION: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(CONTINUATION_PATTERN).ok());
static ESCAPE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(ESCAPE_PATTERN).ok());
static EMPTY_QUOTES: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(EMPTY_QUOTES_PATTERN).ok());
static IFS: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(IFS_PATTERN).ok());
static SHELL_C: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(SHELL_C_PATTERN).ok());

fn replace(re: &Option<Regex>, text: &str, with: &str) -> String {
    match re {
        Some(re) => re.replace_all(text, with).into_owned(),
        None => text.to_string(),
    }
}

/// The normalized, lower-case command (module docs).
pub fn normalize(command: &str, profile: &Profile) -> String {
    let text = hermes_procs::output::clean(command).replace('\0', "");
    // ASCII is its own compatibility form.
    let text: String = if text.is_ascii() {
        text
    } else {
        text.nfkc().collect()
    };
    let text = replace(&CONTINUATION, &text, "");
    let text = fold_home(&text, &profile.home().to_string_lossy(), "~/.hermes");
    let user_home = ChildEnv::base().get("HOME").unwrap_or_default().to_string();
    let text = fold_home(&text, &user_home, "~");
    let text = replace(&ESCAPE, &text, "$1");
    let text = replace(&EMPTY_QUOTES, &text, "");
    let text = replace(&IFS, &text, " ");
    text.to_lowercase()
}

/// A line break after every operator that starts a command outside
/// quotes: `;`, `&`, `|`, `(`, `{` at a word start, a newline. (`$(` and
/// backticks are command starts for `@cmd@` already, in quotes or not.)
fn mark_command_starts(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let (mut single, mut double) = (false, false);
    let mut chars = text.chars().peekable();
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            ';' | '&' | '|' | '(' if !single && !double => {
                let next = chars.peek().copied().unwrap_or(' ');
                if !matches!(next, '&' | '|') && prev != '$' && prev != '>' && prev != '<' {
                    out.push('\n');
                }
            }
            '{' if !single && !double && prev.is_whitespace() => out.push('\n'),
            _ => {}
        }
        prev = c;
    }
    out
}

/// The scripts of `sh -c SCRIPT` (and bash, zsh, ksh, dash) at command
/// starts, unquoted.
fn shell_c_scripts(text: &str) -> Vec<String> {
    let Some(shell_c) = SHELL_C.as_ref() else {
        return Vec::new();
    };
    shell_c
        .captures_iter(text)
        .filter_map(|c| c.get(1).or(c.get(2)).or(c.get(3)))
        .map(|m| m.as_str().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_patterns_compile() {
        for p in [
            CONTINUATION_PATTERN,
            ESCAPE_PATTERN,
            EMPTY_QUOTES_PATTERN,
            IFS_PATTERN,
            SHELL_C_PATTERN,
        ] {
            assert!(Regex::new(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn command_starts_are_marked_outside_quotes_only() {
        assert_eq!(mark_command_starts("a && b"), "a &&\n b");
        assert_eq!(mark_command_starts("echo 'a; b'"), "echo 'a; b'");
        assert_eq!(mark_command_starts("(b)"), "(\nb)");
        assert_eq!(mark_command_starts("x ${y}"), "x ${y}");
    }
}
