//! Property tests of argument coercion (`hermes_runtime::coerce_args`): idempotence, well-typed values left alone, no panics on arbitrary JSON.

use hermes_runtime::{coerce_args, CoercionPlan};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Strings that exercise the rules: numbers, words, JSON in a string, junk.
const STRINGS: &[&str] = &[
    "5",
    " 42 ",
    "-0",
    "1.5",
    "1e3",
    "1_000",
    "\u{661}\u{662}",
    "9007199254740993",
    "99999999999999999999",
    "nan",
    "-inf",
    "true",
    " FALSE ",
    "null",
    "NULL",
    "",
    "x",
    "[1]",
    " [\"5\", \"[2]\"] ",
    "[\"{\\\"a\\\": \\\"[1]\\\"}\"]",
    "{\"a\": \"[1]\", \"b\": \"5\"}",
    "{}",
    "[",
    "{\"type\": \"array\"}",
    "integer",
    "number",
    "boolean",
    "array",
    "object",
    "string",
];

/// Keys that exercise the schema reader, plus property names.
const KEYS: &[&str] = &[
    "type",
    "items",
    "properties",
    "anyOf",
    "oneOf",
    "allOf",
    "nullable",
    "a",
    "b",
    "v",
];

fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(STRINGS).prop_map(str::to_owned),
        1 => "\\PC{0,12}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        any_string().prop_map(Value::String),
    ]
}

/// Arbitrary nested JSON, biased towards schema keywords and tricky strings.
fn any_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(KEYS), inner, 0..6).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// A schema-shaped value: `type` (string, list or junk), `items`,
/// `properties`, `anyOf`/`oneOf`/`allOf`, `nullable`.
fn schema_like() -> impl Strategy<Value = Value> {
    let type_name = prop::sample::select(
        &[
            "integer", "number", "boolean", "string", "array", "object", "null", "other",
        ][..],
    )
    .prop_map(|t| Value::String(t.to_owned()));
    let ty = prop_oneof![
        6 => type_name.clone(),
        3 => prop::collection::vec(type_name, 0..4).prop_map(Value::Array),
        1 => leaf(),
    ];
    let base =
        (prop::option::weighted(0.9, ty), prop::bool::weighted(0.3)).prop_map(|(ty, nullable)| {
            let mut m = Map::new();
            if let Some(ty) = ty {
                m.insert("type".into(), ty);
            }
            if nullable {
                m.insert("nullable".into(), Value::Bool(true));
            }
            Value::Object(m)
        });
    let nested = base.clone().prop_recursive(3, 24, 3, |inner| {
        (
            inner.clone(),
            prop::option::of(inner.clone()),
            prop::collection::btree_map(
                prop::sample::select(&["a", "b", "v"][..]),
                inner.clone(),
                0..3,
            ),
            prop::option::of((
                prop::sample::select(&["anyOf", "oneOf", "allOf"][..]),
                prop::collection::vec(inner, 0..3),
            )),
        )
            .prop_map(|(base, items, props, union)| {
                let mut m = match base {
                    Value::Object(m) => m,
                    _ => Map::new(),
                };
                if let Some(items) = items {
                    m.insert("items".into(), items);
                }
                if !props.is_empty() {
                    let props = props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                    m.insert("properties".into(), Value::Object(props));
                }
                if let Some((key, branches)) = union {
                    m.insert(key.into(), Value::Array(branches));
                }
                Value::Object(m)
            })
    });
    prop_oneof![2 => base, 3 => nested]
}

/// An argument value: mostly tricky strings, or lists and objects of them,
/// or arbitrary JSON.
fn arg_value() -> impl Strategy<Value = Value> {
    let strings = any_string().prop_map(Value::String).boxed();
    prop_oneof![
        4 => strings.clone(),
        1 => prop::collection::vec(strings.clone(), 0..4).prop_map(Value::Array),
        1 => prop::collection::btree_map(prop::sample::select(&["a", "b", "v"][..]), strings, 0..4)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        2 => any_json(),
    ]
}

/// Argument objects keyed like the schemas of `params_like`.
fn args_like() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(
        prop::sample::select(&["a", "b", "v", "w"][..]),
        arg_value(),
        1..5,
    )
    .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
}

/// Parameters: either schema-shaped or entirely arbitrary.
fn params_like() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => prop::collection::btree_map(prop::sample::select(&["a", "b", "v"][..]), schema_like(), 1..4)
            .prop_map(|m| {
                let props = m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                let mut params = Map::new();
                params.insert("properties".into(), Value::Object(props));
                Value::Object(params)
            }),
        1 => any_json(),
    ]
}

/// A schema-shaped call: every schema property gets an argument, plus `w`.
fn call_like() -> impl Strategy<Value = (Value, Value)> {
    prop::collection::btree_map(
        prop::sample::select(&["a", "b", "v"][..]),
        (schema_like(), arg_value()),
        1..4,
    )
    .prop_map(|m| {
        let mut props = Map::new();
        let mut args = Map::new();
        for (k, (schema, value)) in m {
            props.insert(k.to_owned(), schema);
            args.insert(k.to_owned(), value);
        }
        args.insert("w".into(), Value::String("5".into()));
        let mut params = Map::new();
        params.insert("properties".into(), Value::Object(props));
        (Value::Object(params), Value::Object(args))
    })
}

/// A JSON type with a value generator, for the "well-typed values stay" property.
#[derive(Clone, Debug)]
enum Ty {
    Integer,
    Number,
    Boolean,
    String,
    Null,
    Array(Box<Ty>),
    Object(Vec<(&'static str, Ty)>),
    /// A non-string type that also permits null, with a native null value.
    Nullable(Box<Ty>),
}

fn any_ty() -> impl Strategy<Value = Ty> {
    let leaf = prop_oneof![
        Just(Ty::Integer),
        Just(Ty::Number),
        Just(Ty::Boolean),
        Just(Ty::String),
        Just(Ty::Null),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Ty::Array(Box::new(t))),
            prop::collection::btree_map(
                prop::sample::select(&["a", "b", "c"][..]),
                inner.clone(),
                0..4
            )
            .prop_map(|m| Ty::Object(m.into_iter().collect())),
            inner
                .prop_filter("strings cannot be nullable here", |t| !matches!(
                    t,
                    Ty::String
                ))
                .prop_map(|t| Ty::Nullable(Box::new(t))),
        ]
    })
}

fn schema_of(ty: &Ty) -> Value {
    let mut m = Map::new();
    let name = match ty {
        Ty::Integer => "integer",
        Ty::Number => "number",
        Ty::Boolean => "boolean",
        Ty::String => "string",
        Ty::Null => "null",
        Ty::Array(items) => {
            m.insert("items".into(), schema_of(items));
            "array"
        }
        Ty::Object(props) => {
            let props = props
                .iter()
                .map(|(k, t)| ((*k).to_owned(), schema_of(t)))
                .collect();
            m.insert("properties".into(), Value::Object(props));
            "object"
        }
        Ty::Nullable(inner) => {
            let mut schema = schema_of(inner);
            if let Value::Object(m) = &mut schema {
                m.insert("nullable".into(), Value::Bool(true));
            }
            return schema;
        }
    };
    m.insert("type".into(), Value::String(name.into()));
    Value::Object(m)
}

fn value_of(ty: &Ty) -> BoxedStrategy<Value> {
    match ty {
        Ty::Integer => any::<i64>().prop_map(Value::from).boxed(),
        Ty::Number => prop_oneof![
            any::<i64>().prop_map(Value::from),
            (-1e9f64..1e9).prop_map(Value::from),
        ]
        .boxed(),
        Ty::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        // Strings that look like numbers, booleans, null or JSON stay strings.
        Ty::String => any_string().prop_map(Value::String).boxed(),
        Ty::Null => Just(Value::Null).boxed(),
        Ty::Array(items) => prop::collection::vec(value_of(items), 0..4)
            .prop_map(Value::Array)
            .boxed(),
        Ty::Object(props) => {
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                .iter()
                .map(|(k, t)| {
                    let key = (*k).to_owned();
                    prop::option::of(value_of(t).prop_map(move |v| (key.clone(), v))).boxed()
                })
                .collect();
            fields
                .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
                .boxed()
        }
        Ty::Nullable(inner) => prop_oneof![Just(Value::Null), value_of(inner)].boxed(),
    }
}

/// `(parameters, args)` where every argument already has its schema's type,
/// plus extra keys the schema does not name.
fn well_typed_call() -> impl Strategy<Value = (Value, Value)> {
    prop::collection::btree_map(
        prop::sample::select(&["p", "q", "r", "s"][..]),
        any_ty(),
        1..5,
    )
    .prop_flat_map(|tys| {
        let schema = Ty::Object(tys.into_iter().collect());
        let params = schema_of(&schema);
        let extra =
            prop::collection::btree_map(prop::sample::select(&["x", "y"][..]), any_json(), 0..3);
        (Just(params), value_of(&schema), extra)
    })
    .prop_map(|(params, mut args, extra)| {
        if let Value::Object(m) = &mut args {
            m.extend(extra.into_iter().map(|(k, v)| (k.to_owned(), v)));
        }
        (params, args)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn coercion_is_idempotent((params, args) in call_like()) {
        let plan = CoercionPlan::compile(&params);
        let once = plan.apply(args);
        prop_assert_eq!(&once["w"], "5");
        let twice = plan.apply(once.clone());
        prop_assert_eq!(twice, once);
    }

    #[test]
    fn coercion_is_idempotent_for_loose_shapes(params in params_like(), args in args_like()) {
        let once = coerce_args(&params, args);
        prop_assert_eq!(coerce_args(&params, once.clone()), once);
    }

    #[test]
    fn well_typed_values_are_never_changed((params, args) in well_typed_call()) {
        prop_assert_eq!(coerce_args(&params, args.clone()), args);
    }

    #[test]
    fn arbitrary_json_never_panics(params in any_json(), args in any_json()) {
        let plan = CoercionPlan::compile(&params);
        let out = plan.apply(args.clone());
        prop_assert_eq!(&out, &coerce_args(&params, args.clone()));
        if !args.is_object() {
            prop_assert_eq!(out, args);
        }
    }

    #[test]
    fn arbitrary_properties_never_panic(
        props in prop::collection::btree_map(prop::sample::select(KEYS), any_json(), 0..5),
        args in args_like(),
    ) {
        let props: Map<String, Value> = props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let mut params = Map::new();
        params.insert("properties".into(), Value::Object(props));
        let params = Value::Object(params);
        let once = coerce_args(&params, args);
        prop_assert_eq!(coerce_args(&params, once.clone()), once);
    }
}
