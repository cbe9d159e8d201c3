//! The rule table: `command_rules.tsv` (hard-line blocks, blocks, and
//! patterns that need the user's approval; one home for the patterns),
//! parsed once and matched with one `RegexSet` scan per text. Both passes
//! of the check (`guard.rs` over the whole text, `judge.rs` over each
//! simple command) read it; it depends on neither.

use std::sync::LazyLock;

use regex::bytes::{Regex as BytesRegex, RegexSet as BytesRegexSet};

/// The rule table (one home for the patterns).
const RULES: &str = include_str!("command_rules.tsv");

/// Commands longer than this are refused unread, as in the reference: a
/// check that cannot finish is no check.
pub const MAX_CHECKED_CHARS: usize = 128_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    HardLine,
    Block,
    Approve,
}

#[derive(Debug)]
pub(super) struct Rule {
    pub(super) kind: Kind,
    pub(super) description: String,
    regex: BytesRegex,
    /// A match is dropped when this matches the rest of its line.
    unless: Option<BytesRegex>,
}

/// The rules, and all their regexes in one set: a text is scanned once
/// for every rule (`RegexSet`), then only the rules it matched are run
/// one by one (for their `UNLESS`).
#[derive(Debug)]
pub(super) struct Table {
    rules: Vec<Rule>,
    set: BytesRegexSet,
}

impl Table {
    /// Every rule `text` matches, in table order (most texts match none:
    /// one scan that stops at the first match says so).
    pub(super) fn all<'t>(&'t self, text: &str) -> Vec<&'t Rule> {
        if !self.set.is_match(text.as_bytes()) {
            return Vec::new();
        }
        self.set
            .matches(text.as_bytes())
            .into_iter()
            .filter_map(|i| self.rules.get(i))
            .filter(|r| matches(r, text))
            .collect()
    }
}

/// The parsed table, or what is wrong with it (a test holds it to none).
static TABLE: LazyLock<Result<Table, String>> = LazyLock::new(|| {
    let rules = parse(RULES)?;
    let set = BytesRegexSet::new(rules.iter().map(|r| r.regex.as_str()))
        .map_err(|e| format!("the rules do not compile as one set: {e}"))?;
    Ok(Table { rules, set })
});

/// A rule's regex, over bytes: the command is lower-cased before
/// matching, so the rules are written in lower case and compiled without
/// case folding or Unicode classes (`\b`, `\w`, `\s`, `.` are ASCII's or
/// any byte): Unicode tables would make the table several times slower to
/// build, and a shell's words are ASCII.
fn compile(pattern: &str) -> Result<BytesRegex, String> {
    BytesRegex::new(&format!("(?s-u){pattern}")).map_err(|e| format!("bad regex {pattern:?}: {e}"))
}

fn parse(text: &str) -> Result<Vec<Rule>, String> {
    let mut defines: Vec<(String, String)> = Vec::new();
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let at = || format!("command_rules.tsv line {}", n + 1);
        let expand = |pattern: &str| -> Result<String, String> {
            let mut out = pattern.to_string();
            // Later fragments may use earlier ones, already expanded.
            for (name, body) in defines.iter().rev() {
                out = out.replace(&format!("@{name}@"), &format!("(?:{body})"));
            }
            if out.contains('@') && out.split('@').count() > 2 {
                return Err(format!("{}: unknown fragment in {pattern:?}", at()));
            }
            Ok(out)
        };
        match fields.as_slice() {
            ["define", name, body] => {
                let body = expand(body)?;
                defines.push(((*name).to_string(), body));
            }
            [kind, description, pattern, rest @ ..] if rest.len() <= 1 => {
                let kind = match *kind {
                    "hardline" => Kind::HardLine,
                    "block" => Kind::Block,
                    "approve" => Kind::Approve,
                    other => return Err(format!("{}: unknown kind {other:?}", at())),
                };
                let regex = compile(&expand(pattern)?).map_err(|e| format!("{}: {e}", at()))?;
                let unless = match rest.first() {
                    Some(p) => Some(compile(&expand(p)?).map_err(|e| format!("{}: {e}", at()))?),
                    None => None,
                };
                rules.push(Rule {
                    kind,
                    description: (*description).to_string(),
                    regex,
                    unless,
                });
            }
            _ => return Err(format!("{}: expected TAB-separated fields", at())),
        }
    }
    Ok(rules)
}

/// The parsed table, or what is wrong with it (a test holds it to none).
pub(super) fn table() -> Result<&'static Table, &'static String> {
    TABLE.as_ref()
}

fn matches(rule: &Rule, text: &str) -> bool {
    let text = text.as_bytes();
    let Some(unless) = &rule.unless else {
        return rule.regex.is_match(text);
    };
    rule.regex.find_iter(text).any(|m| {
        let rest = &text[m.start()..];
        let line = rest.split(|b| *b == b'\n').next().unwrap_or(rest);
        !unless.is_match(line)
    })
}

/// `home/…` written as `replacement/…`, for a home at least two folders
/// deep (so `/` or `/home` never rewrites unrelated paths).
pub(super) fn fold_home(text: &str, home: &str, replacement: &str) -> String {
    let home = home.trim_end_matches('/');
    if home.split('/').filter(|c| !c.is_empty()).count() < 2 {
        return text.to_string();
    }
    text.replace(&format!("{home}/"), &format!("{replacement}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses() {
        let rules = &TABLE.as_ref().unwrap().rules;
        assert!(rules.iter().filter(|r| r.kind == Kind::HardLine).count() >= 10);
        assert!(rules.iter().filter(|r| r.kind == Kind::Approve).count() >= 60);
    }

    #[test]
    fn bad_tables_are_reported() {
        assert!(parse("approve\tx").is_err());
        assert!(parse("weird\tx\ty").is_err());
        assert!(parse("approve\tx\t(").is_err());
        assert!(parse("approve\tx\t@nope@").is_err());
    }
}
