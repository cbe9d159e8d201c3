//! `patch` through `dispatch_json`, on a file whose content comes from the
//! input. Layout: one flags byte, then `content 0xFF old_string 0xFF
//! new_string` (0xFF never occurs in UTF-8; a missing part is empty).
//!
//! Checked, beyond "no panic, no hang, one JSON object":
//! - an error leaves the file byte for byte as it was;
//! - a success with `replace_all` false means `old_string` occurred exactly
//!   once and the file now holds `new_string` in its place, the rest
//!   unchanged; with `replace_all` true, every occurrence was replaced;
//! - `replacements`, when reported, is the number of occurrences.
//!
//! Those exact checks hold when the exact strategy matched in a file without
//! `\r` or a byte-order mark. A forgiving strategy (`match_strategy` in the
//! result, as the reference's matcher reports it: line-trimmed, whitespace-
//! normalized, ...) or a file whose line endings and BOM are kept is checked
//! for what holds of every success: a UTF-8 file and at least one replacement
//! (a `\r` in either string counts too: the file keeps its line endings).
#![no_main]

use hermes_fuzz::{block_on, check_result, is_error, registry, Sandbox};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};

/// The file patched; the other paths must fail without touching it.
const FILE: &str = "f.txt";
const PATHS: &[&str] = &[FILE, FILE, "missing.txt", "."];

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.splitn(3, |&b| b == 0xFF);
    let content = parts.next().unwrap_or_default();
    let old_string = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let new_string = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let replace_all = flags & 1 != 0;
    let path = PATHS[usize::from(flags >> 3) % PATHS.len()];

    let mut args = Map::new();
    args.insert("path".into(), json!(path));
    args.insert("old_string".into(), json!(old_string));
    args.insert("new_string".into(), json!(new_string));
    match (flags >> 1) & 3 {
        0 => {} // omitted: false
        1 => {
            args.insert("replace_all".into(), json!(replace_all));
        }
        // The model's usual mistakes, which coercion repairs.
        2 => {
            args.insert("replace_all".into(), json!(replace_all.to_string()));
        }
        _ => {
            args.insert(
                "replace_all".into(),
                json!(if replace_all { "True" } else { "false" }),
            );
        }
    }
    let replace_all = replace_all && (flags >> 1) & 3 != 0;
    let raw = Value::Object(args).to_string();

    let sandbox = Sandbox::get();
    sandbox.reset(&[(FILE, content)]);
    let session = sandbox.session();
    let result = block_on(registry().dispatch_json("patch", &raw, &session.context()));
    session.end();
    let result = check_result("patch", &raw, &result);
    let after = sandbox.read(FILE);

    if is_error(&result) {
        assert!(
            after.as_deref() == Some(content),
            "patch failed ({result}) but changed {FILE}: {content:?} -> {after:?}"
        );
        return;
    }
    assert_eq!(path, FILE, "patch of {path:?} succeeded: {result}");
    let before = std::str::from_utf8(content)
        .unwrap_or_else(|_| panic!("patch succeeded on a file that is not UTF-8: {result}"));
    assert!(
        !old_string.is_empty(),
        "patch succeeded with an empty old_string: {result}"
    );
    let after = after.unwrap_or_else(|| panic!("{FILE} is gone after a successful patch"));
    let after = String::from_utf8(after)
        .unwrap_or_else(|e| panic!("patch left {FILE} not UTF-8: {:?}", e.as_bytes()));
    let forgiving = result.get("match_strategy").is_some_and(|s| !s.is_null())
        || before.contains('\r')
        || old_string.contains('\r')
        || new_string.contains('\r')
        || before.starts_with('\u{feff}');
    if forgiving {
        if let Some(reported) = result.get("replacements") {
            assert!(
                reported.as_u64().is_some_and(|n| n >= 1),
                "patch succeeded with {reported} replacements: {result}"
            );
        }
        return;
    }
    let count = before.matches(old_string.as_str()).count();
    if let Some(reported) = result.get("replacements") {
        assert_eq!(
            reported.as_u64(),
            Some(count as u64),
            "patch reported {reported} replacements; {old_string:?} occurs {count} times in {before:?}"
        );
    }
    let expected = if replace_all {
        assert!(
            count >= 1,
            "patch succeeded without an occurrence: {result}"
        );
        before.replace(old_string.as_str(), &new_string)
    } else {
        assert_eq!(
            count, 1,
            "patch without replace_all succeeded on {count} occurrences of {old_string:?} in {before:?}"
        );
        let at = before.find(old_string.as_str()).unwrap_or_default();
        format!(
            "{}{}{}",
            &before[..at],
            new_string,
            &before[at + old_string.len()..]
        )
    };
    assert!(
        after == expected,
        "patch({raw}) on {before:?} left {after:?}, expected {expected:?}"
    );
});
