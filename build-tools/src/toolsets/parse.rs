//! Parsing toolsets.toml into a [`Table`], every name with its position.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::*;

type SpannedName = Spanned<String>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    builds_on: Vec<SpannedName>,
    #[serde(default)]
    core: Vec<SpannedName>,
    #[serde(default)]
    webhook_safe: Vec<SpannedName>,
    #[serde(default)]
    toolsets: BTreeMap<SpannedName, RawToolset>,
    #[serde(default)]
    platforms: BTreeMap<SpannedName, RawPlatform>,
    #[serde(default)]
    legacy: BTreeMap<SpannedName, Vec<SpannedName>>,
    #[serde(default)]
    aliases: BTreeMap<SpannedName, SpannedName>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolset {
    /// Required, except for a toolset of a crate this one builds on.
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    tools: Vec<SpannedName>,
    #[serde(default)]
    includes: Vec<SpannedName>,
    #[serde(default)]
    instructional: bool,
    #[serde(default)]
    posture: bool,
    #[serde(default)]
    stateless: bool,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum RawBase {
    Core,
    WebhookSafe,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatform {
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    base: Option<Spanned<RawBase>>,
    #[serde(default)]
    extras: Vec<SpannedName>,
}

/// Maps byte offsets of one text to 1-based line/column.
struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self { text, line_starts }
    }

    fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self
            .line_starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(0);
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        Pos {
            line: line.max(1),
            column,
        }
    }

    fn entry(&self, s: &SpannedName) -> Entry {
        Entry {
            name: s.get_ref().clone(),
            pos: self.pos(s.span().start),
        }
    }

    fn entries(&self, list: &[SpannedName]) -> Vec<Entry> {
        list.iter().map(|s| self.entry(s)).collect()
    }
}

/// Parses the text of `toolsets.toml`.
///
/// Fails on TOML syntax errors, duplicate keys, unknown fields, missing
/// descriptions and values of the wrong type; each error carries the line and
/// column the TOML parser pointed at. Semantic checks are [`validate`]'s job.
pub fn parse_table(text: &str) -> Result<Table, Vec<TableError>> {
    let index = LineIndex::new(text);
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let pos = e
            .span()
            .map_or(Pos { line: 1, column: 1 }, |s| index.pos(s.start));
        vec![TableError::at(
            TableErrorKind::Parse,
            pos,
            e.message().trim().to_owned(),
        )]
    })?;

    let toolsets = raw
        .toolsets
        .iter()
        .map(|(name, t)| ToolsetDef {
            name: index.entry(name),
            description: t.description.clone().unwrap_or_default(),
            tools: index.entries(&t.tools),
            includes: index.entries(&t.includes),
            instructional: t.instructional,
            posture: t.posture,
            stateless: t.stateless,
            platform: None,
        })
        .collect();
    let platforms = raw
        .platforms
        .iter()
        .map(|(name, p)| PlatformDef {
            name: index.entry(name),
            description: p.description.clone(),
            base: match p.base.as_ref().map(|b| *b.get_ref()) {
                None | Some(RawBase::Core) => BundleBase::Core,
                Some(RawBase::WebhookSafe) => BundleBase::WebhookSafe,
            },
            base_pos: p.base.as_ref().map(|b| index.pos(b.span().start)),
            extras: index.entries(&p.extras),
        })
        .collect();
    let legacy = raw
        .legacy
        .iter()
        .map(|(name, tools)| LegacyDef {
            name: index.entry(name),
            tools: index.entries(tools),
        })
        .collect();
    let aliases = raw
        .aliases
        .iter()
        .map(|(alias, target)| AliasDef {
            alias: index.entry(alias),
            target: index.entry(target),
        })
        .collect();

    Ok(Table {
        builds_on: index.entries(&raw.builds_on),
        base: BaseNames::default(),
        core: index.entries(&raw.core),
        webhook_safe: index.entries(&raw.webhook_safe),
        toolsets,
        platforms,
        legacy,
        aliases,
    })
}
