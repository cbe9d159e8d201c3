//! Builds a tool's `parameters` object from Rust types with schemars.
//!
//! Every subschema is inlined (no `$ref`, no `definitions`) and the
//! `$schema` / `title` keys schemars adds at the root are dropped, so the
//! result is a self-contained JSON Schema object a provider accepts as is.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::dialect::sanitize_for_strict_backends;
use crate::dialect::walk::{any_schema, for_each_schema_mut};
use hermes_tool_facts::HOME_PLACEHOLDER;

fn generator() -> SchemaGenerator {
    SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator()
}

/// Accumulates one property per typed parameter.
pub struct ParametersBuilder {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl ParametersBuilder {
    pub fn new() -> Self {
        ParametersBuilder {
            generator: generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    pub fn property<T: crate::param::ToolParam>(
        mut self,
        name: &str,
        description: &str,
        required: bool,
    ) -> Self {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        if let Value::Object(map) = &mut schema {
            if !description.is_empty() {
                map.insert("description".into(), Value::String(description.into()));
            }
        } else {
            // `true` / `false` schemas: describe them as an object with no constraint.
            let mut map = Map::new();
            if !description.is_empty() {
                map.insert("description".into(), Value::String(description.into()));
            }
            schema = Value::Object(map);
        }
        self.properties.insert(name.to_string(), schema);
        if required {
            self.required.push(Value::String(name.to_string()));
        }
        self
    }

    /// Writes a parameter's constraints (`#[schemars(range(...))]`, ...)
    /// into the property `name` added last.
    pub fn constrain(mut self, name: &str, c: crate::constraints::SchemaConstraints) -> Self {
        if let Some(Value::Object(map)) = self.properties.get_mut(name) {
            c.apply(map);
        }
        self
    }

    pub fn finish(self) -> Value {
        serde_json::json!({
            "type": "object",
            "properties": self.properties,
            "required": self.required,
        })
    }
}

impl Default for ParametersBuilder {
    fn default() -> Self {
        Self::new()
    }
}

/// The `parameters` object of the `args: T` form: `T`'s own object schema.
pub fn struct_parameters<T: JsonSchema + ?Sized>() -> Value {
    let mut schema = generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        map.remove("definitions");
        map.remove("$defs");
        map.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        map.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    schema
}

/// The MCP `outputSchema` of a tool whose result is a `T`: `T`'s schema as
/// it serializes, inlined, when it is an object with properties (a struct);
/// `None` for anything else (MCP asks for an object).
pub fn output_schema<T: JsonSchema + ?Sized>() -> Option<Value> {
    let mut schema = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    let map = schema.as_object_mut()?;
    for key in ["$schema", "title", "definitions", "$defs"] {
        map.remove(key);
    }
    let is_struct = map.get("type") == Some(&Value::String("object".into()))
        && map.get("properties").is_some_and(Value::is_object);
    is_struct.then_some(schema)
}

/// A short JSON type name for `T` ("integer", "array of string", ...),
/// used in argument errors.
pub fn type_name_of<T: JsonSchema + ?Sized>() -> String {
    let schema = generator().subschema_for::<T>().to_value();
    describe(&schema)
}

fn describe(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) if t == "array" => match schema.get("items") {
            Some(items) => format!("array of {}", describe(items)),
            None => "array".into(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => {
            if let Some(Value::Array(values)) = schema.get("enum") {
                let values: Vec<String> = values.iter().map(Value::to_string).collect();
                format!("one of {}", values.join(", "))
            } else {
                "a value".into()
            }
        }
    }
}

// -- Schemas as definitions (read by entries, run-time tools and definitions) --

/// `{"type": "function", "function": schema}`.
pub(crate) fn wrap(schema: &Value) -> Value {
    wrap_owned(schema.clone())
}

/// [`wrap`], taking the schema: `json!` would copy it by serializing it.
pub(crate) fn wrap_owned(schema: Value) -> Value {
    let mut wrapper = Map::with_capacity(2);
    wrapper.insert("type".into(), Value::String("function".into()));
    wrapper.insert("function".into(), schema);
    Value::Object(wrapper)
}

/// `schema` with its `parameters` sanitized for strict backends.
pub(crate) fn sanitized(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Some(params) = schema.get("parameters") {
        let clean = sanitize_for_strict_backends(params);
        schema["parameters"] = clean;
    }
    schema
}

/// Whether a definition's `description`, or one in its `parameters` at any
/// depth, holds [`HOME_PLACEHOLDER`].
pub(crate) fn mentions_home(schema: &Value) -> bool {
    let holds = |m: &Map<String, Value>| {
        m.get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| d.contains(HOME_PLACEHOLDER))
    };
    let Value::Object(definition) = schema else {
        return false;
    };
    holds(definition)
        || definition
            .get("parameters")
            .is_some_and(|p| any_schema(p, holds))
}

/// Replaces [`HOME_PLACEHOLDER`] by `home` in every description
/// [`mentions_home`] looks at.
pub(crate) fn show_home(schema: &mut Value, home: &str) {
    let show = |m: &mut Map<String, Value>| {
        if let Some(Value::String(d)) = m.get_mut("description") {
            if d.contains(HOME_PLACEHOLDER) {
                *d = d.replace(HOME_PLACEHOLDER, home);
            }
        }
    };
    let Value::Object(definition) = schema else {
        return;
    };
    show(definition);
    if let Some(parameters) = definition.get_mut("parameters") {
        for_each_schema_mut(parameters, show);
    }
}
