//! Schema-guided repair of tool-call arguments before dispatch: turns `"42"` into 42, `"true"` into true, JSON-in-a-string into JSON, and so on.
//!
//! The rules are documented on [`coerce_args`], the user's entry point.
//!
//! # Plans
//! [`CoercionPlan::compile`] reads the schema once; [`CoercionPlan::apply`]
//! never walks schema JSON. Every plan type is plain data built from
//! `Cow<'static, ..>`, `u8` flags and enums, so a plan can be a `static`.
//! The fields are private: generated code builds plans with the `const`
//! constructors only `hermes_runtime::__private` re-exports
//! (`coercion_plan`, `prop_plan`, `repair_node`, `repair_prop`), in the
//! expression `hermes_build_tools::plans::plan_expr` prints (the runtime
//! holds no emitter). Plans keep names sorted by length, then bytes, so
//! that looking up an argument name mostly compares lengths only; a
//! hand-built plan must keep that order.

mod apply;
mod compile;
mod float;

use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;

/// Values this many levels below a top-level property are left alone.
const MAX_DEPTH: usize = 64;

/// One member of a property's `type` that string coercion knows how to reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `"integer"`: a whole number string becomes a JSON integer.
    Integer,
    /// `"number"`: a number string becomes a JSON integer or float.
    Number,
    /// `"boolean"`: `"true"` / `"false"` become booleans.
    Boolean,
    /// `"array"`: a string holding a JSON array becomes that array.
    Array,
    /// `"object"`: a string holding a JSON object becomes that object.
    Object,
    /// `"null"`: `"null"` becomes null.
    Null,
}

/// A compiled coercion plan for one tool's `parameters` schema.
///
/// Build it with [`CoercionPlan::compile`]. The build step emits the plans
/// of built-in tools as statics through the `const` constructors under
/// `hermes_runtime::__private` (`hermes_build_tools::plans::plan_expr`).
#[derive(Clone, Debug, PartialEq)]
pub struct CoercionPlan {
    /// The top-level properties whose values coercion can change, sorted by
    /// name length, then by name bytes (lookups rely on that order: most
    /// argument names are told apart by their length alone, without reading
    /// their bytes). Properties that can never change (e.g. plain `string`)
    /// are left out.
    props: Cow<'static, [PropPlan]>,
}

/// How to coerce the value of one top-level property.
#[derive(Clone, Debug, PartialEq)]
pub struct PropPlan {
    /// The property name.
    name: Cow<'static, str>,
    /// A union of [`PropPlan::NULLABLE`], [`PropPlan::ARRAY`] and
    /// [`PropPlan::OBJECT`].
    flags: u8,
    /// The `type` members string coercion tries, in order, without duplicates.
    kinds: Cow<'static, [Kind]>,
    /// Nested repair inside the value once it is a list or an object. Its
    /// `accepts` is unused at this level.
    node: RepairNode,
}

impl PropPlan {
    /// The schema permits null: `"null"` (any case, trimmed) becomes null.
    pub const NULLABLE: u8 = 1;
    /// `type` is exactly `"array"`: non-list values are wrapped and native
    /// lists get nested repair.
    pub const ARRAY: u8 = 2;
    /// `type` is exactly `"object"`: native objects get nested repair.
    pub const OBJECT: u8 = 4;
}

/// Nested repair at one schema position: which JSON strings to parse there and
/// where to descend.
#[derive(Clone, Debug, PartialEq)]
pub struct RepairNode {
    /// [`RepairNode::ACCEPTS_ARRAY`] and/or [`RepairNode::ACCEPTS_OBJECT`]: a
    /// string here holding JSON of an accepted kind is parsed.
    accepts: u8,
    /// Empty, or the one node for the elements of a list (`items`).
    items: Cow<'static, [RepairNode]>,
    /// Nodes for the sub-properties of an object, sorted like
    /// [`CoercionPlan::props`] (length, then bytes).
    props: Cow<'static, [RepairProp]>,
}

impl RepairNode {
    /// A JSON-array string at this position is parsed.
    pub const ACCEPTS_ARRAY: u8 = 1;
    /// A JSON-object string at this position is parsed.
    pub const ACCEPTS_OBJECT: u8 = 2;
    /// The node that repairs nothing.
    pub const INERT: RepairNode = RepairNode {
        accepts: 0,
        items: Cow::Borrowed(&[]),
        props: Cow::Borrowed(&[]),
    };

    fn is_inert(&self) -> bool {
        self.accepts == 0 && self.items.is_empty() && self.props.is_empty()
    }
}

/// Nested repair for one named sub-property of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct RepairProp {
    /// The sub-property name.
    name: Cow<'static, str>,
    /// What to do with its value.
    node: RepairNode,
}

// Generated statics build plans with these `const` constructors, which only
// `__private` re-exports; everyone else compiles a plan from a schema. The
// hidden getters are what the build step's emitter reads.

impl CoercionPlan {
    /// A plan of static parts (`props` sorted by length, then bytes).
    pub(crate) const fn from_static(props: &'static [PropPlan]) -> Self {
        CoercionPlan {
            props: Cow::Borrowed(props),
        }
    }

    /// The properties coercion can change, sorted by length, then bytes.
    #[doc(hidden)]
    pub fn props(&self) -> &[PropPlan] {
        &self.props
    }
}

impl PropPlan {
    pub(crate) const fn from_static(
        name: &'static str,
        flags: u8,
        kinds: &'static [Kind],
        node: RepairNode,
    ) -> Self {
        PropPlan {
            name: Cow::Borrowed(name),
            flags,
            kinds: Cow::Borrowed(kinds),
            node,
        }
    }

    /// The property name.
    #[doc(hidden)]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A union of [`PropPlan::NULLABLE`], [`PropPlan::ARRAY`] and [`PropPlan::OBJECT`].
    #[doc(hidden)]
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// The `type` members string coercion tries, in order.
    #[doc(hidden)]
    pub fn kinds(&self) -> &[Kind] {
        &self.kinds
    }

    /// Nested repair inside the value.
    #[doc(hidden)]
    pub fn node(&self) -> &RepairNode {
        &self.node
    }
}

impl RepairNode {
    pub(crate) const fn from_static(
        accepts: u8,
        items: &'static [RepairNode],
        props: &'static [RepairProp],
    ) -> Self {
        RepairNode {
            accepts,
            items: Cow::Borrowed(items),
            props: Cow::Borrowed(props),
        }
    }

    /// [`RepairNode::ACCEPTS_ARRAY`] and/or [`RepairNode::ACCEPTS_OBJECT`].
    #[doc(hidden)]
    pub fn accepts(&self) -> u8 {
        self.accepts
    }

    /// Empty, or the one node for the elements of a list.
    #[doc(hidden)]
    pub fn items(&self) -> &[RepairNode] {
        &self.items
    }

    /// The nodes of the sub-properties, sorted by length, then bytes.
    #[doc(hidden)]
    pub fn props(&self) -> &[RepairProp] {
        &self.props
    }
}

impl RepairProp {
    pub(crate) const fn from_static(name: &'static str, node: RepairNode) -> Self {
        RepairProp {
            name: Cow::Borrowed(name),
            node,
        }
    }

    /// The sub-property name.
    #[doc(hidden)]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What to do with its value.
    #[doc(hidden)]
    pub fn node(&self) -> &RepairNode {
        &self.node
    }
}

/// Repairs `args` against the tool's `parameters` schema (compiles a plan and
/// applies it). Never fails: anything that cannot be coerced stays as it was.
/// Dispatch does this before every call, with a plan compiled once per tool.
///
/// Language models often send arguments of the wrong JSON type: `"42"` where the
/// schema says `integer`, `"true"` for a `boolean`, a bare string where an
/// `array` is due, a list or object encoded as a JSON string, `"null"` for null.
/// Before every tool call the runtime repairs the argument object, guided by the
/// tool's JSON Schema `parameters` object. The rules follow the reference tool
/// system (`hermes-agent` 0.19.0, `model_tools.coerce_tool_args`), apart from
/// the deliberate differences listed below.
///
/// # Rules
/// * Only top-level properties named in the schema's `properties` are looked at.
///   Argument properties absent from the schema are never touched, and a
///   non-object argument value is returned unchanged.
/// * Coercion never fails and never panics, whatever the schema or the
///   arguments. Where a rule cannot apply, the original value stays. Odd schema
///   shapes (a `type` that is neither a string nor an array, a property schema
///   that is not an object, ...) are left alone.
/// * **number / integer**: a string is parsed the way Python's `float()` parses
///   one: surrounding white space, a sign, `1e3`, `.5`, `5.`, leading zeros,
///   underscores between digits (`1_000`) and non-ASCII decimal digits
///   (Arabic-Indic, fullwidth, ...; the Unicode 14 `Nd` set, as in CPython 3.11)
///   are accepted. `nan`, `inf` and `infinity` (any case, signed) stay strings.
///   A whole value becomes a JSON integer (`"1.0"` → 1, `"1e3"` → 1000, `"-0"` →
///   0, never `-0`); a fraction becomes a float for `number` and stays a string
///   for `integer`.
/// * **boolean**: `"true"` / `"false"`, ASCII case-insensitive, trimmed.
/// * **null**: only where the schema permits null (`type` is or contains
///   `"null"`, `"nullable": true`, or an `anyOf`/`oneOf` branch whose `type` is
///   `"null"`), `"null"` (any case, trimmed) becomes null.
/// * **union** `type: [..]`: the members are tried in order; the first that
///   changes the value wins (so `["integer", "string"]` turns `"5"` into 5).
/// * **array** (`type` exactly `"array"`): a non-list, non-null value is wrapped
///   in a one-element list; a string is first tried as JSON, and a JSON array is
///   used as is. Null stays null.
/// * **object**: a string parsing as a JSON object becomes that object.
/// * **nested repair**: inside arrays and objects, any element or sub-property
///   whose schema position expects an array or object (through `type`, type
///   lists, `anyOf`/`oneOf`/`allOf`) and holds a JSON string of that kind is
///   parsed, recursively. Nested repair only parses JSON strings: a nested
///   `"5"` stays a string. It walks native containers at the top level only for
///   properties typed exactly `"array"` or `"object"` (as the reference does),
///   and always walks a container that coercion itself just produced.
/// * A `string`-typed field that looks like JSON or a number is never touched;
///   a value that already has the accepted type is returned unchanged; a
///   property schema without `type` is left alone unless it permits null.
///
/// # Deliberate differences from the reference
/// 1. **Exact integers.** The reference goes through a float, so
///    `"9007199254740993"` becomes 9007199254740992. Here a string whose exact
///    decimal value is whole keeps that exact value: if it fits `i64` or `u64`
///    it becomes that JSON integer (`"18446744073709551615"` → u64::MAX,
///    `"9007199254740993.0"` → 9007199254740993). Any other value goes
///    through a correctly rounded `f64` as in the reference, so
///    `"4.0000000000000001"` is 4 there too, and a whole value beyond 64 bits
///    (`"1e22"`, a 30-digit string) becomes that float (`1e22`), for
///    `integer` as for `number`: the reference's rounded big integer, the
///    same number, which no 64-bit integer could hold. Past the `f64` range
///    (`"1e400"`) the string stays, as there.
/// 2. **Nested repair for JSON-string arrays.** The reference skips nested
///    repair when a property typed exactly `"array"` arrives as a JSON string,
///    so `'["{\"a\":1}"]'` for an array of objects leaves the element a string
///    (and only a second pass would repair it). Here the parsed array — and
///    likewise a value that was just wrapped into a one-element list — is
///    repaired too. This keeps coercion idempotent: applying it twice gives the
///    same result as applying it once.
///
/// Where the reference itself raises, this module leaves values alone: a
/// `parameters` or `properties` that is not an object (nothing is coerced), a
/// property schema that is a string or a number (that property is skipped, the
/// others are still coerced; the reference fails the whole call), an object
/// inside a `type` list (members from there on are never tried), JSON nested
/// past Python's recursion limit.
///
/// JSON inside strings is read by `serde_json`, not Python's `json` module, so
/// a few strings read differently: `NaN`, `Infinity`, lone surrogate escapes,
/// numbers out of `f64` range and nesting deeper than 128 levels do not parse
/// (such a string is treated like any other unparseable string); `-0` reads as
/// the float `-0.0`; integers beyond 64 bits read as `f64`. All of these match
/// how the runtime parses the argument JSON itself.
///
/// # Depth
/// Values nested 64 or more levels below a top-level property (and schema
/// positions that deep) are left alone, so hostile schemas or payloads cannot
/// overflow the stack.
pub fn coerce_args(parameters: &Value, args: Value) -> Value {
    match &args {
        Value::Object(map) if !map.is_empty() => CoercionPlan::compile(parameters).apply(args),
        _ => args,
    }
}
