//! Code generation: the Rust `static` holding a [`Table`].

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::*;
use crate::format::format_source;
use crate::Diagnostic;

/// Rust source for a `static` `StaticTable` holding `table` (declared
/// toolsets plus generated bundles, sorted by name) behind a `// @generated`
/// line, formatted as the generated files are: what the registry holds
/// ([`table_tokens`]), for a build script to write into `OUT_DIR` and the
/// crate to `include!`.
///
/// `types` is the path the generated code names the table types by (for
/// example `::hermes_runtime::__private`); `item` is the name of the
/// generated static.
pub fn emit_rust(table: &Table, types: &str, item: &str) -> Result<String, Box<Diagnostic>> {
    let types: TokenStream = types.parse().map_err(|e| {
        Box::new(Diagnostic::error(format!(
            "`{types}` is not a Rust path: {e}"
        )))
    })?;
    let tokens = table_tokens(table, &types, item);
    format_source(&format!(
        "// @generated from toolsets.toml by table::emit_rust. Do not edit.\n{tokens}"
    ))
}

/// The `static` of [`emit_rust`], as tokens: what the registry (`generate`)
/// emits.
pub fn table_tokens(table: &Table, types: &TokenStream, item: &str) -> TokenStream {
    fn names(entries: &[Entry]) -> TokenStream {
        let names = entries.iter().map(|e| &e.name);
        quote!(&[#(#names),*])
    }

    let item = format_ident!("{item}");
    let toolsets = table.expanded_toolsets().into_iter().map(|t| {
        let (name, description) = (&t.name.name, &t.description);
        let (tools, includes) = (names(&t.tools), names(&t.includes));
        let (instructional, posture, stateless) = (t.instructional, t.posture, t.stateless);
        quote! {
            #types::StaticToolset {
                name: #name,
                description: #description,
                tools: #tools,
                includes: #includes,
                instructional: #instructional,
                posture: #posture,
                stateless: #stateless,
            }
        }
    });
    let (core, webhook_safe) = (names(&table.core), names(&table.webhook_safe));
    let legacy = table.legacy.iter().map(|l| {
        let (name, tools) = (&l.name.name, names(&l.tools));
        quote!(#types::StaticLegacy { name: #name, tools: #tools })
    });
    let aliases = table.aliases.iter().map(|a| {
        let (alias, target) = (&a.alias.name, &a.target.name);
        quote!(#types::StaticAlias { alias: #alias, target: #target })
    });
    quote! {
        pub static #item: #types::StaticTable = #types::StaticTable {
            toolsets: &[#(#toolsets,)*],
            core: #core,
            webhook_safe: #webhook_safe,
            legacy: &[#(#legacy,)*],
            aliases: &[#(#aliases,)*],
        };
    }
}
