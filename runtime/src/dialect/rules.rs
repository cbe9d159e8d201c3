//! One table of rules per dialect. The rewrite passes, the envelope and the
//! checks never ask which dialect they serve: each reads the rule it needs
//! from [`Rules`], so a new dialect is one more table here (plus its variant
//! of [`Dialect`]).

use super::base::Dialect;

/// What one dialect keeps, rewrites, drops and rejects, and how its envelope
/// looks. The field docs say which pass or check reads each rule.
pub(super) struct Rules {
    /// The canonical name ([`Dialect::name`]); [`Dialect::parse`] reads it
    /// back ignoring ASCII case, `-`, `_`, `.` and spaces.
    pub(super) name: &'static str,
    /// Short forms [`Dialect::parse`] also accepts (lowercase, without
    /// separators).
    pub(super) aliases: &'static [&'static str],
    /// How messages name the dialect: "strict mode needs ...", "gemini needs ...".
    pub(super) label: &'static str,
    /// How messages say where something is not supported: "... is not
    /// supported in strict mode", "... is not supported by gemini".
    pub(super) by: &'static str,
    /// The shape around `parameters`.
    pub(super) envelope: Envelope,
    /// Which tool names the backend accepts.
    pub(super) names: Names,
    /// Whether the schema passes run at all. Without them the baseline is the
    /// whole rewrite, and [`check`](super::check) looks only at the envelope,
    /// `$ref` leftovers, JSON types and objects' `properties`.
    pub(super) constrained: bool,
    /// Keywords rejected beside the shared [`UNEXPRESSIBLE`](super::keywords::UNEXPRESSIBLE) list.
    pub(super) unexpressible: &'static [&'static str],
    /// Whether tuple `items` (a list of schemas) are kept.
    pub(super) tuple_items: bool,
    /// The keywords a schema may carry (`None`: any); the others are dropped
    /// by the rewrite and refused by the check.
    pub(super) keys: Option<&'static [&'static str]>,
    /// Which `format`s are kept.
    pub(super) formats: Formats,
    /// Whether dropping a `format` that implies no numeric bounds is an issue.
    pub(super) format_loss_is_issue: bool,
    /// What becomes of `const`.
    pub(super) constant: Const,
    /// Whether an `enum` without `type` gets the type of its values, and an
    /// object schema (with `properties`) without `type` gets `"object"`.
    pub(super) infer_type: bool,
    /// Whether `oneOf` becomes `anyOf` (when its branches are disjoint) and
    /// any other `oneOf` is an issue.
    pub(super) one_of_as_any_of: bool,
    /// What becomes of a `type` list.
    pub(super) type_list: TypeList,
    /// Whether "may be null" is `nullable: true` (OpenAPI 3.0) rather than a
    /// `"null"` type: `{"type": "null"}` branches of `anyOf` and `null` in
    /// `enum` become `nullable: true`.
    pub(super) nullable_keyword: bool,
    /// Whether an `enum` must be a non-empty list of strings.
    pub(super) string_enums: bool,
    /// Whether numeric `exclusiveMinimum` / `exclusiveMaximum` become the
    /// inclusive bound one step inside (on integers; an issue otherwise).
    pub(super) exclusive_as_inclusive: bool,
    /// What becomes of a schema without any typing keyword (any value).
    pub(super) untyped: Untyped,
    /// Whether every object and array must say what it holds: a map-like
    /// object (`additionalProperties` is a schema) and an array without
    /// `items` are issues, and so is a nested object without properties
    /// unless the dialect can close it.
    pub(super) explicit_shapes: bool,
    /// How objects are closed.
    pub(super) objects: Objects,
    /// Whether the check accepts `allOf` only of objects with properties.
    pub(super) all_of_objects_only: bool,
    /// Whether `anyOf` may stand at the root.
    pub(super) root_any_of: bool,
    /// Documented size limits, if any.
    pub(super) limits: Option<Limits>,
}

/// The shape around `parameters`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Envelope {
    /// `{"type": "function", "function": {"name", "description",
    /// "parameters"}}`, with `"strict": true` in the function when `strict`.
    Function { strict: bool },
    /// `{"name", "description", schema_key}`; with `omit_empty`, a schema
    /// without properties is left out (and must be).
    Bare {
        schema_key: &'static str,
        omit_empty: bool,
    },
}

/// Which tool names a backend accepts: 1 to `max_len` of `[A-Za-z0-9_-]`,
/// plus `.` when `dots`, starting with a letter or `_` when `letter_first`.
pub(super) struct Names {
    pub(super) max_len: usize,
    pub(super) dots: bool,
    pub(super) letter_first: bool,
}

/// Which `format`s a dialect keeps; the others are dropped (after writing
/// the bounds a numeric format implies).
pub(super) enum Formats {
    /// Every `format` (an annotation there).
    All,
    /// The listed formats, on schemas typed `string` (or untyped); the check
    /// wants `string` among the types.
    Documented(&'static [&'static str]),
    /// The listed formats, on schemas typed `string` (or untyped); the check
    /// refuses them only on one other type.
    Known(&'static [&'static str]),
    /// Per type name, the formats kept on a schema of that type.
    PerType(&'static [(&'static str, &'static [&'static str])]),
}

/// What becomes of `const`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Const {
    /// Kept as it is.
    Keep,
    /// `enum: [x]`.
    Enum,
    /// A string becomes `enum: [x]`, a number `minimum: x, maximum: x`;
    /// any other kind is an issue.
    EnumOrBounds,
}

/// What becomes of a `type` list.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum TypeList {
    /// Kept as it is.
    Keep,
    /// Kept when it is one primitive type plus `"null"`; otherwise split into
    /// `anyOf` (with a `null` branch).
    PrimitiveOrNull,
    /// One non-null type: `"null"` becomes `nullable: true`, several other
    /// types are split into `anyOf`; a lone `"null"` is an issue.
    One,
    /// Split into `anyOf` only when other validation keywords stand beside
    /// it (which a bare union of types would ignore).
    UnconstrainedOnly,
}

/// What becomes of a schema without any typing keyword (any value).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Untyped {
    /// Kept as it is.
    Keep,
    /// An issue.
    Reject,
    /// Gets a `type` list of every JSON type.
    AllTypes,
}

/// How objects are closed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Objects {
    /// As the schema says.
    Open,
    /// Every object gets `additionalProperties: false` and lists every
    /// property in `required`; an optional property becomes nullable.
    Closed,
    /// `additionalProperties` cannot be said and is dropped; `required` may
    /// name only defined properties, and a nested object needs properties.
    Unmarked,
}

/// Documented size limits.
pub(super) struct Limits {
    /// Levels of object nesting.
    pub(super) object_depth: usize,
    /// Properties in all.
    pub(super) properties: usize,
    /// Enum values in all.
    pub(super) enum_values: usize,
}

impl Dialect {
    /// This dialect's rules.
    pub(super) fn rules(self) -> &'static Rules {
        match self {
            Dialect::OpenAi => &OPENAI,
            Dialect::OpenAiStrict => &OPENAI_STRICT,
            Dialect::Gemini => &GEMINI,
            Dialect::LlamaCpp => &LLAMA_CPP,
            Dialect::Mcp => &MCP,
        }
    }
}

/// OpenAI chat completions `tools`, not strict: the baseline as it is.
const OPENAI: Rules = Rules {
    name: "openai",
    aliases: &[],
    label: "openai",
    by: "by openai",
    envelope: Envelope::Function { strict: false },
    names: Names {
        max_len: 64,
        dots: false,
        letter_first: false,
    },
    constrained: false,
    unexpressible: &[],
    tuple_items: true,
    keys: None,
    formats: Formats::All,
    format_loss_is_issue: false,
    constant: Const::Keep,
    infer_type: false,
    one_of_as_any_of: false,
    type_list: TypeList::Keep,
    nullable_keyword: false,
    string_enums: false,
    exclusive_as_inclusive: false,
    untyped: Untyped::Keep,
    explicit_shapes: false,
    objects: Objects::Open,
    all_of_objects_only: false,
    root_any_of: true,
    limits: None,
};

/// MCP `tools/list`: the schema as for [`OPENAI`], in another envelope.
const MCP: Rules = Rules {
    name: "mcp",
    aliases: &[],
    label: "mcp",
    by: "by mcp",
    envelope: Envelope::Bare {
        schema_key: "inputSchema",
        omit_empty: false,
    },
    names: Names {
        max_len: 128,
        dots: true,
        letter_first: false,
    },
    ..OPENAI
};

/// OpenAI structured outputs (`"strict": true`).
const OPENAI_STRICT: Rules = Rules {
    name: "openai-strict",
    aliases: &["strict"],
    label: "strict mode",
    by: "in strict mode",
    envelope: Envelope::Function { strict: true },
    names: Names {
        max_len: 64,
        dots: false,
        letter_first: false,
    },
    constrained: true,
    unexpressible: &[
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "prefixItems",
    ],
    tuple_items: false,
    keys: Some(&[
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
    ]),
    formats: Formats::Documented(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ]),
    format_loss_is_issue: true,
    constant: Const::Enum,
    infer_type: true,
    one_of_as_any_of: true,
    type_list: TypeList::PrimitiveOrNull,
    nullable_keyword: false,
    string_enums: false,
    exclusive_as_inclusive: false,
    untyped: Untyped::Reject,
    explicit_shapes: true,
    objects: Objects::Closed,
    all_of_objects_only: false,
    root_any_of: false,
    limits: Some(Limits {
        object_depth: 10,
        properties: 5000,
        enum_values: 1000,
    }),
};

/// Google Gemini `functionDeclarations` (an OpenAPI 3.0 subset).
const GEMINI: Rules = Rules {
    name: "gemini",
    aliases: &[],
    label: "gemini",
    by: "by gemini",
    envelope: Envelope::Bare {
        schema_key: "parameters",
        omit_empty: true,
    },
    names: Names {
        max_len: 64,
        dots: true,
        letter_first: true,
    },
    constrained: true,
    unexpressible: &["multipleOf", "prefixItems"],
    tuple_items: false,
    keys: Some(&[
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
    ]),
    formats: Formats::PerType(&[
        ("string", &["enum", "date-time"]),
        ("integer", &["int32", "int64"]),
        ("number", &["float", "double"]),
    ]),
    format_loss_is_issue: false,
    constant: Const::EnumOrBounds,
    infer_type: true,
    one_of_as_any_of: true,
    type_list: TypeList::One,
    nullable_keyword: true,
    string_enums: true,
    exclusive_as_inclusive: true,
    untyped: Untyped::Reject,
    explicit_shapes: true,
    objects: Objects::Unmarked,
    all_of_objects_only: false,
    root_any_of: true,
    limits: None,
};

/// llama.cpp server: the OpenAI envelope, schemas its grammar converter reads.
const LLAMA_CPP: Rules = Rules {
    name: "llama-cpp",
    aliases: &["llama"],
    label: "llama.cpp",
    by: "by llama.cpp",
    envelope: Envelope::Function { strict: false },
    names: Names {
        max_len: 64,
        dots: false,
        letter_first: false,
    },
    constrained: true,
    unexpressible: &["multipleOf", "minProperties", "maxProperties"],
    tuple_items: true,
    keys: None,
    formats: Formats::Known(&["date", "time", "date-time", "uuid"]),
    format_loss_is_issue: false,
    constant: Const::Keep,
    infer_type: false,
    one_of_as_any_of: false,
    type_list: TypeList::UnconstrainedOnly,
    nullable_keyword: false,
    string_enums: false,
    exclusive_as_inclusive: false,
    untyped: Untyped::AllTypes,
    explicit_shapes: false,
    objects: Objects::Open,
    all_of_objects_only: true,
    root_any_of: true,
    limits: None,
};
