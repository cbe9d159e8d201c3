//! Schema-guided repair of tool-call arguments before dispatch: turns `"42"` into 42, `"true"` into true, JSON-in-a-string into JSON, and so on.
//!
//! Language models often send arguments of the wrong JSON type: `"42"` where the
//! schema says `integer`, `"true"` for a `boolean`, a bare string where an
//! `array` is due, a list or object encoded as a JSON string, `"null"` for null.
//! Before every tool call the runtime repairs the argument object, guided by the
//! tool's JSON Schema `parameters` object. The rules follow the reference tool
//! system (`hermes-agent` 0.19.0, `model_tools.coerce_tool_args`), apart from
//! the deliberate differences listed below.
//!
//! # Rules
//! * Only top-level properties named in the schema's `properties` are looked at.
//!   Argument properties absent from the schema are never touched, and a
//!   non-object argument value is returned unchanged.
//! * Coercion never fails and never panics, whatever the schema or the
//!   arguments. Where a rule cannot apply, the original value stays. Odd schema
//!   shapes (a `type` that is neither a string nor an array, a property schema
//!   that is not an object, ...) are left alone.
//! * **number / integer**: a string is parsed the way Python's `float()` parses
//!   one: surrounding white space, a sign, `1e3`, `.5`, `5.`, leading zeros,
//!   underscores between digits (`1_000`) and non-ASCII decimal digits
//!   (Arabic-Indic, fullwidth, ...; the Unicode 14 `Nd` set, as in CPython 3.11)
//!   are accepted. `nan`, `inf` and `infinity` (any case, signed) stay strings.
//!   A whole value becomes a JSON integer (`"1.0"` → 1, `"1e3"` → 1000, `"-0"` →
//!   0, never `-0`); a fraction becomes a float for `number` and stays a string
//!   for `integer`.
//! * **boolean**: `"true"` / `"false"`, ASCII case-insensitive, trimmed.
//! * **null**: only where the schema permits null (`type` is or contains
//!   `"null"`, `"nullable": true`, or an `anyOf`/`oneOf` branch whose `type` is
//!   `"null"`), `"null"` (any case, trimmed) becomes null.
//! * **union** `type: [..]`: the members are tried in order; the first that
//!   changes the value wins (so `["integer", "string"]` turns `"5"` into 5).
//! * **array** (`type` exactly `"array"`): a non-list, non-null value is wrapped
//!   in a one-element list; a string is first tried as JSON, and a JSON array is
//!   used as is. Null stays null.
//! * **object**: a string parsing as a JSON object becomes that object.
//! * **nested repair**: inside arrays and objects, any element or sub-property
//!   whose schema position expects an array or object (through `type`, type
//!   lists, `anyOf`/`oneOf`/`allOf`) and holds a JSON string of that kind is
//!   parsed, recursively. Nested repair only parses JSON strings: a nested
//!   `"5"` stays a string. It walks native containers at the top level only for
//!   properties typed exactly `"array"` or `"object"` (as the reference does),
//!   and always walks a container that coercion itself just produced.
//! * A `string`-typed field that looks like JSON or a number is never touched;
//!   a value that already has the accepted type is returned unchanged; a
//!   property schema without `type` is left alone unless it permits null.
//!
//! # Deliberate differences from the reference
//! 1. **Exact integers.** The reference goes through a float, so
//!    `"9007199254740993"` becomes 9007199254740992. Here a string whose exact
//!    decimal value is whole keeps that exact value: if it fits `i64` or `u64`
//!    it becomes that JSON integer (`"18446744073709551615"` → u64::MAX,
//!    `"9007199254740993.0"` → 9007199254740993). A whole value that does not
//!    fit in 64 bits (`"1e30"`, `"123456789012345678901234"`) is **left as the
//!    original string** for both `integer` and `number`, rather than being
//!    silently rounded (the reference would produce a rounded big integer). A
//!    string whose exact value is not whole goes through a correctly rounded
//!    `f64` exactly as in the reference, so `"4.0000000000000001"` is 4 there
//!    too.
//! 2. **Nested repair for JSON-string arrays.** The reference skips nested
//!    repair when a property typed exactly `"array"` arrives as a JSON string,
//!    so `'["{\"a\":1}"]'` for an array of objects leaves the element a string
//!    (and only a second pass would repair it). Here the parsed array — and
//!    likewise a value that was just wrapped into a one-element list — is
//!    repaired too. This keeps coercion idempotent: applying it twice gives the
//!    same result as applying it once.
//!
//! Where the reference itself raises, this module leaves values alone: a
//! `parameters` or `properties` that is not an object (nothing is coerced), a
//! property schema that is a string or a number (that property is skipped, the
//! others are still coerced; the reference fails the whole call), an object
//! inside a `type` list (members from there on are never tried), JSON nested
//! past Python's recursion limit.
//!
//! JSON inside strings is read by `serde_json`, not Python's `json` module, so
//! a few strings read differently: `NaN`, `Infinity`, lone surrogate escapes,
//! numbers out of `f64` range and nesting deeper than 128 levels do not parse
//! (such a string is treated like any other unparseable string); `-0` reads as
//! the float `-0.0`; integers beyond 64 bits read as `f64`. All of these match
//! how the runtime parses the argument JSON itself.
//!
//! # Depth
//! Values nested 64 or more levels below a top-level property (and schema
//! positions that deep) are left alone, so hostile schemas or payloads cannot
//! overflow the stack.
//!
//! # Plans
//! [`CoercionPlan::compile`] reads the schema once; [`CoercionPlan::apply`]
//! never walks schema JSON. Every plan type is plain data built from
//! `Cow<'static, ..>`, `u8` flags and enums, so a plan can be a `static`:
//! [`CoercionPlan::to_rust_expr`] prints the Rust constant expression that
//! rebuilds it, for the build step that emits plans of built-in tools. Plans
//! keep names sorted by length, then bytes, so that looking up an argument name
//! mostly compares lengths only; a hand-written plan must keep that order.

use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::cmp::Ordering;

/// Values this many levels below a top-level property are left alone.
const MAX_DEPTH: usize = 64;

/// Absolute path of this module, as used by [`CoercionPlan::to_rust_expr`].
const MODULE_PATH: &str = "::hermes_runtime::__private";

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

    fn variant_name(self) -> &'static str {
        match self {
            Kind::Integer => "Integer",
            Kind::Number => "Number",
            Kind::Boolean => "Boolean",
            Kind::Array => "Array",
            Kind::Object => "Object",
            Kind::Null => "Null",
        }
    }
}

/// A compiled coercion plan for one tool's `parameters` schema.
///
/// Build it with [`CoercionPlan::compile`], or as a `static` from the text of
/// [`CoercionPlan::to_rust_expr`].
#[derive(Clone, Debug, PartialEq)]
pub struct CoercionPlan {
    /// The top-level properties whose values coercion can change, sorted by
    /// name length, then by name bytes (lookups rely on that order: most
    /// argument names are told apart by their length alone, without reading
    /// their bytes). Properties that can never change (e.g. plain `string`)
    /// are left out.
    pub props: Cow<'static, [PropPlan]>,
}

/// How to coerce the value of one top-level property.
#[derive(Clone, Debug, PartialEq)]
pub struct PropPlan {
    /// The property name.
    pub name: Cow<'static, str>,
    /// A union of [`PropPlan::NULLABLE`], [`PropPlan::ARRAY`] and
    /// [`PropPlan::OBJECT`].
    pub flags: u8,
    /// The `type` members string coercion tries, in order, without duplicates.
    pub kinds: Cow<'static, [Kind]>,
    /// Nested repair inside the value once it is a list or an object. Its
    /// `accepts` is unused at this level.
    pub node: RepairNode,
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
    pub accepts: u8,
    /// Empty, or the one node for the elements of a list (`items`).
    pub items: Cow<'static, [RepairNode]>,
    /// Nodes for the sub-properties of an object, sorted like
    /// [`CoercionPlan::props`] (length, then bytes).
    pub props: Cow<'static, [RepairProp]>,
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
    pub name: Cow<'static, str>,
    /// What to do with its value.
    pub node: RepairNode,
}

/// Repairs `args` against the tool's `parameters` schema (compiles a plan and
/// applies it). Never fails: anything that cannot be coerced stays as it was.
pub fn coerce_args(parameters: &Value, args: Value) -> Value {
    match &args {
        Value::Object(map) if !map.is_empty() => CoercionPlan::compile(parameters).apply(args),
        _ => args,
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

    /// Applies the plan to an argument value and returns the repaired value.
    /// A non-object `args` is returned unchanged. Works in place: values that
    /// need no change are neither copied nor re-allocated.
    pub fn apply(&self, mut args: Value) -> Value {
        if self.props.is_empty() {
            return args;
        }
        if let Value::Object(map) = &mut args {
            for (key, value) in map.iter_mut() {
                if let Some(prop) = find_by_name(&self.props, key, |p| &p.name) {
                    prop.apply(value);
                }
            }
        }
        args
    }

    /// A Rust constant expression that rebuilds this plan, with absolute paths
    /// (`::hermes_runtime::coerce::CoercionPlan { .. }`), usable as the
    /// initializer of a `static`.
    pub fn to_rust_expr(&self) -> String {
        let mut out = String::new();
        out.push_str(MODULE_PATH);
        out.push_str("::CoercionPlan {\n");
        indent(&mut out, 1);
        out.push_str("props: ");
        emit_slice(&mut out, &self.props, 1, emit_prop);
        out.push_str(",\n}");
        out
    }
}

impl PropPlan {
    fn apply(&self, value: &mut Value) {
        let wrap = self.flags & PropPlan::ARRAY != 0;
        match value {
            Value::String(s) => {
                if let Some(new) = self.coerce_str(s) {
                    // Frees the old text without the general `Value` drop.
                    if let Value::String(old) = std::mem::replace(value, new) {
                        drop(old);
                    }
                    normalize_children(value, &self.node, 0);
                } else if wrap {
                    let s = std::mem::take(s);
                    *value = Value::Array(vec![Value::String(s)]);
                    normalize_children(value, &self.node, 0);
                }
            }
            Value::Null => {}
            Value::Array(_) => {
                if wrap {
                    normalize_children(value, &self.node, 0);
                }
            }
            Value::Object(_) if !wrap => {
                if self.flags & PropPlan::OBJECT != 0 {
                    normalize_children(value, &self.node, 0);
                }
            }
            Value::Bool(_) | Value::Number(_) | Value::Object(_) => {
                if wrap {
                    let inner = std::mem::take(value);
                    *value = Value::Array(vec![inner]);
                    normalize_children(value, &self.node, 0);
                }
            }
        }
    }

    /// The coerced value of a string, or `None` when it stays as it is.
    fn coerce_str(&self, s: &str) -> Option<Value> {
        if self.flags & PropPlan::NULLABLE != 0 && is_null_word(s) {
            return Some(Value::Null);
        }
        self.kinds.iter().find_map(|kind| match kind {
            Kind::Integer => coerce_number(s, true),
            Kind::Number => coerce_number(s, false),
            Kind::Boolean => coerce_bool(s),
            Kind::Array => parse_json_container(s, b'['),
            Kind::Object => parse_json_container(s, b'{'),
            Kind::Null => is_null_word(s).then_some(Value::Null),
        })
    }
}

// ---------------------------------------------------------------------------
// Compiling

fn compile_prop(name: &str, schema: &Value) -> Option<PropPlan> {
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
fn collect_kinds(ty: &Value, out: &mut Vec<Kind>, depth: usize) -> bool {
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

fn allows_null(schema: &Map<String, Value>) -> bool {
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
fn accepts(schema: &Value, kind: &str, depth: usize) -> bool {
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

fn compile_node(schema: &Value, depth: usize) -> RepairNode {
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
fn cmp_names(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// Finds `key` among items sorted with [`cmp_names`]: a scan (or, past eight
/// items, a binary search) on the length, which needs no string bytes, then
/// a word-wise comparison with the few names of that length. (Comparing
/// short strings through `memcmp`, or byte by byte, costs more than the rest
/// of applying a plan to a well-typed call.)
#[inline]
fn find_by_name<'a, T>(items: &'a [T], key: &str, name: impl Fn(&T) -> &str) -> Option<&'a T> {
    let len = key.len();
    // A short list is scanned; the lengths tell most names apart.
    let start = if items.len() > 8 {
        items.partition_point(|item| name(item).len() < len)
    } else {
        0
    };
    for item in items.get(start..)? {
        let candidate = name(item).as_bytes();
        match candidate.len().cmp(&len) {
            Ordering::Less => {}
            Ordering::Equal if same_bytes(candidate, key.as_bytes()) => return Some(item),
            Ordering::Equal => {}
            Ordering::Greater => return None,
        }
    }
    None
}

/// Equality of two byte strings of the same length, reading whole words:
/// the first and the last 8 (or 4, or 2) bytes, overlapping when shorter
/// than twice that, and `==` past 16 bytes.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    fn ends<const N: usize>(s: &[u8]) -> Option<(&[u8; N], &[u8; N])> {
        Some((s.first_chunk::<N>()?, s.last_chunk::<N>()?))
    }
    match a.len() {
        0..=1 => a == b,
        2..=3 => ends::<2>(a) == ends::<2>(b),
        4..=7 => ends::<4>(a) == ends::<4>(b),
        8..=16 => ends::<8>(a) == ends::<8>(b),
        _ => a == b,
    }
}

// ---------------------------------------------------------------------------
// Nested repair

/// Repairs the children of a list or object sitting at `depth` under `node`.
#[inline]
fn normalize_children(value: &mut Value, node: &RepairNode, depth: usize) {
    // Most nodes have nothing below them: then there is no call.
    if !node.items.is_empty() || !node.props.is_empty() {
        repair_children(value, node, depth);
    }
}

fn repair_children(value: &mut Value, node: &RepairNode, depth: usize) {
    match value {
        Value::Array(elements) => {
            if let Some(item_node) = node.items.first() {
                for element in elements {
                    normalize(element, item_node, depth + 1);
                }
            }
        }
        Value::Object(map) => {
            if node.props.is_empty() {
                return;
            }
            if map.len() <= 4 * node.props.len() {
                for (key, v) in map.iter_mut() {
                    if let Some(prop) = find_by_name(&node.props, key, |p| &p.name) {
                        normalize(v, &prop.node, depth + 1);
                    }
                }
            } else {
                for prop in node.props.iter() {
                    if let Some(v) = map.get_mut(prop.name.as_ref()) {
                        normalize(v, &prop.node, depth + 1);
                    }
                }
            }
        }
        _ => {}
    }
}

fn normalize(value: &mut Value, node: &RepairNode, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    if let Value::String(s) = value {
        if node.accepts == 0 {
            return;
        }
        let trimmed = py_strip(s);
        let wanted = match trimmed.as_bytes().first() {
            Some(b'[') if node.accepts & RepairNode::ACCEPTS_ARRAY != 0 => b'[',
            Some(b'{') if node.accepts & RepairNode::ACCEPTS_OBJECT != 0 => b'{',
            _ => return,
        };
        match parse_json_container(trimmed, wanted) {
            Some(parsed) => *value = parsed,
            None => return,
        }
    }
    normalize_children(value, node, depth);
}

// ---------------------------------------------------------------------------
// Scalar rules

/// Python's `str.isspace()`: Unicode white space plus the ASCII separators
/// U+001C..U+001F.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()` with no arguments.
#[inline]
fn py_strip(s: &str) -> &str {
    // Most strings start and end with a printable ASCII character.
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(b'!'..=b'~'), Some(b'!'..=b'~')) => s,
        _ => py_strip_slow(s),
    }
}

#[cold]
fn py_strip_slow(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

fn is_null_word(s: &str) -> bool {
    py_strip(s).eq_ignore_ascii_case("null")
}

fn coerce_bool(s: &str) -> Option<Value> {
    let t = py_strip(s);
    if t.eq_ignore_ascii_case("true") {
        Some(Value::Bool(true))
    } else if t.eq_ignore_ascii_case("false") {
        Some(Value::Bool(false))
    } else {
        None
    }
}

/// Parses `s` as JSON when it is a JSON array (`open == b'['`) or object
/// (`open == b'{'`), surrounding JSON white space allowed.
#[inline]
fn parse_json_container(s: &str, open: u8) -> Option<Value> {
    let first = s
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if first != open {
        return None;
    }
    parse_json_text(s, open)
}

fn parse_json_text(s: &str, open: u8) -> Option<Value> {
    match serde_json::from_str::<Value>(s) {
        Ok(v @ Value::Array(_)) if open == b'[' => Some(v),
        Ok(v @ Value::Object(_)) if open == b'{' => Some(v),
        _ => None,
    }
}

/// Zero code points of every run of ten non-ASCII decimal digits (Unicode 14
/// `Nd`, the set CPython 3.11's `float()` accepts), sorted.
const DIGIT_ZEROS: [u32; 65] = [
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50,
    0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The ASCII digit for a non-ASCII Unicode decimal digit.
fn unicode_digit(c: char) -> Option<u8> {
    let cp = u32::from(c);
    let idx = DIGIT_ZEROS.partition_point(|&z| z <= cp).checked_sub(1)?;
    let offset = cp - DIGIT_ZEROS[idx];
    // `offset < 10` makes the narrowing exact.
    (offset < 10).then(|| b'0' + offset as u8)
}

/// A number string in Python `float()` syntax, split into its parts.
struct Decimal {
    negative: bool,
    /// Integer-part digits followed by fraction digits, ASCII, no underscores.
    digits: Vec<u8>,
    /// How many of `digits` are fraction digits.
    frac_len: usize,
    /// The exponent, saturated to +-EXP_CAP.
    exp: i64,
}

const EXP_CAP: i64 = 1_000_000_000_000_000;

/// Reads `s` with the syntax of Python's `float()`. `None` for anything else,
/// and for `nan` / `inf` / `infinity`, which stay strings.
fn parse_decimal(s: &str) -> Option<Decimal> {
    let t = s.trim_matches(char::is_whitespace);
    let ascii: Cow<'_, [u8]> = if t.is_ascii() {
        Cow::Borrowed(t.as_bytes())
    } else {
        let mut mapped = Vec::with_capacity(t.len());
        for c in t.chars() {
            if c.is_ascii() {
                mapped.push(c as u8);
            } else {
                mapped.push(unicode_digit(c)?);
            }
        }
        Cow::Owned(mapped)
    };
    let b: &[u8] = &ascii;
    let mut pos = 0;
    let mut negative = false;
    if let Some(&sign @ (b'+' | b'-')) = b.first() {
        negative = sign == b'-';
        pos = 1;
    }
    let mut int_digits = Vec::with_capacity(b.len());
    pos = digit_part(b, pos, &mut int_digits)?;
    let int_len = int_digits.len();
    let mut frac_digits = Vec::new();
    if b.get(pos) == Some(&b'.') {
        pos = digit_part(b, pos + 1, &mut frac_digits)?;
    }
    let frac_len = frac_digits.len();
    if int_len == 0 && frac_len == 0 {
        return None; // also covers nan / inf / infinity
    }
    let mut exp: i64 = 0;
    if let Some(b'e' | b'E') = b.get(pos) {
        pos += 1;
        let mut exp_negative = false;
        if let Some(&sign @ (b'+' | b'-')) = b.get(pos) {
            exp_negative = sign == b'-';
            pos += 1;
        }
        let mut exp_digits = Vec::new();
        pos = digit_part(b, pos, &mut exp_digits)?;
        if exp_digits.is_empty() {
            return None;
        }
        for d in exp_digits {
            exp = (exp * 10 + i64::from(d - b'0')).min(EXP_CAP);
        }
        if exp_negative {
            exp = -exp;
        }
    }
    if pos != b.len() {
        return None;
    }
    let mut digits = int_digits;
    digits.append(&mut frac_digits);
    Some(Decimal {
        negative,
        digits,
        frac_len,
        exp,
    })
}

/// Reads `digit (["_"] digit)*` at `pos` into `out` and returns the position
/// after it; returns `pos` itself when no digit starts there, and `None` when an
/// underscore is not followed by a digit.
fn digit_part(b: &[u8], mut pos: usize, out: &mut Vec<u8>) -> Option<usize> {
    loop {
        match b.get(pos) {
            Some(d) if d.is_ascii_digit() => {
                out.push(*d);
                pos += 1;
            }
            // An underscore only ever follows a digit here (after a digit was read).
            Some(b'_') if !out.is_empty() => {
                if !b.get(pos + 1).is_some_and(u8::is_ascii_digit) {
                    return None;
                }
                pos += 1;
            }
            _ => return Some(pos),
        }
    }
}

/// A whole number as a JSON integer, if it fits `i64` or `u64`.
fn int_value(negative: bool, magnitude: u128) -> Option<Value> {
    if negative {
        let v = i64::try_from(-i128::try_from(magnitude).ok()?).ok()?;
        Some(Value::from(v))
    } else {
        Some(Value::from(u64::try_from(magnitude).ok()?))
    }
}

/// The number rule: `integer_only` for `integer`, else `number`.
#[inline]
fn coerce_number(s: &str, integer_only: bool) -> Option<Value> {
    // Fast path: a plain ASCII integer of at most 18 digits.
    let b = s.as_bytes();
    let (negative, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let v = digits
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
        return Some(Value::from(if negative { -v } else { v }));
    }
    coerce_number_text(s, integer_only)
}

/// [`coerce_number`] past its fast path: Python `float()` syntax.
fn coerce_number_text(s: &str, integer_only: bool) -> Option<Value> {
    let dec = parse_decimal(s)?;
    let Some(first) = dec.digits.iter().position(|&d| d != b'0') else {
        return Some(Value::from(0)); // any zero, including "-0" and "-0.0e5"
    };
    let last = dec.digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
    let significant = &dec.digits[first..=last];
    let trailing_zeros = dec.digits.len() - 1 - last;
    let frac_len = i64::try_from(dec.frac_len).unwrap_or(i64::MAX);
    let trailing = i64::try_from(trailing_zeros).unwrap_or(i64::MAX);
    let exp10 = dec.exp.saturating_sub(frac_len).saturating_add(trailing);
    if exp10 >= 0 {
        // The exact value is whole: keep it exactly, or not at all.
        let total = i64::try_from(significant.len())
            .unwrap_or(i64::MAX)
            .saturating_add(exp10);
        if total > 20 {
            return None;
        }
        let mut magnitude: u128 = 0;
        for d in significant {
            magnitude = magnitude * 10 + u128::from(d - b'0');
        }
        for _ in 0..exp10 {
            magnitude *= 10;
        }
        return int_value(dec.negative, magnitude);
    }
    // Not whole: a correctly rounded f64, as Python's float() gives.
    let mut text = String::with_capacity(significant.len() + 24);
    if dec.negative {
        text.push('-');
    }
    text.extend(significant.iter().map(|&d| char::from(d)));
    text.push('e');
    text.push_str(&exp10.to_string());
    let f: f64 = text.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 {
        // Rounded to a whole float, as the reference does for e.g. "4.0000000000000001".
        if f == 0.0 {
            return Some(Value::from(0));
        }
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        const TWO_64: f64 = 18_446_744_073_709_551_616.0;
        // The range checks make the conversions exact.
        if f.abs() < TWO_63 {
            return Some(Value::from(f as i64));
        }
        if f > 0.0 && f < TWO_64 {
            return Some(Value::from(f as u64));
        }
        if f == -TWO_63 {
            return Some(Value::from(i64::MIN));
        }
        return None;
    }
    if integer_only {
        return None;
    }
    Number::from_f64(f).map(Value::Number)
}

// ---------------------------------------------------------------------------
// Rust source emission

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("    ");
    }
}

fn emit_str(out: &mut String, s: &str) {
    out.push_str("::std::borrow::Cow::Borrowed(");
    // `Debug` of a `str` is a valid Rust string literal.
    out.push_str(&format!("{s:?}"));
    out.push(')');
}

fn emit_slice<T>(out: &mut String, items: &[T], level: usize, emit: fn(&mut String, &T, usize)) {
    out.push_str("::std::borrow::Cow::Borrowed(&[");
    if items.is_empty() {
        out.push_str("])");
        return;
    }
    out.push('\n');
    for item in items {
        indent(out, level + 1);
        emit(out, item, level + 1);
        out.push_str(",\n");
    }
    indent(out, level);
    out.push_str("])");
}

fn emit_flags(out: &mut String, flags: u8, names: &[(u8, &str)], owner: &str) {
    let mut first = true;
    let mut rest = flags;
    for &(bit, name) in names {
        if flags & bit != 0 {
            if !first {
                out.push_str(" | ");
            }
            out.push_str(&format!("{MODULE_PATH}::{owner}::{name}"));
            first = false;
            rest &= !bit;
        }
    }
    if rest != 0 || first {
        if !first {
            out.push_str(" | ");
        }
        out.push_str(&format!("{rest}"));
    }
}

fn emit_prop(out: &mut String, prop: &PropPlan, level: usize) {
    out.push_str(MODULE_PATH);
    out.push_str("::PropPlan {\n");
    indent(out, level + 1);
    out.push_str("name: ");
    emit_str(out, &prop.name);
    out.push_str(",\n");
    indent(out, level + 1);
    out.push_str("flags: ");
    emit_flags(
        out,
        prop.flags,
        &[
            (PropPlan::NULLABLE, "NULLABLE"),
            (PropPlan::ARRAY, "ARRAY"),
            (PropPlan::OBJECT, "OBJECT"),
        ],
        "PropPlan",
    );
    out.push_str(",\n");
    indent(out, level + 1);
    out.push_str("kinds: ::std::borrow::Cow::Borrowed(&[");
    for (i, kind) in prop.kinds.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&format!("{MODULE_PATH}::Kind::{}", kind.variant_name()));
    }
    out.push_str("]),\n");
    indent(out, level + 1);
    out.push_str("node: ");
    emit_node(out, &prop.node, level + 1);
    out.push_str(",\n");
    indent(out, level);
    out.push('}');
}

fn emit_node(out: &mut String, node: &RepairNode, level: usize) {
    if *node == RepairNode::INERT {
        out.push_str(MODULE_PATH);
        out.push_str("::RepairNode::INERT");
        return;
    }
    out.push_str(MODULE_PATH);
    out.push_str("::RepairNode {\n");
    indent(out, level + 1);
    out.push_str("accepts: ");
    emit_flags(
        out,
        node.accepts,
        &[
            (RepairNode::ACCEPTS_ARRAY, "ACCEPTS_ARRAY"),
            (RepairNode::ACCEPTS_OBJECT, "ACCEPTS_OBJECT"),
        ],
        "RepairNode",
    );
    out.push_str(",\n");
    indent(out, level + 1);
    out.push_str("items: ");
    emit_slice(out, &node.items, level + 1, emit_node);
    out.push_str(",\n");
    indent(out, level + 1);
    out.push_str("props: ");
    emit_slice(out, &node.props, level + 1, emit_repair_prop);
    out.push_str(",\n");
    indent(out, level);
    out.push('}');
}

fn emit_repair_prop(out: &mut String, prop: &RepairProp, level: usize) {
    out.push_str(MODULE_PATH);
    out.push_str("::RepairProp {\n");
    indent(out, level + 1);
    out.push_str("name: ");
    emit_str(out, &prop.name);
    out.push_str(",\n");
    indent(out, level + 1);
    out.push_str("node: ");
    emit_node(out, &prop.node, level + 1);
    out.push_str(",\n");
    indent(out, level);
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_table_is_sorted_and_runs_do_not_overlap() {
        assert!(DIGIT_ZEROS.windows(2).all(|w| w[0] + 10 <= w[1]));
        assert_eq!(unicode_digit('\u{665}'), Some(b'5'));
        assert_eq!(unicode_digit('\u{1D7FF}'), Some(b'9'));
        assert_eq!(unicode_digit('\u{66A}'), None);
        assert_eq!(unicode_digit('\u{65F}'), None);
    }
}
