//! The build step of a tools crate, as a library: what `cargo hermes gen`
//! and `cargo hermes check-tools` run in any crate, and what this
//! workspace's `cargo xtask gen` runs on its own crates.
//!
//! `gen` is phase 1 of the build step: discover `src/tools/`, check it
//! against `toolsets.toml` (and the toolsets of the crates it `builds_on`),
//! write `src/generated.rs`. A crate without checked-in coercion plans gets
//! an empty `src/generated_plans.rs`; the runtime then compiles each tool's
//! plan from its schema on first use (the workspace's xtask also runs phase
//! 2, which needs the crate's `dump_parameters` example).

use std::collections::BTreeMap;
use std::path::Path;

use hermes_build_tools::lints::{check_sources_of, Checked};
use hermes_build_tools::report::{render_text, summary, to_json, Sources};
use hermes_build_tools::{
    ensure_file, render_plans, render_registry, Diagnostic, FileState, GENERATED_FILE, PLANS_FILE,
};

/// Writes (or, with `check`, compares) `target`, saying what happened on
/// stderr. `false` on failure (stale or unwritable).
pub fn ensure(target: &Path, contents: &str, check: bool, what: &str, regen: &str) -> bool {
    match ensure_file(target, contents, check) {
        Ok(FileState::Unchanged) => {
            eprintln!("{} is up to date ({what})", target.display());
            true
        }
        Ok(FileState::Written) => {
            eprintln!("wrote {} ({what})", target.display());
            true
        }
        Ok(FileState::Stale) => {
            eprintln!(
                "error: {} is stale: the tools changed since it was generated\n  run `{regen}` and commit the result",
                target.display()
            );
            false
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", target.display());
            false
        }
    }
}

/// Phase 1 of the build step on the crate at `crate_root`: discover, check,
/// write (or with `check`, compare) its registry. `regen` is the command
/// the user reruns (for messages). `false` on failure.
pub fn gen_crate(crate_root: &Path, check: bool, regen: &str) -> bool {
    let (discovery, source) = match render_registry(crate_root) {
        Ok(ok) => ok,
        Err(diagnostics) => {
            eprint!("{}", render(crate_root, &diagnostics));
            let n = diagnostics.iter().filter(|d| d.is_error()).count();
            eprintln!("error: could not generate the registry due to {n} previous error(s)");
            return false;
        }
    };
    eprint!("{}", render(crate_root, &discovery.warnings));
    let tools = discovery.tools().count();
    let fresh = ensure(
        &crate_root.join(GENERATED_FILE),
        &source,
        check,
        &format!("{tools} tools"),
        regen,
    );
    // The registry includes the plans file; a new crate starts with an empty
    // one (filled by a phase 2 where there is one).
    let plans = crate_root.join(PLANS_FILE);
    if !check && !plans.exists() {
        match render_plans(&BTreeMap::new()) {
            Ok(empty) => return fresh && ensure(&plans, &empty, false, "no plans yet", regen),
            Err(d) => {
                eprint!("{d}");
                return false;
            }
        }
    }
    fresh
}

/// Diagnostics of the crate at `crate_root`, rustc-style, paths relative to it.
pub fn render(crate_root: &Path, diagnostics: &[Diagnostic]) -> String {
    render_text(diagnostics, &mut Sources::new(crate_root))
}

/// How `check-tools` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// rustc-style, on stderr.
    Text,
    /// One JSON document on stdout (`crates[].diagnostics[]`).
    Json,
}

/// The source-level tool contract of the crate at `crate_root`, across the
/// crates it builds on (`foreign-tool-in-description`, `duplicate-tool-name`
/// and the rest look at their tools too). Prints the report; returns the
/// checked result (errors make the command fail).
pub fn check_tools(crate_root: &Path, format: Format) -> Checked {
    let checked = check_sources_of(crate_root);
    match format {
        Format::Text => {
            let mut sources = Sources::new(crate_root);
            for (file, text) in &checked.sources {
                sources.insert(file, text.clone());
            }
            eprint!("{}", render_text(&checked.diagnostics, &mut sources));
            let what = format!("check-tools ({} tools)", checked.tools);
            eprintln!("{}", summary(&checked.diagnostics, &what));
        }
        Format::Json => {
            let doc = serde_json::json!({
                "crates": [{
                    "crate": ".",
                    "tools": checked.tools,
                    "allowed": checked.allowed,
                    "diagnostics": checked.diagnostics.iter().map(to_json).collect::<Vec<_>>(),
                }]
            });
            println!("{doc:#}");
        }
    }
    checked
}
