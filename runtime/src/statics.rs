//! Constructors of the static coercion plans `generated_plans.rs` holds
//! (named by generated code through `__private`).

use crate::coerce::{CoercionPlan, Kind, PropPlan, RepairNode, RepairProp};

/// A coercion plan of static parts, for the statics `generated_plans.rs`
/// holds: `props` sorted by name length, then bytes (lookups rely on it).
pub const fn coercion_plan(props: &'static [PropPlan]) -> CoercionPlan {
    CoercionPlan::from_static(props)
}

/// How to coerce one top-level property (see [`CoercionPlan`]).
pub const fn prop_plan(
    name: &'static str,
    flags: u8,
    kinds: &'static [Kind],
    node: RepairNode,
) -> PropPlan {
    PropPlan::from_static(name, flags, kinds, node)
}

/// Nested repair at one schema position; `props` sorted like a plan's.
pub const fn repair_node(
    accepts: u8,
    items: &'static [RepairNode],
    props: &'static [RepairProp],
) -> RepairNode {
    RepairNode::from_static(accepts, items, props)
}

/// Nested repair of one named sub-property.
pub const fn repair_prop(name: &'static str, node: RepairNode) -> RepairProp {
    RepairProp::from_static(name, node)
}
