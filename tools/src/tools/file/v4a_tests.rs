#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// Files in memory, as the reference's applier was given them.
#[derive(Default)]
struct Mem(BTreeMap<String, String>);

/// What [`Mem`] answers for a file it does not hold.
fn not_found(path: &str) -> FileError {
    FileError::FileNotFound {
        path: path.into(),
        similar: Vec::new(),
    }
}

impl Files for Mem {
    fn read(&mut self, path: &str) -> Result<String, FileError> {
        self.0.get(path).cloned().ok_or_else(|| not_found(path))
    }
    fn write(&mut self, path: &str, content: &str) -> Result<(), FileError> {
        self.0.insert(path.into(), content.into());
        Ok(())
    }
    fn delete(&mut self, path: &str) -> Result<(), FileError> {
        self.0
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), FileError> {
        let text = self.0.remove(from).ok_or_else(|| not_found(from))?;
        self.0.insert(to.into(), text);
        Ok(())
    }
}

fn map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// Patches run through the reference's parser and applier on the same
/// files (`testdata/v4a_cases.json`): same files after, same lists of
/// what changed, an error where it had one (and of the same kind).
#[test]
fn same_results_as_the_reference() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("testdata/v4a_cases.json")).unwrap();
    assert!(cases.len() >= 19);
    check_against_reference(cases);
}

/// 250 random patches (updates with context, removed, added and hinted
/// hunks taken from the files, some drifted or missing; adds, deletes and
/// moves, some onto existing or missing files; with and without the
/// begin/end markers), made and run through the reference's parser and
/// applier by a script; its outputs are the fixture.
#[test]
fn same_results_as_the_reference_on_random_patches() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("testdata/v4a_random.json")).unwrap();
    assert_eq!(cases.len(), 250);
    check_against_reference(cases);
}

fn check_against_reference(cases: Vec<Value>) {
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let parsed = parse(case["patch"].as_str().unwrap());
        if case["parse_error"].as_bool().unwrap() {
            assert!(parsed.is_err(), "{name}: {parsed:?}");
            continue;
        }
        let ops = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut files = Mem(map(&case["files"]));
        let got = apply(&ops, &mut files, u64::MAX);
        assert_eq!(files.0, map(&case["after"]), "{name}: files after");
        let reference_error = case["error"].as_str().unwrap_or_default();
        match got {
            Ok(done) => {
                assert!(case["success"].as_bool().unwrap(), "{name}: {done:?}");
                assert_eq!(done.modified, strings(&case["modified"]), "{name}");
                assert_eq!(done.created, strings(&case["created"]), "{name}");
                assert_eq!(done.deleted, strings(&case["deleted"]), "{name}");
                // The same lines come and go. (Our line differ may pair
                // them otherwise than difflib, and our diffs carry their own
                // context: the net count of each line added is compared.)
                let net = |d: &str| -> BTreeMap<String, i64> {
                    let mut counts = BTreeMap::new();
                    for l in d.lines() {
                        if l.starts_with("+++") || l.starts_with("---") {
                            continue;
                        }
                        let (sign, text) = match l.split_at_checked(1) {
                            Some(("+", t)) => (1, t),
                            Some(("-", t)) => (-1, t),
                            _ => continue,
                        };
                        *counts.entry(text.to_owned()).or_insert(0) += sign;
                    }
                    counts.retain(|_, n| *n != 0);
                    counts
                };
                assert_eq!(
                    net(&done.diff),
                    net(case["diff"].as_str().unwrap()),
                    "{name}: diff"
                );
            }
            Err(Failure::Invalid(errors)) => {
                assert!(!case["success"].as_bool().unwrap(), "{name}");
                assert!(
                    reference_error.starts_with("Patch validation failed"),
                    "{name}"
                );
                assert_eq!(
                    errors.len(),
                    reference_error.matches("\n  • ").count(),
                    "{name}: {errors:?}"
                );
                // Each error names the same file as the reference's, in the
                // same order, with the same count when it says how many.
                let theirs: Vec<&str> = reference_error.split("\n  • ").skip(1).collect();
                for (e, t) in errors.iter().zip(&theirs) {
                    if e.contains("changes nothing") {
                        assert!(t.contains("no changes"), "{name}: {e} vs {t}");
                        continue;
                    }
                    let file = e.split(':').next().unwrap();
                    assert!(t.starts_with(&format!("{file}:")), "{name}: {e} vs {t}");
                    let count = t
                        .split_once(" occurrences)")
                        .map(|(head, _)| head)
                        .or_else(|| t.split_once(" matches for").map(|(head, _)| head))
                        .and_then(|head| head.rsplit([' ', '(']).next());
                    if let Some(n) = count {
                        assert!(e.contains(&format!("{n} times")), "{name}: {e} vs {t}");
                    }
                    if t.contains("Did you mean") {
                        assert!(e.contains("Closest lines"), "{name}: {e} vs {t}");
                    }
                }
            }
            Err(Failure::Partial { errors, done }) => {
                assert!(
                    reference_error.starts_with("Apply phase failed"),
                    "{name}: {errors:?} vs {reference_error}"
                );
                assert_eq!(
                    errors.len(),
                    reference_error.matches("\n  • ").count(),
                    "{name}: {errors:?}"
                );
                assert_eq!(done.modified, strings(&case["modified"]), "{name}");
                assert_eq!(done.created, strings(&case["created"]), "{name}");
                assert_eq!(done.deleted, strings(&case["deleted"]), "{name}");
            }
        }
    }
}

#[test]
fn header_paths_cover_every_operation_and_both_ends_of_a_move() {
    let patch = "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** Add File: b/c\n+z\n\
                 *** Delete File: d\n***Move File: e -> f/g\n*** End Patch";
    assert_eq!(header_paths(patch), ["a", "b/c", "d", "e", "f/g"]);
}

#[test]
fn too_many_operations_or_hunks_are_refused_unapplied() {
    let many: String = (0..=MAX_OPERATIONS)
        .map(|i| format!("*** Delete File: f{i}\n"))
        .collect();
    let e = parse(&many).unwrap_err();
    assert_eq!(e, ParseError::TooLarge);
    assert_eq!(
        e.to_string(),
        "the patch has more than 200 file operations or 2000 hunks; split it into several patches"
    );
    let hunks: String = std::iter::once("*** Update File: a\n".to_owned())
        .chain((0..=MAX_HUNKS).map(|i| format!("@@ h{i} @@\n-x{i}\n+y\n")))
        .collect();
    assert_eq!(parse(&hunks).unwrap_err(), ParseError::TooLarge);
}

#[test]
fn incomplete_operations_are_named_in_patch_order() {
    let e = parse("*** Update File: a\n*** Move File: b -> \n*** Delete File: \n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Update File \"a\" has no hunks (lines starting with ' ', '-' or '+'); \
         Move File \"b\" has no destination (write it as 'from -> to'); \
         an operation has an empty file path"
    );
}

#[test]
fn many_unmatched_hunks_share_one_budget() {
    // 1000 hunks of 20 lines against a 5000-line file, none matching:
    // each would run the similarity strategies; the shared budget ends it.
    let text: String = (0..5000).map(|i| format!("row {i} of data\n")).collect();
    let mut patch = String::from("*** Update File: big\n");
    for h in 0..1000 {
        patch.push_str("@@\n");
        for l in 0..20 {
            patch.push_str(&format!("-nothing {h} {l} here\n"));
        }
        patch.push_str("+x\n");
    }
    let ops = parse(&patch).unwrap();
    let mut files = Mem(BTreeMap::from([("big".to_owned(), text.clone())]));
    let started = std::time::Instant::now();
    // A small budget here; the hostile suite runs the real one.
    let got = apply_within(&ops, &mut files, u64::MAX, 2_000_000);
    let Err(Failure::Invalid(errors)) = got else {
        panic!("{got:?}");
    };
    assert!(errors.iter().any(|e| e.contains("too long")), "{errors:?}");
    assert_eq!(files.0["big"], text);
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
}
