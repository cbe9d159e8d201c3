//! The `file` toolset through the real registry's dispatch, on temp dirs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

struct Sandbox {
    dir: tempfile::TempDir,
    ctx: ToolContext,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(Profile::new(dir.path().join(".hermes")), dir.path());
        Sandbox { dir, ctx }
    }

    async fn call(&self, name: &str, args: Value) -> Value {
        let out = hermes_tools::registry()
            .dispatch(name, args, &self.ctx)
            .await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap()
    }
}

#[tokio::test]
async fn write_then_read_with_pagination_and_coerced_limit() {
    let sb = Sandbox::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    let v = sb
        .call(
            "write_file",
            json!({"path": "notes/a.txt", "content": text}),
        )
        .await;
    assert_eq!(v["bytes_written"], text.len());
    assert_eq!(sb.read("notes/a.txt"), text);

    // The model sent the limit as a string: coercion repairs it.
    let v = sb
        .call(
            "read_file",
            json!({"path": "notes/a.txt", "offset": 3, "limit": "2"}),
        )
        .await;
    assert_eq!(v["content"], "3|line 3\n4|line 4");
    assert_eq!(v["total_lines"], 10);
    assert_eq!(v["next_offset"], 5);
}

#[tokio::test]
async fn read_missing_file_is_a_clear_error() {
    let sb = Sandbox::new();
    std::fs::write(sb.dir.path().join("config.toml"), "x").unwrap();
    let v = sb.call("read_file", json!({"path": "confg.toml"})).await;
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("confg.toml"), "{e}");
    assert!(e.contains("config.toml"), "suggests the near name: {e}");
}

#[tokio::test]
async fn patch_replaces_exactly_once_or_explains() {
    let sb = Sandbox::new();
    std::fs::write(sb.dir.path().join("m.rs"), "let a = 1;\nlet b = 1;\n").unwrap();

    let v = sb
        .call(
            "patch",
            json!({"path": "m.rs", "old_string": "= 1", "new_string": "= 2"}),
        )
        .await;
    let e = v["error"].as_str().unwrap();
    assert!(e.contains('2') && e.contains("replace_all"), "{e}");
    assert_eq!(
        sb.read("m.rs"),
        "let a = 1;\nlet b = 1;\n",
        "unchanged on error"
    );

    let v = sb
        .call(
            "patch",
            json!({"path": "m.rs", "old_string": "missing", "new_string": "x"}),
        )
        .await;
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("Could not find old_string"),
        "{v}"
    );

    let v = sb
        .call(
            "patch",
            json!({"path": "m.rs", "old_string": "let b = 1", "new_string": "let b = 3"}),
        )
        .await;
    assert_eq!(v["replacements"], 1);
    assert!(v["diff"].as_str().unwrap().contains("+let b = 3;"), "{v}");
    assert_eq!(sb.read("m.rs"), "let a = 1;\nlet b = 3;\n");

    let v = sb
        .call(
            "patch",
            json!({"path": "m.rs", "old_string": "let", "new_string": "const", "replace_all": "true"}),
        )
        .await;
    assert_eq!(v["replacements"], 2);
}

#[tokio::test]
async fn search_respects_gitignore_and_reports_bad_regex() {
    let sb = Sandbox::new();
    let root = sb.dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    // A git repository, where a `.gitignore` is a rule.
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(root.join("target/out.rs"), "fn needle() {}\n").unwrap();

    let v = sb.call("search_files", json!({"pattern": "needle"})).await;
    let paths: Vec<&str> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/lib.rs"]);

    let v = sb.call("search_files", json!({"pattern": "fn ("})).await;
    assert!(v["error"].as_str().unwrap().contains("fn ("), "{v}");
}

#[test]
fn the_file_toolset_has_the_four_tools_with_described_parameters() {
    let registry = hermes_tools::registry();
    for name in ["read_file", "write_file", "patch", "search_files"] {
        let entry = registry.builtin(name).unwrap();
        assert_eq!(entry.toolset, "file");
        let params = entry.parameters();
        assert_eq!(params["type"], "object");
        for (prop, schema) in params["properties"].as_object().unwrap() {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{name}.{prop} has no description"
            );
        }
    }
}

#[tokio::test]
async fn special_files_are_refused_with_nothing_done() {
    let sb = Sandbox::new();
    let root = sb.dir.path();
    let pipe = root.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/proc", root.join("p")).unwrap();
    std::fs::write(root.join("ok.txt"), "Name: here\n").unwrap();

    for (tool, args) in [
        ("read_file", json!({"path": "pipe"})),
        ("read_file", json!({"path": "p/self/oom_score"})),
        ("read_file", json!({"path": "/dev/zero"})),
        ("write_file", json!({"path": "pipe", "content": "x"})),
        ("write_file", json!({"path": "p/self/comm", "content": "x"})),
        (
            "patch",
            json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
        ("search_files", json!({"pattern": "x", "path": "p"})),
        ("search_files", json!({"pattern": "x", "path": "/sys"})),
    ] {
        // Opening the FIFO for reading would block: bounded here, and a
        // writer is opened to free the reader if it came to that.
        let answer =
            tokio::time::timeout(std::time::Duration::from_secs(20), sb.call(tool, args)).await;
        let Ok(v) = answer else {
            let _ = std::fs::OpenOptions::new().write(true).open(&pipe);
            panic!("{tool} blocked on a special file");
        };
        let e = v["error"].as_str().unwrap_or_else(|| panic!("{tool}: {v}"));
        // Kernel files are refused by their rule, before anything is opened.
        assert!(
            (e.contains("regular files") && e.contains("nothing was done"))
                || (tool == "read_file" && e.starts_with("Refused to read") && e.contains("it is")),
            "{tool}: {e}"
        );
    }
    let kind = std::fs::symlink_metadata(&pipe).unwrap().file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));

    // The walk skips the FIFO and does not follow the link into /proc.
    let v = sb.call("search_files", json!({"pattern": "Name"})).await;
    assert_eq!(v["total_count"], 1, "{v}");
    assert_eq!(v["matches"][0]["path"], "ok.txt");
}

#[tokio::test]
async fn patch_refuses_a_replacement_over_the_size_limit() {
    let sb = Sandbox::new();
    let text = "a".repeat(1 << 20);
    std::fs::write(sb.dir.path().join("a.txt"), &text).unwrap();
    let v = sb
        .call(
            "patch",
            json!({"path": "a.txt", "old_string": "a", "new_string": "b".repeat(4096), "replace_all": true}),
        )
        .await;
    let e = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        e.contains("1048576 occurrences") && e.contains("10 MiB") && e.contains("a.txt"),
        "{e}"
    );
    assert_eq!(sb.read("a.txt"), text, "unchanged");
}

#[tokio::test]
async fn read_file_redacts_secrets_as_markers() {
    let sb = Sandbox::new();
    let text = "key = sk-proj-abcdefghijklmnop1234\n\
                auth: Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456\n\
                -----BEGIN OPENSSH PRIVATE KEY-----\n\
                b3BlbnNzaC1rZXktdjEAAAAA\n\
                -----END OPENSSH PRIVATE KEY-----\n\
                db = postgres://app:s3cret@db:5432/x\n\
                plain line\n";
    std::fs::write(sb.dir.path().join("conf.txt"), text).unwrap();
    let v = sb.call("read_file", json!({"path": "conf.txt"})).await;
    let content = v["content"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(
        content,
        "1|key = «redacted:sk-…»\n\
         2|auth: Authorization: Bearer abcdef...3456\n\
         3|[REDACTED PRIVATE KEY]\n\
         6|db = postgres://app:***@db:5432/x\n\
         7|plain line"
    );
    // The file itself is untouched.
    assert_eq!(sb.read("conf.txt"), text);
}

/// A tree like the one the reference was observed on: `src/a.py` (two
/// matches), `src/sub/b.py` (one), `notes.txt` (one), a hidden file and a
/// project `.env`; `src/a.py` is the oldest, `notes.txt` the newest.
fn search_tree(sb: &Sandbox) {
    let root = sb.dir.path();
    std::fs::create_dir_all(root.join("src/sub")).unwrap();
    std::fs::create_dir_all(root.join(".hidden")).unwrap();
    let files = [
        (
            "src/a.py",
            "alpha\nneedle one\nbeta\ngamma\nneedle two\ndelta\n",
        ),
        ("src/sub/b.py", "x\nneedle three\n"),
        ("notes.txt", "needle txt\n"),
        (".hidden/h.py", "needle hidden\n"),
        (".env", "NEEDLE_TOKEN=abc\n"),
    ];
    let epoch = std::time::SystemTime::UNIX_EPOCH;
    for (i, (rel, text)) in files.iter().enumerate() {
        let path = root.join(rel);
        std::fs::write(&path, text).unwrap();
        let when = epoch + std::time::Duration::from_secs(1_000_000 + 100 * i as u64);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
}

#[tokio::test]
async fn search_files_finds_files_by_glob_newest_first() {
    let sb = Sandbox::new();
    search_tree(&sb);
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "*.py", "target": "files"}),
        )
        .await;
    assert_eq!(
        v,
        json!({"total_count": 2, "files": ["src/sub/b.py", "src/a.py"]})
    );
    // A bare name matches the end of names at any depth.
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "b.py", "target": "files"}),
        )
        .await;
    assert_eq!(v["files"], json!(["src/sub/b.py"]));
    // Paged.
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "*.py", "target": "files", "limit": 1}),
        )
        .await;
    assert_eq!(v["files"], json!(["src/sub/b.py"]), "{v}");
    assert_eq!(v["total_count"], 2);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["next_offset"], 1);
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "*.py", "target": "files", "limit": 1, "offset": 1}),
        )
        .await;
    assert_eq!(v, json!({"total_count": 2, "files": ["src/a.py"]}));
    // Nothing found: the count alone.
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "*.zz", "target": "files"}),
        )
        .await;
    assert_eq!(v, json!({"total_count": 0}));
}

/// The reference's legacy `target` names, which models trained on its older
/// prompts send: `grep` is `content`, `find` is `files`.
#[tokio::test]
async fn search_files_reads_the_legacy_target_names() {
    let sb = Sandbox::new();
    search_tree(&sb);
    for (legacy, current, pattern) in [("grep", "content", "needle"), ("find", "files", "*.py")] {
        let old = sb
            .call(
                "search_files",
                json!({"pattern": pattern, "target": legacy}),
            )
            .await;
        let new = sb
            .call(
                "search_files",
                json!({"pattern": pattern, "target": current}),
            )
            .await;
        assert_eq!(old, new, "{legacy}");
        assert!(old["total_count"].as_u64().unwrap() > 0, "{old}");
    }
    // Any other word is still refused, naming what is accepted.
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "x", "target": "everything"}),
        )
        .await;
    assert!(error_of(&v).contains("content"), "{v}");
}

fn error_of(v: &Value) -> &str {
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error in {v}"))
}

/// A tree with hidden and ignored files, as the reference (ripgrep) reads
/// it: `.ignore` is a rule anywhere, `.gitignore` only inside a git
/// repository; hidden folders are skipped, and a glob that names a hidden
/// or ignored file itself finds it.
fn hidden_and_ignored_tree(root: &std::path::Path) {
    for (rel, text) in [
        (".gitignore", "build/\n*.log\n"),
        (".ignore", "private/\n"),
        ("a.py", "a\n"),
        ("b.txt", "b\n"),
        (".hidden.py", "h\n"),
        (".hdir/x.py", "x\n"),
        ("build/out.py", "o\n"),
        ("run.log", "l\n"),
        ("private/p.py", "p\n"),
        ("sub/c.py", "c\n"),
        ("sub/.env", "TOKEN=abc\n"),
    ] {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

async fn found(sb: &Sandbox, args: Value) -> Vec<String> {
    let v = sb.call("search_files", args).await;
    let mut files: Vec<String> = v["files"]
        .as_array()
        .map(|a| a.iter().map(|f| f.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[tokio::test]
async fn search_files_reads_ignore_files_as_ripgrep_does() {
    let sb = Sandbox::new();
    let root = sb.dir.path();
    hidden_and_ignored_tree(root);
    let py = json!({"pattern": "*.py", "target": "files"});
    // Not a git repository: `.gitignore` is no rule, `.ignore` is.
    assert_eq!(
        found(&sb, py.clone()).await,
        [".hidden.py", "a.py", "build/out.py", "sub/c.py"]
    );
    let lines = sb
        .call(
            "search_files",
            json!({"pattern": "^o$", "output_mode": "files_only"}),
        )
        .await;
    assert_eq!(lines["files"], json!(["build/out.py"]), "{lines}");
    // A git repository: both are.
    std::fs::create_dir(root.join(".git")).unwrap();
    assert_eq!(found(&sb, py).await, [".hidden.py", "a.py", "sub/c.py"]);
    let lines = sb
        .call(
            "search_files",
            json!({"pattern": "^o$", "output_mode": "files_only"}),
        )
        .await;
    assert_eq!(lines["total_count"], 0, "{lines}");
    // A glob naming ignored files finds them.
    assert_eq!(
        found(&sb, json!({"pattern": "*.log", "target": "files"})).await,
        ["run.log"]
    );
}

/// Each page says the whole count (the reference's says how many it read to
/// fill the page: `offset + limit` at most), and files left out as secrets
/// are counted in `_omitted`, not in `total_count`.
#[tokio::test]
async fn search_files_pages_count_every_file() {
    let sb = Sandbox::new();
    hidden_and_ignored_tree(sb.dir.path());
    std::fs::create_dir(sb.dir.path().join(".git")).unwrap();
    let all = sb
        .call("search_files", json!({"pattern": "*", "target": "files"}))
        .await;
    let every: Vec<Value> = all["files"].as_array().unwrap().clone();
    assert_eq!(all["total_count"], every.len(), "{all}");
    assert!(
        all["_omitted"].as_str().unwrap().starts_with("1 file"),
        "{all}"
    );
    assert!(!every.iter().any(|f| f.as_str().unwrap().ends_with(".env")));
    let mut paged = Vec::new();
    for offset in (0..every.len()).step_by(3) {
        let page = sb
            .call(
                "search_files",
                json!({"pattern": "*", "target": "files", "limit": 3, "offset": offset}),
            )
            .await;
        assert_eq!(page["total_count"], every.len(), "{page}");
        paged.extend(page["files"].as_array().unwrap().iter().cloned());
    }
    assert_eq!(paged, every);
}

#[tokio::test]
async fn search_files_output_modes_offset_and_context() {
    let sb = Sandbox::new();
    search_tree(&sb);
    let v = sb.call("search_files", json!({"pattern": "needle"})).await;
    assert_eq!(
        v,
        json!({"total_count": 4, "matches": [
            {"path": "notes.txt", "line": 1, "content": "needle txt"},
            {"path": "src/a.py", "line": 2, "content": "needle one"},
            {"path": "src/a.py", "line": 5, "content": "needle two"},
            {"path": "src/sub/b.py", "line": 2, "content": "needle three"},
        ]})
    );
    // Credential stores met on the way are left out, and that is said.
    std::fs::create_dir_all(sb.dir.path().join(".hermes")).unwrap();
    std::fs::write(sb.dir.path().join(".hermes/auth.json"), "needle\n").unwrap();
    std::fs::write(sb.dir.path().join(".hermes/notes.md"), "needle\n").unwrap();
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "needle", "path": ".hermes"}),
        )
        .await;
    assert_eq!(v["total_count"], 1, "{v}");
    assert_eq!(v["matches"][0]["path"], ".hermes/notes.md");
    assert!(
        v["_omitted"].as_str().unwrap().starts_with("1 file(s)"),
        "{v}"
    );

    let v = sb
        .call(
            "search_files",
            json!({"pattern": "needle", "output_mode": "files_only"}),
        )
        .await;
    assert_eq!(v["files"], json!(["notes.txt", "src/a.py", "src/sub/b.py"]));
    assert_eq!(v["total_count"], 3);

    let v = sb
        .call(
            "search_files",
            json!({"pattern": "needle", "output_mode": "count"}),
        )
        .await;
    assert_eq!(
        v["counts"],
        json!({"notes.txt": 1, "src/a.py": 2, "src/sub/b.py": 1})
    );
    assert_eq!(v["total_count"], 4);

    let v = sb
        .call(
            "search_files",
            json!({"pattern": "needle", "limit": 2, "offset": 1}),
        )
        .await;
    let lines: Vec<_> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 5]);
    assert_eq!(v["next_offset"], 3);
    assert_eq!(v["truncated"], true);

    // Context lines come each once; five lines or more are grouped by file.
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "needle", "path": "src", "context": 1}),
        )
        .await;
    assert_eq!(v["total_count"], 8, "{v}");
    assert!(v.get("matches").is_none());
    assert!(v["matches_format"].as_str().unwrap().contains("grouped"));
    assert_eq!(
        v["matches_text"],
        "src/a.py\n  1: alpha\n  2: needle one\n  3: beta\n  4: gamma\n  5: needle two\n  \
         6: delta\nsrc/sub/b.py\n  1: x\n  2: needle three"
    );
    // The enum arguments are checked.
    let v = sb
        .call(
            "search_files",
            json!({"pattern": "x", "output_mode": "lines"}),
        )
        .await;
    assert!(v["error"].as_str().unwrap().contains("output_mode"), "{v}");
}

#[tokio::test]
async fn search_files_redacts_the_lines_it_returns() {
    let sb = Sandbox::new();
    std::fs::write(
        sb.dir.path().join("k.py"),
        "OPENAI = \"sk-abcdefghijklmnop1234\"\nplain = 1\n",
    )
    .unwrap();
    let v = sb.call("search_files", json!({"pattern": "OPENAI"})).await;
    assert_eq!(
        v["matches"][0]["content"], "OPENAI = \"«redacted:sk-…»\"",
        "{v}"
    );
}

#[tokio::test]
async fn read_file_answers_an_unchanged_page_briefly_then_refuses() {
    let sb = Sandbox::new();
    let ctx = sb.ctx.clone().with_task_id("reread-task");
    let call = |args: Value| {
        let ctx = ctx.clone();
        async move {
            let out = hermes_tools::registry()
                .dispatch("read_file", args, &ctx)
                .await;
            serde_json::from_str::<Value>(&out).unwrap()
        }
    };
    std::fs::write(sb.dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let v = call(json!({"path": "a.txt"})).await;
    assert_eq!(v["content"], "1|one\n2|two");
    let v = call(json!({"path": "a.txt"})).await;
    assert_eq!(v["status"], "unchanged", "{v}");
    assert_eq!(v["content_returned"], false);
    assert!(v.get("content").is_none());
    let v = call(json!({"path": "a.txt"})).await;
    assert!(
        v["error"].as_str().unwrap().contains("has not changed"),
        "{v}"
    );
    // Another page is a new read; so is the same page once the file changed.
    let v = call(json!({"path": "a.txt", "limit": 1})).await;
    assert_eq!(v["content"], "1|one");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::write(sb.dir.path().join("a.txt"), "one\nthree\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(sb.dir.path().join("a.txt"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    let v = call(json!({"path": "a.txt"})).await;
    assert_eq!(v["content"], "1|one\n2|three");
    // Another task reads it afresh.
    let v = sb.call("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(v["content"], "1|one\n2|three");
}

#[tokio::test]
async fn read_file_shows_notebook_cells_and_refuses_binaries() {
    let sb = Sandbox::new();
    let nb = json!({
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "Some text"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {},
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hello\n"]}],
             "source": ["print('hello')\n", "x = 1"]},
            {"cell_type": "raw", "metadata": {}, "source": "raw text\n"},
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": "y = 2"}
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    std::fs::write(sb.dir.path().join("nb.ipynb"), nb.to_string()).unwrap();
    let v = sb.call("read_file", json!({"path": "nb.ipynb"})).await;
    assert_eq!(
        v["content"],
        "1|# ── Markdown cell 1 ──\n2|# Title\n3|Some text\n4|\n5|# ── Code cell 1 ──\n\
         6|print('hello')\n7|x = 1\n8|\n9|# ── Raw cell ──\n10|raw text\n11|\n\
         12|# ── Code cell 2 ──\n13|y = 2",
        "{v}"
    );
    assert_eq!(v["extracted_document"], true);
    assert_eq!(v["total_lines"], 13);
    // Paged like any text.
    let v = sb
        .call(
            "read_file",
            json!({"path": "nb.ipynb", "offset": 6, "limit": 2}),
        )
        .await;
    assert_eq!(v["content"], "6|print('hello')\n7|x = 1");
    assert_eq!(v["next_offset"], 8);
    // Not a notebook inside: read as text.
    std::fs::write(sb.dir.path().join("bad.ipynb"), "not json\n").unwrap();
    let v = sb.call("read_file", json!({"path": "bad.ipynb"})).await;
    assert_eq!(v["content"], "1|not json");
    assert!(v.get("extracted_document").is_none());

    // Binary files: by extension without reading, or by their content.
    std::fs::write(sb.dir.path().join("img.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
    std::fs::write(sb.dir.path().join("blob.txt"), b"abc\0def").unwrap();
    for (path, why) in [("img.png", ".png"), ("blob.txt", "NUL")] {
        let v = sb.call("read_file", json!({"path": path})).await;
        let e = v["error"].as_str().unwrap();
        assert!(
            e.starts_with("Cannot read binary file") && e.contains(why),
            "{e}"
        );
    }
}
