//! The build step's plan emitter (`hermes_build_tools::plans::plan_expr`)
//! against the runtime's plan types: the code it emits compiles to the plan
//! it was given.
//!
//! `runtime/tests/snapshots/coerce__sample_plan.snap.rs` is the emitted plan
//! of the runtime tests' `sample_schema()` (`plans::plan_static`, formatted
//! as the generated files are); `runtime/tests/coerce.rs` checks that its
//! `static` is the plan compiled from that schema, and this file checks that
//! emitting that `static` prints the file again, byte for byte.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_build_tools::plans::{plan_expr, plan_static};
use hermes_runtime::CoercionPlan;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

#[path = "../../runtime/tests/snapshots/coerce__sample_plan.snap.rs"]
mod snapshot;

const SNAPSHOT: &str = include_str!("../../runtime/tests/snapshots/coerce__sample_plan.snap.rs");

/// The lines of the snapshot file before the emitted expression.
const SNAPSHOT_HEAD: &str = "//! Snapshot of `hermes_build_tools::plans::plan_static` for `sample_schema()` in tests/coerce.rs, compiled there as a static.\n\n";

#[test]
fn the_sample_plan_prints_its_snapshot_again() {
    let text = format!(
        "{SNAPSHOT_HEAD}{}",
        plan_static("SAMPLE_PLAN", &snapshot::SAMPLE_PLAN).unwrap()
    );
    assert_eq!(
        text, SNAPSHOT,
        "the emitter changed: update runtime/tests/snapshots/coerce__sample_plan.snap.rs"
    );
}

#[test]
fn an_empty_plan_is_an_empty_slice() {
    let plan = CoercionPlan::compile(&json!({"properties": {"a": {"type": "string"}}}));
    assert!(plan.props().is_empty());
    assert_eq!(
        compact(&plan_expr(&plan).to_string()),
        "::hermes_runtime::__private::coercion_plan(&[])"
    );
}

/// Tokens as text without the spaces `TokenStream` puts between them (the
/// names these tests use hold none).
fn compact(tokens: &str) -> String {
    tokens.split_whitespace().collect()
}

/// Schema-shaped JSON: `type` names (alone or in lists), `items`,
/// `properties`, `anyOf`, `nullable`, and junk leaves.
fn schema_like() -> impl Strategy<Value = Value> {
    let ty = prop::sample::select(
        &[
            "integer", "number", "boolean", "string", "array", "object", "null", "other",
        ][..],
    )
    .prop_map(|t| Value::String(t.to_owned()));
    let leaf = prop_oneof![
        ty.clone().prop_map(|t| json!({ "type": t })),
        prop::collection::vec(ty, 0..4).prop_map(|ts| json!({ "type": ts })),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            inner.clone().prop_map(|i| json!({"type": "array", "items": i})),
            prop::collection::btree_map("[a-z\"\\\\ ]{0,6}", inner.clone(), 0..5).prop_map(|m| {
                json!({"type": "object", "properties": Value::Object(m.into_iter().collect::<Map<_, _>>())})
            }),
            prop::collection::vec(inner, 0..3).prop_map(|v| json!({"anyOf": v, "nullable": true})),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Every plan prints without panicking, as one absolute-path expression
    /// naming every property it holds.
    #[test]
    fn every_plan_prints(props in prop::collection::btree_map("[a-z_\"]{1,8}", schema_like(), 0..5)) {
        let schema = json!({"type": "object", "properties": Value::Object(props.into_iter().collect())});
        let plan = CoercionPlan::compile(&schema);
        let text = compact(&plan_expr(&plan).to_string());
        prop_assert!(text.starts_with("::hermes_runtime::__private::coercion_plan("), "{}", text);
        prop_assert!(text.ends_with(')'), "{}", text);
        for prop in plan.props() {
            let literal = format!("prop_plan({:?},", prop.name());
            prop_assert!(text.contains(&literal), "{} missing from {}", literal, text);
        }
    }
}
