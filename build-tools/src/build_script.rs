//! The build script of a tools crate: the source-level lints of the tool
//! contract before the crate compiles.

use std::path::Path;

use crate::{lints, report, Diagnostic, TOOLSETS_FILE, TOOLS_DIR};

/// The build script of a tools crate (`build.rs`): runs the source-level
/// lints of the tool contract ([`lints::check_sources_of`]) on the crate
/// being built, so a registry that breaks one does not compile — also when
/// `cargo xtask gen` has not run since the last edit. Errors are printed
/// rustc-style (absolute paths) and fail the build; warnings become cargo
/// warnings. Reruns only when `src/tools/` or `toolsets.toml` change.
pub fn build_script_check() {
    println!("cargo::rerun-if-changed={TOOLS_DIR}");
    println!("cargo::rerun-if-changed={TOOLSETS_FILE}");
    let Some(root) = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from) else {
        println!("cargo::warning=CARGO_MANIFEST_DIR is not set: the tool contract was not checked");
        return;
    };
    let checked = lints::check_sources_of(&root);
    for w in checked.diagnostics.iter().filter(|d| !d.is_error()) {
        println!("cargo::warning={}", one_line(&root, w));
    }
    let errors: Vec<&Diagnostic> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    if errors.is_empty() {
        return;
    }
    let mut sources = report::Sources::new(&root).display_root(&root);
    for (file, text) in &checked.sources {
        sources.insert(file, text.clone());
    }
    let errors: Vec<Diagnostic> = errors.into_iter().cloned().collect();
    eprint!("{}", report::render_text(&errors, &mut sources));
    eprintln!(
        "{}",
        report::summary(&errors, "the tool contract (cargo xtask check-tools)")
    );
    for e in &errors {
        println!("cargo::error={}", one_line(&root, e));
    }
    std::process::exit(1);
}

/// `path:line:col: [lint] message`, for cargo's one-line messages.
fn one_line(root: &Path, d: &Diagnostic) -> String {
    let place = d.file.as_ref().map_or_else(String::new, |f| {
        format!("{}:{}:{}: ", root.join(f).display(), d.line, d.column)
    });
    let lint = d.lint.map_or_else(String::new, |l| format!("[{l}] "));
    format!("{place}{lint}{}", d.message).replace('\n', " ")
}
