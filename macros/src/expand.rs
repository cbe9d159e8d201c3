//! Generation: the original function (parameter docs stripped) plus a hidden
//! `static` `ToolEntry` holding the schema builder and the decoding glue.
//!
//! Errors degrade as serde's derive does: the item is always emitted as
//! written, and a rejected function still gets its entry (a stub, see
//! `rejected_entry`), so code naming either compiles on and the user sees
//! only the real mistakes.

use hermes_tool_model::{analyze, entry_ident, strip_doc_attrs, ParamKind, ToolFn};
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
        }
    }
    match analyzed {
        Ok(tool) => {
            let entry = entry(&tool, &func);
            quote! { #func #entry }
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
            } => {
                let description = description.as_deref().unwrap_or("");
                let required = !optional;
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
                let decode = if *optional {
                    quote!((&#rt::Probe::<#inner>::NEW).optional(&mut __args, #name))
                } else {
                    quote!((&#rt::Probe::<#inner>::NEW).required(&mut __args, #name))
                };
                decode_steps.push(quote! {
                    let #var: #ty = match #decode {
                        ::core::result::Result::Ok(v) => v,
                        ::core::result::Result::Err(e) => return e,
                    };
                });
                slot_names.push(name.clone());
                slot_exprs.push(if *optional {
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
            use #rt::{ViaFallback as _, ViaParam as _};
            #(#assertions)*
            fn __parameters() -> #rt::serde_json::Value {
                #parameters_body
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
                params: &[#(#param_infos),*],
                source_file: ::core::file!(),
                source_line: #line,
                handler: { #handler },
                direct: { #direct },
                parameters: __parameters,
                cache: #rt::EntryCache::new(),
            }
        };
    }
}

/// What the direct entry is built from.
struct DirectParts<'a> {
    rt: &'a TokenStream,
    whole_struct: Option<&'a syn::Type>,
    slot_names: &'a [String],
    slot_exprs: &'a [TokenStream],
    slot_vars: &'a [syn::Ident],
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
    let (call, output) = (p.call, p.output);
    quote! {
        fn __direct(__ctx: &#rt::ToolContext, __raw: &str) -> ::core::option::Option<#rt::HandlerFuture> {
            #decode
            #ctx
            ::core::option::Option::Some(::std::boxed::Box::pin(async move {
                let __out = #call;
                #output
            }))
        }
        ::core::option::Option::Some(__direct as #rt::DirectHandler)
    }
}
