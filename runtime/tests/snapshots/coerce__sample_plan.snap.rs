//! Snapshot of `CoercionPlan::to_rust_expr` for `sample_schema()` in tests/coerce.rs, compiled there as a static.

#[rustfmt::skip]
pub static SAMPLE_PLAN: ::hermes_runtime::__private::CoercionPlan =
::hermes_runtime::__private::CoercionPlan {
    props: ::std::borrow::Cow::Borrowed(&[
        ::hermes_runtime::__private::PropPlan {
            name: ::std::borrow::Cow::Borrowed("tags"),
            flags: ::hermes_runtime::__private::PropPlan::ARRAY,
            kinds: ::std::borrow::Cow::Borrowed(&[::hermes_runtime::__private::Kind::Array]),
            node: ::hermes_runtime::__private::RepairNode::INERT,
        },
        ::hermes_runtime::__private::PropPlan {
            name: ::std::borrow::Cow::Borrowed("limit"),
            flags: 0,
            kinds: ::std::borrow::Cow::Borrowed(&[::hermes_runtime::__private::Kind::Integer]),
            node: ::hermes_runtime::__private::RepairNode::INERT,
        },
        ::hermes_runtime::__private::PropPlan {
            name: ::std::borrow::Cow::Borrowed("ratio"),
            flags: ::hermes_runtime::__private::PropPlan::NULLABLE,
            kinds: ::std::borrow::Cow::Borrowed(&[::hermes_runtime::__private::Kind::Number]),
            node: ::hermes_runtime::__private::RepairNode::INERT,
        },
        ::hermes_runtime::__private::PropPlan {
            name: ::std::borrow::Cow::Borrowed("todos"),
            flags: ::hermes_runtime::__private::PropPlan::ARRAY,
            kinds: ::std::borrow::Cow::Borrowed(&[::hermes_runtime::__private::Kind::Array]),
            node: ::hermes_runtime::__private::RepairNode {
                accepts: 0,
                items: ::std::borrow::Cow::Borrowed(&[
                    ::hermes_runtime::__private::RepairNode {
                        accepts: ::hermes_runtime::__private::RepairNode::ACCEPTS_OBJECT,
                        items: ::std::borrow::Cow::Borrowed(&[]),
                        props: ::std::borrow::Cow::Borrowed(&[
                            ::hermes_runtime::__private::RepairProp {
                                name: ::std::borrow::Cow::Borrowed("deps"),
                                node: ::hermes_runtime::__private::RepairNode {
                                    accepts: ::hermes_runtime::__private::RepairNode::ACCEPTS_ARRAY,
                                    items: ::std::borrow::Cow::Borrowed(&[]),
                                    props: ::std::borrow::Cow::Borrowed(&[]),
                                },
                            },
                            ::hermes_runtime::__private::RepairProp {
                                name: ::std::borrow::Cow::Borrowed("meta"),
                                node: ::hermes_runtime::__private::RepairNode {
                                    accepts: ::hermes_runtime::__private::RepairNode::ACCEPTS_OBJECT,
                                    items: ::std::borrow::Cow::Borrowed(&[]),
                                    props: ::std::borrow::Cow::Borrowed(&[]),
                                },
                            },
                        ]),
                    },
                ]),
                props: ::std::borrow::Cow::Borrowed(&[]),
            },
        },
        ::hermes_runtime::__private::PropPlan {
            name: ::std::borrow::Cow::Borrowed("options"),
            flags: ::hermes_runtime::__private::PropPlan::OBJECT,
            kinds: ::std::borrow::Cow::Borrowed(&[::hermes_runtime::__private::Kind::Object]),
            node: ::hermes_runtime::__private::RepairNode {
                accepts: 0,
                items: ::std::borrow::Cow::Borrowed(&[]),
                props: ::std::borrow::Cow::Borrowed(&[
                    ::hermes_runtime::__private::RepairProp {
                        name: ::std::borrow::Cow::Borrowed("filters"),
                        node: ::hermes_runtime::__private::RepairNode {
                            accepts: ::hermes_runtime::__private::RepairNode::ACCEPTS_ARRAY,
                            items: ::std::borrow::Cow::Borrowed(&[]),
                            props: ::std::borrow::Cow::Borrowed(&[]),
                        },
                    },
                ]),
            },
        },
        ::hermes_runtime::__private::PropPlan {
            name: ::std::borrow::Cow::Borrowed("recursive"),
            flags: ::hermes_runtime::__private::PropPlan::NULLABLE,
            kinds: ::std::borrow::Cow::Borrowed(&[::hermes_runtime::__private::Kind::Boolean]),
            node: ::hermes_runtime::__private::RepairNode::INERT,
        },
        ::hermes_runtime::__private::PropPlan {
            name: ::std::borrow::Cow::Borrowed("weird \"name\"\n"),
            flags: 0,
            kinds: ::std::borrow::Cow::Borrowed(&[::hermes_runtime::__private::Kind::Integer]),
            node: ::hermes_runtime::__private::RepairNode::INERT,
        },
    ]),
};
