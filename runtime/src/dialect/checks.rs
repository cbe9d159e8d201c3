//! [`check`]: validates a tool already in dialect form against that
//! dialect's rules.

use serde_json::{Map, Value};

use super::envelope::check_envelope;
use super::keywords::{
    escape_pointer, property_names, type_names, ARRAY_KEYS, GEMINI_KEYS, JSON_TYPES,
    LIST_OF_SCHEMAS, LLAMA_FORMATS, LLAMA_UNEXPRESSIBLE, MAP_OF_SCHEMAS, NUMBER_KEYS, OBJECT_KEYS,
    SINGLE_SCHEMA, STRICT_FORMATS, STRICT_KEYS, STRING_KEYS, UNEXPRESSIBLE,
};
use super::{Dialect, DialectIssue, Found, MAX_SCHEMA_DEPTH};

/// Validates a tool already in `dialect` form (the output of [`rewrite`](super::rewrite))
/// against that dialect's rules; empty when it conforms.
pub fn check(tool_in_dialect_form: &Value, dialect: Dialect) -> Vec<DialectIssue> {
    let mut found: Vec<Found> = Vec::new();
    let params = check_envelope(tool_in_dialect_form, dialect, &mut found);
    if let Some(params) = params {
        match params {
            Value::Object(root) if root.get("type").and_then(Value::as_str) == Some("object") => {
                if dialect == Dialect::OpenAiStrict && root.contains_key("anyOf") {
                    found.push((
                        String::new(),
                        "strict mode allows no `anyOf` at the root".into(),
                    ));
                }
                if dialect == Dialect::Gemini
                    && root
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(Map::is_empty)
                {
                    found.push((
                        String::new(),
                        "gemini `parameters` without properties must be left out".into(),
                    ));
                }
            }
            _ => found.push((
                String::new(),
                "the parameters schema must have `\"type\": \"object\"`".into(),
            )),
        }
        let mut stats = Stats::default();
        check_node(params, "", dialect, 0, 0, &mut found, &mut stats);
        if dialect == Dialect::OpenAiStrict {
            if stats.properties > 5000 {
                found.push((
                    String::new(),
                    format!(
                        "{} properties in all; strict mode allows 5000",
                        stats.properties
                    ),
                ));
            }
            if stats.enum_values > 1000 {
                found.push((
                    String::new(),
                    format!(
                        "{} enum values in all; strict mode allows 1000",
                        stats.enum_values
                    ),
                ));
            }
        }
    }
    found
        .into_iter()
        .map(|(path, message)| DialectIssue {
            dialect,
            path,
            message,
        })
        .collect()
}

#[derive(Default)]
pub(super) struct Stats {
    properties: usize,
    enum_values: usize,
}

pub(super) fn check_node(
    node: &Value,
    path: &str,
    dialect: Dialect,
    depth: usize,
    object_depth: usize,
    found: &mut Vec<Found>,
    stats: &mut Stats,
) {
    let mut fail = |m: String| found.push((path.to_string(), m));
    if depth > MAX_SCHEMA_DEPTH {
        fail(format!(
            "schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
        return;
    }
    let m = match node {
        Value::Object(m) => m,
        Value::Bool(_) if matches!(dialect, Dialect::OpenAi | Dialect::Mcp) => return,
        other => {
            fail(format!("schema {other} is not allowed for {dialect}"));
            return;
        }
    };
    for k in ["$ref", "$schema", "definitions", "$defs"] {
        if m.contains_key(k) {
            fail(format!("`{k}` is left in the schema"));
        }
    }
    let types = type_names(m);
    let single_type = m.get("type").and_then(Value::as_str);
    if let Some(t) = m.get("type") {
        let valid = match t {
            Value::String(s) => JSON_TYPES.contains(&s.as_str()),
            Value::Array(l) => l
                .iter()
                .all(|x| x.as_str().is_some_and(|s| JSON_TYPES.contains(&s))),
            _ => false,
        };
        if !valid {
            fail(format!("`type` {t} is not a JSON Schema type"));
        }
    }
    let is_object = single_type == Some("object")
        || (dialect == Dialect::OpenAiStrict && types.iter().any(|t| t == "object"));
    let object_depth = object_depth + usize::from(is_object);
    if is_object && !m.get("properties").is_some_and(Value::is_object) {
        fail("an object schema without `properties`".into());
    }
    if let Some(Value::Object(p)) = m.get("properties") {
        stats.properties += p.len();
    }
    if let Some(Value::Array(e)) = m.get("enum") {
        stats.enum_values += e.len();
    }
    let format = m.get("format").and_then(Value::as_str);
    match dialect {
        Dialect::OpenAi | Dialect::Mcp => {}
        Dialect::OpenAiStrict => {
            for k in m.keys() {
                if !STRICT_KEYS.contains(&k.as_str()) {
                    fail(format!("`{k}` is not supported in strict mode"));
                }
            }
            if !m.contains_key("type") && !m.contains_key("anyOf") {
                fail("strict mode needs a `type` (or `anyOf`) on every schema".into());
            }
            if is_object {
                if m.get("additionalProperties") != Some(&Value::Bool(false)) {
                    fail("strict mode needs `\"additionalProperties\": false`".into());
                }
                let mut props = property_names(m);
                let mut required: Vec<String> = m
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                props.sort();
                required.sort();
                if props != required {
                    fail("strict mode needs every property listed in `required`".into());
                }
            }
            if object_depth > 10 {
                fail("strict mode allows at most 10 levels of object nesting".into());
            }
            if let Some(f) = format {
                if !STRICT_FORMATS.contains(&f) || !types.iter().any(|t| t == "string") {
                    fail(format!("`format: {f}` is not supported in strict mode"));
                }
            }
            if types.iter().any(|t| t == "array") && !m.get("items").is_some_and(Value::is_object) {
                fail("strict mode needs `items` (one schema) on arrays".into());
            }
        }
        Dialect::Gemini => {
            for k in m.keys() {
                if !GEMINI_KEYS.contains(&k.as_str()) {
                    fail(format!("`{k}` is not supported by gemini"));
                }
            }
            match m.get("type") {
                None if m.contains_key("anyOf") => {}
                None => fail("gemini needs a `type` on every schema without `anyOf`".into()),
                Some(Value::String(t)) if t != "null" => {}
                Some(t) => fail(format!("gemini needs one non-null `type`, not {t}")),
            }
            if let Some(e) = m.get("enum") {
                if !e
                    .as_array()
                    .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string))
                {
                    fail("gemini `enum` must be a non-empty list of strings".into());
                }
            }
            if let Some(f) = format {
                let ok = match single_type {
                    Some("string") => matches!(f, "enum" | "date-time"),
                    Some("integer") => matches!(f, "int32" | "int64"),
                    Some("number") => matches!(f, "float" | "double"),
                    _ => false,
                };
                if !ok {
                    fail(format!("`format: {f}` is not supported by gemini here"));
                }
            }
            if m.get("nullable").is_some_and(|n| !n.is_boolean()) {
                fail("`nullable` must be a boolean".into());
            }
            if is_object
                && depth > 0
                && m.get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(Map::is_empty)
            {
                fail("gemini rejects an object with no properties".into());
            }
            if single_type == Some("array") && !m.get("items").is_some_and(Value::is_object) {
                fail("gemini needs `items` on arrays".into());
            }
            let props = property_names(m);
            if let Some(Value::Array(required)) = m.get("required") {
                if required
                    .iter()
                    .any(|r| !r.as_str().is_some_and(|r| props.iter().any(|p| p == r)))
                {
                    fail("gemini `required` may only name defined properties".into());
                }
            }
        }
        Dialect::LlamaCpp => {
            for k in UNEXPRESSIBLE.iter().chain(LLAMA_UNEXPRESSIBLE) {
                if m.contains_key(*k) {
                    fail(format!("`{k}` is not supported by llama.cpp"));
                }
            }
            if let Some(f) = format {
                if !LLAMA_FORMATS.contains(&f) || single_type.is_some_and(|t| t != "string") {
                    fail(format!("`format: {f}` is not known to llama.cpp"));
                }
            }
            if types.len() > 1 {
                let ignored: Vec<&String> = m
                    .keys()
                    .filter(|k| {
                        let k = k.as_str();
                        STRING_KEYS.contains(&k)
                            || NUMBER_KEYS.contains(&k)
                            || ARRAY_KEYS.contains(&k)
                            || OBJECT_KEYS.contains(&k)
                            || matches!(k, "enum" | "const" | "format")
                    })
                    .collect();
                if !ignored.is_empty() {
                    fail(format!(
                        "llama.cpp ignores {ignored:?} next to a `type` list"
                    ));
                }
            }
            let recognized = m.is_empty()
                || [
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
                ]
                .iter()
                .any(|k| m.contains_key(*k));
            if !recognized {
                fail("llama.cpp does not recognize a schema without a type".into());
            }
            if let Some(Value::Array(parts)) = m.get("allOf") {
                let objects = types.is_empty() || single_type == Some("object");
                if !objects || !parts.iter().all(|p| p.get("properties").is_some()) {
                    fail("llama.cpp merges only `allOf` of objects with properties".into());
                }
            }
        }
    }
    let mut children: Vec<(String, &Value)> = Vec::new();
    for (key, value) in m {
        let k = key.as_str();
        let prefix = format!("{path}/{}", escape_pointer(k));
        match value {
            Value::Object(map) if MAP_OF_SCHEMAS.contains(&k) => {
                for (name, sub) in map {
                    if sub.is_object() || sub.is_boolean() {
                        children.push((format!("{prefix}/{}", escape_pointer(name)), sub));
                    }
                }
            }
            Value::Array(list) if LIST_OF_SCHEMAS.contains(&k) => {
                for (i, sub) in list.iter().enumerate() {
                    children.push((format!("{prefix}/{i}"), sub));
                }
            }
            Value::Object(_) if SINGLE_SCHEMA.contains(&k) => children.push((prefix, value)),
            _ => {}
        }
    }
    for (p, child) in children {
        check_node(child, &p, dialect, depth + 1, object_depth, found, stats);
    }
}
