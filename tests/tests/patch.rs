//! `patch` (both modes) and `write_file`'s checks, through the real
//! registry's dispatch on temp dirs. The expected files are what the
//! reference (hermes-agent 0.19.0) leaves on the same inputs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

struct Sandbox {
    dir: tempfile::TempDir,
    ctx: ToolContext,
}

impl Sandbox {
    fn new() -> Self {
        Self::with_task("t1")
    }

    fn with_task(task: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(Profile::new(dir.path().join(".hermes")), dir.path())
            .with_task_id(task);
        Sandbox { dir, ctx }
    }

    async fn call(&self, name: &str, args: Value) -> Value {
        let out = hermes_tools::registry()
            .dispatch(name, args, &self.ctx)
            .await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    fn bytes(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap()
    }

    fn read(&self, rel: &str) -> String {
        String::from_utf8(self.bytes(rel)).unwrap()
    }
}

fn error(v: &Value) -> &str {
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("expected an error: {v}"))
}

#[tokio::test]
async fn replace_forgives_indentation_drift_and_keeps_the_files_indentation() {
    let sb = Sandbox::new();
    sb.put(
        "a.py",
        "class A:\n        def f(self):\n            return 1\n",
    );
    // The model's copy is indented by 4, the file by 8.
    let v = sb
        .call(
            "patch",
            json!({"path": "a.py", "old_string": "    def f(self):\n        return 1",
                   "new_string": "    def f(self):\n        return 2\n    # done"}),
        )
        .await;
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["replacements"], 1);
    assert_eq!(v["match_strategy"], "line_trimmed");
    assert_eq!(
        sb.read("a.py"),
        "class A:\n        def f(self):\n            return 2\n        # done\n"
    );
    let diff = v["diff"].as_str().unwrap();
    assert!(
        diff.contains("-            return 1\n+            return 2\n"),
        "{diff}"
    );
    assert_eq!(v["files_modified"][0], sb.path("a.py").to_str().unwrap());
}

#[tokio::test]
async fn replace_keeps_crlf_and_the_byte_order_mark() {
    let sb = Sandbox::new();
    sb.put("w.txt", "a\r\n  b  \r\nc\r\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "w.txt", "old_string": "a\nb", "new_string": "A\nB"}),
        )
        .await;
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(sb.read("w.txt"), "A\r\nB\r\nc\r\n");

    sb.put("bom.txt", "\u{feff}hello\nworld\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "bom.txt", "old_string": "hello", "new_string": "HI"}),
        )
        .await;
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(sb.bytes("bom.txt"), b"\xef\xbb\xbfHI\nworld\n");

    // A mixed file takes the ending its start uses, throughout.
    sb.put("mixed.txt", "line1\r\nmid\nline3\r\n");
    sb.call(
        "patch",
        json!({"path": "mixed.txt", "old_string": "line1", "new_string": "L1"}),
    )
    .await;
    assert_eq!(sb.read("mixed.txt"), "L1\r\nmid\r\nline3\r\n");
}

#[tokio::test]
async fn replace_recovers_whitespace_unicode_and_escape_drift() {
    let sb = Sandbox::new();
    sb.put("ws.txt", "if (a &&\tb) {\n  go();\n}\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "ws.txt", "old_string": "a && b", "new_string": "a || b"}),
        )
        .await;
    assert_eq!(v["match_strategy"], "whitespace_normalized", "{v}");
    assert_eq!(sb.read("ws.txt"), "if (a || b) {\n  go();\n}\n");

    // Typographic quotes and dashes in the file, ASCII from the model:
    // the parts not changed keep their characters.
    sb.put("u.txt", "a \u{2014} b\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "u.txt", "old_string": "a -- b", "new_string": "a -- c"}),
        )
        .await;
    assert_eq!(v["match_strategy"], "unicode_normalized", "{v}");
    assert_eq!(sb.read("u.txt"), "a \u{2014} c\n");

    // `\n` written out by the model.
    sb.put("e.txt", "a\nb\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "e.txt", "old_string": "a\\nb", "new_string": "A\nB"}),
        )
        .await;
    assert_eq!(v["match_strategy"], "escape_normalized", "{v}");
    assert_eq!(sb.read("e.txt"), "A\nB\n");

    // Backslash-escaped quotes the file does not have: refused.
    sb.put("q.py", "print('it is')\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "q.py", "old_string": "print(\\'it is\\')  ",
                   "new_string": "print(\\'it was\\')"}),
        )
        .await;
    let e = error(&v);
    assert!(e.contains("\\'") && e.contains("escaping"), "{e}");
    assert_eq!(sb.read("q.py"), "print('it is')\n");
}

#[tokio::test]
async fn replace_failures_say_why_and_show_the_closest_lines() {
    let sb = Sandbox::new();
    let text = "import os\n\ndef handle_response(resp):\n    return resp\n\ndef handle_other(x):\n    pass\n";
    sb.put("h.py", text);
    let v = sb
        .call(
            "patch",
            json!({"path": "h.py", "old_string": "def handle_request(req, extra):", "new_string": "x"}),
        )
        .await;
    let e = error(&v);
    assert!(e.contains("Could not find old_string in h.py"), "{e}");
    // The reference's two closest places, numbered as read_file does.
    assert!(
        e.contains("   3| def handle_response(resp):\n   4|     return resp\n   5| \n---\n   4|     return resp"),
        "{e}"
    );
    assert_eq!(sb.read("h.py"), text);

    sb.put("d.txt", "x = 1\nx = 1\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "d.txt", "old_string": "x = 1", "new_string": "x = 2"}),
        )
        .await;
    assert!(error(&v).contains("2 times") && error(&v).contains("replace_all"));
    let v = sb
        .call(
            "patch",
            json!({"path": "d.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}),
        )
        .await;
    assert_eq!(v["replacements"], 2, "{v}");
    assert_eq!(sb.read("d.txt"), "x = 2\nx = 2\n");

    for (args, needle) in [
        (
            json!({"old_string": "a", "new_string": "b"}),
            "path is required",
        ),
        (
            json!({"path": "d.txt"}),
            "old_string and new_string are required",
        ),
        (
            json!({"mode": "patch"}),
            "patch (the V4A patch text) is required",
        ),
        (
            json!({"path": "d.txt", "old_string": "", "new_string": "b"}),
            "old_string must not be empty",
        ),
    ] {
        let v = sb.call("patch", args).await;
        assert!(error(&v).contains(needle), "{v}");
    }
    let v = sb
        .call("patch", json!({"mode": "sed", "path": "d.txt"}))
        .await;
    assert!(error(&v).contains("mode"), "{v}");
}

#[tokio::test]
async fn v4a_adds_updates_deletes_and_moves() {
    let sb = Sandbox::new();
    sb.put("a.py", "def f():\n    return 1\n");
    sb.put("old.txt", "x\ny\n");
    sb.put("m.txt", "moving\n");
    sb.put("w.txt", "one\r\ntwo\r\n");
    let patch = "*** Begin Patch\n\
                 *** Update File: a.py\n@@ def f @@\n def f():\n-    return 1\n+    return 2\n\
                 *** Add File: new/n.txt\n+hello\n+world\n\
                 *** Delete File: old.txt\n\
                 *** Move File: m.txt -> moved/m.txt\n\
                 *** Update File: w.txt\n one\n-two\n+2\n\
                 *** End Patch";
    let v = sb
        .call("patch", json!({"mode": "patch", "patch": patch}))
        .await;
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(sb.read("a.py"), "def f():\n    return 2\n");
    assert_eq!(sb.read("new/n.txt"), "hello\nworld");
    assert!(!sb.path("old.txt").exists());
    assert!(!sb.path("m.txt").exists());
    assert_eq!(sb.read("moved/m.txt"), "moving\n");
    assert_eq!(sb.read("w.txt"), "one\r\n2\r\n", "CRLF kept");
    assert_eq!(v["files_created"], json!(["new/n.txt"]));
    assert_eq!(v["files_deleted"], json!(["old.txt"]));
    let modified: Vec<&str> = v["files_modified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(modified.len(), 6, "every header path, resolved: {v}");
    assert!(modified.iter().all(|p| Path::new(p).is_absolute()));
    let diff = v["diff"].as_str().unwrap();
    assert!(diff.contains("-    return 1\n+    return 2\n"), "{diff}");
    assert!(
        diff.contains("--- /dev/null\n+++ b/new/n.txt\n+hello\n+world"),
        "{diff}"
    );
    assert!(diff.contains("# Moved: m.txt -> moved/m.txt"), "{diff}");
    assert!(diff.contains("--- a/old.txt\n+++ /dev/null\n"), "{diff}");
}

#[tokio::test]
async fn v4a_changes_nothing_unless_every_operation_applies() {
    let sb = Sandbox::new();
    sb.put("i.txt", "a\nb\n");
    sb.put("j.txt", "c\n");
    let patch = "*** Begin Patch\n*** Update File: i.txt\n-a\n+A\n\
                 *** Update File: j.txt\n-zzz\n+y\n*** Delete File: gone.txt\n*** End Patch";
    let v = sb
        .call("patch", json!({"mode": "patch", "patch": patch}))
        .await;
    let e = error(&v);
    assert!(e.contains("no file was changed"), "{e}");
    assert!(e.contains("j.txt: hunk 1"), "{e}");
    assert!(e.contains("gone.txt: no such file to delete"), "{e}");
    assert_eq!(sb.read("i.txt"), "a\nb\n");

    for (patch, needle) in [
        (
            "*** Begin Patch\n*** Update File: i.txt\n a\n b\n*** End Patch",
            "changes nothing",
        ),
        (
            "*** Begin Patch\n*** Update File: i.txt\n*** End Patch",
            "no hunks",
        ),
        (
            "*** Begin Patch\n*** Move File: i.txt -> j.txt\n*** End Patch",
            "already exists",
        ),
        (
            "*** Begin Patch\n*** Update File: i.txt\n@@ b @@\n+x\n@@ a @@\n+y\n-zz\n*** End Patch",
            "hunk 2",
        ),
    ] {
        let v = sb
            .call("patch", json!({"mode": "patch", "patch": patch}))
            .await;
        assert!(error(&v).contains(needle), "{needle}: {v}");
    }
    assert_eq!(sb.read("i.txt"), "a\nb\n");
    assert_eq!(sb.read("j.txt"), "c\n");
}

#[tokio::test]
async fn v4a_refuses_dotdot_in_headers_before_touching_anything() {
    let sb = Sandbox::new();
    sb.put("inner/a.txt", "a\n");
    let patch =
        "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File: ../escape.txt\n+y\n*** End Patch";
    let v = sb
        .call("patch", json!({"mode": "patch", "patch": patch}))
        .await;
    assert!(error(&v).contains("'..'"), "{v}");
    assert!(!sb.path("ok.txt").exists());
    assert!(!sb.dir.path().parent().unwrap().join("escape.txt").exists());
}

#[tokio::test]
async fn write_file_refuses_content_that_does_not_parse() {
    let sb = Sandbox::new();
    for (name, content, format, line, column) in [
        ("c.json", "{\n  \"a\": 1,\n  \"b\" 2\n}\n", "JSON", 3, 7),
        ("c.yaml", "a: 1\nb: [1, 2\nc: 3\n", "YAML", 3, 2),
        ("c.toml", "a = 1\nb = \n", "TOML", 2, 5),
    ] {
        let v = sb
            .call("write_file", json!({"path": name, "content": content}))
            .await;
        let e = error(&v);
        assert!(e.contains(&format!("not valid {format}")), "{name}: {e}");
        assert!(
            e.contains(&format!("line {line}, column {column}")),
            "{name}: {e}"
        );
        assert!(!sb.path(name).exists(), "{name}: nothing written");
    }
    // Valid content, including what only a syntax check accepts: several
    // YAML documents and custom tags.
    for (name, content) in [
        ("ok.json", "{\"a\": [1, 2]}"),
        ("ok.yml", "a: !Ref b\n---\nc: 2\n"),
        ("ok.toml", "[t]\nk = \"v\"\n"),
        ("free.txt", "{ not json"),
    ] {
        let v = sb
            .call("write_file", json!({"path": name, "content": content}))
            .await;
        assert!(v["error"].is_null(), "{name}: {v}");
        assert_eq!(sb.read(name), content);
    }
    // patch writes through the same check.
    sb.put("p.json", "{\"a\": 1}\n");
    let v = sb
        .call(
            "patch",
            json!({"path": "p.json", "old_string": "\"a\": 1", "new_string": "\"a\": 1,"}),
        )
        .await;
    assert!(error(&v).contains("not valid JSON"), "{v}");
    assert_eq!(sb.read("p.json"), "{\"a\": 1}\n");
}

#[tokio::test]
async fn write_file_keeps_crlf_and_bom_of_the_file_it_replaces() {
    let sb = Sandbox::new();
    sb.put("w.txt", "\u{feff}one\r\ntwo\r\n");
    let v = sb
        .call(
            "write_file",
            json!({"path": "w.txt", "content": "uno\ndos\n"}),
        )
        .await;
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(sb.bytes("w.txt"), b"\xef\xbb\xbfuno\r\ndos\r\n");
    assert_eq!(v["bytes_written"], 13);
}

/// Sets a file's modification time `secs` after the epoch.
fn touch(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .unwrap();
}

#[tokio::test]
async fn writes_warn_when_the_file_changed_since_it_was_read() {
    let sb = Sandbox::with_task("stale-test");
    sb.put("s.txt", "v1\n");
    touch(&sb.path("s.txt"), 1_000_000);
    // Not read yet: nothing to compare with.
    let v = sb
        .call("write_file", json!({"path": "s.txt", "content": "v2\n"}))
        .await;
    assert!(v["_warning"].is_null(), "{v}");
    let v = sb.call("read_file", json!({"path": "s.txt"})).await;
    assert!(v["error"].is_null(), "{v}");
    // Someone else edits it.
    std::fs::write(sb.path("s.txt"), "v3\n").unwrap();
    touch(&sb.path("s.txt"), 2_000_000);
    let v = sb
        .call("write_file", json!({"path": "s.txt", "content": "v4\n"}))
        .await;
    let w = v["_warning"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        w.contains("s.txt") && w.contains("changed after you last read it"),
        "{w}"
    );
    assert_eq!(sb.read("s.txt"), "v4\n", "the write still happens");
    // Our own write is not a change to warn about.
    let v = sb
        .call(
            "patch",
            json!({"path": "s.txt", "old_string": "v4", "new_string": "v5"}),
        )
        .await;
    assert!(v["_warning"].is_null(), "{v}");
    // A change after that is, for patch too; another session is not warned.
    touch(&sb.path("s.txt"), 3_000_000);
    let v = sb
        .call(
            "patch",
            json!({"path": "s.txt", "old_string": "v5", "new_string": "v6"}),
        )
        .await;
    assert!(v["_warning"].as_str().is_some(), "{v}");
    let other = ToolContext::new(Profile::new(sb.dir.path().join(".hermes")), sb.dir.path())
        .with_task_id("another");
    let out = hermes_tools::registry()
        .dispatch(
            "write_file",
            json!({"path": "s.txt", "content": "v7\n"}),
            &other,
        )
        .await;
    assert!(!out.contains("_warning"), "{out}");
}

#[tokio::test]
async fn every_path_of_a_v4a_patch_passes_the_write_guard_before_anything_is_written() {
    let sb = Sandbox::new();
    sb.put(".hermes/.env", "KEY=1\n");
    sb.put("a.txt", "a\n");
    std::os::unix::fs::symlink(sb.path(".hermes/.env"), sb.path("innocent.txt")).unwrap();
    for patch in [
        "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File: .hermes/.env\n+HERMES_ALLOW_PRIVATE_URLS=true\n*** End Patch",
        "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Update File: innocent.txt\n-KEY=1\n+KEY=2\n*** End Patch",
        "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Move File: a.txt -> .hermes/config.yaml\n*** End Patch",
        "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Delete File: .hermes/.env\n*** End Patch",
    ] {
        let v = sb.call("patch", json!({"mode": "patch", "patch": patch})).await;
        assert!(v["error"].is_string(), "{patch}: {v}");
        assert!(!sb.path("ok.txt").exists(), "{patch}");
    }
    assert_eq!(sb.read(".hermes/.env"), "KEY=1\n");
    assert_eq!(sb.read("a.txt"), "a\n");
    // Mode replace, through the symlink: refused the same way.
    let v = sb
        .call(
            "patch",
            json!({"path": "innocent.txt", "old_string": "KEY=1", "new_string": "KEY=2"}),
        )
        .await;
    assert!(v["error"].is_string(), "{v}");
    assert_eq!(sb.read(".hermes/.env"), "KEY=1\n");
}
