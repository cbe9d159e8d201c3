//! Code generation: the Rust `static` holding a [`Table`].

use super::*;

/// Rust source for a `static` `hermes_runtime::toolsets::StaticTable` holding `table`
/// (declared toolsets plus generated bundles, sorted by name), for a build
/// script to write into `OUT_DIR` and the crate to `include!`: the
/// [`table_source`] the registry holds, behind a `// @generated` line.
///
/// `types` is the path the generated code uses for the `resolve` types (for
/// example `crate::resolve`); `item` is the name of the generated static.
/// The output is deterministic and rustfmt-independent.
pub fn emit_rust(table: &Table, types: &str, item: &str) -> String {
    format!(
        "// @generated from toolsets.toml by table::emit_rust. Do not edit.\n{}",
        table_source(table, types, item)
    )
}

/// The `static` of [`emit_rust`], without its header line: what the
/// registry (`generate`) writes.
pub fn table_source(table: &Table, types: &str, item: &str) -> String {
    fn list(out: &mut String, entries: &[Entry]) {
        out.push_str("&[");
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&format!("{:?}", e.name));
        }
        out.push(']');
    }

    let mut out = String::new();
    out.push_str(&format!(
        "pub static {item}: {types}::StaticTable = {types}::StaticTable {{\n"
    ));
    out.push_str("    toolsets: &[\n");
    for t in table.expanded_toolsets() {
        out.push_str(&format!(
            "        {types}::StaticToolset {{\n            name: {:?},\n            description: {:?},\n            tools: ",
            t.name.name, t.description
        ));
        list(&mut out, &t.tools);
        out.push_str(",\n            includes: ");
        list(&mut out, &t.includes);
        out.push_str(&format!(
            ",\n            instructional: {},\n            posture: {},\n        }},\n",
            t.instructional, t.posture
        ));
    }
    out.push_str("    ],\n");
    for (field, entries) in [("core", &table.core), ("webhook_safe", &table.webhook_safe)] {
        out.push_str(&format!("    {field}: "));
        list(&mut out, entries);
        out.push_str(",\n");
    }
    out.push_str("    legacy: &[\n");
    for l in &table.legacy {
        out.push_str(&format!(
            "        {types}::StaticLegacy {{ name: {:?}, tools: ",
            l.name.name
        ));
        list(&mut out, &l.tools);
        out.push_str(" },\n");
    }
    out.push_str("    ],\n    aliases: &[\n");
    for a in &table.aliases {
        out.push_str(&format!(
            "        {types}::StaticAlias {{ alias: {:?}, target: {:?} }},\n",
            a.alias.name, a.target.name
        ));
    }
    out.push_str("    ],\n};\n");
    out
}
