//! Table-driven tests of argument coercion (`hermes_runtime::coerce_args`, `CoercionPlan`) through its public API, one table per rule.
//!
//! Unless a table says otherwise, every row was observed by running the
//! reference, `model_tools.coerce_tool_args` of the PyPI package
//! `hermes-agent==0.19.0` (CPython 3.11), on the same input. A row is
//! `(property schema, value, expected value)`: the schema is placed at
//! `properties.v` of an object schema and the value at `args.v`.

use hermes_runtime::__private::{
    coercion_plan, prop_plan, repair_node, repair_prop, Kind, PropPlan, RepairNode,
};
use hermes_runtime::{coerce_args, CoercionPlan};
use serde_json::{json, Value};

type Row = (&'static str, &'static str, &'static str);

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("bad JSON in table: {text}: {e}"))
}

/// Runs `(parameters, args) -> expected` through `coerce_args` and through a
/// compiled plan applied twice, collecting every mismatch before failing.
fn check_full(table: &str, rows: &[(Value, Value, Value)]) {
    let mut failures = Vec::new();
    for (params, args, expected) in rows {
        let got = coerce_args(params, args.clone());
        let plan = CoercionPlan::compile(params);
        let once = plan.apply(args.clone());
        let twice = plan.apply(once.clone());
        if got != *expected || once != *expected || twice != *expected {
            failures.push(format!(
                "  schema {params}\n  args   {args}\n  want   {expected}\n  got    {got} (plan: {once}, twice: {twice})"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{table}: {} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n\n")
    );
}

fn check(table: &str, rows: &[Row]) {
    let rows: Vec<_> = rows
        .iter()
        .map(|(schema, value, expected)| {
            (
                json!({"type": "object", "properties": {"v": parse(schema)}}),
                json!({"v": parse(value), "untouched": "5"}),
                json!({"v": parse(expected), "untouched": "5"}),
            )
        })
        .collect();
    check_full(table, &rows);
}

fn check_shapes(table: &str, rows: &[Row]) {
    let rows: Vec<_> = rows
        .iter()
        .map(|(params, args, expected)| (parse(params), parse(args), parse(expected)))
        .collect();
    check_full(table, &rows);
}

#[test]
fn number_and_integer() {
    check("NUMBER", NUMBER);
}

#[test]
fn boolean() {
    check("BOOLEAN", BOOLEAN);
}

#[test]
fn null_where_permitted() {
    check("NULL", NULL);
}

#[test]
fn union_types() {
    check("UNION", UNION);
}

#[test]
fn array() {
    check("ARRAY", ARRAY);
}

#[test]
fn object() {
    check("OBJECT", OBJECT);
}

#[test]
fn nested_repair() {
    check("NESTED", NESTED);
}

#[test]
fn odd_shapes() {
    check_shapes("SHAPES", SHAPES);
}

// Tables observed from the reference (hermes-agent 0.19.0).

/// number / integer: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const NUMBER: &[Row] = &[
    (r#"{"type": "integer"}"#, r#""42""#, r#"42"#),
    (r#"{"type": "number"}"#, r#""42""#, r#"42"#),
    (r#"{"type": "integer"}"#, r#""  42 ""#, r#"42"#),
    (r#"{"type": "number"}"#, r#""  42 ""#, r#"42"#),
    (r#"{"type": "integer"}"#, r#""1e3""#, r#"1000"#),
    (r#"{"type": "number"}"#, r#""1e3""#, r#"1000"#),
    (r#"{"type": "integer"}"#, r#""1E5""#, r#"100000"#),
    (r#"{"type": "number"}"#, r#""1E5""#, r#"100000"#),
    (r#"{"type": "integer"}"#, r#""+5""#, r#"5"#),
    (r#"{"type": "number"}"#, r#""+5""#, r#"5"#),
    (r#"{"type": "integer"}"#, r#""-5""#, r#"-5"#),
    (r#"{"type": "number"}"#, r#""-5""#, r#"-5"#),
    (r#"{"type": "integer"}"#, r#""-0""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""-0""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""-0.0""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""-0.0""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""+0""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""+0""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""0""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""0""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""007""#, r#"7"#),
    (r#"{"type": "number"}"#, r#""007""#, r#"7"#),
    (r#"{"type": "integer"}"#, r#""1_000""#, r#"1000"#),
    (r#"{"type": "number"}"#, r#""1_000""#, r#"1000"#),
    (r#"{"type": "integer"}"#, r#""1_2_3""#, r#"123"#),
    (r#"{"type": "number"}"#, r#""1_2_3""#, r#"123"#),
    (r#"{"type": "integer"}"#, r#""0_0""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""0_0""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""1__000""#, r#""1__000""#),
    (r#"{"type": "number"}"#, r#""1__000""#, r#""1__000""#),
    (r#"{"type": "integer"}"#, r#""_1""#, r#""_1""#),
    (r#"{"type": "number"}"#, r#""_1""#, r#""_1""#),
    (r#"{"type": "integer"}"#, r#""1_""#, r#""1_""#),
    (r#"{"type": "number"}"#, r#""1_""#, r#""1_""#),
    (r#"{"type": "integer"}"#, r#""1_.5""#, r#""1_.5""#),
    (r#"{"type": "number"}"#, r#""1_.5""#, r#""1_.5""#),
    (r#"{"type": "integer"}"#, r#""1._5""#, r#""1._5""#),
    (r#"{"type": "number"}"#, r#""1._5""#, r#""1._5""#),
    (r#"{"type": "integer"}"#, r#""1_e5""#, r#""1_e5""#),
    (r#"{"type": "number"}"#, r#""1_e5""#, r#""1_e5""#),
    (r#"{"type": "integer"}"#, r#""1e_5""#, r#""1e_5""#),
    (r#"{"type": "number"}"#, r#""1e_5""#, r#""1e_5""#),
    (r#"{"type": "integer"}"#, r#""1e5_""#, r#""1e5_""#),
    (r#"{"type": "number"}"#, r#""1e5_""#, r#""1e5_""#),
    (r#"{"type": "integer"}"#, r#""-_1""#, r#""-_1""#),
    (r#"{"type": "number"}"#, r#""-_1""#, r#""-_1""#),
    (r#"{"type": "integer"}"#, r#""1.5_""#, r#""1.5_""#),
    (r#"{"type": "number"}"#, r#""1.5_""#, r#""1.5_""#),
    (r#"{"type": "integer"}"#, r#""١٢٣""#, r#"123"#),
    (r#"{"type": "number"}"#, r#""١٢٣""#, r#"123"#),
    (r#"{"type": "integer"}"#, r#""１２３""#, r#"123"#),
    (r#"{"type": "number"}"#, r#""１２３""#, r#"123"#),
    (r#"{"type": "integer"}"#, r#""𝟙𝟚""#, r#"12"#),
    (r#"{"type": "number"}"#, r#""𝟙𝟚""#, r#"12"#),
    (r#"{"type": "integer"}"#, r#""١_٢""#, r#"12"#),
    (r#"{"type": "number"}"#, r#""١_٢""#, r#"12"#),
    (r#"{"type": "integer"}"#, r#""１.５""#, r#""１.５""#),
    (r#"{"type": "number"}"#, r#""１.５""#, r#"1.5"#),
    (r#"{"type": "integer"}"#, r#""٣.٥""#, r#""٣.٥""#),
    (r#"{"type": "number"}"#, r#""٣.٥""#, r#"3.5"#),
    (r#"{"type": "integer"}"#, r#""1٫5""#, r#""1٫5""#),
    (r#"{"type": "number"}"#, r#""1٫5""#, r#""1٫5""#),
    (r#"{"type": "integer"}"#, r#""nan""#, r#""nan""#),
    (r#"{"type": "number"}"#, r#""nan""#, r#""nan""#),
    (r#"{"type": "integer"}"#, r#""NaN""#, r#""NaN""#),
    (r#"{"type": "number"}"#, r#""NaN""#, r#""NaN""#),
    (r#"{"type": "integer"}"#, r#""+nan""#, r#""+nan""#),
    (r#"{"type": "number"}"#, r#""+nan""#, r#""+nan""#),
    (r#"{"type": "integer"}"#, r#""-inf""#, r#""-inf""#),
    (r#"{"type": "number"}"#, r#""-inf""#, r#""-inf""#),
    (r#"{"type": "integer"}"#, r#""inF""#, r#""inF""#),
    (r#"{"type": "number"}"#, r#""inF""#, r#""inF""#),
    (r#"{"type": "integer"}"#, r#""Infinity""#, r#""Infinity""#),
    (r#"{"type": "number"}"#, r#""Infinity""#, r#""Infinity""#),
    (r#"{"type": "integer"}"#, r#""-iNfInItY""#, r#""-iNfInItY""#),
    (r#"{"type": "number"}"#, r#""-iNfInItY""#, r#""-iNfInItY""#),
    (r#"{"type": "integer"}"#, r#""infinit""#, r#""infinit""#),
    (r#"{"type": "number"}"#, r#""infinit""#, r#""infinit""#),
    (r#"{"type": "integer"}"#, r#""nan1""#, r#""nan1""#),
    (r#"{"type": "number"}"#, r#""nan1""#, r#""nan1""#),
    (r#"{"type": "integer"}"#, r#""1.0""#, r#"1"#),
    (r#"{"type": "number"}"#, r#""1.0""#, r#"1"#),
    (r#"{"type": "integer"}"#, r#""5.""#, r#"5"#),
    (r#"{"type": "number"}"#, r#""5.""#, r#"5"#),
    (r#"{"type": "integer"}"#, r#""1.e5""#, r#"100000"#),
    (r#"{"type": "number"}"#, r#""1.e5""#, r#"100000"#),
    (r#"{"type": "integer"}"#, r#"".5""#, r#"".5""#),
    (r#"{"type": "number"}"#, r#"".5""#, r#"0.5"#),
    (r#"{"type": "integer"}"#, r#""+.5""#, r#""+.5""#),
    (r#"{"type": "number"}"#, r#""+.5""#, r#"0.5"#),
    (r#"{"type": "integer"}"#, r#""-.5e-3""#, r#""-.5e-3""#),
    (r#"{"type": "number"}"#, r#""-.5e-3""#, r#"-0.0005"#),
    (r#"{"type": "integer"}"#, r#"".""#, r#"".""#),
    (r#"{"type": "number"}"#, r#"".""#, r#"".""#),
    (r#"{"type": "integer"}"#, r#"".e5""#, r#"".e5""#),
    (r#"{"type": "number"}"#, r#"".e5""#, r#"".e5""#),
    (r#"{"type": "integer"}"#, r#""1e""#, r#""1e""#),
    (r#"{"type": "number"}"#, r#""1e""#, r#""1e""#),
    (r#"{"type": "integer"}"#, r#""e5""#, r#""e5""#),
    (r#"{"type": "number"}"#, r#""e5""#, r#""e5""#),
    (r#"{"type": "integer"}"#, r#""5e+""#, r#""5e+""#),
    (r#"{"type": "number"}"#, r#""5e+""#, r#""5e+""#),
    (r#"{"type": "integer"}"#, r#""1e+5""#, r#"100000"#),
    (r#"{"type": "number"}"#, r#""1e+5""#, r#"100000"#),
    (r#"{"type": "integer"}"#, r#""1.5e1""#, r#"15"#),
    (r#"{"type": "number"}"#, r#""1.5e1""#, r#"15"#),
    (r#"{"type": "integer"}"#, r#""1.5E+0_1""#, r#"15"#),
    (r#"{"type": "number"}"#, r#""1.5E+0_1""#, r#"15"#),
    (r#"{"type": "integer"}"#, r#""2.5e-1""#, r#""2.5e-1""#),
    (r#"{"type": "number"}"#, r#""2.5e-1""#, r#"0.25"#),
    (r#"{"type": "integer"}"#, r#""1e-5""#, r#""1e-5""#),
    (r#"{"type": "number"}"#, r#""1e-5""#, r#"1e-05"#),
    (r#"{"type": "integer"}"#, r#""0.1e1""#, r#"1"#),
    (r#"{"type": "number"}"#, r#""0.1e1""#, r#"1"#),
    (r#"{"type": "integer"}"#, r#""1e19""#, r#"10000000000000000000"#),
    (r#"{"type": "number"}"#, r#""1e19""#, r#"10000000000000000000"#),
    (r#"{"type": "integer"}"#, r#""1e18""#, r#"1000000000000000000"#),
    (r#"{"type": "number"}"#, r#""1e18""#, r#"1000000000000000000"#),
    (r#"{"type": "integer"}"#, r#""-1e18""#, r#"-1000000000000000000"#),
    (r#"{"type": "number"}"#, r#""-1e18""#, r#"-1000000000000000000"#),
    (r#"{"type": "integer"}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": "number"}"#, r#""1.5""#, r#"1.5"#),
    (r#"{"type": "integer"}"#, r#""-2.5""#, r#""-2.5""#),
    (r#"{"type": "number"}"#, r#""-2.5""#, r#"-2.5"#),
    (r#"{"type": "integer"}"#, r#""0.1""#, r#""0.1""#),
    (r#"{"type": "number"}"#, r#""0.1""#, r#"0.1"#),
    (r#"{"type": "integer"}"#, r#""4.0000000000000001""#, r#"4"#),
    (r#"{"type": "number"}"#, r#""4.0000000000000001""#, r#"4"#),
    (r#"{"type": "integer"}"#, r#""1e-400""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""1e-400""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""-1e-400""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""-1e-400""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""1e-99999999999999999999""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""1e-99999999999999999999""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""0e99999999999999999999""#, r#"0"#),
    (r#"{"type": "number"}"#, r#""0e99999999999999999999""#, r#"0"#),
    (r#"{"type": "integer"}"#, r#""1e400""#, r#""1e400""#),
    (r#"{"type": "number"}"#, r#""1e400""#, r#""1e400""#),
    (r#"{"type": "integer"}"#, r#""-1e400""#, r#""-1e400""#),
    (r#"{"type": "number"}"#, r#""-1e400""#, r#""-1e400""#),
    (r#"{"type": "integer"}"#, r#""9007199254740992""#, r#"9007199254740992"#),
    (r#"{"type": "number"}"#, r#""9007199254740992""#, r#"9007199254740992"#),
    (r#"{"type": "integer"}"#, r#""-9223372036854775808""#, r#"-9223372036854775808"#),
    (r#"{"type": "number"}"#, r#""-9223372036854775808""#, r#"-9223372036854775808"#),
    (r#"{"type": "integer"}"#, r#""1234567890123456""#, r#"1234567890123456"#),
    (r#"{"type": "number"}"#, r#""1234567890123456""#, r#"1234567890123456"#),
    (r#"{"type": "integer"}"#, r#""0x10""#, r#""0x10""#),
    (r#"{"type": "number"}"#, r#""0x10""#, r#""0x10""#),
    (r#"{"type": "integer"}"#, r#""0b1""#, r#""0b1""#),
    (r#"{"type": "number"}"#, r#""0b1""#, r#""0b1""#),
    (r#"{"type": "integer"}"#, r#""0o7""#, r#""0o7""#),
    (r#"{"type": "number"}"#, r#""0o7""#, r#""0o7""#),
    (r#"{"type": "integer"}"#, r#""1,000""#, r#""1,000""#),
    (r#"{"type": "number"}"#, r#""1,000""#, r#""1,000""#),
    (r#"{"type": "integer"}"#, r#""1 000""#, r#""1 000""#),
    (r#"{"type": "number"}"#, r#""1 000""#, r#""1 000""#),
    (r#"{"type": "integer"}"#, r#""++5""#, r#""++5""#),
    (r#"{"type": "number"}"#, r#""++5""#, r#""++5""#),
    (r#"{"type": "integer"}"#, r#""+-5""#, r#""+-5""#),
    (r#"{"type": "number"}"#, r#""+-5""#, r#""+-5""#),
    (r#"{"type": "integer"}"#, r#""""#, r#""""#),
    (r#"{"type": "number"}"#, r#""""#, r#""""#),
    (r#"{"type": "integer"}"#, r#""  ""#, r#""  ""#),
    (r#"{"type": "number"}"#, r#""  ""#, r#""  ""#),
    (r#"{"type": "integer"}"#, r#""true""#, r#""true""#),
    (r#"{"type": "number"}"#, r#""true""#, r#""true""#),
    (r#"{"type": "integer"}"#, r#""5\u200b""#, r#""5\u200b""#),
    (r#"{"type": "number"}"#, r#""5\u200b""#, r#""5\u200b""#),
    (r#"{"type": "integer"}"#, r#""\ufeff5""#, r#""\ufeff5""#),
    (r#"{"type": "number"}"#, r#""\ufeff5""#, r#""\ufeff5""#),
    (r#"{"type": "integer"}"#, r#""\u200b5""#, r#""\u200b5""#),
    (r#"{"type": "number"}"#, r#""\u200b5""#, r#""\u200b5""#),
    (r#"{"type": "integer"}"#, r#""1/2""#, r#""1/2""#),
    (r#"{"type": "number"}"#, r#""1/2""#, r#""1/2""#),
    (r#"{"type": "integer"}"#, r#""½""#, r#""½""#),
    (r#"{"type": "number"}"#, r#""½""#, r#""½""#),
    (r#"{"type": "integer"}"#, r#""²""#, r#""²""#),
    (r#"{"type": "number"}"#, r#""²""#, r#""²""#),
    (r#"{"type": "integer"}"#, r#""Ⅷ""#, r#""Ⅷ""#),
    (r#"{"type": "number"}"#, r#""Ⅷ""#, r#""Ⅷ""#),
    (r#"{"type": "integer"}"#, r#""\u00a05\u3000""#, r#"5"#),
    (r#"{"type": "number"}"#, r#""\u00a05\u3000""#, r#"5"#),
    (r#"{"type": "integer"}"#, r#""\u000b5\f""#, r#"5"#),
    (r#"{"type": "number"}"#, r#""\u000b5\f""#, r#"5"#),
    (r#"{"type": "integer"}"#, r#""\u00855\u2028""#, r#"5"#),
    (r#"{"type": "number"}"#, r#""\u00855\u2028""#, r#"5"#),
    (r#"{"type": "integer"}"#, r#"" \t\n5\r""#, r#"5"#),
    (r#"{"type": "number"}"#, r#"" \t\n5\r""#, r#"5"#),
    (r#"{"type": "integer"}"#, r#""\u001c5\u001f""#, r#""\u001c5\u001f""#),
    (r#"{"type": "number"}"#, r#""\u001c5\u001f""#, r#""\u001c5\u001f""#),
    (r#"{"type": "integer"}"#, r#""\u001c5""#, r#""\u001c5""#),
    (r#"{"type": "number"}"#, r#""\u001c5""#, r#""\u001c5""#),
    (r#"{"type": "integer"}"#, r#"5"#, r#"5"#),
    (r#"{"type": "number"}"#, r#"5"#, r#"5"#),
    (r#"{"type": "integer"}"#, r#"-1"#, r#"-1"#),
    (r#"{"type": "number"}"#, r#"-1"#, r#"-1"#),
    (r#"{"type": "integer"}"#, r#"1.5"#, r#"1.5"#),
    (r#"{"type": "number"}"#, r#"1.5"#, r#"1.5"#),
    (r#"{"type": "integer"}"#, r#"0"#, r#"0"#),
    (r#"{"type": "number"}"#, r#"0"#, r#"0"#),
    (r#"{"type": "integer"}"#, r#"true"#, r#"true"#),
    (r#"{"type": "number"}"#, r#"true"#, r#"true"#),
    (r#"{"type": "integer"}"#, r#"false"#, r#"false"#),
    (r#"{"type": "number"}"#, r#"false"#, r#"false"#),
    (r#"{"type": "integer"}"#, r#"null"#, r#"null"#),
    (r#"{"type": "number"}"#, r#"null"#, r#"null"#),
    (r#"{"type": "integer"}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": "number"}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": "integer"}"#, r#"{"a": 1}"#, r#"{"a": 1}"#),
    (r#"{"type": "number"}"#, r#"{"a": 1}"#, r#"{"a": 1}"#),
    (r#"{"type": "integer"}"#, r#"["5"]"#, r#"["5"]"#),
    (r#"{"type": "number"}"#, r#"["5"]"#, r#"["5"]"#),
];

/// boolean: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const BOOLEAN: &[Row] = &[
    (r#"{"type": "boolean"}"#, r#""true""#, r#"true"#),
    (r#"{"type": "boolean"}"#, r#""false""#, r#"false"#),
    (r#"{"type": "boolean"}"#, r#""TRUE""#, r#"true"#),
    (r#"{"type": "boolean"}"#, r#""False""#, r#"false"#),
    (r#"{"type": "boolean"}"#, r#""FaLsE""#, r#"false"#),
    (r#"{"type": "boolean"}"#, r#"" True\n""#, r#"true"#),
    (r#"{"type": "boolean"}"#, r#""\u00a0false""#, r#"false"#),
    (r#"{"type": "boolean"}"#, r#""\u001ctrue\u001f""#, r#"true"#),
    (r#"{"type": "boolean"}"#, r#""\u3000true\u2029""#, r#"true"#),
    (r#"{"type": "boolean"}"#, r#""yes""#, r#""yes""#),
    (r#"{"type": "boolean"}"#, r#""no""#, r#""no""#),
    (r#"{"type": "boolean"}"#, r#""1""#, r#""1""#),
    (r#"{"type": "boolean"}"#, r#""0""#, r#""0""#),
    (r#"{"type": "boolean"}"#, r#""t""#, r#""t""#),
    (r#"{"type": "boolean"}"#, r#""f""#, r#""f""#),
    (r#"{"type": "boolean"}"#, r#""on""#, r#""on""#),
    (r#"{"type": "boolean"}"#, r#""true!""#, r#""true!""#),
    (r#"{"type": "boolean"}"#, r#""tru""#, r#""tru""#),
    (r#"{"type": "boolean"}"#, r#""""#, r#""""#),
    (r#"{"type": "boolean"}"#, r#""null""#, r#""null""#),
    (r#"{"type": "boolean"}"#, r#""\"true\"""#, r#""\"true\"""#),
    (r#"{"type": "boolean"}"#, r#"1"#, r#"1"#),
    (r#"{"type": "boolean"}"#, r#"0"#, r#"0"#),
    (r#"{"type": "boolean"}"#, r#"true"#, r#"true"#),
    (r#"{"type": "boolean"}"#, r#"false"#, r#"false"#),
    (r#"{"type": "boolean"}"#, r#"null"#, r#"null"#),
    (r#"{"type": "boolean"}"#, r#"[true]"#, r#"[true]"#),
    (r#"{"type": "boolean"}"#, r#"{"a": true}"#, r#"{"a": true}"#),
    (r#"{"type": "boolean"}"#, r#"1.0"#, r#"1.0"#),
];

/// null, where the schema permits it: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const NULL: &[Row] = &[
    (r#"{"type": "null"}"#, r#""null""#, r#"null"#),
    (r#"{"type": "null"}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": "null"}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": "null"}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": "null"}"#, r#""none""#, r#""none""#),
    (r#"{"type": "null"}"#, r#""None""#, r#""None""#),
    (r#"{"type": "null"}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "null"}"#, r#""""#, r#""""#),
    (r#"{"type": "null"}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "null"}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["string", "null"]}"#, r#""null""#, r#"null"#),
    (r#"{"type": ["string", "null"]}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": ["string", "null"]}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": ["string", "null"]}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": ["string", "null"]}"#, r#""none""#, r#""none""#),
    (r#"{"type": ["string", "null"]}"#, r#""None""#, r#""None""#),
    (r#"{"type": ["string", "null"]}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": ["string", "null"]}"#, r#""""#, r#""""#),
    (r#"{"type": ["string", "null"]}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": ["string", "null"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["null", "integer"]}"#, r#""null""#, r#"null"#),
    (r#"{"type": ["null", "integer"]}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": ["null", "integer"]}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": ["null", "integer"]}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": ["null", "integer"]}"#, r#""none""#, r#""none""#),
    (r#"{"type": ["null", "integer"]}"#, r#""None""#, r#""None""#),
    (r#"{"type": ["null", "integer"]}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": ["null", "integer"]}"#, r#""""#, r#""""#),
    (r#"{"type": ["null", "integer"]}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": ["null", "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": "string", "nullable": true}"#, r#""null""#, r#"null"#),
    (r#"{"type": "string", "nullable": true}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": "string", "nullable": true}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": "string", "nullable": true}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": "string", "nullable": true}"#, r#""none""#, r#""none""#),
    (r#"{"type": "string", "nullable": true}"#, r#""None""#, r#""None""#),
    (r#"{"type": "string", "nullable": true}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "string", "nullable": true}"#, r#""""#, r#""""#),
    (r#"{"type": "string", "nullable": true}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "string", "nullable": true}"#, r#"null"#, r#"null"#),
    (r#"{"type": "integer", "nullable": true}"#, r#""null""#, r#"null"#),
    (r#"{"type": "integer", "nullable": true}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": "integer", "nullable": true}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": "integer", "nullable": true}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": "integer", "nullable": true}"#, r#""none""#, r#""none""#),
    (r#"{"type": "integer", "nullable": true}"#, r#""None""#, r#""None""#),
    (r#"{"type": "integer", "nullable": true}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "integer", "nullable": true}"#, r#""""#, r#""""#),
    (r#"{"type": "integer", "nullable": true}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "integer", "nullable": true}"#, r#"null"#, r#"null"#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""null""#, r#"null"#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": "boolean", "nullable": true}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""none""#, r#""none""#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""None""#, r#""None""#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""""#, r#""""#),
    (r#"{"type": "boolean", "nullable": true}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "boolean", "nullable": true}"#, r#"null"#, r#"null"#),
    (r#"{"type": "object", "nullable": true}"#, r#""null""#, r#"null"#),
    (r#"{"type": "object", "nullable": true}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": "object", "nullable": true}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": "object", "nullable": true}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": "object", "nullable": true}"#, r#""none""#, r#""none""#),
    (r#"{"type": "object", "nullable": true}"#, r#""None""#, r#""None""#),
    (r#"{"type": "object", "nullable": true}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "object", "nullable": true}"#, r#""""#, r#""""#),
    (r#"{"type": "object", "nullable": true}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "object", "nullable": true}"#, r#"null"#, r#"null"#),
    (r#"{"nullable": true}"#, r#""null""#, r#"null"#),
    (r#"{"nullable": true}"#, r#""NULL""#, r#"null"#),
    (r#"{"nullable": true}"#, r#"" Null ""#, r#"null"#),
    (r#"{"nullable": true}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"nullable": true}"#, r#""none""#, r#""none""#),
    (r#"{"nullable": true}"#, r#""None""#, r#""None""#),
    (r#"{"nullable": true}"#, r#""nil""#, r#""nil""#),
    (r#"{"nullable": true}"#, r#""""#, r#""""#),
    (r#"{"nullable": true}"#, r#""null null""#, r#""null null""#),
    (r#"{"nullable": true}"#, r#"null"#, r#"null"#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""null""#, r#"null"#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""NULL""#, r#"null"#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#"" Null ""#, r#"null"#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""none""#, r#""none""#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""None""#, r#""None""#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""nil""#, r#""nil""#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""""#, r#""""#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#""null null""#, r#""null null""#),
    (r#"{"anyOf": [{"type": "string"}, {"type": "null"}]}"#, r#"null"#, r#"null"#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""null""#, r#"null"#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""NULL""#, r#"null"#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#"" Null ""#, r#"null"#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""none""#, r#""none""#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""None""#, r#""None""#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""nil""#, r#""nil""#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""""#, r#""""#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#""null null""#, r#""null null""#),
    (r#"{"oneOf": [{"type": "null"}]}"#, r#"null"#, r#"null"#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""null""#, r#"null"#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""NULL""#, r#"null"#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#"" Null ""#, r#"null"#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""none""#, r#""none""#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""None""#, r#""None""#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""nil""#, r#""nil""#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""""#, r#""""#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#""null null""#, r#""null null""#),
    (r#"{"anyOf": [{"type": "integer"}, {"type": "null"}], "type": "integer"}"#, r#"null"#, r#"null"#),
    (r#"{"type": "string", "nullable": 1}"#, r#""null""#, r#""null""#),
    (r#"{"type": "string", "nullable": 1}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"type": "string", "nullable": 1}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"type": "string", "nullable": 1}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"type": "string", "nullable": 1}"#, r#""none""#, r#""none""#),
    (r#"{"type": "string", "nullable": 1}"#, r#""None""#, r#""None""#),
    (r#"{"type": "string", "nullable": 1}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "string", "nullable": 1}"#, r#""""#, r#""""#),
    (r#"{"type": "string", "nullable": 1}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "string", "nullable": 1}"#, r#"null"#, r#"null"#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""null""#, r#""null""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""none""#, r#""none""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""None""#, r#""None""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""""#, r#""""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "string", "nullable": "true"}"#, r#"null"#, r#"null"#),
    (r#"{"type": "string", "nullable": false}"#, r#""null""#, r#""null""#),
    (r#"{"type": "string", "nullable": false}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"type": "string", "nullable": false}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"type": "string", "nullable": false}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"type": "string", "nullable": false}"#, r#""none""#, r#""none""#),
    (r#"{"type": "string", "nullable": false}"#, r#""None""#, r#""None""#),
    (r#"{"type": "string", "nullable": false}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "string", "nullable": false}"#, r#""""#, r#""""#),
    (r#"{"type": "string", "nullable": false}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "string", "nullable": false}"#, r#"null"#, r#"null"#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""null""#, r#""null""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""none""#, r#""none""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""None""#, r#""None""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""nil""#, r#""nil""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""""#, r#""""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#""null null""#, r#""null null""#),
    (r#"{"allOf": [{"type": "null"}]}"#, r#"null"#, r#"null"#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""null""#, r#""null""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""none""#, r#""none""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""None""#, r#""None""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""nil""#, r#""nil""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""""#, r#""""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#""null null""#, r#""null null""#),
    (r#"{"anyOf": [{"type": ["null"]}]}"#, r#"null"#, r#"null"#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""null""#, r#""null""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""none""#, r#""none""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""None""#, r#""None""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""nil""#, r#""nil""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""""#, r#""""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#""null null""#, r#""null null""#),
    (r#"{"anyOf": [{"anyOf": [{"type": "null"}]}]}"#, r#"null"#, r#"null"#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""null""#, r#""null""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""none""#, r#""none""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""None""#, r#""None""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""nil""#, r#""nil""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""""#, r#""""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#""null null""#, r#""null null""#),
    (r#"{"anyOf": {"type": "null"}}"#, r#"null"#, r#"null"#),
    (r#"{"anyOf": ["null"]}"#, r#""null""#, r#""null""#),
    (r#"{"anyOf": ["null"]}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"anyOf": ["null"]}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"anyOf": ["null"]}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"anyOf": ["null"]}"#, r#""none""#, r#""none""#),
    (r#"{"anyOf": ["null"]}"#, r#""None""#, r#""None""#),
    (r#"{"anyOf": ["null"]}"#, r#""nil""#, r#""nil""#),
    (r#"{"anyOf": ["null"]}"#, r#""""#, r#""""#),
    (r#"{"anyOf": ["null"]}"#, r#""null null""#, r#""null null""#),
    (r#"{"anyOf": ["null"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": "string"}"#, r#""null""#, r#""null""#),
    (r#"{"type": "string"}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"type": "string"}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"type": "string"}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"type": "string"}"#, r#""none""#, r#""none""#),
    (r#"{"type": "string"}"#, r#""None""#, r#""None""#),
    (r#"{"type": "string"}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "string"}"#, r#""""#, r#""""#),
    (r#"{"type": "string"}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "string"}"#, r#"null"#, r#"null"#),
    (r#"{"type": "integer"}"#, r#""null""#, r#""null""#),
    (r#"{"type": "integer"}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"type": "integer"}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"type": "integer"}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"type": "integer"}"#, r#""none""#, r#""none""#),
    (r#"{"type": "integer"}"#, r#""None""#, r#""None""#),
    (r#"{"type": "integer"}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": "integer"}"#, r#""""#, r#""""#),
    (r#"{"type": "integer"}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": "integer"}"#, r#"null"#, r#"null"#),
    (r#"{}"#, r#""null""#, r#""null""#),
    (r#"{}"#, r#""NULL""#, r#""NULL""#),
    (r#"{}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{}"#, r#""none""#, r#""none""#),
    (r#"{}"#, r#""None""#, r#""None""#),
    (r#"{}"#, r#""nil""#, r#""nil""#),
    (r#"{}"#, r#""""#, r#""""#),
    (r#"{}"#, r#""null null""#, r#""null null""#),
    (r#"{}"#, r#"null"#, r#"null"#),
    (r#"{"description": "x"}"#, r#""null""#, r#""null""#),
    (r#"{"description": "x"}"#, r#""NULL""#, r#""NULL""#),
    (r#"{"description": "x"}"#, r#"" Null ""#, r#"" Null ""#),
    (r#"{"description": "x"}"#, r#""\u001cnull\u00a0""#, r#""\u001cnull\u00a0""#),
    (r#"{"description": "x"}"#, r#""none""#, r#""none""#),
    (r#"{"description": "x"}"#, r#""None""#, r#""None""#),
    (r#"{"description": "x"}"#, r#""nil""#, r#""nil""#),
    (r#"{"description": "x"}"#, r#""""#, r#""""#),
    (r#"{"description": "x"}"#, r#""null null""#, r#""null null""#),
    (r#"{"description": "x"}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""null""#, r#"null"#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""NULL""#, r#"null"#),
    (r#"{"type": ["integer", ["null"]]}"#, r#"" Null ""#, r#"null"#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""\u001cnull\u00a0""#, r#"null"#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""none""#, r#""none""#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""None""#, r#""None""#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""nil""#, r#""nil""#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""""#, r#""""#),
    (r#"{"type": ["integer", ["null"]]}"#, r#""null null""#, r#""null null""#),
    (r#"{"type": ["integer", ["null"]]}"#, r#"null"#, r#"null"#),
];

/// union `type: [..]`: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const UNION: &[Row] = &[
    (r#"{"type": ["integer", "string"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["integer", "string"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["integer", "string"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["integer", "string"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["integer", "string"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["integer", "string"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["integer", "string"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["integer", "string"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["integer", "string"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["integer", "string"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["integer", "string"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["integer", "string"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["string", "integer"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["string", "integer"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["string", "integer"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["string", "integer"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["string", "integer"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["string", "integer"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["string", "integer"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["string", "integer"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["string", "integer"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["string", "integer"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["string", "integer"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["string", "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["boolean", "integer"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["boolean", "integer"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["boolean", "integer"]}"#, r#""true""#, r#"true"#),
    (r#"{"type": ["boolean", "integer"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["boolean", "integer"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["boolean", "integer"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["boolean", "integer"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["boolean", "integer"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["boolean", "integer"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["boolean", "integer"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["boolean", "integer"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["boolean", "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["integer", "boolean"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["integer", "boolean"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["integer", "boolean"]}"#, r#""true""#, r#"true"#),
    (r#"{"type": ["integer", "boolean"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["integer", "boolean"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["integer", "boolean"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["integer", "boolean"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["integer", "boolean"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["integer", "boolean"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["integer", "boolean"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["integer", "boolean"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["integer", "boolean"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["number", "integer"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["number", "integer"]}"#, r#""1.5""#, r#"1.5"#),
    (r#"{"type": ["number", "integer"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["number", "integer"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["number", "integer"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["number", "integer"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["number", "integer"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["number", "integer"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["number", "integer"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["number", "integer"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["number", "integer"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["number", "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["integer", "number"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["integer", "number"]}"#, r#""1.5""#, r#"1.5"#),
    (r#"{"type": ["integer", "number"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["integer", "number"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["integer", "number"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["integer", "number"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["integer", "number"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["integer", "number"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["integer", "number"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["integer", "number"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["integer", "number"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["integer", "number"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["array", "string"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["array", "string"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["array", "string"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["array", "string"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["array", "string"]}"#, r#""[1]""#, r#"[1]"#),
    (r#"{"type": ["array", "string"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["array", "string"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["array", "string"]}"#, r#"" [1] ""#, r#"[1]"#),
    (r#"{"type": ["array", "string"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["array", "string"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["array", "string"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["array", "string"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["string", "array"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["string", "array"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["string", "array"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["string", "array"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["string", "array"]}"#, r#""[1]""#, r#"[1]"#),
    (r#"{"type": ["string", "array"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["string", "array"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["string", "array"]}"#, r#"" [1] ""#, r#"[1]"#),
    (r#"{"type": ["string", "array"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["string", "array"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["string", "array"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["string", "array"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["object", "array"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["object", "array"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["object", "array"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["object", "array"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["object", "array"]}"#, r#""[1]""#, r#"[1]"#),
    (r#"{"type": ["object", "array"]}"#, r#""{\"a\": 1}""#, r#"{"a": 1}"#),
    (r#"{"type": ["object", "array"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["object", "array"]}"#, r#"" [1] ""#, r#"[1]"#),
    (r#"{"type": ["object", "array"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["object", "array"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["object", "array"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["object", "array"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["null", "integer"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["null", "integer"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["null", "integer"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["null", "integer"]}"#, r#""null""#, r#"null"#),
    (r#"{"type": ["null", "integer"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["null", "integer"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["null", "integer"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["null", "integer"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["null", "integer"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["null", "integer"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["null", "integer"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["null", "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["integer", "null"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["integer", "null"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["integer", "null"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["integer", "null"]}"#, r#""null""#, r#"null"#),
    (r#"{"type": ["integer", "null"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["integer", "null"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["integer", "null"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["integer", "null"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["integer", "null"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["integer", "null"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["integer", "null"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["integer", "null"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["array", "null"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["array", "null"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["array", "null"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["array", "null"]}"#, r#""null""#, r#"null"#),
    (r#"{"type": ["array", "null"]}"#, r#""[1]""#, r#"[1]"#),
    (r#"{"type": ["array", "null"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["array", "null"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["array", "null"]}"#, r#"" [1] ""#, r#"[1]"#),
    (r#"{"type": ["array", "null"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["array", "null"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["array", "null"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["array", "null"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["object", "null"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["object", "null"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["object", "null"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["object", "null"]}"#, r#""null""#, r#"null"#),
    (r#"{"type": ["object", "null"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["object", "null"]}"#, r#""{\"a\": 1}""#, r#"{"a": 1}"#),
    (r#"{"type": ["object", "null"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["object", "null"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["object", "null"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["object", "null"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["object", "null"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["object", "null"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#""true""#, r#"true"#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": [["boolean"], "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": [[["number"]]]}"#, r#""5""#, r#"5"#),
    (r#"{"type": [[["number"]]]}"#, r#""1.5""#, r#"1.5"#),
    (r#"{"type": [[["number"]]]}"#, r#""true""#, r#""true""#),
    (r#"{"type": [[["number"]]]}"#, r#""null""#, r#""null""#),
    (r#"{"type": [[["number"]]]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": [[["number"]]]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": [[["number"]]]}"#, r#""x""#, r#""x""#),
    (r#"{"type": [[["number"]]]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": [[["number"]]]}"#, r#"5"#, r#"5"#),
    (r#"{"type": [[["number"]]]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": [[["number"]]]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": [[["number"]]]}"#, r#"null"#, r#"null"#),
    (r#"{"type": [1, "integer"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": [1, "integer"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": [1, "integer"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": [1, "integer"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": [1, "integer"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": [1, "integer"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": [1, "integer"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": [1, "integer"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": [1, "integer"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": [1, "integer"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": [1, "integer"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": [1, "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": [null, true, "boolean"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": [null, true, "boolean"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": [null, true, "boolean"]}"#, r#""true""#, r#"true"#),
    (r#"{"type": [null, true, "boolean"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": [null, true, "boolean"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": [null, true, "boolean"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": [null, true, "boolean"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": [null, true, "boolean"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": [null, true, "boolean"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": [null, true, "boolean"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": [null, true, "boolean"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": [null, true, "boolean"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": []}"#, r#""5""#, r#""5""#),
    (r#"{"type": []}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": []}"#, r#""true""#, r#""true""#),
    (r#"{"type": []}"#, r#""null""#, r#""null""#),
    (r#"{"type": []}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": []}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": []}"#, r#""x""#, r#""x""#),
    (r#"{"type": []}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": []}"#, r#"5"#, r#"5"#),
    (r#"{"type": []}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": []}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": []}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["string"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["string"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["string"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["string"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["string"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["string"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["string"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["string"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["string"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["string"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["string"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["string"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["array"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["array"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["array"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["array"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["array"]}"#, r#""[1]""#, r#"[1]"#),
    (r#"{"type": ["array"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["array"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["array"]}"#, r#"" [1] ""#, r#"[1]"#),
    (r#"{"type": ["array"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["array"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["array"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["array"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["object"]}"#, r#""5""#, r#""5""#),
    (r#"{"type": ["object"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["object"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["object"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["object"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["object"]}"#, r#""{\"a\": 1}""#, r#"{"a": 1}"#),
    (r#"{"type": ["object"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["object"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["object"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["object"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["object"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["object"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["integer", "integer"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["integer", "integer"]}"#, r#""1.5""#, r#""1.5""#),
    (r#"{"type": ["integer", "integer"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["integer", "integer"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["integer", "integer"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["integer", "integer"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["integer", "integer"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["integer", "integer"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["integer", "integer"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["integer", "integer"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["integer", "integer"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["integer", "integer"]}"#, r#"null"#, r#"null"#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#""5""#, r#"5"#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#""1.5""#, r#"1.5"#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#""true""#, r#""true""#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#""null""#, r#""null""#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#""{\"a\": 1}""#, r#""{\"a\": 1}""#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#""x""#, r#""x""#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#"" [1] ""#, r#"" [1] ""#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#"5"#, r#"5"#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["INTEGER", "Boolean", "number"]}"#, r#"null"#, r#"null"#),
];

/// array: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const ARRAY: &[Row] = &[
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""a""#, r#"["a"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[\"a\", \"b\"]""#, r#"["a", "b"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"" [\"a\"] ""#, r#"["a"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""\t[1]\r\n""#, r#"[1]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""\u00a0[\"a\"]""#, r#"["\u00a0[\"a\"]"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[1,""#, r#"["[1,"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[1, 2, ]""#, r#"["[1, 2, ]"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[1] x""#, r#"["[1] x"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""['a']""#, r#"["['a']"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""{\"a\": 1}""#, r#"["{\"a\": 1}"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""5""#, r#"["5"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""null""#, r#"["null"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""NULL""#, r#"["NULL"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""\"x\"""#, r#"["\"x\""]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[]""#, r#"[]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[ ]""#, r#"[]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""""#, r#"[""]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[true, null]""#, r#"[true, null]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[-0.0]""#, r#"[-0.0]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[1.0]""#, r#"[1.0]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""[1e5]""#, r#"[100000.0]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""{\"a\":1,\"a\":2}""#, r#"["{\"a\":1,\"a\":2}"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#""\ufeff[1]""#, r#"["\ufeff[1]"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"5"#, r#"[5]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"1.5"#, r#"[1.5]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"true"#, r#"[true]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"false"#, r#"[false]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"null"#, r#"null"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"{"a": 1}"#, r#"[{"a": 1}]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"[]"#, r#"[]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"["a", "b"]"#, r#"["a", "b"]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"[[1]]"#, r#"[[1]]"#),
    (r#"{"type": "array"}"#, r#""[1, \"2\"]""#, r#"[1, "2"]"#),
    (r#"{"type": "array"}"#, r#""x""#, r#"["x"]"#),
    (r#"{"type": "array"}"#, r#"3"#, r#"[3]"#),
    (r#"{"type": "array", "nullable": true}"#, r#""null""#, r#"null"#),
    (r#"{"type": "array", "nullable": true}"#, r#"" NULL ""#, r#"null"#),
    (r#"{"type": "array", "nullable": true}"#, r#""none""#, r#"["none"]"#),
    (r#"{"type": "array", "nullable": true}"#, r#""[null]""#, r#"[null]"#),
    (r#"{"type": "array", "items": {"type": "integer"}}"#, r#""5""#, r#"["5"]"#),
    (r#"{"type": "array", "items": {"type": "integer"}}"#, r#""[\"5\"]""#, r#"["5"]"#),
    (r#"{"type": "array", "items": {"type": "integer"}}"#, r#"["5"]"#, r#"["5"]"#),
    (r#"{"type": "array", "items": {"type": "integer"}}"#, r#""[5]""#, r#"[5]"#),
];

/// object: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const OBJECT: &[Row] = &[
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""{\"a\": 1}""#, r#"{"a": 1}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#"" {\"a\": \"5\"} ""#, r#"{"a": "5"}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""\n{}\t""#, r#"{}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""\u00a0{}""#, r#""\u00a0{}""#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""{\"a\": 1""#, r#""{\"a\": 1""#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""5""#, r#""5""#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""null""#, r#""null""#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""\"{}\"""#, r#""\"{}\"""#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""{'a': 1}""#, r#""{'a': 1}""#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#"{"a": "5"}"#, r#"{"a": "5"}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#"{"a": 1}"#, r#"{"a": 1}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#"[1]"#, r#"[1]"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#"5"#, r#"5"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#"null"#, r#"null"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#"true"#, r#"true"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}}}"#, r#""x""#, r#""x""#),
    (r#"{"type": "object", "nullable": true}"#, r#""null""#, r#"null"#),
    (r#"{"type": "object", "nullable": true}"#, r#""{}""#, r#"{}"#),
];

/// nested repair: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const NESTED: &[Row] = &[
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#""{\"tags\": \"[\\\"a\\\"]\", \"n\": \"5\", \"s\": \"[1]\", \"cfg\": \"{\\\"deep\\\": \\\"[1]\\\"}\"}""#, r#"{"tags": ["a"], "n": "5", "s": "[1]", "cfg": {"deep": [1]}}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"tags": "[\"a\"]", "n": "5", "s": "[1]", "cfg": "{\"deep\":\"[1]\"}", "meta": "{\"k\": 1}"}"#, r#"{"tags": ["a"], "n": "5", "s": "[1]", "cfg": {"deep": [1]}, "meta": {"k": 1}}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"tags": " [1] "}"#, r#"{"tags": [1]}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"tags": "\u00a0[1]\u00a0"}"#, r#"{"tags": [1]}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"tags": "\u001c[1]"}"#, r#"{"tags": [1]}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"tags": "[1"}"#, r#"{"tags": "[1"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"tags": "{}"}"#, r#"{"tags": "{}"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"cfg": "[1]"}"#, r#"{"cfg": "[1]"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"meta": "null"}"#, r#"{"meta": "null"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"meta": "[1]"}"#, r#"{"meta": "[1]"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"s": "{\"a\": 1}"}"#, r#"{"s": "{\"a\": 1}"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"n": "{\"a\": 1}"}"#, r#"{"n": "{\"a\": 1}"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"{"other": "[1]"}"#, r#"{"other": "[1]"}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#""[1]""#, r#""[1]""#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#"" {\"n\": 1}""#, r#"{"n": 1}"#),
    (r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}, "cfg": {"type": "object", "properties": {"deep": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}, "s": {"type": "string"}, "meta": {"type": ["object", "null"]}}}"#, r#""\u00a0{}""#, r#""\u00a0{}""#),
    (r#"{"type": "array", "items": {"anyOf": [{"type": "object"}, {"type": "null"}]}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"[{"a": 1}, "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, {"x": "[2]"}, {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": ["object", "null"]}]}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"[{"a": 1}, "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, {"x": "[2]"}, {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"allOf": [{"type": "object"}]}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"[{"a": 1}, "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, {"x": "[2]"}, {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"anyOf": [{"anyOf": [{"type": "object"}]}]}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"[{"a": 1}, "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, {"x": "[2]"}, {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"type": "string"}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"not": {"type": "object"}}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"type": ["object"]}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"[{"a": 1}, "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, {"x": "[2]"}, {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"type": ["array", "object"]}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"[{"a": 1}, [1], ["{\"a\": 1}"], "x", 5, {"x": "[2]"}, {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"anyOf": [{"type": "array", "items": {"type": "object"}}]}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"["{\"a\": 1}", [1], ["{\"a\": 1}"], "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"type": "array", "items": {"type": "object"}}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"["{\"a\": 1}", [1], [{"a": 1}], "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"anyOf": {"type": "object"}}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#),
    (r#"{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "array"}}}}"#, r#"["{\"a\": 1}", "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, "{\"x\": \"[2]\"}", {"x": "[3]"}, null]"#, r#"[{"a": 1}, "[1]", "[\"{\\\"a\\\": 1}\"]", "x", 5, {"x": [2]}, {"x": [3]}, null]"#),
    (r#"{"type": "object", "properties": {"a": {"anyOf": [{"type": "array", "items": {"type": "object"}}]}}}"#, r#"{"a": "[\"{\\\"x\\\": 1}\"]"}"#, r#"{"a": ["{\"x\": 1}"]}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "string", "items": {"type": "object"}}}}"#, r#"{"a": ["{\"x\": 1}"]}"#, r#"{"a": [{"x": 1}]}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}}"#, r#"{"a": "5", "b": "true"}"#, r#"{"a": "5", "b": "true"}"#),
    (r#"{"type": "object", "properties": {"a": "array", "b": {"type": "array"}}}"#, r#"{"a": "[1]", "b": "[2]"}"#, r#"{"a": "[1]", "b": [2]}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "array"}}, "items": {"type": "object"}}"#, r#"{"a": "[1]"}"#, r#"{"a": [1]}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {"c": {"type": "array"}}}}}}}"#, r#"{"a": {"b": "{\"c\": \"[1, 2]\"}"}}"#, r#"{"a": {"b": {"c": [1, 2]}}}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {"c": {"type": "array"}}}}}}}"#, r#""{\"a\": \"{\\\"b\\\": {\\\"c\\\": \\\"[1]\\\"}}\"}""#, r#"{"a": {"b": {"c": [1]}}}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "array"}}}"#, r#"{"a": "[1]"}"#, r#"{"a": [1]}"#),
    (r#"{"type": "object", "properties": {"a": {"type": "array"}}}"#, r#""{\"a\": \"[1]\"}""#, r#"{"a": [1]}"#),
    (r#"{"type": ["object"], "properties": {"a": {"type": "array"}}}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["object"], "properties": {"a": {"type": "array"}}}"#, r#""{\"a\": \"[1]\"}""#, r#"{"a": [1]}"#),
    (r#"{"type": ["object", "null"], "properties": {"a": {"type": "array"}}}"#, r#"{"a": "[1]"}"#, r#"{"a": "[1]"}"#),
    (r#"{"type": ["object", "null"], "properties": {"a": {"type": "array"}}}"#, r#""{\"a\": \"[1]\"}""#, r#"{"a": [1]}"#),
    (r#"{"type": "array", "items": {"type": "array"}}"#, r#"["[1]"]"#, r#"[[1]]"#),
    (r#"{"type": ["array"], "items": {"type": "array"}}"#, r#"["[1]"]"#, r#"["[1]"]"#),
    (r#"{"type": ["array", "null"], "items": {"type": "array"}}"#, r#"["[1]"]"#, r#"["[1]"]"#),
    (r#"{"type": ["array"], "items": {"type": "array"}}"#, r#""[\"[1]\"]""#, r#"[[1]]"#),
    (r#"{"type": ["array", "null"], "items": {"type": "array"}}"#, r#""[\"[1]\"]""#, r#"[[1]]"#),
];

/// whole (parameters, args) rows: odd shapes: every row observed by running hermes-agent 0.19.0 (`model_tools.coerce_tool_args`).
#[rustfmt::skip]
const SHAPES: &[Row] = &[
    (r#"null"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"null"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"[]"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"[]"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    // reference raises AttributeError (see REFERENCE_CRASHES): [1] | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): [1] | {"v": "null", "w": "[1]"}
    // reference raises AttributeError (see REFERENCE_CRASHES): "x" | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): "x" | {"v": "null", "w": "[1]"}
    // reference raises AttributeError (see REFERENCE_CRASHES): 5 | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): 5 | {"v": "null", "w": "[1]"}
    // reference raises AttributeError (see REFERENCE_CRASHES): true | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): true | {"v": "null", "w": "[1]"}
    (r#"{}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": null}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": null}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": {}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": []}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": []}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": [1]} | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": [1]} | {"v": "null", "w": "[1]"}
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": "x"} | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": "x"} | {"v": "null", "w": "[1]"}
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": {"v": "integer"}} | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": {"v": "integer"}} | {"v": "null", "w": "[1]"}
    (r#"{"properties": {"v": null}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": null}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": {"v": 1}} | {"v": "5", "w": "6", "x": "7"}
    // reference raises AttributeError (see REFERENCE_CRASHES): {"properties": {"v": 1}} | {"v": "null", "w": "[1]"}
    (r#"{"properties": {"v": []}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": []}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": {"v": {}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": 5}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {"type": 5}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": true}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {"type": true}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": null, "nullable": true}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {"type": null, "nullable": true}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": null, "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": "", "nullable": true}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {"type": "", "nullable": true}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": null, "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": [], "nullable": true}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {"type": [], "nullable": true}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": null, "w": "[1]"}"#),
    // reference raises TypeError (see REFERENCE_CRASHES): {"properties": {"v": {"type": {"a": 1}}}} | {"v": "5", "w": "6", "x": "7"}
    // reference raises TypeError (see REFERENCE_CRASHES): {"properties": {"v": {"type": {"a": 1}}}} | {"v": "null", "w": "[1]"}
    // reference raises TypeError (see REFERENCE_CRASHES): {"properties": {"v": {"type": {"a": 1}, "nullable": true}}} | {"v": "5", "w": "6", "x": "7"}
    (r#"{"properties": {"v": {"type": {"a": 1}, "nullable": true}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": null, "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": ["integer", {"a": 1}]}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": 5, "w": "6", "x": "7"}"#),
    // reference raises TypeError (see REFERENCE_CRASHES): {"properties": {"v": {"type": ["integer", {"a": 1}]}}} | {"v": "null", "w": "[1]"}
    // reference raises TypeError (see REFERENCE_CRASHES): {"properties": {"v": {"type": [{"a": 1}, "integer"]}}} | {"v": "5", "w": "6", "x": "7"}
    // reference raises TypeError (see REFERENCE_CRASHES): {"properties": {"v": {"type": [{"a": 1}, "integer"]}}} | {"v": "null", "w": "[1]"}
    (r#"{"properties": {"v": {"type": "INTEGER"}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": "5", "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {"type": "INTEGER"}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": ["integer"]}, "w": {"type": "integer"}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": 5, "w": 6, "x": "7"}"#),
    (r#"{"properties": {"v": {"type": ["integer"]}, "w": {"type": "integer"}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"type": "array", "properties": {"v": {"type": "integer"}}}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": 5, "w": "6", "x": "7"}"#),
    (r#"{"type": "array", "properties": {"v": {"type": "integer"}}}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"properties": {"v": {"type": "integer"}}, "required": ["v"]}"#, r#"{"v": "5", "w": "6", "x": "7"}"#, r#"{"v": 5, "w": "6", "x": "7"}"#),
    (r#"{"properties": {"v": {"type": "integer"}}, "required": ["v"]}"#, r#"{"v": "null", "w": "[1]"}"#, r#"{"v": "null", "w": "[1]"}"#),
    (r#"{"type": "object", "properties": {"v": {"type": "integer"}}}"#, r#"null"#, r#"null"#),
    (r#"{"type": "object", "properties": {"v": {"type": "integer"}}}"#, r#"[]"#, r#"[]"#),
    (r#"{"type": "object", "properties": {"v": {"type": "integer"}}}"#, r#"["5"]"#, r#"["5"]"#),
    (r#"{"type": "object", "properties": {"v": {"type": "integer"}}}"#, r#""5""#, r#""5""#),
    (r#"{"type": "object", "properties": {"v": {"type": "integer"}}}"#, r#"5"#, r#"5"#),
    (r#"{"type": "object", "properties": {"v": {"type": "integer"}}}"#, r#"{}"#, r#"{}"#),
    (r#"{"type": "object", "properties": {"v": {"type": "integer"}}}"#, r#"true"#, r#"true"#),
];

// ---------------------------------------------------------------------------
// Deliberate difference 1: exact integers.

/// Deliberate difference 1 (module docs): a string whose exact decimal value is
/// whole keeps that exact value when it fits i64/u64; beyond 64 bits it is the
/// correctly rounded float, the number the reference gives as a big integer.
/// The comment on each row is what hermes-agent 0.19.0 returns, for `integer`
/// and `number` alike (it goes through a float).
const EXACT_INTEGERS: &[(&str, &str)] = &[
    (r#""9007199254740993""#, r#"9007199254740993"#), // ref: 9007199254740992
    (r#""9007199254740993.0""#, r#"9007199254740993"#), // ref: 9007199254740992
    (r#""-9007199254740993""#, r#"-9007199254740993"#), // ref: -9007199254740992
    (r#""1234567890123456789""#, r#"1234567890123456789"#), // ref: 1234567890123456768
    (r#""123456789012345678""#, r#"123456789012345678"#), // ref: 123456789012345680
    (r#""9223372036854775807""#, r#"9223372036854775807"#), // ref: 9223372036854775808
    (r#""9223372036854775808""#, r#"9223372036854775808"#), // ref: same
    (r#""18446744073709551615""#, r#"18446744073709551615"#), // ref: 18446744073709551616
    (r#""1.8446744073709551615e19""#, r#"18446744073709551615"#), // ref: 18446744073709551616
    (r#""-9223372036854775808""#, r#"-9223372036854775808"#), // ref: same
    (r#""1e19""#, r#"10000000000000000000"#),         // ref: same
    // Beyond 64 bits: the float, the same number as the reference's.
    (r#""18446744073709551616""#, r#"18446744073709551616.0"#), // ref: 18446744073709551616
    (r#""-9223372036854775809""#, r#"-9223372036854775808"#),   // ref: same
    (r#""99999999999999999999""#, r#"1e20"#),                   // ref: 100000000000000000000
    (r#""1e20""#, r#"1e20"#),                                   // ref: 100000000000000000000
    (r#""1e22""#, r#"1e22"#),                                   // ref: 10000000000000000000000
    (r#""-1e22""#, r#"-1e22"#),                                 // ref: -10000000000000000000000
    (r#""1e30""#, r#"1e30"#),   // ref: 1000000000000000019884624838656
    (r#""1e308""#, r#"1e308"#), // ref: a 309-digit integer
    (r#""1e5_0""#, r#"1e50"#),  // ref: 100000000000000007629769841091887003294964970946560
    (
        r#""123456789012345678901234567890""#,
        r#"1.2345678901234568e29"#,
    ), // ref: 123456789012345677877719597056
    (r#""12345678901234567890123""#, r#"1.2345678901234568e22"#), // ref: 12345678901234567741440
    // Not whole: through a correctly rounded f64, as in the reference.
    (r#""10000000000000000000000000.5""#, r#"1e25"#), // ref: 10000000000000000905969664
    (r#""12345678901234567890.5""#, r#"12345678901234567168"#), // ref: same
    (r#""9007199254740993.5""#, r#"9007199254740994"#), // ref: same
    (r#""-9223372036854775808.4""#, r#"-9223372036854775808"#), // ref: same
    (r#""4.0000000000000001""#, r#"4"#),              // ref: same
    // Past the f64 range: the string stays.
    (r#""1e309""#, r#""1e309""#), // ref: same
    // Zero never becomes -0.
    (r#""-0""#, r#"0"#),                     // ref: same
    (r#""-0e0""#, r#"0"#),                   // ref: same
    (r#""-0.0""#, r#"0"#),                   // ref: same
    (r#""-1e-400""#, r#"0"#),                // ref: same
    (r#""0e99999999999999999999""#, r#"0"#), // ref: same
];

#[test]
fn exact_integers_deliberate_difference_1() {
    let mut rows = Vec::new();
    for ty in ["integer", "number"] {
        for (value, expected) in EXACT_INTEGERS {
            rows.push((
                json!({"type": "object", "properties": {"v": {"type": ty}}}),
                json!({"v": parse(value)}),
                json!({"v": parse(expected)}),
            ));
        }
    }
    check_full("EXACT_INTEGERS", &rows);
    // Exactness is visible in the serialized text too.
    let out = coerce_args(
        &json!({"properties": {"n": {"type": "integer"}}}),
        json!({"n": "9007199254740993"}),
    );
    assert_eq!(out.to_string(), r#"{"n":9007199254740993}"#);
}

// ---------------------------------------------------------------------------
// Deliberate difference 2: nested repair of JSON-string arrays.

/// Deliberate difference 2 (module docs): a property typed exactly `array`
/// that arrives as a JSON string, or is wrapped into a one-element list, gets
/// nested repair too. The comment on each row is what hermes-agent 0.19.0
/// returns; in every row, running the reference a second time on its own output
/// gives our result.
const NESTED_ARRAY_STRINGS: &[Row] = &[
    (
        r#"{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "array"}}}}"#,
        r#""[\"{\\\"x\\\": \\\"[1]\\\"}\"]""#,
        r#"[{"x": [1]}]"#,
    ), // ref: ["{\"x\": \"[1]\"}"]
    (
        r#"{"type": "array", "items": {"type": "array"}}"#,
        r#""[\"[1]\", \"x\"]""#,
        r#"[[1], "x"]"#,
    ), // ref: ["[1]", "x"]
    (
        r#"{"type": "array", "items": {"type": "object"}}"#,
        r#""{\"a\": 1}""#,
        r#"[{"a": 1}]"#,
    ), // ref: ["{\"a\": 1}"] (wrapped, element left a string)
    (
        r#"{"type": "array", "items": {"type": "object", "properties": {"x": {"type": "array"}}}}"#,
        r#"{"x": "[1]"}"#,
        r#"[{"x": [1]}]"#,
    ), // ref: [{"x": "[1]"}]
    (
        r#"{"type": "array", "items": {"type": "array"}}"#,
        r#""\u00a0[1]""#,
        r#"[[1]]"#,
    ), // ref: ["\u00a0[1]"] (not JSON white space at the top, Python white space when nested)
    (
        r#"{"type": "array", "items": {"type": "string"}}"#,
        r#""[\"[1]\"]""#,
        r#"["[1]"]"#,
    ), // ref: same (string items are never parsed)
];

#[test]
fn nested_array_strings_deliberate_difference_2() {
    check("NESTED_ARRAY_STRINGS", NESTED_ARRAY_STRINGS);
}

// ---------------------------------------------------------------------------
// JSON that Python's json module and serde_json read differently.

/// Not observed behaviour to match: strings whose JSON Python accepts but
/// serde_json cannot represent or reads differently. The comment on each row
/// is what hermes-agent 0.19.0 returns.
const JSON_QUIRKS: &[Row] = &[
    (r#"{"type": "array"}"#, r#""[NaN]""#, r#"["[NaN]"]"#), // ref: [NaN]
    (
        r#"{"type": "array"}"#,
        r#""[-Infinity]""#,
        r#"["[-Infinity]"]"#,
    ), // ref: [-Infinity]
    (r#"{"type": "array"}"#, r#""[1e400]""#, r#"["[1e400]"]"#), // ref: [Infinity]
    (
        r#"{"type": "array"}"#,
        r#""[\"\\ud800\"]""#,
        r#"["[\"\\ud800\"]"]"#,
    ), // ref: a lone surrogate string
    (r#"{"type": "array"}"#, r#""[-0]""#, r#"[-0.0]"#),     // ref: [0]
    (
        r#"{"type": "array"}"#,
        r#""[18446744073709551616]""#,
        r#"[18446744073709551616.0]"#,
    ), // ref: [18446744073709551616]
    (
        r#"{"type": "object"}"#,
        r#""{\"a\": NaN}""#,
        r#""{\"a\": NaN}""#,
    ), // ref: {"a": NaN}
    (
        r#"{"type": "object", "properties": {"a": {"type": "array"}}}"#,
        r#"{"a": "[Infinity]"}"#,
        r#"{"a": "[Infinity]"}"#,
    ), // ref: {"a": [Infinity]}
];

#[test]
fn json_quirks() {
    check("JSON_QUIRKS", JSON_QUIRKS);
    // serde_json stops at 128 levels, Python at its recursion limit (it
    // crashes with RecursionError near 1000): deeper JSON strings stay strings.
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let out = coerce_args(
        &json!({"properties": {"v": {"type": ["array", "string"]}}}),
        json!({ "v": deep.clone() }),
    );
    assert_eq!(out, json!({ "v": deep })); // ref: 200 nested lists
}

// ---------------------------------------------------------------------------
// Where the reference crashes.

/// Not observed behaviour to match: the reference raises on these (the
/// comment says what); here the values are left alone, property by property.
const REFERENCE_CRASHES: &[Row] = &[
    (r#"[1]"#, r#"{"v": "5"}"#, r#"{"v": "5"}"#), // AttributeError
    (r#""x""#, r#"{"v": "5"}"#, r#"{"v": "5"}"#), // AttributeError
    (r#"{"properties": [1]}"#, r#"{"v": "5"}"#, r#"{"v": "5"}"#), // AttributeError
    (r#"{"properties": "x"}"#, r#"{"v": "5"}"#, r#"{"v": "5"}"#), // AttributeError
    (
        r#"{"properties": {"v": "integer", "w": {"type": "integer"}}}"#,
        r#"{"v": "5", "w": "6"}"#,
        r#"{"v": "5", "w": 6}"#,
    ), // AttributeError for the whole call
    (
        r#"{"properties": {"v": 1, "w": {"type": "integer"}}}"#,
        r#"{"v": "5", "w": "6"}"#,
        r#"{"v": "5", "w": 6}"#,
    ), // AttributeError for the whole call
    (
        r#"{"properties": {"v": {"type": {"a": 1}}}}"#,
        r#"{"v": "5"}"#,
        r#"{"v": "5"}"#,
    ), // TypeError: unhashable type
    (
        r#"{"properties": {"v": {"type": {"a": 1}, "nullable": true}}}"#,
        r#"{"v": "5"}"#,
        r#"{"v": "5"}"#,
    ), // TypeError (but "null" -> null works there, see SHAPES)
    (
        r#"{"properties": {"v": {"type": ["integer", {"a": 1}, "boolean"]}}}"#,
        r#"{"v": "true"}"#,
        r#"{"v": "true"}"#,
    ), // TypeError: members after an object member are never tried
    (
        r#"{"properties": {"v": {"type": [{"a": 1}, "integer"]}}}"#,
        r#"{"v": "5"}"#,
        r#"{"v": "5"}"#,
    ), // TypeError
];

#[test]
fn reference_crashes_leave_values_alone() {
    check_shapes("REFERENCE_CRASHES", REFERENCE_CRASHES);
}

// ---------------------------------------------------------------------------
// Depth and size.

/// `leaf` inside `depth` nested one-element lists.
fn wrap_in_lists(leaf: Value, depth: usize) -> Value {
    (0..depth).fold(leaf, |v, _| Value::Array(vec![v]))
}

/// An object from moved values (`json!` would deep-copy interpolated values,
/// recursively).
fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// A schema of `depth` nested `array`s whose innermost items accept arrays.
fn nested_array_schema(depth: usize) -> Value {
    (0..depth).fold(json!({"type": "array"}), |items, _| {
        obj([("type", json!("array")), ("items", items)])
    })
}

/// `{"properties": {name: schema}}`.
fn params_with(name: &str, schema: Value) -> Value {
    obj([("properties", obj([(name, schema)]))])
}

/// Drops a value without recursion, so tests can build very deep values.
fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(mut v) = stack.pop() {
        match &mut v {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    if let Some(child) = map.remove(&k) {
                        stack.push(child);
                    }
                }
            }
            _ => {}
        }
    }
}

#[test]
fn values_64_levels_down_are_left_alone() {
    let params = params_with("v", nested_array_schema(80));
    for depth in [1, 2, 10, 63, 64, 65, 70] {
        let args = obj([("v", wrap_in_lists(json!("[7]"), depth))]);
        let expected_leaf = if depth < 64 { json!([7]) } else { json!("[7]") };
        let expected = obj([("v", wrap_in_lists(expected_leaf, depth))]);
        assert_eq!(
            coerce_args(&params, args),
            expected,
            "string at depth {depth}"
        );
    }
}

#[test]
fn deep_payloads_and_schemas_do_not_overflow_the_stack() {
    // Run on a small stack: coercion's own recursion must stay bounded.
    let worker = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            const DEEP: usize = 100_000;
            // A deep payload under a deep schema.
            let params = params_with("v", nested_array_schema(DEEP));
            let plan = CoercionPlan::compile(&params);
            let out = plan.apply(obj([("v", wrap_in_lists(json!("[1]"), DEEP))]));
            let ok = out["v"].is_array();
            drop_deep(out);
            drop_deep(params);
            assert!(ok);

            // Deeply nested anyOf, type lists and properties.
            let mut any_of = json!({"type": "array"});
            let mut type_list = json!("integer");
            let mut props = json!({"type": "array"});
            for _ in 0..DEEP {
                any_of = obj([("anyOf", Value::Array(vec![any_of]))]);
                type_list = Value::Array(vec![type_list]);
                props = obj([
                    ("type", json!("object")),
                    ("properties", obj([("p", props)])),
                ]);
            }
            let params = obj([(
                "properties",
                obj([
                    ("a", obj([("type", json!("array")), ("items", any_of)])),
                    ("t", obj([("type", type_list)])),
                    ("o", props),
                ]),
            )]);
            let out = coerce_args(&params, json!({"a": "[\"[1]\"]", "t": "5", "o": "{}"}));
            drop_deep(params);
            assert_eq!(out, json!({"a": ["[1]"], "t": "5", "o": {}}));

            // A deeply nested JSON string.
            let deep = format!("{}{}", "[".repeat(DEEP), "]".repeat(DEEP));
            let out = coerce_args(
                &json!({"properties": {"v": {"type": ["array", "object"]}}}),
                obj([("v", Value::String(deep))]),
            );
            assert!(out["v"].is_string());
        })
        .expect("spawn");
    worker.join().expect("no stack overflow or panic");
}

#[test]
fn huge_payload() {
    let params = json!({"properties": {"todos": {"type": "array", "items": {
        "type": "object", "properties": {"deps": {"type": "array"}}
    }}}});
    let n = 50_000;
    let todos: Vec<Value> = (0..n)
        .map(|i| json!(format!("{{\"id\": {i}, \"deps\": \"[{i}]\"}}")))
        .collect();
    let out = coerce_args(&params, json!({ "todos": todos }));
    let todos = out["todos"].as_array().expect("array");
    assert_eq!(todos.len(), n);
    assert_eq!(todos[n - 1], json!({"id": n - 1, "deps": [n - 1]}));
}

/// Argument names are matched exactly, whatever their length: a name that
/// differs from a property's in one byte, anywhere, is not that property
/// (plans compare names a word at a time, so every length class and every
/// byte position is tried), at the top level and among nested properties.
#[test]
fn names_match_exactly_at_every_length_and_position() {
    for len in 1..=40usize {
        let name: String = (0..len)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let params = json!({"properties": {
            name.as_str(): {"type": "integer"},
            "outer": {"type": "object", "properties": {name.as_str(): {"type": "array"}}},
        }});
        let plan = CoercionPlan::compile(&params);
        let exact = plan.apply(json!({ name.as_str(): "5", "outer": { name.as_str(): "[1]" } }));
        assert_eq!(exact[name.as_str()], json!(5), "length {len}");
        assert_eq!(exact["outer"][name.as_str()], json!([1]), "length {len}");
        for pos in 0..len {
            let mut near = name.clone().into_bytes();
            near[pos] = b'Z';
            let near = String::from_utf8(near).expect("ASCII");
            let args = json!({ near.as_str(): "5", "outer": { near.as_str(): "[1]" } });
            assert_eq!(plan.apply(args.clone()), args, "length {len}, byte {pos}");
        }
    }
}

// ---------------------------------------------------------------------------
// Plans.

fn sample_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "A file path; never coerced."},
            "limit": {"type": "integer", "description": "Max lines."},
            "ratio": {"type": ["number", "null"]},
            "recursive": {"type": "boolean", "nullable": true},
            "tags": {"type": "array", "items": {"type": "string"}},
            "todos": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "deps": {"type": "array", "items": {"type": "string"}},
                    "meta": {"anyOf": [{"type": "object"}, {"type": "null"}]}
                }
            }},
            "options": {"type": "object", "properties": {
                "mode": {"type": "string"},
                "filters": {"type": "array"}
            }},
            "weird \"name\"\n": {"type": "integer"}
        },
        "required": ["path"]
    })
}

#[path = "snapshots/coerce__sample_plan.snap.rs"]
mod snapshot;

/// The emitted text of `sample_schema()`'s plan,
/// `tests/snapshots/coerce__sample_plan.snap.rs`, compiled here as a
/// `static` (the build step's emitter, `hermes_build_tools::plans::plan_expr`,
/// is checked against the same file in `tests/tests/plan_expr.rs`).
#[test]
fn the_emitted_static_is_the_compiled_plan() {
    let plan = CoercionPlan::compile(&sample_schema());
    // The static built from that text is the same plan and behaves the same.
    assert_eq!(snapshot::SAMPLE_PLAN, plan);
    let args = json!({
        "path": "42", "limit": " 7 ", "ratio": "null", "recursive": "TRUE",
        "tags": "solo", "todos": "[\"{\\\"id\\\": 1, \\\"deps\\\": \\\"[\\\\\\\"a\\\\\\\"]\\\", \\\"meta\\\": \\\"{}\\\"}\"]",
        "options": {"mode": "[1]", "filters": "[\"x\"]"}, "weird \"name\"\n": "3", "extra": "9"
    });
    let expected = json!({
        "path": "42", "limit": 7, "ratio": null, "recursive": true,
        "tags": ["solo"], "todos": [{"id": 1, "deps": ["a"], "meta": {}}],
        "options": {"mode": "[1]", "filters": ["x"]}, "weird \"name\"\n": 3, "extra": "9"
    });
    assert_eq!(snapshot::SAMPLE_PLAN.apply(args.clone()), expected);
    assert_eq!(plan.apply(args), expected);
}

/// Written by hand, the way generated code writes plans of built-in tools.
/// (A slice of constructor calls is a `const` block: calls are not promoted.)
static HAND_WRITTEN: CoercionPlan = coercion_plan(
    const {
        &[
            prop_plan("count", 0, &[Kind::Integer], RepairNode::INERT),
            prop_plan(
                "items",
                PropPlan::ARRAY,
                &[Kind::Array],
                repair_node(
                    0,
                    const {
                        &[repair_node(
                            RepairNode::ACCEPTS_OBJECT,
                            &[],
                            const {
                                &[repair_prop(
                                    "n",
                                    repair_node(RepairNode::ACCEPTS_ARRAY, &[], &[]),
                                )]
                            },
                        )]
                    },
                    &[],
                ),
            ),
        ]
    },
);

#[test]
fn hand_written_static_plan_equals_compiled_plan() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "n": {"type": ["array", "null"]}, "label": {"type": "string"}
        }}},
        "count": {"type": "integer"}
    }});
    let compiled = CoercionPlan::compile(&schema);
    assert_eq!(compiled, HAND_WRITTEN, "{compiled:#?}");
    for args in [
        json!({"count": "5", "items": "[\"{\\\"n\\\": \\\"[1]\\\"}\"]", "name": "5"}),
        json!({"count": 5, "items": [{"n": "[2]", "label": "[3]"}], "name": "x"}),
        json!({"items": {"n": "[4]"}}),
        json!(["not", "an", "object"]),
    ] {
        assert_eq!(
            HAND_WRITTEN.apply(args.clone()),
            compiled.apply(args.clone())
        );
        assert_eq!(HAND_WRITTEN.apply(args.clone()), coerce_args(&schema, args));
    }
    // Plain string properties never make it into a plan.
    assert!(compiled.props().iter().all(|p| p.name() != "name"));
}

#[test]
fn empty_and_inert_plans() {
    let plan = CoercionPlan::compile(&json!({"properties": {"a": {"type": "string"}}}));
    assert!(plan.props().is_empty());
    assert_eq!(plan, CoercionPlan::compile(&json!(null)));
}
