//! Benchmark of argument coercion: a compiled `CoercionPlan` against a baseline that walks the schema JSON on every call.
//!
//! The baseline below applies the same rules as `hermes_runtime::coerce_args`, but
//! reads the schema `Value` on each call instead of a compiled plan. It exists
//! only to be measured against; `main` first checks that both agree on the
//! benchmarked calls and on a set of other calls.
//!
//! After divan's table, the ratios are measured paired (`paired/mod.rs`):
//! short alternating batches of the plan and the walk, one ratio per pair.
//! Those median ratios are the figures `FIGURES.md` reports.
//!
//! Run: `cargo bench -p hermes-tests --bench coerce`.

use divan::{black_box, Bencher};
use hermes_runtime::{coerce_args, CoercionPlan};
use paired::{batch_ns, paired};
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

mod paired;

fn main() {
    check_baseline_agrees();
    divan::main();
    paired_ratios();
}

/// Prints how many times faster the plan is than the walk, per call shape.
fn paired_ratios() {
    // Small batches keep the inputs in cache, as a call just parsed is.
    const CALLS: u32 = 64;
    println!();
    let shapes = [
        (
            "3 string-encoded scalars",
            scalar_encoded_call as fn() -> Value,
        ),
        ("one a JSON array in a string", string_encoded_call),
        ("well typed", well_typed_call),
    ];
    for (shape, call) in shapes {
        let label = format!("walking / plan, {shape}");
        paired(&label, CALLS, &mut by_walking(call), &mut by_plan(call));
    }
    // What the plan costs over code written by hand for this one schema.
    let mut by_hand = |n| batch_ns(n, scalar_encoded_call, hand_written::coerce);
    paired(
        "plan / hand-written for this schema, 3 string-encoded scalars",
        CALLS,
        &mut by_plan(scalar_encoded_call),
        &mut by_hand,
    );
    paired(
        "walking / hand-written, 3 string-encoded scalars",
        CALLS,
        &mut by_walking(scalar_encoded_call),
        &mut by_hand,
    );
}

/// A batch of coercions of `call` by the plan, for [`paired`].
fn by_plan(call: fn() -> Value) -> impl FnMut(u32) -> f64 {
    move |n| batch_ns(n, call, |args| plan().apply(args))
}

/// A batch of coercions of `call` by the walk, for [`paired`].
fn by_walking(call: fn() -> Value) -> impl FnMut(u32) -> f64 {
    move |n| batch_ns(n, call, |args| walk::coerce(black_box(schema()), args))
}

/// A realistic tool schema: four properties with descriptions and extra keywords.
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path of the file to search, relative to the workspace root."
                },
                "limit": {
                    "type": "integer",
                    "description": "Maximum number of matches to return.",
                    "minimum": 1,
                    "default": 50
                },
                "recursive": {
                    "type": "boolean",
                    "description": "Whether to descend into subdirectories.",
                    "default": false
                },
                "patterns": {
                    "type": "array",
                    "items": {"type": "string", "description": "A glob pattern."},
                    "description": "Glob patterns of files to include."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    })
}

fn plan() -> &'static CoercionPlan {
    static PLAN: OnceLock<CoercionPlan> = OnceLock::new();
    PLAN.get_or_init(|| CoercionPlan::compile(schema()))
}

/// Three string-encoded values and one genuine string.
fn string_encoded_call() -> Value {
    json!({
        "path": "src/main.rs",
        "limit": "5",
        "recursive": "true",
        "patterns": "[\"*.rs\", \"*.toml\"]"
    })
}

/// Three values to repair without any JSON text to parse: `"5"` for an
/// integer, `"true"` for a boolean, a bare string where a list is due.
fn scalar_encoded_call() -> Value {
    json!({
        "path": "src/main.rs",
        "limit": "5",
        "recursive": "true",
        "patterns": "*.rs"
    })
}

fn well_typed_call() -> Value {
    json!({
        "path": "src/main.rs",
        "limit": 5,
        "recursive": true,
        "patterns": ["*.rs", "*.toml"]
    })
}

#[divan::bench_group(name = "string_encoded_call", sample_count = 1000, sample_size = 64)]
mod string_encoded {
    use super::*;

    #[divan::bench]
    fn plan(bencher: Bencher) {
        let plan = super::plan();
        bencher
            .with_inputs(string_encoded_call)
            .bench_values(|args| plan.apply(black_box(args)));
    }

    #[divan::bench]
    fn walking_schema(bencher: Bencher) {
        let schema = schema();
        bencher
            .with_inputs(string_encoded_call)
            .bench_values(|args| walk::coerce(black_box(schema), black_box(args)));
    }
}

#[divan::bench_group(name = "scalar_encoded_call", sample_count = 1000, sample_size = 64)]
mod scalar_encoded {
    use super::*;

    #[divan::bench]
    fn plan(bencher: Bencher) {
        let plan = super::plan();
        bencher
            .with_inputs(scalar_encoded_call)
            .bench_values(|args| plan.apply(black_box(args)));
    }

    #[divan::bench]
    fn walking_schema(bencher: Bencher) {
        let schema = schema();
        bencher
            .with_inputs(scalar_encoded_call)
            .bench_values(|args| walk::coerce(black_box(schema), black_box(args)));
    }
}

#[divan::bench_group(name = "well_typed_call", sample_count = 1000, sample_size = 64)]
mod well_typed {
    use super::*;

    #[divan::bench]
    fn plan(bencher: Bencher) {
        let plan = super::plan();
        bencher
            .with_inputs(well_typed_call)
            .bench_values(|args| plan.apply(black_box(args)));
    }

    #[divan::bench]
    fn walking_schema(bencher: Bencher) {
        let schema = schema();
        bencher
            .with_inputs(well_typed_call)
            .bench_values(|args| walk::coerce(black_box(schema), black_box(args)));
    }
}

/// What compiling costs, once per tool (or never, for a `static` plan).
#[divan::bench(sample_count = 1000)]
fn compile_plan() -> CoercionPlan {
    CoercionPlan::compile(black_box(schema()))
}

/// Work both ways share in `string_encoded_call`: parsing the JSON text of
/// `patterns` into a `Value` (a `Vec` and two `String`s).
#[divan::bench(sample_count = 1000, sample_size = 64)]
fn shared_parse_of_the_array_text(bencher: Bencher) {
    bencher
        .with_inputs(|| String::from("[\"*.rs\", \"*.toml\"]"))
        .bench_values(|text| serde_json::from_str::<Value>(black_box(&text)).ok());
}

fn check_baseline_agrees() {
    let mut calls = vec![
        (schema().clone(), string_encoded_call()),
        (schema().clone(), well_typed_call()),
        (schema().clone(), scalar_encoded_call()),
    ];
    let tricky = [
        "5",
        " 42 ",
        "-0",
        "1.5",
        "1e3",
        "1_000",
        "\u{661}\u{662}",
        "\u{ff15}.5",
        "9007199254740993",
        "18446744073709551615",
        "99999999999999999999",
        "4.0000000000000001",
        "1e-400",
        "nan",
        "-inf",
        "true",
        " FALSE ",
        "null",
        "NULL",
        "",
        "x",
        "[1]",
        " [\"5\", \"[2]\"] ",
        "[\"{\\\"a\\\": \\\"[1]\\\"}\"]",
        "{\"a\": \"[1]\", \"b\": \"5\"}",
        "{}",
        "[",
        "\u{a0}[1]",
        "\u{1c}true",
    ];
    let schemas = [
        json!({"type": "integer"}),
        json!({"type": "number", "nullable": true}),
        json!({"type": "boolean"}),
        json!({"type": ["integer", "string", "null"]}),
        json!({"type": ["string", "array"], "items": {"type": "array"}}),
        json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "array"}}}}),
        json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "array"}, {"type": "null"}]}}}),
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        json!({"type": "string"}),
    ];
    for prop in &schemas {
        for s in tricky {
            calls.push((json!({"properties": {"v": prop}}), json!({"v": s, "w": s})));
        }
        for v in [json!(5), json!(null), json!([" [1] "]), json!({"a": "[2]"})] {
            calls.push((json!({"properties": {"v": prop}}), json!({ "v": v })));
        }
    }
    assert_eq!(
        hand_written::coerce(scalar_encoded_call()),
        plan().apply(scalar_encoded_call()),
        "the hand-written lower bound disagrees with the plan"
    );
    for (params, args) in calls {
        let by_plan = coerce_args(&params, args.clone());
        let by_walking = walk::coerce(&params, args.clone());
        assert_eq!(
            by_plan, by_walking,
            "baseline disagrees with the plan on {params} / {args}"
        );
    }
}

/// The lower bound: coercion written by hand for `schema()` alone, with
/// the rules its three coercible properties need for the scalar call (no
/// plan, no schema). Not a general implementation: `main` checks it only
/// on `scalar_encoded_call`.
mod hand_written {
    use super::*;

    pub fn coerce(mut args: Value) -> Value {
        if let Value::Object(map) = &mut args {
            for (key, value) in map.iter_mut() {
                let Value::String(text) = value else { continue };
                match key.as_str() {
                    "limit" => {
                        if let Ok(n) = text.parse::<i64>() {
                            *value = Value::from(n);
                        }
                    }
                    "recursive" => {
                        if text.eq_ignore_ascii_case("true") {
                            *value = Value::Bool(true);
                        } else if text.eq_ignore_ascii_case("false") {
                            *value = Value::Bool(false);
                        }
                    }
                    "patterns" if !text.starts_with('[') => {
                        let text = std::mem::take(text);
                        *value = Value::Array(vec![Value::String(text)]);
                    }
                    _ => {}
                }
            }
        }
        args
    }
}

/// The schema-walking baseline: the same rules, read from the schema JSON on
/// every call.
mod walk {
    use super::*;

    const MAX_DEPTH: usize = 64;

    pub fn coerce(parameters: &Value, mut args: Value) -> Value {
        let Some(props) = parameters.get("properties").and_then(Value::as_object) else {
            return args;
        };
        if let Value::Object(map) = &mut args {
            for (key, value) in map.iter_mut() {
                if let Some(schema @ Value::Object(s)) = props.get(key) {
                    coerce_prop(schema, s, value);
                }
            }
        }
        args
    }

    fn coerce_prop(schema: &Value, s: &Map<String, Value>, value: &mut Value) {
        let ty = s.get("type");
        let exact = ty.and_then(Value::as_str);
        match value {
            Value::String(text) => {
                let nullable = allows_null(s);
                let coerced = if nullable && py_strip(text).eq_ignore_ascii_case("null") {
                    Some(Value::Null)
                } else {
                    ty.and_then(|t| coerce_with_type(text, t, 0).ok().flatten())
                };
                match coerced {
                    Some(new) => {
                        *value = new;
                        normalize_children(value, schema, 0);
                    }
                    None if exact == Some("array") => {
                        let text = std::mem::take(text);
                        *value = Value::Array(vec![Value::String(text)]);
                        normalize_children(value, schema, 0);
                    }
                    None => {}
                }
            }
            Value::Null => {}
            Value::Array(_) if exact == Some("array") => normalize_children(value, schema, 0),
            Value::Object(_) if exact == Some("object") => normalize_children(value, schema, 0),
            Value::Array(_) => {}
            _ if exact == Some("array") => {
                let inner = std::mem::take(value);
                *value = Value::Array(vec![inner]);
                normalize_children(value, schema, 0);
            }
            _ => {}
        }
    }

    /// `Ok(Some(v))`: coerced; `Ok(None)`: unchanged, keep trying; `Err(())`:
    /// an object member, after which nothing is tried.
    fn coerce_with_type(text: &str, ty: &Value, depth: usize) -> Result<Option<Value>, ()> {
        match ty {
            Value::String(name) => Ok(match name.as_str() {
                "integer" => number(text, true),
                "number" => number(text, false),
                "boolean" => {
                    let t = py_strip(text);
                    if t.eq_ignore_ascii_case("true") {
                        Some(Value::Bool(true))
                    } else if t.eq_ignore_ascii_case("false") {
                        Some(Value::Bool(false))
                    } else {
                        None
                    }
                }
                "array" => json_of_kind(text, true),
                "object" => json_of_kind(text, false),
                "null" => py_strip(text)
                    .eq_ignore_ascii_case("null")
                    .then_some(Value::Null),
                _ => None,
            }),
            Value::Array(members) => {
                if depth >= MAX_DEPTH {
                    return Err(());
                }
                for member in members {
                    if let Some(v) = coerce_with_type(text, member, depth + 1)? {
                        return Ok(Some(v));
                    }
                }
                Ok(None)
            }
            Value::Object(_) => Err(()),
            _ => Ok(None),
        }
    }

    fn allows_null(s: &Map<String, Value>) -> bool {
        let ty = s.get("type");
        ty.and_then(Value::as_str) == Some("null")
            || ty
                .and_then(Value::as_array)
                .is_some_and(|ts| ts.iter().any(|t| t == "null"))
            || s.get("nullable") == Some(&Value::Bool(true))
            || ["anyOf", "oneOf"].iter().any(|k| {
                s.get(*k).and_then(Value::as_array).is_some_and(|vs| {
                    vs.iter()
                        .any(|v| v.get("type").and_then(Value::as_str) == Some("null"))
                })
            })
    }

    fn accepts(schema: &Value, kind: &str, depth: usize) -> bool {
        if depth >= MAX_DEPTH {
            return false;
        }
        let Some(s) = schema.as_object() else {
            return false;
        };
        match s.get("type") {
            Some(Value::String(t)) if t == kind => return true,
            Some(Value::Array(ts)) if ts.iter().any(|t| t == kind) => return true,
            _ => {}
        }
        ["anyOf", "oneOf", "allOf"].iter().any(|k| {
            s.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|bs| bs.iter().any(|b| accepts(b, kind, depth + 1)))
        })
    }

    fn normalize_children(value: &mut Value, schema: &Value, depth: usize) {
        match value {
            Value::Array(items) => {
                if let Some(item_schema @ Value::Object(_)) = schema.get("items") {
                    for item in items {
                        normalize(item, item_schema, depth + 1);
                    }
                }
            }
            Value::Object(map) => {
                if let Some(Value::Object(props)) = schema.get("properties") {
                    for (k, sub) in props {
                        if sub.is_object() {
                            if let Some(v) = map.get_mut(k) {
                                normalize(v, sub, depth + 1);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn normalize(value: &mut Value, schema: &Value, depth: usize) {
        if depth >= MAX_DEPTH {
            return;
        }
        if let Value::String(text) = value {
            let t = py_strip(text);
            let parsed = if t.starts_with('[') && accepts(schema, "array", 0) {
                json_of_kind(t, true)
            } else if t.starts_with('{') && accepts(schema, "object", 0) {
                json_of_kind(t, false)
            } else {
                None
            };
            match parsed {
                Some(v) => *value = v,
                None => return,
            }
        }
        normalize_children(value, schema, depth);
    }

    fn py_strip(s: &str) -> &str {
        s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
    }

    fn json_of_kind(text: &str, array: bool) -> Option<Value> {
        // The plan's fast path: only text opening the wanted kind is parsed.
        let open = if array { b'[' } else { b'{' };
        let first = text
            .bytes()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
        if first != open {
            return None;
        }
        match serde_json::from_str::<Value>(text).ok()? {
            v @ Value::Array(_) if array => Some(v),
            v @ Value::Object(_) if !array => Some(v),
            _ => None,
        }
    }

    /// Unicode 14 decimal-digit runs (as in CPython 3.11), by zero code point.
    const DIGIT_ZEROS: [u32; 65] = [
        0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
        0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
        0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
        0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0,
        0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0,
        0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
    ];

    /// Python `float()` syntax, then: exact whole values within 64 bits become
    /// integers; any other value goes through f64 (a whole one beyond 64 bits
    /// is that float, for `integer` too).
    fn number(text: &str, integer_only: bool) -> Option<Value> {
        // The same fast path as the plan's: a plain integer of up to 18 digits.
        if let Ok(v) = text.parse::<i64>() {
            let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
            if digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit()) {
                return Some(Value::from(v));
            }
        }
        // Normalise to ASCII, checking underscores sit between digits.
        let mut ascii = String::with_capacity(text.len());
        let mut prev_digit = false;
        let mut pending_underscore = false;
        for c in text.trim_matches(char::is_whitespace).chars() {
            let c = if c.is_ascii() {
                c
            } else {
                let cp = u32::from(c);
                let i = DIGIT_ZEROS.iter().rposition(|&z| z <= cp)?;
                let d = cp - DIGIT_ZEROS[i];
                if d >= 10 {
                    return None;
                }
                char::from_digit(d, 10)?
            };
            if c == '_' {
                if !prev_digit || pending_underscore {
                    return None;
                }
                pending_underscore = true;
                continue;
            }
            if pending_underscore && !c.is_ascii_digit() {
                return None;
            }
            pending_underscore = false;
            prev_digit = c.is_ascii_digit();
            ascii.push(c);
        }
        if pending_underscore {
            return None;
        }
        // Only a sign, digits, one point and an exponent; NaN / inf stay strings.
        let (mantissa, exponent) = match ascii.find(['e', 'E']) {
            Some(i) => (&ascii[..i], Some(&ascii[i + 1..])),
            None => (ascii.as_str(), None),
        };
        let (negative, unsigned) = match mantissa.as_bytes().first() {
            Some(b'-') => (true, &mantissa[1..]),
            Some(b'+') => (false, &mantissa[1..]),
            _ => (false, mantissa),
        };
        let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(int_part) || !all_digits(frac_part) || int_part.len() + frac_part.len() == 0
        {
            return None;
        }
        let exp: i64 = match exponent {
            None => 0,
            Some(e) => {
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !all_digits(digits) {
                    return None;
                }
                let magnitude = digits
                    .bytes()
                    .fold(0i64, |acc, b| (acc * 10 + i64::from(b - b'0')).min(1 << 50));
                if e.starts_with('-') {
                    -magnitude
                } else {
                    magnitude
                }
            }
        };
        let digits: String = format!("{int_part}{frac_part}");
        let significant = digits.trim_start_matches('0');
        if significant.is_empty() {
            return Some(Value::from(0));
        }
        let trimmed = significant.trim_end_matches('0');
        let scale = exp - frac_part.len() as i64 + (significant.len() - trimmed.len()) as i64;
        if scale >= 0 && trimmed.len() as i64 + scale <= 20 {
            let magnitude: u128 = format!("{trimmed}{}", "0".repeat(scale as usize))
                .parse()
                .ok()?;
            let exact = if negative {
                i64::try_from(-(magnitude as i128)).ok().map(Value::from)
            } else {
                u64::try_from(magnitude).ok().map(Value::from)
            };
            if exact.is_some() {
                return exact;
            }
        }
        let f: f64 = format!("{}{trimmed}e{scale}", if negative { "-" } else { "" })
            .parse()
            .ok()?;
        if !f.is_finite() {
            return None;
        }
        if f.fract() == 0.0 {
            if f == 0.0 {
                return Some(Value::from(0));
            }
            if f.abs() < 9_223_372_036_854_775_808.0 || f == -9_223_372_036_854_775_808.0 {
                return Some(Value::from(f as i64));
            }
            if f > 0.0 && f < 18_446_744_073_709_551_616.0 {
                return Some(Value::from(f as u64));
            }
            // Beyond 64 bits: the float, for `integer` too.
            return serde_json::Number::from_f64(f).map(Value::Number);
        }
        if integer_only {
            None
        } else {
            serde_json::Number::from_f64(f).map(Value::Number)
        }
    }
}
