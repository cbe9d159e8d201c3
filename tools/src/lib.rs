//! `hermes-tools`: the built-in tools and their generated registry.
//!
//! Tools live under `src/tools/`: a file with a top-level `#[hermes_tool]`
//! function, or a folder whose `tool.rs` has one (its other files are
//! helpers). `cargo xtask gen` finds them and writes `src/generated.rs`,
//! which wires the modules and indexes the tools; nothing here lists them.

pub mod generated;

pub use hermes_runtime::{Registry, ToolContext};

/// The registry of every built-in tool.
pub fn registry() -> &'static Registry {
    static REGISTRY: std::sync::LazyLock<Registry> =
        std::sync::LazyLock::new(|| Registry::new(&generated::TABLES));
    &REGISTRY
}
