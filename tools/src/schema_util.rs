//! Schema adjustments for argument structs whose decoding is more lenient
//! than the schema the model should follow (`#[schemars(transform = ...)]`).

use schemars::Schema;
use serde_json::Value;

/// Drops the `default` schemars derives from `#[serde(default)]` fields:
/// leniency is a decoding detail, not something to advertise.
pub(crate) fn drop_defaults(schema: &mut Schema) {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for prop in props.values_mut() {
            if let Value::Object(p) = prop {
                p.remove("default");
            }
        }
    }
}

/// Drops the defaults and marks every property required.
pub(crate) fn require_all_fields(schema: &mut Schema) {
    drop_defaults(schema);
    let names: Vec<Value> = match schema.get("properties") {
        Some(Value::Object(props)) => props.keys().cloned().map(Value::String).collect(),
        _ => return,
    };
    schema.insert("required".into(), Value::Array(names));
}
