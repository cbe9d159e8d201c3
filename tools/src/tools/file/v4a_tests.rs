#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// Files in memory, as the reference's applier was given them.
#[derive(Default)]
struct Mem(BTreeMap<String, String>);

impl Files for Mem {
    fn read(&mut self, path: &str) -> Result<String, String> {
        self.0.get(path).cloned().ok_or_else(|| "not found".into())
    }
    fn write(&mut self, path: &str, content: &str) -> Result<(), String> {
        self.0.insert(path.into(), content.into());
        Ok(())
    }
    fn delete(&mut self, path: &str) -> Result<(), String> {
        self.0
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| "missing".into())
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        let text = self.0.remove(from).ok_or("missing")?;
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
                // The same lines change (our diffs carry their own context).
                let changed = |d: &str| -> Vec<String> {
                    d.lines()
                        .filter(|l| {
                            (l.starts_with('+') || l.starts_with('-'))
                                && !l.starts_with("+++")
                                && !l.starts_with("---")
                        })
                        .map(str::to_owned)
                        .collect()
                };
                assert_eq!(
                    changed(&done.diff),
                    changed(case["diff"].as_str().unwrap()),
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
                // Each error names the same file the reference's did.
                for e in &errors {
                    let file = e.split(':').next().unwrap();
                    if e.contains("changes nothing") {
                        assert!(reference_error.contains("no changes"), "{name}");
                    } else {
                        assert!(
                            reference_error.contains(&format!("• {file}:")),
                            "{name}: {e}"
                        );
                    }
                }
                if reference_error.contains("Did you mean") {
                    assert!(errors[0].contains("Closest lines"), "{name}: {errors:?}");
                }
                if reference_error.contains("ambiguous") || reference_error.contains("Found 2") {
                    assert!(errors[0].contains("2"), "{name}: {errors:?}");
                }
            }
            Err(Failure::Partial { errors, .. }) => panic!("{name}: partial {errors:?}"),
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
    assert!(e.contains("split it"), "{e}");
    let hunks: String = std::iter::once("*** Update File: a\n".to_owned())
        .chain((0..=MAX_HUNKS).map(|i| format!("@@ h{i} @@\n-x{i}\n+y\n")))
        .collect();
    assert!(parse(&hunks).unwrap_err().contains("hunks"));
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
