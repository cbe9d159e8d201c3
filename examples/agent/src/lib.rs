//! An agent on hermes-tools: the built-in tools and this crate's own
//! (`src/tools/`, declared by `cargo hermes gen` in `src/tools/mod.rs` and
//! registered in `src/generated.rs`)
//! in one registry, and a loop against an OpenAI-compatible endpoint.

pub mod chat;
pub mod generated;
pub mod tools;

use hermes_runtime::{ComposeError, Registry};

/// The built-in tools and this crate's, composed.
pub fn registry() -> Result<Registry, ComposeError> {
    Registry::compose(&[&hermes_tools::generated::TABLES, &generated::TABLES])
}
