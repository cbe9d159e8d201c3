//! The baseline every dialect starts from: the `$ref` inliner, then the
//! normalisation (`$schema` / `definitions` dropped below the root, `true`
//! subschemas as `{}`, `properties` on every object) and the root-object rule.

use serde_json::{Map, Value};

use super::base::{Found, MAX_INLINED_REFS, MAX_REF_DEPTH, MAX_SCHEMA_DEPTH};
use super::envelope::empty_object_schema;
use super::keywords::{is_object_schema, ANNOTATIONS};
use super::merge::merge_all_of;
use super::walk::{walk_mut, walk_mut_at, At, VisitorMut};

/// The baseline every dialect starts from: `$ref`s into `#/definitions` or
/// `#/$defs` inlined, `$schema` / `definitions` / `$defs` dropped below the
/// root (the root's are kept: the dialect the schema is written in, and
/// definitions a client may read, such as `$anchor`s; the constrained
/// dialects drop them in [`rewrite`](super::rewrite)), `true` subschemas
/// written as `{}`, and `"properties": {}` added to every object schema
/// without `properties`. See the module docs.
///
/// A `$ref` that cannot be inlined (recursive, external, dangling, too deep)
/// is left in place, and then `definitions` / `$defs` are kept so the result
/// still resolves; [`rewrite`](super::rewrite) reports such refs as issues.
pub fn sanitize_for_strict_backends(parameters: &Value) -> Value {
    let mut found = Vec::new();
    baseline(parameters, &mut found)
}

pub(super) fn baseline(parameters: &Value, found: &mut Vec<Found>) -> Value {
    let mut out = parameters.clone();
    let mut inliner = Inliner {
        root: parameters,
        budget: MAX_INLINED_REFS,
        unresolved: false,
        stack: Vec::new(),
        found,
    };
    walk_mut(&mut out, &mut inliner);
    let keep_defs = inliner.unresolved;
    walk_mut(&mut out, &mut Normalize { keep_defs });
    out
}

/// Inlines `$ref`s, outside `definitions` (what they point into).
pub(super) struct Inliner<'a> {
    root: &'a Value,
    budget: usize,
    unresolved: bool,
    /// The `$ref`s being inlined around the current node.
    stack: Vec<String>,
    found: &'a mut Vec<Found>,
}

impl VisitorMut for Inliner<'_> {
    fn enter(&mut self, node: &mut Value, at: At<'_>) -> bool {
        if at.depth > MAX_SCHEMA_DEPTH {
            self.fail(
                at.pointer,
                format!("schema nested deeper than {MAX_SCHEMA_DEPTH} levels"),
            );
            return false;
        }
        let Value::Object(m) = node else { return false };
        let Some(Value::String(reference)) = m.get("$ref").cloned() else {
            return true;
        };
        let Some(target) = self.target(&reference, at.pointer) else {
            // Still inline what the siblings hold.
            return true;
        };
        m.remove("$ref");
        let mut siblings = Value::Object(std::mem::take(m));
        walk_mut_at(&mut siblings, at.pointer, at.depth + 1, self);
        self.stack.push(reference);
        let mut resolved = target;
        walk_mut_at(&mut resolved, at.pointer, at.depth + 1, self);
        self.stack.pop();
        *node = merge_ref(resolved, siblings);
        false
    }

    fn definitions(&self) -> bool {
        false
    }
}

impl Inliner<'_> {
    fn fail(&mut self, path: &str, message: String) {
        self.unresolved = true;
        self.found.push((path.to_string(), message));
    }

    /// The schema a `$ref` points at, or `None` (with an issue) when it cannot be inlined.
    fn target(&mut self, reference: &str, path: &str) -> Option<Value> {
        let pointer = reference.strip_prefix('#').map(percent_decode);
        let local = pointer
            .as_deref()
            .is_some_and(|p| p.starts_with("/definitions/") || p.starts_with("/$defs/"));
        if !local {
            self.fail(
                path,
                format!("`$ref` `{reference}` does not point into `#/definitions` or `#/$defs`, so it cannot be inlined"),
            );
            return None;
        }
        if self.stack.iter().any(|r| r == reference) {
            self.fail(
                path,
                format!("`$ref` `{reference}` is recursive and cannot be inlined"),
            );
            return None;
        }
        if self.stack.len() >= MAX_REF_DEPTH {
            self.fail(
                path,
                format!("`$ref` `{reference}` is nested more than {MAX_REF_DEPTH} deep"),
            );
            return None;
        }
        if self.budget == 0 {
            self.fail(
                path,
                format!("more than {MAX_INLINED_REFS} `$ref`s to inline"),
            );
            return None;
        }
        self.budget -= 1;
        match pointer.as_deref().and_then(|p| self.root.pointer(p)) {
            Some(Value::Object(t)) => Some(Value::Object(t.clone())),
            Some(Value::Bool(true)) => Some(Value::Object(Map::new())),
            Some(_) => {
                self.fail(
                    path,
                    format!(
                        "`$ref` `{reference}` points at something that is not an object schema"
                    ),
                );
                None
            }
            None => {
                self.fail(path, format!("`$ref` `{reference}` does not resolve"));
                None
            }
        }
    }
}

/// Decodes `%XX` escapes in a URI fragment (invalid ones are kept as they are).
pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Merges the keywords beside a `$ref` over its inlined target.
pub(super) fn merge_ref(resolved: Value, siblings: Value) -> Value {
    let (Value::Object(mut target), Value::Object(siblings)) = (resolved, siblings) else {
        return Value::Null;
    };
    if siblings.is_empty() {
        return Value::Object(target);
    }
    let conflict = siblings
        .iter()
        .any(|(k, v)| !ANNOTATIONS.contains(&k.as_str()) && target.get(k).is_some_and(|t| t != v));
    if conflict {
        let mut annotations = Map::new();
        let mut rest = Map::new();
        for (k, v) in siblings {
            if ANNOTATIONS.contains(&k.as_str()) {
                annotations.insert(k, v);
            } else {
                rest.insert(k, v);
            }
        }
        let all_of = Value::Array(vec![Value::Object(target), Value::Object(rest)]);
        // Intersect where that is exact (types, enums, bounds); else keep `allOf`.
        let mut merged = annotations.clone();
        if merge_all_of(&mut merged, all_of.clone()).is_ok() {
            return Value::Object(merged);
        }
        annotations.insert("allOf".into(), all_of);
        return Value::Object(annotations);
    }
    for (k, v) in siblings {
        target.insert(k, v);
    }
    Value::Object(target)
}

/// `$schema` (and, unless a `$ref` was left, `definitions`) dropped below the
/// root, `true` subschemas written as `{}`, `properties` on every object schema.
struct Normalize {
    keep_defs: bool,
}

impl VisitorMut for Normalize {
    fn enter(&mut self, node: &mut Value, at: At<'_>) -> bool {
        if at.depth > MAX_SCHEMA_DEPTH {
            return false;
        }
        let Value::Object(m) = node else { return false };
        if at.depth > 0 {
            m.remove("$schema");
            if !self.keep_defs {
                m.remove("definitions");
                m.remove("$defs");
            }
        }
        if is_object_schema(m) && !m.contains_key("properties") {
            m.insert("properties".into(), Value::Object(Map::new()));
        }
        for (key, value) in m.iter_mut() {
            let k = key.as_str();
            let subs: Vec<&mut Value> = match value {
                Value::Object(map) if k == "properties" => map.values_mut().collect(),
                Value::Array(list) if matches!(k, "items" | "anyOf" | "oneOf" | "allOf") => {
                    list.iter_mut().collect()
                }
                v @ Value::Bool(true) if k == "items" => vec![v],
                _ => Vec::new(),
            };
            for sub in subs {
                if *sub == Value::Bool(true) {
                    *sub = Value::Object(Map::new());
                }
            }
        }
        true
    }
}

/// Makes sure the root describes an object (tool arguments always are one).
pub(super) fn root_object(schema: &mut Value, found: &mut Vec<Found>) {
    if *schema == Value::Bool(true) {
        *schema = empty_object_schema();
    }
    let Value::Object(m) = schema else {
        found.push((
            String::new(),
            "`parameters` must be an object schema".into(),
        ));
        return;
    };
    match m.get("type") {
        None => {
            let composite = ["anyOf", "oneOf", "allOf", "enum", "const"]
                .iter()
                .any(|k| m.contains_key(*k));
            if composite {
                found.push((
                    String::new(),
                    "`parameters` must have `\"type\": \"object\"`".into(),
                ));
            } else {
                m.insert("type".into(), "object".into());
                if !m.contains_key("properties") {
                    m.insert("properties".into(), Value::Object(Map::new()));
                }
            }
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => found.push((
            String::new(),
            format!("`parameters` must have `\"type\": \"object\"`, not {other}"),
        )),
    }
}
