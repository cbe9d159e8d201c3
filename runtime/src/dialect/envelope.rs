//! The envelope around a tool's parameters: reading any accepted input shape,
//! writing each dialect's shape, and checking a dialect-form envelope and
//! its tool name.

use serde_json::{Map, Value};

use super::base::{Dialect, Found};
use super::rules::{Envelope, Names};

pub(super) struct ToolParts<'a> {
    pub(super) name: Value,
    pub(super) description: Option<Value>,
    /// Borrowed: the rewrite copies it once, as it inlines and normalizes.
    pub(super) parameters: Option<&'a Value>,
}

pub(super) fn parse_tool(tool: &Value) -> Result<ToolParts<'_>, String> {
    let Value::Object(outer) = tool else {
        return Err("tool definition: not a JSON object".into());
    };
    let inner = match (outer.get("type"), outer.get("function")) {
        (Some(Value::String(t)), Some(Value::Object(f))) if t == "function" => f,
        _ => outer,
    };
    let name = match inner.get("name") {
        Some(Value::String(s)) => Value::String(s.clone()),
        _ => return Err("tool definition: no string `name`".into()),
    };
    let description = match inner.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(Value::String(s.clone())),
        Some(_) => return Err("tool definition: `description` is not a string".into()),
    };
    let parameters = ["parameters", "inputSchema", "input_schema"]
        .iter()
        .find_map(|k| inner.get(*k))
        .filter(|v| !v.is_null());
    Ok(ToolParts {
        name,
        description,
        parameters,
    })
}

pub(super) fn empty_object_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "object".into());
    m.insert("properties".into(), Value::Object(Map::new()));
    Value::Object(m)
}

pub(super) fn envelope(dialect: Dialect, parts: ToolParts<'_>, parameters: Value) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), parts.name);
    if let Some(d) = parts.description {
        f.insert("description".into(), d);
    }
    match dialect.rules().envelope {
        Envelope::Bare {
            schema_key,
            omit_empty,
        } => {
            let empty = parameters
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty);
            if !(omit_empty && empty) {
                f.insert(schema_key.into(), parameters);
            }
            Value::Object(f)
        }
        Envelope::Function { strict } => {
            f.insert("parameters".into(), parameters);
            if strict {
                f.insert("strict".into(), Value::Bool(true));
            }
            let mut outer = Map::new();
            outer.insert("type".into(), "function".into());
            outer.insert("function".into(), Value::Object(f));
            Value::Object(outer)
        }
    }
}

/// Whether `name` breaks the dialect's [`Names`] rule, and how.
fn check_name(name: &str, dialect: Dialect) -> Option<String> {
    let Names {
        max_len,
        dots,
        letter_first,
    } = dialect.rules().names;
    let chars_ok = name
        .chars()
        .all(|c| hermes_tool_facts::is_name_char(c) || (dots && c == '.'));
    let first_ok = !letter_first
        || name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let ok = (1..=max_len).contains(&name.chars().count()) && chars_ok && first_ok;
    (!ok).then(|| format!("envelope: tool name `{name}` is not valid for {dialect}"))
}

/// Checks the envelope and returns the parameters schema to check, if any.
pub(super) fn check_envelope<'a>(
    tool: &'a Value,
    dialect: Dialect,
    found: &mut Vec<Found>,
) -> Option<&'a Value> {
    let rules = dialect.rules();
    let mut fail = |m: String| found.push((String::new(), m));
    let Value::Object(outer) = tool else {
        fail("envelope: not a JSON object".into());
        return None;
    };
    let bare_keys;
    let (f, schema_key, allowed, optional): (&Map<String, Value>, &str, &[&str], bool) =
        match rules.envelope {
            Envelope::Function { strict } => {
                if outer.get("type").and_then(Value::as_str) != Some("function") {
                    fail("envelope: `type` must be \"function\"".into());
                }
                if outer.keys().any(|k| k != "type" && k != "function") {
                    fail("envelope: only `type` and `function` belong at the top".into());
                }
                let Some(Value::Object(f)) = outer.get("function") else {
                    fail("envelope: no `function` object".into());
                    return None;
                };
                let flag = f.get("strict");
                if strict {
                    if flag != Some(&Value::Bool(true)) {
                        fail(format!(
                            "envelope: {} needs `\"strict\": true`",
                            rules.label
                        ));
                    }
                } else if flag.is_some_and(|s| s != &Value::Bool(false)) {
                    fail(format!("envelope: `strict` must not be set for {dialect}"));
                }
                (
                    f,
                    "parameters",
                    &["name", "description", "parameters", "strict"],
                    false,
                )
            }
            Envelope::Bare {
                schema_key,
                omit_empty,
            } => {
                bare_keys = ["name", "description", schema_key];
                (outer, schema_key, &bare_keys, omit_empty)
            }
        };
    for k in f.keys() {
        if !allowed.contains(&k.as_str()) {
            fail(format!("envelope: unexpected key `{k}`"));
        }
    }
    match f.get("name") {
        Some(Value::String(name)) => {
            if let Some(m) = check_name(name, dialect) {
                fail(m);
            }
        }
        _ => fail("envelope: no string `name`".into()),
    }
    if f.get("description").is_some_and(|d| !d.is_string()) {
        fail("envelope: `description` is not a string".into());
    }
    match f.get(schema_key) {
        None if optional => None,
        None => {
            fail(format!("envelope: no `{schema_key}`"));
            None
        }
        Some(p) => Some(p),
    }
}
