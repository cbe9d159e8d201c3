//! The decoding glue `#[hermes_tool]` emits calls: the arguments object of
//! one call taken apart parameter by parameter, and the per-parameter
//! operations, picked by autoref specialization so that a bad parameter
//! type yields one error.

use serde_json::{Map, Value};

use crate::direct::{Optional, Required, Unsupported};
use crate::param::ToolParam;
use crate::schema::ParametersBuilder;

/// Per-parameter operations, picked by autoref specialization: for a
/// `T: ToolParam`, `(&Probe::<T>::NEW).op()` resolves to [`ViaParam`];
/// otherwise to [`ViaFallback`], which compiles (so a bad type yields only
/// the [`assert_param`](crate::param::assert_param) error) and is never run.
pub struct Probe<T: ?Sized>(std::marker::PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> Probe<T> {
    pub const NEW: Self = Probe(std::marker::PhantomData);
}

pub trait ViaParam<T> {
    fn property(
        &self,
        b: ParametersBuilder,
        name: &str,
        desc: &str,
        required: bool,
    ) -> ParametersBuilder;
    fn required(&self, args: &mut Args, name: &str) -> Result<T, String>;
    fn optional(&self, args: &mut Args, name: &str) -> Result<Option<T>, String>;
    fn whole(&self, args: Args) -> Result<T, String>;
    fn struct_parameters(&self) -> Value;
    fn required_slot(&self) -> Required<T>;
    fn optional_slot(&self) -> Optional<T>;
    fn whole_direct(&self, raw: &str) -> Option<T>;
}

impl<T: ToolParam> ViaParam<T> for Probe<T> {
    fn property(
        &self,
        b: ParametersBuilder,
        name: &str,
        desc: &str,
        required: bool,
    ) -> ParametersBuilder {
        b.property::<T>(name, desc, required)
    }
    fn required(&self, args: &mut Args, name: &str) -> Result<T, String> {
        args.required(name)
    }
    fn optional(&self, args: &mut Args, name: &str) -> Result<Option<T>, String> {
        args.optional(name)
    }
    fn whole(&self, args: Args) -> Result<T, String> {
        args.whole()
    }
    fn struct_parameters(&self) -> Value {
        crate::schema::struct_parameters::<T>()
    }
    fn required_slot(&self) -> Required<T> {
        Default::default()
    }
    fn optional_slot(&self) -> Optional<T> {
        Default::default()
    }
    fn whole_direct(&self, raw: &str) -> Option<T> {
        crate::direct::decode_whole(raw)
    }
}

/// The output schema of a result type that has one ([`schemars::JsonSchema`]).
pub trait ViaOutput {
    fn output_schema(&self) -> Option<Value>;
}

impl<T: schemars::JsonSchema> ViaOutput for Probe<T> {
    fn output_schema(&self) -> Option<Value> {
        crate::schema::output_schema::<T>()
    }
}

/// A result type without a schema: no `outputSchema`.
pub trait OutputFallback {
    fn output_schema(&self) -> Option<Value>;
}

impl<T> OutputFallback for &Probe<T> {
    fn output_schema(&self) -> Option<Value> {
        None
    }
}

pub trait ViaFallback<T> {
    fn property(
        &self,
        b: ParametersBuilder,
        name: &str,
        desc: &str,
        required: bool,
    ) -> ParametersBuilder;
    fn required(&self, args: &mut Args, name: &str) -> Result<T, String>;
    fn optional(&self, args: &mut Args, name: &str) -> Result<Option<T>, String>;
    fn whole(&self, args: Args) -> Result<T, String>;
    fn struct_parameters(&self) -> Value;
    fn required_slot(&self) -> Unsupported<T>;
    fn optional_slot(&self) -> Unsupported<Option<T>>;
    fn whole_direct(&self, raw: &str) -> Option<T>;
}

impl<T> ViaFallback<T> for &Probe<T> {
    fn property(&self, b: ParametersBuilder, _: &str, _: &str, _: bool) -> ParametersBuilder {
        b
    }
    fn required(&self, _: &mut Args, name: &str) -> Result<T, String> {
        Err(unsupported(name))
    }
    fn optional(&self, _: &mut Args, name: &str) -> Result<Option<T>, String> {
        Err(unsupported(name))
    }
    fn whole(&self, _: Args) -> Result<T, String> {
        Err(unsupported("args"))
    }
    fn struct_parameters(&self) -> Value {
        Value::Object(Map::new())
    }
    fn required_slot(&self) -> Unsupported<T> {
        Default::default()
    }
    fn optional_slot(&self) -> Unsupported<Option<T>> {
        Default::default()
    }
    fn whole_direct(&self, _: &str) -> Option<T> {
        None
    }
}

fn unsupported(name: &str) -> String {
    crate::error_json(format!(
        "parameter '{name}' has a type that cannot be decoded"
    ))
}

/// The arguments object of one call, taken apart parameter by parameter so
/// an error can name the parameter that failed.
pub struct Args {
    tool: &'static str,
    map: Map<String, Value>,
}

impl Args {
    pub fn new(tool: &'static str, args: Value) -> Self {
        let map = match args {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Args { tool, map }
    }

    pub fn required<T: ToolParam>(&mut self, name: &str) -> Result<T, String> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Err(crate::error_json(format!(
                "Missing required parameter '{name}' for tool '{}' (expected {})",
                self.tool,
                crate::schema::type_name_of::<T>(),
            ))),
            Some(value) => self.decode(name, value),
        }
    }

    pub fn optional<T: ToolParam>(&mut self, name: &str) -> Result<Option<T>, String> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => self.decode(name, value).map(Some),
        }
    }

    fn decode<T: ToolParam>(&self, name: &str, value: Value) -> Result<T, String> {
        let received = json_kind(&value);
        // serde's message quotes the received value ("invalid type: string
        // \"x\", expected u32"); nothing is formatted on success.
        serde_json::from_value(value).map_err(|e| {
            crate::error_json(format!(
                "Invalid value for parameter '{name}' of tool '{}': expected {}, got {received} ({e})",
                self.tool,
                crate::schema::type_name_of::<T>(),
            ))
        })
    }

    /// The `args: T` form: the whole object decodes into `T`.
    pub fn whole<T: ToolParam>(self) -> Result<T, String> {
        serde_json::from_value(Value::Object(self.map)).map_err(|e| {
            crate::error_json(format!("Invalid arguments for tool '{}': {e}", self.tool))
        })
    }
}

/// The JSON type of a value, for argument errors.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
