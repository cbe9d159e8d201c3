//! What a tool declares it does: `read_only`, `destructive`, `idempotent`,
//! `open_world` and `concurrency = "safe" | "exclusive" | "path:PARAM"`,
//! parsed into [`Effects`], and the one home of the rules over them: the
//! path scope names a parameter (`check_scope`, part of `analyze`) and
//! the declarations do not contradict each other ([`contradictions`], which
//! the macro reports as errors and the build step as lints).

use proc_macro2::Span;
use syn::{LitStr, Token};

use crate::lints::{CONCURRENCY_SAFE_WRITE, READ_ONLY_AND_DESTRUCTIVE};
use crate::{Ctxt, Param, ParamKind};

pub const READ_ONLY: &str = "read_only";
pub const DESTRUCTIVE: &str = "destructive";
pub const IDEMPOTENT: &str = "idempotent";
pub const OPEN_WORLD: &str = "open_world";
pub const CONCURRENCY: &str = "concurrency";

/// The prefix of a path-scoped `concurrency` value (`"path:path"`).
pub const PATH_SCOPE_PREFIX: &str = "path:";

/// One declared flag: its value and where the key is written.
#[derive(Debug, Clone, Copy)]
pub struct Flag {
    pub value: bool,
    pub span: Span,
}

/// `concurrency = "..."`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConcurrencyAttr {
    Exclusive,
    Safe,
    /// `"path:PARAM"`: safe beside calls on other paths.
    PerPath(String),
}

/// The effect keys of one `#[hermes_tool]`; `None` for a key not written
/// (the runtime's `ToolEffects::UNDECLARED` then decides).
#[derive(Debug, Clone, Default)]
pub struct Effects {
    pub read_only: Option<Flag>,
    pub destructive: Option<Flag>,
    pub idempotent: Option<Flag>,
    pub open_world: Option<Flag>,
    /// The value and the span of its literal.
    pub concurrency: Option<(ConcurrencyAttr, Span)>,
}

impl Effects {
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some_and(|f| f.value)
    }
}

/// `key` or `key = true|false`; another value is reported and read as `true`
/// (the other keys are still checked).
pub(crate) fn parse_flag(
    cx: &Ctxt,
    input: syn::parse::ParseStream,
    key: &syn::Ident,
) -> syn::Result<Flag> {
    let mut value = true;
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        match input.parse::<syn::Expr>()? {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => value = b.value,
            other => cx.error_spanned_by(
                &other,
                format!("`{key}` takes `true` or `false`, or no value (`{key}` alone means true)"),
            ),
        }
    }
    Ok(Flag {
        value,
        span: key.span(),
    })
}

/// `concurrency = "safe" | "exclusive" | "path:PARAM"`.
pub(crate) fn parse_concurrency(
    cx: &Ctxt,
    input: syn::parse::ParseStream,
) -> syn::Result<Option<(ConcurrencyAttr, Span)>> {
    input.parse::<Token![=]>()?;
    let lit: LitStr = input.parse()?;
    let text = lit.value();
    let value = match text.as_str() {
        "safe" => ConcurrencyAttr::Safe,
        "exclusive" => ConcurrencyAttr::Exclusive,
        _ => match text.strip_prefix(PATH_SCOPE_PREFIX) {
            Some(param) if !param.trim().is_empty() => {
                ConcurrencyAttr::PerPath(param.trim().to_string())
            }
            Some(_) => {
                cx.error_spanned_by(
                    &lit,
                    "`path:` needs the name of the string parameter holding the path, e.g. \"path:path\"",
                );
                return Ok(None);
            }
            None => {
                cx.error_spanned_by(
                    &lit,
                    format!(
                        "unknown concurrency `{text}`; expected \"safe\" (runs beside other calls), \"exclusive\" (runs alone) or \"path:PARAM\" (runs beside calls on other paths; PARAM is the string parameter holding the path)"
                    ),
                );
                return Ok(None);
            }
        },
    };
    Ok(Some((value, lit.span())))
}

/// A path scope names a string-typed property of the tool (whether its type
/// is a string is asserted by the macro, where the type is known).
pub(crate) fn check_scope(cx: &Ctxt, effects: &Effects, params: &[Param]) {
    let Some((ConcurrencyAttr::PerPath(name), span)) = &effects.concurrency else {
        return;
    };
    if scope_param(params, name).is_some() {
        return;
    }
    let properties: Vec<String> = params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Property { name, .. } => Some(format!("`{name}`")),
            _ => None,
        })
        .collect();
    let has_struct = params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::ArgsStruct));
    let msg = if has_struct {
        format!("`concurrency = \"path:{name}\"` needs `{name}` as a parameter of the function; the fields of an `args` struct cannot be checked here, so write the parameters out or use \"safe\" / \"exclusive\"")
    } else if properties.is_empty() {
        format!("`concurrency = \"path:{name}\"` names no parameter: this tool takes none")
    } else {
        format!(
            "`concurrency = \"path:{name}\"` names no parameter of this tool; its parameters are: {}",
            properties.join(", ")
        )
    };
    cx.error_at(*span, msg);
}

/// The property a path scope names, if the tool has it.
pub fn scope_param<'p>(params: &'p [Param], name: &str) -> Option<&'p Param> {
    params
        .iter()
        .find(|p| matches!(&p.kind, ParamKind::Property { name: n, .. } if n == name))
}

/// Two declarations that cannot both hold.
#[derive(Debug, Clone)]
pub struct Contradiction {
    /// The lint's name (`hermes_tool_model::lints`).
    pub lint: &'static str,
    pub message: String,
    /// The key the problem is reported on.
    pub span: Span,
    /// The other key of the pair.
    pub other: Span,
    pub help: &'static str,
}

/// The contradictions between the effect keys of one tool: read-only and
/// destructive; concurrency-safe (`"safe"`) but not read-only.
pub fn contradictions(effects: &Effects) -> Vec<Contradiction> {
    let mut out = Vec::new();
    let read_only = effects.read_only.filter(|f| f.value);
    if let (Some(ro), Some(d)) = (read_only, effects.destructive.filter(|f| f.value)) {
        out.push(Contradiction {
            lint: READ_ONLY_AND_DESTRUCTIVE,
            message: "a tool cannot be both `read_only` and `destructive`".to_string(),
            span: d.span,
            other: ro.span,
            help: "a read-only tool changes nothing, so it destroys nothing: drop one of the two keys",
        });
    }
    if let Some((ConcurrencyAttr::Safe, span)) = &effects.concurrency {
        if read_only.is_none() {
            out.push(Contradiction {
                lint: CONCURRENCY_SAFE_WRITE,
                message: "`concurrency = \"safe\"` on a tool that is not `read_only`: two of its calls could write at once".to_string(),
                span: *span,
                other: effects.read_only.map_or(*span, |f| f.span),
                help: "declare `read_only` if it changes nothing; if it writes one path, use `concurrency = \"path:PARAM\"`; else `concurrency = \"exclusive\"`",
            });
        }
    }
    out
}
