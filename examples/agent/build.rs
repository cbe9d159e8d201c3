//! The tool contract before the crate compiles: a tool of an undeclared
//! toolset, a missing description, a bad name fail `cargo build` here, with
//! the diagnostics of `cargo hermes check-tools`, as in the workspace.

fn main() {
    hermes_build_tools::build_script_check();
}
