//! The schema vocabulary: keyword tables (which keywords hold subschemas,
//! which constrain one kind of value, which type a schema) and the small
//! helpers that read a schema node. What each dialect keeps is in its
//! [`Rules`](super::rules::Rules) table.

use serde_json::{Map, Number, Value};

/// Validation keywords no constrained dialect (strict, Gemini, llama.cpp) can express.
pub(super) const UNEXPRESSIBLE: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "additionalItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// The JSON Schema type names.
pub(super) const JSON_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// The type list that means "any JSON value" (`integer` is part of `number`).
pub(super) const ANY_TYPES: &[&str] = &["string", "number", "boolean", "object", "array", "null"];

/// Keywords that give a schema a shape; a schema with none of them means
/// "any value".
pub(super) const TYPING_KEYS: &[&str] = &[
    "type",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
    "const",
    "properties",
    "additionalProperties",
    "items",
    "prefixItems",
    "pattern",
];

/// Keywords that constrain only one kind of value, used to split a type list.
pub(super) const STRING_KEYS: &[&str] = &["minLength", "maxLength", "pattern"];

pub(super) const NUMBER_KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

pub(super) const ARRAY_KEYS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
];

pub(super) const OBJECT_KEYS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
];

/// Keywords whose members in an `allOf` may differ (the outer one wins).
pub(super) const ANNOTATIONS: &[&str] =
    &["title", "description", "default", "examples", "$comment"];

/// Whether a keyword constrains only one kind of value (see [`STRING_KEYS`]
/// and its siblings).
pub(super) fn constrains_one_kind(k: &str) -> bool {
    STRING_KEYS.contains(&k)
        || NUMBER_KEYS.contains(&k)
        || ARRAY_KEYS.contains(&k)
        || OBJECT_KEYS.contains(&k)
}

/// The names in a schema's `type` (a string or a list); empty when absent.
pub(super) fn type_names(m: &Map<String, Value>) -> Vec<String> {
    match m.get("type") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

pub(super) fn has_type(m: &Map<String, Value>, name: &str) -> bool {
    type_names(m).iter().any(|t| t == name)
}

/// The JSON type name of a value (`integer` for whole numbers).
pub(super) fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a value is an instance of a JSON Schema type name.
pub(super) fn value_is(v: &Value, type_name: &str) -> bool {
    let kind = value_kind(v);
    kind == type_name || (type_name == "number" && kind == "integer")
}

pub(super) fn types_overlap(a: &str, b: &str) -> bool {
    a == b || matches!((a, b), ("integer", "number") | ("number", "integer"))
}

/// A `null` schema: `{"type": "null"}` (or `["null"]`) with only annotations beside.
pub(super) fn is_null_schema(v: &Value) -> bool {
    let Value::Object(m) = v else { return false };
    let types = type_names(m);
    types.len() == 1
        && types[0] == "null"
        && m.keys()
            .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
}

pub(super) fn is_object_schema(m: &Map<String, Value>) -> bool {
    has_type(m, "object")
}

/// The names a schema's `required` lists (strings only).
pub(super) fn required_names(m: &Map<String, Value>) -> Vec<String> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn property_names(m: &Map<String, Value>) -> Vec<String> {
    m.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The values a schema allows when it lists them (`const` / `enum`).
pub(super) fn listed_values(m: &Map<String, Value>) -> Option<Vec<Value>> {
    match (m.get("const"), m.get("enum")) {
        (Some(c), _) => Some(vec![c.clone()]),
        (None, Some(Value::Array(e))) => Some(e.clone()),
        _ => None,
    }
}

pub(super) fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        // Whole and exactly representable: keep it an integer in the JSON.
        Value::Number(Number::from(v as i64))
    } else {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// The bounds (minimum, maximum) a schemars/OpenAPI numeric `format` implies,
/// or `None` when the format is not a numeric one.
pub(super) fn numeric_format_bounds(format: &str) -> Option<(Option<i64>, Option<u64>)> {
    Some(match format {
        "int8" => (Some(i64::from(i8::MIN)), Some(i8::MAX as u64)),
        "uint8" => (Some(0), Some(u64::from(u8::MAX))),
        "int16" => (Some(i64::from(i16::MIN)), Some(i16::MAX as u64)),
        "uint16" => (Some(0), Some(u64::from(u16::MAX))),
        "int32" => (Some(i64::from(i32::MIN)), Some(i32::MAX as u64)),
        "uint32" => (Some(0), Some(u64::from(u32::MAX))),
        "uint64" | "uint128" | "uint" | "usize" => (Some(0), None),
        "int64" | "int128" | "int" | "isize" | "float" | "double" => (None, None),
        _ => return None,
    })
}

/// Writes the bounds a numeric format implies, keeping tighter ones already there.
pub(super) fn materialize_bounds(m: &mut Map<String, Value>, min: Option<i64>, max: Option<u64>) {
    if let Some(min) = min {
        let tighter = m
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|cur| cur >= min as f64);
        if !tighter {
            m.insert("minimum".into(), Value::Number(Number::from(min)));
        }
    }
    if let Some(max) = max {
        let tighter = m
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|cur| cur <= max as f64);
        if !tighter {
            m.insert("maximum".into(), Value::Number(Number::from(max)));
        }
    }
}
