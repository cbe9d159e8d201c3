//! Argument coercion (`hermes_runtime::coerce_args`) of arbitrary JSON against
//! every built-in tool's schema, and of arbitrary JSON against arbitrary
//! schemas.
//!
//! The first byte picks a built-in tool (sorted by name) or, past the last
//! one, "schema mode", where the rest must be a JSON array
//! `[parameters, args]`. Checked:
//! - the plan the build step emitted (`generated_plans.rs`), a plan compiled
//!   now from the tool's schema and `coerce_args` give the same value;
//! - coercion is idempotent: applying the plan to its own output changes
//!   nothing;
//! - top-level argument names are kept, and non-object arguments are left
//!   as they are;
//! - in schema mode, compiling and printing a plan never fails.
#![no_main]

use std::sync::OnceLock;

use hermes_runtime::ToolEntry;
use hermes_runtime::{coerce_args, CoercionPlan};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// The built-in tools, sorted by name, with a plan compiled from each schema.
fn tools() -> &'static [(&'static ToolEntry, CoercionPlan)] {
    static TOOLS: OnceLock<Vec<(&'static ToolEntry, CoercionPlan)>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let mut entries = hermes_fuzz::registry().builtin_entries();
        entries.sort_by_key(|e| e.name);
        entries
            .into_iter()
            .map(|e| (e, CoercionPlan::compile(e.parameters())))
            .collect()
    })
}

/// The checks every plan must pass on `args`.
fn check(what: &str, plan: &CoercionPlan, args: &Value) -> Value {
    let once = plan.apply(args.clone());
    let twice = plan.apply(once.clone());
    assert!(
        once == twice,
        "{what}: coercion is not idempotent on {args}: once {once}, twice {twice}"
    );
    match (args, &once) {
        (Value::Object(a), Value::Object(b)) => assert!(
            a.keys().eq(b.keys()),
            "{what}: coercion changed the argument names of {args}: {once}"
        ),
        (Value::Object(_), _) => panic!("{what}: coercion made {args} a non-object: {once}"),
        _ => assert!(
            once == *args,
            "{what}: coercion changed non-object arguments {args}: {once}"
        ),
    }
    once
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(input) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let tools = tools();
    let pick = usize::from(pick) % (tools.len() + 1);
    if let Some((entry, compiled)) = tools.get(pick) {
        let what = entry.name;
        let stored = entry.coercion_plan(hermes_tools::generated::TABLES.plans);
        let from_stored = check(what, stored, &input);
        let from_compiled = check(what, compiled, &input);
        let from_args = coerce_args(entry.parameters(), input.clone());
        assert!(
            from_stored == from_compiled && from_compiled == from_args,
            "{what}: plans disagree on {input}: generated {from_stored}, compiled {from_compiled}, coerce_args {from_args}"
        );
    } else {
        let Value::Array(mut pair) = input else {
            return;
        };
        if pair.len() != 2 {
            return;
        }
        let args = pair.pop().unwrap_or_default();
        let parameters = pair.pop().unwrap_or_default();
        let plan = CoercionPlan::compile(&parameters);
        let _ = hermes_build_tools::plans::plan_expr(&plan);
        let once = check("schema mode", &plan, &args);
        let from_args = coerce_args(&parameters, args.clone());
        assert!(
            once == from_args,
            "schema {parameters}: plan and coerce_args disagree on {args}: {once} vs {from_args}"
        );
    }
});
