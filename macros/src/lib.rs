//! `#[hermes_tool]`: turns a typed Rust function into a tool the model can call.
//!
//! The entry point only parses, hands the item to `expand` and turns errors
//! into `compile_error!`; analysis lives in `hermes-tool-model`, shared with
//! the build step, and generation in `expand.rs`.

mod expand;

use proc_macro::TokenStream;

/// Marks a free `fn` or `async fn` as a tool. See `docs/writing-tools.md` for the keys.
#[proc_macro_attribute]
pub fn hermes_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(attr.into(), item.into()).into()
}
