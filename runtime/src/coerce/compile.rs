//! Compiling: reading a `parameters` schema once into a [`CoercionPlan`].

use super::*;

impl Kind {
    fn from_type_name(name: &str) -> Option<Kind> {
        match name {
            "integer" => Some(Kind::Integer),
            "number" => Some(Kind::Number),
            "boolean" => Some(Kind::Boolean),
            "array" => Some(Kind::Array),
            "object" => Some(Kind::Object),
            "null" => Some(Kind::Null),
            _ => None,
        }
    }
}

impl CoercionPlan {
    /// Reads a tool's `parameters` schema into a plan. Never fails: schema
    /// shapes it does not understand compile to "leave alone".
    pub fn compile(parameters: &Value) -> CoercionPlan {
        let properties = parameters
            .as_object()
            .and_then(|p| p.get("properties"))
            .and_then(Value::as_object);
        let mut props: Vec<PropPlan> = match properties {
            Some(properties) => properties
                .iter()
                .filter_map(|(name, schema)| compile_prop(name, schema))
                .collect(),
            None => Vec::new(),
        };
        props.sort_by(|a, b| cmp_names(&a.name, &b.name));
        CoercionPlan {
            props: Cow::Owned(props),
        }
    }
}

pub(super) fn compile_prop(name: &str, schema: &Value) -> Option<PropPlan> {
    let obj = schema.as_object()?;
    let ty = obj.get("type");
    let nullable = allows_null(obj);
    let mut kinds = Vec::new();
    if let Some(ty) = ty {
        collect_kinds(ty, &mut kinds, 0);
    }
    if nullable {
        // The null check runs first, so a `null` member could add nothing.
        kinds.retain(|k| *k != Kind::Null);
    }
    if !nullable && kinds.is_empty() {
        return None;
    }
    let mut flags = 0;
    if nullable {
        flags |= PropPlan::NULLABLE;
    }
    match ty.and_then(Value::as_str) {
        Some("array") => flags |= PropPlan::ARRAY,
        Some("object") => flags |= PropPlan::OBJECT,
        _ => {}
    }
    // Nested repair happens only inside lists and objects this property holds
    // natively (`array` / `object` exactly) or that string coercion produced.
    let holds_containers = flags & (PropPlan::ARRAY | PropPlan::OBJECT) != 0
        || kinds
            .iter()
            .any(|k| matches!(k, Kind::Array | Kind::Object));
    let node = if holds_containers {
        RepairNode {
            accepts: 0,
            ..compile_node(schema, 0)
        }
    } else {
        RepairNode::INERT
    };
    Some(PropPlan {
        name: Cow::Owned(name.to_owned()),
        flags,
        kinds: Cow::Owned(kinds),
        node,
    })
}

/// Collects the coercible members of a `type` value in order (nested lists are
/// flattened, as the reference recurses into them). Returns `false` at a member
/// the reference cannot handle (an object), after which no member is tried.
pub(super) fn collect_kinds(ty: &Value, out: &mut Vec<Kind>, depth: usize) -> bool {
    match ty {
        Value::String(name) => {
            if let Some(kind) = Kind::from_type_name(name) {
                if !out.contains(&kind) {
                    out.push(kind);
                }
            }
            true
        }
        Value::Array(members) => {
            if depth >= MAX_DEPTH {
                return false;
            }
            members.iter().all(|m| collect_kinds(m, out, depth + 1))
        }
        Value::Object(_) => false,
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}

pub(super) fn allows_null(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(ts)) if ts.iter().any(|t| t.as_str() == Some("null")) => return true,
        _ => {}
    }
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        return true;
    }
    ["anyOf", "oneOf"].iter().any(|key| match schema.get(*key) {
        Some(Value::Array(variants)) => variants.iter().any(|v| {
            v.as_object()
                .and_then(|o| o.get("type"))
                .and_then(Value::as_str)
                == Some("null")
        }),
        _ => false,
    })
}

/// Whether a schema position accepts JSON values of type `kind` (`"array"` or
/// `"object"`), through `type`, type lists and `anyOf`/`oneOf`/`allOf`.
pub(super) fn accepts(schema: &Value, kind: &str, depth: usize) -> bool {
    if depth >= MAX_DEPTH {
        return false;
    }
    let Some(obj) = schema.as_object() else {
        return false;
    };
    match obj.get("type") {
        Some(Value::String(t)) if t == kind => return true,
        Some(Value::Array(ts)) if ts.iter().any(|t| t.as_str() == Some(kind)) => return true,
        _ => {}
    }
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|key| match obj.get(*key) {
            Some(Value::Array(branches)) => branches.iter().any(|b| accepts(b, kind, depth + 1)),
            _ => false,
        })
}

pub(super) fn compile_node(schema: &Value, depth: usize) -> RepairNode {
    let Some(obj) = schema.as_object() else {
        return RepairNode::INERT;
    };
    if depth >= MAX_DEPTH {
        return RepairNode::INERT;
    }
    let mut accepts_bits = 0;
    if accepts(schema, "array", 0) {
        accepts_bits |= RepairNode::ACCEPTS_ARRAY;
    }
    if accepts(schema, "object", 0) {
        accepts_bits |= RepairNode::ACCEPTS_OBJECT;
    }
    let items = match obj.get("items") {
        Some(items @ Value::Object(_)) => {
            let node = compile_node(items, depth + 1);
            if node.is_inert() {
                Vec::new()
            } else {
                vec![node]
            }
        }
        _ => Vec::new(),
    };
    let mut props: Vec<RepairProp> = match obj.get("properties") {
        Some(Value::Object(properties)) => properties
            .iter()
            .filter(|(_, s)| s.is_object())
            .filter_map(|(name, s)| {
                let node = compile_node(s, depth + 1);
                (!node.is_inert()).then(|| RepairProp {
                    name: Cow::Owned(name.clone()),
                    node,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    props.sort_by(|a, b| cmp_names(&a.name, &b.name));
    RepairNode {
        accepts: accepts_bits,
        items: Cow::Owned(items),
        props: Cow::Owned(props),
    }
}

/// The order of plan names: by length, then by bytes.
pub(super) fn cmp_names(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}
