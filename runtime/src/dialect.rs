//! Rewrites tool definitions into the schema dialect each provider backend accepts.
//!
//! A tool definition is `{"name", "description", "parameters"}`, where
//! `parameters` is a JSON Schema object as schemars 1.x produces it (draft-07,
//! subschemas inlined). [`rewrite`] turns one definition into the form one
//! backend ([`Dialect`]) accepts, and [`check`] validates such an output
//! against that backend's rules, so `check(&rewrite(t, d)?, d)` is always empty:
//! `rewrite` runs `check` on its own output before returning it.
//!
//! `rewrite` also accepts a definition already wrapped in the OpenAI envelope
//! (`{"type": "function", "function": {...}}`) or in the MCP shape (with
//! `inputSchema` instead of `parameters`). A definition without `parameters`
//! is a tool without arguments.
//!
//! # Principle
//!
//! A keyword is dropped only when dropping it cannot change which argument
//! objects the schema accepts: annotations (`title`, `default`, `examples`,
//! `$comment`, `readOnly`, unknown or vendor keys, ...) and `format` hints.
//! A construct the backend cannot express is rewritten into an equivalent one
//! where that is exact; otherwise `rewrite` returns `Err` with one
//! [`DialectIssue`] per construct (all of them, not just the first), and the
//! caller decides whether to ship the tool to that backend at all. The only
//! changes of meaning are the ones a backend's own rules force, listed below:
//! strict mode closes objects and sends `null` for omitted optionals, and
//! Gemini cannot mark an object closed.
//!
//! Where a `format` that a backend does not know implies numeric bounds (the
//! schemars formats `int8`, `uint8`, `int16`, `uint16`, `int32`, `uint32`, and
//! the unsigned `uint64`, `uint128`, `uint`), the bounds are written as
//! `minimum` / `maximum` (tightening, never loosening, bounds already there)
//! before the format is dropped, so the range survives.
//!
//! # Baseline (every dialect): [`sanitize_for_strict_backends`]
//!
//! * `$ref`s of the form `#/definitions/...` or `#/$defs/...` are inlined
//!   (recursively, at most [`MAX_REF_DEPTH`] nested and [`MAX_INLINED_REFS`] in
//!   all). Keywords next to a `$ref` are merged over the inlined target (for
//!   annotations the sibling wins); where they contradict it they are
//!   intersected when that is exact (`type`, `enum`, `required`,
//!   `properties` that do not clash, tighter bounds), otherwise the result
//!   is `allOf: [target, siblings]`.
//! * Then `$schema`, `definitions` and `$defs` are dropped everywhere. A `$ref`
//!   that cannot be inlined (recursive, pointing elsewhere, dangling, too deep)
//!   is an issue; [`sanitize_for_strict_backends`] then leaves it in place and
//!   keeps the definitions so its output stays a self-contained schema.
//! * A `true` subschema under `properties`, `items`, `anyOf`, `oneOf` or
//!   `allOf` becomes the equivalent `{}`.
//! * Every schema whose `type` is (or includes) `"object"` and that has no
//!   `properties` gets `"properties": {}` (llama.cpp's grammar converter and
//!   several servers reject a bare object).
//! * The root must describe an object: a root without `type` (and without
//!   `anyOf`/`oneOf`/`allOf`/`enum`/`const`) gets `"type": "object"`, since tool
//!   arguments are always an object; any other root type is an issue.
//!
//! # [`Dialect::OpenAi`] (chat completions `tools`, not strict)
//!
//! Keeps everything the baseline keeps. Output:
//! `{"type": "function", "function": {"name", "description", "parameters"}}`.
//! Rejects only what the baseline cannot resolve.
//!
//! # [`Dialect::Mcp`] (an entry of MCP `tools/list`)
//!
//! Same schema as `OpenAi`. Output: `{"name", "description", "inputSchema"}`,
//! where `inputSchema` always has `"type": "object"`.
//!
//! # [`Dialect::OpenAiStrict`] (structured outputs, `"strict": true`)
//!
//! Output: `{"type": "function", "function": {"name", "description",
//! "parameters", "strict": true}}`.
//!
//! * Keeps: `type`, `properties`, `required`, `additionalProperties` (always
//!   `false`), `items` (one schema), `enum`, `anyOf`, `description`, `title`,
//!   `pattern`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf`, `minItems`, `maxItems`, and `format` on strings when it is
//!   one of `date-time`, `time`, `date`, `duration`, `email`, `hostname`,
//!   `ipv4`, `ipv6`, `uuid` (the formats OpenAI documents for strict mode).
//! * Rewrites:
//!   - every object gets `"additionalProperties": false` and lists every
//!     property in `required`; a property that was optional becomes nullable:
//!     `"null"` is added to a primitive `type` (and to its `enum`, if any), a
//!     `{"type": "null"}` branch is added to a bare `anyOf`, and any other
//!     schema (objects, arrays, untyped) is wrapped as
//!     `{"anyOf": [schema, {"type": "null"}]}` with its `description` and
//!     `title` moved to the wrapper. So the model sends `null` for "not
//!     given", and the caller must treat a `null` argument as absent;
//!   - `const: x` becomes `enum: [x]`; an `enum` without `type` gets the
//!     `type` of its values;
//!   - an object schema (with `properties`) without `type` gets
//!     `"type": "object"`;
//!   - a `type` list other than one primitive type plus `"null"` is split into
//!     `anyOf` with one branch per type, each carrying the keywords that apply
//!     to its type (so `["object", "null"]` becomes `anyOf [object, null]`);
//!   - `allOf` is merged into its parent when that is exact: members'
//!     `properties` that do not clash are united, `required` united, `type`s
//!     and `enum`s intersected, the tighter of two bounds kept, annotations
//!     of the parent win; a closed member (`additionalProperties: false`)
//!     that others would add properties to, or any other disagreement, is an
//!     issue;
//!   - `oneOf` becomes `anyOf` when its branches are provably disjoint (types,
//!     `enum` values, or closed objects that differ in their keys), since then
//!     "exactly one" and "at least one" are the same.
//! * Drops: `default`, `examples` and all other annotations or unknown keys;
//!   the schemars integer/number formats (`uint64`, `int32`, `double`, ...)
//!   after writing their bounds.
//! * Rejects: `not`, `if`/`then`/`else`, `patternProperties`,
//!   `propertyNames`, `dependencies`, `dependentRequired`, `dependentSchemas`,
//!   `unevaluatedProperties`, `unevaluatedItems`, `contains`, `minContains`,
//!   `maxContains`, `uniqueItems`, `additionalItems`, `prefixItems` and tuple
//!   `items`, `minLength`, `maxLength`, `minProperties`, `maxProperties`; any
//!   other `format` (such as `uri`); a map-like object (`additionalProperties` is a
//!   schema); a free-form nested object (no properties and not closed, which
//!   strict mode could only express as "the empty object"); a schema without
//!   a type (any value); an array without `items`; a `false` schema;
//!   `allOf` that cannot be merged; `oneOf` whose branches may overlap;
//!   `required` naming a missing property; draft-04 boolean
//!   `exclusiveMinimum`/`exclusiveMaximum`.
//! * Limitation: `required` is rebuilt from the order of the `properties`
//!   map, so with serde_json's default (sorted) maps it is alphabetical.
//! * [`check`] also enforces the documented limits: at most 10 levels of
//!   object nesting, 5000 properties and 1000 enum values in all, no `anyOf`
//!   at the root.
//!
//! # [`Dialect::Gemini`] (a `functionDeclaration`, OpenAPI 3.0 subset)
//!
//! Output: `{"name", "description", "parameters"}`; `parameters` is left out
//! for a tool without properties (Gemini rejects an object schema with empty
//! `properties` and documents leaving `parameters` unset for such functions).
//!
//! * Keeps: `type` (one of `string`, `number`, `integer`, `boolean`, `array`,
//!   `object`), `format` where Gemini accepts it (`enum` and `date-time` on
//!   strings, `int32` and `int64` on integers, `float` and `double` on
//!   numbers), `description`, `nullable`, `enum` (strings), `properties`,
//!   `required`, `items`, `anyOf`, `minimum`, `maximum`, `minItems`,
//!   `maxItems`, `minLength`, `maxLength`, `pattern`, `minProperties`,
//!   `maxProperties`, `propertyOrdering`.
//! * Rewrites:
//!   - `type: [T, "null"]` becomes `type: T` plus `nullable: true`; a list
//!     with several non-null types becomes `anyOf` (one branch per type, as
//!     for strict) plus `nullable: true` if it included `"null"`;
//!   - `{"type": "null"}` branches of `anyOf` become `nullable: true`, and a
//!     single remaining branch is merged into its parent;
//!   - `null` in `enum` becomes `nullable: true`;
//!   - `const` on a string becomes `enum: [x]`; on a number it becomes
//!     `minimum: x, maximum: x`;
//!   - `exclusiveMinimum`/`exclusiveMaximum` on an integer become the
//!     inclusive bound one step inside;
//!   - `enum` without `type`, `allOf` and `oneOf` as for strict;
//!   - an object schema without `type` gets `"type": "object"`.
//! * Drops: `additionalProperties` when it is `true`, `false` or `{}`;
//!   `default`, `title`, `examples`, `example`, other annotations and unknown
//!   keys; every other `format` (after writing the bounds of the schemars
//!   integer formats it implies).
//! * Rejects: the same keyword list as strict except `minLength`,
//!   `maxLength`, `minProperties`, `maxProperties` (which Gemini has), plus
//!   `multipleOf`; map-like objects; nested objects without properties;
//!   arrays without `items`; a schema without a type and without `anyOf`
//!   (Gemini requires one: "must be specified when not using one_of, any_of
//!   or all_of"); non-string `enum` values; `const` of another kind; a lone
//!   `"null"` type; `required` naming a missing property (Gemini: "property
//!   is not defined"); exclusive bounds on non-integers; `false` schemas;
//!   unmergeable `allOf`; overlapping `oneOf`.
//! * Limitation: dropping `additionalProperties: false` lets a validator
//!   accept unknown keys; Gemini has no way to say "closed", and the model is
//!   steered by `properties` anyway.
//!
//! # [`Dialect::LlamaCpp`] (llama.cpp server, `json-schema-to-grammar`)
//!
//! Output in the OpenAI envelope, like [`Dialect::OpenAi`].
//!
//! * Keeps: everything its converter understands: `type` (also lists),
//!   `properties`, `required`, `additionalProperties`, `items` (also tuples),
//!   `prefixItems`, `minItems`, `maxItems`, `enum`, `const`, `anyOf`,
//!   `oneOf`, `pattern`, `minLength`, `maxLength`, `minimum`, `maximum`,
//!   `exclusiveMinimum`, `exclusiveMaximum`, `format` on strings when it is
//!   `date`, `time`, `date-time` or `uuid`, and every annotation.
//! * Rewrites:
//!   - a `type` list next to other validation keywords is split into `anyOf`
//!     (the converter turns a type list into a bare union of types and would
//!     silently drop the `enum`, bounds or properties next to it);
//!   - a schema the converter does not recognize as typed (no `type`, `anyOf`,
//!     `oneOf`, `allOf`, `enum`, `const`, `properties`, `items`, `pattern`;
//!     for example `{}` or `{"description": ...}`, which mean "any value") gets
//!     a `type` list of all JSON types, because the converter reads `{}` as
//!     "any object" and rejects `{"description": ...}`;
//!   - `allOf` is merged into its parent as for strict.
//! * Drops: every other `format` (after writing integer bounds).
//! * Rejects: `not`, `if`/`then`/`else`, `patternProperties`,
//!   `propertyNames`, `dependencies`, `dependentRequired`,
//!   `dependentSchemas`, `unevaluatedProperties`, `unevaluatedItems`,
//!   `contains`, `minContains`, `maxContains`, `uniqueItems`,
//!   `additionalItems`, `multipleOf`, `minProperties`, `maxProperties`,
//!   boolean exclusive bounds, `false` schemas, unmergeable `allOf`.
//!
//! # Tool names
//!
//! [`check`] (and so [`rewrite`]) also checks the tool name: OpenAI forms
//! need `^[A-Za-z0-9_-]{1,64}$`; Gemini needs 1 to 64 of `[A-Za-z0-9_.-]`
//! starting with a letter or `_`; MCP 1 to 128 of `[A-Za-z0-9_.-]`. Renaming
//! would break dispatch, so a bad name is an issue, never rewritten.
//!
//! # Issue paths
//!
//! [`DialectIssue::path`] is a JSON pointer (RFC 6901) into `parameters` as the
//! rewrite saw it (after `$ref` inlining); an issue about the envelope (name,
//! shape) has the empty path and says so in its message.

use std::fmt;

use serde_json::{Map, Number, Value};

/// The deepest chain of `$ref`s inlined inside one another.
pub const MAX_REF_DEPTH: usize = 16;

/// The most `$ref`s inlined in one schema (guards against exponential growth).
pub const MAX_INLINED_REFS: usize = 512;

/// The deepest schema nesting any pass walks into.
const MAX_SCHEMA_DEPTH: usize = 64;

/// A provider backend whose tool-definition format [`rewrite`] targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI chat completions `tools`, without strict mode.
    OpenAi,
    /// OpenAI structured outputs (`"strict": true`).
    OpenAiStrict,
    /// Google Gemini `functionDeclarations`.
    Gemini,
    /// llama.cpp server (OpenAI envelope, schema limited to its grammar converter).
    LlamaCpp,
    /// Model Context Protocol `tools/list` entries.
    Mcp,
}

impl Dialect {
    /// Every dialect, in declaration order.
    pub const ALL: [Dialect; 5] = [
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::Gemini,
        Dialect::LlamaCpp,
        Dialect::Mcp,
    ];

    /// Parses a dialect name: ASCII case is ignored, as are `-`, `_`, `.` and
    /// spaces, so `openai-strict`, `OpenAI_Strict`, `llama.cpp` and `llamacpp`
    /// all work; `strict` and `llama` are accepted as short forms.
    pub fn parse(s: &str) -> Option<Dialect> {
        let key: String = s
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match key.as_str() {
            "openai" => Some(Dialect::OpenAi),
            "openaistrict" | "strict" => Some(Dialect::OpenAiStrict),
            "gemini" => Some(Dialect::Gemini),
            "llamacpp" | "llama" => Some(Dialect::LlamaCpp),
            "mcp" => Some(Dialect::Mcp),
            _ => None,
        }
    }

    /// The canonical name, which [`Dialect::parse`] reads back.
    pub fn name(&self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Gemini => "gemini",
            Dialect::LlamaCpp => "llama-cpp",
            Dialect::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One construct that a dialect cannot carry without changing its meaning,
/// or one rule that a dialect-form tool breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialectIssue {
    /// The dialect whose rules the issue is about.
    pub dialect: Dialect,
    /// A JSON pointer into `parameters`; empty for the root or the envelope.
    pub path: String,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl fmt::Display for DialectIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{}: {}: {}", self.dialect, path, self.message)
    }
}

impl std::error::Error for DialectIssue {}

// ---------------------------------------------------------------------------
// Keyword tables

/// Validation keywords no constrained dialect (strict, Gemini, llama.cpp) can express.
const UNEXPRESSIBLE: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "additionalItems",
    "$dynamicRef",
    "$recursiveRef",
];
const STRICT_UNEXPRESSIBLE: &[&str] = &[
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "prefixItems",
];
const GEMINI_UNEXPRESSIBLE: &[&str] = &["multipleOf", "prefixItems"];
const LLAMA_UNEXPRESSIBLE: &[&str] = &["multipleOf", "minProperties", "maxProperties"];

/// Keys a strict-mode schema may carry.
const STRICT_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
/// Keys a Gemini schema may carry.
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "anyOf",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
const LLAMA_FORMATS: &[&str] = &["date", "time", "date-time", "uuid"];
const JSON_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];
/// The type list that means "any JSON value" (`integer` is part of `number`).
const ANY_TYPES: &[&str] = &["string", "number", "boolean", "object", "array", "null"];

/// Keywords that constrain only one kind of value, used to split a type list.
const STRING_KEYS: &[&str] = &["minLength", "maxLength", "pattern"];
const NUMBER_KEYS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
const ARRAY_KEYS: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
];
const OBJECT_KEYS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependencies",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
];
/// Keywords whose members in an `allOf` may differ (the outer one wins).
const ANNOTATIONS: &[&str] = &["title", "description", "default", "examples", "$comment"];

/// Keywords holding one subschema.
const SINGLE_SCHEMA: &[&str] = &[
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
const MAP_OF_SCHEMAS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "definitions",
    "$defs",
];
/// Keywords holding a list of subschemas.
const LIST_OF_SCHEMAS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

// ---------------------------------------------------------------------------
// Small helpers

/// An issue before it is tagged with its dialect: (path, message).
type Found = (String, String);

fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn child_path(path: &str, tokens: &[&str]) -> String {
    let mut out = path.to_string();
    for t in tokens {
        out.push('/');
        out.push_str(&escape_pointer(t));
    }
    out
}

/// The subschemas directly under a schema object, with their pointer suffixes.
/// `true`/`false` count as schemas in map and list positions; in single-schema
/// positions (`additionalProperties: false`, ...) only objects are returned.
fn children_mut(m: &mut Map<String, Value>, skip_defs: bool) -> Vec<(String, &mut Value)> {
    let mut out = Vec::new();
    for (key, value) in m.iter_mut() {
        let k = key.as_str();
        if skip_defs && (k == "definitions" || k == "$defs") {
            continue;
        }
        let prefix = format!("/{}", escape_pointer(k));
        if SINGLE_SCHEMA.contains(&k) && value.is_object() {
            out.push((prefix, value));
            continue;
        }
        match value {
            Value::Object(map) if MAP_OF_SCHEMAS.contains(&k) => {
                for (name, sub) in map.iter_mut() {
                    if sub.is_object() || sub.is_boolean() {
                        out.push((format!("{prefix}/{}", escape_pointer(name)), sub));
                    }
                }
            }
            Value::Array(list) if LIST_OF_SCHEMAS.contains(&k) => {
                for (i, sub) in list.iter_mut().enumerate() {
                    out.push((format!("{prefix}/{i}"), sub));
                }
            }
            _ => {}
        }
    }
    out
}

/// The names in a schema's `type` (a string or a list); empty when absent.
fn type_names(m: &Map<String, Value>) -> Vec<String> {
    match m.get("type") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

fn has_type(m: &Map<String, Value>, name: &str) -> bool {
    type_names(m).iter().any(|t| t == name)
}

/// The JSON type name of a value (`integer` for whole numbers).
fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a value is an instance of a JSON Schema type name.
fn value_is(v: &Value, type_name: &str) -> bool {
    let kind = value_kind(v);
    kind == type_name || (type_name == "number" && kind == "integer")
}

fn types_overlap(a: &str, b: &str) -> bool {
    a == b || matches!((a, b), ("integer", "number") | ("number", "integer"))
}

/// A `null` schema: `{"type": "null"}` (or `["null"]`) with only annotations beside.
fn is_null_schema(v: &Value) -> bool {
    let Value::Object(m) = v else { return false };
    let types = type_names(m);
    types.len() == 1
        && types[0] == "null"
        && m.keys()
            .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
}

fn is_object_schema(m: &Map<String, Value>) -> bool {
    has_type(m, "object")
}

fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        // Whole and exactly representable: keep it an integer in the JSON.
        Value::Number(Number::from(v as i64))
    } else {
        Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// The bounds (minimum, maximum) a schemars/OpenAPI numeric `format` implies,
/// or `None` when the format is not a numeric one.
fn numeric_format_bounds(format: &str) -> Option<(Option<i64>, Option<u64>)> {
    Some(match format {
        "int8" => (Some(i64::from(i8::MIN)), Some(i8::MAX as u64)),
        "uint8" => (Some(0), Some(u64::from(u8::MAX))),
        "int16" => (Some(i64::from(i16::MIN)), Some(i16::MAX as u64)),
        "uint16" => (Some(0), Some(u64::from(u16::MAX))),
        "int32" => (Some(i64::from(i32::MIN)), Some(i32::MAX as u64)),
        "uint32" => (Some(0), Some(u64::from(u32::MAX))),
        "uint64" | "uint128" | "uint" | "usize" => (Some(0), None),
        "int64" | "int128" | "int" | "isize" | "float" | "double" => (None, None),
        _ => return None,
    })
}

/// Writes the bounds a numeric format implies, keeping tighter ones already there.
fn materialize_bounds(m: &mut Map<String, Value>, min: Option<i64>, max: Option<u64>) {
    if let Some(min) = min {
        let tighter = m
            .get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|cur| cur >= min as f64);
        if !tighter {
            m.insert("minimum".into(), Value::Number(Number::from(min)));
        }
    }
    if let Some(max) = max {
        let tighter = m
            .get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|cur| cur <= max as f64);
        if !tighter {
            m.insert("maximum".into(), Value::Number(Number::from(max)));
        }
    }
}

// ---------------------------------------------------------------------------
// Envelope

struct ToolParts {
    name: Value,
    description: Option<Value>,
    parameters: Option<Value>,
}

fn parse_tool(tool: &Value) -> Result<ToolParts, String> {
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
        .filter(|v| !v.is_null())
        .cloned();
    Ok(ToolParts {
        name,
        description,
        parameters,
    })
}

fn empty_object_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), "object".into());
    m.insert("properties".into(), Value::Object(Map::new()));
    Value::Object(m)
}

fn envelope(dialect: Dialect, parts: ToolParts, parameters: Value) -> Value {
    let mut f = Map::new();
    f.insert("name".into(), parts.name);
    if let Some(d) = parts.description {
        f.insert("description".into(), d);
    }
    match dialect {
        Dialect::Mcp => {
            f.insert("inputSchema".into(), parameters);
            Value::Object(f)
        }
        Dialect::Gemini => {
            let empty = parameters
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty);
            if !empty {
                f.insert("parameters".into(), parameters);
            }
            Value::Object(f)
        }
        Dialect::OpenAi | Dialect::OpenAiStrict | Dialect::LlamaCpp => {
            f.insert("parameters".into(), parameters);
            if dialect == Dialect::OpenAiStrict {
                f.insert("strict".into(), Value::Bool(true));
            }
            let mut outer = Map::new();
            outer.insert("type".into(), "function".into());
            outer.insert("function".into(), Value::Object(f));
            Value::Object(outer)
        }
    }
}

// ---------------------------------------------------------------------------
// Baseline

/// The baseline every dialect starts from: `$ref`s into `#/definitions` or
/// `#/$defs` inlined, `$schema` / `definitions` / `$defs` dropped, `true`
/// subschemas written as `{}`, and `"properties": {}` added to every object
/// schema without `properties`. See the module docs.
///
/// A `$ref` that cannot be inlined (recursive, external, dangling, too deep)
/// is left in place, and then `definitions` / `$defs` are kept so the result
/// still resolves; [`rewrite`] reports such refs as issues.
pub fn sanitize_for_strict_backends(parameters: &Value) -> Value {
    let mut found = Vec::new();
    baseline(parameters, &mut found)
}

fn baseline(parameters: &Value, found: &mut Vec<Found>) -> Value {
    let mut out = parameters.clone();
    let mut inliner = Inliner {
        root: parameters,
        budget: MAX_INLINED_REFS,
        unresolved: false,
        found,
    };
    inliner.walk(&mut out, "", &mut Vec::new(), 0);
    let keep_defs = inliner.unresolved;
    normalize(&mut out, keep_defs, 0);
    out
}

struct Inliner<'a> {
    root: &'a Value,
    budget: usize,
    unresolved: bool,
    found: &'a mut Vec<Found>,
}

impl Inliner<'_> {
    fn fail(&mut self, path: &str, message: String) {
        self.unresolved = true;
        self.found.push((path.to_string(), message));
    }

    fn walk(&mut self, node: &mut Value, path: &str, stack: &mut Vec<String>, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            self.fail(
                path,
                format!("schema nested deeper than {MAX_SCHEMA_DEPTH} levels"),
            );
            return;
        }
        let Value::Object(m) = node else { return };
        let Some(Value::String(reference)) = m.get("$ref").cloned() else {
            for (suffix, child) in children_mut(m, true) {
                self.walk(child, &format!("{path}{suffix}"), stack, depth + 1);
            }
            return;
        };
        let Some(target) = self.target(&reference, path, stack) else {
            // Still inline what the siblings hold.
            for (suffix, child) in children_mut(m, true) {
                self.walk(child, &format!("{path}{suffix}"), stack, depth + 1);
            }
            return;
        };
        m.remove("$ref");
        let mut siblings = Value::Object(std::mem::take(m));
        self.walk(&mut siblings, path, stack, depth + 1);
        stack.push(reference);
        let mut resolved = target;
        self.walk(&mut resolved, path, stack, depth + 1);
        stack.pop();
        *node = merge_ref(resolved, siblings);
    }

    /// The schema a `$ref` points at, or `None` (with an issue) when it cannot be inlined.
    fn target(&mut self, reference: &str, path: &str, stack: &[String]) -> Option<Value> {
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
        if stack.iter().any(|r| r == reference) {
            self.fail(
                path,
                format!("`$ref` `{reference}` is recursive and cannot be inlined"),
            );
            return None;
        }
        if stack.len() >= MAX_REF_DEPTH {
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
fn percent_decode(s: &str) -> String {
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
fn merge_ref(resolved: Value, siblings: Value) -> Value {
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

fn normalize(node: &mut Value, keep_defs: bool, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    let Value::Object(m) = node else { return };
    m.remove("$schema");
    if !keep_defs {
        m.remove("definitions");
        m.remove("$defs");
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
    for (_, child) in children_mut(m, false) {
        normalize(child, keep_defs, depth + 1);
    }
}

/// Makes sure the root describes an object (tool arguments always are one).
fn root_object(schema: &mut Value, found: &mut Vec<Found>) {
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

// ---------------------------------------------------------------------------
// Rewrite

/// Rewrites one tool definition for `dialect`; see the module docs for what
/// each dialect keeps, rewrites, drops and rejects.
///
/// # Errors
///
/// Every construct the dialect cannot carry without changing what the tool
/// accepts, as one [`DialectIssue`] each; also every rule of [`check`] the
/// result would break (such as a tool name the backend refuses).
pub fn rewrite(tool: &Value, dialect: Dialect) -> Result<Value, Vec<DialectIssue>> {
    let tag = |found: Vec<Found>| -> Vec<DialectIssue> {
        found
            .into_iter()
            .map(|(path, message)| DialectIssue {
                dialect,
                path,
                message,
            })
            .collect()
    };
    let parts = parse_tool(tool).map_err(|m| tag(vec![(String::new(), m)]))?;
    let mut found = Vec::new();
    let parameters = parts.parameters.clone().unwrap_or_else(empty_object_schema);
    let mut schema = baseline(&parameters, &mut found);
    root_object(&mut schema, &mut found);
    if found.is_empty() && !matches!(dialect, Dialect::OpenAi | Dialect::Mcp) {
        let mut cx = Cx {
            dialect,
            found: &mut found,
        };
        cx.transform(&mut schema, "", 0);
    }
    if !found.is_empty() {
        return Err(tag(found));
    }
    let out = envelope(dialect, parts, schema);
    let problems = check(&out, dialect);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

struct Cx<'a> {
    dialect: Dialect,
    found: &'a mut Vec<Found>,
}

impl Cx<'_> {
    fn issue(&mut self, path: &str, message: String) {
        self.found.push((path.to_string(), message));
    }

    fn strict(&self) -> bool {
        self.dialect == Dialect::OpenAiStrict
    }

    fn gemini(&self) -> bool {
        self.dialect == Dialect::Gemini
    }

    fn llama(&self) -> bool {
        self.dialect == Dialect::LlamaCpp
    }

    fn transform(&mut self, node: &mut Value, path: &str, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            self.issue(
                path,
                format!("schema nested deeper than {MAX_SCHEMA_DEPTH} levels"),
            );
            return;
        }
        match node {
            Value::Object(_) => {}
            Value::Bool(true) => *node = Value::Object(Map::new()),
            Value::Bool(false) => {
                self.issue(
                    path,
                    "a `false` schema (nothing is valid) cannot be expressed".into(),
                );
                return;
            }
            _ => {
                self.issue(path, "a schema must be a JSON object".into());
                return;
            }
        }
        let Value::Object(m) = node else { return };
        self.pre(m, path, depth == 0);
        for (suffix, child) in children_mut(m, false) {
            self.transform(child, &format!("{path}{suffix}"), depth + 1);
        }
        if self.strict() {
            self.strict_object(m, path);
        }
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
                self.issue(&child_path(path, &["allOf"]), msg);
            }
        }
        if (self.strict() || self.gemini()) && m.contains_key("oneOf") {
            if let Err(msg) = one_of_to_any_of(m, self.strict()) {
                self.issue(&child_path(path, &["oneOf"]), msg);
                m.remove("oneOf");
            }
        }
        if self.gemini() {
            hoist_null_branches(m);
        }
        self.constant(m, path);
        if (self.strict() || self.gemini()) && !m.contains_key("type") {
            infer_type(m);
        }
        self.format(m, path);
        self.exclusive_bounds(m, path);
        self.type_list(m, path);
        if self.gemini() {
            self.gemini_enum(m, path);
        }
        // Follow-up complaints about a node already reported would be noise.
        let quiet = self.found.len() > before;
        self.any_value(m, path, quiet);
        if (self.strict() || self.gemini())
            && !m.contains_key("type")
            && m.contains_key("properties")
        {
            m.insert("type".into(), "object".into());
        }
        if self.strict() || self.gemini() {
            self.closed_forms(m, path, root, quiet);
        }
        self.drop_unsupported(m);
    }

    fn reject_keywords(&mut self, m: &mut Map<String, Value>, path: &str) {
        let extra: &[&str] = match self.dialect {
            Dialect::OpenAiStrict => STRICT_UNEXPRESSIBLE,
            Dialect::Gemini => GEMINI_UNEXPRESSIBLE,
            Dialect::LlamaCpp => LLAMA_UNEXPRESSIBLE,
            Dialect::OpenAi | Dialect::Mcp => &[],
        };
        for k in UNEXPRESSIBLE.iter().chain(extra) {
            if m.remove(*k).is_some() {
                self.issue(
                    &child_path(path, &[k]),
                    format!(
                        "`{k}` cannot be expressed for {}; dropping it would change what is accepted",
                        self.dialect
                    ),
                );
            }
        }
        if !self.llama() && m.get("items").is_some_and(Value::is_array) {
            m.remove("items");
            self.issue(
                &child_path(path, &["items"]),
                format!("tuple `items` cannot be expressed for {}", self.dialect),
            );
        }
    }

    fn constant(&mut self, m: &mut Map<String, Value>, path: &str) {
        if self.llama() {
            return;
        }
        let Some(c) = m.remove("const") else { return };
        if let Some(Value::Array(values)) = m.get("enum") {
            if !values.contains(&c) {
                self.issue(
                    &child_path(path, &["const"]),
                    "`const` is not among the `enum` values, so nothing is valid".into(),
                );
                return;
            }
        }
        if self.gemini() {
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
                        &child_path(path, &["const"]),
                        format!(
                            "a `const` of kind {} cannot be expressed for gemini",
                            value_kind(&c)
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
        let keep = match self.dialect {
            Dialect::OpenAiStrict => stringy && STRICT_FORMATS.contains(&f),
            Dialect::Gemini => {
                (is("string") && matches!(f, "enum" | "date-time"))
                    || (is("integer") && matches!(f, "int32" | "int64"))
                    || (is("number") && matches!(f, "float" | "double"))
            }
            Dialect::LlamaCpp => stringy && LLAMA_FORMATS.contains(&f),
            Dialect::OpenAi | Dialect::Mcp => true,
        };
        if keep {
            return;
        }
        m.remove("format");
        match numeric_format_bounds(f) {
            Some((min, max)) if numeric => materialize_bounds(m, min, max),
            _ if self.strict() => self.issue(
                &child_path(path, &["format"]),
                format!("`format: {f}` is not supported in strict mode and would be lost"),
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
                Some(Value::Number(n)) if self.gemini() => {
                    m.remove(exclusive);
                    let only_integer = type_names(m).iter().all(|t| t == "integer" || t == "null")
                        && has_type(m, "integer");
                    let v = n.as_f64().unwrap_or_default();
                    if !only_integer {
                        self.issue(
                            &child_path(path, &[exclusive]),
                            format!(
                                "`{exclusive}` on a non-integer cannot be expressed for gemini"
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
                        &child_path(path, &[exclusive]),
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
            if self.gemini() && m.get("type").and_then(Value::as_str) == Some("null") {
                self.issue(
                    &child_path(path, &["type"]),
                    "a schema of type `null` alone cannot be expressed for gemini".into(),
                );
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
        match self.dialect {
            Dialect::Gemini => {
                if non_null.is_empty() {
                    self.issue(
                        &child_path(path, &["type"]),
                        "a schema of type `null` alone cannot be expressed for gemini".into(),
                    );
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
            Dialect::OpenAiStrict => {
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
            Dialect::LlamaCpp => {
                let mut all = non_null;
                if nullable {
                    all.push("null".into());
                }
                if all.len() == 1 {
                    m.insert("type".into(), all[0].clone().into());
                    return;
                }
                let constrained = m.keys().any(|k| {
                    STRING_KEYS.contains(&k.as_str())
                        || NUMBER_KEYS.contains(&k.as_str())
                        || ARRAY_KEYS.contains(&k.as_str())
                        || OBJECT_KEYS.contains(&k.as_str())
                        || matches!(k.as_str(), "enum" | "const" | "format")
                });
                if constrained {
                    split_types(m, &all, true);
                }
            }
            Dialect::OpenAi | Dialect::Mcp => {}
        }
    }

    fn gemini_enum(&mut self, m: &mut Map<String, Value>, path: &str) {
        if m.get("enum")
            .is_some_and(|e| e.as_array().is_some_and(|a| a.contains(&Value::Null)))
        {
            m.insert("nullable".into(), Value::Bool(true));
            drop_null_from_enum(m);
        }
        if let Some(values) = m.get("enum").and_then(Value::as_array) {
            if values.is_empty() {
                self.issue(
                    &child_path(path, &["enum"]),
                    "an empty `enum` (or one holding only null) cannot be expressed for gemini"
                        .into(),
                );
            } else if !values.iter().all(Value::is_string) {
                self.issue(
                    &child_path(path, &["enum"]),
                    "gemini enums hold strings only".into(),
                );
            }
        }
    }

    /// A schema without any typing keyword means "any value".
    fn any_value(&mut self, m: &mut Map<String, Value>, path: &str, quiet: bool) {
        let typed = [
            "type",
            "anyOf",
            "oneOf",
            "allOf",
            "enum",
            "const",
            "properties",
            "additionalProperties",
            "items",
            "prefixItems",
            "pattern",
        ]
        .iter()
        .any(|k| m.contains_key(*k));
        if typed {
            return;
        }
        if self.strict() || self.gemini() {
            if !quiet {
                self.issue(
                    path,
                    format!(
                        "a schema without a type (any value) cannot be expressed for {}",
                        self.dialect
                    ),
                );
            }
        } else if self.llama() {
            let all: Vec<String> = ANY_TYPES.iter().map(|t| t.to_string()).collect();
            let constrained = m.keys().any(|k| {
                STRING_KEYS.contains(&k.as_str())
                    || NUMBER_KEYS.contains(&k.as_str())
                    || ARRAY_KEYS.contains(&k.as_str())
                    || OBJECT_KEYS.contains(&k.as_str())
            });
            if constrained {
                split_types(m, &all, true);
            } else {
                m.insert(
                    "type".into(),
                    Value::Array(all.into_iter().map(Value::String).collect()),
                );
            }
        }
    }

    /// Object and array rules shared by strict and Gemini.
    fn closed_forms(&mut self, m: &mut Map<String, Value>, path: &str, root: bool, quiet: bool) {
        let mut map_like = false;
        match m.get("additionalProperties") {
            Some(Value::Object(s)) if !s.is_empty() => {
                map_like = true;
                m.remove("additionalProperties");
                self.issue(
                    &child_path(path, &["additionalProperties"]),
                    format!("a map-like object (`additionalProperties` is a schema) cannot be expressed for {}", self.dialect),
                );
            }
            Some(Value::Object(_)) | Some(Value::Bool(true)) => {
                m.remove("additionalProperties");
            }
            _ => {}
        }
        if self.gemini() {
            m.remove("additionalProperties");
        }
        if self.gemini() {
            let props = property_names(m);
            let required = m
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for name in required.iter().filter_map(Value::as_str) {
                if !props.iter().any(|p| p == name) {
                    self.issue(
                        &child_path(path, &["required"]),
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
            if empty && self.gemini() {
                self.issue(
                    path,
                    "a nested object without properties cannot be expressed for gemini".into(),
                );
            } else if empty && !closed {
                self.issue(
                    path,
                    "a free-form nested object (no properties) cannot be expressed in strict mode, which would only accept `{}`".into(),
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
        let keep: &[&str] = match self.dialect {
            Dialect::OpenAiStrict => STRICT_KEYS,
            Dialect::Gemini => GEMINI_KEYS,
            _ => return,
        };
        m.retain(|k, _| keep.contains(&k.as_str()));
    }

    /// Strict mode, after the children: close the object and require every property.
    fn strict_object(&mut self, m: &mut Map<String, Value>, path: &str) {
        if !is_object_schema(m) {
            return;
        }
        m.insert("additionalProperties".into(), Value::Bool(false));
        let required: Vec<String> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let Some(Value::Object(props)) = m.get_mut("properties") else {
            return;
        };
        for name in &required {
            if !props.contains_key(name) {
                self.issue(
                    &child_path(path, &["required"]),
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

fn drop_null_from_enum(m: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = m.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// `{"type": "null"}` branches of `anyOf` become `nullable: true` (Gemini); a
/// single remaining branch is merged into the parent when nothing conflicts.
fn hoist_null_branches(m: &mut Map<String, Value>) {
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
fn infer_type(m: &mut Map<String, Value>) {
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
fn split_types(m: &mut Map<String, Value>, types: &[String], null_branch: bool) {
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
        !(k == "type"
            || k == "enum"
            || k == "const"
            || k == "format"
            || STRING_KEYS.contains(&k)
            || NUMBER_KEYS.contains(&k)
            || ARRAY_KEYS.contains(&k)
            || OBJECT_KEYS.contains(&k))
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
fn make_nullable(schema: &mut Value) {
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

/// Merges `allOf` members into their parent when they do not contradict each other.
fn merge_all_of(m: &mut Map<String, Value>, parts: Value) -> Result<(), String> {
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
const LOWER_BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
/// Bounds where the smaller value is the tighter one.
const UPPER_BOUNDS: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// The types both lists allow (`integer` is part of `number`).
fn intersect_types(a: &[String], b: &[String]) -> Vec<String> {
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

fn property_names(m: &Map<String, Value>) -> Vec<String> {
    m.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Turns `oneOf` into `anyOf` when its branches are pairwise disjoint.
fn one_of_to_any_of(m: &mut Map<String, Value>, closes_objects: bool) -> Result<(), String> {
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

/// The values a schema allows when it lists them (`const` / `enum`).
fn listed_values(m: &Map<String, Value>) -> Option<Vec<Value>> {
    match (m.get("const"), m.get("enum")) {
        (Some(c), _) => Some(vec![c.clone()]),
        (None, Some(Value::Array(e))) => Some(e.clone()),
        _ => None,
    }
}

/// Whether no value can match both schemas (conservative: `false` when unsure).
fn disjoint(a: &Value, b: &Value, closes_objects: bool) -> bool {
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
fn requires_forbidden(a: &Map<String, Value>, b: &Map<String, Value>, closes: bool) -> bool {
    let b_closed = match b.get("additionalProperties") {
        Some(Value::Bool(false)) => true,
        None | Some(Value::Bool(true)) => closes,
        Some(Value::Object(s)) => closes && s.is_empty(),
        _ => false,
    };
    if !b_closed {
        return false;
    }
    let required: Vec<String> = if closes {
        property_names(a)
    } else {
        a.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let b_props = property_names(b);
    required.iter().any(|k| !b_props.contains(k))
}

/// Both require a property whose listed values differ (an internal tag).
fn tagged_apart(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let required = |m: &Map<String, Value>| -> Vec<String> {
        m.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ra, rb) = (required(a), required(b));
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

// ---------------------------------------------------------------------------
// Check

/// Validates a tool already in `dialect` form (the output of [`rewrite`])
/// against that dialect's rules; empty when it conforms.
pub fn check(tool_in_dialect_form: &Value, dialect: Dialect) -> Vec<DialectIssue> {
    let mut found: Vec<Found> = Vec::new();
    let params = check_envelope(tool_in_dialect_form, dialect, &mut found);
    if let Some(params) = params {
        match params {
            Value::Object(root) if root.get("type").and_then(Value::as_str) == Some("object") => {
                if dialect == Dialect::OpenAiStrict && root.contains_key("anyOf") {
                    found.push((
                        String::new(),
                        "strict mode allows no `anyOf` at the root".into(),
                    ));
                }
                if dialect == Dialect::Gemini
                    && root
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_none_or(Map::is_empty)
                {
                    found.push((
                        String::new(),
                        "gemini `parameters` without properties must be left out".into(),
                    ));
                }
            }
            _ => found.push((
                String::new(),
                "the parameters schema must have `\"type\": \"object\"`".into(),
            )),
        }
        let mut stats = Stats::default();
        check_node(params, "", dialect, 0, 0, &mut found, &mut stats);
        if dialect == Dialect::OpenAiStrict {
            if stats.properties > 5000 {
                found.push((
                    String::new(),
                    format!(
                        "{} properties in all; strict mode allows 5000",
                        stats.properties
                    ),
                ));
            }
            if stats.enum_values > 1000 {
                found.push((
                    String::new(),
                    format!(
                        "{} enum values in all; strict mode allows 1000",
                        stats.enum_values
                    ),
                ));
            }
        }
    }
    found
        .into_iter()
        .map(|(path, message)| DialectIssue {
            dialect,
            path,
            message,
        })
        .collect()
}

#[derive(Default)]
struct Stats {
    properties: usize,
    enum_values: usize,
}

fn check_name(name: &str, dialect: Dialect) -> Option<String> {
    let chars_ok = |extra: &[char]| {
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(&c))
    };
    let len = name.chars().count();
    let ok = match dialect {
        Dialect::OpenAi | Dialect::OpenAiStrict | Dialect::LlamaCpp => {
            (1..=64).contains(&len) && chars_ok(&[])
        }
        Dialect::Gemini => {
            (1..=64).contains(&len)
                && chars_ok(&['.'])
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        }
        Dialect::Mcp => (1..=128).contains(&len) && chars_ok(&['.']),
    };
    (!ok).then(|| format!("envelope: tool name `{name}` is not valid for {dialect}"))
}

/// Checks the envelope and returns the parameters schema to check, if any.
fn check_envelope<'a>(
    tool: &'a Value,
    dialect: Dialect,
    found: &mut Vec<Found>,
) -> Option<&'a Value> {
    let mut fail = |m: String| found.push((String::new(), m));
    let Value::Object(outer) = tool else {
        fail("envelope: not a JSON object".into());
        return None;
    };
    let (f, schema_key, allowed): (&Map<String, Value>, &str, &[&str]) = match dialect {
        Dialect::OpenAi | Dialect::OpenAiStrict | Dialect::LlamaCpp => {
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
            let strict = f.get("strict");
            if dialect == Dialect::OpenAiStrict {
                if strict != Some(&Value::Bool(true)) {
                    fail("envelope: strict mode needs `\"strict\": true`".into());
                }
            } else if strict.is_some_and(|s| s != &Value::Bool(false)) {
                fail(format!("envelope: `strict` must not be set for {dialect}"));
            }
            (
                f,
                "parameters",
                &["name", "description", "parameters", "strict"],
            )
        }
        Dialect::Gemini => (outer, "parameters", &["name", "description", "parameters"]),
        Dialect::Mcp => (
            outer,
            "inputSchema",
            &["name", "description", "inputSchema"],
        ),
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
        None if dialect == Dialect::Gemini => None,
        None => {
            fail(format!("envelope: no `{schema_key}`"));
            None
        }
        Some(p) => Some(p),
    }
}

fn check_node(
    node: &Value,
    path: &str,
    dialect: Dialect,
    depth: usize,
    object_depth: usize,
    found: &mut Vec<Found>,
    stats: &mut Stats,
) {
    let mut fail = |m: String| found.push((path.to_string(), m));
    if depth > MAX_SCHEMA_DEPTH {
        fail(format!(
            "schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
        return;
    }
    let m = match node {
        Value::Object(m) => m,
        Value::Bool(_) if matches!(dialect, Dialect::OpenAi | Dialect::Mcp) => return,
        other => {
            fail(format!("schema {other} is not allowed for {dialect}"));
            return;
        }
    };
    for k in ["$ref", "$schema", "definitions", "$defs"] {
        if m.contains_key(k) {
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
    let is_object = single_type == Some("object")
        || (dialect == Dialect::OpenAiStrict && types.iter().any(|t| t == "object"));
    let object_depth = object_depth + usize::from(is_object);
    if is_object && !m.get("properties").is_some_and(Value::is_object) {
        fail("an object schema without `properties`".into());
    }
    if let Some(Value::Object(p)) = m.get("properties") {
        stats.properties += p.len();
    }
    if let Some(Value::Array(e)) = m.get("enum") {
        stats.enum_values += e.len();
    }
    let format = m.get("format").and_then(Value::as_str);
    match dialect {
        Dialect::OpenAi | Dialect::Mcp => {}
        Dialect::OpenAiStrict => {
            for k in m.keys() {
                if !STRICT_KEYS.contains(&k.as_str()) {
                    fail(format!("`{k}` is not supported in strict mode"));
                }
            }
            if !m.contains_key("type") && !m.contains_key("anyOf") {
                fail("strict mode needs a `type` (or `anyOf`) on every schema".into());
            }
            if is_object {
                if m.get("additionalProperties") != Some(&Value::Bool(false)) {
                    fail("strict mode needs `\"additionalProperties\": false`".into());
                }
                let mut props = property_names(m);
                let mut required: Vec<String> = m
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                props.sort();
                required.sort();
                if props != required {
                    fail("strict mode needs every property listed in `required`".into());
                }
            }
            if object_depth > 10 {
                fail("strict mode allows at most 10 levels of object nesting".into());
            }
            if let Some(f) = format {
                if !STRICT_FORMATS.contains(&f) || !types.iter().any(|t| t == "string") {
                    fail(format!("`format: {f}` is not supported in strict mode"));
                }
            }
            if types.iter().any(|t| t == "array") && !m.get("items").is_some_and(Value::is_object) {
                fail("strict mode needs `items` (one schema) on arrays".into());
            }
        }
        Dialect::Gemini => {
            for k in m.keys() {
                if !GEMINI_KEYS.contains(&k.as_str()) {
                    fail(format!("`{k}` is not supported by gemini"));
                }
            }
            match m.get("type") {
                None if m.contains_key("anyOf") => {}
                None => fail("gemini needs a `type` on every schema without `anyOf`".into()),
                Some(Value::String(t)) if t != "null" => {}
                Some(t) => fail(format!("gemini needs one non-null `type`, not {t}")),
            }
            if let Some(e) = m.get("enum") {
                if !e
                    .as_array()
                    .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string))
                {
                    fail("gemini `enum` must be a non-empty list of strings".into());
                }
            }
            if let Some(f) = format {
                let ok = match single_type {
                    Some("string") => matches!(f, "enum" | "date-time"),
                    Some("integer") => matches!(f, "int32" | "int64"),
                    Some("number") => matches!(f, "float" | "double"),
                    _ => false,
                };
                if !ok {
                    fail(format!("`format: {f}` is not supported by gemini here"));
                }
            }
            if m.get("nullable").is_some_and(|n| !n.is_boolean()) {
                fail("`nullable` must be a boolean".into());
            }
            if is_object
                && depth > 0
                && m.get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(Map::is_empty)
            {
                fail("gemini rejects an object with no properties".into());
            }
            if single_type == Some("array") && !m.get("items").is_some_and(Value::is_object) {
                fail("gemini needs `items` on arrays".into());
            }
            let props = property_names(m);
            if let Some(Value::Array(required)) = m.get("required") {
                if required
                    .iter()
                    .any(|r| !r.as_str().is_some_and(|r| props.iter().any(|p| p == r)))
                {
                    fail("gemini `required` may only name defined properties".into());
                }
            }
        }
        Dialect::LlamaCpp => {
            for k in UNEXPRESSIBLE.iter().chain(LLAMA_UNEXPRESSIBLE) {
                if m.contains_key(*k) {
                    fail(format!("`{k}` is not supported by llama.cpp"));
                }
            }
            if let Some(f) = format {
                if !LLAMA_FORMATS.contains(&f) || single_type.is_some_and(|t| t != "string") {
                    fail(format!("`format: {f}` is not known to llama.cpp"));
                }
            }
            if types.len() > 1 {
                let ignored: Vec<&String> = m
                    .keys()
                    .filter(|k| {
                        let k = k.as_str();
                        STRING_KEYS.contains(&k)
                            || NUMBER_KEYS.contains(&k)
                            || ARRAY_KEYS.contains(&k)
                            || OBJECT_KEYS.contains(&k)
                            || matches!(k, "enum" | "const" | "format")
                    })
                    .collect();
                if !ignored.is_empty() {
                    fail(format!(
                        "llama.cpp ignores {ignored:?} next to a `type` list"
                    ));
                }
            }
            let recognized = m.is_empty()
                || [
                    "type",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "enum",
                    "const",
                    "properties",
                    "additionalProperties",
                    "items",
                    "prefixItems",
                    "pattern",
                ]
                .iter()
                .any(|k| m.contains_key(*k));
            if !recognized {
                fail("llama.cpp does not recognize a schema without a type".into());
            }
            if let Some(Value::Array(parts)) = m.get("allOf") {
                let objects = types.is_empty() || single_type == Some("object");
                if !objects || !parts.iter().all(|p| p.get("properties").is_some()) {
                    fail("llama.cpp merges only `allOf` of objects with properties".into());
                }
            }
        }
    }
    let mut children: Vec<(String, &Value)> = Vec::new();
    for (key, value) in m {
        let k = key.as_str();
        let prefix = format!("{path}/{}", escape_pointer(k));
        match value {
            Value::Object(map) if MAP_OF_SCHEMAS.contains(&k) => {
                for (name, sub) in map {
                    if sub.is_object() || sub.is_boolean() {
                        children.push((format!("{prefix}/{}", escape_pointer(name)), sub));
                    }
                }
            }
            Value::Array(list) if LIST_OF_SCHEMAS.contains(&k) => {
                for (i, sub) in list.iter().enumerate() {
                    children.push((format!("{prefix}/{i}"), sub));
                }
            }
            Value::Object(_) if SINGLE_SCHEMA.contains(&k) => children.push((prefix, value)),
            _ => {}
        }
    }
    for (p, child) in children {
        check_node(child, &p, dialect, depth + 1, object_depth, found, stats);
    }
}
