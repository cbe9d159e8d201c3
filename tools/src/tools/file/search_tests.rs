//! Tests of `search_files` on temporary directories.

use std::fs;
use tempfile::TempDir;

use super::common::LINE_CUT_MARKER;
use super::error::FileError;
use super::ignore_budget::MAX_IGNORE_BYTES;
use super::search::{search, search_files, OutputMode, SearchRequest, MAX_SEARCH_LINE_BYTES};
use super::test_util::*;

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
            "matches": [{"path": "a.txt", "line": 1, "content": "x1"}]
        })
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
    // A folder with a plain ignore file is searched as usual (a git
    // repository, where a `.gitignore` is a rule).
    fs::create_dir_all(d.join("e/.git")).unwrap();
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
    let err = super::search::search_files(dir.path(), "x{50000}y", None, None, None).unwrap_err();
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
    let out =
        super::search::search_files_until(dir.path(), "needle", None, None, None, past).unwrap();
    assert!(out.truncated);
    assert!(out.total_count < 5, "{out:?}");
    assert!(
        out.hint.as_deref().unwrap_or("").contains("stopped after"),
        "{out:?}"
    );
    // With time to spare, the same search reads every file.
    let out = super::search::search_files(dir.path(), "needle", None, None, None).unwrap();
    assert_eq!(out.total_count, 5);
    assert!(!out.truncated);
}

#[test]
fn chunked_search_agrees_with_a_line_by_line_reading() {
    // Many chunks' worth of CRLF lines; every 7th ends with "hit".
    let dir = tmp();
    let text: String = (1..=30_000u64)
        .map(|i| {
            if i % 7 == 0 {
                format!("line {i} hit\r\n")
            } else {
                format!("line {i} miss\r\n")
            }
        })
        .collect();
    assert!(text.len() > 3 * 128 * 1024);
    put(dir.path(), "big.txt", &text);
    let want: Vec<u64> = (1..=30_000u64).filter(|i| i % 7 == 0).collect();
    // `$` before CRLF, and `^` at line starts, as on single lines.
    for pattern in ["hit$", "^line \\d+ hit", "hit"] {
        let out = search_files(dir.path(), pattern, None, None, Some(1000)).unwrap();
        assert_eq!(out.total_count, want.len() as u64, "{pattern}");
        let lines: Vec<u64> = out.matches.iter().map(|m| m.line).collect();
        assert_eq!(lines, want[..1000], "{pattern}");
        assert!(out.matches.iter().all(|m| m.content.ends_with("hit")));
    }
    // A match may not run from one line into the next.
    let out = search_files(dir.path(), "hit\\s+line", None, None, None).unwrap();
    assert_eq!(out.total_count, 0);
    // The last line without its line end is still a line.
    put(dir.path(), "end.txt", "a\nb hit");
    let out = search_files(dir.path(), "hit", Some("end.txt"), None, None).unwrap();
    assert_eq!(paths_and_lines(&out), vec![("end.txt".to_owned(), 2)]);
}

#[test]
fn many_files_come_in_path_order_and_page_alike() {
    // More files than are in flight at once, in several folders, in a
    // count that fills no whole batch; sizes vary so the readers finish
    // out of order, and empty files are mixed in.
    let dir = tmp();
    let mut want = Vec::new();
    for d in 0..7 {
        for f in 0..31 {
            let name = format!("d{d}/f{f:02}.txt");
            if f % 10 == 9 {
                put(dir.path(), &name, "");
                continue;
            }
            let hits = (d * 31 + f) % 4 + 1;
            let filler = "x".repeat(((d * 7 + f * 13) % 5) * 8_000);
            let text: String = (1..=hits).map(|i| format!("{filler}\nhit {i}\n")).collect();
            put(dir.path(), &name, &text);
            want.extend((1..=hits).map(|i| (name.clone(), 2 * i as u64)));
        }
    }
    let all = search_files(dir.path(), "hit", None, None, Some(1000)).unwrap();
    assert_eq!(paths_and_lines(&all), want);
    assert_eq!(all.total_count, want.len() as u64);
    assert!(!all.truncated);

    // Pages of 37 put together give the same lines.
    let mut paged = Vec::new();
    let mut offset = 0;
    loop {
        let req = SearchRequest {
            pattern: "hit",
            limit: Some(37),
            offset: Some(offset),
            ..Default::default()
        };
        let far = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let out = search(dir.path(), &req, None, far).unwrap();
        assert_eq!(out.total_count, want.len() as u64);
        paged.extend(paths_and_lines(&out));
        match out.next_offset {
            Some(next) => offset = next,
            None => break,
        }
        assert!(paged.len() <= want.len(), "paging does not end");
    }
    assert_eq!(paged, want);

    // files_only and count see the same files, in the same order.
    let mut files: Vec<String> = want.iter().map(|(p, _)| p.clone()).collect();
    files.dedup();
    for mode in [OutputMode::FilesOnly, OutputMode::Count] {
        let req = SearchRequest {
            pattern: "hit",
            limit: Some(1000),
            output_mode: mode,
            ..Default::default()
        };
        let far = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let out = search(dir.path(), &req, None, far).unwrap();
        let got: Vec<String> = if mode == OutputMode::Count {
            assert_eq!(out.total_count, want.len() as u64);
            out.counts.0.iter().map(|(p, _)| p.clone()).collect()
        } else {
            assert_eq!(out.total_count, files.len() as u64);
            out.files.clone()
        };
        assert_eq!(got, files, "{mode:?}");
    }
}
