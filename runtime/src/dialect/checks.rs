//! [`check`]: validates a tool already in dialect form against that
//! dialect's rules.

use serde_json::{Map, Value};

use super::base::{tag_issues, Dialect, DialectIssue, Found, MAX_SCHEMA_DEPTH};
use super::envelope::check_envelope;
use super::keywords::{
    constrains_one_kind, property_names, required_names, type_names, JSON_TYPES, TYPING_KEYS,
    UNEXPRESSIBLE,
};
use super::rules::{Envelope, Formats, Objects, Rules, TypeList, Untyped};
use super::walk::{walk, At, Visitor};

/// Validates a tool already in `dialect` form (the output of [`rewrite`](super::rewrite))
/// against that dialect's rules; empty when it conforms.
pub fn check(tool_in_dialect_form: &Value, dialect: Dialect) -> Vec<DialectIssue> {
    let rules = dialect.rules();
    let mut found: Vec<Found> = Vec::new();
    let params = check_envelope(tool_in_dialect_form, dialect, &mut found);
    if let Some(params) = params {
        let mut root_fail = |m: String| found.push((String::new(), m));
        match params {
            Value::Object(root) if root.get("type").and_then(Value::as_str) == Some("object") => {
                if !rules.root_any_of && root.contains_key("anyOf") {
                    root_fail(format!("{} allows no `anyOf` at the root", rules.label));
                }
                let omit_empty = matches!(
                    rules.envelope,
                    Envelope::Bare {
                        omit_empty: true,
                        ..
                    }
                );
                if omit_empty
                    && root
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(Map::is_empty)
                {
                    root_fail(format!(
                        "{} `parameters` without properties must be left out",
                        rules.label
                    ));
                }
            }
            _ => root_fail("the parameters schema must have `\"type\": \"object\"`".into()),
        }
        let mut pass = Walk {
            dialect,
            rules,
            found: &mut found,
            stats: Stats::default(),
            object_depths: Vec::new(),
        };
        walk(params, &mut pass);
        let stats = pass.stats;
        if let Some(limits) = &rules.limits {
            if stats.properties > limits.properties {
                found.push((
                    String::new(),
                    format!(
                        "{} properties in all; {} allows {}",
                        stats.properties, rules.label, limits.properties
                    ),
                ));
            }
            if stats.enum_values > limits.enum_values {
                found.push((
                    String::new(),
                    format!(
                        "{} enum values in all; {} allows {}",
                        stats.enum_values, rules.label, limits.enum_values
                    ),
                ));
            }
        }
    }
    tag_issues(found, dialect)
}

#[derive(Default)]
struct Stats {
    properties: usize,
    enum_values: usize,
}

/// One pass of [`check`] over a parameters schema.
struct Walk<'a> {
    dialect: Dialect,
    rules: &'static Rules,
    found: &'a mut Vec<Found>,
    stats: Stats,
    /// The object nesting of each node entered and not yet left.
    object_depths: Vec<usize>,
}

impl Visitor for Walk<'_> {
    fn enter(&mut self, node: &Value, at: At<'_>) -> bool {
        let (path, depth) = (at.pointer, at.depth);
        let object_depth = self.object_depths.last().copied().unwrap_or(0);
        let (dialect, rules) = (self.dialect, self.rules);
        let mut fail = |m: String| self.found.push((path.to_string(), m));
        if depth > MAX_SCHEMA_DEPTH {
            fail(format!(
                "schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
            ));
            return false;
        }
        let m = match node {
            Value::Object(m) => m,
            Value::Bool(_) if !rules.constrained => return false,
            other => {
                fail(format!("schema {other} is not allowed for {dialect}"));
                return false;
            }
        };
        for k in ["$ref", "$schema", "definitions", "$defs"] {
            // The root of an unconstrained dialect keeps the dialect it is
            // written in and its definitions (every `$ref` inlined).
            let kept_at_root = depth == 0 && !rules.constrained && k != "$ref";
            if m.contains_key(k) && !kept_at_root {
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
        // A closing dialect closes every schema that may be an object.
        let is_object = single_type == Some("object")
            || (rules.objects == Objects::Closed && types.iter().any(|t| t == "object"));
        let object_depth = object_depth + usize::from(is_object);
        if is_object && !m.get("properties").is_some_and(Value::is_object) {
            fail("an object schema without `properties`".into());
        }
        if let Some(Value::Object(p)) = m.get("properties") {
            self.stats.properties += p.len();
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            self.stats.enum_values += e.len();
        }
        let node = Node {
            m,
            types: &types,
            single_type,
            is_object,
            depth,
            object_depth,
        };
        let mut issues = Vec::new();
        node.rule_issues(rules, &mut issues);
        self.found
            .extend(issues.into_iter().map(|m| (path.to_string(), m)));
        self.object_depths.push(object_depth);
        true
    }

    fn leave(&mut self, _: &Value, _: At<'_>) {
        self.object_depths.pop();
    }
}

/// One schema object under check, with what [`Walk::enter`] already knows of it.
struct Node<'a> {
    m: &'a Map<String, Value>,
    types: &'a [String],
    single_type: Option<&'a str>,
    is_object: bool,
    depth: usize,
    object_depth: usize,
}

impl Node<'_> {
    /// The issues of this node under `rules`, in a fixed order.
    fn rule_issues(&self, rules: &Rules, out: &mut Vec<String>) {
        let Node {
            m,
            types,
            single_type,
            is_object,
            depth,
            object_depth,
        } = *self;
        let (label, by) = (rules.label, rules.by);
        let mut fail = |msg: String| out.push(msg);
        if !rules.constrained {
            return;
        }
        match rules.keys {
            Some(keys) => {
                for k in m.keys() {
                    if !keys.contains(&k.as_str()) {
                        fail(format!("`{k}` is not supported {by}"));
                    }
                }
            }
            None => {
                for k in UNEXPRESSIBLE.iter().chain(rules.unexpressible) {
                    if m.contains_key(*k) {
                        fail(format!("`{k}` is not supported {by}"));
                    }
                }
            }
        }
        let one_type = rules.type_list == TypeList::One;
        if rules.untyped == Untyped::Reject && !m.contains_key("type") && !m.contains_key("anyOf") {
            fail(if one_type {
                format!("{label} needs a `type` on every schema without `anyOf`")
            } else {
                format!("{label} needs a `type` (or `anyOf`) on every schema")
            });
        }
        if one_type {
            match m.get("type") {
                None => {}
                Some(Value::String(t)) if t != "null" => {}
                Some(t) => fail(format!("{label} needs one non-null `type`, not {t}")),
            }
        }
        if rules.objects == Objects::Closed && is_object {
            if m.get("additionalProperties") != Some(&Value::Bool(false)) {
                fail(format!("{label} needs `\"additionalProperties\": false`"));
            }
            let mut props = property_names(m);
            let mut required = required_names(m);
            props.sort();
            required.sort();
            if props != required {
                fail(format!("{label} needs every property listed in `required`"));
            }
        }
        if let Some(limits) = &rules.limits {
            if object_depth > limits.object_depth {
                fail(format!(
                    "{label} allows at most {} levels of object nesting",
                    limits.object_depth
                ));
            }
        }
        if rules.string_enums {
            if let Some(e) = m.get("enum") {
                if !e
                    .as_array()
                    .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string))
                {
                    fail(format!(
                        "{label} `enum` must be a non-empty list of strings"
                    ));
                }
            }
        }
        if let Some(f) = m.get("format").and_then(Value::as_str) {
            match rules.formats {
                Formats::All => {}
                Formats::Documented(kept) => {
                    if !kept.contains(&f) || !types.iter().any(|t| t == "string") {
                        fail(format!("`format: {f}` is not supported {by}"));
                    }
                }
                Formats::PerType(per_type) => {
                    let ok = single_type.is_some_and(|t| {
                        per_type
                            .iter()
                            .any(|(pt, kept)| *pt == t && kept.contains(&f))
                    });
                    if !ok {
                        fail(format!("`format: {f}` is not supported {by} here"));
                    }
                }
                Formats::Known(kept) => {
                    if !kept.contains(&f) || single_type.is_some_and(|t| t != "string") {
                        fail(format!("`format: {f}` is not known to {label}"));
                    }
                }
            }
        }
        if rules.nullable_keyword && m.get("nullable").is_some_and(|n| !n.is_boolean()) {
            fail("`nullable` must be a boolean".into());
        }
        let unmarked = rules.objects == Objects::Unmarked;
        if unmarked
            && is_object
            && depth > 0
            && m.get("properties")
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty)
        {
            fail(format!("{label} rejects an object with no properties"));
        }
        if rules.explicit_shapes {
            // With one type per schema, only a schema typed `array` is an array.
            let array = if one_type {
                single_type == Some("array")
            } else {
                types.iter().any(|t| t == "array")
            };
            if array && !m.get("items").is_some_and(Value::is_object) {
                fail(if one_type {
                    format!("{label} needs `items` on arrays")
                } else {
                    format!("{label} needs `items` (one schema) on arrays")
                });
            }
        }
        if unmarked {
            let props = property_names(m);
            if let Some(Value::Array(required)) = m.get("required") {
                if required
                    .iter()
                    .any(|r| !r.as_str().is_some_and(|r| props.iter().any(|p| p == r)))
                {
                    fail(format!(
                        "{label} `required` may only name defined properties"
                    ));
                }
            }
        }
        if rules.type_list == TypeList::UnconstrainedOnly && types.len() > 1 {
            let ignored: Vec<&String> = m
                .keys()
                .filter(|k| {
                    constrains_one_kind(k) || matches!(k.as_str(), "enum" | "const" | "format")
                })
                .collect();
            if !ignored.is_empty() {
                fail(format!("{label} ignores {ignored:?} next to a `type` list"));
            }
        }
        if rules.untyped == Untyped::AllTypes
            && !m.is_empty()
            && !TYPING_KEYS.iter().any(|k| m.contains_key(*k))
        {
            fail(format!(
                "{label} does not recognize a schema without a type"
            ));
        }
        if rules.all_of_objects_only {
            if let Some(Value::Array(parts)) = m.get("allOf") {
                let objects = types.is_empty() || single_type == Some("object");
                if !objects || !parts.iter().all(|p| p.get("properties").is_some()) {
                    fail(format!(
                        "{label} merges only `allOf` of objects with properties"
                    ));
                }
            }
        }
    }
}
