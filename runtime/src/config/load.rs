//! From the YAML tree to typed settings: every key read with its path, every
//! problem a diagnostic that leaves that one value at its default.
//!
//! Which keys a section has is its [`Table`] (declared with the struct in
//! `mod.rs`): [`read_table`] reads any section by its table. Here are the
//! tables' types, the [`Reader`] their readers use, the readers of the
//! keys whose values need more than one of its methods, and the MCP
//! servers' entries; `mod.rs` reads the file with them, then applies the
//! `.env` overrides. What they read into is `values.rs`'.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::known::REFERENCE_MCP_SERVER;
use super::values::{
    ApprovalMode, CodeExecutionMode, CronMode, Diagnostic, McpElicitation, McpOAuth, McpSampling,
    McpServer, McpTransport, SandboxFallback, SandboxMode, SandboxNetwork, Setting, Severity,
    Source, SslVerify, ToolSearchMode, ToolsetMention, MAX_FILE_BYTES,
};
use super::yaml::{parse_bool, parse_float, parse_int, Kind, Node, Pos};

/// A `config show` row: the key's path, its value as shown, its source.
pub(super) type Entry = (String, String, Source);

/// One key of a section's [`Table`]: everything the code does with it.
pub(super) struct Key<S: 'static> {
    /// Its name in the section.
    pub(super) name: &'static str,
    /// Reads its value (`node`, at the key path `key`) into the section; a
    /// problem is a diagnostic and leaves the value as it was.
    pub(super) read: fn(&mut Reader, &mut S, &str, &Node),
    /// Adds its rows for `config show`, its key path being `key`.
    pub(super) show: fn(&S, &str, &mut Vec<Entry>),
    /// Its key paths (from `path`) with a value that reads, for the tables'
    /// test; `checked`: whether its section warns about a misspelt name.
    #[cfg(test)]
    pub(super) declared: fn(&str, bool, &mut Vec<Declared>),
}

/// A key path the tables declare, with a value that reads (YAML).
#[cfg(test)]
pub(super) struct Declared {
    pub(super) path: String,
    pub(super) example: &'static str,
    /// Whether a misspelling of its last name is warned about.
    pub(super) checked: bool,
}

/// What a key of the file its section's rows do not name is.
pub(super) enum Others {
    /// A warning with a did-you-mean, unless one of these keys of the
    /// reference (`known.rs`): those load quietly (or with a warning when
    /// their value asks for what is not honoured, `known::unhonoured`). A
    /// key without a value is skipped first.
    Unknown(&'static [&'static str]),
    /// A warning with a did-you-mean, even without a value (`tools`).
    UnknownEvenWithoutValue,
    /// Accepted quietly: the rest of the section is the agent loop's
    /// (`agent`).
    Ignored,
}

/// The keys of one section, in `config show` order: what reads it
/// ([`read_table`]), shows it ([`Table::entries`]) and checks its key
/// names (the rows' names are the known ones, `others` says what the rest
/// are).
pub(super) struct Table<S: 'static> {
    pub(super) rows: &'static [Key<S>],
    pub(super) others: Others,
    /// Run once the section's keys are read, for what holds between them.
    pub(super) check: Option<fn(&mut Reader, &mut S, &str, &Node)>,
}

impl<S> Table<S> {
    /// The `config show` rows of section `s`, whose key path is `key`.
    pub(super) fn entries(&self, s: &S, key: &str, out: &mut Vec<Entry>) {
        for row in self.rows {
            (row.show)(s, &join(key, row.name), out);
        }
    }

    /// Every key path the table declares from `path`, with its example.
    #[cfg(test)]
    pub(super) fn declared(&self, path: &str, out: &mut Vec<Declared>) {
        let checked = !matches!(self.others, Others::Ignored);
        for row in self.rows {
            (row.declared)(&join(path, row.name), checked, out);
        }
    }
}

/// A section declared with `section!`: its defaults and its table.
pub(super) trait Section: Sized + 'static {
    const TABLE: Table<Self>;
    fn defaults() -> Self;
}

/// Collects diagnostics while the tree is read.
pub(super) struct Reader {
    pub(super) diags: Vec<Diagnostic>,
    dropped: usize,
    dropped_error: bool,
    /// The profile's home, which relative paths in the file are relative to.
    home: PathBuf,
    /// Every toolset name read so far (`ProfileConfig::toolset_mentions`).
    pub(super) mentions: Vec<ToolsetMention>,
}

/// Diagnostics kept per file; past it one more says how many were left out.
pub(super) const MAX_DIAGNOSTICS: usize = 100;
/// Characters of a key path or a message shown; a longer one is cut.
const MAX_SHOWN_CHARS: usize = 200;

fn shown(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

impl Reader {
    pub(super) fn push(
        &mut self,
        severity: Severity,
        key: &str,
        pos: Option<Pos>,
        message: String,
    ) {
        if self.diags.len() < MAX_DIAGNOSTICS {
            self.diags.push(Diagnostic {
                severity,
                key: shown(key),
                pos,
                message: shown(&message),
            });
        } else {
            self.dropped += 1;
            // An error among the dropped still fails `check`.
            self.dropped_error |= severity == Severity::Error;
        }
    }

    pub(super) fn error(&mut self, key: &str, pos: Pos, message: impl Into<String>) {
        self.push(Severity::Error, key, Some(pos), message.into());
    }

    fn warn(&mut self, key: &str, pos: Pos, message: impl Into<String>) {
        self.push(Severity::Warning, key, Some(pos), message.into());
    }

    pub(super) fn new(home: &Path) -> Self {
        Reader {
            diags: Vec::new(),
            dropped: 0,
            dropped_error: false,
            home: home.to_path_buf(),
            mentions: Vec::new(),
        }
    }

    /// Reads on after [`Reader::finish`]: problems found once the file is
    /// read (`diags` and `dropped` what `finish` gave), within the same
    /// bound; relative paths are relative to `home`.
    pub(super) fn resume(
        mut diags: Vec<Diagnostic>,
        dropped: (usize, bool),
        home: PathBuf,
    ) -> Self {
        let (dropped, dropped_error) = dropped;
        if dropped > 0 {
            // The "N more problem(s)" line, written again by `finish`.
            diags.pop();
        }
        Reader {
            diags,
            dropped,
            dropped_error,
            home,
            mentions: Vec::new(),
        }
    }

    /// The diagnostics, with one more line for those past the bound, and
    /// how many were past it (and whether an error was among them).
    pub(super) fn finish(mut self) -> (Vec<Diagnostic>, (usize, bool)) {
        if self.dropped > 0 {
            self.diags.push(Diagnostic {
                severity: if self.dropped_error {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                key: String::new(),
                pos: None,
                message: format!("{} more problem(s) not shown", self.dropped),
            });
        }
        (self.diags, (self.dropped, self.dropped_error))
    }

    fn expected(&mut self, key: &str, node: &Node, what: &str) {
        self.error(
            key,
            node.pos,
            format!("expected {what}, found {}", node.describe()),
        );
    }

    /// A tag other than YAML's core ones (`!include`, `!!python/...`) is
    /// refused, as the reference's safe loader refuses it.
    fn untagged<'n>(&mut self, key: &str, node: &'n Node) -> Option<&'n Node> {
        if let Kind::Scalar { tag: Some(tag), .. } = &node.kind {
            self.error(key, node.pos, format!("the tag `{tag}` is not supported"));
            return None;
        }
        Some(node)
    }

    /// The entries of a mapping, merge keys (`<<`) applied, a repeated key
    /// warned about (the later wins, as in the reference).
    fn mapping<'n>(&mut self, key: &str, node: &'n Node) -> Option<Vec<(String, &'n Node, Pos)>> {
        let Kind::Map(pairs) = &node.kind else {
            self.expected(key, node, "a mapping");
            return None;
        };
        let mut out: Vec<(String, &'n Node, Pos)> = Vec::with_capacity(pairs.len());
        // Where each name is in `out` (a flood of keys stays linear).
        let mut index: HashMap<&'n str, usize> = HashMap::with_capacity(pairs.len());
        let mut merged: Vec<(String, &'n Node, Pos)> = Vec::new();
        for (k, v) in pairs {
            let Some(name) = k.scalar() else {
                self.error(
                    key,
                    k.pos,
                    "a key must be a plain word, not a list or mapping",
                );
                continue;
            };
            if name == "<<" && matches!(&k.kind, Kind::Scalar { plain: true, .. }) {
                let sources: Vec<&Node> = match &v.kind {
                    Kind::Seq(items) => items.iter().collect(),
                    _ => vec![v],
                };
                for source in sources {
                    if let Some(entries) = self.mapping(key, source) {
                        merged.extend(entries);
                    }
                }
                continue;
            }
            if let Some(&first) = index.get(name) {
                let line = out[first].2.line;
                self.warn(
                    &join(key, name),
                    k.pos,
                    format!("repeated key (first at line {line}); this later value is used"),
                );
                // The later value, at the later position.
                out[first] = (name.to_string(), v, k.pos);
                continue;
            }
            index.insert(name, out.len());
            out.push((name.to_string(), v, k.pos));
        }
        // Merged entries fill in what the mapping does not set itself.
        // (The first merged mapping that sets a name wins, as in YAML 1.1.)
        let mut own: std::collections::HashSet<String> =
            out.iter().map(|(n, _, _)| n.clone()).collect();
        for (name, v, pos) in merged {
            if own.insert(name.clone()) {
                out.push((name, v, pos));
            }
        }
        Some(out)
    }

    /// A key neither read nor in `reference`: a warning with a
    /// did-you-mean. A reference key whose `value` asks for what is not
    /// honoured here ([`super::known::unhonoured`]) is a warning too.
    fn unknown_value(
        &mut self,
        key: &str,
        name: &str,
        value: &Node,
        pos: Pos,
        read: &[&str],
        reference: &[&str],
    ) {
        if reference.contains(&name) {
            if let Some(why) = super::known::unhonoured(key, name, value.scalar()) {
                self.warn(&join(key, name), pos, why);
            }
            return;
        }
        self.unknown(key, name, pos, read, reference);
    }

    fn unknown(&mut self, key: &str, name: &str, pos: Pos, read: &[&str], reference: &[&str]) {
        if reference.contains(&name) {
            return;
        }
        if self.diags.len() >= MAX_DIAGNOSTICS {
            // Not shown: no need to look for near names.
            self.push(Severity::Warning, key, Some(pos), String::new());
            return;
        }
        let path = join(key, name);
        let hint = did_you_mean(name, read.iter().chain(reference).copied());
        self.warn(&path, pos, format!("unknown key, ignored{hint}"));
    }

    pub(super) fn bool(&mut self, key: &str, node: &Node) -> Option<bool> {
        let node = self.untagged(key, node)?;
        match &node.kind {
            Kind::Scalar {
                text, plain: true, ..
            } => {
                if let Some(b) = parse_bool(text) {
                    return Some(b);
                }
            }
            // The reference reads a quoted "true" through `str()` checks too.
            Kind::Scalar {
                text, plain: false, ..
            } => {
                if let Some(b) = parse_bool(text.trim()) {
                    return Some(b);
                }
            }
            _ => {}
        }
        self.expected(key, node, "true or false");
        None
    }

    pub(super) fn int(&mut self, key: &str, node: &Node, min: i64, max: i64) -> Option<i64> {
        self.number(key, node, parse_int, "a whole number", min..=max)
    }

    pub(super) fn float(&mut self, key: &str, node: &Node, min: f64, max: f64) -> Option<f64> {
        self.number(key, node, parse_float, "a number", min..=max)
    }

    /// A scalar `parse` reads, within `range`.
    fn number<T: PartialOrd + std::fmt::Display>(
        &mut self,
        key: &str,
        node: &Node,
        parse: fn(&str) -> Option<T>,
        what: &str,
        range: std::ops::RangeInclusive<T>,
    ) -> Option<T> {
        let node = self.untagged(key, node)?;
        let value = match &node.kind {
            Kind::Scalar { text, .. } => parse(text.trim()),
            _ => None,
        };
        let Some(value) = value else {
            self.expected(key, node, what);
            return None;
        };
        if !range.contains(&value) {
            let (min, max) = (range.start(), range.end());
            self.error(
                key,
                node.pos,
                format!("{value} is out of range ({min} to {max})"),
            );
            return None;
        }
        Some(value)
    }

    /// Any scalar, as its text (the reference `str()`s names such as `12306`).
    pub(super) fn string(&mut self, key: &str, node: &Node) -> Option<String> {
        let node = self.untagged(key, node)?;
        match &node.kind {
            Kind::Scalar { text, .. } if !node.is_null() => Some(text.clone()),
            _ => {
                self.expected(key, node, "a string");
                None
            }
        }
    }

    /// A list of strings; a bad item is reported and left out.
    pub(super) fn strings(&mut self, key: &str, node: &Node) -> Option<Vec<String>> {
        self.strings_at(key, node)
            .map(|items| items.into_iter().map(|(_, text, _)| text).collect())
    }

    /// [`Reader::strings`], each item with its key path and position.
    fn strings_at(&mut self, key: &str, node: &Node) -> Option<Vec<(String, String, Pos)>> {
        let Kind::Seq(items) = &node.kind else {
            self.expected(key, node, "a list of strings");
            return None;
        };
        Some(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let path = format!("{key}[{i}]");
                    let text = self.string(&path, item)?;
                    Some((path, text, item.pos))
                })
                .collect(),
        )
    }

    /// A list of toolset names: [`Reader::strings`], each name also kept
    /// (replacing an earlier list of the same key) for
    /// `config.toolset_mentions` and
    /// [`ProfileConfig::check_toolset_names`](super::ProfileConfig::check_toolset_names).
    pub(super) fn toolset_names(&mut self, key: &str, node: &Node) -> Option<Vec<String>> {
        let items = self.strings_at(key, node)?;
        let prefix = format!("{key}[");
        self.mentions.retain(|m| !m.key.starts_with(&prefix));
        let mut names = Vec::with_capacity(items.len());
        for (key, name, pos) in items {
            self.mentions.push(ToolsetMention {
                key,
                name: name.clone(),
                pos,
            });
            names.push(name);
        }
        Some(names)
    }

    /// A mapping of strings to strings (`env`, `headers`).
    fn string_map(&mut self, key: &str, node: &Node) -> Option<BTreeMap<String, String>> {
        let entries = self.mapping(key, node)?;
        Some(
            entries
                .into_iter()
                .filter_map(|(k, v, _)| {
                    let value = self.string(&join(key, &k), v)?;
                    Some((k, value))
                })
                .collect(),
        )
    }
}

/// `; did you mean a, b?` with the names of `candidates` nearest `name`,
/// or nothing. Names are short: a long one is no misspelling worth
/// comparing.
pub(super) fn did_you_mean<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> String {
    let near = if name.len() <= 64 {
        hermes_tool_facts::suggestions(name, candidates, 3)
    } else {
        Vec::new()
    };
    if near.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", near.join(", "))
    }
}

pub(super) fn join(key: &str, name: &str) -> String {
    if key.is_empty() {
        name.to_string()
    } else {
        format!("{key}.{name}")
    }
}

/// Sets `slot` from `value` when it is `Some`, recording the position.
pub(super) fn set<T>(slot: &mut Setting<T>, value: Option<T>, pos: Pos) {
    if let Some(value) = value {
        *slot = Setting {
            value,
            source: Source::File(pos),
        };
    }
}

pub(super) fn usize_of(v: i64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// The file's text; `None` when there is no file. Refuses anything but a
/// regular file, and files over [`MAX_FILE_BYTES`].
pub(super) fn read_text(path: &std::path::Path) -> Result<Option<String>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read the file: {e}")),
    };
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    let too_big = || {
        format!(
            "the file is larger than {} KiB, far more than a configuration needs; not read",
            MAX_FILE_BYTES >> 10
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the file: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map(Some).map_err(|e| {
        format!(
            "the file is not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Reads the mapping `node` (at key path `key`) into `s` by `table`: each
/// key its row names is read by the row, a key without a value (`timeout:`)
/// keeps its default, and the others are as `table.others` says; then
/// `table.check` looks at the keys together.
pub(super) fn read_table<S>(r: &mut Reader, s: &mut S, table: &Table<S>, key: &str, node: &Node) {
    let Some(entries) = r.mapping(key, node) else {
        return;
    };
    let names = || -> Vec<&str> { table.rows.iter().map(|row| row.name).collect() };
    for (name, v, pos) in entries {
        let row = table.rows.iter().find(|row| row.name == name);
        match (row, &table.others) {
            (None, Others::UnknownEvenWithoutValue) => r.unknown(key, &name, pos, &names(), &[]),
            // An empty section or key (`terminal:`) is the defaults, as in
            // the reference.
            _ if v.is_null() => {}
            (Some(row), _) => (row.read)(r, s, &join(key, &name), v),
            (None, Others::Unknown(reference)) => {
                r.unknown_value(key, &name, v, pos, &names(), reference);
            }
            (None, _) => {}
        }
    }
    if let Some(check) = table.check {
        check(r, s, key, node);
    }
}

/// `platform_toolsets`: a list of toolset names per platform.
pub(super) fn platform_toolsets(
    r: &mut Reader,
    platforms: &mut BTreeMap<String, Setting<Vec<String>>>,
    key: &str,
    node: &Node,
) {
    let Some(entries) = r.mapping(key, node) else {
        return;
    };
    for (platform, list, _) in entries {
        let key = join(key, &platform);
        if list.is_null() {
            continue;
        }
        if let Some(value) = r.toolset_names(&key, list) {
            platforms.insert(
                platform,
                Setting {
                    value,
                    source: Source::File(list.pos),
                },
            );
        }
    }
}

/// `tools.tool_search.enabled`.
pub(super) fn tool_search_mode(r: &mut Reader, key: &str, v: &Node) -> Option<ToolSearchMode> {
    let mode = match &v.kind {
        Kind::Scalar {
            text, tag: None, ..
        } => {
            match text.trim().to_ascii_lowercase().as_str() {
                "auto" => Some(ToolSearchMode::Auto),
                // PyYAML reads a bare `on` / `off` as a boolean.
                "on" | "true" | "yes" => Some(ToolSearchMode::On),
                "off" | "false" | "no" => Some(ToolSearchMode::Off),
                _ => None,
            }
        }
        _ => None,
    };
    if mode.is_none() {
        r.expected(key, v, "auto, on or off");
    }
    mode
}

/// `terminal.cwd`: `.` (or nothing) is the session's directory, `~/` the
/// user's home.
pub(super) fn cwd(r: &mut Reader, key: &str, v: &Node) -> Option<Option<PathBuf>> {
    let text = r.string(key, v)?;
    let text = text.trim();
    Some(if text.is_empty() || text == "." {
        None
    } else if let Some(rest) = text.strip_prefix("~/") {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Some(home.map_or_else(|| PathBuf::from(text), |h| h.join(rest)))
    } else {
        Some(PathBuf::from(text))
    })
}

/// `terminal.env_passthrough`: environment variable names; a bad one is
/// reported and left out.
pub(super) fn env_names(r: &mut Reader, key: &str, v: &Node) -> Option<Vec<String>> {
    r.strings(key, v).map(|names| {
        names
            .into_iter()
            .enumerate()
            .filter(|(i, n)| {
                let ok = !n.is_empty() && !n.contains('=') && !n.contains('\0');
                if !ok {
                    r.error(
                        &format!("{key}[{i}]"),
                        v.pos,
                        format!("`{n}` is not an environment variable name"),
                    );
                }
                ok
            })
            .map(|(_, n)| n)
            .collect()
    })
}

/// `terminal.sandbox`.
pub(super) fn sandbox_mode(r: &mut Reader, key: &str, v: &Node) -> Option<SandboxMode> {
    let text = v.scalar().map(|t| t.trim().to_ascii_lowercase());
    let mode = match text.as_deref() {
        Some("read-only") => Some(SandboxMode::ReadOnly),
        Some("workspace-write") => Some(SandboxMode::WorkspaceWrite),
        // codex's name for the same choice.
        Some("full" | "danger-full-access") => Some(SandboxMode::Full),
        _ => None,
    };
    if mode.is_none() {
        r.expected(key, v, "read-only, workspace-write or full");
    }
    mode
}

/// `terminal.sandbox_network`.
pub(super) fn sandbox_network(r: &mut Reader, key: &str, v: &Node) -> Option<SandboxNetwork> {
    let text = v.scalar().map(|t| t.trim().to_ascii_lowercase());
    let plain = matches!(&v.kind, Kind::Scalar { plain: true, .. });
    let network = match text.as_deref() {
        Some("off") => Some(SandboxNetwork::Off),
        Some("loopback") => Some(SandboxNetwork::Loopback),
        Some("on") => Some(SandboxNetwork::On),
        // YAML 1.1 reads a bare `off` / `on` as booleans.
        Some(t) if plain && parse_bool(t) == Some(false) => Some(SandboxNetwork::Off),
        Some(t) if plain && parse_bool(t) == Some(true) => Some(SandboxNetwork::On),
        _ => None,
    };
    if network.is_none() {
        r.expected(key, v, "off, loopback or on");
    }
    network
}

/// `terminal.sandbox_writable_roots`: absolute paths or `~/...`; another is
/// reported and left out.
pub(super) fn writable_roots(r: &mut Reader, key: &str, v: &Node) -> Option<Vec<PathBuf>> {
    r.strings(key, v).map(|roots| {
        roots
            .into_iter()
            .enumerate()
            .filter_map(|(i, text)| {
                let text = text.trim();
                let path = match text.strip_prefix("~/") {
                    Some(rest) => std::env::var_os("HOME")
                        .map_or_else(|| PathBuf::from(text), |h| PathBuf::from(h).join(rest)),
                    None => PathBuf::from(text),
                };
                if path.is_absolute() {
                    Some(path)
                } else {
                    r.error(
                        &format!("{key}[{i}]"),
                        v.pos,
                        format!("`{text}` is not an absolute path (or ~/...)"),
                    );
                    None
                }
            })
            .collect()
    })
}

/// A key whose value is one of `values`, by the name `name` gives each
/// (case and surrounding blanks aside); another is reported with the list
/// ("a, b or c").
fn one_of<T: Copy>(
    r: &mut Reader,
    key: &str,
    v: &Node,
    values: &[T],
    name: fn(T) -> &'static str,
) -> Option<T> {
    let text = v.scalar().map(str::trim);
    let found = values
        .iter()
        .copied()
        .find(|&value| text.is_some_and(|t| t.eq_ignore_ascii_case(name(value))));
    if found.is_none() {
        let names: Vec<&str> = values.iter().map(|&value| name(value)).collect();
        let expected = match names.split_last() {
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "nothing".to_string(),
        };
        match text {
            // A word, not a secret: named, so the typo shows.
            Some(t) if !v.is_null() && t.chars().count() <= 40 => r.error(
                key,
                v.pos,
                format!("expected {expected}, found `{}`", t.escape_debug()),
            ),
            _ => r.expected(key, v, &expected),
        }
    }
    found
}

/// `code_execution.mode`.
pub(super) fn code_execution_mode(
    r: &mut Reader,
    key: &str,
    v: &Node,
) -> Option<CodeExecutionMode> {
    one_of(
        r,
        key,
        v,
        &[CodeExecutionMode::Project, CodeExecutionMode::Strict],
        CodeExecutionMode::as_str,
    )
}

/// `terminal.sandbox_fallback`.
pub(super) fn sandbox_fallback(r: &mut Reader, key: &str, v: &Node) -> Option<SandboxFallback> {
    one_of(
        r,
        key,
        v,
        &[SandboxFallback::Refuse, SandboxFallback::Unsandboxed],
        SandboxFallback::as_str,
    )
}

/// `security.website_blocklist.shared_files`: relative to the profile's home.
pub(super) fn shared_files(r: &mut Reader, key: &str, v: &Node) -> Option<Vec<PathBuf>> {
    r.strings(key, v)
        .map(|files| files.into_iter().map(|f| r.home.join(f.trim())).collect())
}

/// `approvals.mode`.
pub(super) fn approval_mode(r: &mut Reader, key: &str, v: &Node) -> Option<ApprovalMode> {
    let text = v.scalar().map(|t| t.trim().to_ascii_lowercase());
    let plain = matches!(&v.kind, Kind::Scalar { plain: true, .. });
    let mode = match text.as_deref() {
        Some("manual") => Some(ApprovalMode::Manual),
        Some("smart") => Some(ApprovalMode::Smart),
        Some("off") => Some(ApprovalMode::Off),
        // YAML 1.1 booleans, as the reference reads them.
        Some(t) if plain && parse_bool(t) == Some(false) => Some(ApprovalMode::Off),
        Some(t) if plain && parse_bool(t) == Some(true) => Some(ApprovalMode::Manual),
        _ => None,
    };
    if mode.is_none() {
        r.expected(key, v, "manual, smart or off");
    }
    mode
}

/// `approvals.cron_mode`.
pub(super) fn cron_mode(r: &mut Reader, key: &str, v: &Node) -> Option<CronMode> {
    let text = v.scalar().map(|t| t.trim().to_ascii_lowercase());
    let mode = match text.as_deref() {
        Some("deny") => Some(CronMode::Deny),
        Some("approve" | "allow") => Some(CronMode::Approve),
        Some(t) if parse_bool(t).is_some() => Some(if parse_bool(t) == Some(true) {
            CronMode::Approve
        } else {
            CronMode::Deny
        }),
        _ => None,
    };
    if mode.is_none() {
        r.expected(key, v, "deny or approve");
    }
    mode
}

/// `mcp_servers`: each entry a server, left out with its reason when any
/// of its fields does not read.
pub(super) fn read_mcp_servers(
    r: &mut Reader,
    servers: &mut BTreeMap<String, McpServer>,
    key: &str,
    node: &Node,
) {
    let Some(entries) = r.mapping(key, node) else {
        return;
    };
    for (name, v, pos) in entries {
        let key = join(key, &name);
        if let Some(server) = read_mcp_server(r, &key, v, pos) {
            servers.insert(name, server);
        }
    }
}

fn read_mcp_server(r: &mut Reader, key: &str, node: &Node, at: Pos) -> Option<McpServer> {
    const READ: &[&str] = &[
        "command",
        "args",
        "env",
        "url",
        "headers",
        "enabled",
        "timeout",
        "connect_timeout",
        "keepalive_interval",
        "cwd",
        "tools",
        "ssl_verify",
        "supports_parallel_tool_calls",
        "max_tools",
        "sampling",
        "elicitation",
        "auth",
        "oauth",
    ];
    let entries = r.mapping(key, node)?;
    let mut command = None;
    let mut args = Vec::new();
    let mut env = BTreeMap::new();
    let mut url = None;
    let mut url_pos = node.pos;
    let mut headers = BTreeMap::new();
    let mut server_enabled = true;
    let mut timeout = None;
    let mut connect_timeout = None;
    let mut keepalive_interval = None;
    let mut cwd = None;
    let mut include = Vec::new();
    let mut exclude = Vec::new();
    let mut ssl_verify = SslVerify::default();
    let mut parallel = false;
    let mut max_tools = None;
    let mut sampling = McpSampling::default();
    let mut elicitation = McpElicitation::default();
    let mut auth_oauth = false;
    let mut auth_pos = node.pos;
    let mut oauth = None;
    let mut oauth_pos = node.pos;
    let mut bad = false;
    for (name, v, pos) in entries {
        let k = join(key, &name);
        if v.is_null() {
            continue;
        }
        // A field that does not read makes the whole server unusable:
        // better refused with its reason than started half-configured.
        let mut ok = |present: bool| bad |= !present;
        match name.as_str() {
            "command" => {
                command = r.string(&k, v);
                ok(command.is_some());
            }
            "args" => {
                let value = r.strings(&k, v);
                ok(value.is_some());
                args = value.unwrap_or_default();
            }
            "env" => {
                let value = r.string_map(&k, v);
                ok(value.is_some());
                env = value.unwrap_or_default();
            }
            "url" => {
                url_pos = v.pos;
                url = r.string(&k, v);
                ok(url.is_some());
            }
            "headers" => {
                let value = r.string_map(&k, v);
                ok(value.is_some());
                headers = value.unwrap_or_default();
            }
            "enabled" => {
                let value = r.bool(&k, v);
                ok(value.is_some());
                server_enabled = value.unwrap_or(false);
            }
            "timeout" => {
                timeout = r.float(&k, v, 0.001, 86_400.0);
                ok(timeout.is_some());
            }
            "connect_timeout" => {
                connect_timeout = r.float(&k, v, 0.001, 86_400.0);
                ok(connect_timeout.is_some());
            }
            "keepalive_interval" => {
                keepalive_interval = r.float(&k, v, 0.001, 86_400.0);
                ok(keepalive_interval.is_some());
            }
            "cwd" => {
                cwd = r.string(&k, v);
                ok(cwd.is_some());
            }
            "supports_parallel_tool_calls" => {
                let value = r.bool(&k, v);
                ok(value.is_some());
                parallel = value.unwrap_or(false);
            }
            "max_tools" => {
                max_tools = r.int(&k, v, 1, 1_000_000).map(usize_of);
                ok(max_tools.is_some());
            }
            "sampling" => {
                let value = read_mcp_sampling(r, &k, v);
                ok(value.is_some());
                sampling = value.unwrap_or_default();
            }
            "elicitation" => {
                let value = read_mcp_elicitation(r, &k, v);
                ok(value.is_some());
                elicitation = value.unwrap_or_default();
            }
            "auth" => {
                auth_pos = v.pos;
                // The reference lower-cases and trims it; anything but
                // `oauth` means no login.
                match r.string(&k, v).map(|a| a.trim().to_ascii_lowercase()) {
                    Some(a) if a == "oauth" => auth_oauth = true,
                    Some(a) if a.is_empty() || a == "none" => {}
                    Some(_) => {
                        r.expected(&k, v, "`oauth` (or `none`)");
                        ok(false);
                    }
                    None => ok(false),
                }
            }
            "oauth" => {
                oauth_pos = v.pos;
                oauth = read_mcp_oauth(r, &k, v);
                ok(oauth.is_some());
            }
            "ssl_verify" => {
                let flag = match &v.kind {
                    Kind::Scalar {
                        text, plain: true, ..
                    } => parse_bool(text),
                    _ => None,
                };
                ssl_verify = match flag {
                    Some(true) => SslVerify::SystemRoots,
                    Some(false) => SslVerify::Off,
                    None => {
                        let path = r.string(&k, v);
                        ok(path.is_some());
                        path.map_or(SslVerify::SystemRoots, SslVerify::CaFile)
                    }
                };
            }
            "tools" => {
                let Some(fields) = r.mapping(&k, v) else {
                    ok(false);
                    continue;
                };
                for (field, list, fpos) in fields {
                    let fk = join(&k, &field);
                    if list.is_null() {
                        continue;
                    }
                    match field.as_str() {
                        "include" => include = r.strings(&fk, list).unwrap_or_default(),
                        "exclude" => exclude = r.strings(&fk, list).unwrap_or_default(),
                        "resources" | "prompts" => {}
                        other => r.unknown(
                            &k,
                            other,
                            fpos,
                            &["include", "exclude"],
                            &["resources", "prompts"],
                        ),
                    }
                }
            }
            other => r.unknown_value(key, other, v, pos, READ, REFERENCE_MCP_SERVER),
        }
    }
    let transport = match (command, url) {
        (Some(command), None) => McpTransport::Stdio { command, args, env },
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                r.error(
                    &join(key, "url"),
                    url_pos,
                    format!("`{url}` is not an http(s) URL"),
                );
                return None;
            }
            McpTransport::Http { url, headers }
        }
        (Some(_), Some(_)) => {
            r.error(
                key,
                node.pos,
                "a server has either `command` or `url`, not both",
            );
            return None;
        }
        (None, None) => {
            if !bad {
                r.error(
                    key,
                    node.pos,
                    "a server needs `command` (stdio) or `url` (HTTP)",
                );
            }
            return None;
        }
    };
    if bad {
        return None;
    }
    let oauth = if auth_oauth {
        if matches!(transport, McpTransport::Stdio { .. }) {
            r.error(
                &join(key, "auth"),
                auth_pos,
                "`auth: oauth` is for an HTTP server (`url`), not a `command`",
            );
            return None;
        }
        Some(oauth.unwrap_or_default())
    } else {
        if oauth.is_some() {
            r.warn(
                &join(key, "oauth"),
                oauth_pos,
                "ignored without `auth: oauth`",
            );
        }
        None
    };
    Some(McpServer {
        transport,
        enabled: server_enabled,
        timeout,
        connect_timeout,
        keepalive_interval,
        cwd,
        include,
        exclude,
        ssl_verify,
        parallel,
        max_tools,
        sampling,
        elicitation,
        oauth,
        pos: at,
    })
}

/// `mcp_servers.NAME.sampling`; `None` when a field does not read.
fn read_mcp_sampling(r: &mut Reader, key: &str, node: &Node) -> Option<McpSampling> {
    const READ: &[&str] = &[
        "enabled",
        "model",
        "max_tokens_cap",
        "timeout",
        "max_rpm",
        "allowed_models",
        "max_tool_rounds",
    ];
    let mut out = McpSampling::default();
    let mut bad = false;
    for (name, v, pos) in r.mapping(key, node)? {
        let k = join(key, &name);
        if v.is_null() {
            continue;
        }
        let present = match name.as_str() {
            "enabled" => r.bool(&k, v).map(|b| out.enabled = b).is_some(),
            "model" => plain_text(r, &k, v)
                .map(|m| out.model = Some(m).filter(|m| !m.is_empty()))
                .is_some(),
            "max_tokens_cap" => r
                .int(&k, v, 1, 1_000_000)
                .map(|n| out.max_tokens_cap = u32_of(n))
                .is_some(),
            "timeout" => r
                .float(&k, v, 0.001, 86_400.0)
                .map(|t| out.timeout = t)
                .is_some(),
            "max_rpm" => r
                .int(&k, v, 0, 1_000_000)
                .map(|n| out.max_rpm = u32_of(n))
                .is_some(),
            "allowed_models" => r.strings(&k, v).map(|m| out.allowed_models = m).is_some(),
            "max_tool_rounds" => r
                .int(&k, v, 0, 1_000)
                .map(|n| out.max_tool_rounds = u32_of(n))
                .is_some(),
            other => {
                r.unknown(key, other, pos, READ, &["log_level"]);
                true
            }
        };
        bad |= !present;
    }
    (!bad).then_some(out)
}

/// `mcp_servers.NAME.elicitation`; `None` when a field does not read.
fn read_mcp_elicitation(r: &mut Reader, key: &str, node: &Node) -> Option<McpElicitation> {
    let mut out = McpElicitation::default();
    let mut bad = false;
    for (name, v, pos) in r.mapping(key, node)? {
        let k = join(key, &name);
        if v.is_null() {
            continue;
        }
        let present = match name.as_str() {
            "enabled" => r.bool(&k, v).map(|b| out.enabled = b).is_some(),
            "timeout" => r
                .float(&k, v, 0.001, 86_400.0)
                .map(|t| out.timeout = t)
                .is_some(),
            other => {
                r.unknown(key, other, pos, &["enabled", "timeout"], &[]);
                true
            }
        };
        bad |= !present;
    }
    (!bad).then_some(out)
}

fn u32_of(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// A value given as text (`terminal.ssh_host`, `docker_image`), trimmed;
/// a NUL or a line break in it is an error.
pub(super) fn plain_text(r: &mut Reader, key: &str, v: &Node) -> Option<String> {
    let text = r.string(key, v)?.trim().to_string();
    if text.contains(['\0', '\n', '\r']) {
        r.expected(key, v, "one line of text");
        return None;
    }
    Some(text)
}

/// `terminal.backend`: a name (lower-case letters, digits, `-`, `_`);
/// whether the program has it is `ProfileConfig::check_backend_name`'s
/// question (the table is the tools'). Empty is `local`.
pub(super) fn backend_name(r: &mut Reader, key: &str, v: &Node) -> Option<String> {
    let text = plain_text(r, key, v)?.to_ascii_lowercase();
    if text.is_empty() {
        return Some("local".to_string());
    }
    if !text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        r.expected(key, v, "a backend name such as local, ssh or docker");
        return None;
    }
    Some(text)
}

/// `terminal.docker_volumes`: `HOST:CONTAINER[:OPTIONS]`, both paths
/// absolute; a bad entry is reported and left out.
pub(super) fn volumes(r: &mut Reader, key: &str, v: &Node) -> Option<Vec<String>> {
    let items = r.strings_at(key, v)?;
    let mut out = Vec::new();
    for (item_key, text, pos) in items {
        let parts: Vec<&str> = text.split(':').collect();
        let ok = (2..=3).contains(&parts.len())
            && parts[..2]
                .iter()
                .all(|p| p.starts_with('/') || p.starts_with("~/"));
        if ok {
            out.push(text);
        } else {
            r.error(
                &item_key,
                pos,
                format!("`{text}` is not HOST:CONTAINER[:OPTIONS] with absolute paths; left out"),
            );
        }
    }
    Some(out)
}

/// The `oauth:` mapping of an MCP server; `None` (with the reasons
/// reported) when a field does not read.
fn read_mcp_oauth(r: &mut Reader, key: &str, node: &Node) -> Option<McpOAuth> {
    const READ: &[&str] = &[
        "client_id",
        "client_secret",
        "scope",
        "redirect_port",
        "redirect_uri",
        "redirect_host",
        "client_name",
        "client_metadata_url",
        "timeout",
    ];
    let entries = r.mapping(key, node)?;
    let mut o = McpOAuth::default();
    let mut bad = false;
    for (name, v, pos) in entries {
        let k = join(key, &name);
        if v.is_null() {
            continue;
        }
        let mut text = |r: &mut Reader| {
            let value = plain_text(r, &k, v);
            bad |= value.is_none();
            value
        };
        match name.as_str() {
            "client_id" => o.client_id = text(r),
            "client_secret" => o.client_secret = text(r),
            "scope" => o.scope = text(r),
            "redirect_host" => o.redirect_host = text(r),
            "client_name" => o.client_name = text(r),
            "redirect_uri" => {
                o.redirect_uri = text(r);
                if let Some(uri) = &o.redirect_uri {
                    if !(uri.starts_with("http://") || uri.starts_with("https://")) {
                        r.error(&k, v.pos, format!("`{uri}` is not an http(s) URL"));
                        bad = true;
                    }
                }
            }
            "client_metadata_url" => {
                o.client_metadata_url = text(r);
                if let Some(url) = &o.client_metadata_url {
                    if !url.starts_with("https://") {
                        r.error(&k, v.pos, format!("`{url}` is not an https URL"));
                        bad = true;
                    }
                }
            }
            "redirect_port" => match r.int(&k, v, 0, 65_535) {
                Some(port) => o.redirect_port = u16::try_from(port).unwrap_or(0),
                None => bad = true,
            },
            "timeout" => {
                o.timeout = r.float(&k, v, 1.0, 86_400.0);
                bad |= o.timeout.is_none();
            }
            other => r.unknown(key, other, pos, READ, &[]),
        }
    }
    if o.client_secret.is_some() && o.client_id.is_none() {
        r.error(
            &join(key, "client_secret"),
            node.pos,
            "`client_secret` needs the `client_id` it belongs to",
        );
        bad = true;
    }
    (!bad).then_some(o)
}
