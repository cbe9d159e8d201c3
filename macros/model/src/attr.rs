//! The keys of `#[hermes_tool(...)]`, parsed into a typed [`ToolAttr`].

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{LitInt, LitStr, Token};

use crate::effects::{self, Effects, CONCURRENCY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD, READ_ONLY};
use crate::lints::{find_lint, LINTS};
use crate::Ctxt;

pub const TOOLSET: &str = "toolset";
pub const NAME: &str = "name";
pub const EMOJI: &str = "emoji";
pub const CHECK: &str = "check";
pub const REQUIRES_ENV: &str = "requires_env";
pub const MAX_RESULT_CHARS: &str = "max_result_chars";
pub const DESCRIPTION: &str = "description";
pub const OVERRIDE: &str = "override";
pub const ALLOW: &str = "allow";

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
    READ_ONLY,
    DESTRUCTIVE,
    IDEMPOTENT,
    OPEN_WORLD,
    CONCURRENCY,
    ALLOW,
];

/// `#[hermes_tool(...)]`, typed. String values keep the span of their literal.
#[derive(Debug, Clone, Default)]
pub struct ToolAttr {
    pub toolset: Option<(String, Span)>,
    pub name: Option<(String, Span)>,
    pub emoji: Option<String>,
    pub check: Option<syn::Path>,
    pub requires_env: Vec<String>,
    /// Where the `requires_env` key is written.
    pub requires_env_span: Option<Span>,
    pub max_result_chars: Option<usize>,
    pub description: Option<(String, Span)>,
    pub override_existing: bool,
    /// `read_only`, `destructive`, `idempotent`, `open_world`, `concurrency`.
    pub effects: Effects,
    /// `allow(lint-name = "reason", ...)`: lints this tool opts out of.
    pub allow: Vec<Allow>,
}

/// One entry of `allow(...)`: a lint this tool opts out of, and why.
#[derive(Debug, Clone)]
pub struct Allow {
    /// The lint's stable name (kebab-case), as listed in [`LINTS`].
    pub lint: &'static str,
    /// Why the lint does not apply to this tool (never empty).
    pub reason: String,
    /// Where the lint name is written.
    pub span: Span,
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
                attr.requires_env_span = Some(key.span());
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
            READ_ONLY => attr.effects.read_only = Some(effects::parse_flag(cx, input, &key)?),
            DESTRUCTIVE => attr.effects.destructive = Some(effects::parse_flag(cx, input, &key)?),
            IDEMPOTENT => attr.effects.idempotent = Some(effects::parse_flag(cx, input, &key)?),
            OPEN_WORLD => attr.effects.open_world = Some(effects::parse_flag(cx, input, &key)?),
            CONCURRENCY => attr.effects.concurrency = effects::parse_concurrency(cx, input)?,
            ALLOW => {
                let content;
                syn::parenthesized!(content in input);
                parse_allows(cx, &content, &mut attr.allow)?;
            }
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

/// `allow(lint-name = "reason", ...)`. Lint names are kebab-case, as
/// `cargo xtask check-tools` prints them (`snake_case` is accepted too).
fn parse_allows(cx: &Ctxt, input: ParseStream, allows: &mut Vec<Allow>) -> syn::Result<()> {
    while !input.is_empty() {
        // `foreign-tool-in-description` is several tokens: idents joined by `-`.
        let mut name_tokens = TokenStream::new();
        let first = input.call(syn::Ident::parse_any)?;
        let span = first.span();
        let mut name = first.to_string();
        name_tokens.extend([TokenTree::Ident(first)]);
        while input.peek(Token![-]) {
            let dash: Token![-] = input.parse()?;
            let part = input.call(syn::Ident::parse_any)?;
            name.push('-');
            name.push_str(&part.to_string());
            name_tokens.extend(dash.into_token_stream());
            name_tokens.extend([TokenTree::Ident(part)]);
        }
        let reason = if input.peek(Token![=]) {
            let lit = value::<LitStr>(input)?;
            Some((lit.value(), lit))
        } else {
            None
        };
        match find_lint(&name) {
            None => cx.error_spanned_by(
                &name_tokens,
                format!(
                    "unknown lint `{name}` in allow(...); the lints a tool may allow are: {}",
                    allowable_names()
                ),
            ),
            Some(lint) if !lint.allowable => cx.error_spanned_by(
                &name_tokens,
                format!(
                    "`{}` cannot be allowed per tool: {}; the lints a tool may allow are: {}",
                    lint.name,
                    lint.summary,
                    allowable_names()
                ),
            ),
            Some(lint) => match reason {
                None => cx.error_spanned_by(
                    &name_tokens,
                    format!(
                        "allowing `{}` needs a reason: allow({} = \"why the rule does not apply here\")",
                        lint.name, lint.name
                    ),
                ),
                Some((text, lit)) if text.trim().is_empty() => cx.error_spanned_by(
                    &lit,
                    format!("the reason for allowing `{}` cannot be empty", lint.name),
                ),
                Some((text, _)) => {
                    if allows.iter().any(|a| a.lint == lint.name) {
                        cx.error_spanned_by(
                            &name_tokens,
                            format!("`{}` is allowed twice", lint.name),
                        );
                    }
                    allows.push(Allow {
                        lint: lint.name,
                        reason: text,
                        span,
                    });
                }
            },
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(())
}

fn allowable_names() -> String {
    LINTS
        .iter()
        .filter(|l| l.allowable)
        .map(|l| l.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn value<T: syn::parse::Parse>(input: ParseStream) -> syn::Result<T> {
    input.parse::<Token![=]>()?;
    input.parse()
}
