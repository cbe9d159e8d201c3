//! Collects errors while analyzing, so one compile shows every mistake.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// An error sink. [`Ctxt::check`] must be called: dropping an unchecked
/// context that holds errors would lose them, so `Drop` panics (a bug in the
/// macro, never a user mistake).
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, msg: M) {
        self.push(syn::Error::new_spanned(tokens.into_token_stream(), msg));
    }

    pub fn error_at<M: Display>(&self, span: Span, msg: M) {
        self.push(syn::Error::new(span, msg));
    }

    pub fn syn_error(&self, err: syn::Error) {
        self.push(err);
    }

    fn push(&self, err: syn::Error) {
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(err);
        }
    }

    /// Consumes the collected errors: `Ok` when there were none, otherwise
    /// all of them combined into one `syn::Error`.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut iter = errors.into_iter();
        let Some(mut combined) = iter.next() else {
            return Ok(());
        };
        for err in iter {
            combined.combine(err);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        let unchecked = self
            .errors
            .borrow()
            .as_ref()
            .is_some_and(|errors| !errors.is_empty());
        if unchecked && !std::thread::panicking() {
            panic!("hermes-tool-model: Ctxt dropped without check()");
        }
    }
}
