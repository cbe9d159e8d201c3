//! Hostile-input cases: the runtime's own limits, as `call` sees them.

use std::time::Duration;

use serde_json::json;

use crate::harness;

/// A page of text whose JSON escaping doubles it: within `read_file`'s own
/// budget of raw characters, over the result cap once escaped. The cap cuts
/// the text field and keeps the document: `next_offset` and `total_lines`
/// survive, so the model can read on.
#[test]
fn the_result_cap_keeps_read_files_paging_fields() {
    let (cwd, profile) = harness::dirs();
    let line = "\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\"\n";
    let text = line.repeat(4_000);
    std::fs::write(cwd.path().join("quotes.txt"), &text).expect("write");
    let out = harness::call(
        "read_file",
        &json!({"path": "quotes.txt", "limit": 2000}),
        cwd.path(),
        profile.path(),
        &[],
        Duration::from_secs(60),
    );
    let v = &out.json;
    assert!(v.get("error").is_none(), "{v:.300}");
    assert_eq!(v["total_lines"], 4_000, "{v:.300}");
    assert!(v["next_offset"].as_u64().is_some(), "{v:.300}");
    assert!(v["content"]
        .as_str()
        .expect("content")
        .ends_with(hermes_runtime::CUT_MARKER));
    assert!(v[hermes_runtime::CUT_KEY].as_str().is_some(), "{v:.300}");
}
