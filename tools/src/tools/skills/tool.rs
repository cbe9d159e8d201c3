//! The `skills` toolset: list skills and read one (`skills_list`,
//! `skill_view`). Skills are instructional, so neither tool pages
//! (no offset / limit). Discovery and front matter are in `catalog.rs`.

mod catalog;

use std::fs;

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;
use serde_json::{json, Value};

use catalog::{Skill, SKILL_FILE};

/// List the available skills: name, description and category of each.
///
/// Skills are documents with instructions for specific tasks and workflows.
/// Load one with `skill_view`.
#[hermes_tool(
    toolset = "skills",
    emoji = "📚",
    read_only,
    open_world = false,
    concurrency = "safe"
)]
pub fn skills_list(
    ctx: &ToolContext,
    /// Only skills of this category (the folder a skill sits in).
    category: Option<String>,
) -> Value {
    let root = catalog::skills_dir(ctx.profile().home());
    if !root.is_dir() {
        return json!({
            "success": true,
            "skills": [],
            "categories": [],
            "count": 0,
            "message": "No skills found: the profile's home has no skills folder yet.",
        });
    }
    let mut skills = catalog::all(&root);
    // A name found twice is listed once (its first folder in listing order).
    let mut seen = std::collections::HashSet::new();
    skills.retain(|s| seen.insert(s.name.clone()));
    if let Some(cat) = category.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        skills.retain(|s| s.category.as_deref() == Some(cat));
    }
    let mut categories: Vec<&str> = skills
        .iter()
        .filter_map(|s| s.category.as_deref())
        .collect();
    categories.dedup();
    let listed: Vec<Value> = skills
        .iter()
        .map(|s| json!({"name": s.name, "description": s.description, "category": s.category}))
        .collect();
    let mut out = json!({
        "success": true,
        "skills": listed,
        "categories": categories,
        "count": skills.len(),
    });
    if skills.is_empty() {
        out["message"] = json!("No skills found.");
    } else {
        out["hint"] =
            json!("Use skill_view(name) to load a skill's full content and its linked files");
    }
    out
}

/// Load a skill: its full instructions (`SKILL.md`) and the list of files
/// linked from it (references, templates, assets, scripts), or one of those
/// files with `file_path`.
#[hermes_tool(
    toolset = "skills",
    emoji = "📚",
    read_only,
    open_world = false,
    concurrency = "safe"
)]
pub fn skill_view(
    ctx: &ToolContext,
    /// The skill's name as listed, or its path under the skills folder
    /// (`category/name`).
    name: String,
    /// A file inside the skill's folder to read instead of `SKILL.md`,
    /// e.g. `references/api.md`.
    file_path: Option<String>,
) -> Value {
    let name = name.trim();
    if name.is_empty() || !catalog::is_contained_relative(name) {
        return refusal(
            "Skill name must be a name or a relative path within the skills folder, without '..'.",
        );
    }
    let root = catalog::skills_dir(ctx.profile().home());
    let skills = if root.is_dir() {
        catalog::all(&root)
    } else {
        Vec::new()
    };
    let skill = match resolve(&root, &skills, name) {
        Ok(skill) => skill,
        Err(answer) => return answer,
    };
    match file_path
        .as_deref()
        .map(str::trim)
        .filter(|f| !f.is_empty())
    {
        Some(file) => view_file(&skill, name, file),
        None => view_skill(&root, &skill),
    }
}

fn refusal(message: &str) -> Value {
    json!({"success": false, "error": message})
}

/// The one skill `name` designates: a path under the skills folder, a
/// folder name or a front-matter name (`category:name` is read as
/// `category/name`). Several matches are refused rather than guessed.
fn resolve(root: &std::path::Path, skills: &[Skill], name: &str) -> Result<Skill, Value> {
    let as_path = name.replace(':', "/");
    let mut found: Vec<Skill> = Vec::new();
    let mut push = |s: Skill| {
        if !found.iter().any(|f| f.dir == s.dir) {
            found.push(s);
        }
    };
    let direct = root.join(&as_path);
    if catalog::is_contained_relative(&as_path) && direct.join(SKILL_FILE).is_file() {
        if let Some(s) = catalog::load(root, &direct) {
            push(s);
        }
    }
    for s in skills {
        let folder = s.dir.file_name().map(|f| f.to_string_lossy().into_owned());
        if s.name == name || folder.as_deref() == Some(name) {
            push(s.clone());
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(json!({
            "success": false,
            "error": format!("Skill '{name}' not found."),
            "available_skills": skills.iter().take(20).map(|s| &s.name).collect::<Vec<_>>(),
            "hint": "Use skills_list to see every skill",
        })),
        n => Err(json!({
            "success": false,
            "error": format!("Ambiguous skill name '{name}': {n} skills match; load one by its path (category/name)."),
            "matches": found.iter().map(|s| rel(root, &s.dir)).collect::<Vec<_>>(),
        })),
    }
}

fn rel(root: &std::path::Path, path: &std::path::Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn view_skill(root: &std::path::Path, skill: &Skill) -> Value {
    let content = match fs::read_to_string(skill.dir.join(SKILL_FILE)) {
        Ok(c) => c,
        Err(e) => return refusal(&format!("Failed to read skill '{}': {e}", skill.name)),
    };
    let linked = catalog::linked_files(&skill.dir);
    let mut out = json!({
        "success": true,
        "name": skill.name,
        "description": skill.front.scalar("description").unwrap_or_default(),
        "category": skill.category,
        "tags": skill.front.list("tags"),
        "related_skills": skill.front.list("related_skills"),
        "content": content,
        "path": rel(root, &skill.dir.join(SKILL_FILE)),
        "skill_dir": skill.dir,
        "linked_files": if linked.is_empty() { Value::Null } else { json!(linked) },
    });
    if !linked.is_empty() {
        out["usage_hint"] = json!(
            "To read a linked file, call skill_view(name, file_path) with its path, e.g. 'references/api.md'"
        );
    }
    out
}

fn view_file(skill: &Skill, name: &str, file: &str) -> Value {
    let hint = "Use a path relative to the skill's folder, from linked_files";
    if !catalog::is_contained_relative(file) {
        return json!({
            "success": false,
            "error": "file_path must be relative to the skill's folder, without '..'.",
            "hint": hint,
        });
    }
    let target = skill.dir.join(file);
    // Symbolic links must not lead out of the skill's folder either.
    let inside = match (target.canonicalize(), skill.dir.canonicalize()) {
        (Ok(t), Ok(d)) => t.starts_with(d),
        _ => false,
    };
    if !target.is_file() || !inside {
        return json!({
            "success": false,
            "error": format!("File '{file}' not found in skill '{name}'."),
            "available_files": catalog::linked_files(&skill.dir),
            "hint": hint,
        });
    }
    match fs::read(&target) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(content) => json!({
                "success": true,
                "name": skill.name,
                "file": file,
                "content": content,
            }),
            Err(e) => json!({
                "success": true,
                "name": skill.name,
                "file": file,
                "content": format!("[Binary file: {file}, {} bytes]", e.as_bytes().len()),
                "is_binary": true,
            }),
        },
        Err(e) => refusal(&format!("Failed to read '{file}': {e}")),
    }
}
