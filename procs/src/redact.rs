//! Secret redaction: API keys, tokens, private keys and passwords in text
//! that is about to reach the model are replaced by markers. One home for
//! the rule: `read_file` and `search_files` use it, and so can any tool
//! that returns text it did not write itself (terminal output, say).
//!
//! The patterns are data ([`PREFIXES`] and the table in `Passes`),
//! following the reference's: vendor key prefixes, `Authorization:` and
//! API-key headers, Telegram bot tokens, private key blocks, passwords in
//! database URLs, bare tokens before `@` in URLs, JWTs, phone numbers,
//! form bodies, and (for [`Scope::Text`] only) `SECRET_NAME=value`
//! assignments and JSON fields with secret-looking names. For a profile
//! ([`redact_for`]), also the literal values of its own `.env`, whatever
//! their names ([`redact_secret_values`]): every command of the profile
//! has them in its environment, so `env`, `/proc/self/environ` or
//! `echo $NAME` would print them.
//!
//! On by default; `HERMES_REDACT_SECRETS` in the process environment
//! (`false`, `0`, `no`, `off`) turns it off. It is read once, at the first
//! redaction, so a command run later cannot turn it off mid-session.
//!
//! Fast path: one [`RegexSet`] pass decides whether anything may match;
//! when nothing does, the text is returned borrowed, with no allocation.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};

use hermes_runtime::Profile;

use regex::{Captures, Regex, RegexSet};

/// The environment variable that turns redaction off.
pub const ENABLE_VAR: &str = "HERMES_REDACT_SECRETS";

/// What the text is, which decides the passes applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Logs, command output: every pattern, vendor keys masked to their
    /// first 6 and last 4 characters (under 18 characters: `***`).
    Text,
    /// Source code or data files: as [`Scope::Text`] without the
    /// assignment and JSON-field patterns, which constants and fixtures
    /// would trip.
    Code,
    /// File contents returned by the file tools: as [`Scope::Code`], and
    /// vendor keys become `«redacted:PREFIX…»`, which cannot be mistaken
    /// for a usable key and written back.
    FileRead,
}

/// Known key prefixes: the literal a key starts with (its label in the
/// marker) and the pattern of the whole key. A match must not touch
/// another `[A-Za-z0-9_-]` character on either side.
pub const PREFIXES: &[(&str, &str)] = &[
    ("sk-", r"sk-[A-Za-z0-9_-]{10,}"),
    ("ghp_", r"ghp_[A-Za-z0-9]{10,}"),
    ("github_pat_", r"github_pat_[A-Za-z0-9_]{10,}"),
    ("gho_", r"gho_[A-Za-z0-9]{10,}"),
    ("ghu_", r"ghu_[A-Za-z0-9]{10,}"),
    ("ghs_", r"ghs_[A-Za-z0-9]{10,}"),
    ("ghr_", r"ghr_[A-Za-z0-9]{10,}"),
    ("xapp-", r"xapp-\d+-[A-Za-z0-9-]{10,}"),
    ("xox", r"xox[baprs]-[A-Za-z0-9-]{10,}"),
    ("AIza", r"AIza[A-Za-z0-9_-]{30,}"),
    ("pplx-", r"pplx-[A-Za-z0-9]{10,}"),
    ("fal_", r"fal_[A-Za-z0-9_-]{10,}"),
    ("fc-", r"fc-[A-Za-z0-9]{10,}"),
    ("bb_live_", r"bb_live_[A-Za-z0-9_-]{10,}"),
    ("gAAAA", r"gAAAA[A-Za-z0-9_=-]{20,}"),
    ("AKIA", r"AKIA[A-Z0-9]{16}"),
    ("sk_live_", r"sk_live_[A-Za-z0-9]{10,}"),
    ("sk_test_", r"sk_test_[A-Za-z0-9]{10,}"),
    ("rk_live_", r"rk_live_[A-Za-z0-9]{10,}"),
    ("SG", r"SG\.[A-Za-z0-9_-]{10,}"),
    ("hf_", r"hf_[A-Za-z0-9]{10,}"),
    ("r8_", r"r8_[A-Za-z0-9]{10,}"),
    ("npm_", r"npm_[A-Za-z0-9]{10,}"),
    ("pypi-", r"pypi-[A-Za-z0-9_-]{10,}"),
    ("dop_v1_", r"dop_v1_[A-Za-z0-9]{10,}"),
    ("doo_v1_", r"doo_v1_[A-Za-z0-9]{10,}"),
    ("am_", r"am_[A-Za-z0-9_-]{10,}"),
    ("sk_", r"sk_[A-Za-z0-9_]{10,}"),
    ("tvly-", r"tvly-[A-Za-z0-9]{10,}"),
    ("exa_", r"exa_[A-Za-z0-9]{10,}"),
    ("gsk_", r"gsk_[A-Za-z0-9]{10,}"),
    ("syt_", r"syt_[A-Za-z0-9]{10,}"),
    ("retaindb_", r"retaindb_[A-Za-z0-9]{10,}"),
    ("hsk-", r"hsk-[A-Za-z0-9]{10,}"),
    ("mem0_", r"mem0_[A-Za-z0-9]{10,}"),
    ("brv_", r"brv_[A-Za-z0-9]{10,}"),
    ("xai-", r"xai-[A-Za-z0-9]{30,}"),
    ("ntn_", r"ntn_[A-Za-z0-9]{10,}"),
    ("fw-", r"fw-[A-Za-z0-9]{30,}"),
    ("fw_", r"fw_[A-Za-z0-9]{30,}"),
    ("fpk_", r"fpk_[A-Za-z0-9]{30,}"),
];

/// Names of secrets in `NAME=value` assignments ([`Scope::Text`]).
const SECRET_ENV_NAMES: &str = "(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)";
/// Secret words in lower-case, dotted or hyphenated config keys
/// ([`Scope::Text`]).
const SECRET_CFG_NAMES: &str = r"(?:api[ _.\-]?key|token|secret|passwd|password|credential|auth)";
/// Query-string and form keys whose values are secrets.
const SENSITIVE_FORM_KEYS: &[&str] = &[
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "api_key",
    "apikey",
    "client_secret",
    "password",
    "auth",
    "jwt",
    "session",
    "secret",
    "key",
    "code",
    "signature",
    "x-amz-signature",
];
/// The replacement of a private key block.
pub const PRIVATE_KEY_MARKER: &str = "[REDACTED PRIVATE KEY]";

/// Whether redaction is on: `HERMES_REDACT_SECRETS`, read once.
pub fn enabled() -> bool {
    static ON: LazyLock<bool> = LazyLock::new(|| {
        std::env::var(ENABLE_VAR).map_or(true, |v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    });
    *ON
}

/// Whether redaction is on for `profile`: `HERMES_REDACT_SECRETS` in the
/// process environment when set, else the profile's
/// `security.redact_secrets` (config.yaml or its `.env`) as it was at the
/// profile's first redaction. Both are read once, so a command run later
/// (one that edits config.yaml, say) cannot turn redaction off mid-session.
pub fn enabled_for(profile: &Profile) -> bool {
    /// Profiles remembered; past it, the process setting answers.
    const MAX_PROFILES: usize = 256;
    static SET: LazyLock<bool> = LazyLock::new(|| std::env::var_os(ENABLE_VAR).is_some());
    static PROFILES: LazyLock<Mutex<HashMap<PathBuf, bool>>> = LazyLock::new(Mutex::default);
    if *SET {
        return enabled();
    }
    let mut known = PROFILES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&on) = known.get(profile.home()) {
        return on;
    }
    let on = profile.config().security.redact_secrets.value;
    if known.len() < MAX_PROFILES {
        known.insert(profile.home().to_path_buf(), on);
    }
    on
}

/// `text` redacted as `scope` when redaction is on for `profile`: the
/// patterns, then the literal values of the profile's own secrets
/// ([`redact_secret_values`]), whatever their names.
pub fn redact_for<'t>(profile: &Profile, text: &'t str, scope: Scope) -> Cow<'t, str> {
    if !enabled_for(profile) {
        return Cow::Borrowed(text);
    }
    match force_redact(text, scope) {
        Cow::Borrowed(text) => redact_secret_values(profile, text),
        Cow::Owned(clean) => Cow::Owned(redact_secret_values(profile, &clean).into_owned()),
    }
}

/// The shortest value of the profile's `.env` that [`redact_secret_values`]
/// replaces, in characters: shorter ones are words, numbers and switches
/// (`true`, `180`, `C.UTF-8`), which would blank ordinary output, and no
/// key or password worth the name is that short.
pub const MIN_SECRET_VALUE_CHARS: usize = 8;

/// Variables of a `.env` that name where things are, not secrets: never
/// replaced.
const NOT_SECRETS: &[&str] = &[
    "PATH", "HOME", "SHELL", "LANG", "LC_ALL", "TERM", "USER", "LOGNAME", "TZ", "PWD", "TMPDIR",
];

/// The marker a secret value of the profile's `.env` becomes.
pub fn secret_value_marker(name: &str) -> String {
    format!("«redacted:{name}»")
}

/// `text` with every literal value of the profile's `.env` (its secrets,
/// which every command of the profile has in its environment) replaced by
/// [`secret_value_marker`], whatever the variable is called: what `env`,
/// `printenv`, `set`, `declare -p`, `/proc/self/environ` or `echo $NAME`
/// print of it. Also replaced: the forms the shell prints a value in
/// (`'\''` in single quotes, `\"`, `\\`, `\$` and `` \` `` in double
/// quotes). Left alone: values under [`MIN_SECRET_VALUE_CHARS`], numbers,
/// paths (`/…`, `~/…`) and the variables of `NOT_SECRETS`.
pub fn redact_secret_values<'t>(profile: &Profile, text: &'t str) -> Cow<'t, str> {
    let mut forms: Vec<(String, String)> = Vec::new();
    for (name, value) in profile.secrets() {
        if value.chars().count() < MIN_SECRET_VALUE_CHARS
            || NOT_SECRETS.contains(&name.as_str())
            || value.starts_with(['/', '~'])
            || value
                .chars()
                .all(|c| c.is_ascii_digit() || ".,:-+".contains(c))
        {
            continue;
        }
        let single = value.replace('\'', "'\\''");
        let mut double = String::with_capacity(value.len());
        for c in value.chars() {
            if matches!(c, '"' | '\\' | '$' | '`') {
                double.push('\\');
            }
            double.push(c);
        }
        let marker = secret_value_marker(&name);
        for form in [value, single, double] {
            if !forms.iter().any(|(f, _)| *f == form) {
                forms.push((form, marker.clone()));
            }
        }
    }
    // Longest first: a value that holds another is replaced whole.
    forms.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
    let mut out = Cow::Borrowed(text);
    for (form, marker) in &forms {
        if out.contains(form.as_str()) {
            out = Cow::Owned(out.replace(form.as_str(), marker));
        }
    }
    out
}

/// The output of shell `command` redacted for `profile`: as
/// [`Scope::Text`] when the command dumps the environment (a segment of a
/// pipeline or list starts with `env`, `printenv`, `set`, `export` or
/// `declare`), where `NAME=value` lines are the point, else as
/// [`Scope::Code`], where they would be false alarms in source and config
/// files. Key-shaped secrets are masked either way.
pub fn redact_command_output<'t>(
    profile: &Profile,
    command: &str,
    output: &'t str,
) -> Cow<'t, str> {
    let scope = if dumps_environment(command) {
        Scope::Text
    } else {
        Scope::Code
    };
    redact_for(profile, output, scope)
}

/// Whether a segment of `command` (split at `|`, `;`, `&`) starts with a
/// command that prints the environment.
pub fn dumps_environment(command: &str) -> bool {
    const DUMPERS: &[&str] = &["env", "printenv", "set", "export", "declare"];
    command.split(['|', ';', '&']).any(|segment| {
        segment
            .split_whitespace()
            .next()
            .map(|word| word.trim_matches(['"', '\'']))
            .is_some_and(|word| DUMPERS.contains(&word))
    })
}

/// `text` with its secrets replaced ([`Scope::Text`]), unless redaction is
/// off. Borrowed when nothing was replaced.
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_as(text, Scope::Text)
}

/// `text` redacted as `scope`, unless redaction is off.
pub fn redact_as(text: &str, scope: Scope) -> Cow<'_, str> {
    if enabled() {
        force_redact(text, scope)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` redacted as `scope` whatever `HERMES_REDACT_SECRETS` says: for
/// boundaries that must never pass a secret.
pub fn force_redact(text: &str, scope: Scope) -> Cow<'_, str> {
    let passes = &*PASSES;
    if !passes.any.is_match(text) {
        return Cow::Borrowed(text);
    }
    passes.run(text, scope)
}

/// The compiled patterns.
struct Passes {
    /// Every pattern below, to decide in one pass whether any may match.
    any: RegexSet,
    prefix: Regex,
    prefix_each: Vec<(&'static str, Regex)>,
    env_assign: Regex,
    cfg_dotted: Regex,
    cfg_anchored: Regex,
    yaml: Regex,
    json_field: Regex,
    env_lookup: Regex,
    auth_header: Regex,
    secret_header: Regex,
    telegram: Regex,
    private_key: Regex,
    db_url: Regex,
    url_token: Regex,
    jwt: Regex,
    form_body: Regex,
    phone: Regex,
}

/// Compiles a pattern of this file; they are constants, tested below.
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("redaction pattern {pattern:?}: {e}"))
}

static PASSES: LazyLock<Passes> = LazyLock::new(|| {
    let prefix = format!(
        "(?:{})",
        PREFIXES
            .iter()
            .map(|(_, p)| *p)
            .collect::<Vec<_>>()
            .join("|")
    );
    let env_assign =
        format!(r#"([A-Z0-9_]{{0,50}}{SECRET_ENV_NAMES}[A-Z0-9_]{{0,50}})\s*=\s*(['"]?)(\S+)"#);
    let cfg_dotted = format!(
        r"(?i)((?:[A-Za-z0-9_\-]+\.)+[A-Za-z0-9_.\-]*{SECRET_CFG_NAMES}[A-Za-z0-9_.\-]*|[A-Za-z0-9_.\-]*{SECRET_CFG_NAMES}[A-Za-z0-9_.\-]*\.[A-Za-z0-9_.\-]+)="
    );
    let cfg_anchored = format!(
        r"(?im)(^[ \t]*(?:export[ \t]+)?[A-Za-z0-9_\-]*{SECRET_CFG_NAMES}[A-Za-z0-9_\-]*)="
    );
    let yaml = r"(?im)(^[ \t]*[A-Za-z0-9_.\-]*(?:api[ _.\-]?key|token|secret|passwd|password|credential)[A-Za-z0-9_.\-]*)(:[ \t]*)([^\s&]+)";
    let json_field = r#"(?i)("(?:api_?key|token|secret|password|access_token|refresh_token|auth_token|bearer|secret_value|raw_secret|secret_input|key_material)")\s*:\s*"([^"]+)""#;
    let auth_header = r#"(?i)((?:Proxy-)?Authorization:\s*)([A-Za-z][\w.+-]*\s+)?([^\s"']+)"#;
    let secret_header = r"(?i)((?:x-api-key|x-goog-api-key|api-key|apikey|x-api-token|x-auth-token|x-access-token)\s*:\s*)(\S+)";
    let telegram = r"(bot)?(\d{8,}):([-A-Za-z0-9_]{30,})";
    let private_key = r"-----BEGIN[A-Z ]*PRIVATE KEY-----[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----";
    let db_url =
        r"(?i)((?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^:\s]+:)([^@\s]+)(@)";
    let url_token = r"(?i)((?:https?|wss?|git|ssh|ftp|ftps|sftp)://)([^\s:@/]{8,})(@\S+)";
    let jwt = r"eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_=-]{4,}){0,2}";
    let form_body = r"^[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*(?:&[A-Za-z_][A-Za-z0-9_.-]*=[^&\s]*)+$";
    let phone = r"\+[1-9]\d{6,14}";
    let all = [
        prefix.as_str(),
        env_assign.as_str(),
        cfg_dotted.as_str(),
        cfg_anchored.as_str(),
        yaml,
        json_field,
        auth_header,
        secret_header,
        telegram,
        private_key,
        db_url,
        url_token,
        jwt,
        form_body,
        phone,
    ];
    Passes {
        any: RegexSet::new(all).unwrap_or_else(|e| panic!("redaction patterns: {e}")),
        prefix: re(&prefix),
        prefix_each: PREFIXES
            .iter()
            .map(|&(label, p)| (label, re(&format!("^(?:{p})"))))
            .collect(),
        env_assign: re(&env_assign),
        cfg_dotted: re(&cfg_dotted),
        cfg_anchored: re(&cfg_anchored),
        yaml: re(yaml),
        json_field: re(json_field),
        env_lookup: re(r"^(?:os\.(?:getenv|environ)|process\.env|\$ENV\{)"),
        auth_header: re(auth_header),
        secret_header: re(secret_header),
        telegram: re(telegram),
        private_key: re(private_key),
        db_url: re(db_url),
        url_token: re(url_token),
        jwt: re(jwt),
        form_body: re(form_body),
        phone: re(phone),
    }
});

/// A token shortened for logs: under 18 characters `***`, else its first
/// 6 and last 4 characters around `...`.
fn mask(token: &str) -> String {
    let n = token.chars().count();
    if n < 18 {
        return "***".to_owned();
    }
    let head: String = token.chars().take(6).collect();
    let tail: String = token.chars().skip(n - 4).collect();
    format!("{head}...{tail}")
}

/// Runs `pass` over `text`, keeping it borrowed when `pass` changed nothing.
fn step<'a>(text: Cow<'a, str>, pass: impl FnOnce(&str) -> Option<String>) -> Cow<'a, str> {
    match pass(&text) {
        Some(changed) => Cow::Owned(changed),
        None => text,
    }
}

/// `regex.replace_all` as an optional new string.
fn replace(text: &str, regex: &Regex, f: impl FnMut(&Captures) -> String) -> Option<String> {
    match regex.replace_all(text, f) {
        Cow::Borrowed(_) => None,
        Cow::Owned(s) => Some(s),
    }
}

/// The value after a config key's `=`: the shortest run of characters
/// other than white space and `&` that its opening quote (if any) closes,
/// followed by white space, `&` or the end. Returns the quote, the value
/// and the bytes used.
fn config_value(rest: &str) -> Option<(&str, &str, usize)> {
    let boundary = |s: &str| {
        s.chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || c == '&')
    };
    let run_len = rest
        .find(|c: char| c.is_whitespace() || c == '&')
        .unwrap_or(rest.len());
    if let Some(q) = rest.get(..1).filter(|q| *q == "\"" || *q == "'") {
        let body = &rest[1..run_len];
        let mut from = 1;
        while let Some(i) = body[from - 1..].find(q).map(|i| i + from - 1) {
            if i >= 1 && boundary(&body[i + 1..]) {
                return Some((q, &body[..i], i + 2));
            }
            from = i + 2;
            if from > body.len() {
                break;
            }
        }
    }
    (run_len > 0).then(|| ("", &rest[..run_len], run_len))
}

/// Characters that may not touch a key on either side.
fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

impl Passes {
    fn run<'a>(&self, text: &'a str, scope: Scope) -> Cow<'a, str> {
        let code = scope != Scope::Text;
        let mut text = Cow::Borrowed(text);
        text = step(text, |t| self.prefixes(t, scope));
        if !code {
            text = step(text, |t| {
                replace(t, &self.env_assign, |c| self.assignment(c))
            });
            if !text.contains("://") {
                text = step(text, |t| self.config_keys(t, &self.cfg_dotted));
                text = step(text, |t| self.config_keys(t, &self.cfg_anchored));
            }
            text = step(text, |t| replace(t, &self.json_field, |c| self.json(c)));
            if !text.contains("://") {
                text = step(text, |t| {
                    replace(t, &self.yaml, |c| {
                        if c[3].starts_with(['"', '\'']) || self.env_lookup.is_match(&c[3]) {
                            c[0].to_owned()
                        } else {
                            format!("{}{}{}", &c[1], &c[2], mask(&c[3]))
                        }
                    })
                });
            }
        }
        if text.contains("uthorization") || text.contains("UTHORIZATION") {
            text = step(text, |t| {
                replace(t, &self.auth_header, |c| {
                    format!(
                        "{}{}{}",
                        &c[1],
                        c.get(2).map_or("", |m| m.as_str()),
                        mask(&c[3])
                    )
                })
            });
        }
        text = step(text, |t| {
            replace(t, &self.secret_header, |c| {
                format!("{}{}", &c[1], mask(&c[2]))
            })
        });
        text = step(text, |t| {
            replace(t, &self.telegram, |c| {
                format!("{}{}:***", c.get(1).map_or("", |m| m.as_str()), &c[2])
            })
        });
        text = step(text, |t| {
            replace(t, &self.private_key, |_| PRIVATE_KEY_MARKER.to_owned())
        });
        if text.contains("://") {
            text = step(text, |t| {
                replace(t, &self.db_url, |c| {
                    let pw = &c[2];
                    if code && pw.starts_with('{') && pw.ends_with('}') {
                        c[0].to_owned()
                    } else {
                        format!("{}***{}", &c[1], &c[3])
                    }
                })
            });
            text = step(text, |t| {
                replace(t, &self.url_token, |c| {
                    format!("{}{}{}", &c[1], mask(&c[2]), &c[3])
                })
            });
        }
        text = step(text, |t| replace(t, &self.jwt, |c| mask(&c[0])));
        text = step(text, |t| self.form(t));
        text = step(text, |t| self.phones(t));
        text
    }

    /// Vendor keys, each standing alone (no key character on either side).
    fn prefixes(&self, text: &str, scope: Scope) -> Option<String> {
        let mut out = String::new();
        let mut copied = 0;
        let mut pos = 0;
        while let Some(m) = self.prefix.find_at(text, pos) {
            let start = m.start();
            let free_before = !text[..start].chars().next_back().is_some_and(is_key_char);
            let free_after = |end: usize| !text[end..].chars().next().is_some_and(is_key_char);
            let end = free_before
                .then(|| {
                    Some(m.end()).filter(|&e| free_after(e)).or_else(|| {
                        self.prefix_each
                            .iter()
                            .filter_map(|(_, r)| r.find(&text[start..]))
                            .map(|found| start + found.end())
                            .find(|&e| free_after(e))
                    })
                })
                .flatten();
            let Some(end) = end else {
                pos = start + text[start..].chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let token = &text[start..end];
            out.push_str(&text[copied..start]);
            if scope == Scope::FileRead {
                match PREFIXES.iter().find(|(label, _)| token.starts_with(label)) {
                    Some((label, _)) => {
                        out.push_str("«redacted:");
                        out.push_str(label);
                        out.push_str("…»");
                    }
                    None => out.push_str("«redacted-secret»"),
                }
            } else {
                out.push_str(&mask(token));
            }
            copied = end;
            pos = end;
        }
        (copied > 0).then(|| {
            out.push_str(&text[copied..]);
            out
        })
    }

    /// `NAME=value` with a secret-looking upper-case name: the value masked
    /// (a quoted value keeps its quotes).
    fn assignment(&self, c: &Captures) -> String {
        let (name, quote, run) = (&c[1], &c[2], &c[3]);
        // The value ends at the last matching quote of the run; without one,
        // the opening quote is part of the value.
        let (quote, value, rest) = match run.rfind(quote).filter(|&i| !quote.is_empty() && i > 0) {
            Some(i) => (quote, &run[..i], &run[i + 1..]),
            None => ("", &c[0][c[0].len() - run.len() - quote.len()..], ""),
        };
        if self.env_lookup.is_match(value) {
            return c[0].to_owned();
        }
        format!("{name}={quote}{}{quote}{rest}", mask(value))
    }

    /// `key=value` of config files whose key (matched by `keys`, up to and
    /// including `=`) names a secret: the value, up to white space or `&`
    /// (a quoted value keeps its quotes), masked.
    fn config_keys(&self, text: &str, keys: &Regex) -> Option<String> {
        let mut out = String::new();
        let mut copied = 0;
        for m in keys.find_iter(text) {
            if m.start() < copied {
                continue;
            }
            let rest = &text[m.end()..];
            let Some((quote, value, used)) = config_value(rest) else {
                continue;
            };
            if self.env_lookup.is_match(value) {
                continue;
            }
            out.push_str(&text[copied..m.end()]);
            out.push_str(quote);
            out.push_str(&mask(value));
            out.push_str(quote);
            copied = m.end() + used;
        }
        (copied > 0).then(|| {
            out.push_str(&text[copied..]);
            out
        })
    }

    /// `"secretName": "value"` with the value masked.
    fn json(&self, c: &Captures) -> String {
        if self.env_lookup.is_match(&c[2]) {
            return c[0].to_owned();
        }
        format!("{}: \"{}\"", &c[1], mask(&c[2]))
    }

    /// A text that is a form body as a whole (`k=v&k=v`, one line), its
    /// sensitive values replaced by `***`.
    fn form(&self, text: &str) -> Option<String> {
        if text.contains('\n') || !text.contains('&') {
            return None;
        }
        let body = text.trim();
        if !self.form_body.is_match(body) {
            return None;
        }
        let pairs: Vec<String> = body
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if SENSITIVE_FORM_KEYS.contains(&key.to_lowercase().as_str()) => {
                    format!("{key}=***")
                }
                _ => pair.to_owned(),
            })
            .collect();
        let joined = pairs.join("&");
        (joined != text).then_some(joined)
    }

    /// Phone numbers (`+` and 7 to 15 digits, not followed by a letter or
    /// digit): their middle replaced by `****`.
    fn phones(&self, text: &str) -> Option<String> {
        let mut out = String::new();
        let mut copied = 0;
        for m in self.phone.find_iter(text) {
            let followed = text[m.end()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric());
            if followed {
                continue;
            }
            let p = m.as_str();
            let masked = if p.len() <= 8 {
                format!("{}****{}", &p[..2], &p[p.len() - 2..])
            } else {
                format!("{}****{}", &p[..4], &p[p.len() - 4..])
            };
            out.push_str(&text[copied..m.start()]);
            out.push_str(&masked);
            copied = m.end();
        }
        (copied > 0).then(|| {
            out.push_str(&text[copied..]);
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> String {
        force_redact(text, Scope::FileRead).into_owned()
    }

    #[test]
    fn nothing_to_redact_is_borrowed() {
        let text = "fn main() {\n    println!(\"hello\");\n}\n";
        assert!(matches!(force_redact(text, Scope::Text), Cow::Borrowed(_)));
        assert!(matches!(
            force_redact(text, Scope::FileRead),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn vendor_keys_become_markers_in_file_reads() {
        assert_eq!(
            file("key = sk-proj-abcdefghijklmnop1234"),
            "key = «redacted:sk-…»"
        );
        assert_eq!(
            file("gh: ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"),
            "gh: «redacted:ghp_…»"
        );
        assert_eq!(file("AKIAABCDEFGHIJKLMNOP"), "«redacted:AKIA…»");
        assert_eq!(file("SG.abcdefghijklmnop.qrs"), "«redacted:SG…».qrs");
        // Glued to other key characters: not a key.
        assert_eq!(
            file("not-sk-abcdefghijklmnop and sk-abcdefghijklmnop_x"),
            "not-sk-abcdefghijklmnop and «redacted:sk-…»"
        );
        assert_eq!(file("ghp_ABCDEFGHIJKL-x"), "ghp_ABCDEFGHIJKL-x");
        // In logs, a long key keeps its ends.
        assert_eq!(
            force_redact("sk-proj-abcdefghijklmnop1234", Scope::Text),
            "sk-pro...1234"
        );
    }

    #[test]
    fn headers_urls_tokens_and_keys() {
        assert_eq!(
            file("Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456"),
            "Authorization: Bearer abcdef...3456"
        );
        assert_eq!(
            file("Authorization: Bearer short"),
            "Authorization: Bearer ***"
        );
        assert_eq!(
            file("x-api-key: abcdefghijklmnopqrstuvwxyz"),
            "x-api-key: abcdef...wxyz"
        );
        assert_eq!(
            file("postgres://user:secretpw@localhost:5432/db"),
            "postgres://user:***@localhost:5432/db"
        );
        assert_eq!(
            file("postgres://user:{password}@localhost/db"),
            "postgres://user:{password}@localhost/db"
        );
        assert_eq!(
            file("https://tokentokentoken1@github.com/x"),
            "https://***@github.com/x"
        );
        assert_eq!(
            file("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdEFGHijkl"),
            "jwt eyJhbG...ijkl"
        );
        assert_eq!(
            file("bot123456789:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
            "bot123456789:***"
        );
        assert_eq!(file("call +14155552671 now"), "call +141****2671 now");
        assert_eq!(file("id +14155552671x"), "id +14155552671x");
        assert_eq!(
            file("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nb"),
            "a\n[REDACTED PRIVATE KEY]\nb"
        );
        assert_eq!(file("a=1&token=abc&b=2"), "a=1&token=***&b=2");
    }

    #[test]
    fn assignments_and_json_only_outside_code() {
        assert_eq!(
            force_redact("API_TOKEN = \"abcdefghijklmnopqrstuv\" x", Scope::Text),
            "API_TOKEN=\"***\" x"
        );
        assert_eq!(
            force_redact(
                "spring.datasource.password=hunter2\npassword: s3cr3t\n",
                Scope::Text
            ),
            "spring.datasource.password=***\npassword: ***\n"
        );
        assert_eq!(
            force_redact("export api_key='abcdefghijklmnopqrstuvwx'", Scope::Text),
            "export api_key='abcdef...uvwx'"
        );
        assert_eq!(
            force_redact("x=1 app.api.key=\"abc\"def y", Scope::Text),
            "x=1 app.api.key=*** y"
        );
        let prose = "note: secret meeting\nerror: token expired\n";
        assert_eq!(force_redact(prose, Scope::Text), prose);
        let env = "DB_PASSWORD=hunter2hunter2\n";
        assert_eq!(file(env), env);
        assert_eq!(force_redact(env, Scope::Text), "DB_PASSWORD=***\n");
        assert_eq!(
            force_redact("TOKEN=os.getenv('X')", Scope::Text),
            "TOKEN=os.getenv('X')"
        );
        assert_eq!(
            force_redact(r#""apiKey": "abcdefghijklmnopqrstuvwx""#, Scope::Text),
            r#""apiKey": "abcdef...uvwx""#
        );
        let json = r#""apiKey": "abcdefghijklmnopqrstuvwx""#;
        assert_eq!(file(json), json);
    }
}
