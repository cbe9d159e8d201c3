//! Snapshot of `hermes_build_tools::plans::plan_static` for `sample_schema()` in tests/coerce.rs, compiled there as a static.

pub static SAMPLE_PLAN: ::hermes_runtime::__private::CoercionPlan =
    ::hermes_runtime::__private::coercion_plan(
        const {
            &[
                ::hermes_runtime::__private::prop_plan(
                    "tags",
                    ::hermes_runtime::__private::PropPlan::ARRAY,
                    &[::hermes_runtime::__private::Kind::Array],
                    ::hermes_runtime::__private::RepairNode::INERT,
                ),
                ::hermes_runtime::__private::prop_plan(
                    "limit",
                    0,
                    &[::hermes_runtime::__private::Kind::Integer],
                    ::hermes_runtime::__private::RepairNode::INERT,
                ),
                ::hermes_runtime::__private::prop_plan(
                    "ratio",
                    ::hermes_runtime::__private::PropPlan::NULLABLE,
                    &[::hermes_runtime::__private::Kind::Number],
                    ::hermes_runtime::__private::RepairNode::INERT,
                ),
                ::hermes_runtime::__private::prop_plan(
                    "todos",
                    ::hermes_runtime::__private::PropPlan::ARRAY,
                    &[::hermes_runtime::__private::Kind::Array],
                    ::hermes_runtime::__private::repair_node(
                        0,
                        const {
                            &[::hermes_runtime::__private::repair_node(
                                ::hermes_runtime::__private::RepairNode::ACCEPTS_OBJECT,
                                &[],
                                const {
                                    & [:: hermes_runtime :: __private :: repair_prop ("deps" , :: hermes_runtime :: __private :: repair_node (:: hermes_runtime :: __private :: RepairNode :: ACCEPTS_ARRAY , & [] , & [])) , :: hermes_runtime :: __private :: repair_prop ("meta" , :: hermes_runtime :: __private :: repair_node (:: hermes_runtime :: __private :: RepairNode :: ACCEPTS_OBJECT , & [] , & []))]
                                },
                            )]
                        },
                        &[],
                    ),
                ),
                ::hermes_runtime::__private::prop_plan(
                    "options",
                    ::hermes_runtime::__private::PropPlan::OBJECT,
                    &[::hermes_runtime::__private::Kind::Object],
                    ::hermes_runtime::__private::repair_node(
                        0,
                        &[],
                        const {
                            &[::hermes_runtime::__private::repair_prop(
                                "filters",
                                ::hermes_runtime::__private::repair_node(
                                    ::hermes_runtime::__private::RepairNode::ACCEPTS_ARRAY,
                                    &[],
                                    &[],
                                ),
                            )]
                        },
                    ),
                ),
                ::hermes_runtime::__private::prop_plan(
                    "recursive",
                    ::hermes_runtime::__private::PropPlan::NULLABLE,
                    &[::hermes_runtime::__private::Kind::Boolean],
                    ::hermes_runtime::__private::RepairNode::INERT,
                ),
                ::hermes_runtime::__private::prop_plan(
                    "weird \"name\"\n",
                    0,
                    &[::hermes_runtime::__private::Kind::Integer],
                    ::hermes_runtime::__private::RepairNode::INERT,
                ),
            ]
        },
    );
