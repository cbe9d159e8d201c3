//! Generation: the original function (parameter docs stripped) plus a hidden
//! `static` `ToolEntry` holding the schema builder and the decoding glue.
//!
//! Errors degrade as serde's derive does: the item is always emitted as
//! written, and a rejected function still gets its entry (a stub, see
//! `rejected_entry`), so code naming either compiles on and the user sees
//! only the real mistakes.

use hermes_tool_model::effects::scope_param;
use hermes_tool_model::{
    analyze, contradictions, entry_ident, strip_constraint_attrs, strip_doc_attrs, ConcurrencyAttr,
    Constraints, DefaultValue, ParamKind, ToolFn,
};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let err = not_a_fn(&item).to_compile_error();
            return quote! { #item #err };
        }
    };
    let analyzed = analyze(attr, &func);
    // Doc comments on parameters are read by the macro, not allowed by rustc.
    for input in &mut func.sig.inputs {
        if let syn::FnArg::Typed(pt) = input {
            strip_doc_attrs(&mut pt.attrs);
            strip_constraint_attrs(&mut pt.attrs);
        }
    }
    match analyzed {
        Ok(tool) => {
            let entry = entry(&tool, &func);
            // Contradicting effect keys: the same rule the build step lints
            // (`hermes_tool_model::contradictions`), here as errors.
            let errors = contradictions(&tool.attr.effects).into_iter().map(|c| {
                let msg = format!("{} [{}]; {}", c.message, c.lint, c.help);
                syn::Error::new(c.span, msg).to_compile_error()
            });
            quote! { #func #entry #(#errors)* }
        }
        Err(err) => {
            let err = err.to_compile_error();
            let stub = rejected_entry(&func);
            quote! { #func #stub #err }
        }
    }
}

/// The error for an item that is not a function, spanned on its head
/// (`struct Name`), not on the whole item and its doc comment.
fn not_a_fn(item: &TokenStream) -> syn::Error {
    const MESSAGE: &str = "#[hermes_tool] goes on a free `fn` or `async fn`";
    let head = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(item) => item_head(&item),
        Err(_) => item.clone(),
    };
    syn::Error::new_spanned(head, MESSAGE)
}

/// The keyword and name of an item (`struct Name`, `impl Type`); the whole
/// item when it has neither.
fn item_head(item: &syn::Item) -> TokenStream {
    use syn::Item;
    let (keyword, name): (&dyn ToTokens, &dyn ToTokens) = match item {
        Item::Struct(i) => (&i.struct_token, &i.ident),
        Item::Enum(i) => (&i.enum_token, &i.ident),
        Item::Union(i) => (&i.union_token, &i.ident),
        Item::Trait(i) => (&i.trait_token, &i.ident),
        Item::Type(i) => (&i.type_token, &i.ident),
        Item::Const(i) => (&i.const_token, &i.ident),
        Item::Static(i) => (&i.static_token, &i.ident),
        Item::Mod(i) => (&i.mod_token, &i.ident),
        Item::Impl(i) => (&i.impl_token, &i.self_ty),
        _ => return item.to_token_stream(),
    };
    quote!(#keyword #name)
}

/// The entry of a function the analysis rejected: the same `static` name the
/// registry refers to, so the rejection is the only error. None for a method
/// (`self`): a `static` cannot stand in an `impl` block, and nothing names it.
fn rejected_entry(func: &syn::ItemFn) -> Option<TokenStream> {
    if func.sig.receiver().is_some() {
        return None;
    }
    let rt = quote!(::hermes_runtime::__private);
    let ident = &func.sig.ident;
    let entry_ident = entry_ident(ident);
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    let line = quote_spanned!(ident.span()=> ::core::line!());
    Some(quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        pub static #entry_ident: #rt::ToolEntry = #rt::rejected_entry(#name, ::core::file!(), #line);
    })
}

fn entry(tool: &ToolFn, func: &syn::ItemFn) -> TokenStream {
    let rt = quote!(::hermes_runtime::__private);
    let fn_ident = &tool.ident;
    let entry_ident = tool.entry_ident();
    let name = &tool.name;
    let toolset = tool.attr.toolset();
    let description = &tool.description;
    let emoji = tool.attr.emoji.as_deref().unwrap_or("");
    let requires_env = &tool.attr.requires_env;
    let max_result_chars = match tool.attr.max_result_chars {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let override_existing = tool.attr.override_existing;
    let check = match &tool.attr.check {
        Some(path) => quote_spanned! {path.span()=> {
            const __CHECK: fn(&#rt::Profile) -> bool = #path;
            ::core::option::Option::Some(__CHECK)
        }},
        None => quote!(::core::option::Option::None),
    };

    let effects = effects_expr(&rt, tool);
    let output_ty = output_type(&func.sig.output, tool.returns_result);
    let output_schema = match output_ty {
        Some(ty) => quote!((&#rt::Probe::<#ty>::NEW).output_schema()),
        None => quote!(::core::option::Option::None),
    };

    let mut param_infos = Vec::new();
    let mut schema_steps = Vec::new();
    let mut decode_steps = Vec::new();
    let mut call_args = Vec::new();
    let mut whole_struct = None;
    let mut assertions = Vec::new();
    // The direct entry (async tools): one slot per property, in order.
    let mut slot_names = Vec::new();
    let mut slot_exprs = Vec::new();
    let mut slot_vars = Vec::new();
    let mut uses_ctx = false;
    // Statements run on the direct path after decoding: defaults, checks.
    let mut direct_post = Vec::new();

    for (i, param) in tool.params.iter().enumerate() {
        let var = format_ident!("__p{}", i);
        let ty = &param.ty;
        match &param.kind {
            ParamKind::Context => {
                uses_ctx = true;
                let arg = if matches!(ty, syn::Type::Reference(_)) {
                    quote!(&__ctx)
                } else {
                    quote!(::core::clone::Clone::clone(&__ctx))
                };
                call_args.push(arg);
            }
            ParamKind::Property {
                name,
                description,
                optional,
                inner,
                constraints,
            } => {
                let description = description.as_deref().unwrap_or("");
                let default = constraints.default.as_ref().map(|d| default_expr(d, inner));
                let required = !optional && default.is_none();
                let rust_type = ty.to_token_stream().to_string().replace(' ', "");
                param_infos.push(quote! {
                    #rt::ParamInfo { name: #name, rust_type: #rust_type, required: #required, description: #description }
                });
                assertions.push(quote_spanned! {inner.span()=>
                    const _: () = #rt::assert_param::<#inner>();
                });
                schema_steps.push(quote! {
                    let __b = (&#rt::Probe::<#inner>::NEW).property(__b, #name, #description, #required);
                });
                assertions.extend(constraint_assertions(&rt, constraints, inner));
                if let Some(c) = schema_constraints(&rt, constraints, inner, default.as_ref()) {
                    schema_steps.push(quote! { let __b = __b.constrain(#name, #c); });
                }
                let decode = if *optional || default.is_some() {
                    quote!((&#rt::Probe::<#inner>::NEW).optional(&mut __args, #name))
                } else {
                    quote!((&#rt::Probe::<#inner>::NEW).required(&mut __args, #name))
                };
                let decoded = match &default {
                    Some(d) => quote! {
                        ::core::result::Result::Ok(::core::option::Option::Some(v)) => v,
                        ::core::result::Result::Ok(::core::option::Option::None) => #d,
                    },
                    None => quote!(::core::result::Result::Ok(v) => v,),
                };
                decode_steps.push(quote! {
                    let #var: #ty = match #decode {
                        #decoded
                        ::core::result::Result::Err(e) => return e,
                    };
                });
                let checks =
                    value_checks(&rt, constraints, inner, &var, *optional, name, &tool.name);
                if !checks.is_empty() {
                    decode_steps.push(quote! {
                        #(if let ::core::result::Result::Err(e) = (#checks) { return e; })*
                    });
                }
                if let Some(d) = &default {
                    direct_post.push(quote! {
                        let #var: #ty = match #var {
                            ::core::option::Option::Some(v) => v,
                            ::core::option::Option::None => #d,
                        };
                    });
                }
                // The direct path declines a value out of bounds: the full
                // pipeline explains it.
                direct_post.extend(checks.iter().map(|c| quote!((#c).ok()?;)));
                slot_names.push(name.clone());
                slot_exprs.push(if *optional || default.is_some() {
                    quote!((&#rt::Probe::<#inner>::NEW).optional_slot())
                } else {
                    quote!((&#rt::Probe::<#inner>::NEW).required_slot())
                });
                slot_vars.push(var.clone());
                call_args.push(quote!(#var));
            }
            ParamKind::ArgsStruct => {
                whole_struct = Some(ty.clone());
                slot_vars.push(var.clone());
                assertions.push(quote_spanned! {ty.span()=>
                    const _: () = #rt::assert_param::<#ty>();
                });
                decode_steps.push(quote! {
                    let #var: #ty = match (&#rt::Probe::<#ty>::NEW).whole(__args) {
                        ::core::result::Result::Ok(v) => v,
                        ::core::result::Result::Err(e) => return e,
                    };
                });
                call_args.push(quote!(#var));
            }
        }
    }

    let parameters_body = match &whole_struct {
        Some(ty) => quote!((&#rt::Probe::<#ty>::NEW).struct_parameters()),
        None => quote! {
            let __b = #rt::ParametersBuilder::new();
            #(#schema_steps)*
            __b.finish()
        },
    };

    let ret_span = match &func.sig.output {
        syn::ReturnType::Default => func.sig.ident.span(),
        syn::ReturnType::Type(_, ty) => ty.span(),
    };
    let output = if tool.returns_result {
        quote_spanned!(ret_span=> #rt::output_result(__out))
    } else {
        quote_spanned!(ret_span=> #rt::output_value(__out))
    };

    let call = if tool.is_async {
        quote!(#fn_ident(#(#call_args),*).await)
    } else {
        quote!(#fn_ident(#(#call_args),*))
    };
    let args_binding = if tool
        .params
        .iter()
        .any(|p| !matches!(p.kind, ParamKind::Context))
    {
        quote!(let mut __args = #rt::Args::new(#name, __raw);)
    } else {
        quote!(let _ = __raw;)
    };
    let line = quote_spanned!(fn_ident.span()=> ::core::line!());
    let body = quote! {
        #args_binding
        #(#decode_steps)*
        let __out = #call;
        #output
    };
    let direct = direct_entry(
        tool,
        &DirectParts {
            rt: &rt,
            whole_struct: whole_struct.as_ref(),
            slot_names: &slot_names,
            slot_exprs: &slot_exprs,
            slot_vars: &slot_vars,
            post: &direct_post,
            uses_ctx,
            call: &call,
            output: &output,
        },
    );
    let handler = if tool.is_async {
        quote! {
            fn __handler(__ctx: #rt::ToolContext, __raw: #rt::serde_json::Value) -> #rt::HandlerFuture {
                ::std::boxed::Box::pin(async move { #body })
            }
            #rt::Handler::Async(__handler)
        }
    } else {
        quote! {
            fn __handler(__ctx: #rt::ToolContext, __raw: #rt::serde_json::Value) -> ::std::string::String {
                #body
            }
            #rt::Handler::Blocking(__handler)
        }
    };

    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, clippy::needless_borrow)]
        pub static #entry_ident: #rt::ToolEntry = {
            #[allow(unused_imports)]
            use #rt::{OutputFallback as _, ViaFallback as _, ViaOutput as _, ViaParam as _};
            #[allow(unused_imports)]
            use #rt::{
                DefaultFallback as _, LengthFallback as _, PatternFallback as _, RangeFallback as _,
                ViaDefault as _, ViaLength as _, ViaPattern as _, ViaRange as _,
            };
            #(#assertions)*
            fn __parameters() -> #rt::serde_json::Value {
                #parameters_body
            }
            fn __output() -> ::core::option::Option<#rt::serde_json::Value> {
                #output_schema
            }
            #rt::ToolEntry {
                name: #name,
                toolset: #toolset,
                description: #description,
                emoji: #emoji,
                requires_env: &[#(#requires_env),*],
                max_result_chars: #max_result_chars,
                override_existing: #override_existing,
                check: #check,
                effects: #effects,
                params: &[#(#param_infos),*],
                source_file: ::core::file!(),
                source_line: #line,
                handler: { #handler },
                direct: { #direct },
                parameters: __parameters,
                output: __output,
                cache: #rt::EntryCache::new(),
            }
        };
    }
}

/// The `ToolEffects` of a tool: each key as declared, else the runtime's
/// `ToolEffects::UNDECLARED` (a read-only tool is neither destructive nor
/// anything but idempotent), plus the assertion that a path scope names a
/// string parameter, spanned on the `concurrency` literal.
fn effects_expr(rt: &TokenStream, tool: &ToolFn) -> TokenStream {
    let e = &tool.attr.effects;
    let undeclared = quote!(#rt::ToolEffects::UNDECLARED);
    let read_only = e.is_read_only();
    let flag = |f: Option<hermes_tool_model::effects::Flag>, field: TokenStream| match f {
        Some(f) => {
            let v = f.value;
            quote!(#v)
        }
        None => quote!(#undeclared.#field),
    };
    let destructive = match e.destructive {
        None if read_only => quote!(false),
        d => flag(d, quote!(destructive)),
    };
    let idempotent = match e.idempotent {
        None if read_only => quote!(true),
        i => flag(i, quote!(idempotent)),
    };
    let open_world = flag(e.open_world, quote!(open_world));
    let concurrency = match &e.concurrency {
        None => quote!(#undeclared.concurrency),
        Some((ConcurrencyAttr::Exclusive, _)) => quote!(#rt::Concurrency::Exclusive),
        Some((ConcurrencyAttr::Safe, _)) => quote!(#rt::Concurrency::Safe),
        Some((ConcurrencyAttr::PerPath(param), span)) => {
            let assertion = scope_param(&tool.params, param).and_then(|p| match &p.kind {
                ParamKind::Property { inner, .. } => {
                    let ty = respan(inner.to_token_stream(), *span);
                    Some(quote_spanned!(*span=> const _: () = #rt::assert_path_scope::<#ty>();))
                }
                _ => None,
            });
            quote!({
                #assertion
                #rt::Concurrency::PerPath(::std::borrow::Cow::Borrowed(#param))
            })
        }
    };
    quote! {
        #rt::ToolEffects {
            read_only: #read_only,
            destructive: #destructive,
            idempotent: #idempotent,
            open_world: #open_world,
            concurrency: #concurrency,
        }
    }
}

/// The type a tool's result serializes from: `T` of `Result<T, E>`, else
/// the return type; `None` for `()` and an `impl Trait` (no type to name).
fn output_type(output: &syn::ReturnType, returns_result: bool) -> Option<syn::Type> {
    let syn::ReturnType::Type(_, ty) = output else {
        return None;
    };
    let ty = if returns_result {
        let syn::Type::Path(p) = &**ty else {
            return None;
        };
        let args = match &p.path.segments.last()?.arguments {
            syn::PathArguments::AngleBracketed(a) => a,
            _ => return None,
        };
        match args.args.first()? {
            syn::GenericArgument::Type(t) => t.clone(),
            _ => return None,
        }
    } else {
        (**ty).clone()
    };
    let names_a_type = !matches!(ty, syn::Type::ImplTrait(_) | syn::Type::Infer(_))
        && !matches!(&ty, syn::Type::Tuple(t) if t.elems.is_empty());
    names_a_type.then_some(ty)
}

/// What the direct entry is built from.
struct DirectParts<'a> {
    rt: &'a TokenStream,
    whole_struct: Option<&'a syn::Type>,
    slot_names: &'a [String],
    slot_exprs: &'a [TokenStream],
    slot_vars: &'a [syn::Ident],
    /// Defaults and constraint checks, after decoding.
    post: &'a [TokenStream],
    uses_ctx: bool,
    call: &'a TokenStream,
    output: &'a TokenStream,
}

/// `Some(__direct)` for an `async fn` tool of at most `MAX_DIRECT_PARAMS`
/// properties: the raw arguments decoded straight into the parameter types,
/// the call boxed only when they decode (see the runtime's `direct.rs`).
fn direct_entry(tool: &ToolFn, p: &DirectParts<'_>) -> TokenStream {
    const MAX_DIRECT_PARAMS: usize = 12;
    let rt = p.rt;
    if !tool.is_async || p.slot_names.len() > MAX_DIRECT_PARAMS {
        return quote!(::core::option::Option::None);
    }
    let decode = match (p.whole_struct, p.slot_vars.first()) {
        (Some(ty), Some(var)) => quote! {
            let #var: #ty = (&#rt::Probe::<#ty>::NEW).whole_direct(__raw)?;
        },
        _ => {
            let (names, exprs, vars) = (p.slot_names, p.slot_exprs, p.slot_vars);
            // A key's slot by a `match`, as serde's derive does: compiled to
            // length checks and word compares, not a loop of `memcmp`s.
            let indexes = 0..names.len();
            quote! {
                let (#(#vars,)*) = #rt::decode_direct(
                    __raw,
                    |__key: &str| match __key {
                        #(#names => #indexes,)*
                        _ => usize::MAX,
                    },
                    (#(#exprs,)*),
                )?;
            }
        }
    };
    let ctx = if p.uses_ctx {
        quote!(let __ctx = ::core::clone::Clone::clone(__ctx);)
    } else {
        quote!(let _ = __ctx;)
    };
    let (call, output, post) = (p.call, p.output, p.post);
    quote! {
        fn __direct(__ctx: &#rt::ToolContext, __raw: &str) -> ::core::option::Option<#rt::HandlerFuture> {
            #decode
            #(#post)*
            #ctx
            ::core::option::Option::Some(::std::boxed::Box::pin(async move {
                let __out = #call;
                #output
            }))
        }
        ::core::option::Option::Some(__direct as #rt::DirectHandler)
    }
}

/// The value of a parameter's `#[serde(default ...)]`, spanned on it.
fn default_expr(d: &DefaultValue, inner: &syn::Type) -> TokenStream {
    match d {
        DefaultValue::Trait(span) => {
            quote_spanned!(*span=> <#inner as ::core::default::Default>::default())
        }
        DefaultValue::Path(path, span) => {
            // Typed where it is written: a wrong type is one error, on the attribute.
            let ty = respan(inner.to_token_stream(), *span);
            quote_spanned!(*span=> { let __default: #ty = #path(); __default })
        }
    }
}

/// `tokens` with every span set to `span`, so an error about them points
/// at the attribute that asked for them.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                t = proc_macro2::TokenTree::Group(group);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}

/// That the type can carry each constraint, spanned on its attribute.
fn constraint_assertions(rt: &TokenStream, c: &Constraints, inner: &syn::Type) -> Vec<TokenStream> {
    let mut out = Vec::new();
    // The type re-spanned on the attribute: the error says the attribute
    // does not apply, where the attribute is written.
    let at = |span| respan(inner.to_token_stream(), span);
    if let Some(b) = &c.range {
        let ty = at(b.span);
        out.push(quote_spanned!(b.span=> const _: () = #rt::assert_range::<#ty>();));
    }
    if let Some(b) = &c.length {
        let ty = at(b.span);
        out.push(quote_spanned!(b.span=> const _: () = #rt::assert_length::<#ty>();));
    }
    if let Some((_, span)) = &c.pattern {
        let ty = at(*span);
        out.push(quote_spanned!(*span=> const _: () = #rt::assert_pattern::<#ty>();));
    }
    out
}

fn opt<T: quote::ToTokens>(v: Option<T>) -> TokenStream {
    match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn float(e: &syn::Expr) -> TokenStream {
    quote!((#e) as f64)
}

/// The `SchemaConstraints` of a parameter, when it states any.
fn schema_constraints(
    rt: &TokenStream,
    c: &Constraints,
    inner: &syn::Type,
    default: Option<&TokenStream>,
) -> Option<TokenStream> {
    if !c.checks_value() && default.is_none() {
        return None;
    }
    let (minimum, maximum) = match &c.range {
        Some(b) => (
            opt(b.min.as_ref().map(float)),
            opt(b.max.as_ref().map(float)),
        ),
        None => (opt::<TokenStream>(None), opt::<TokenStream>(None)),
    };
    let length = match &c.length {
        Some(b) => {
            let (min, max) = (opt(b.min.as_ref()), opt(b.max.as_ref()));
            quote!(::core::option::Option::Some({
                let (__lo, __hi) = (&#rt::Check::<#inner>::NEW).length_keywords();
                (__lo, __hi, #min, #max)
            }))
        }
        None => quote!(::core::option::Option::None),
    };
    let pattern = opt(c.pattern.as_ref().map(|(p, _)| p));
    let default = match default {
        Some(d) => quote!((&#rt::Check::<#inner>::NEW).default_json(|| #d)),
        None => quote!(::core::option::Option::None),
    };
    Some(quote! {
        #rt::SchemaConstraints {
            minimum: #minimum,
            maximum: #maximum,
            length: #length,
            pattern: #pattern,
            default: #default,
        }
    })
}

/// The checks of a decoded value: each a `Result<(), String>` expression
/// (`Ok` for an absent optional value).
fn value_checks(
    rt: &TokenStream,
    c: &Constraints,
    inner: &syn::Type,
    var: &syn::Ident,
    optional: bool,
    param: &str,
    tool: &str,
) -> Vec<TokenStream> {
    let at = quote!(#rt::At { tool: #tool, param: #param });
    let wrap = |check: TokenStream| {
        if optional {
            quote!(match &#var {
                ::core::option::Option::Some(__v) => #check,
                ::core::option::Option::None => ::core::result::Result::Ok(()),
            })
        } else {
            quote!({ let __v = &#var; #check })
        }
    };
    let mut out = Vec::new();
    if let Some(b) = &c.range {
        let (min, max) = (
            opt(b.min.as_ref().map(float)),
            opt(b.max.as_ref().map(float)),
        );
        out.push(wrap(
            quote!((&#rt::Check::<#inner>::NEW).check_range(#at, __v, #min, #max)),
        ));
    }
    if let Some(b) = &c.length {
        let (min, max) = (opt(b.min.as_ref()), opt(b.max.as_ref()));
        out.push(wrap(
            quote!((&#rt::Check::<#inner>::NEW).check_length(#at, __v, #min, #max)),
        ));
    }
    if let Some((pattern, _)) = &c.pattern {
        out.push(wrap(quote!({
            static __PATTERN: #rt::PatternCell = #rt::PatternCell::new();
            (&#rt::Check::<#inner>::NEW).check_pattern(#at, __v, #pattern, &__PATTERN)
        })));
    }
    out
}
