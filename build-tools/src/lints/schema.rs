//! Schema-level lints: they need every tool's dumped `parameters`
//! (feature `schema`, which brings the `jsonschema` crate).

use std::collections::{BTreeMap, BTreeSet};

use hermes_runtime::dialect::walk::{child_pointer, for_each_schema};
use hermes_runtime::dialect::{rewrite, Dialect};
use hermes_tool_model::lints::*;
use hermes_tool_model::ParamKind;
use serde_json::{json, Map, Value};

use crate::discover::DiscoveredTool;
use crate::Diagnostic;

use super::base::{Crate, PAGINATION_PARAMS};
use super::location::{on_param, Place, Text};
use super::source::{foreign_tools, home_paths, pagination, InstructionalToolsets, ToolNames};

/// Every schema-level lint, over `schemas` (tool name → `parameters`).
pub fn check_schemas(
    c: Crate<'_>,
    schemas: &BTreeMap<String, serde_json::Value>,
) -> Vec<Diagnostic> {
    check(c, schemas)
}

fn check(c: Crate<'_>, schemas: &BTreeMap<String, Value>) -> Vec<Diagnostic> {
    let names = ToolNames::new(c.discovery, c.table);
    let instructional = InstructionalToolsets::new(c.table);
    let meta = jsonschema::draft7::meta::validator();
    let mut out = Vec::new();
    for (_, t) in c.discovery.tools() {
        let Some(parameters) = schemas.get(&t.tool.name) else {
            out.push(
                Diagnostic::error(format!(
                    "no compiled schema for `{}`: the registry is older than the sources",
                    t.tool.name
                ))
                .at_span(&t.file, t.name_span())
                .help("run `cargo hermes gen` (`cargo xtask gen` in the hermes-tools workspace)"),
            );
            continue;
        };
        let source = c.discovery.sources.get(&t.file).map_or("", String::as_str);
        let here = Place { tool: t, source };
        // A schema that is not valid JSON Schema, or not an object, is
        // reported once, not again by every dialect.
        if invalid_schema(t, parameters, &meta, &mut out) {
            dialects(t, parameters, &mut out);
        }
        nested_texts(&here, &names, parameters, &mut out);
        args_struct_properties(t, &instructional, parameters, &mut out);
    }
    let known: BTreeSet<&str> = c
        .discovery
        .tools()
        .map(|(_, t)| t.tool.name.as_str())
        .collect();
    for name in schemas.keys().filter(|n| !known.contains(n.as_str())) {
        out.push(
            Diagnostic::error(format!(
                "the compiled registry has `{name}`, which the sources no longer define"
            ))
            .help("run `cargo hermes gen` (`cargo xtask gen` in the hermes-tools workspace)"),
        );
    }
    out
}

fn has_type(map: &Map<String, Value>, ty: &str) -> bool {
    match map.get("type") {
        Some(Value::String(s)) => s == ty,
        Some(Value::Array(types)) => types.iter().any(|t| t == ty),
        _ => false,
    }
}

fn show(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

/// Rule 8: the meta-schema, and what function-calling providers accept.
/// `false` when the schema is not valid JSON Schema or not an object.
fn invalid_schema(
    t: &DiscoveredTool,
    parameters: &Value,
    meta: &jsonschema::meta::MetaValidator<'_>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let name = &t.tool.name;
    let mut first_path = None;
    let errors: Vec<String> = meta
        .iter_errors(parameters)
        .map(|e| {
            let path = e.instance_path().as_str().to_owned();
            let line = format!("at {}: {e}", show(&path));
            first_path.get_or_insert(path);
            line
        })
        .collect();
    let mut valid = errors.is_empty();
    if !errors.is_empty() {
        let mut d = t
            .diagnostic(
                INVALID_SCHEMA,
                format!("the parameters schema of `{name}` is not valid JSON Schema (draft-07)"),
            )
            .label("its schema is invalid");
        for e in errors {
            d = d.note(e);
        }
        let d = on_param(t, first_path.as_deref().unwrap_or_default(), d);
        out.push(d.help("fix the parameter types' `JsonSchema` implementations"));
    }
    match parameters.as_object() {
        Some(root)
            if has_type(root, "object") && !root.get("type").is_some_and(Value::is_array) => {}
        _ => {
            valid = false;
            out.push(
            t.diagnostic(
                INVALID_SCHEMA,
                format!("the parameters of `{name}` are not an object schema"),
            )
            .label("its parameters")
            .note("function-calling providers take the arguments as one JSON object: `parameters` must have `\"type\": \"object\"`"),
        );
        }
    }
    let mut problems = Vec::new();
    for_each_schema(parameters, |pointer, map| {
        if map.contains_key("$ref") {
            problems.push((
                pointer.to_owned(),
                format!("the parameters schema of `{name}` uses `$ref` at `{}`", show(pointer)),
                "providers need every subschema inlined; schemars inlines them unless a type is recursive",
            ));
        }
        if has_type(map, "object") && !map.contains_key("properties") {
            problems.push((
                pointer.to_owned(),
                format!(
                    "the parameters schema of `{name}` has an object without `properties` at `{}`",
                    show(pointer)
                ),
                "strict backends (llama.cpp's grammar converter, OpenAI strict mode, Gemini) reject a bare object; use a struct with named fields",
            ));
        }
    });
    for (pointer, message, note) in problems {
        let d = t
            .diagnostic(INVALID_SCHEMA, message)
            .label("in this tool's parameters")
            .note(note);
        let d = on_param(t, &pointer, d);
        out.push(d);
    }
    valid
}

/// Rule 11: every provider dialect can carry the schema.
fn dialects(t: &DiscoveredTool, parameters: &Value, out: &mut Vec<Diagnostic>) {
    let tool = json!({
        "name": t.tool.name,
        "description": t.tool.description,
        "parameters": parameters,
    });
    for dialect in Dialect::ALL {
        let Err(issues) = rewrite(&tool, dialect) else {
            continue;
        };
        let mut d = t
            .diagnostic(
                DIALECT_INCOMPATIBLE,
                format!(
                    "the schema of `{}` does not rewrite into the `{dialect}` dialect",
                    t.tool.name
                ),
            )
            .label(format!("not for {dialect}"));
        if let Some(first) = issues.first() {
            d = on_param(t, &first.path, d);
        }
        for issue in issues {
            d = d.note(format!("at {}: {}", show(&issue.path), issue.message));
        }
        out.push(d.help(format!(
            "use parameter types every provider can express, or `allow(dialect-incompatible = \"...\")` if `{}` is never offered to {dialect} backends",
            t.tool.name
        )));
    }
}

/// Rules 1 and 7 on the descriptions inside the schema that the
/// source-level pass did not see (nested properties, `args` fields).
fn nested_texts(
    here: &Place<'_>,
    names: &ToolNames<'_>,
    parameters: &Value,
    out: &mut Vec<Diagnostic>,
) {
    let tool = &here.tool.tool;
    let linted: BTreeSet<String> = tool
        .schema_params()
        .filter_map(|p| match &p.kind {
            ParamKind::Property {
                name,
                description: Some(_),
                ..
            } => Some(child_pointer("", &["properties", name])),
            _ => None,
        })
        .collect();
    let mut texts: Vec<(String, String)> = Vec::new();
    for_each_schema(parameters, |pointer, map| {
        if linted.contains(pointer) {
            return;
        }
        if let Some(Value::String(d)) = map.get("description") {
            texts.push((format!("{pointer}/description"), d.clone()));
        }
    });
    for (pointer, description) in texts {
        let text = Text {
            text: &description,
            spans: &[],
            whose: format!("a description in the parameters of `{}`", tool.name),
            pointer: Some(&pointer),
        };
        foreign_tools(here, names, &text, out);
        home_paths(here, &text, out);
    }
}

/// Rules 10 and 6 on properties the source does not declare one by one
/// (the fields of an `args` struct).
fn args_struct_properties(
    t: &DiscoveredTool,
    instructional: &InstructionalToolsets<'_>,
    parameters: &Value,
    out: &mut Vec<Diagnostic>,
) {
    let declared: BTreeSet<&str> = t
        .tool
        .schema_params()
        .filter_map(|p| match &p.kind {
            ParamKind::Property { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let Some(Value::Object(properties)) = parameters.get("properties") else {
        return;
    };
    for (name, schema) in properties {
        if declared.contains(name.as_str()) {
            continue;
        }
        let described = schema
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.trim().is_empty());
        if !described {
            out.push(
                t.diagnostic(
                    UNDOCUMENTED_PARAMETER,
                    format!("parameter `{name}` of `{}` has no description", t.tool.name),
                )
                .label(format!("`{name}` is a field of its arguments struct"))
                .note("the model reads the description to know what to send")
                .help(format!(
                    "write a doc comment on the field `{name}` of the arguments struct"
                )),
            );
        }
        if let Some(toolset) = instructional.of(&t.tool) {
            if PAGINATION_PARAMS.contains(&name.as_str()) {
                let d = pagination(t, toolset, name)
                    .at_span(&t.file, t.name_span())
                    .label(format!("`{name}` is a field of its arguments struct"));
                out.push(d);
            }
        }
    }
}
