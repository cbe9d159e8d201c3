//! Finding skills: folders holding a `SKILL.md` under `skills/` in the
//! profile's home (resolved at every call), their front matter, and the
//! files linked from a skill's folder.
//!
//! A skill's name is its front matter's `name`, else its folder's name; its
//! description is the front matter's `description`, else the first line of
//! text of the body. A skill two or more levels down (`skills/CAT/NAME/`)
//! belongs to the category `CAT`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// Longest name kept.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description kept in a listing.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// How deep under `skills/` skills are looked for.
const MAX_DEPTH: usize = 6;
/// Folders never searched.
const EXCLUDED_DIRS: &[&str] = &["node_modules", "__pycache__", "target", "venv"];
/// Folders of a skill that hold its linked files, not other skills.
pub const SUPPORT_DIRS: &[&str] = &["references", "templates", "assets", "scripts"];

/// One skill found on disk.
#[derive(Debug, Clone)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub category: Option<String>,
    /// The skill's folder.
    pub dir: PathBuf,
    pub front: FrontMatter,
}

/// The skills folder of a profile's home.
pub fn skills_dir(home: &Path) -> PathBuf {
    home.join("skills")
}

/// Every skill under `root`, sorted by (category, name, folder).
pub fn all(root: &Path) -> Vec<Skill> {
    let mut found = Vec::new();
    walk(root, root, 0, &mut found);
    found.sort_by(|a: &Skill, b: &Skill| a.dir.cmp(&b.dir));
    found.sort_by(|a, b| {
        (a.category.as_deref().unwrap_or(""), &a.name)
            .cmp(&(b.category.as_deref().unwrap_or(""), &b.name))
    });
    found
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<Skill>) {
    if depth > MAX_DEPTH {
        return;
    }
    if dir.join(SKILL_FILE).is_file() && dir != root {
        if let Some(skill) = load(root, dir) {
            out.push(skill);
        }
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || name.starts_with('.') || EXCLUDED_DIRS.contains(&name.as_ref()) {
            continue;
        }
        if dir.join(SKILL_FILE).is_file() && SUPPORT_DIRS.contains(&name.as_ref()) {
            continue;
        }
        walk(root, &entry.path(), depth + 1, out);
    }
}

/// Reads the skill in `dir` (which holds a `SKILL.md`).
pub fn load(root: &Path, dir: &Path) -> Option<Skill> {
    let text = fs::read_to_string(dir.join(SKILL_FILE)).ok()?;
    let (front, body) = FrontMatter::parse(&text);
    let folder = dir.file_name()?.to_string_lossy().into_owned();
    let name = front
        .scalar("name")
        .filter(|n| !n.is_empty())
        .unwrap_or(&folder)
        .chars()
        .take(MAX_NAME_CHARS)
        .collect();
    let description = front
        .scalar("description")
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .or_else(|| {
            body.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string)
        })
        .unwrap_or_default();
    let description = if description.chars().count() > MAX_DESCRIPTION_CHARS {
        description
            .chars()
            .take(MAX_DESCRIPTION_CHARS - 3)
            .collect::<String>()
            + "..."
    } else {
        description
    };
    let rel = dir.strip_prefix(root).ok()?;
    let parts: Vec<_> = rel.components().collect();
    let category = (parts.len() >= 2).then(|| parts[0].as_os_str().to_string_lossy().into_owned());
    Some(Skill {
        name,
        description,
        category,
        dir: dir.to_path_buf(),
        front,
    })
}

/// Whether `path` is relative and never climbs (`..`), so joining it onto
/// a trusted folder stays inside it.
pub fn is_contained_relative(path: &str) -> bool {
    let p = Path::new(path);
    !path.contains('\\')
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The files of a skill's folder other than `SKILL.md`, relative to it,
/// grouped by support folder (`other` for the rest), sorted.
pub fn linked_files(dir: &Path) -> BTreeMap<&'static str, Vec<String>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                // Another skill nested inside is not a linked file.
                if !path.join(SKILL_FILE).is_file() {
                    stack.push(path);
                }
                continue;
            }
            let Ok(rel) = path.strip_prefix(dir) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel == SKILL_FILE {
                continue;
            }
            let group = SUPPORT_DIRS
                .iter()
                .find(|g| rel.starts_with(&format!("{g}/")))
                .copied()
                .unwrap_or("other");
            files.entry(group).or_insert_with(Vec::new).push(rel);
        }
    }
    for list in files.values_mut() {
        list.sort();
    }
    files
}

/// The YAML front matter of a `SKILL.md`, read the simple way: top-level
/// `key: value` scalars (quotes removed), inline lists `[a, b]`, block lists
/// (`- item` lines) and folded / literal block scalars (`>` / `|`). Nested
/// maps are skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    pub fields: BTreeMap<String, FrontValue>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontValue {
    Scalar(String),
    List(Vec<String>),
}

impl FrontMatter {
    /// Splits `text` into its front matter and the body after it.
    pub fn parse(text: &str) -> (FrontMatter, &str) {
        let mut front = FrontMatter::default();
        let Some(rest) = text
            .strip_prefix("---\n")
            .or_else(|| text.strip_prefix("---\r\n"))
        else {
            return (front, text);
        };
        let (block, body) = match rest.find("\n---") {
            Some(end) => {
                let after = &rest[end + 4..];
                let body = after.find('\n').map_or("", |nl| &after[nl + 1..]);
                (&rest[..end], body)
            }
            None => return (front, text),
        };
        let lines: Vec<&str> = block.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            i += 1;
            if line.starts_with([' ', '\t', '#']) || line.trim().is_empty() {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_string();
            let value = value.trim();
            let indented = |l: &str| l.starts_with([' ', '\t']) || l.trim().is_empty();
            let parsed = if value.is_empty() {
                // A block list, or a nested map (skipped).
                let mut items = Vec::new();
                while i < lines.len() && indented(lines[i]) {
                    if let Some(item) = lines[i].trim().strip_prefix("- ") {
                        items.push(unquote(item));
                    }
                    i += 1;
                }
                if items.is_empty() {
                    continue;
                }
                FrontValue::List(items)
            } else if value.starts_with('>') || value.starts_with('|') {
                let mut parts = Vec::new();
                while i < lines.len() && indented(lines[i]) {
                    parts.push(lines[i].trim());
                    i += 1;
                }
                let sep = if value.starts_with('>') { " " } else { "\n" };
                FrontValue::Scalar(parts.join(sep).trim().to_string())
            } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                FrontValue::List(
                    inner
                        .split(',')
                        .map(unquote)
                        .filter(|s| !s.is_empty())
                        .collect(),
                )
            } else {
                FrontValue::Scalar(unquote(value))
            };
            front.fields.insert(key, parsed);
        }
        (front, body)
    }

    pub fn scalar(&self, key: &str) -> Option<&str> {
        match self.fields.get(key)? {
            FrontValue::Scalar(s) => Some(s),
            FrontValue::List(_) => None,
        }
    }

    /// A list field; a scalar is split on commas.
    pub fn list(&self, key: &str) -> Vec<String> {
        match self.fields.get(key) {
            Some(FrontValue::List(items)) => items.clone(),
            Some(FrontValue::Scalar(s)) => s
                .split(',')
                .map(unquote)
                .filter(|s| !s.is_empty())
                .collect(),
            None => Vec::new(),
        }
    }
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_scalars_lists_and_blocks() {
        let text = "---\nname: \"deploy\"\ndescription: >\n  Ship the app\n  to prod\ntags: [ops, 'ci']\nrelated_skills:\n  - rollback\n  - logs\nmetadata:\n  hermes:\n    x: 1\n---\n# Title\nBody\n";
        let (front, body) = FrontMatter::parse(text);
        assert_eq!(front.scalar("name"), Some("deploy"));
        assert_eq!(front.scalar("description"), Some("Ship the app to prod"));
        assert_eq!(front.list("tags"), ["ops", "ci"]);
        assert_eq!(front.list("related_skills"), ["rollback", "logs"]);
        assert!(!front.fields.contains_key("metadata"));
        assert_eq!(body, "# Title\nBody\n");
        let (none, body) = FrontMatter::parse("# No front matter\n");
        assert!(none.fields.is_empty());
        assert_eq!(body, "# No front matter\n");
    }

    #[test]
    fn contained_relative_paths() {
        assert!(is_contained_relative("references/api.md"));
        assert!(is_contained_relative("ops/deploy"));
        assert!(!is_contained_relative("../x"));
        assert!(!is_contained_relative("a/../../x"));
        assert!(!is_contained_relative("/etc/passwd"));
        assert!(!is_contained_relative("C:\\x"));
    }
}
