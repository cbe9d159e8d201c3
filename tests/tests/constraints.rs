//! Constraints on plain parameters (`#[schemars(range(...))]`, `length`,
//! `regex`, `#[serde(default)]`, `rename`): in the schema the model is sent,
//! and honoured by decoding on both paths (`dispatch` with a `Value`, and
//! `dispatch_json`, whose direct entry declines a value out of bounds to the
//! full pipeline, which explains it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

fn ctx() -> ToolContext {
    ToolContext::new(Profile::new("/tmp/hermes-test-home"), "/tmp")
}

/// The answer of both paths, which must agree.
async fn call(args: Value) -> Value {
    let reg = hermes_tests::registry();
    let full = reg.dispatch("constrained", args.clone(), &ctx()).await;
    let direct = reg
        .dispatch_json("constrained", &args.to_string(), &ctx())
        .await;
    assert_eq!(full, direct, "dispatch and dispatch_json differ for {args}");
    serde_json::from_str(&full).unwrap()
}

fn error(v: &Value) -> &str {
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error in {v}"))
}

#[test]
fn the_schema_states_the_constraints() {
    let entry = hermes_tests::registry().builtin("constrained").unwrap();
    let p = entry.parameters();
    let props = &p["properties"];
    assert_eq!(props["urls"]["minItems"], 1);
    assert_eq!(props["urls"]["maxItems"], 5);
    assert_eq!(props["limit"]["minimum"], 1);
    assert_eq!(props["limit"]["maximum"], 2000);
    assert_eq!(props["limit"]["default"], 500);
    assert_eq!(props["code"]["pattern"], "^[a-z]{3}$");
    assert_eq!(props["shift"]["minimum"], -10);
    assert_eq!(props["shift"]["maximum"], 10.5);
    assert_eq!(props["shift"]["default"], 0.0);
    assert_eq!(props["type"]["default"], "plain");
    assert_eq!(props["label"]["maxLength"], 4);
    assert!(props.get("mode").is_none(), "renamed: {props}");
    // A parameter with a default is not required.
    assert_eq!(p["required"], json!(["urls"]));
}

#[tokio::test]
async fn defaults_fill_absent_parameters() {
    let v = call(json!({"urls": ["a"]})).await;
    assert_eq!(
        v,
        json!({"urls": ["a"], "limit": 500, "code": null, "shift": 0.0, "type": "plain", "label": null})
    );
    let v = call(json!({"urls": ["a"], "limit": null, "type": "loud"})).await;
    assert_eq!(v["limit"], 500);
    assert_eq!(v["type"], "loud");
}

#[tokio::test]
async fn values_within_bounds_pass() {
    let v = call(json!({"urls": ["a", "b", "c", "d", "e"], "limit": 2000, "code": "abc", "shift": -10, "label": "ünïc"})).await;
    assert_eq!(v["limit"], 2000);
    assert_eq!(v["shift"], -10.0);
    assert_eq!(v["label"], "ünïc", "four characters, more bytes");
}

#[tokio::test]
async fn values_out_of_bounds_are_refused_naming_the_bound() {
    let cases = [
        (
            json!({"urls": ["a"], "limit": 2001}),
            "'limit'",
            "2001 is above the maximum 2000",
        ),
        (
            json!({"urls": ["a"], "limit": 0}),
            "'limit'",
            "0 is below the minimum 1",
        ),
        (json!({"urls": []}), "'urls'", "0 items, at least 1 needed"),
        (
            json!({"urls": ["1", "2", "3", "4", "5", "6"]}),
            "'urls'",
            "6 items, at most 5 allowed",
        ),
        (
            json!({"urls": ["a"], "code": "abcd"}),
            "'code'",
            "does not match the pattern ^[a-z]{3}$",
        ),
        (
            json!({"urls": ["a"], "shift": 10.75}),
            "'shift'",
            "10.75 is above the maximum 10.5",
        ),
        (
            json!({"urls": ["a"], "label": "fives"}),
            "'label'",
            "5 characters, at most 4 allowed",
        ),
    ];
    for (args, param, what) in cases {
        let v = call(args.clone()).await;
        let e = error(&v);
        assert!(e.contains(param) && e.contains(what), "{args}: {e}");
        assert!(e.contains("tool 'constrained'"), "{e}");
    }
}

#[tokio::test]
async fn coercion_runs_before_the_check() {
    // "2500" is repaired to 2500 by the plan, then refused by the bound.
    let v = call(json!({"urls": ["a"], "limit": "2500"})).await;
    assert!(error(&v).contains("2500 is above the maximum 2000"), "{v}");
    let v = call(json!({"urls": ["a"], "limit": "12"})).await;
    assert_eq!(v["limit"], 12);
}

/// The built-in tools state the reference's (hermes-agent 0.19.0) bounds
/// in their schemas, and a value beyond one is refused naming it.
/// (`clarify`'s four choices are not among them: it keeps the reference's
/// leniency, dropping empty choices and offering the first four, which
/// `clarify.rs` holds.)
#[tokio::test]
async fn the_builtins_state_the_reference_bounds() {
    let reg = hermes_tools::registry();
    let bound = |tool: &str, param: &str, key: &str| {
        reg.builtin(tool).unwrap().parameters()["properties"][param][key].clone()
    };
    let expected = [
        ("read_file", "offset", "minimum", json!(1)),
        ("read_file", "limit", "maximum", json!(2000)),
        ("terminal", "timeout", "minimum", json!(1)),
        ("process", "timeout", "minimum", json!(1)),
        ("process", "limit", "minimum", json!(1)),
        ("web_search", "limit", "minimum", json!(1)),
        ("web_search", "limit", "maximum", json!(100)),
        ("web_extract", "urls", "maxItems", json!(5)),
        ("web_extract", "char_limit", "minimum", json!(2000)),
    ];
    for (tool, param, key, value) in expected {
        assert_eq!(bound(tool, param, key), value, "{tool}.{param}.{key}");
    }

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    let ctx = ToolContext::new(Profile::new(dir.path().join("home")), dir.path());
    let urls: Vec<String> = (0..6).map(|i| format!("https://example.com/{i}")).collect();
    for (tool, args, what) in [
        (
            "read_file",
            json!({"path": "a.txt", "limit": 2001}),
            "'limit' of tool 'read_file': 2001 is above the maximum 2000",
        ),
        (
            "read_file",
            json!({"path": "a.txt", "offset": 0}),
            "'offset' of tool 'read_file': 0 is below the minimum 1",
        ),
        (
            "web_extract",
            json!({"urls": urls}),
            "'urls' of tool 'web_extract': 6 items, at most 5 allowed",
        ),
    ] {
        let out = reg.dispatch_json(tool, &args.to_string(), &ctx).await;
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(error(&v).contains(what), "{tool}: {out}");
    }
    let out = reg
        .dispatch_json("read_file", r#"{"path": "a.txt", "limit": 2000}"#, &ctx)
        .await;
    assert!(out.contains("1|x"), "{out}");
}
