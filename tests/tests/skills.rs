//! `skills_list` and `skill_view` through dispatch, on skills folders made
//! under temporary profile homes (resolved at call time).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

fn put(root: &Path, rel: &str, text: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

struct Home {
    dir: tempfile::TempDir,
    ctx: ToolContext,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(Profile::new(dir.path()), "/");
        Home { dir, ctx }
    }

    fn skills(&self) -> std::path::PathBuf {
        self.dir.path().join("skills")
    }

    async fn call(&self, name: &str, args: Value) -> Value {
        let out = hermes_tools::registry()
            .dispatch(name, args, &self.ctx)
            .await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }
}

fn sample() -> Home {
    let home = Home::new();
    let s = home.skills();
    put(
        &s,
        "deploy/SKILL.md",
        "---\nname: deploy-app\ndescription: Ship the app to production\ntags: [ops, release]\nrelated_skills:\n  - rollback\n---\n# Deploy\nSteps...\n",
    );
    put(
        &s,
        "ops/rollback/SKILL.md",
        "# Rollback\n\nUndo a bad release.\n",
    );
    put(&s, "ops/rollback/references/notes.md", "notes");
    put(&s, "ops/rollback/scripts/run.sh", "#!/bin/sh\n");
    put(&s, "ops/rollback/templates/cfg.yaml", "a: 1\n");
    put(
        &s,
        "ops/rollback/assets/logo.png",
        [0x89u8, 0x50, 0xff, 0xfe, 0x00],
    );
    put(&s, ".hidden/SKILL.md", "# hidden\n\nnever listed\n");
    home
}

#[tokio::test]
async fn a_profile_without_skills_lists_none() {
    let home = Home::new();
    let v = home.call("skills_list", json!({})).await;
    assert_eq!(v["success"], true);
    assert_eq!(v["skills"], json!([]));
    let v = home.call("skill_view", json!({"name": "anything"})).await;
    assert_eq!(v["success"], false);
    assert!(v["error"].as_str().unwrap().contains("not found"), "{v}");
}

#[tokio::test]
async fn lists_skills_with_categories_sorted() {
    let home = sample();
    let v = home.call("skills_list", json!({})).await;
    assert_eq!(
        v["skills"],
        json!([
            {"name": "deploy-app", "description": "Ship the app to production", "category": null},
            {"name": "rollback", "description": "Undo a bad release.", "category": "ops"},
        ]),
        "{v}"
    );
    assert_eq!(v["categories"], json!(["ops"]));
    assert_eq!(v["count"], 2);
    let v = home.call("skills_list", json!({"category": "ops"})).await;
    assert_eq!(v["count"], 1);
    assert_eq!(v["skills"][0]["name"], "rollback");
}

#[tokio::test]
async fn views_a_skill_by_name_path_or_folder() {
    let home = sample();
    let v = home.call("skill_view", json!({"name": "deploy-app"})).await;
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["name"], "deploy-app");
    assert_eq!(v["tags"], json!(["ops", "release"]));
    assert_eq!(v["related_skills"], json!(["rollback"]));
    assert!(v["content"].as_str().unwrap().contains("Steps..."));
    assert_eq!(v["path"], "deploy/SKILL.md");
    assert_eq!(v["linked_files"], Value::Null);

    for name in ["deploy", "rollback", "ops/rollback", "ops:rollback"] {
        let v = home.call("skill_view", json!({"name": name})).await;
        assert_eq!(v["success"], true, "{name}: {v}");
    }
    let v = home.call("skill_view", json!({"name": "rollback"})).await;
    assert_eq!(
        v["linked_files"],
        json!({
            "assets": ["assets/logo.png"],
            "references": ["references/notes.md"],
            "scripts": ["scripts/run.sh"],
            "templates": ["templates/cfg.yaml"],
        })
    );
    assert_eq!(v["category"], "ops");
    let v = home.call("skill_view", json!({"name": "hidden"})).await;
    assert_eq!(v["success"], false, "hidden folders are not searched: {v}");
}

#[tokio::test]
async fn reads_linked_files_inside_the_skill_only() {
    let home = sample();
    let view = |file: &str| json!({"name": "rollback", "file_path": file});
    let v = home.call("skill_view", view("references/notes.md")).await;
    assert_eq!(v["content"], "notes", "{v}");
    let v = home.call("skill_view", view("assets/logo.png")).await;
    assert_eq!(v["is_binary"], true, "{v}");

    for bad in ["../../deploy/SKILL.md", "/etc/passwd"] {
        let v = home.call("skill_view", view(bad)).await;
        assert_eq!(v["success"], false, "{bad}: {v}");
    }
    // A symbolic link out of the skill's folder is refused too.
    std::os::unix::fs::symlink(
        home.skills().join("deploy/SKILL.md"),
        home.skills().join("ops/rollback/references/escape.md"),
    )
    .unwrap();
    let v = home.call("skill_view", view("references/escape.md")).await;
    assert_eq!(v["success"], false, "{v}");

    let v = home.call("skill_view", view("references/missing.md")).await;
    assert!(v["error"].as_str().unwrap().contains("not found"));
    assert!(v["available_files"]["references"].is_array(), "{v}");

    let v = home
        .call("skill_view", json!({"name": "../skills/deploy"}))
        .await;
    assert!(v["error"].as_str().unwrap().contains(".."), "{v}");
}

#[tokio::test]
async fn ambiguous_names_are_refused_not_guessed() {
    let home = Home::new();
    put(&home.skills(), "a/lint/SKILL.md", "# lint\n\nfor a\n");
    put(&home.skills(), "b/lint/SKILL.md", "# lint\n\nfor b\n");
    let v = home.call("skill_view", json!({"name": "lint"})).await;
    assert_eq!(v["success"], false);
    assert_eq!(v["matches"], json!(["a/lint", "b/lint"]), "{v}");
    let v = home.call("skill_view", json!({"name": "b/lint"})).await;
    assert!(v["content"].as_str().unwrap().contains("for b"), "{v}");
}

#[tokio::test]
async fn skills_are_instructional_without_paging() {
    let registry = hermes_tools::registry();
    assert!(registry.toolsets().is_instructional("skills"));
    for name in ["skills_list", "skill_view"] {
        let params = registry.builtin(name).unwrap().parameters();
        let props = params["properties"].as_object().unwrap();
        assert!(
            !props.contains_key("offset") && !props.contains_key("limit"),
            "{name}"
        );
    }
}
