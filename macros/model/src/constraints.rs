//! Constraints on a plain parameter, written in serde's and schemars' own
//! attribute language, as on a struct field:
//!
//! ```ignore
//! async fn read_file(
//!     path: String,
//!     #[schemars(range(min = 1, max = 2000))]
//!     #[serde(default = "default_limit")]
//!     limit: u64,
//! )
//! ```
//!
//! Accepted: `#[schemars(range(min = .., max = ..))]` (numbers),
//! `#[schemars(length(min = .., max = .., equal = ..))]` (strings, arrays,
//! maps), `#[schemars(regex(pattern = ".."))]` / `#[schemars(pattern(".."))]`
//! (strings), `#[serde(default)]`, `#[serde(default = "path")]` and
//! `#[serde(rename = "name")]`. Anything else is an error spanned on it;
//! whether the type can carry a constraint is checked by rustc (the macro
//! asserts a trait of the runtime, spanned on the attribute).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Token};

use crate::Ctxt;

/// What `#[schemars(...)]` accepts on a parameter.
pub const SCHEMARS_KEYS: &[&str] = &["range", "length", "regex", "pattern"];
/// What `#[serde(...)]` accepts on a parameter.
pub const SERDE_KEYS: &[&str] = &["default", "rename"];

/// A parameter's constraints; each keeps the span of the attribute it came
/// from, for the type checks the macro emits.
#[derive(Debug, Clone, Default)]
pub struct Constraints {
    /// `minimum` / `maximum`: numeric literals (possibly negated), as written.
    pub range: Option<Bounds<Expr>>,
    /// `minLength` / `maxLength` (strings), `minItems` / `maxItems` (arrays),
    /// `minProperties` / `maxProperties` (maps).
    /// Integer literals or constants (`max = MAX_URLS`).
    pub length: Option<Bounds<Expr>>,
    pub pattern: Option<(String, Span)>,
    pub default: Option<DefaultValue>,
    /// `#[serde(rename = "...")]`: the property's name in the schema.
    pub rename: Option<(String, Span)>,
}

#[derive(Debug, Clone)]
pub struct Bounds<T> {
    pub min: Option<T>,
    pub max: Option<T>,
    /// The `range(...)` / `length(...)` item.
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum DefaultValue {
    /// `#[serde(default)]`: `Default::default()`.
    Trait(Span),
    /// `#[serde(default = "path")]`: a function returning the value.
    Path(syn::ExprPath, Span),
}

impl DefaultValue {
    pub fn span(&self) -> Span {
        match self {
            DefaultValue::Trait(s) | DefaultValue::Path(_, s) => *s,
        }
    }
}

impl Constraints {
    /// Whether decoding checks anything beyond the type.
    pub fn checks_value(&self) -> bool {
        self.range.is_some() || self.length.is_some() || self.pattern.is_some()
    }

    pub fn is_empty(&self) -> bool {
        !self.checks_value() && self.default.is_none() && self.rename.is_none()
    }
}

/// Whether `attr` is one the macro reads off a parameter (and strips).
pub fn is_constraint_attr(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("schemars") || attr.path().is_ident("serde")
}

/// Removes the attributes `parse` reads (rustc does not know them on a
/// parameter).
pub fn strip_constraint_attrs(attrs: &mut Vec<syn::Attribute>) {
    attrs.retain(|a| !is_constraint_attr(a));
}

/// Reads the `#[schemars]` and `#[serde]` attributes of one parameter.
pub(crate) fn parse(cx: &Ctxt, attrs: &[syn::Attribute]) -> Constraints {
    let mut c = Constraints::default();
    for attr in attrs {
        let result = if attr.path().is_ident("schemars") {
            attr.parse_nested_meta(|meta| schemars_item(cx, &mut c, meta))
        } else if attr.path().is_ident("serde") {
            attr.parse_nested_meta(|meta| serde_item(cx, &mut c, meta))
        } else {
            continue;
        };
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    c
}

fn key_of(meta: &syn::meta::ParseNestedMeta) -> String {
    use quote::ToTokens;
    meta.path.to_token_stream().to_string().replace(' ', "")
}

fn schemars_item(
    cx: &Ctxt,
    c: &mut Constraints,
    meta: syn::meta::ParseNestedMeta,
) -> syn::Result<()> {
    let key = key_of(&meta);
    let span = meta.path.span();
    match key.as_str() {
        "range" => {
            let mut b = Bounds {
                min: None,
                max: None,
                span,
            };
            meta.parse_nested_meta(|inner| {
                let k = key_of(&inner);
                let expr: Expr = inner.value()?.parse()?;
                if !is_number(&expr) {
                    cx.error_spanned_by(
                        &expr,
                        "a range bound must be a number literal (`min = 1`, `max = 2.5`, `min = -10`)",
                    );
                }
                match k.as_str() {
                    "min" => set_once(cx, &mut b.min, expr, &inner.path, "min"),
                    "max" => set_once(cx, &mut b.max, expr, &inner.path, "max"),
                    other => cx.error_spanned_by(
                        &inner.path,
                        format!("unknown item `{other}` in `range(...)`; expected `min` and/or `max`"),
                    ),
                }
                Ok(())
            })?;
            check_bounds_given(cx, &b, "range");
            if let (Some(min), Some(max)) = (
                b.min.as_ref().and_then(number),
                b.max.as_ref().and_then(number),
            ) {
                if min > max {
                    cx.error_at(span, format!("`range` has min {min} above max {max}"));
                }
            }
            duplicate(cx, c.range.is_some(), span, "range");
            c.range = Some(b);
        }
        "length" => {
            let mut b = Bounds {
                min: None,
                max: None,
                span,
            };
            meta.parse_nested_meta(|inner| {
                let k = key_of(&inner);
                let expr: Expr = inner.value()?.parse()?;
                if !is_length(&expr) {
                    cx.error_spanned_by(
                        &expr,
                        "a length bound is an integer literal or a constant (`max = 5`, `max = MAX_URLS`)",
                    );
                }
                match k.as_str() {
                    "min" => set_once(cx, &mut b.min, expr, &inner.path, "min"),
                    "max" => set_once(cx, &mut b.max, expr, &inner.path, "max"),
                    "equal" => {
                        set_once(cx, &mut b.min, expr.clone(), &inner.path, "min");
                        set_once(cx, &mut b.max, expr, &inner.path, "max");
                    }
                    other => cx.error_spanned_by(
                        &inner.path,
                        format!(
                            "unknown item `{other}` in `length(...)`; expected `min`, `max` or `equal`"
                        ),
                    ),
                }
                Ok(())
            })?;
            check_bounds_given(cx, &b, "length");
            if let (Some(min), Some(max)) = (
                b.min.as_ref().and_then(number),
                b.max.as_ref().and_then(number),
            ) {
                if min > max {
                    cx.error_at(span, format!("`length` has min {min} above max {max}"));
                }
            }
            duplicate(cx, c.length.is_some(), span, "length");
            c.length = Some(b);
        }
        "regex" => {
            let mut pattern = None;
            meta.parse_nested_meta(|inner| {
                if inner.path.is_ident("pattern") {
                    let lit: LitStr = inner.value()?.parse()?;
                    pattern = Some(lit.value());
                    Ok(())
                } else {
                    Err(inner.error("expected `regex(pattern = \"...\")`"))
                }
            })?;
            match pattern {
                Some(p) => {
                    duplicate(cx, c.pattern.is_some(), span, "pattern");
                    c.pattern = Some((p, span));
                }
                None => cx.error_at(span, "`regex(...)` needs `pattern = \"...\"`"),
            }
        }
        "pattern" => {
            let content;
            syn::parenthesized!(content in meta.input);
            let lit: LitStr = content.parse()?;
            duplicate(cx, c.pattern.is_some(), span, "pattern");
            c.pattern = Some((lit.value(), span));
        }
        other => {
            cx.error_at(
                span,
                format!(
                    "`{other}` is not supported in #[schemars(...)] on a tool parameter; expected one of: {}",
                    SCHEMARS_KEYS.join(", ")
                ),
            );
            skip_rest(&meta)?;
        }
    }
    Ok(())
}

fn serde_item(cx: &Ctxt, c: &mut Constraints, meta: syn::meta::ParseNestedMeta) -> syn::Result<()> {
    let key = key_of(&meta);
    let span = meta.path.span();
    match key.as_str() {
        "default" => {
            duplicate(cx, c.default.is_some(), span, "default");
            if meta.input.peek(Token![=]) {
                let lit: LitStr = meta.value()?.parse()?;
                match lit.parse::<syn::ExprPath>() {
                    Ok(path) => c.default = Some(DefaultValue::Path(path, lit.span())),
                    Err(_) => cx.error_spanned_by(
                        &lit,
                        "`default = \"...\"` names a function (`default = \"default_limit\"`)",
                    ),
                }
            } else {
                c.default = Some(DefaultValue::Trait(span));
            }
        }
        "rename" => {
            let lit: LitStr = meta.value()?.parse()?;
            duplicate(cx, c.rename.is_some(), span, "rename");
            c.rename = Some((lit.value(), lit.span()));
        }
        other => {
            cx.error_at(
                span,
                format!(
                    "`{other}` is not supported in #[serde(...)] on a tool parameter; expected one of: {}",
                    SERDE_KEYS.join(", ")
                ),
            );
            skip_rest(&meta)?;
        }
    }
    Ok(())
}

/// Consumes `= value` or `(...)` after an unknown key, so the keys after
/// it are still checked.
fn skip_rest(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.input.parse::<Token![=]>()?;
        meta.input.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
        let _: proc_macro2::TokenStream = _content.parse()?;
    }
    Ok(())
}

fn set_once<T>(cx: &Ctxt, slot: &mut Option<T>, value: T, path: &syn::Path, what: &str) {
    if slot.is_some() {
        cx.error_spanned_by(path, format!("`{what}` is given twice"));
    }
    *slot = Some(value);
}

fn duplicate(cx: &Ctxt, seen: bool, span: Span, what: &str) {
    if seen {
        cx.error_at(span, format!("`{what}` is given twice for this parameter"));
    }
}

fn check_bounds_given<T>(cx: &Ctxt, b: &Bounds<T>, what: &str) {
    if b.min.is_none() && b.max.is_none() {
        cx.error_at(b.span, format!("`{what}(...)` needs `min` and/or `max`"));
    }
}

/// A number literal, possibly negated.
fn is_number(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => is_number(&u.expr),
        Expr::Group(g) => is_number(&g.expr),
        _ => false,
    }
}

/// The value of a number literal (possibly negated).
pub fn number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_digits().parse().ok(),
            syn::Lit::Float(f) => f.base10_digits().parse().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => number(&u.expr).map(|n| -n),
        Expr::Group(g) => number(&g.expr),
        _ => None,
    }
}

/// An integer literal or a path to a constant.
fn is_length(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_)),
        Expr::Path(p) => p.qself.is_none(),
        Expr::Group(g) => is_length(&g.expr),
        _ => false,
    }
}
