//! The one JSON-schema walker: every subschema of a schema, each with its
//! JSON pointer and depth, read-only ([`walk`]) or mutable ([`walk_mut`]).
//! The dialect rewrite and check, the `$ref` inliner, the definitions'
//! description passes and the build step's schema lints all walk through
//! here, so the keywords that hold subschemas are listed once:
//! [`SINGLE_SCHEMA`], [`MAP_OF_SCHEMAS`], [`LIST_OF_SCHEMAS`].
//!
//! The list is that of `schemars::transform::transform_subschemas` plus the
//! keywords it leaves out (`dependencies`, `dependentSchemas`,
//! `unevaluatedProperties`, `unevaluatedItems`, `contentSchema`); schemars'
//! function is not used because it gives neither the pointer, the depth nor
//! a read-only pass, and it cannot leave `definitions` out.
//!
//! Which values count as subschemas:
//! * a single-schema keyword (`items`, `additionalProperties`, `not`, ...)
//!   holding an object; a boolean there (`additionalProperties: false`) is
//!   the keyword's switch and is not visited;
//! * every object or boolean in a map of schemas (`properties`, ...);
//! * every entry of a list of schemas (`anyOf`, tuple `items`, ...), of
//!   whatever kind, so a rewrite can report an entry that is not a schema.
//!
//! A visitor sees a node in [`Visitor::enter`] (returning whether to go into
//! its subschemas) and, when it went in, again in [`Visitor::leave`] after
//! them. Subschemas are visited in the order of their keywords in the map.

use serde_json::{Map, Value};

/// Keywords holding one subschema.
pub const SINGLE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];

/// Keywords holding a map of name to subschema.
pub const MAP_OF_SCHEMAS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "definitions",
    "$defs",
];

/// Keywords holding a list of subschemas (`items` is one in its tuple form).
pub const LIST_OF_SCHEMAS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Where a visited node is.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// The JSON pointer (RFC 6901) from where the walk started; `""` there.
    pub pointer: &'a str,
    /// Schema levels below where the walk started (0 there).
    pub depth: usize,
    /// The keyword holding the node (`properties` for a property's schema);
    /// `None` where the walk started.
    pub keyword: Option<&'a str>,
}

/// A read-only pass over a schema and its subschemas.
pub trait Visitor {
    /// Called on each node before its subschemas; `false` skips them (and
    /// [`Visitor::leave`]).
    fn enter(&mut self, node: &Value, at: At<'_>) -> bool;
    /// Called on each node whose subschemas were visited, after them.
    fn leave(&mut self, _node: &Value, _at: At<'_>) {}
    /// Whether to visit what `definitions` and `$defs` hold.
    fn definitions(&self) -> bool {
        true
    }
}

/// A pass that may change a schema and its subschemas. `enter` may rewrite
/// or replace the node; its subschemas are those it has when `enter` returns.
pub trait VisitorMut {
    /// Called on each node before its subschemas; `false` skips them (and
    /// [`VisitorMut::leave`]).
    fn enter(&mut self, node: &mut Value, at: At<'_>) -> bool;
    /// Called on each node whose subschemas were visited, after them.
    fn leave(&mut self, _node: &mut Value, _at: At<'_>) {}
    /// Whether to visit what `definitions` and `$defs` hold.
    fn definitions(&self) -> bool {
        true
    }
}

impl<F: FnMut(&Value, At<'_>) -> bool> Visitor for F {
    fn enter(&mut self, node: &Value, at: At<'_>) -> bool {
        self(node, at)
    }
}

impl<F: FnMut(&mut Value, At<'_>) -> bool> VisitorMut for F {
    fn enter(&mut self, node: &mut Value, at: At<'_>) -> bool {
        self(node, at)
    }
}

/// Visits `schema` and every subschema under it.
pub fn walk<V: Visitor + ?Sized>(schema: &Value, visitor: &mut V) {
    walk_at(schema, "", 0, visitor);
}

/// [`walk`], starting at `pointer` and `depth` (for a visitor that walks a
/// node of its own making from inside [`Visitor::enter`]).
pub fn walk_at<V: Visitor + ?Sized>(schema: &Value, pointer: &str, depth: usize, visitor: &mut V) {
    let mut pointer = pointer.to_string();
    node(schema, &mut pointer, depth, None, visitor);
}

/// Visits `schema` and every subschema under it, mutably.
pub fn walk_mut<V: VisitorMut + ?Sized>(schema: &mut Value, visitor: &mut V) {
    walk_mut_at(schema, "", 0, visitor);
}

/// [`walk_mut`], starting at `pointer` and `depth` (for a visitor that walks
/// a node of its own making from inside [`VisitorMut::enter`]).
pub fn walk_mut_at<V: VisitorMut + ?Sized>(
    schema: &mut Value,
    pointer: &str,
    depth: usize,
    visitor: &mut V,
) {
    let mut pointer = pointer.to_string();
    node_mut(schema, &mut pointer, depth, None, visitor);
}

/// Calls `f(pointer, schema)` on every schema object at or under `schema`.
pub fn for_each_schema(schema: &Value, mut f: impl FnMut(&str, &Map<String, Value>)) {
    walk(schema, &mut |node: &Value, at: At<'_>| {
        if let Value::Object(m) = node {
            f(at.pointer, m);
        }
        true
    });
}

/// Calls `f(schema)` on every schema object at or under `schema`, mutably.
pub fn for_each_schema_mut(schema: &mut Value, mut f: impl FnMut(&mut Map<String, Value>)) {
    walk_mut(schema, &mut |node: &mut Value, _: At<'_>| {
        if let Value::Object(m) = node {
            f(m);
        }
        true
    });
}

/// Whether `f` holds for some schema object at or under `schema` (stops at
/// the first).
pub fn any_schema(schema: &Value, mut f: impl FnMut(&Map<String, Value>) -> bool) -> bool {
    let mut found = false;
    walk(schema, &mut |node: &Value, _: At<'_>| {
        if let Value::Object(m) = node {
            found = found || f(m);
        }
        !found
    });
    found
}

/// Escapes one JSON pointer token (RFC 6901: `~` → `~0`, `/` → `~1`).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// `pointer` followed by `tokens`, each escaped.
pub fn child_pointer(pointer: &str, tokens: &[&str]) -> String {
    let mut out = pointer.to_string();
    for t in tokens {
        push_token(&mut out, t);
    }
    out
}

fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    if token.contains(['~', '/']) {
        pointer.push_str(&escape_token(token));
    } else {
        pointer.push_str(token);
    }
}

/// What a keyword holds: one subschema, a map of them or a list of them.
fn holds(key: &str, value: &Value) -> Option<Holds> {
    match value {
        Value::Object(_) if SINGLE_SCHEMA.contains(&key) => Some(Holds::One),
        Value::Object(_) if MAP_OF_SCHEMAS.contains(&key) => Some(Holds::Map),
        Value::Array(_) if LIST_OF_SCHEMAS.contains(&key) => Some(Holds::List),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum Holds {
    One,
    Map,
    List,
}

fn is_definitions(key: &str) -> bool {
    key == "definitions" || key == "$defs"
}

fn node<V: Visitor + ?Sized>(
    schema: &Value,
    pointer: &mut String,
    depth: usize,
    keyword: Option<&str>,
    v: &mut V,
) {
    let at = At {
        pointer,
        depth,
        keyword,
    };
    if !v.enter(schema, at) {
        return;
    }
    if let Value::Object(m) = schema {
        let definitions = v.definitions();
        for (key, value) in m {
            let k = key.as_str();
            if !definitions && is_definitions(k) {
                continue;
            }
            let Some(holds) = holds(k, value) else {
                continue;
            };
            let len = pointer.len();
            push_token(pointer, k);
            match (holds, value) {
                (Holds::One, _) => node(value, pointer, depth + 1, Some(k), v),
                (Holds::Map, Value::Object(map)) => {
                    for (name, sub) in map {
                        if sub.is_object() || sub.is_boolean() {
                            let len = pointer.len();
                            push_token(pointer, name);
                            node(sub, pointer, depth + 1, Some(k), v);
                            pointer.truncate(len);
                        }
                    }
                }
                (Holds::List, Value::Array(list)) => {
                    for (i, sub) in list.iter().enumerate() {
                        let len = pointer.len();
                        push_index(pointer, i);
                        node(sub, pointer, depth + 1, Some(k), v);
                        pointer.truncate(len);
                    }
                }
                _ => {}
            }
            pointer.truncate(len);
        }
    }
    let at = At {
        pointer,
        depth,
        keyword,
    };
    v.leave(schema, at);
}

fn node_mut<V: VisitorMut + ?Sized>(
    schema: &mut Value,
    pointer: &mut String,
    depth: usize,
    keyword: Option<&str>,
    v: &mut V,
) {
    let at = At {
        pointer,
        depth,
        keyword,
    };
    if !v.enter(schema, at) {
        return;
    }
    if let Value::Object(m) = schema {
        let definitions = v.definitions();
        for (key, value) in m.iter_mut() {
            let k = key.as_str();
            if !definitions && is_definitions(k) {
                continue;
            }
            let Some(holds) = holds(k, value) else {
                continue;
            };
            let len = pointer.len();
            push_token(pointer, k);
            match (holds, value) {
                (Holds::One, value) => node_mut(value, pointer, depth + 1, Some(k), v),
                (Holds::Map, Value::Object(map)) => {
                    for (name, sub) in map.iter_mut() {
                        if sub.is_object() || sub.is_boolean() {
                            let len = pointer.len();
                            push_token(pointer, name);
                            node_mut(sub, pointer, depth + 1, Some(k), v);
                            pointer.truncate(len);
                        }
                    }
                }
                (Holds::List, Value::Array(list)) => {
                    for (i, sub) in list.iter_mut().enumerate() {
                        let len = pointer.len();
                        push_index(pointer, i);
                        node_mut(sub, pointer, depth + 1, Some(k), v);
                        pointer.truncate(len);
                    }
                }
                _ => {}
            }
            pointer.truncate(len);
        }
    }
    let at = At {
        pointer,
        depth,
        keyword,
    };
    v.leave(schema, at);
}

fn push_index(pointer: &mut String, i: usize) {
    use std::fmt::Write as _;
    let _ = write!(pointer, "/{i}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointers(schema: &Value, definitions: bool) -> Vec<String> {
        struct Collect(Vec<String>, bool);
        impl Visitor for Collect {
            fn enter(&mut self, _: &Value, at: At<'_>) -> bool {
                self.0.push(at.pointer.to_string());
                true
            }
            fn definitions(&self) -> bool {
                self.1
            }
        }
        let mut c = Collect(Vec::new(), definitions);
        walk(schema, &mut c);
        c.0
    }

    #[test]
    fn visits_every_subschema_with_its_pointer() {
        let schema = json!({
            "type": "object",
            "properties": {"a/b": {"items": {"type": "string"}}, "t": true, "n": 3},
            "additionalProperties": false,
            "anyOf": [{"type": "null"}, 7],
            "items": [{"const": 1}],
            "definitions": {"x~y": {"not": {}}},
            "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
            "contentSchema": {},
            "default": {"properties": {"no": {}}},
        });
        let mut all = pointers(&schema, true);
        all.sort();
        assert_eq!(
            all,
            [
                "",
                "/anyOf/0",
                "/anyOf/1",
                "/contentSchema",
                "/definitions/x~0y",
                "/definitions/x~0y/not",
                "/dependencies/c",
                "/items/0",
                "/properties/a~1b",
                "/properties/a~1b/items",
                "/properties/t",
            ]
        );
        let without: Vec<String> = pointers(&schema, false);
        assert!(!without.iter().any(|p| p.starts_with("/definitions")));
        assert_eq!(without.len(), all.len() - 2);
    }

    #[test]
    fn leave_follows_the_subschemas_and_enter_can_prune() {
        let schema = json!({"properties": {"a": {"properties": {"b": {}}}}, "not": {}});
        let mut log = Vec::new();
        struct Log<'a>(&'a mut Vec<String>);
        impl VisitorMut for Log<'_> {
            fn enter(&mut self, _: &mut Value, at: At<'_>) -> bool {
                self.0.push(format!("+{}", at.pointer));
                at.keyword != Some("not") && at.depth < 2
            }
            fn leave(&mut self, _: &mut Value, at: At<'_>) {
                self.0.push(format!("-{}@{}", at.pointer, at.depth));
            }
        }
        let mut schema = schema;
        walk_mut(&mut schema, &mut Log(&mut log));
        assert_eq!(
            log,
            [
                "+",
                "+/not",
                "+/properties/a",
                "+/properties/a/properties/b",
                "-/properties/a@1",
                "-@0",
            ]
        );
    }

    #[test]
    fn schema_objects_and_pointers() {
        let mut schema =
            json!({"anyOf": [{"description": "x"}, true, {"items": {"description": "y"}}]});
        let mut seen = Vec::new();
        for_each_schema(&schema, |p, m| {
            seen.push((p.to_string(), m.contains_key("description")))
        });
        assert_eq!(
            seen,
            [
                (String::new(), false),
                ("/anyOf/0".into(), true),
                ("/anyOf/2".into(), false),
                ("/anyOf/2/items".into(), true),
            ]
        );
        assert!(any_schema(&schema, |m| m.get("description") == Some(&json!("y"))));
        assert!(!any_schema(&schema, |m| m.contains_key("title")));
        for_each_schema_mut(&mut schema, |m| {
            m.remove("description");
        });
        assert_eq!(schema, json!({"anyOf": [{}, true, {"items": {}}]}));
        assert_eq!(child_pointer("/a", &["b/c", "d~"]), "/a/b~1c/d~0");
    }
}
