//! Merging subschemas: `allOf` members into their parent, and `oneOf` into
//! `anyOf` when its branches are provably disjoint.

use serde_json::{Map, Value};

use super::keywords::{
    listed_values, property_names, required_names, type_names, types_overlap, value_is, ANNOTATIONS,
};

/// Merges `allOf` members into their parent when they do not contradict each other.
pub(super) fn merge_all_of(m: &mut Map<String, Value>, parts: Value) -> Result<(), String> {
    let Value::Array(parts) = parts else {
        return Err("`allOf` is not a list".into());
    };
    let mut merged = m.clone();
    // (properties of a closed member) to re-check once everything is merged.
    let mut closed: Vec<Vec<String>> = Vec::new();
    if m.get("additionalProperties") == Some(&Value::Bool(false)) {
        closed.push(property_names(m));
    }
    for part in parts {
        let part = match part {
            Value::Bool(true) => continue,
            Value::Object(p) => p,
            _ => {
                return Err(
                    "an `allOf` member that is not an object schema cannot be merged".into(),
                )
            }
        };
        if part.contains_key("$ref") || part.contains_key("allOf") {
            return Err("a nested `allOf`/`$ref` member cannot be merged".into());
        }
        if part.get("additionalProperties") == Some(&Value::Bool(false)) {
            closed.push(property_names(&part));
        }
        for (k, v) in part {
            let Some(cur) = merged.get_mut(&k) else {
                merged.insert(k, v);
                continue;
            };
            if *cur == v || ANNOTATIONS.contains(&k.as_str()) {
                continue;
            }
            match (k.as_str(), cur, v) {
                ("properties", Value::Object(cur), Value::Object(add)) => {
                    for (name, schema) in add {
                        match cur.get(&name) {
                            Some(existing) if *existing != schema => {
                                return Err(format!(
                                    "`allOf` members define property `{name}` differently"
                                ));
                            }
                            Some(_) => {}
                            None => {
                                cur.insert(name, schema);
                            }
                        }
                    }
                }
                ("required", Value::Array(cur), Value::Array(add)) => {
                    for r in add {
                        if !cur.contains(&r) {
                            cur.push(r);
                        }
                    }
                }
                ("enum", Value::Array(cur), Value::Array(add)) => {
                    cur.retain(|x| add.contains(x));
                    if cur.is_empty() {
                        return Err("the `enum`s of `allOf` members share no value".into());
                    }
                }
                ("type", cur, add) => {
                    let mut add_map = Map::new();
                    add_map.insert("type".into(), add);
                    let mut cur_map = Map::new();
                    cur_map.insert("type".into(), cur.clone());
                    let common = intersect_types(&type_names(&cur_map), &type_names(&add_map));
                    *cur = match common.as_slice() {
                        [] => return Err("the `type`s of `allOf` members share no type".into()),
                        [one] => Value::String(one.clone()),
                        many => Value::Array(many.iter().cloned().map(Value::String).collect()),
                    };
                }
                (bound, Value::Number(cur), Value::Number(add))
                    if LOWER_BOUNDS.contains(&bound) || UPPER_BOUNDS.contains(&bound) =>
                {
                    let (c, a) = (cur.as_f64().unwrap_or(0.0), add.as_f64().unwrap_or(0.0));
                    let take_add = if LOWER_BOUNDS.contains(&bound) {
                        a > c
                    } else {
                        a < c
                    };
                    if take_add {
                        *cur = add;
                    }
                }
                _ => return Err(format!("`allOf` members disagree on `{k}`")),
            }
        }
    }
    let all_names = property_names(&merged);
    if closed.iter().any(|names| names.len() != all_names.len()) {
        return Err(
            "an `allOf` member is closed (`additionalProperties: false`) but others add properties"
                .into(),
        );
    }
    *m = merged;
    Ok(())
}

/// Bounds where the larger value is the tighter one.
pub(super) const LOWER_BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];

/// Bounds where the smaller value is the tighter one.
pub(super) const UPPER_BOUNDS: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// The types both lists allow (`integer` is part of `number`).
pub(super) fn intersect_types(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in a {
        for y in b {
            if types_overlap(x, y) {
                let narrower = if x == "integer" || y == "integer" {
                    "integer".to_string()
                } else {
                    x.clone()
                };
                if !out.contains(&narrower) {
                    out.push(narrower);
                }
            }
        }
    }
    out
}

/// Turns `oneOf` into `anyOf` when its branches are pairwise disjoint.
pub(super) fn one_of_to_any_of(
    m: &mut Map<String, Value>,
    closes_objects: bool,
) -> Result<(), String> {
    let Some(Value::Array(branches)) = m.get("oneOf") else {
        return Err("`oneOf` is not a list".into());
    };
    for i in 0..branches.len() {
        for j in i + 1..branches.len() {
            if !disjoint(&branches[i], &branches[j], closes_objects) {
                return Err(format!(
                    "`oneOf` branches {i} and {j} may overlap, so it cannot be expressed as `anyOf`"
                ));
            }
        }
    }
    if m.contains_key("anyOf") {
        return Err("`oneOf` next to `anyOf` cannot be expressed".into());
    }
    if let Some(one_of) = m.remove("oneOf") {
        m.insert("anyOf".into(), one_of);
    }
    Ok(())
}

/// Whether no value can match both schemas (conservative: `false` when unsure).
pub(super) fn disjoint(a: &Value, b: &Value, closes_objects: bool) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return false;
    };
    let (ta, tb) = (type_names(a), type_names(b));
    if !ta.is_empty()
        && !tb.is_empty()
        && !ta.iter().any(|x| tb.iter().any(|y| types_overlap(x, y)))
    {
        return true;
    }
    let (va, vb) = (listed_values(a), listed_values(b));
    match (&va, &vb) {
        (Some(va), Some(vb)) => return !va.iter().any(|v| vb.contains(v)),
        (Some(vals), None) if !tb.is_empty() => {
            return !vals.iter().any(|v| tb.iter().any(|t| value_is(v, t)));
        }
        (None, Some(vals)) if !ta.is_empty() => {
            return !vals.iter().any(|v| ta.iter().any(|t| value_is(v, t)));
        }
        _ => {}
    }
    let objects = ta.iter().all(|t| t == "object") && tb.iter().all(|t| t == "object");
    if !(objects && !ta.is_empty() && !tb.is_empty()) {
        return false;
    }
    requires_forbidden(a, b, closes_objects)
        || requires_forbidden(b, a, closes_objects)
        || tagged_apart(a, b)
}

/// `a` requires a key that the closed object `b` does not allow.
pub(super) fn requires_forbidden(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    closes: bool,
) -> bool {
    let b_closed = match b.get("additionalProperties") {
        Some(Value::Bool(false)) => true,
        None | Some(Value::Bool(true)) => closes,
        Some(Value::Object(s)) => closes && s.is_empty(),
        _ => false,
    };
    if !b_closed {
        return false;
    }
    let required = if closes {
        property_names(a)
    } else {
        required_names(a)
    };
    let b_props = property_names(b);
    required.iter().any(|k| !b_props.contains(k))
}

/// Both require a property whose listed values differ (an internal tag).
pub(super) fn tagged_apart(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let (ra, rb) = (required_names(a), required_names(b));
    let prop = |m: &Map<String, Value>, k: &str| -> Option<Vec<Value>> {
        m.get("properties")?
            .get(k)?
            .as_object()
            .and_then(listed_values)
    };
    ra.iter()
        .filter(|k| rb.contains(k))
        .any(|k| match (prop(a, k), prop(b, k)) {
            (Some(va), Some(vb)) => !va.iter().any(|v| vb.contains(v)),
            _ => false,
        })
}
