//! The one model of a `#[hermes_tool]` item: attribute keys, doc-comment
//! descriptions and parameters, parsed from `syn` and checked.
//!
//! Both the proc macro (`hermes-macros`) and discovery (`hermes-build-tools`)
//! call [`analyze`], so the errors a contributor sees from `cargo build` and
//! from `cargo xtask gen` cannot drift apart.

mod attr;
pub mod constraints;
mod ctxt;
mod docs;
pub mod effects;
pub mod lints;
mod params;
mod types;

pub use attr::{Allow, ToolAttr, ATTRIBUTE_KEYS};
pub use constraints::{strip_constraint_attrs, Bounds, Constraints, DefaultValue};
pub use ctxt::Ctxt;
pub use docs::{extract_docs, strip_doc_attrs, Docs};
pub use effects::{contradictions, ConcurrencyAttr, Contradiction, Effects};
pub use params::{Param, ParamKind};

use hermes_tool_facts::{is_valid_tool_name, NAME_PATTERN};
use proc_macro2::{Span, TokenStream};

use types::last_segment_is;

/// Attribute name as written on a function.
pub const ATTRIBUTE: &str = "hermes_tool";

/// A fully analyzed `#[hermes_tool]` function.
#[derive(Debug, Clone)]
pub struct ToolFn {
    pub attr: ToolAttr,
    /// The Rust function's name.
    pub ident: syn::Ident,
    /// The tool's name as the model sees it.
    pub name: String,
    /// The model-facing description.
    pub description: String,
    /// Where the description is written: the doc comment's lines, or the
    /// `description = "..."` literal.
    pub description_spans: Vec<Span>,
    pub params: Vec<Param>,
    pub is_async: bool,
    /// Whether the declared return type is a `Result<_, _>`.
    pub returns_result: bool,
    /// Where the function's name is written (for diagnostics).
    pub span: Span,
}

impl ToolFn {
    /// The parameters that become schema properties (the context is injected).
    pub fn schema_params(&self) -> impl Iterator<Item = &Param> {
        self.params
            .iter()
            .filter(|p| !matches!(p.kind, ParamKind::Context))
    }

    /// The name of the hidden `static` entry the macro emits next to the function.
    pub fn entry_ident(&self) -> syn::Ident {
        entry_ident(&self.ident)
    }
}

/// The name of the hidden `static` entry the macro emits for the fn `ident`.
pub fn entry_ident(ident: &syn::Ident) -> syn::Ident {
    syn::Ident::new(&format!("__HERMES_TOOL_{ident}"), ident.span())
}

/// Parses and checks a `#[hermes_tool(...)]` attribute and the function it is on.
///
/// Every problem found is reported, not only the first: the error is the
/// combination of all of them, each spanned on the offending tokens.
pub fn analyze(attr_tokens: TokenStream, item: &syn::ItemFn) -> syn::Result<ToolFn> {
    let cx = Ctxt::new();
    let attr = attr::parse(&cx, attr_tokens);
    let tool = analyze_with(&cx, attr, item);
    cx.check().map(|()| tool)
}

fn analyze_with(cx: &Ctxt, attr: ToolAttr, item: &syn::ItemFn) -> ToolFn {
    let sig = &item.sig;
    if let Some(generics) = generic_params(sig) {
        cx.error_spanned_by(
            generics,
            "a tool function cannot be generic: its schema and handler must be known when the registry is built; use concrete types",
        );
    }
    if let Some(c) = &sig.constness {
        cx.error_spanned_by(c, "a tool function cannot be `const`");
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "a tool function cannot be variadic");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a tool function cannot declare an ABI");
    }

    let name = match &attr.name {
        Some((name, span)) => {
            if !is_valid_tool_name(name) {
                cx.error_at(
                    *span,
                    format!("invalid tool name `{name}`: tool names must match {NAME_PATTERN}"),
                );
            }
            name.clone()
        }
        None => {
            let name = sig.ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
            if !is_valid_tool_name(&name) {
                cx.error_spanned_by(
                    &sig.ident,
                    format!("invalid tool name `{name}`: tool names must match {NAME_PATTERN}; set `name = \"...\"`"),
                );
            }
            name
        }
    };

    let docs = extract_docs(&item.attrs);
    let (description, description_spans) = match &attr.description {
        Some((d, span)) => (d.clone(), vec![*span]),
        None => (docs.description.clone(), docs.description_spans.clone()),
    };
    if description.trim().is_empty() {
        cx.error_spanned_by(
            &sig.ident,
            "missing description: a tool needs a doc comment (`/// What it does.`) or `description = \"...\"` in #[hermes_tool]; it is what the model reads",
        );
    }

    let params = params::analyze(cx, sig, &docs);
    effects::check_scope(cx, &attr.effects, &params);

    ToolFn {
        attr,
        ident: sig.ident.clone(),
        name,
        description,
        description_spans,
        params,
        is_async: sig.asyncness.is_some(),
        returns_result: returns_result(&sig.output),
        span: sig.ident.span(),
    }
}

fn generic_params(sig: &syn::Signature) -> Option<&syn::Generics> {
    let g = &sig.generics;
    let has_params = !g.params.is_empty();
    let has_where = g.where_clause.is_some();
    (has_params || has_where).then_some(g)
}

fn returns_result(output: &syn::ReturnType) -> bool {
    match output {
        syn::ReturnType::Default => false,
        syn::ReturnType::Type(_, ty) => last_segment_is(ty, "Result"),
    }
}

/// Whether `attr` is `#[hermes_tool]` or `#[path::to::hermes_tool]`.
pub fn is_tool_attribute(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == ATTRIBUTE)
}

/// The tokens inside `#[hermes_tool(...)]` (empty for a bare `#[hermes_tool]`).
pub fn attribute_tokens(attr: &syn::Attribute) -> TokenStream {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        _ => TokenStream::new(),
    }
}
