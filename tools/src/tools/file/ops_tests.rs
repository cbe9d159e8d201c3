//! Tests of the file tool logic (`read_file`, `write_file`, `patch`, `search_files`) on temporary directories.

use std::fs;
use std::path::Path;

use super::ops::{
    patch, read_file, search_files, write_file, FileError, LINE_CUT_MARKER, MAX_EDIT_FILE_BYTES,
    MAX_IGNORE_BYTES, MAX_READ_CHARS, MAX_SEARCH_LINE_BYTES,
};
use tempfile::TempDir;

fn tmp() -> TempDir {
    match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("cannot create a temp dir: {e}"),
    }
}

fn put(dir: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, bytes).unwrap();
}

fn numbered(range: std::ops::RangeInclusive<u64>) -> String {
    range
        .map(|i| format!("{i}|l{i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn many_lines(n: u64) -> String {
    (1..=n).map(|i| format!("l{i}\n")).collect()
}

// ---------------------------------------------------------------------------
// read_file
// ---------------------------------------------------------------------------

#[test]
fn read_numbers_lines_from_one() {
    let dir = tmp();
    put(dir.path(), "a.txt", "line1\nline2\nline3\n");
    let out = read_file(dir.path(), "a.txt", None, None).unwrap();
    assert_eq!(out.content, "1|line1\n2|line2\n3|line3");
    assert_eq!(out.total_lines, 3);
    assert_eq!(out.file_size, 18);
    assert!(!out.truncated);
    assert_eq!(out.next_offset, None);
    assert_eq!(out.hint, None);
}

#[test]
fn read_counts_a_last_line_without_newline() {
    let dir = tmp();
    put(dir.path(), "a.txt", "a\nb");
    let out = read_file(dir.path(), "a.txt", None, None).unwrap();
    assert_eq!(out.content, "1|a\n2|b");
    assert_eq!(out.total_lines, 2);
}

#[test]
fn read_empty_file() {
    let dir = tmp();
    put(dir.path(), "e.txt", "");
    let out = read_file(dir.path(), "e.txt", None, None).unwrap();
    assert_eq!(out.content, "");
    assert_eq!(out.total_lines, 0);
    assert!(!out.truncated);
}

#[test]
fn read_paginates() {
    let dir = tmp();
    put(dir.path(), "m.txt", many_lines(3000));

    let out = read_file(dir.path(), "m.txt", Some(2990), Some(5)).unwrap();
    assert_eq!(out.content, numbered(2990..=2994));
    assert_eq!(out.total_lines, 3000);
    assert!(out.truncated);
    assert_eq!(out.next_offset, Some(2995));
    let hint = out.hint.unwrap();
    assert!(hint.contains("offset=2995"), "{hint}");
    assert!(hint.contains("2990-2994 of 3000"), "{hint}");

    // The last page is not truncated.
    let out = read_file(dir.path(), "m.txt", Some(2995), Some(50)).unwrap();
    assert_eq!(out.content, numbered(2995..=3000));
    assert!(!out.truncated);
    assert_eq!(out.next_offset, None);

    // Default limit is 500.
    let out = read_file(dir.path(), "m.txt", None, None).unwrap();
    assert_eq!(out.content, numbered(1..=500));
    assert_eq!(out.next_offset, Some(501));

    // Limit is capped at 2000.
    let out = read_file(dir.path(), "m.txt", Some(1), Some(5000)).unwrap();
    assert_eq!(out.content.lines().count(), 2000);
    assert_eq!(out.next_offset, Some(2001));

    // Offset 0 and limit 0 are raised to 1.
    let out = read_file(dir.path(), "m.txt", Some(0), Some(0)).unwrap();
    assert_eq!(out.content, "1|l1");
    assert_eq!(out.next_offset, Some(2));
}

#[test]
fn read_offset_past_end_is_empty_with_hint() {
    let dir = tmp();
    put(dir.path(), "m.txt", many_lines(10));
    let out = read_file(dir.path(), "m.txt", Some(50), None).unwrap();
    assert_eq!(out.content, "");
    assert_eq!(out.total_lines, 10);
    assert!(!out.truncated);
    assert!(out.hint.unwrap().contains("past the end"));
}

#[test]
fn read_cuts_long_lines_by_characters() {
    let dir = tmp();
    put(
        dir.path(),
        "long.txt",
        format!("{}\nshort\n{}\n", "x".repeat(2500), "é".repeat(2001)),
    );
    let out = read_file(dir.path(), "long.txt", None, None).unwrap();
    let lines: Vec<&str> = out.content.split('\n').collect();
    assert_eq!(lines[0], format!("1|{}{LINE_CUT_MARKER}", "x".repeat(2000)));
    assert_eq!(lines[1], "2|short");
    assert_eq!(lines[2], format!("3|{}{LINE_CUT_MARKER}", "é".repeat(2000)));
    assert!(!out.truncated);
}

#[test]
fn read_keeps_to_the_character_budget() {
    let dir = tmp();
    let line = "y".repeat(150);
    let text: String = (0..2000).map(|_| format!("{line}\n")).collect();
    put(dir.path(), "wide.txt", text);
    let out = read_file(dir.path(), "wide.txt", None, Some(2000)).unwrap();
    assert!(out.content.chars().count() <= MAX_READ_CHARS);
    let shown = out.content.split('\n').count() as u64;
    assert!(shown < 2000);
    assert!(out.truncated);
    assert_eq!(out.next_offset, Some(shown + 1));
    assert!(out.hint.unwrap().contains(&format!("offset={}", shown + 1)));
}

#[test]
fn read_strips_bom_keeps_cr_and_replaces_bad_bytes() {
    let dir = tmp();
    put(
        dir.path(),
        "bom.txt",
        b"\xEF\xBB\xBFfirst\r\nsecond \xff\xfe end\n",
    );
    let out = read_file(dir.path(), "bom.txt", None, None).unwrap();
    assert_eq!(out.content, "1|first\r\n2|second \u{FFFD}\u{FFFD} end");
}

#[test]
fn read_refuses_binary_files() {
    let dir = tmp();
    put(dir.path(), "blob.txt", b"abc\x00\x01\x02def".repeat(50));
    let err = read_file(dir.path(), "blob.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("blob.txt") && msg.contains("binary"), "{msg}");

    // Mostly invalid UTF-8, no NUL.
    put(
        dir.path(),
        "noise.txt",
        [0xffu8, 0xfe, 0x80, 0x81].repeat(100),
    );
    let err = read_file(dir.path(), "noise.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");

    // Known binary extension, whatever the content.
    put(dir.path(), "pic.png", "not really a png");
    let err = read_file(dir.path(), "pic.png", None, None).unwrap_err();
    assert!(err.to_string().contains(".png"), "{err}");
}

#[test]
fn read_missing_file_names_path_and_suggests() {
    let dir = tmp();
    put(dir.path(), "long.txt", "x\n");
    put(dir.path(), "config.yaml", "x\n");
    put(dir.path(), "unrelated.md", "x\n");
    put(dir.path(), "sub/zzz.rs", "x\n");

    let err = read_file(dir.path(), "lng.txt", None, None).unwrap_err();
    let FileError::FileNotFound { path, similar } = &err else {
        panic!("wrong error: {err:?}");
    };
    assert_eq!(path, "lng.txt");
    assert_eq!(similar.first().map(String::as_str), Some("long.txt"));
    assert!(!similar.iter().any(|s| s == "unrelated.md"));
    let msg = err.to_string();
    assert!(msg.starts_with("File not found: lng.txt"), "{msg}");
    assert!(msg.contains("long.txt"), "{msg}");

    let err = read_file(dir.path(), "config.yml", None, None).unwrap_err();
    assert!(err.to_string().contains("config.yaml"), "{err}");

    let err = read_file(dir.path(), "sub/zzz.txt", None, None).unwrap_err();
    let FileError::FileNotFound { similar, .. } = err else {
        panic!("wrong error");
    };
    assert_eq!(similar, vec!["sub/zzz.rs".to_owned()]);

    // A missing folder gives no suggestions but still names the path.
    let err = read_file(dir.path(), "nowhere/x.txt", None, None).unwrap_err();
    assert_eq!(err.to_string(), "File not found: nowhere/x.txt");
}

#[test]
fn read_refuses_directories_and_empty_paths() {
    let dir = tmp();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let err = read_file(dir.path(), "sub", None, None).unwrap_err();
    assert!(matches!(err, FileError::IsDirectory { .. }), "{err:?}");
    assert!(err.to_string().contains("search_files"));
    let err = read_file(dir.path(), "", None, None).unwrap_err();
    assert_eq!(err, FileError::EmptyPath);
}

#[cfg(unix)]
#[test]
fn read_refuses_device_files() {
    let dir = tmp();
    let err = read_file(dir.path(), "/dev/null", None, None).unwrap_err();
    assert!(matches!(err, FileError::Special { .. }), "{err:?}");
    assert!(err.to_string().contains("/dev/null is under /dev"), "{err}");
}

#[test]
fn read_accepts_absolute_paths() {
    let dir = tmp();
    let other = tmp();
    put(other.path(), "abs.txt", "hello\n");
    let abs = other.path().join("abs.txt");
    let out = read_file(dir.path(), abs.to_str().unwrap(), None, None).unwrap();
    assert_eq!(out.content, "1|hello");
}

#[test]
fn read_output_serializes_without_empty_options() {
    let dir = tmp();
    put(dir.path(), "a.txt", "x\n");
    let out = read_file(dir.path(), "a.txt", None, None).unwrap();
    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"content": "1|x", "total_lines": 1, "file_size": 2, "truncated": false})
    );
}

// ---------------------------------------------------------------------------
// write_file
// ---------------------------------------------------------------------------

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn write_creates_parents_and_reports_bytes() {
    let dir = tmp();
    let out = write_file(dir.path(), "new/dir/x.txt", "héllo\nworld\n").unwrap();
    assert_eq!(out.bytes_written, 13);
    assert!(out.dirs_created);
    assert!(out.created);
    assert_eq!(
        out.resolved_path,
        dir.path().join("new/dir/x.txt").to_string_lossy()
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("new/dir/x.txt")).unwrap(),
        "héllo\nworld\n"
    );
    assert!(leftovers(&dir.path().join("new/dir")).is_empty());

    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["bytes_written"], 13);
    assert_eq!(json["dirs_created"], true);
}

#[test]
fn write_overwrites_atomically_and_keeps_permissions() {
    let dir = tmp();
    put(dir.path(), "f.txt", "old content that is longer\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir.path().join("f.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    }
    let out = write_file(dir.path(), "f.txt", "new\n").unwrap();
    assert!(!out.created);
    assert!(!out.dirs_created);
    assert_eq!(out.bytes_written, 4);
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "new\n"
    );
    assert!(leftovers(dir.path()).is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.path().join("f.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}

#[test]
fn a_new_file_gets_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp();
    let mode = |name: &str| {
        fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    // Not a temporary file's private 0600: 0666 less the umask, as any
    // program creating the file would give it.
    fs::write(dir.path().join("usual.txt"), "x").unwrap();
    write_file(dir.path(), "new.txt", "x").unwrap();
    assert_eq!(mode("new.txt"), mode("usual.txt"));
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn write_empty_content_and_refuse_directory() {
    let dir = tmp();
    let out = write_file(dir.path(), "empty.txt", "").unwrap();
    assert_eq!(out.bytes_written, 0);
    assert_eq!(fs::read(dir.path().join("empty.txt")).unwrap(), b"");

    fs::create_dir(dir.path().join("d")).unwrap();
    let err = write_file(dir.path(), "d", "x").unwrap_err();
    assert!(matches!(err, FileError::IsDirectory { .. }), "{err:?}");
    assert_eq!(
        write_file(dir.path(), "", "x").unwrap_err(),
        FileError::EmptyPath
    );
}

#[cfg(unix)]
#[test]
fn write_goes_through_symlinks() {
    let dir = tmp();
    put(dir.path(), "real.txt", "old\n");
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
    write_file(dir.path(), "link.txt", "new\n").unwrap();
    assert!(fs::symlink_metadata(dir.path().join("link.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        fs::read_to_string(dir.path().join("real.txt")).unwrap(),
        "new\n"
    );
}

#[test]
fn write_under_a_file_fails_clearly() {
    let dir = tmp();
    put(dir.path(), "plain", "x");
    let err = write_file(dir.path(), "plain/child.txt", "x").unwrap_err();
    assert!(err.to_string().contains("plain/child.txt"), "{err}");
}

// ---------------------------------------------------------------------------
// patch
// ---------------------------------------------------------------------------

#[test]
fn patch_replaces_once_with_diff() {
    let dir = tmp();
    put(dir.path(), "x.txt", "héllo\nworld\nagain\n");
    let out = patch(dir.path(), "x.txt", "world", "there", false).unwrap();
    assert_eq!(out.replacements, 1);
    assert_eq!(
        fs::read_to_string(dir.path().join("x.txt")).unwrap(),
        "héllo\nthere\nagain\n"
    );
    assert_eq!(
        out.diff,
        "--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n héllo\n-world\n+there\n again\n"
    );
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn patch_diff_has_separate_hunks_and_context() {
    let dir = tmp();
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    put(dir.path(), "f.txt", &text);
    let out = patch(dir.path(), "f.txt", "line 2\n", "", false).unwrap();
    assert_eq!(
        out.diff,
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,4 @@\n line 1\n-line 2\n line 3\n line 4\n line 5\n"
    );
    put(dir.path(), "g.txt", "a\nX\nb\nc\nd\ne\nf\ng\nh\ni\nX\nj\n");
    let out = patch(dir.path(), "g.txt", "X", "Y", true).unwrap();
    assert_eq!(out.replacements, 2);
    assert_eq!(out.diff.matches("@@ -").count(), 2, "{}", out.diff);
    assert!(
        out.diff.contains("@@ -1,5 +1,5 @@\n a\n-X\n+Y\n b\n"),
        "{}",
        out.diff
    );
    assert!(
        out.diff
            .contains("@@ -8,5 +8,5 @@\n g\n h\n i\n-X\n+Y\n j\n"),
        "{}",
        out.diff
    );
}

#[test]
fn patch_text_not_found() {
    let dir = tmp();
    put(dir.path(), "x.txt", "hello\n");
    let err = patch(dir.path(), "x.txt", "zzz", "y", false).unwrap_err();
    assert!(matches!(err, FileError::TextNotFound { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("x.txt") && msg.contains("read_file"), "{msg}");
    assert_eq!(
        fs::read_to_string(dir.path().join("x.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn patch_not_found_hints_at_crlf() {
    let dir = tmp();
    put(dir.path(), "w.txt", "one\r\ntwo\r\n");
    let err = patch(dir.path(), "w.txt", "one\ntwo", "x", false).unwrap_err();
    assert!(err.to_string().contains("CRLF"), "{err}");
}

#[test]
fn patch_not_unique_says_how_many() {
    let dir = tmp();
    put(dir.path(), "dup.txt", "a foo b foo c foo\nfoo\n");
    let err = patch(dir.path(), "dup.txt", "foo", "bar", false).unwrap_err();
    assert_eq!(
        err,
        FileError::NotUnique {
            path: "dup.txt".into(),
            count: 4
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("4 times"), "{msg}");
    assert!(
        msg.contains("context") && msg.contains("replace_all"),
        "{msg}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("dup.txt")).unwrap(),
        "a foo b foo c foo\nfoo\n"
    );
}

#[test]
fn patch_replace_all() {
    let dir = tmp();
    put(dir.path(), "dup.txt", "a foo b foo c foo\nfoo\n");
    let out = patch(dir.path(), "dup.txt", "foo", "bar", true).unwrap();
    assert_eq!(out.replacements, 4);
    assert_eq!(
        fs::read_to_string(dir.path().join("dup.txt")).unwrap(),
        "a bar b bar c bar\nbar\n"
    );
    assert_eq!(
        out.diff,
        "--- a/dup.txt\n+++ b/dup.txt\n@@ -1,2 +1,2 @@\n-a foo b foo c foo\n-foo\n+a bar b bar c bar\n+bar\n"
    );
}

#[test]
fn patch_unicode() {
    let dir = tmp();
    put(dir.path(), "u.txt", "名前: 日本 😀\nnext\n");
    let out = patch(dir.path(), "u.txt", "日本 😀", "中文 🎉", false).unwrap();
    assert_eq!(out.replacements, 1);
    assert_eq!(
        fs::read_to_string(dir.path().join("u.txt")).unwrap(),
        "名前: 中文 🎉\nnext\n"
    );
    assert!(
        out.diff.contains("-名前: 日本 😀\n+名前: 中文 🎉\n"),
        "{}",
        out.diff
    );
}

#[test]
fn patch_joining_lines_and_end_without_newline() {
    let dir = tmp();
    put(dir.path(), "j.txt", "ab\ncd\nlast");
    let out = patch(dir.path(), "j.txt", "b\n", "", false).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("j.txt")).unwrap(),
        "acd\nlast"
    );
    assert_eq!(
        out.diff,
        "--- a/j.txt\n+++ b/j.txt\n@@ -1,3 +1,2 @@\n-ab\n-cd\n+acd\n last\n\\ No newline at end of file\n"
    );
}

#[test]
fn patch_argument_and_file_errors() {
    let dir = tmp();
    put(dir.path(), "x.txt", "hello\n");
    assert_eq!(
        patch(dir.path(), "x.txt", "", "y", false).unwrap_err(),
        FileError::EmptyOldString
    );
    assert_eq!(
        patch(dir.path(), "x.txt", "hello", "hello", false).unwrap_err(),
        FileError::NoChange
    );
    let err = patch(dir.path(), "nope.txt", "a", "b", false).unwrap_err();
    assert!(
        err.to_string().starts_with("File not found: nope.txt"),
        "{err}"
    );

    put(dir.path(), "bin.txt", b"a\x00b".repeat(20));
    let err = patch(dir.path(), "bin.txt", "a", "b", true).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");

    put(dir.path(), "latin1.txt", b"caf\xe9 au lait\n");
    let err = patch(dir.path(), "latin1.txt", "lait", "miel", false).unwrap_err();
    assert!(matches!(err, FileError::NotUtf8 { .. }), "{err:?}");
}

// ---------------------------------------------------------------------------
// search_files
// ---------------------------------------------------------------------------

fn search_tree() -> TempDir {
    let dir = tmp();
    let d = dir.path();
    put(d, ".gitignore", "ignored/\n*.log\n");
    put(d, ".ignore", "secret.txt\n");
    put(d, "src/a.rs", "fn main() {}\nlet foo = 1;\n");
    put(d, "ignored/b.rs", "foo here\n");
    put(d, "x.log", "foo log\n");
    put(d, "secret.txt", "foo secret\n");
    put(d, ".hidden/h.txt", "foo hidden\n");
    put(d, "c.txt", "foo\nfoo2\nfoo3\n");
    put(d, "bin.dat", b"foo\x00bin\n");
    dir
}

fn paths_and_lines(out: &super::ops::SearchOutput) -> Vec<(String, u64)> {
    out.matches
        .iter()
        .map(|m| (m.path.clone(), m.line))
        .collect()
}

#[test]
fn search_respects_ignore_files_hidden_and_binary() {
    let dir = search_tree();
    let out = search_files(dir.path(), "foo", None, None, None).unwrap();
    assert_eq!(
        paths_and_lines(&out),
        vec![
            ("c.txt".to_owned(), 1),
            ("c.txt".to_owned(), 2),
            ("c.txt".to_owned(), 3),
            ("src/a.rs".to_owned(), 2),
        ]
    );
    assert_eq!(out.total_count, 4);
    assert!(!out.truncated);
    assert_eq!(out.matches[3].content, "let foo = 1;");
}

#[test]
fn search_with_glob_and_sub_path() {
    let dir = search_tree();
    let out = search_files(dir.path(), "foo", None, Some("*.rs"), None).unwrap();
    assert_eq!(paths_and_lines(&out), vec![("src/a.rs".to_owned(), 2)]);

    // The .gitignore above the searched folder still applies.
    put(dir.path(), "src/y.log", "foo in a log\n");
    let out = search_files(dir.path(), "foo", Some("src"), None, None).unwrap();
    assert_eq!(paths_and_lines(&out), vec![("src/a.rs".to_owned(), 2)]);

    let out = search_files(dir.path(), "foo", Some("./"), None, None).unwrap();
    assert_eq!(out.total_count, 4);
    assert_eq!(out.matches[0].path, "c.txt");

    let out = search_files(dir.path(), "foo\\d", Some("c.txt"), None, None).unwrap();
    assert_eq!(
        paths_and_lines(&out),
        vec![("c.txt".to_owned(), 2), ("c.txt".to_owned(), 3)]
    );

    let err = search_files(dir.path(), "foo", Some("nonexist"), None, None).unwrap_err();
    assert_eq!(
        err,
        FileError::SearchPathNotFound {
            path: "nonexist".into()
        }
    );
    assert!(err.to_string().contains("nonexist"));
}

#[test]
fn search_invalid_regex_names_pattern() {
    let dir = search_tree();
    let err = search_files(dir.path(), "foo(", None, None, None).unwrap_err();
    let FileError::InvalidRegex { pattern, message } = &err else {
        panic!("wrong error: {err:?}");
    };
    assert_eq!(pattern, "foo(");
    assert!(message.contains("unclosed group"), "{message}");
    let msg = err.to_string();
    assert!(
        msg.contains("\"foo(\"") && msg.contains("unclosed group"),
        "{msg}"
    );
}

#[test]
fn search_invalid_glob() {
    let dir = search_tree();
    let err = search_files(dir.path(), "foo", None, Some("[abc"), None).unwrap_err();
    assert!(matches!(err, FileError::InvalidGlob { .. }), "{err:?}");
    assert!(err.to_string().contains("[abc"));
}

#[test]
fn search_limit_and_truncation() {
    let dir = tmp();
    put(dir.path(), "a.txt", "hit\n".repeat(10));
    put(dir.path(), "b.txt", "hit\n".repeat(60));

    let out = search_files(dir.path(), "hit", None, None, Some(3)).unwrap();
    assert_eq!(out.matches.len(), 3);
    assert_eq!(out.total_count, 70);
    assert!(out.truncated);
    assert!(out.hint.as_deref().unwrap().contains("3 of 70"));
    assert_eq!(
        paths_and_lines(&out),
        vec![
            ("a.txt".into(), 1),
            ("a.txt".into(), 2),
            ("a.txt".into(), 3)
        ]
    );

    // Default limit is 50.
    let out = search_files(dir.path(), "hit", None, None, None).unwrap();
    assert_eq!(out.matches.len(), 50);
    assert_eq!(out.matches[10].path, "b.txt");
    assert!(out.truncated);

    // Exactly at the limit: not truncated.
    let out = search_files(dir.path(), "hit", Some("a.txt"), None, Some(10)).unwrap();
    assert_eq!(out.matches.len(), 10);
    assert!(!out.truncated);
    assert_eq!(out.hint, None);

    // Limit 0 counts as 1.
    let out = search_files(dir.path(), "hit", None, None, Some(0)).unwrap();
    assert_eq!(out.matches.len(), 1);
}

#[test]
fn search_cuts_long_lines_and_strips_line_endings() {
    let dir = tmp();
    put(
        dir.path(),
        "w.txt",
        format!("needle {}\r\nend needle\r\n", "é".repeat(600)),
    );
    let out = search_files(dir.path(), "needle$", None, None, None).unwrap();
    assert_eq!(paths_and_lines(&out), vec![("w.txt".into(), 2)]);
    assert_eq!(out.matches[0].content, "end needle");

    let out = search_files(dir.path(), "^needle", None, None, None).unwrap();
    let content = &out.matches[0].content;
    assert!(content.ends_with(LINE_CUT_MARKER));
    assert_eq!(
        content.chars().count(),
        500 + LINE_CUT_MARKER.chars().count()
    );
}

#[test]
fn search_output_shape() {
    let dir = tmp();
    put(dir.path(), "a.txt", "x1\n");
    let out = search_files(dir.path(), "x\\d", None, None, None).unwrap();
    assert_eq!(
        serde_json::to_value(&out).unwrap(),
        serde_json::json!({
            "total_count": 1,
            "matches": [{"path": "a.txt", "line": 1, "content": "x1"}],
            "truncated": false
        })
    );
}

// ---------------------------------------------------------------------------
// Bounded memory and special files
// ---------------------------------------------------------------------------

/// A file of `len` bytes: `head`, then a hole (NUL bytes that take no disk).
fn sparse(dir: &Path, rel: &str, head: &[u8], len: u64) {
    let path = dir.join(rel);
    fs::write(&path, head).unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn fifo(dir: &Path, rel: &str) -> std::path::PathBuf {
    let path = dir.join(rel);
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    path
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fs::symlink_metadata(path).unwrap().file_type().is_fifo()
}

/// Runs `f` on a thread and fails the test if it has not answered within
/// 20 s; the FIFO is then opened for writing, which frees a reader blocked
/// in `open`, so the test ends either way.
fn answers_in_time<T: Send + 'static>(fifo: &Path, f: impl FnOnce() -> T + Send + 'static) -> T {
    use std::os::unix::fs::OpenOptionsExt;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(20)) {
        Ok(v) => v,
        Err(_) => {
            let _ = fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                .open(fifo);
            panic!("still blocked on the FIFO after 20 s");
        }
    }
}

fn special_err(err: &FileError, action: &str) {
    let FileError::Special { action: a, .. } = err else {
        panic!("expected a special-file refusal, got {err:?}");
    };
    assert_eq!(*a, action, "{err}");
}

/// `../` enough times to climb from `dir` to `/`.
fn up_to_root(dir: &Path) -> String {
    "../".repeat(fs::canonicalize(dir).unwrap().components().count())
}

#[test]
fn read_refuses_a_fifo_without_opening_it() {
    let dir = tmp();
    let pipe = fifo(dir.path(), "pipe");
    let base = dir.path().to_owned();
    let err = answers_in_time(&pipe, move || read_file(&base, "pipe", None, None)).unwrap_err();
    special_err(&err, "read");
    let msg = err.to_string();
    assert!(msg.contains("pipe") && msg.contains("FIFO"), "{msg}");
    // patch reads first, so it is refused the same way, nothing written.
    let base = dir.path().to_owned();
    let err = answers_in_time(&pipe, move || patch(&base, "pipe", "a", "b", true)).unwrap_err();
    special_err(&err, "read");
    assert!(is_fifo(&pipe));
}

#[test]
fn read_refuses_kernel_files_whatever_the_path() {
    let dir = tmp();
    std::os::unix::fs::symlink("/proc/self/status", dir.path().join("status")).unwrap();
    std::os::unix::fs::symlink("/proc", dir.path().join("p")).unwrap();
    let up = up_to_root(dir.path());
    for path in [
        "/proc/self/status".to_owned(),
        "status".to_owned(),
        "p/self/status".to_owned(),
        "p/self/../self/status".to_owned(),
        format!("{up}proc/self/status"),
        "/dev/zero".to_owned(),
    ] {
        let err = read_file(dir.path(), &path, None, None).unwrap_err();
        special_err(&err, "read");
        let msg = err.to_string();
        assert!(msg.contains(&path), "{msg}");
        assert!(
            msg.contains(" is under /proc") || msg.contains("under /dev"),
            "{msg}"
        );
    }
    let err = read_file(dir.path(), "/proc", None, None).unwrap_err();
    special_err(&err, "read");
}

#[test]
fn read_refuses_sockets() {
    let dir = tmp();
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
    let err = read_file(dir.path(), "sock", None, None).unwrap_err();
    special_err(&err, "read");
    assert!(err.to_string().contains("a socket"), "{err}");
}

#[test]
fn read_stops_at_the_first_hole_of_a_huge_sparse_file() {
    let dir = tmp();
    // 1 GiB of NUL with no newline: refused from its first bytes.
    sparse(dir.path(), "holes.txt", b"", 1 << 30);
    let err = read_file(dir.path(), "holes.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");
    // Text past the sniffed sample, then the hole: refused at the hole,
    // on the line holding it, without reading on to the end.
    sparse(dir.path(), "head.txt", &b"x".repeat(20_000), 1 << 30);
    let err = read_file(dir.path(), "head.txt", None, None).unwrap_err();
    let FileError::Binary { reason, .. } = &err else {
        panic!("expected binary, got {err:?}");
    };
    assert!(
        reason.contains("NUL") && reason.contains("line 1"),
        "{reason}"
    );
    sparse(dir.path(), "lines.txt", b"one\ntwo\n", 1 << 30);
    // The sample sees the hole already.
    let err = read_file(dir.path(), "lines.txt", None, None).unwrap_err();
    assert!(matches!(err, FileError::Binary { .. }), "{err:?}");
}

#[test]
fn read_of_one_huge_line_is_one_cut_line() {
    let dir = tmp();
    put(dir.path(), "one.txt", "y".repeat(3 << 20));
    let out = read_file(dir.path(), "one.txt", None, None).unwrap();
    assert_eq!(out.total_lines, 1);
    assert_eq!(out.file_size, 3 << 20);
    assert_eq!(
        out.content,
        format!(
            "1|{}{LINE_CUT_MARKER}",
            "y".repeat(super::ops::MAX_LINE_CHARS)
        )
    );
}

#[test]
fn search_drops_a_file_as_soon_as_a_nul_is_read() {
    let dir = tmp();
    sparse(dir.path(), "holes.txt", b"", 1 << 30);
    sparse(dir.path(), "head.txt", &b"needle ".repeat(3000), 1 << 30);
    // Matching lines, then a NUL far past the sniffed sample.
    let mut mixed = "needle\n".repeat(2000).into_bytes();
    mixed.extend_from_slice(b"bin\x00ary\n");
    put(dir.path(), "mixed.txt", mixed);
    put(dir.path(), "text.txt", "a needle\n");
    let out = search_files(dir.path(), "needle", None, None, None).unwrap();
    assert_eq!(paths_and_lines(&out), vec![("text.txt".into(), 1)]);
    assert_eq!(out.total_count, 1);
    assert_eq!(out.hint, None);
}

#[test]
fn search_matches_long_lines_on_their_capped_prefix() {
    let dir = tmp();
    let mut line = "early ".to_owned();
    line.push_str(&"z".repeat(MAX_SEARCH_LINE_BYTES));
    line.push_str(" late\nlate early\n");
    put(dir.path(), "min.js", line);
    let out = search_files(dir.path(), "early", None, None, None).unwrap();
    assert_eq!(
        paths_and_lines(&out),
        vec![("min.js".into(), 1), ("min.js".into(), 2)]
    );
    assert!(out.matches[0].content.ends_with(LINE_CUT_MARKER));
    let hint = out.hint.unwrap();
    assert!(
        hint.contains("1 line(s) longer than") && hint.contains(&MAX_SEARCH_LINE_BYTES.to_string()),
        "{hint}"
    );
    // Text past the cap is not searched; the next line is, numbered right.
    let out = search_files(dir.path(), "late", None, None, None).unwrap();
    assert_eq!(paths_and_lines(&out), vec![("min.js".into(), 2)]);
    assert!(!out.truncated);
}

#[test]
fn search_never_reads_special_files() {
    let dir = tmp();
    let d = dir.path();
    put(d, "ok.txt", "Name: needle\n");
    put(d, "empty.txt", "");
    fifo(d, "pipe");
    let _listener = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    std::os::unix::fs::symlink("/proc", d.join("p")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
    std::os::unix::fs::symlink("/proc/self/status", d.join("status")).unwrap();
    let base = d.to_owned();
    let out = answers_in_time(&d.join("pipe"), move || {
        search_files(&base, "Name|needle", None, None, None)
    })
    .unwrap();
    assert_eq!(paths_and_lines(&out), vec![("ok.txt".into(), 1)]);

    let up = up_to_root(d);
    for path in ["/proc", "/proc/self", "p", "p/self", "/sys", "/dev"] {
        let err = search_files(d, "x", Some(path), None, None).unwrap_err();
        special_err(&err, "search");
    }
    let err = search_files(d, "x", Some(&format!("{up}proc")), None, None).unwrap_err();
    special_err(&err, "search");
    let err = search_files(d, "x", Some("pipe"), None, None).unwrap_err();
    special_err(&err, "search");
    assert!(err.to_string().contains("FIFO"), "{err}");
}

#[test]
fn write_never_replaces_special_files() {
    let dir = tmp();
    let d = dir.path();
    let pipe = fifo(d, "pipe");
    let _listener = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    std::os::unix::fs::symlink("/proc", d.join("p")).unwrap();
    std::os::unix::fs::symlink("/proc/self/comm", d.join("comm")).unwrap();
    for path in ["pipe", "sock"] {
        let err = write_file(d, path, "x").unwrap_err();
        special_err(&err, "write");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    assert!(is_fifo(&pipe));
    for path in [
        "comm",
        "p/self/comm",
        "/dev/hermes-never-written",
        "/sys/hermes-never-written",
        // `..` out of folders still to be made, then through the symlink.
        "new/../p/x",
        "new/deeper/../../p/x",
    ] {
        let err = write_file(d, path, "x").unwrap_err();
        special_err(&err, "write");
    }
    assert!(!d.join("new").exists(), "no folder was made");
    assert!(!Path::new("/dev/hermes-never-written").exists());
    assert!(leftovers(d).is_empty());
}

#[test]
fn write_refuses_content_over_the_limit() {
    let dir = tmp();
    let limit = MAX_EDIT_FILE_BYTES as usize;
    let err = write_file(dir.path(), "big.txt", &"a".repeat(limit + 1)).unwrap_err();
    assert_eq!(
        err,
        FileError::ContentTooLarge {
            path: "big.txt".into(),
            size: limit as u64 + 1
        }
    );
    assert!(err.to_string().contains("10 MiB"), "{err}");
    assert!(!dir.path().join("big.txt").exists());
    let out = write_file(dir.path(), "big.txt", &"a".repeat(limit)).unwrap();
    assert_eq!(out.bytes_written, MAX_EDIT_FILE_BYTES);
}

#[test]
fn patch_refuses_files_over_the_limit_unread() {
    let dir = tmp();
    // Text at the start (so it is not binary), then a hole up to the limit + 1.
    sparse(
        dir.path(),
        "big.txt",
        &b"a\n".repeat(10_000),
        MAX_EDIT_FILE_BYTES + 1,
    );
    let err = patch(dir.path(), "big.txt", "a", "b", false).unwrap_err();
    assert_eq!(
        err,
        FileError::FileTooLarge {
            path: "big.txt".into(),
            size: MAX_EDIT_FILE_BYTES + 1
        }
    );
    assert!(err.to_string().contains("terminal"), "{err}");
}

#[test]
fn patch_refuses_a_replacement_too_large_before_building_it() {
    let dir = tmp();
    // The case: 1 MB of `a`, each replaced by 4 KB (4 GB if built).
    put(dir.path(), "a.txt", "a".repeat(1 << 20));
    let err = patch(dir.path(), "a.txt", "a", &"b".repeat(4096), true).unwrap_err();
    assert_eq!(
        err,
        FileError::ResultTooLarge {
            path: "a.txt".into(),
            count: 1 << 20,
            size: 1 << 32
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains("1048576 occurrences") && msg.contains("nothing was changed"),
        "{msg}"
    );
    assert_eq!(fs::read(dir.path().join("a.txt")).unwrap().len(), 1 << 20);

    // Exactly at the limit is allowed; one byte more is not.
    let new_string = "b".repeat(10 * 1024);
    put(dir.path(), "edge.txt", "a".repeat(1024));
    let out = patch(dir.path(), "edge.txt", "a", &new_string, true).unwrap();
    assert_eq!(out.replacements, 1024);
    let written = fs::metadata(dir.path().join("edge.txt")).unwrap().len();
    assert_eq!(written, MAX_EDIT_FILE_BYTES);
    put(dir.path(), "over.txt", format!("{}c", "a".repeat(1024)));
    let err = patch(dir.path(), "over.txt", "a", &new_string, true).unwrap_err();
    assert!(
        matches!(err, FileError::ResultTooLarge { size, .. } if size == MAX_EDIT_FILE_BYTES + 1),
        "{err:?}"
    );
}

#[test]
fn patch_diff_of_many_changes_is_cut_and_counts_the_rest() {
    let dir = tmp();
    put(dir.path(), "n.txt", "word\n".repeat(3000));
    let out = patch(dir.path(), "n.txt", "word", "term", true).unwrap();
    assert_eq!(out.replacements, 3000);
    // Whole: 2 header lines, 1 hunk header, 3000 removed, 3000 added.
    let (shown, marker) = out.diff.trim_end().rsplit_once('\n').unwrap();
    let rest: usize = marker
        .strip_prefix("... [diff truncated, ")
        .and_then(|m| m.strip_suffix(" more lines]"))
        .unwrap_or_else(|| panic!("no cut marker: {marker}"))
        .parse()
        .unwrap();
    assert_eq!(shown.lines().count() + rest, 6003);
    assert!(shown.chars().count() < super::ops::MAX_DIFF_CHARS);
    assert!(shown.starts_with("--- a/n.txt\n+++ b/n.txt\n@@ -1,3000 +1,3000 @@\n-word\n"));
    assert_eq!(
        fs::read_to_string(dir.path().join("n.txt")).unwrap(),
        "term\n".repeat(3000)
    );
}

#[test]
fn search_does_not_enter_folders_whose_ignore_files_are_unsafe() {
    let dir = tmp();
    let d = dir.path();
    for sub in ["", "a/", "b/", "c/", "d/", "e/", "wt/"] {
        put(d, &format!("{sub}f.txt"), "needle\n");
    }
    // The walk would block on these, or read them whole.
    fifo(d, "a/.gitignore");
    std::os::unix::fs::symlink("/dev/zero", d.join("b/.ignore")).unwrap();
    sparse(d, "c/.gitignore", b"*.log\n", 3 << 20);
    fs::create_dir_all(d.join("d/.git/info")).unwrap();
    fifo(d, "d/.git/info/exclude");
    // A worktree whose git folder's `commondir` is a FIFO.
    let gitdir = tmp();
    fifo(gitdir.path(), "commondir");
    put(
        d,
        "wt/.git",
        format!("gitdir: {}\n", gitdir.path().display()),
    );
    // A folder with a plain ignore file is searched as usual.
    put(d, "e/.gitignore", "*.log\n");
    put(d, "e/x.log", "needle\n");

    let base = d.to_owned();
    let out = answers_in_time(&d.join("a/.gitignore"), move || {
        search_files(&base, "needle", None, None, None)
    })
    .unwrap();
    assert_eq!(
        paths_and_lines(&out),
        vec![("e/f.txt".into(), 1), ("f.txt".into(), 1)]
    );
    let hint = out.hint.unwrap();
    assert!(hint.starts_with("5 folder(s) were not searched"), "{hint}");
    assert!(hint.contains("a/.gitignore is a FIFO"), "{hint}");

    // As the search path (or below one), it is refused.
    for path in ["a", "a/f.txt", "c"] {
        let err = search_files(d, "needle", Some(path), None, None).unwrap_err();
        special_err(&err, "search");
        assert!(err.to_string().contains("the ignore file"), "{err}");
    }
    let err = search_files(d, "needle", Some("c"), None, None).unwrap_err();
    assert!(err.to_string().contains("-byte budget"), "{err}");
}

#[test]
fn search_keeps_the_ignore_files_it_holds_within_budget() {
    let dir = tmp();
    let d = dir.path();
    // Each file is within budget; nested, the inner one's sum is not.
    let patterns = |n: u64| -> String {
        (0..)
            .map(|i| format!("*pattern{i}*.tmp\n"))
            .scan(0u64, |len, line| {
                *len += line.len() as u64;
                (*len <= n).then_some(line)
            })
            .collect()
    };
    put(d, "outer/.gitignore", patterns(MAX_IGNORE_BYTES * 2 / 3));
    put(d, "outer/f.txt", "needle\n");
    put(d, "outer/inner/.gitignore", patterns(MAX_IGNORE_BYTES / 2));
    put(d, "outer/inner/f.txt", "needle\n");
    // A sibling with no ignore files of its own is within budget.
    put(d, "outer/plain/f.txt", "needle\n");
    // Once the walk has left `outer`, its ignore file is no longer held.
    put(d, "z/.gitignore", patterns(MAX_IGNORE_BYTES * 2 / 3));
    put(d, "z/f.txt", "needle\n");
    let out = search_files(d, "needle", None, None, None).unwrap();
    assert_eq!(
        paths_and_lines(&out),
        vec![
            ("outer/f.txt".into(), 1),
            ("outer/plain/f.txt".into(), 1),
            ("z/f.txt".into(), 1)
        ]
    );
    let hint = out.hint.unwrap();
    assert!(
        hint.starts_with("1 folder(s) were not searched") && hint.contains("outer/inner"),
        "{hint}"
    );
    let err = search_files(d, "needle", Some("outer/inner"), None, None).unwrap_err();
    special_err(&err, "search");
}

#[test]
fn a_pattern_that_compiles_too_large_is_refused_with_a_reason() {
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    let err = super::ops::search_files(dir.path(), "x{50000}y", None, None, None).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("compiles to more than"), "{text}");
    assert!(text.contains("x{50000}y"), "{text}");
}

#[test]
fn a_search_past_its_deadline_stops_and_says_so() {
    let dir = TempDir::new().unwrap();
    for i in 0..5 {
        fs::write(dir.path().join(format!("f{i}.txt")), "needle\n").unwrap();
    }
    let past = std::time::Instant::now();
    let out = super::ops::search_files_until(dir.path(), "needle", None, None, None, past).unwrap();
    assert!(out.truncated);
    assert!(out.total_count < 5, "{out:?}");
    assert!(
        out.hint.as_deref().unwrap_or("").contains("stopped after"),
        "{out:?}"
    );
    // With time to spare, the same search reads every file.
    let out = super::ops::search_files(dir.path(), "needle", None, None, None).unwrap();
    assert_eq!(out.total_count, 5);
    assert!(!out.truncated);
}
