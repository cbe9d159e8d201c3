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
//! * Then `$schema`, `definitions` and `$defs` are dropped below the root.
//!   The root keeps them: `$schema` says which draft the keywords mean, and
//!   the definitions may carry what a client reads (`$anchor`, `$id`); the
//!   constrained dialects (strict, Gemini, llama.cpp) drop the root's too.
//!   A `$ref` that cannot be inlined (recursive, pointing elsewhere,
//!   dangling, too deep) is an issue; [`sanitize_for_strict_backends`] then
//!   leaves it in place and keeps the definitions so its output stays a
//!   self-contained schema.
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
//! Keeps everything the baseline keeps, the root's `$schema` and
//! definitions included, and every composition or conditional keyword
//! (`allOf`, `anyOf`, `if`/`then`/`else`, ...) with the `required` inside
//! it. Output:
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

// `base` holds the dialects, their issues and the limits, which everything
// below names; `rules` holds one table per dialect, which everything below
// reads;
// `inline` is the baseline (the `$ref` inliner, normalisation, the root
// object); `passes` the per-node rewrites, with `merge` for `allOf` and
// `oneOf`; `envelope` the outer shape; `checks` the validator; `keywords`
// the schema vocabulary they share; `walk` the one walker over subschemas
// (also used by definitions and the build step's schema lints).
mod base;
mod checks;
mod envelope;
mod inline;
mod keywords;
mod merge;
mod passes;
mod rules;
pub mod walk;

use serde_json::Value;

pub use base::{Dialect, DialectIssue, ParseDialectError, MAX_INLINED_REFS, MAX_REF_DEPTH};
pub use checks::check;
pub use inline::sanitize_for_strict_backends;

use base::{tag_issues, Found};
use envelope::{empty_object_schema, envelope, parse_tool};
use inline::{baseline, root_object};
use passes::Cx;

/// Rewrites one tool definition for `dialect`; see the module docs for what
/// each dialect keeps, rewrites, drops and rejects.
///
/// # Errors
///
/// Every construct the dialect cannot carry without changing what the tool
/// accepts, as one [`DialectIssue`] each; also every rule of [`check`] the
/// result would break (such as a tool name the backend refuses).
pub fn rewrite(tool: &Value, dialect: Dialect) -> Result<Value, Vec<DialectIssue>> {
    let tag = |found: Vec<Found>| tag_issues(found, dialect);
    let parts = parse_tool(tool).map_err(|m| tag(vec![(String::new(), m)]))?;
    let mut found = Vec::new();
    let empty;
    let parameters = match parts.parameters {
        Some(p) => p,
        None => {
            empty = empty_object_schema();
            &empty
        }
    };
    let mut schema = baseline(parameters, &mut found);
    root_object(&mut schema, &mut found);
    if found.is_empty() && dialect.rules().constrained {
        // The root's `$schema` and (all `$ref`s inlined) definitions are
        // not for these backends' parsers.
        if let Value::Object(m) = &mut schema {
            for key in ["$schema", "$defs", "definitions"] {
                m.remove(key);
            }
        }
        Cx::new(dialect, &mut found).transform(&mut schema);
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
