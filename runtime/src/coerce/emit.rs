//! Rust source emission: the constant expression that rebuilds a plan as
//! a `static`.

use super::*;

/// Absolute path of this module, as used by [`CoercionPlan::to_rust_expr`].
const MODULE_PATH: &str = "::hermes_runtime::coerce";

impl Kind {
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

impl CoercionPlan {
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

pub(super) fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("    ");
    }
}

pub(super) fn emit_str(out: &mut String, s: &str) {
    out.push_str("::std::borrow::Cow::Borrowed(");
    // `Debug` of a `str` is a valid Rust string literal.
    out.push_str(&format!("{s:?}"));
    out.push(')');
}

pub(super) fn emit_slice<T>(
    out: &mut String,
    items: &[T],
    level: usize,
    emit: fn(&mut String, &T, usize),
) {
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

pub(super) fn emit_flags(out: &mut String, flags: u8, names: &[(u8, &str)], owner: &str) {
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

pub(super) fn emit_prop(out: &mut String, prop: &PropPlan, level: usize) {
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

pub(super) fn emit_node(out: &mut String, node: &RepairNode, level: usize) {
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

pub(super) fn emit_repair_prop(out: &mut String, prop: &RepairProp, level: usize) {
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
