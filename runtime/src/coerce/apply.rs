//! Applying a plan: the scalar rules on strings and the nested repair of
//! lists and objects, in place.

use super::float::coerce_number;
use super::*;

impl CoercionPlan {
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

/// Finds `key` among items sorted with [`cmp_names`]: a scan (or, past eight
/// items, a binary search) on the length, which needs no string bytes, then
/// a word-wise comparison with the few names of that length. (Comparing
/// short strings through `memcmp`, or byte by byte, costs more than the rest
/// of applying a plan to a well-typed call.)
#[inline]
pub(super) fn find_by_name<'a, T>(
    items: &'a [T],
    key: &str,
    name: impl Fn(&T) -> &str,
) -> Option<&'a T> {
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
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
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

/// Repairs the children of a list or object sitting at `depth` under `node`.
#[inline]
pub(super) fn normalize_children(value: &mut Value, node: &RepairNode, depth: usize) {
    // Most nodes have nothing below them: then there is no call.
    if !node.items.is_empty() || !node.props.is_empty() {
        repair_children(value, node, depth);
    }
}

pub(super) fn repair_children(value: &mut Value, node: &RepairNode, depth: usize) {
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

pub(super) fn normalize(value: &mut Value, node: &RepairNode, depth: usize) {
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

/// Python's `str.isspace()`: Unicode white space plus the ASCII separators
/// U+001C..U+001F.
pub(super) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()` with no arguments.
#[inline]
pub(super) fn py_strip(s: &str) -> &str {
    // Most strings start and end with a printable ASCII character.
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(b'!'..=b'~'), Some(b'!'..=b'~')) => s,
        _ => py_strip_slow(s),
    }
}

#[cold]
pub(super) fn py_strip_slow(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

pub(super) fn is_null_word(s: &str) -> bool {
    py_strip(s).eq_ignore_ascii_case("null")
}

pub(super) fn coerce_bool(s: &str) -> Option<Value> {
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
pub(super) fn parse_json_container(s: &str, open: u8) -> Option<Value> {
    let first = s
        .bytes()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if first != open {
        return None;
    }
    parse_json_text(s, open)
}

pub(super) fn parse_json_text(s: &str, open: u8) -> Option<Value> {
    match serde_json::from_str::<Value>(s) {
        Ok(v @ Value::Array(_)) if open == b'[' => Some(v),
        Ok(v @ Value::Object(_)) if open == b'{' => Some(v),
        _ => None,
    }
}
