//! Results over their cap are kept whole under the profile's home, and the
//! model gets a preview and the path, which `read_file` reads: through
//! dispatch, on a temp profile.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::{DispatchConfig, Profile, Registry, ToolContext};
use serde_json::{json, Value};

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[tokio::test]
async fn a_result_over_the_cap_is_stored_and_previewed_with_its_path() {
    let home = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(home.path()), home.path()).with_tool_call_id("call-9");
    let reg = Registry::new(&hermes_tests::generated::TABLES);
    reg.set_dispatch_config(DispatchConfig::default().with_default_max_result_chars(5_000));
    let text: String = (1..=2_000).map(|i| format!("row {i}\n")).collect();
    let out = reg
        .dispatch("echo", json!({"text": text, "count": 7}), &ctx)
        .await;
    assert!(out.chars().count() <= 5_000, "{}", out.chars().count());
    let v = parse(&out);
    // The preview keeps the small fields and the start of the text.
    assert_eq!(v["count"], 7);
    let kept = v["text"].as_str().unwrap();
    assert!(
        kept.starts_with("row 1\nrow 2\n") && kept.len() < 1_500,
        "{kept}"
    );
    let path = v["full_result_path"].as_str().unwrap();
    assert!(
        path.starts_with(home.path().join("tool_results").to_str().unwrap()),
        "{path}"
    );
    assert!(path.ends_with("-echo-call-9.txt"), "{path}");
    let note = v["full_result"].as_str().unwrap();
    assert!(note.contains(path) && note.contains("read_file"), "{note}");
    // The file holds all of it, the text field as its lines.
    let stored = std::fs::read_to_string(path).unwrap();
    assert!(stored.contains("## text\nrow 1\n"), "{stored:.200}");
    assert!(stored.contains("row 2000\n"));

    // read_file pages through it.
    let files = hermes_tools::registry();
    let page = files
        .dispatch(
            "read_file",
            json!({"path": path, "offset": 1005, "limit": 2}),
            &ctx,
        )
        .await;
    let page = parse(&page);
    assert_eq!(page["content"], "1005|row 1000\n1006|row 1001", "{page}");

    // A result within the cap is untouched and stores nothing more.
    let out = reg
        .dispatch("echo", json!({"text": "short", "count": 1}), &ctx)
        .await;
    assert_eq!(parse(&out)["text"], "short");
    assert_eq!(
        std::fs::read_dir(home.path().join("tool_results"))
            .unwrap()
            .count(),
        1
    );
}

#[tokio::test]
async fn when_the_home_cannot_keep_it_the_result_is_cut_as_before() {
    let dir = tempfile::tempdir().unwrap();
    // The profile's home is a file: nothing can be stored under it.
    let home = dir.path().join("home-is-a-file");
    std::fs::write(&home, "x").unwrap();
    let ctx = ToolContext::new(Profile::new(&home), dir.path());
    let reg = Registry::new(&hermes_tests::generated::TABLES);
    reg.set_dispatch_config(DispatchConfig::default().with_default_max_result_chars(2_000));
    let out = reg
        .dispatch(
            "echo",
            json!({"text": "x".repeat(10_000), "count": 2}),
            &ctx,
        )
        .await;
    assert!(out.chars().count() <= 2_000);
    let v = parse(&out);
    assert!(v["full_result_path"].is_null(), "{v}");
    assert_eq!(v["count"], 2);
    assert!(
        v[hermes_runtime::CUT_KEY]
            .as_str()
            .unwrap()
            .contains("2000-character"),
        "{v}"
    );
}
