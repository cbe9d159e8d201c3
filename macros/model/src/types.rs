//! What the model asks of a `syn` type, shared by the function's
//! signature (a `Result` return) and its parameters (the injected context).

/// Whether `ty` is a path type whose last segment is `name` (`a::b::Name<..>`).
pub(crate) fn last_segment_is(ty: &syn::Type, name: &str) -> bool {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().is_some_and(|s| s.ident == name)
        }
        syn::Type::Group(g) => last_segment_is(&g.elem, name),
        syn::Type::Paren(p) => last_segment_is(&p.elem, name),
        _ => false,
    }
}
