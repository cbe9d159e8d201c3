//! The one way generated code is formatted (the registry, the coercion
//! plans, the toolset table): rustfmt, then doc attributes back to `///`.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::Diagnostic;

/// The one way generated code is formatted: rustfmt, then doc attributes
/// back to `///` comments.
pub(crate) fn format_source(source: &str) -> Result<String, Box<Diagnostic>> {
    rustfmt(source).map(|s| doc_attrs_to_comments(&s))
}

/// `#[doc = r" text"]`, as `quote!` renders `///`, back to `/// text`;
/// also `#[doc = " text"]` (a doc from a string) when it has no escapes.
/// Stable rustfmt cannot do it (`normalize_doc_attributes` is unstable).
pub(crate) fn doc_attrs_to_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let raw = trimmed.strip_prefix("#[doc = r\"");
        let plain = trimmed
            .strip_prefix("#[doc = \"")
            .filter(|rest| !rest.contains('\\'));
        match raw.or(plain).and_then(|rest| rest.strip_suffix("\"]")) {
            Some(text) => {
                out.push_str(indent);
                out.push_str("///");
                out.push_str(text);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Formats Rust source with the toolchain's rustfmt (as `cargo fmt` would).
pub(crate) fn rustfmt(source: &str) -> Result<String, Box<Diagnostic>> {
    let fail = |what: String| {
        Box::new(
            Diagnostic::error(format!("rustfmt failed on the generated registry: {what}"))
                .note("rustfmt comes with the toolchain: `rustup component add rustfmt`"),
        )
    };
    let mut child = Command::new(std::env::var_os("RUSTFMT").unwrap_or_else(|| "rustfmt".into()))
        .args(["--edition", "2021", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(source.as_bytes())
            .map_err(|e| fail(e.to_string()))?;
    }
    let output = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
    if !output.status.success() {
        return Err(fail(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    String::from_utf8(output.stdout).map_err(|e| fail(e.to_string()))
}
