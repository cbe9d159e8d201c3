//! Table-driven tests of `hermes_runtime::dialect`: exact outputs per dialect for
//! realistic tool schemas, conformance (`check(rewrite(x))` is empty), draft-07
//! meta-schema validity, meaning preservation on sample arguments, and rejections.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::dialect::{
    check, rewrite, sanitize_for_strict_backends, Dialect, DialectIssue,
};
use serde_json::{json, Value};

struct Case {
    tool: Value,
    openai: Value,
    strict: Value,
    gemini: Value,
    llama: Value,
    mcp: Value,
}

impl Case {
    fn expected(&self, dialect: Dialect) -> &Value {
        match dialect {
            Dialect::OpenAi => &self.openai,
            Dialect::OpenAiStrict => &self.strict,
            Dialect::Gemini => &self.gemini,
            Dialect::LlamaCpp => &self.llama,
            Dialect::Mcp => &self.mcp,
        }
    }

    fn name(&self) -> &str {
        self.tool["name"].as_str().unwrap()
    }
}

/// Sorts every `required` list, so comparisons do not depend on map order
/// (strict mode builds `required` from the `properties` map).
fn canon(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let x = match (k.as_str(), x) {
                        ("required", Value::Array(list)) => {
                            let mut list = list.clone();
                            list.sort_by_key(Value::to_string);
                            Value::Array(list)
                        }
                        _ => canon(x),
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(list) => Value::Array(list.iter().map(canon).collect()),
        other => other.clone(),
    }
}

/// The parameters schema inside a dialect-form tool (`None`: Gemini left it out).
fn parameters(out: &Value, dialect: Dialect) -> Option<&Value> {
    match dialect {
        Dialect::OpenAi | Dialect::OpenAiStrict | Dialect::LlamaCpp => {
            out["function"].get("parameters")
        }
        Dialect::Gemini => out.get("parameters"),
        Dialect::Mcp => out.get("inputSchema"),
    }
}

/// Reads Gemini's OpenAPI `nullable` back as JSON Schema, so instances can be
/// validated against Gemini output too.
fn gemini_as_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out: serde_json::Map<String, Value> = m
                .iter()
                .filter(|(k, _)| k.as_str() != "nullable")
                .map(|(k, x)| {
                    let x = match k.as_str() {
                        "properties" => Value::Object(
                            x.as_object()
                                .unwrap()
                                .iter()
                                .map(|(n, s)| (n.clone(), gemini_as_json_schema(s)))
                                .collect(),
                        ),
                        "items" => gemini_as_json_schema(x),
                        "anyOf" => Value::Array(
                            x.as_array()
                                .unwrap()
                                .iter()
                                .map(gemini_as_json_schema)
                                .collect(),
                        ),
                        _ => x.clone(),
                    };
                    (k.clone(), x)
                })
                .collect();
            if m.get("nullable") == Some(&Value::Bool(true)) {
                let description = out.remove("description");
                let mut wrapper = serde_json::Map::new();
                wrapper.insert(
                    "anyOf".into(),
                    json!([Value::Object(out), {"type": "null"}]),
                );
                if let Some(d) = description {
                    wrapper.insert("description".into(), d);
                }
                return Value::Object(wrapper);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn valid(schema: &Value, instance: &Value) -> bool {
    jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("not a usable schema ({e}): {schema}"))
        .is_valid(instance)
}

#[test]
fn exact_output_for_every_dialect() {
    for case in cases() {
        for dialect in Dialect::ALL {
            let out = rewrite(&case.tool, dialect)
                .unwrap_or_else(|e| panic!("{} / {dialect}: {e:?}", case.name()));
            assert_eq!(
                canon(&out),
                canon(case.expected(dialect)),
                "{} / {dialect}; got:\n{}",
                case.name(),
                serde_json::to_string_pretty(&out).unwrap()
            );
        }
    }
}

#[test]
fn every_output_conforms_and_is_a_draft07_schema() {
    let mut tools: Vec<Value> = cases().into_iter().map(|c| c.tool).collect();
    tools.extend(more_accepted_tools());
    for tool in &tools {
        for dialect in Dialect::ALL {
            let Ok(out) = rewrite(tool, dialect) else {
                // Only the extra tools may be refused, and only by constrained dialects.
                assert!(
                    !matches!(dialect, Dialect::OpenAi | Dialect::Mcp | Dialect::LlamaCpp),
                    "{} refused by {dialect}",
                    tool["name"]
                );
                continue;
            };
            assert_eq!(check(&out, dialect), vec![], "{} / {dialect}", tool["name"]);
            if let Some(params) = parameters(&out, dialect) {
                assert!(
                    jsonschema::draft7::meta::validate(params).is_ok(),
                    "{} / {dialect}: not a draft-07 schema: {params}",
                    tool["name"]
                );
                assert_eq!(params["type"], "object");
            }
            // Rewriting is idempotent on the dialect's own output.
            assert_eq!(
                canon(&rewrite(&out, dialect).unwrap()),
                canon(&out),
                "{} / {dialect} is not a fixed point",
                tool["name"]
            );
        }
    }
}

/// Tools outside the exact-output table, exercising more rewrites.
fn more_accepted_tools() -> Vec<Value> {
    vec![
        json!({"name": "optional_things", "description": "Optional object, array and enum.",
            "parameters": {"type": "object", "properties": {
                "opts": {"type": ["object", "null"], "description": "Options.",
                    "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "color": {"enum": ["red", "green", null]},
                "when": {"type": "string", "format": "date-time"},
                "id": {"type": "string", "format": "uuid"},
                "count": {"type": "integer", "format": "int32"},
                "ratio": {"type": "number", "format": "double"}}}}),
        json!({"name": "internally_tagged", "parameters": {"type": "object", "properties": {
            "op": {"oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "read"},
                    "path": {"type": "string"}}, "required": ["kind", "path"]},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "write"},
                    "path": {"type": "string"}, "text": {"type": "string"}},
                    "required": ["kind", "path", "text"]}]}},
            "required": ["op"]}}),
        json!({"name": "defs_2020", "parameters": {"type": "object",
            "$defs": {"Mode": {"type": "string", "enum": ["a", "b"], "description": "Mode."}},
            "properties": {"m": {"$ref": "#/$defs/Mode", "description": "Override."},
                "n": {"$ref": "#/$defs/Mode", "enum": ["a"]}},
            "required": ["m"]}}),
        json!({"name": "name_or_id", "parameters": {"type": "object", "properties": {
            "v": {"type": ["string", "integer", "null"], "minimum": 0,
                "description": "A name or an id."}}}}),
        json!({"name": "mergeable_all_of", "parameters": {"type": "object", "properties": {
            "a": {"allOf": [
                {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
                {"type": "object", "properties": {"y": {"type": "integer"}}}]}},
            "required": ["a"]}}),
        json!({"name": "bounds", "parameters": {"type": "object", "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "k": {"type": "string", "const": "file"},
            "small": {"type": "integer", "format": "uint8", "minimum": 1}},
            "required": ["n", "k", "small"]}}),
        json!({"name": "no_parameters_at_all", "description": "Takes nothing."}),
    ]
}

/// For each tool: argument objects and whether the original schema accepts them.
/// Every dialect that does not make properties required (all but strict) must
/// agree with the original on each of them.
fn argument_samples() -> Vec<(Value, Vec<Value>)> {
    let cases = cases();
    let tool = |name: &str| {
        cases
            .iter()
            .find(|c| c.name() == name)
            .unwrap()
            .tool
            .clone()
    };
    vec![
        (
            tool("read_file"),
            vec![
                json!({"path": "a"}),
                json!({"path": "a", "offset": 3}),
                json!({"path": "a", "offset": null, "limit": 10}),
                json!({}),
                json!({"path": 1}),
                json!({"path": "a", "offset": -1}),
                json!({"path": "a", "offset": 1.5}),
                json!({"path": "a", "limit": null}),
            ],
        ),
        (
            tool("search_files"),
            vec![
                json!({"pattern": "x", "mode": "files"}),
                json!({"pattern": "x", "mode": "files", "case": null}),
                json!({"pattern": "x", "mode": "files", "case": "smart", "max_results": 5}),
                json!({"pattern": "x", "mode": "lines"}),
                json!({"pattern": "x", "mode": "files", "case": "upper"}),
                json!({"pattern": "x", "mode": "files", "max_results": -1}),
                // (4294967296 is accepted by the original only because validators
                // treat `format: uint32` as an annotation; the rewrite writes its
                // `maximum`, see `format_bounds_are_written_out`.)
                json!({"pattern": "x", "mode": "files", "max_results": null}),
            ],
        ),
        (
            tool("patch"),
            vec![
                json!({"path": "a", "edits": [{"old": "x", "new": "y"}]}),
                json!({"path": "a", "edits": [{"old": "x", "new": "y", "replace_all": true}]}),
                json!({"path": "a", "edits": []}),
                json!({"path": "a", "edits": [{"old": "x"}]}),
                json!({"path": "a", "edits": [{"old": "x", "new": "y", "replace_all": null}]}),
            ],
        ),
        (
            tool("show_lines"),
            vec![
                json!({"range": {"start": 1}}),
                json!({"range": {"start": 1, "end": null}}),
                json!({"range": {"start": 1, "end": 4}}),
                json!({"range": {"start": 0}}),
                json!({"range": {"end": 4}}),
                json!({}),
            ],
        ),
        (
            tool("kill"),
            vec![
                json!({"target": "all"}),
                json!({"target": {"pid": 7}}),
                json!({"target": "some"}),
                json!({"target": {"pid": -1}}),
                json!({"target": {}}),
            ],
        ),
        (
            more_accepted_tools()[3].clone(),
            vec![
                json!({"v": "name"}),
                json!({"v": 3}),
                json!({"v": null}),
                json!({"v": -3}),
                json!({"v": true}),
            ],
        ),
        (
            more_accepted_tools()[5].clone(),
            vec![
                json!({"n": 1, "k": "file", "small": 1}),
                json!({"n": 9, "k": "file", "small": 255}),
                json!({"n": 0, "k": "file", "small": 1}),
                json!({"n": 10, "k": "file", "small": 1}),
                json!({"n": 5, "k": "dir", "small": 1}),
                json!({"n": 5, "k": "file", "small": 0}),
            ],
        ),
    ]
}

#[test]
fn rewritten_schemas_accept_the_same_arguments() {
    for (tool, samples) in argument_samples() {
        let original = &tool["parameters"];
        for dialect in [
            Dialect::OpenAi,
            Dialect::Gemini,
            Dialect::LlamaCpp,
            Dialect::Mcp,
        ] {
            let out = rewrite(&tool, dialect).unwrap();
            let schema = parameters(&out, dialect).unwrap();
            let schema = if dialect == Dialect::Gemini {
                gemini_as_json_schema(schema)
            } else {
                schema.clone()
            };
            for args in &samples {
                assert_eq!(
                    valid(&schema, args),
                    valid(original, args),
                    "{} / {dialect} disagrees with the original on {args}",
                    tool["name"]
                );
            }
        }
    }
}

/// Strict mode: an argument object is valid once every omitted optional
/// property is sent as `null`, and only then.
#[test]
fn strict_mode_takes_null_for_omitted_optionals() {
    let cases = cases();
    let read_file = &cases[0];
    let out = rewrite(&read_file.tool, Dialect::OpenAiStrict).unwrap();
    let schema = parameters(&out, Dialect::OpenAiStrict).unwrap();
    assert!(valid(
        schema,
        &json!({"path": "a", "offset": null, "limit": null})
    ));
    assert!(valid(
        schema,
        &json!({"path": "a", "offset": 2, "limit": 10})
    ));
    assert!(
        !valid(schema, &json!({"path": "a"})),
        "all keys are required"
    );
    assert!(!valid(
        schema,
        &json!({"path": null, "offset": null, "limit": null})
    ));
    assert!(!valid(
        schema,
        &json!({"path": "a", "offset": null, "limit": null, "x": 1})
    ));

    let show = cases.iter().find(|c| c.name() == "show_lines").unwrap();
    let out = rewrite(&show.tool, Dialect::OpenAiStrict).unwrap();
    let schema = parameters(&out, Dialect::OpenAiStrict).unwrap();
    assert!(valid(schema, &json!({"range": {"start": 1, "end": null}})));
    assert!(!valid(
        schema,
        &json!({"range": {"start": 4_294_967_296_u64, "end": null}})
    ));

    // Optional objects and arrays are wrapped in `anyOf [.., null]`.
    let out = rewrite(&more_accepted_tools()[0], Dialect::OpenAiStrict).unwrap();
    let props = &parameters(&out, Dialect::OpenAiStrict).unwrap()["properties"];
    assert_eq!(
        props["opts"],
        json!({"description": "Options.", "anyOf": [
            {"type": "object", "properties": {"x": {"type": "boolean"}},
                "required": ["x"], "additionalProperties": false},
            {"type": "null"}]})
    );
    assert_eq!(
        props["tags"],
        json!({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]})
    );
    assert_eq!(
        props["color"],
        json!({"type": ["string", "null"], "enum": ["red", "green", null]})
    );
    assert_eq!(
        props["count"],
        json!({"type": ["integer", "null"], "minimum": -2_147_483_648_i64, "maximum": 2_147_483_647})
    );
    assert_eq!(props["ratio"], json!({"type": ["number", "null"]}));
    assert_eq!(
        props["id"],
        json!({"type": ["string", "null"], "format": "uuid"})
    );
}

#[test]
fn format_bounds_are_written_out() {
    let tool = &cases()[1].tool;
    let too_big = json!({"pattern": "x", "mode": "files", "max_results": 4_294_967_296_u64});
    assert!(
        valid(&tool["parameters"], &too_big),
        "format is only an annotation"
    );
    for dialect in [Dialect::Gemini, Dialect::LlamaCpp] {
        let out = rewrite(tool, dialect).unwrap();
        let schema = parameters(&out, dialect).unwrap();
        assert!(
            !valid(&gemini_as_json_schema(schema), &too_big),
            "{dialect}"
        );
    }
    // OpenAI and MCP keep the format as it is.
    let out = rewrite(tool, Dialect::Mcp).unwrap();
    assert_eq!(
        out["inputSchema"]["properties"]["max_results"]["format"],
        "uint32"
    );
}

#[test]
fn more_rewrites_per_dialect() {
    let tools = more_accepted_tools();
    let params = |tool: &Value, d: Dialect| parameters(&rewrite(tool, d).unwrap(), d).cloned();

    // Gemini: nullable instead of type lists, formats it knows, `null` out of enums.
    let g = params(&tools[0], Dialect::Gemini).unwrap();
    assert_eq!(
        g["properties"]["opts"],
        json!({"type": "object", "description": "Options.", "nullable": true,
            "properties": {"x": {"type": "boolean"}}, "required": ["x"]})
    );
    assert_eq!(
        g["properties"]["color"],
        json!({"type": "string", "enum": ["red", "green"], "nullable": true})
    );
    assert_eq!(
        g["properties"]["when"],
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(g["properties"]["id"], json!({"type": "string"}));
    assert_eq!(
        g["properties"]["count"],
        json!({"type": "integer", "format": "int32"})
    );
    assert_eq!(
        g["properties"]["ratio"],
        json!({"type": "number", "format": "double"})
    );

    // llama.cpp: formats it knows, int32 bounds kept as numbers, nullable object split.
    let l = params(&tools[0], Dialect::LlamaCpp).unwrap();
    assert_eq!(
        l["properties"]["id"],
        json!({"type": "string", "format": "uuid"})
    );
    assert_eq!(
        l["properties"]["count"],
        json!({"type": "integer", "minimum": -2_147_483_648_i64, "maximum": 2_147_483_647})
    );
    assert_eq!(
        l["properties"]["opts"],
        json!({"description": "Options.", "anyOf": [
            {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
            {"type": "null"}]})
    );

    // Internally tagged `oneOf` becomes `anyOf` (the tags keep branches apart).
    for d in [Dialect::OpenAiStrict, Dialect::Gemini] {
        let p = params(&tools[1], d).unwrap();
        assert!(p["properties"]["op"].get("oneOf").is_none(), "{d}");
        assert_eq!(
            p["properties"]["op"]["anyOf"][0]["properties"]["kind"]["enum"],
            json!(["read"])
        );
    }
    let l = params(&tools[1], Dialect::LlamaCpp).unwrap();
    assert_eq!(
        l["properties"]["op"]["oneOf"][1]["properties"]["kind"]["const"],
        "write"
    );

    // `$defs` refs inline; a contradicting sibling `enum` is intersected.
    for d in Dialect::ALL {
        let p = params(&tools[2], d).unwrap();
        assert_eq!(p["properties"]["n"]["enum"][0], "a", "{d}");
        assert_eq!(p["properties"]["m"]["description"], "Override.", "{d}");
    }

    // Several non-null types: `anyOf`, one branch per type, keywords distributed.
    let g = params(&tools[3], Dialect::Gemini).unwrap();
    assert_eq!(
        g["properties"]["v"],
        json!({"description": "A name or an id.", "nullable": true,
            "anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]})
    );
    let s = params(&tools[3], Dialect::OpenAiStrict).unwrap();
    assert_eq!(
        s["properties"]["v"],
        json!({"description": "A name or an id.", "anyOf": [
            {"type": "string"}, {"type": "integer", "minimum": 0}, {"type": "null"}]})
    );

    // `allOf` of objects merges.
    let g = params(&tools[4], Dialect::Gemini).unwrap();
    assert_eq!(
        g["properties"]["a"],
        json!({"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"}},
            "required": ["x"]})
    );

    // Bounds: Gemini turns integer exclusive bounds inclusive and `const` into `enum`.
    let g = params(&tools[5], Dialect::Gemini).unwrap();
    assert_eq!(
        g["properties"]["n"],
        json!({"type": "integer", "minimum": 1, "maximum": 9})
    );
    assert_eq!(
        g["properties"]["k"],
        json!({"type": "string", "enum": ["file"]})
    );
    assert_eq!(
        g["properties"]["small"],
        json!({"type": "integer", "minimum": 1, "maximum": 255})
    );
    let s = params(&tools[5], Dialect::OpenAiStrict).unwrap();
    assert_eq!(
        s["properties"]["n"],
        json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10})
    );
    assert_eq!(
        s["properties"]["k"],
        json!({"type": "string", "enum": ["file"]})
    );

    // No `parameters` at all: an empty object everywhere, left out for Gemini.
    assert_eq!(
        rewrite(&tools[6], Dialect::Gemini).unwrap(),
        json!({"name": "no_parameters_at_all", "description": "Takes nothing."})
    );
    assert_eq!(
        rewrite(&tools[6], Dialect::Mcp).unwrap(),
        json!({"name": "no_parameters_at_all", "description": "Takes nothing.",
            "inputSchema": {"type": "object", "properties": {}}})
    );
}

/// One rejected construct: the tool, the dialects that must refuse it, and
/// (path, part of the message) of the issue each of them reports.
struct Rejection {
    tool: Value,
    refused_by: &'static [Dialect],
    path: &'static str,
    message: &'static str,
}

const ALL: &[Dialect] = &Dialect::ALL;
const CONSTRAINED: &[Dialect] = &[Dialect::OpenAiStrict, Dialect::Gemini, Dialect::LlamaCpp];
const STRICT_AND_GEMINI: &[Dialect] = &[Dialect::OpenAiStrict, Dialect::Gemini];

fn rejections() -> Vec<Rejection> {
    let props = |p: Value| json!({"name": "t", "parameters": {"type": "object", "properties": p}});
    vec![
        Rejection {
            tool: json!({"name": "tree", "parameters": {"type": "object",
                "properties": {"root": {"$ref": "#/definitions/Node"}}, "required": ["root"],
                "definitions": {"Node": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}},
                    "required": ["name", "children"]}}}}),
            refused_by: ALL,
            path: "/properties/root/properties/children/items",
            message: "recursive",
        },
        Rejection {
            tool: props(json!({"x": {"$ref": "#/definitions/Missing"}})),
            refused_by: ALL,
            path: "/properties/x",
            message: "does not resolve",
        },
        Rejection {
            tool: props(json!({"x": {"$ref": "https://example.com/schema.json"}})),
            refused_by: ALL,
            path: "/properties/x",
            message: "does not point into",
        },
        Rejection {
            tool: json!({"name": "t", "parameters": {"type": "string"}}),
            refused_by: ALL,
            path: "",
            message: "must have `\"type\": \"object\"`",
        },
        Rejection {
            tool: json!({"name": "read file!", "parameters": {"type": "object"}}),
            refused_by: ALL,
            path: "",
            message: "tool name",
        },
        Rejection {
            tool: json!({"name": "t", "description": 7}),
            refused_by: ALL,
            path: "",
            message: "`description` is not a string",
        },
        Rejection {
            tool: props(json!({"h": {"type": "object", "properties": {},
                "patternProperties": {"^x-": {"type": "string"}}}})),
            refused_by: CONSTRAINED,
            path: "/properties/h/patternProperties",
            message: "`patternProperties` cannot be expressed",
        },
        Rejection {
            // schemars' `NonZeroI32`.
            tool: props(json!({"n": {"type": "integer", "format": "int32", "not": {"const": 0}}})),
            refused_by: CONSTRAINED,
            path: "/properties/n/not",
            message: "`not` cannot be expressed",
        },
        Rejection {
            // schemars' `HashSet<String>`.
            tool: props(
                json!({"tags": {"type": "array", "items": {"type": "string"},
                "uniqueItems": true}}),
            ),
            refused_by: CONSTRAINED,
            path: "/properties/tags/uniqueItems",
            message: "`uniqueItems` cannot be expressed",
        },
        Rejection {
            tool: props(json!({"n": {"type": "integer", "multipleOf": 2}})),
            refused_by: &[Dialect::Gemini, Dialect::LlamaCpp],
            path: "/properties/n/multipleOf",
            message: "`multipleOf` cannot be expressed",
        },
        Rejection {
            // schemars' `HashMap<String, String>`.
            tool: props(json!({"env": {"type": "object",
                "additionalProperties": {"type": "string"}}})),
            refused_by: STRICT_AND_GEMINI,
            path: "/properties/env/additionalProperties",
            message: "map-like object",
        },
        Rejection {
            tool: props(json!({"meta": {"type": "object", "description": "Anything."}})),
            refused_by: STRICT_AND_GEMINI,
            path: "/properties/meta",
            message: "object",
        },
        Rejection {
            // A `serde_json::Value` parameter with a description.
            tool: props(json!({"value": {"description": "Any JSON value."}})),
            refused_by: STRICT_AND_GEMINI,
            path: "/properties/value",
            message: "without a type",
        },
        Rejection {
            tool: props(json!({"v": {"oneOf": [{"type": "integer"},
                {"type": "number", "minimum": 1}]}})),
            refused_by: STRICT_AND_GEMINI,
            path: "/properties/v/oneOf",
            message: "may overlap",
        },
        Rejection {
            tool: props(json!({"b": {"allOf": [{"type": "string"}, {"type": "integer"}]}})),
            refused_by: CONSTRAINED,
            path: "/properties/b/allOf",
            message: "share no type",
        },
        Rejection {
            tool: props(json!({"u": {"type": "string", "format": "uri"}})),
            refused_by: &[Dialect::OpenAiStrict],
            path: "/properties/u/format",
            message: "`format: uri` is not supported in strict mode",
        },
        Rejection {
            tool: props(json!({"s": {"type": "string", "minLength": 1}})),
            refused_by: &[Dialect::OpenAiStrict],
            path: "/properties/s/minLength",
            message: "`minLength` cannot be expressed",
        },
        Rejection {
            tool: props(json!({"b": {"type": "boolean", "const": true}})),
            refused_by: &[Dialect::Gemini],
            path: "/properties/b/const",
            message: "`const` of kind boolean",
        },
        Rejection {
            tool: props(json!({"r": {"type": "number", "exclusiveMinimum": 0}})),
            refused_by: &[Dialect::Gemini],
            path: "/properties/r/exclusiveMinimum",
            message: "non-integer",
        },
        Rejection {
            tool: props(json!({"n": {"type": "integer", "enum": [1, 2, 3]}})),
            refused_by: &[Dialect::Gemini],
            path: "/properties/n/enum",
            message: "strings only",
        },
        Rejection {
            tool: props(json!({"list": {"type": "array"}})),
            refused_by: STRICT_AND_GEMINI,
            path: "/properties/list",
            message: "without `items`",
        },
        Rejection {
            tool: props(json!({"pair": {"type": "array",
                "items": [{"type": "string"}, {"type": "integer"}]}})),
            refused_by: STRICT_AND_GEMINI,
            path: "/properties/pair/items",
            message: "tuple",
        },
        Rejection {
            tool: json!({"name": "t", "parameters": {"type": "object",
                "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}}),
            refused_by: STRICT_AND_GEMINI,
            path: "/required",
            message: "`b`",
        },
    ]
}

#[test]
fn rejections_name_the_construct_and_other_dialects_accept() {
    for r in rejections() {
        for dialect in Dialect::ALL {
            let result = rewrite(&r.tool, dialect);
            if !r.refused_by.contains(&dialect) {
                let out = result.unwrap_or_else(|e| panic!("{} / {dialect}: {e:?}", r.tool));
                assert_eq!(check(&out, dialect), vec![]);
                continue;
            }
            let issues = result.expect_err(&format!("{} / {dialect} should be refused", r.tool));
            assert!(issues.iter().all(|i| i.dialect == dialect), "{issues:?}");
            assert!(
                issues
                    .iter()
                    .any(|i| i.path == r.path && i.message.contains(r.message)),
                "{} / {dialect}: expected ({:?}, {:?}) in {issues:#?}",
                r.tool,
                r.path,
                r.message
            );
        }
    }
}

#[test]
fn every_issue_is_reported_at_once() {
    let tool = json!({"name": "t", "parameters": {"type": "object", "properties": {
        "a": {"type": "string", "format": "uri", "minLength": 2},
        "b": {"type": "integer", "not": {"const": 0}}}}});
    let issues = rewrite(&tool, Dialect::OpenAiStrict).unwrap_err();
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/properties/a/minLength",
            "/properties/a/format",
            "/properties/b/not"
        ]
    );
    assert_eq!(
        issues[2].to_string(),
        "openai-strict: /properties/b/not: `not` cannot be expressed for openai-strict; \
         dropping it would change what is accepted"
    );
}

#[test]
fn check_catches_non_conforming_outputs() {
    let f = |parameters: Value, strict: bool| {
        let mut function = json!({"name": "t", "parameters": parameters});
        if strict {
            function["strict"] = json!(true);
        }
        json!({"type": "function", "function": function})
    };
    let has = |issues: Vec<DialectIssue>, path: &str, text: &str| {
        assert!(
            issues
                .iter()
                .any(|i| i.path == path && i.message.contains(text)),
            "expected ({path:?}, {text:?}) in {issues:#?}"
        );
    };
    // Strict: open object, missing `required`, missing `strict: true`, bad format.
    has(
        check(
            &f(
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                true,
            ),
            Dialect::OpenAiStrict,
        ),
        "",
        "additionalProperties",
    );
    has(
        check(
            &f(
                json!({"type": "object", "properties": {"a": {"type": "string"}},
            "additionalProperties": false}),
                true,
            ),
            Dialect::OpenAiStrict,
        ),
        "",
        "every property listed in `required`",
    );
    has(
        check(
            &f(
                json!({"type": "object", "properties": {}, "required": [],
            "additionalProperties": false}),
                false,
            ),
            Dialect::OpenAiStrict,
        ),
        "",
        "\"strict\": true",
    );
    has(
        check(
            &f(
                json!({"type": "object", "properties": {"u": {"type": "string",
            "format": "uri"}}, "required": ["u"], "additionalProperties": false}),
                true,
            ),
            Dialect::OpenAiStrict,
        ),
        "/properties/u",
        "format: uri",
    );
    // Strict: more than 10 levels of object nesting.
    let mut deep = json!({"type": "object", "properties": {}, "required": [],
        "additionalProperties": false});
    for _ in 0..11 {
        deep = json!({"type": "object", "properties": {"d": deep}, "required": ["d"],
            "additionalProperties": false});
    }
    has(check(&f(deep, true), Dialect::OpenAiStrict), "/properties/d/properties/d/properties/d/properties/d/properties/d/properties/d/properties/d/properties/d/properties/d/properties/d", "10 levels");
    // Gemini: forbidden keys, type lists, non-string enums, empty nested objects.
    let g = |parameters: Value| json!({"name": "t", "parameters": parameters});
    has(
        check(
            &g(
                json!({"type": "object", "properties": {"a": {"type": "string"}},
            "additionalProperties": false}),
            ),
            Dialect::Gemini,
        ),
        "",
        "`additionalProperties` is not supported",
    );
    has(
        check(
            &g(json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}})),
            Dialect::Gemini,
        ),
        "/properties/a",
        "one non-null `type`",
    );
    has(
        check(
            &g(
                json!({"type": "object", "properties": {"a": {"type": "integer",
            "enum": [1]}}}),
            ),
            Dialect::Gemini,
        ),
        "/properties/a",
        "strings",
    );
    has(
        check(
            &g(
                json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {}}}}),
            ),
            Dialect::Gemini,
        ),
        "/properties/a",
        "no properties",
    );
    has(
        check(
            &g(json!({"type": "object", "properties": {}})),
            Dialect::Gemini,
        ),
        "",
        "left out",
    );
    has(
        check(
            &g(json!({"type": "object", "properties": {"a": {"$ref": "#/definitions/A"}}})),
            Dialect::Gemini,
        ),
        "/properties/a",
        "`$ref` is left",
    );
    // llama.cpp: bare object, unknown format, ignored keywords next to a type list.
    has(
        check(
            &f(
                json!({"type": "object", "properties": {"o": {"type": "object"}}}),
                false,
            ),
            Dialect::LlamaCpp,
        ),
        "/properties/o",
        "without `properties`",
    );
    has(
        check(
            &f(
                json!({"type": "object", "properties": {"u": {"type": "string",
            "format": "uri"}}}),
                false,
            ),
            Dialect::LlamaCpp,
        ),
        "/properties/u",
        "not known to llama.cpp",
    );
    has(
        check(
            &f(
                json!({"type": "object", "properties": {"e": {"type": ["string", "null"],
            "enum": ["a", null]}}}),
                false,
            ),
            Dialect::LlamaCpp,
        ),
        "/properties/e",
        "ignores",
    );
    has(
        check(
            &f(
                json!({"type": "object", "properties": {"v": {"description": "any"}}}),
                false,
            ),
            Dialect::LlamaCpp,
        ),
        "/properties/v",
        "does not recognize",
    );
    // MCP: `inputSchema` must be an object schema.
    has(
        check(
            &json!({"name": "t", "inputSchema": {"type": "string"}}),
            Dialect::Mcp,
        ),
        "",
        "\"type\": \"object\"",
    );
    has(
        check(&json!({"name": "t"}), Dialect::Mcp),
        "",
        "no `inputSchema`",
    );
    // OpenAI: the envelope.
    has(
        check(
            &json!({"name": "t", "parameters": {"type": "object", "properties": {}}}),
            Dialect::OpenAi,
        ),
        "",
        "`type` must be \"function\"",
    );
}

#[test]
fn baseline_inlines_refs_and_fills_bare_objects() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/definitions/A"},
            "b": {"$ref": "#/$defs/B", "description": "B here."},
            "any": true,
            "list": {"type": "array", "items": true}
        },
        "definitions": {"A": {"type": "object"}},
        "$defs": {"B": {"type": ["object", "null"], "properties": {"a": {"$ref": "#/definitions/A"}}}}
    });
    // The root keeps its `$schema` and definitions, as given; `$ref`s are inlined.
    assert_eq!(
        sanitize_for_strict_backends(&schema),
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"A": {"type": "object", "properties": {}}},
            "$defs": {"B": {"type": ["object", "null"], "properties": {"a": {"$ref": "#/definitions/A"}}}},
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {}},
                "b": {"type": ["object", "null"], "description": "B here.",
                    "properties": {"a": {"type": "object", "properties": {}}}},
                "any": {},
                "list": {"type": "array", "items": {}}
            }
        })
    );
    // A recursive ref stays, and so do the definitions it needs.
    let recursive = json!({"type": "object", "properties": {"n": {"$ref": "#/definitions/N"}},
        "definitions": {"N": {"type": "object", "properties": {"next": {"$ref": "#/definitions/N"}}}}});
    let out = sanitize_for_strict_backends(&recursive);
    assert_eq!(
        out["properties"]["n"]["properties"]["next"],
        json!({"$ref": "#/definitions/N"})
    );
    assert!(out["definitions"]["N"].is_object());
    assert!(valid(&out, &json!({"n": {"next": {"next": {}}}})));
    assert!(!valid(&out, &json!({"n": {"next": 3}})));
}

#[test]
fn deep_or_exploding_refs_are_bounded() {
    // Each level refers twice to the next: 2^30 copies if inlined naively.
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {
                "l": {"$ref": format!("#/definitions/D{}", i + 1)},
                "r": {"$ref": format!("#/definitions/D{}", i + 1)}}}),
        );
    }
    defs.insert("D30".into(), json!({"type": "string"}));
    let tool = json!({"name": "t", "parameters": {"type": "object",
        "properties": {"x": {"$ref": "#/definitions/D0"}}, "definitions": defs}});
    for dialect in Dialect::ALL {
        let issues = rewrite(&tool, dialect).unwrap_err();
        assert!(!issues.is_empty());
    }
    // A deeply nested schema is refused, not a stack overflow.
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"type": "array", "items": deep});
    }
    let tool = json!({"name": "t", "parameters": {"type": "object", "properties": {"d": deep}}});
    for dialect in Dialect::ALL {
        assert!(rewrite(&tool, dialect).is_err(), "{dialect}");
    }
}

#[test]
fn accepts_openai_and_mcp_shaped_input() {
    let plain = cases().remove(0).tool;
    let openai = rewrite(&plain, Dialect::OpenAi).unwrap();
    let mcp = rewrite(&plain, Dialect::Mcp).unwrap();
    for dialect in Dialect::ALL {
        let want = rewrite(&plain, dialect).unwrap();
        assert_eq!(rewrite(&openai, dialect).unwrap(), want, "{dialect}");
        assert_eq!(rewrite(&mcp, dialect).unwrap(), want, "{dialect}");
    }
}

#[test]
fn dialect_names_round_trip() {
    // ALL lists each dialect once: their names are distinct.
    let names: std::collections::BTreeSet<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
    assert_eq!(names.len(), Dialect::ALL.len(), "a dialect is listed twice");
    for d in Dialect::ALL {
        assert_eq!(Dialect::parse(d.name()), Some(d));
        assert_eq!(Dialect::parse(&d.name().to_uppercase()), Some(d));
        assert_eq!(d.to_string(), d.name());
    }
    assert_eq!(Dialect::parse("OpenAI_Strict"), Some(Dialect::OpenAiStrict));
    assert_eq!(Dialect::parse("llama.cpp"), Some(Dialect::LlamaCpp));
    assert_eq!(Dialect::parse("llamacpp"), Some(Dialect::LlamaCpp));
    assert_eq!(Dialect::parse("anthropic"), None);
    assert_eq!(Dialect::parse(""), None);
}

#[test]
fn dialect_from_str_agrees_with_parse_and_names_the_known_ones() {
    for s in [
        "openai",
        "OpenAI_Strict",
        "strict",
        "Gemini",
        "llama.cpp",
        "llama",
        "MCP",
    ] {
        assert_eq!(s.parse::<Dialect>().ok(), Dialect::parse(s), "{s}");
        // Every dialect a name parses to is one of ALL.
        let parsed = Dialect::parse(s).unwrap_or_else(|| panic!("{s} parses"));
        assert!(
            Dialect::ALL.contains(&parsed),
            "{parsed:?} missing from ALL"
        );
    }
    for bad in ["anthropic", "", "open ai strict x"] {
        let err = bad.parse::<Dialect>().unwrap_err();
        assert_eq!(err.input(), bad);
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("unknown dialect `{bad}`")),
            "{message}"
        );
        for d in Dialect::ALL {
            assert!(message.contains(d.name()), "{message} lacks {d}");
        }
    }
}

/// The realistic tools of the table, each with its exact output for every dialect.
fn cases() -> Vec<Case> {
    vec![
        // A file-read tool: a required string, an optional nullable `uint64`, and an
        // optional plain `uint64` with a default.
        Case {
            tool: json!({
                "name": "read_file",
                "description": "Read a text file.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Path to the file."},
                        "offset": {
                            "type": ["integer", "null"],
                            "format": "uint64",
                            "minimum": 0,
                            "description": "First line to return (1-based)."
                        },
                        "limit": {
                            "type": "integer",
                            "format": "uint64",
                            "minimum": 0,
                            "description": "Most lines to return.",
                            "default": 2000
                        }
                    },
                    "required": ["path"]
                }
            }),
            openai: json!({
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a text file.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "Path to the file."},
                            "offset": {
                                "type": ["integer", "null"],
                                "description": "First line to return (1-based).",
                                "format": "uint64",
                                "minimum": 0
                            },
                            "limit": {
                                "type": "integer",
                                "description": "Most lines to return.",
                                "format": "uint64",
                                "minimum": 0,
                                "default": 2000
                            }
                        },
                        "required": ["path"]
                    }
                }
            }),
            strict: json!({
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a text file.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "Path to the file."},
                            "offset": {
                                "type": ["integer", "null"],
                                "description": "First line to return (1-based).",
                                "minimum": 0
                            },
                            "limit": {
                                "type": ["integer", "null"],
                                "description": "Most lines to return.",
                                "minimum": 0
                            }
                        },
                        "required": ["path", "offset", "limit"],
                        "additionalProperties": false
                    },
                    "strict": true
                }
            }),
            gemini: json!({
                "name": "read_file",
                "description": "Read a text file.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Path to the file."},
                        "offset": {
                            "type": "integer",
                            "description": "First line to return (1-based).",
                            "nullable": true,
                            "minimum": 0
                        },
                        "limit": {
                            "type": "integer",
                            "description": "Most lines to return.",
                            "minimum": 0
                        }
                    },
                    "required": ["path"]
                }
            }),
            llama: json!({
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a text file.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "Path to the file."},
                            "offset": {
                                "description": "First line to return (1-based).",
                                "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]
                            },
                            "limit": {
                                "type": "integer",
                                "description": "Most lines to return.",
                                "minimum": 0,
                                "default": 2000
                            }
                        },
                        "required": ["path"]
                    }
                }
            }),
            mcp: json!({
                "name": "read_file",
                "description": "Read a text file.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Path to the file."},
                        "offset": {
                            "type": ["integer", "null"],
                            "description": "First line to return (1-based).",
                            "format": "uint64",
                            "minimum": 0
                        },
                        "limit": {
                            "type": "integer",
                            "description": "Most lines to return.",
                            "format": "uint64",
                            "minimum": 0,
                            "default": 2000
                        }
                    },
                    "required": ["path"]
                }
            }),
        },
        // Two enums (one optional and nullable, as schemars writes `Option<Enum>`)
        // and a `uint32`.
        Case {
            tool: json!({
                "name": "search_files",
                "description": "Search file contents or names.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "description": "Regex to search for."},
                        "mode": {
                            "type": "string",
                            "enum": ["content", "files"],
                            "description": "What to match."
                        },
                        "case": {
                            "type": ["string", "null"],
                            "enum": ["smart", "sensitive", "insensitive", null],
                            "description": "Case handling."
                        },
                        "max_results": {"type": "integer", "format": "uint32", "minimum": 0}
                    },
                    "required": ["pattern", "mode"]
                }
            }),
            openai: json!({
                "type": "function",
                "function": {
                    "name": "search_files",
                    "description": "Search file contents or names.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "pattern": {"type": "string", "description": "Regex to search for."},
                            "mode": {
                                "type": "string",
                                "description": "What to match.",
                                "enum": ["content", "files"]
                            },
                            "case": {
                                "type": ["string", "null"],
                                "description": "Case handling.",
                                "enum": ["smart", "sensitive", "insensitive", null]
                            },
                            "max_results": {"type": "integer", "format": "uint32", "minimum": 0}
                        },
                        "required": ["pattern", "mode"]
                    }
                }
            }),
            strict: json!({
                "type": "function",
                "function": {
                    "name": "search_files",
                    "description": "Search file contents or names.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "pattern": {"type": "string", "description": "Regex to search for."},
                            "mode": {
                                "type": "string",
                                "description": "What to match.",
                                "enum": ["content", "files"]
                            },
                            "case": {
                                "type": ["string", "null"],
                                "description": "Case handling.",
                                "enum": ["smart", "sensitive", "insensitive", null]
                            },
                            "max_results": {
                                "type": ["integer", "null"],
                                "minimum": 0,
                                "maximum": u32::MAX
                            }
                        },
                        "required": ["pattern", "mode", "case", "max_results"],
                        "additionalProperties": false
                    },
                    "strict": true
                }
            }),
            gemini: json!({
                "name": "search_files",
                "description": "Search file contents or names.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "description": "Regex to search for."},
                        "mode": {
                            "type": "string",
                            "description": "What to match.",
                            "enum": ["content", "files"]
                        },
                        "case": {
                            "type": "string",
                            "description": "Case handling.",
                            "enum": ["smart", "sensitive", "insensitive"],
                            "nullable": true
                        },
                        "max_results": {"type": "integer", "minimum": 0, "maximum": u32::MAX}
                    },
                    "required": ["pattern", "mode"]
                }
            }),
            llama: json!({
                "type": "function",
                "function": {
                    "name": "search_files",
                    "description": "Search file contents or names.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "pattern": {"type": "string", "description": "Regex to search for."},
                            "mode": {
                                "type": "string",
                                "description": "What to match.",
                                "enum": ["content", "files"]
                            },
                            "case": {
                                "description": "Case handling.",
                                "anyOf": [
                                    {
                                        "type": "string",
                                        "enum": ["smart", "sensitive", "insensitive"]
                                    },
                                    {"type": "null"}
                                ]
                            },
                            "max_results": {
                                "type": "integer",
                                "minimum": 0,
                                "maximum": u32::MAX
                            }
                        },
                        "required": ["pattern", "mode"]
                    }
                }
            }),
            mcp: json!({
                "name": "search_files",
                "description": "Search file contents or names.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string", "description": "Regex to search for."},
                        "mode": {
                            "type": "string",
                            "description": "What to match.",
                            "enum": ["content", "files"]
                        },
                        "case": {
                            "type": ["string", "null"],
                            "description": "Case handling.",
                            "enum": ["smart", "sensitive", "insensitive", null]
                        },
                        "max_results": {"type": "integer", "format": "uint32", "minimum": 0}
                    },
                    "required": ["pattern", "mode"]
                }
            }),
        },
        // A nested array of objects with an optional boolean, a `title` and a `default`.
        Case {
            tool: json!({
                "name": "patch",
                "description": "Apply edits to a file.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "edits": {
                            "type": "array",
                            "minItems": 1,
                            "description": "Edits, applied in order.",
                            "items": {
                                "type": "object",
                                "title": "Edit",
                                "properties": {
                                    "old": {"type": "string"},
                                    "new": {"type": "string"},
                                    "replace_all": {"type": "boolean", "default": false}
                                },
                                "required": ["old", "new"]
                            }
                        }
                    },
                    "required": ["path", "edits"]
                }
            }),
            openai: json!({
                "type": "function",
                "function": {
                    "name": "patch",
                    "description": "Apply edits to a file.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string"},
                            "edits": {
                                "type": "array",
                                "description": "Edits, applied in order.",
                                "minItems": 1,
                                "items": {
                                    "type": "object",
                                    "title": "Edit",
                                    "properties": {
                                        "old": {"type": "string"},
                                        "new": {"type": "string"},
                                        "replace_all": {"type": "boolean", "default": false}
                                    },
                                    "required": ["old", "new"]
                                }
                            }
                        },
                        "required": ["path", "edits"]
                    }
                }
            }),
            strict: json!({
                "type": "function",
                "function": {
                    "name": "patch",
                    "description": "Apply edits to a file.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string"},
                            "edits": {
                                "type": "array",
                                "description": "Edits, applied in order.",
                                "minItems": 1,
                                "items": {
                                    "type": "object",
                                    "title": "Edit",
                                    "properties": {
                                        "old": {"type": "string"},
                                        "new": {"type": "string"},
                                        "replace_all": {"type": ["boolean", "null"]}
                                    },
                                    "required": ["old", "new", "replace_all"],
                                    "additionalProperties": false
                                }
                            }
                        },
                        "required": ["path", "edits"],
                        "additionalProperties": false
                    },
                    "strict": true
                }
            }),
            gemini: json!({
                "name": "patch",
                "description": "Apply edits to a file.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "edits": {
                            "type": "array",
                            "description": "Edits, applied in order.",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "old": {"type": "string"},
                                    "new": {"type": "string"},
                                    "replace_all": {"type": "boolean"}
                                },
                                "required": ["old", "new"]
                            }
                        }
                    },
                    "required": ["path", "edits"]
                }
            }),
            llama: json!({
                "type": "function",
                "function": {
                    "name": "patch",
                    "description": "Apply edits to a file.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string"},
                            "edits": {
                                "type": "array",
                                "description": "Edits, applied in order.",
                                "minItems": 1,
                                "items": {
                                    "type": "object",
                                    "title": "Edit",
                                    "properties": {
                                        "old": {"type": "string"},
                                        "new": {"type": "string"},
                                        "replace_all": {"type": "boolean", "default": false}
                                    },
                                    "required": ["old", "new"]
                                }
                            }
                        },
                        "required": ["path", "edits"]
                    }
                }
            }),
            mcp: json!({
                "name": "patch",
                "description": "Apply edits to a file.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "edits": {
                            "type": "array",
                            "description": "Edits, applied in order.",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "title": "Edit",
                                "properties": {
                                    "old": {"type": "string"},
                                    "new": {"type": "string"},
                                    "replace_all": {"type": "boolean", "default": false}
                                },
                                "required": ["old", "new"]
                            }
                        }
                    },
                    "required": ["path", "edits"]
                }
            }),
        },
        // A `$ref` into `definitions` with a sibling `description`, plus `$schema`.
        Case {
            tool: json!({
                "name": "show_lines",
                "description": "Show a line range.",
                "parameters": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "properties": {
                        "range": {
                            "$ref": "#/definitions/LineRange",
                            "description": "Lines to show."
                        }
                    },
                    "required": ["range"],
                    "definitions": {
                        "LineRange": {
                            "type": "object",
                            "properties": {
                                "start": {"type": "integer", "format": "uint32", "minimum": 1},
                                "end": {
                                    "type": ["integer", "null"],
                                    "format": "uint32",
                                    "minimum": 0
                                }
                            },
                            "required": ["start"]
                        }
                    }
                }
            }),
            // The root's `$schema` and definitions stay (unconstrained dialects).
            openai: json!({
                "type": "function",
                "function": {
                    "name": "show_lines",
                    "description": "Show a line range.",
                    "parameters": {
                        "$schema": "http://json-schema.org/draft-07/schema#",
                        "definitions": {
                            "LineRange": {
                                "type": "object",
                                "properties": {
                                    "start": {"type": "integer", "format": "uint32", "minimum": 1},
                                    "end": {
                                        "type": ["integer", "null"],
                                        "format": "uint32",
                                        "minimum": 0
                                    }
                                },
                                "required": ["start"]
                            }
                        },
                        "type": "object",
                        "properties": {
                            "range": {
                                "type": "object",
                                "description": "Lines to show.",
                                "properties": {
                                    "end": {
                                        "type": ["integer", "null"],
                                        "format": "uint32",
                                        "minimum": 0
                                    },
                                    "start": {
                                        "type": "integer",
                                        "format": "uint32",
                                        "minimum": 1
                                    }
                                },
                                "required": ["start"]
                            }
                        },
                        "required": ["range"]
                    }
                }
            }),
            strict: json!({
                "type": "function",
                "function": {
                    "name": "show_lines",
                    "description": "Show a line range.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "range": {
                                "type": "object",
                                "description": "Lines to show.",
                                "properties": {
                                    "end": {
                                        "type": ["integer", "null"],
                                        "minimum": 0,
                                        "maximum": u32::MAX
                                    },
                                    "start": {
                                        "type": "integer",
                                        "minimum": 1,
                                        "maximum": u32::MAX
                                    }
                                },
                                "required": ["end", "start"],
                                "additionalProperties": false
                            }
                        },
                        "required": ["range"],
                        "additionalProperties": false
                    },
                    "strict": true
                }
            }),
            gemini: json!({
                "name": "show_lines",
                "description": "Show a line range.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "range": {
                            "type": "object",
                            "description": "Lines to show.",
                            "properties": {
                                "end": {
                                    "type": "integer",
                                    "nullable": true,
                                    "minimum": 0,
                                    "maximum": u32::MAX
                                },
                                "start": {"type": "integer", "minimum": 1, "maximum": u32::MAX}
                            },
                            "required": ["start"]
                        }
                    },
                    "required": ["range"]
                }
            }),
            llama: json!({
                "type": "function",
                "function": {
                    "name": "show_lines",
                    "description": "Show a line range.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "range": {
                                "type": "object",
                                "description": "Lines to show.",
                                "properties": {
                                    "end": {
                                        "anyOf": [
                                            {
                                                "type": "integer",
                                                "minimum": 0,
                                                "maximum": u32::MAX
                                            },
                                            {"type": "null"}
                                        ]
                                    },
                                    "start": {
                                        "type": "integer",
                                        "minimum": 1,
                                        "maximum": u32::MAX
                                    }
                                },
                                "required": ["start"]
                            }
                        },
                        "required": ["range"]
                    }
                }
            }),
            mcp: json!({
                "name": "show_lines",
                "description": "Show a line range.",
                "inputSchema": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "definitions": {
                        "LineRange": {
                            "type": "object",
                            "properties": {
                                "start": {"type": "integer", "format": "uint32", "minimum": 1},
                                "end": {
                                    "type": ["integer", "null"],
                                    "format": "uint32",
                                    "minimum": 0
                                }
                            },
                            "required": ["start"]
                        }
                    },
                    "type": "object",
                    "properties": {
                        "range": {
                            "type": "object",
                            "description": "Lines to show.",
                            "properties": {
                                "end": {
                                    "type": ["integer", "null"],
                                    "format": "uint32",
                                    "minimum": 0
                                },
                                "start": {"type": "integer", "format": "uint32", "minimum": 1}
                            },
                            "required": ["start"]
                        }
                    },
                    "required": ["range"]
                }
            }),
        },
        // A tool without arguments: a bare `{"type": "object"}`.
        Case {
            tool: json!({
                "name": "list_sessions",
                "description": "List the open sessions.",
                "parameters": {"type": "object"}
            }),
            openai: json!({
                "type": "function",
                "function": {
                    "name": "list_sessions",
                    "description": "List the open sessions.",
                    "parameters": {"type": "object", "properties": {}}
                }
            }),
            strict: json!({
                "type": "function",
                "function": {
                    "name": "list_sessions",
                    "description": "List the open sessions.",
                    "parameters": {
                        "type": "object",
                        "properties": {},
                        "required": [],
                        "additionalProperties": false
                    },
                    "strict": true
                }
            }),
            gemini: json!({"name": "list_sessions", "description": "List the open sessions."}),
            llama: json!({
                "type": "function",
                "function": {
                    "name": "list_sessions",
                    "description": "List the open sessions.",
                    "parameters": {"type": "object", "properties": {}}
                }
            }),
            mcp: json!({
                "name": "list_sessions",
                "description": "List the open sessions.",
                "inputSchema": {"type": "object", "properties": {}}
            }),
        },
        // An externally tagged enum: `oneOf` of a string enum and a closed object.
        Case {
            tool: json!({
                "name": "kill",
                "description": "Stop processes.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "target": {
                            "description": "Which processes.",
                            "oneOf": [
                                {"type": "string", "enum": ["all"]},
                                {
                                    "type": "object",
                                    "properties": {
                                        "pid": {
                                            "type": "integer",
                                            "format": "uint32",
                                            "minimum": 0
                                        }
                                    },
                                    "required": ["pid"],
                                    "additionalProperties": false
                                }
                            ]
                        }
                    },
                    "required": ["target"]
                }
            }),
            openai: json!({
                "type": "function",
                "function": {
                    "name": "kill",
                    "description": "Stop processes.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "target": {
                                "description": "Which processes.",
                                "oneOf": [
                                    {"type": "string", "enum": ["all"]},
                                    {
                                        "type": "object",
                                        "properties": {
                                            "pid": {
                                                "type": "integer",
                                                "format": "uint32",
                                                "minimum": 0
                                            }
                                        },
                                        "required": ["pid"],
                                        "additionalProperties": false
                                    }
                                ]
                            }
                        },
                        "required": ["target"]
                    }
                }
            }),
            strict: json!({
                "type": "function",
                "function": {
                    "name": "kill",
                    "description": "Stop processes.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "target": {
                                "description": "Which processes.",
                                "anyOf": [
                                    {"type": "string", "enum": ["all"]},
                                    {
                                        "type": "object",
                                        "properties": {
                                            "pid": {
                                                "type": "integer",
                                                "minimum": 0,
                                                "maximum": u32::MAX
                                            }
                                        },
                                        "required": ["pid"],
                                        "additionalProperties": false
                                    }
                                ]
                            }
                        },
                        "required": ["target"],
                        "additionalProperties": false
                    },
                    "strict": true
                }
            }),
            gemini: json!({
                "name": "kill",
                "description": "Stop processes.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "target": {
                            "description": "Which processes.",
                            "anyOf": [
                                {"type": "string", "enum": ["all"]},
                                {
                                    "type": "object",
                                    "properties": {
                                        "pid": {
                                            "type": "integer",
                                            "minimum": 0,
                                            "maximum": u32::MAX
                                        }
                                    },
                                    "required": ["pid"]
                                }
                            ]
                        }
                    },
                    "required": ["target"]
                }
            }),
            llama: json!({
                "type": "function",
                "function": {
                    "name": "kill",
                    "description": "Stop processes.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "target": {
                                "description": "Which processes.",
                                "oneOf": [
                                    {"type": "string", "enum": ["all"]},
                                    {
                                        "type": "object",
                                        "properties": {
                                            "pid": {
                                                "type": "integer",
                                                "minimum": 0,
                                                "maximum": u32::MAX
                                            }
                                        },
                                        "required": ["pid"],
                                        "additionalProperties": false
                                    }
                                ]
                            }
                        },
                        "required": ["target"]
                    }
                }
            }),
            mcp: json!({
                "name": "kill",
                "description": "Stop processes.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "target": {
                            "description": "Which processes.",
                            "oneOf": [
                                {"type": "string", "enum": ["all"]},
                                {
                                    "type": "object",
                                    "properties": {
                                        "pid": {
                                            "type": "integer",
                                            "format": "uint32",
                                            "minimum": 0
                                        }
                                    },
                                    "required": ["pid"],
                                    "additionalProperties": false
                                }
                            ]
                        }
                    },
                    "required": ["target"]
                }
            }),
        },
    ]
}
