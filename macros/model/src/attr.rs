//! The keys of `#[hermes_tool(...)]`, parsed into a typed [`ToolAttr`].

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{LitInt, LitStr, Token};

use crate::Ctxt;

pub const TOOLSET: &str = "toolset";
pub const NAME: &str = "name";
pub const EMOJI: &str = "emoji";
pub const CHECK: &str = "check";
pub const REQUIRES_ENV: &str = "requires_env";
pub const MAX_RESULT_CHARS: &str = "max_result_chars";
pub const DESCRIPTION: &str = "description";
pub const OVERRIDE: &str = "override";

/// Every key `#[hermes_tool]` accepts, in the order the docs list them.
pub const ATTRIBUTE_KEYS: &[&str] = &[
    TOOLSET,
    NAME,
    EMOJI,
    CHECK,
    REQUIRES_ENV,
    MAX_RESULT_CHARS,
    DESCRIPTION,
    OVERRIDE,
];

/// `#[hermes_tool(...)]`, typed. String values keep the span of their literal.
#[derive(Debug, Clone, Default)]
pub struct ToolAttr {
    pub toolset: Option<(String, Span)>,
    pub name: Option<(String, Span)>,
    pub emoji: Option<String>,
    pub check: Option<syn::Path>,
    pub requires_env: Vec<String>,
    pub max_result_chars: Option<usize>,
    pub description: Option<(String, Span)>,
    pub override_existing: bool,
}

impl ToolAttr {
    pub fn toolset(&self) -> &str {
        self.toolset.as_ref().map_or("", |(t, _)| t.as_str())
    }
}

pub(crate) fn parse(cx: &Ctxt, tokens: TokenStream) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = |input: ParseStream| parse_keys(cx, input, &mut attr);
    if let Err(err) = parser.parse2(tokens) {
        cx.syn_error(err);
    }
    if attr.toolset.is_none() {
        cx.error_at(
            Span::call_site(),
            "missing `toolset`: every tool belongs to one toolset, e.g. #[hermes_tool(toolset = \"file\")]",
        );
    }
    attr
}

fn parse_keys(cx: &Ctxt, input: ParseStream, attr: &mut ToolAttr) -> syn::Result<()> {
    let mut seen: Vec<String> = Vec::new();
    while !input.is_empty() {
        let key = input.call(syn::Ident::parse_any)?;
        let key_str = key.to_string();
        if seen.contains(&key_str) {
            cx.error_spanned_by(&key, format!("duplicate `{key_str}` key"));
        }
        seen.push(key_str.clone());
        match key_str.as_str() {
            TOOLSET => {
                let lit = value::<LitStr>(input)?;
                let v = lit.value();
                if v.trim().is_empty() {
                    cx.error_spanned_by(&lit, "`toolset` cannot be empty");
                }
                attr.toolset = Some((v, lit.span()));
            }
            NAME => {
                let lit = value::<LitStr>(input)?;
                attr.name = Some((lit.value(), lit.span()));
            }
            EMOJI => attr.emoji = Some(value::<LitStr>(input)?.value()),
            CHECK => attr.check = Some(value::<syn::Path>(input)?),
            REQUIRES_ENV => {
                input.parse::<Token![=]>()?;
                let content;
                syn::bracketed!(content in input);
                let vars =
                    content.parse_terminated(<LitStr as syn::parse::Parse>::parse, Token![,])?;
                attr.requires_env = vars.iter().map(LitStr::value).collect();
            }
            MAX_RESULT_CHARS => {
                let lit = value::<LitInt>(input)?;
                match lit.base10_parse::<usize>() {
                    Ok(0) => cx.error_spanned_by(&lit, "`max_result_chars` must be at least 1"),
                    Ok(n) => attr.max_result_chars = Some(n),
                    Err(e) => cx.syn_error(e),
                }
            }
            DESCRIPTION => {
                let lit = value::<LitStr>(input)?;
                attr.description = Some((lit.value(), lit.span()));
            }
            OVERRIDE => attr.override_existing = true,
            other => {
                cx.error_spanned_by(
                    &key,
                    format!(
                        "unknown key `{other}` in #[hermes_tool]; expected one of: {}",
                        ATTRIBUTE_KEYS.join(", ")
                    ),
                );
                // Skip the value, if any, so the remaining keys are still checked.
                if input.peek(Token![=]) {
                    input.parse::<Token![=]>()?;
                    input.parse::<syn::Expr>()?;
                }
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

fn value<T: syn::parse::Parse>(input: ParseStream) -> syn::Result<T> {
    input.parse::<Token![=]>()?;
    input.parse()
}
