//! The rewrite passes that turn a baseline schema into one dialect's form,
//! node by node (see the module docs of [`super`] for what each dialect keeps,
//! rewrites, drops and rejects). Each pass reads the rule it needs from the
//! dialect's [`Rules`] table; none asks which dialect it serves.

use serde_json::{Map, Value};

use super::base::{Dialect, Found, MAX_SCHEMA_DEPTH};
use super::keywords::{
    constrains_one_kind, has_type, is_null_schema, is_object_schema, materialize_bounds, number,
    numeric_format_bounds, property_names, required_names, type_names, value_is, value_kind,
    ANNOTATIONS, ANY_TYPES, ARRAY_KEYS, NUMBER_KEYS, OBJECT_KEYS, STRING_KEYS, TYPING_KEYS,
    UNEXPRESSIBLE,
};
use super::merge::{merge_all_of, one_of_to_any_of};
use super::rules::{Const, Formats, Objects, Rules, TypeList, Untyped};
use super::walk::{child_pointer, walk_mut, At, VisitorMut};

/// One rewrite of a schema for one dialect, collecting its issues.
pub(super) struct Cx<'a> {
    /// Named in messages.
    dialect: Dialect,
    rules: &'static Rules,
    found: &'a mut Vec<Found>,
}

impl<'a> Cx<'a> {
    pub(super) fn new(dialect: Dialect, found: &'a mut Vec<Found>) -> Self {
        Cx {
            dialect,
            rules: dialect.rules(),
            found,
        }
    }

    fn issue(&mut self, path: &str, message: String) {
        self.found.push((path.to_string(), message));
    }

    /// Rewrites `node` and every subschema under it.
    pub(super) fn transform(&mut self, node: &mut Value) {
        walk_mut(node, self);
    }
    /// The rewrites of one schema node before its children are visited.
    fn pre(&mut self, m: &mut Map<String, Value>, path: &str, root: bool) {
        // Leftovers of unresolved refs were reported by the baseline.
        for k in ["$ref", "definitions", "$defs"] {
            m.remove(k);
        }
        let before = self.found.len();
        self.reject_keywords(m, path);
        if let Some(parts) = m.remove("allOf") {
            if let Err(msg) = merge_all_of(m, parts) {
                self.issue(&child_pointer(path, &["allOf"]), msg);
            }
        }
        if self.rules.one_of_as_any_of && m.contains_key("oneOf") {
            let closes_objects = self.rules.objects == Objects::Closed;
            if let Err(msg) = one_of_to_any_of(m, closes_objects) {
                self.issue(&child_pointer(path, &["oneOf"]), msg);
                m.remove("oneOf");
            }
        }
        if self.rules.nullable_keyword {
            hoist_null_branches(m);
        }
        self.constant(m, path);
        if self.rules.infer_type && !m.contains_key("type") {
            infer_type(m);
        }
        self.format(m, path);
        self.exclusive_bounds(m, path);
        self.type_list(m, path);
        self.enum_values(m, path);
        // Follow-up complaints about a node already reported would be noise.
        let quiet = self.found.len() > before;
        self.any_value(m, path, quiet);
        if self.rules.infer_type && !m.contains_key("type") && m.contains_key("properties") {
            m.insert("type".into(), "object".into());
        }
        if self.rules.explicit_shapes {
            self.explicit_shapes(m, path, root, quiet);
        }
        self.drop_unsupported(m);
    }

    fn reject_keywords(&mut self, m: &mut Map<String, Value>, path: &str) {
        for k in UNEXPRESSIBLE.iter().chain(self.rules.unexpressible) {
            if m.remove(*k).is_some() {
                self.issue(
                    &child_pointer(path, &[k]),
                    format!(
                        "`{k}` cannot be expressed for {}; dropping it would change what is accepted",
                        self.dialect
                    ),
                );
            }
        }
        if !self.rules.tuple_items && m.get("items").is_some_and(Value::is_array) {
            m.remove("items");
            self.issue(
                &child_pointer(path, &["items"]),
                format!("tuple `items` cannot be expressed for {}", self.dialect),
            );
        }
    }

    fn constant(&mut self, m: &mut Map<String, Value>, path: &str) {
        if self.rules.constant == Const::Keep {
            return;
        }
        let Some(c) = m.remove("const") else { return };
        if let Some(Value::Array(values)) = m.get("enum") {
            if !values.contains(&c) {
                self.issue(
                    &child_pointer(path, &["const"]),
                    "`const` is not among the `enum` values, so nothing is valid".into(),
                );
                return;
            }
        }
        if self.rules.constant == Const::EnumOrBounds {
            match &c {
                Value::Number(n) => {
                    let v = n.as_f64().unwrap_or_default();
                    m.remove("enum");
                    m.insert("minimum".into(), c.clone());
                    m.insert("maximum".into(), c.clone());
                    if !m.contains_key("type") {
                        let kind = if v.fract() == 0.0 {
                            "integer"
                        } else {
                            "number"
                        };
                        m.insert("type".into(), kind.into());
                    }
                    return;
                }
                Value::String(_) => {}
                _ => {
                    self.issue(
                        &child_pointer(path, &["const"]),
                        format!(
                            "a `const` of kind {} cannot be expressed for {}",
                            value_kind(&c),
                            self.dialect
                        ),
                    );
                    return;
                }
            }
        }
        m.insert("enum".into(), Value::Array(vec![c]));
    }

    fn format(&mut self, m: &mut Map<String, Value>, path: &str) {
        let Some(format) = m.get("format").cloned() else {
            return;
        };
        let Value::String(format) = format else {
            m.remove("format");
            return;
        };
        let types = type_names(m);
        let is = |t: &str| types.iter().any(|x| x == t);
        let stringy = types.is_empty() || is("string");
        let numeric = is("integer") || is("number");
        let f = format.as_str();
        let keep = match self.rules.formats {
            Formats::All => true,
            Formats::Documented(kept) | Formats::Known(kept) => stringy && kept.contains(&f),
            Formats::PerType(per_type) => {
                per_type.iter().any(|(t, kept)| is(t) && kept.contains(&f))
            }
        };
        if keep {
            return;
        }
        m.remove("format");
        match numeric_format_bounds(f) {
            Some((min, max)) if numeric => materialize_bounds(m, min, max),
            _ if self.rules.format_loss_is_issue => self.issue(
                &child_pointer(path, &["format"]),
                format!(
                    "`format: {f}` is not supported {} and would be lost",
                    self.rules.by
                ),
            ),
            _ => {}
        }
    }

    fn exclusive_bounds(&mut self, m: &mut Map<String, Value>, path: &str) {
        for (exclusive, inclusive, step) in [
            ("exclusiveMinimum", "minimum", 1.0),
            ("exclusiveMaximum", "maximum", -1.0),
        ] {
            match m.get(exclusive).cloned() {
                None => {}
                Some(Value::Number(n)) if self.rules.exclusive_as_inclusive => {
                    m.remove(exclusive);
                    let only_integer = type_names(m).iter().all(|t| t == "integer" || t == "null")
                        && has_type(m, "integer");
                    let v = n.as_f64().unwrap_or_default();
                    if !only_integer {
                        self.issue(
                            &child_pointer(path, &[exclusive]),
                            format!(
                                "`{exclusive}` on a non-integer cannot be expressed for {}",
                                self.dialect
                            ),
                        );
                        continue;
                    }
                    let bound = if step > 0.0 {
                        v.floor() + 1.0
                    } else {
                        v.ceil() - 1.0
                    };
                    let tighter = m.get(inclusive).and_then(Value::as_f64).is_some_and(|cur| {
                        if step > 0.0 {
                            cur >= bound
                        } else {
                            cur <= bound
                        }
                    });
                    if !tighter {
                        m.insert(inclusive.into(), number(bound));
                    }
                }
                Some(Value::Number(_)) => {}
                Some(_) => {
                    m.remove(exclusive);
                    self.issue(
                        &child_pointer(path, &[exclusive]),
                        format!(
                            "draft-04 boolean `{exclusive}` cannot be expressed for {}",
                            self.dialect
                        ),
                    );
                }
            }
        }
    }

    fn type_list(&mut self, m: &mut Map<String, Value>, path: &str) {
        let Some(Value::Array(list)) = m.get("type") else {
            if self.rules.type_list == TypeList::One
                && m.get("type").and_then(Value::as_str) == Some("null")
            {
                self.lone_null(path);
            }
            return;
        };
        let types: Vec<String> = list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let nullable = types.iter().any(|t| t == "null");
        let non_null: Vec<String> = types.into_iter().filter(|t| t != "null").collect();
        match self.rules.type_list {
            TypeList::One => {
                if non_null.is_empty() {
                    self.lone_null(path);
                    m.remove("type");
                    return;
                }
                if nullable {
                    m.insert("nullable".into(), Value::Bool(true));
                    drop_null_from_enum(m);
                }
                if non_null.len() == 1 {
                    m.insert("type".into(), non_null[0].clone().into());
                } else {
                    split_types(m, &non_null, false);
                }
            }
            TypeList::PrimitiveOrNull => {
                let structured = non_null.iter().any(|t| t == "object" || t == "array");
                if non_null.len() > 1 || (structured && nullable) {
                    let mut all = non_null;
                    if nullable {
                        all.push("null".into());
                    }
                    split_types(m, &all, true);
                } else if non_null.len() == 1 && !nullable {
                    m.insert("type".into(), non_null[0].clone().into());
                }
            }
            TypeList::UnconstrainedOnly => {
                let mut all = non_null;
                if nullable {
                    all.push("null".into());
                }
                if all.len() == 1 {
                    m.insert("type".into(), all[0].clone().into());
                    return;
                }
                let constrained = m.keys().any(|k| {
                    constrains_one_kind(k) || matches!(k.as_str(), "enum" | "const" | "format")
                });
                if constrained {
                    split_types(m, &all, true);
                }
            }
            TypeList::Keep => {}
        }
    }

    fn lone_null(&mut self, path: &str) {
        self.issue(
            &child_pointer(path, &["type"]),
            format!(
                "a schema of type `null` alone cannot be expressed for {}",
                self.dialect
            ),
        );
    }

    /// `null` among the `enum` values as `nullable`; string-only enums.
    fn enum_values(&mut self, m: &mut Map<String, Value>, path: &str) {
        if self.rules.nullable_keyword
            && m.get("enum")
                .is_some_and(|e| e.as_array().is_some_and(|a| a.contains(&Value::Null)))
        {
            m.insert("nullable".into(), Value::Bool(true));
            drop_null_from_enum(m);
        }
        if !self.rules.string_enums {
            return;
        }
        if let Some(values) = m.get("enum").and_then(Value::as_array) {
            if values.is_empty() {
                self.issue(
                    &child_pointer(path, &["enum"]),
                    format!(
                        "an empty `enum` (or one holding only null) cannot be expressed for {}",
                        self.dialect
                    ),
                );
            } else if !values.iter().all(Value::is_string) {
                self.issue(
                    &child_pointer(path, &["enum"]),
                    format!("{} enums hold strings only", self.dialect),
                );
            }
        }
    }

    /// A schema without any typing keyword means "any value".
    fn any_value(&mut self, m: &mut Map<String, Value>, path: &str, quiet: bool) {
        if TYPING_KEYS.iter().any(|k| m.contains_key(*k)) {
            return;
        }
        match self.rules.untyped {
            Untyped::Keep => {}
            Untyped::Reject if quiet => {}
            Untyped::Reject => {
                self.issue(
                    path,
                    format!(
                        "a schema without a type (any value) cannot be expressed for {}",
                        self.dialect
                    ),
                );
            }
            Untyped::AllTypes => {
                let all: Vec<String> = ANY_TYPES.iter().map(|t| t.to_string()).collect();
                if m.keys().any(|k| constrains_one_kind(k)) {
                    split_types(m, &all, true);
                } else {
                    m.insert(
                        "type".into(),
                        Value::Array(all.into_iter().map(Value::String).collect()),
                    );
                }
            }
        }
    }

    /// Objects and arrays must say what they hold.
    fn explicit_shapes(&mut self, m: &mut Map<String, Value>, path: &str, root: bool, quiet: bool) {
        let mut map_like = false;
        match m.get("additionalProperties") {
            Some(Value::Object(s)) if !s.is_empty() => {
                map_like = true;
                m.remove("additionalProperties");
                self.issue(
                    &child_pointer(path, &["additionalProperties"]),
                    format!("a map-like object (`additionalProperties` is a schema) cannot be expressed for {}", self.dialect),
                );
            }
            Some(Value::Object(_)) | Some(Value::Bool(true)) => {
                m.remove("additionalProperties");
            }
            _ => {}
        }
        let unmarked = self.rules.objects == Objects::Unmarked;
        if unmarked {
            m.remove("additionalProperties");
            let props = property_names(m);
            let required = m
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for name in required.iter().filter_map(Value::as_str) {
                if !props.iter().any(|p| p == name) {
                    self.issue(
                        &child_pointer(path, &["required"]),
                        format!("`required` names `{name}`, which is not a property"),
                    );
                }
            }
        }
        if is_object_schema(m) && !root && !map_like && !quiet {
            let empty = m
                .get("properties")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty);
            let closed = m.get("additionalProperties") == Some(&Value::Bool(false));
            if empty && unmarked {
                self.issue(
                    path,
                    format!(
                        "a nested object without properties cannot be expressed for {}",
                        self.dialect
                    ),
                );
            } else if empty && !closed {
                self.issue(
                    path,
                    format!(
                        "a free-form nested object (no properties) cannot be expressed {}, which would only accept `{{}}`",
                        self.rules.by
                    ),
                );
            }
        }
        if has_type(m, "array") && !m.get("items").is_some_and(Value::is_object) {
            self.issue(
                path,
                format!(
                    "an array without `items` cannot be expressed for {}",
                    self.dialect
                ),
            );
        }
    }

    /// Drops what the dialect does not carry and cannot lose meaning by losing.
    fn drop_unsupported(&self, m: &mut Map<String, Value>) {
        if let Some(keep) = self.rules.keys {
            m.retain(|k, _| keep.contains(&k.as_str()));
        }
    }

    /// [`Objects::Closed`], after the children: close the object and require
    /// every property, making the optional ones nullable.
    fn close_object(&mut self, m: &mut Map<String, Value>, path: &str) {
        if !is_object_schema(m) {
            return;
        }
        m.insert("additionalProperties".into(), Value::Bool(false));
        let required = required_names(m);
        let Some(Value::Object(props)) = m.get_mut("properties") else {
            return;
        };
        for name in &required {
            if !props.contains_key(name) {
                self.issue(
                    &child_pointer(path, &["required"]),
                    format!("`required` names `{name}`, which is not a property"),
                );
            }
        }
        let mut all = Vec::new();
        for (name, schema) in props.iter_mut() {
            if !required.contains(name) {
                make_nullable(schema);
            }
            all.push(Value::String(name.clone()));
        }
        m.insert("required".into(), Value::Array(all));
    }
}

impl VisitorMut for Cx<'_> {
    fn enter(&mut self, node: &mut Value, at: At<'_>) -> bool {
        let path = at.pointer;
        if at.depth > MAX_SCHEMA_DEPTH {
            self.issue(
                path,
                format!("schema nested deeper than {MAX_SCHEMA_DEPTH} levels"),
            );
            return false;
        }
        match node {
            Value::Object(_) => {}
            Value::Bool(true) => *node = Value::Object(Map::new()),
            Value::Bool(false) => {
                self.issue(
                    path,
                    "a `false` schema (nothing is valid) cannot be expressed".into(),
                );
                return false;
            }
            _ => {
                self.issue(path, "a schema must be a JSON object".into());
                return false;
            }
        }
        let Value::Object(m) = node else { return false };
        self.pre(m, path, at.depth == 0);
        true
    }

    fn leave(&mut self, node: &mut Value, at: At<'_>) {
        if let Value::Object(m) = node {
            if self.rules.objects == Objects::Closed {
                self.close_object(m, at.pointer);
            }
        }
    }
}

pub(super) fn drop_null_from_enum(m: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = m.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// `{"type": "null"}` branches of `anyOf` become `nullable: true` (Gemini); a
/// single remaining branch is merged into the parent when nothing conflicts.
pub(super) fn hoist_null_branches(m: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = m.get("anyOf") else {
        return;
    };
    if !branches.iter().any(is_null_schema) {
        return;
    }
    let rest: Vec<Value> = branches
        .iter()
        .filter(|b| !is_null_schema(b))
        .cloned()
        .collect();
    if rest.is_empty() {
        // Only null: leave it for the type rules to report.
        m.remove("anyOf");
        m.insert("type".into(), "null".into());
        return;
    }
    m.insert("nullable".into(), Value::Bool(true));
    if let [Value::Object(only)] = rest.as_slice() {
        let conflict = only.iter().any(|(k, v)| {
            !ANNOTATIONS.contains(&k.as_str()) && m.get(k).is_some_and(|cur| cur != v)
        });
        if !conflict {
            m.remove("anyOf");
            for (k, v) in only {
                if !m.contains_key(k) {
                    m.insert(k.clone(), v.clone());
                }
            }
            return;
        }
    }
    m.insert("anyOf".into(), Value::Array(rest));
}

/// Gives an `enum` without `type` the type(s) of its values.
pub(super) fn infer_type(m: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = m.get("enum") else {
        return;
    };
    let mut kinds: Vec<&str> = Vec::new();
    for v in values {
        let kind = value_kind(v);
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    if kinds.contains(&"integer") && kinds.contains(&"number") {
        kinds.retain(|k| *k != "integer");
    }
    match kinds.as_slice() {
        [] => {}
        [one] => {
            m.insert("type".into(), (*one).into());
        }
        many => {
            m.insert(
                "type".into(),
                Value::Array(many.iter().map(|k| Value::String(k.to_string())).collect()),
            );
        }
    }
}

/// Splits a `type` list into `anyOf`, one branch per type carrying the
/// keywords that apply to it; annotations stay on the parent. Lossless: a
/// keyword constrains only values of its own kind. With `null_branch` false
/// a `"null"` in `types` is ignored (the caller expresses it otherwise).
pub(super) fn split_types(m: &mut Map<String, Value>, types: &[String], null_branch: bool) {
    let values: Option<Vec<Value>> = match (m.get("const"), m.get("enum")) {
        (Some(c), _) => Some(vec![c.clone()]),
        (None, Some(Value::Array(e))) => Some(e.clone()),
        _ => None,
    };
    let format = m.get("format").and_then(Value::as_str).map(str::to_string);
    let numeric_format = format
        .as_deref()
        .is_some_and(|f| numeric_format_bounds(f).is_some());
    let mut branches = Vec::new();
    for t in types {
        let mut b = Map::new();
        b.insert("type".into(), t.clone().into());
        if t == "null" {
            if !null_branch || values.as_ref().is_some_and(|v| !v.contains(&Value::Null)) {
                continue;
            }
            branches.push(Value::Object(b));
            continue;
        }
        let keys: &[&str] = match t.as_str() {
            "string" => STRING_KEYS,
            "number" | "integer" => NUMBER_KEYS,
            "array" => ARRAY_KEYS,
            "object" => OBJECT_KEYS,
            _ => &[],
        };
        for k in keys {
            if let Some(v) = m.get(*k) {
                b.insert((*k).to_string(), v.clone());
            }
        }
        if let Some(f) = &format {
            let fits = if numeric_format {
                t == "integer" || t == "number"
            } else {
                t == "string"
            };
            if fits {
                b.insert("format".into(), f.clone().into());
            }
        }
        if let Some(values) = &values {
            let mine: Vec<Value> = values.iter().filter(|v| value_is(v, t)).cloned().collect();
            if mine.is_empty() {
                continue;
            }
            if m.contains_key("const") {
                b.insert("const".into(), mine[0].clone());
            } else {
                b.insert("enum".into(), Value::Array(mine));
            }
        }
        branches.push(Value::Object(b));
    }
    m.retain(|k, _| {
        let k = k.as_str();
        !(matches!(k, "type" | "enum" | "const" | "format") || constrains_one_kind(k))
    });
    if let [Value::Object(only)] = branches.as_slice() {
        for (k, v) in only {
            m.insert(k.clone(), v.clone());
        }
        return;
    }
    m.insert("anyOf".into(), Value::Array(branches));
}

/// Strict mode: lets an optional property's value be `null`.
pub(super) fn make_nullable(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    let types = type_names(m);
    let null_branch = m
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|b| b.iter().any(is_null_schema));
    if types.is_empty() && null_branch && !m.contains_key("enum") {
        return;
    }
    let primitive = |t: &String| {
        matches!(
            t.as_str(),
            "string" | "number" | "integer" | "boolean" | "null"
        )
    };
    if !types.is_empty() && types.iter().all(primitive) {
        if !types.iter().any(|t| t == "null") {
            let mut list: Vec<Value> = types.into_iter().map(Value::String).collect();
            list.push("null".into());
            m.insert("type".into(), Value::Array(list));
        }
        if let Some(Value::Array(values)) = m.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
        return;
    }
    let mut null = Map::new();
    null.insert("type".into(), "null".into());
    if types.is_empty() && !m.contains_key("enum") {
        if let Some(Value::Array(branches)) = m.get_mut("anyOf") {
            branches.push(Value::Object(null));
            return;
        }
    }
    let mut wrapper = Map::new();
    for k in ["description", "title"] {
        if let Some(v) = m.remove(k) {
            wrapper.insert(k.into(), v);
        }
    }
    let inner = std::mem::take(m);
    wrapper.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(inner), Value::Object(null)]),
    );
    *m = wrapper;
}
