//! The parameters of a tool function: injected context, typed properties,
//! or one whole-arguments struct.

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::constraints::{self, Constraints};
use crate::types::last_segment_is;
use crate::{extract_docs, Ctxt, Docs};

/// The type name that marks the injected call context (`&ToolContext`).
pub const CONTEXT_TYPE: &str = "ToolContext";

/// The parameter name that marks the single-argument form, `fn f(args: FArgs)`.
pub const ARGS_STRUCT_PARAM: &str = "args";

#[derive(Debug, Clone)]
pub struct Param {
    pub kind: ParamKind,
    pub ident: syn::Ident,
    /// The declared type, as written.
    pub ty: syn::Type,
    pub span: Span,
    /// Where the parameter's description is written: its own doc comment,
    /// or its item of the `# Arguments` section (empty when undescribed).
    pub doc_spans: Vec<Span>,
}

#[derive(Debug, Clone)]
pub enum ParamKind {
    /// `ctx: &ToolContext`: injected by dispatch, not in the schema.
    Context,
    /// One schema property. `inner` is `T` of `Option<T>` when optional.
    Property {
        name: String,
        description: Option<String>,
        optional: bool,
        inner: Box<syn::Type>,
        /// `#[schemars(...)]` / `#[serde(...)]` on the parameter.
        constraints: Box<Constraints>,
    },
    /// `args: FArgs`: the struct's fields are the properties.
    ArgsStruct,
}

pub(crate) fn analyze(cx: &Ctxt, sig: &syn::Signature, docs: &Docs) -> Vec<Param> {
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => cx.error_spanned_by(
                r,
                "a tool cannot take `self`: tools are free functions; move it out of the impl block",
            ),
            syn::FnArg::Typed(pt) => {
                if let Some(p) = typed(cx, pt, docs) {
                    params.push(p);
                }
            }
        }
    }

    let contexts: Vec<&Param> = params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Context))
        .collect();
    if let Some(second) = contexts.get(1) {
        cx.error_at(
            second.span,
            "a tool takes at most one `ToolContext` parameter",
        );
    }
    let has_struct = params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::ArgsStruct));
    let properties = params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Property { .. }))
        .count();
    if has_struct && properties > 0 {
        if let Some(p) = params
            .iter()
            .find(|p| matches!(p.kind, ParamKind::ArgsStruct))
        {
            cx.error_at(
                p.span,
                "`args: T` takes all the arguments as one struct; it cannot be combined with other typed parameters (rename it to make it one property)",
            );
        }
    }
    for name in docs.arguments.keys() {
        let known = params.iter().any(|p| p.ident == name.as_str());
        if !known {
            // On the item's line of the doc comment.
            let span = docs
                .argument_spans
                .get(name)
                .and_then(|spans| spans.first().copied())
                .unwrap_or_else(|| sig.ident.span());
            cx.error_at(
                span,
                format!("the `# Arguments` section describes `{name}`, which is not a parameter"),
            );
        }
    }
    params
}

fn typed(cx: &Ctxt, pt: &syn::PatType, docs: &Docs) -> Option<Param> {
    let ident = match &*pt.pat {
        syn::Pat::Ident(pi) if pi.subpat.is_none() => pi.ident.clone(),
        other => {
            cx.error_spanned_by(
                other,
                "a tool parameter must be a plain name (`path: String`), not a pattern: its name is the property name the model sends",
            );
            return None;
        }
    };
    let ty = (*pt.ty).clone();
    let span = pt.span();
    if is_context(&ty) {
        return Some(Param {
            kind: ParamKind::Context,
            ident,
            ty,
            span,
            doc_spans: Vec::new(),
        });
    }
    if let syn::Type::Reference(r) = &ty {
        cx.error_spanned_by(
            r,
            "a tool parameter must be an owned type (`String`, not `&str`): arguments are decoded from JSON",
        );
        return None;
    }
    if let syn::Type::ImplTrait(t) = &ty {
        cx.error_spanned_by(
            t,
            "a tool parameter cannot be `impl Trait`: use a concrete type",
        );
        return None;
    }
    let raw = ident.to_string();
    let rust_name = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
    let constraints = constraints::parse(cx, &pt.attrs);
    if rust_name == ARGS_STRUCT_PARAM {
        if let Some(attr) = pt.attrs.iter().find(|a| constraints::is_constraint_attr(a)) {
            cx.error_spanned_by(
                attr,
                "`args: T` takes its constraints from `T`'s fields: put #[schemars]/#[serde] attributes there",
            );
        }
        return Some(Param {
            kind: ParamKind::ArgsStruct,
            ident,
            ty,
            span,
            doc_spans: Vec::new(),
        });
    }
    let name = match &constraints.rename {
        Some((renamed, span)) => {
            if !hermes_tool_facts::is_valid_tool_name(renamed) {
                cx.error_at(
                    *span,
                    format!(
                        "`{renamed}` cannot be a property name: use letters, digits, `_` and `-`"
                    ),
                );
            }
            renamed.clone()
        }
        None => rust_name.clone(),
    };
    let own_docs = extract_docs(&pt.attrs);
    let (description, doc_spans) = if !own_docs.description.is_empty() {
        (Some(own_docs.description), own_docs.description_spans)
    } else {
        (
            docs.arguments.get(&rust_name).cloned(),
            docs.argument_spans
                .get(&rust_name)
                .cloned()
                .unwrap_or_default(),
        )
    };
    let (optional, inner) = match option_inner(&ty) {
        Some(inner) => (true, Box::new(inner.clone())),
        None => (false, Box::new(ty.clone())),
    };
    if let (true, Some(default)) = (optional, &constraints.default) {
        cx.error_at(
            default.span(),
            "an `Option` parameter is already optional (absent is `None`); give the default to a parameter of the plain type",
        );
    }
    Some(Param {
        kind: ParamKind::Property {
            name,
            description,
            optional,
            inner,
            constraints: Box::new(constraints),
        },
        ident,
        ty,
        span,
        doc_spans,
    })
}

fn is_context(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => last_segment_is(&r.elem, CONTEXT_TYPE),
        other => last_segment_is(other, CONTEXT_TYPE),
    }
}

/// `T` when `ty` is `Option<T>` (also `std::option::Option<T>`).
fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}
