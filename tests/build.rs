//! Checks the tool contract before the crate compiles: the source-level
//! lints of `cargo xtask check-tools` run on `src/tools/` and
//! `toolsets.toml`, and a violation fails the build at the tool's line.

fn main() {
    hermes_build_tools::build_script_check();
}
