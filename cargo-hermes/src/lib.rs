//! The build step of a tools crate, as a library: what `cargo hermes gen`
//! and `cargo hermes check-tools` run in any crate, and what this
//! workspace's `cargo xtask gen` / `check-tools` run on its own crates.
//!
//! `gen` is the build step: phase 1 discovers `src/tools/`, checks it
//! against `toolsets.toml` (and the toolsets of the crates it `builds_on`)
//! and writes the module declarations of `src/tools/` (`src/tools/mod.rs`)
//! and the registry that indexes them (`src/generated.rs`); phase 2 builds
//! the crate, reads every tool's compiled `parameters` ([`dump`]) and
//! renders the static coercion plans into `src/generated_plans.rs` and the
//! schemas as text into `src/generated_schemas.rs`. `check-tools` runs the source-level
//! lints, then, when the crate builds, the schema-level ones over the same
//! compiled schemas.

pub mod dump;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hermes_build_tools::lints::{check_all, check_sources_of, Checked};
use hermes_build_tools::report::{render_text, summary, to_json, Sources};
use hermes_build_tools::{
    ensure_file, render_plans, render_registry, render_schemas, Diagnostic, FileState,
    GENERATED_FILE, MODULES_FILE, PLANS_FILE, SCHEMAS_FILE,
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
/// write (or with `check`, compare) its module declarations and registry.
/// `regen` is the command the user reruns (for messages). `false` on
/// failure.
pub fn gen_crate(crate_root: &Path, check: bool, regen: &str) -> bool {
    let (discovery, rendered) = match render_registry(crate_root) {
        Ok(ok) => ok,
        Err(diagnostics) => {
            eprint!("{}", render(crate_root, &diagnostics));
            let n = diagnostics.iter().filter(|d| d.is_error()).count();
            eprintln!("error: could not generate the registry due to {n} previous error(s)");
            return false;
        }
    };
    eprint!("{}", render(crate_root, &discovery.warnings));
    let modules = crate_root.join(MODULES_FILE);
    if let Some(problem) = hand_written(&modules) {
        eprintln!("{problem}");
        return false;
    }
    let tools = discovery.tools().count();
    let fresh = ensure(
        &modules,
        &rendered.modules,
        check,
        &format!("{} tool modules", discovery.modules.len()),
        regen,
    ) & ensure(
        &crate_root.join(GENERATED_FILE),
        &rendered.registry,
        check,
        &format!("{tools} tools"),
        regen,
    );
    // The registry includes the plans and schemas files; a new crate starts
    // with empty ones, so that it builds for phase 2, which fills them.
    if check {
        return fresh;
    }
    type Render = fn(&BTreeMap<String, serde_json::Value>) -> Result<String, Box<Diagnostic>>;
    let starters: [(&str, Render, &str); 2] = [
        (PLANS_FILE, render_plans, "no plans yet"),
        (SCHEMAS_FILE, render_schemas, "no schemas yet"),
    ];
    let mut ok = fresh;
    for (file, render, what) in starters {
        let path = crate_root.join(file);
        if path.exists() {
            continue;
        }
        match render(&BTreeMap::new()) {
            Ok(empty) => ok &= ensure(&path, &empty, false, what, regen),
            Err(d) => {
                eprint!("{d}");
                return false;
            }
        }
    }
    ok
}

/// Why `gen` must not write `path` (the generated `src/tools/mod.rs`): it
/// holds something else than generated code, which it would overwrite.
fn hand_written(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    (!text.starts_with("// @generated")).then(|| {
        format!(
            "error: {} is not generated: `src/tools/mod.rs` is written by the build step (the module declarations of `src/tools/`)\n  move what it holds into the tool files (or the crate's own modules), delete it, then generate again",
            path.display()
        )
    })
}

/// Phase 2 of the build step: render the static coercion plans and the
/// schemas as text from the crate's compiled schemas (`parameters`, or why
/// they could not be read) and write (or with `check`, compare)
/// `src/generated_plans.rs` and `src/generated_schemas.rs`. `false` on
/// failure.
pub fn gen_plans(
    crate_root: &Path,
    parameters: Result<dump::Schemas, String>,
    check: bool,
    regen: &str,
) -> bool {
    let parameters = match parameters {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "error: {e}\nerror: the coercion plans and schemas were not rendered: {} and {} are left as they were",
                crate_root.join(PLANS_FILE).display(),
                crate_root.join(SCHEMAS_FILE).display()
            );
            return false;
        }
    };
    let n = parameters.len();
    let files = [
        (
            PLANS_FILE,
            render_plans(&parameters),
            format!("{n} coercion plans"),
        ),
        (
            SCHEMAS_FILE,
            render_schemas(&parameters),
            format!("{n} schemas"),
        ),
    ];
    let mut ok = true;
    for (file, rendered, what) in files {
        match rendered {
            Ok(source) => ok &= ensure(&crate_root.join(file), &source, check, &what, regen),
            Err(d) => {
                eprint!("{d}");
                ok = false;
            }
        }
    }
    ok
}

/// The whole build step on any tools crate (`cargo hermes gen`): phase 1,
/// then, when the registry is fresh, phase 2 over the schemas of the crate
/// built through a throwaway dump crate ([`dump::dump_crate`]).
pub fn gen_all(crate_root: &Path, check: bool, regen: &str) -> bool {
    gen_crate(crate_root, check, regen)
        && gen_plans(crate_root, dump::dump_crate(crate_root), check, regen)
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

/// Why the schema-level lints of a crate did not run.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// Said after the crate's diagnostics: `note: schema-level lints not
    /// run: {reason}`.
    pub reason: String,
    /// Whether that fails the check by itself (a crate that does not
    /// build), besides its errors.
    pub fails: bool,
}

/// What checking one crate gave.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `.` for the crate checked alone, else its folder in the workspace.
    pub name: String,
    pub checked: Checked,
    /// `None` when the schema-level lints ran.
    pub skipped: Option<Skipped>,
    /// Shown before paths in text output (`tools` for `tools/src/...`).
    pub display: Option<PathBuf>,
    pub root: PathBuf,
}

impl Outcome {
    /// The outcome of the lints run on the crate at `root`.
    pub fn new(root: &Path, display: Option<PathBuf>, checked: Checked) -> Self {
        Outcome {
            name: display
                .as_ref()
                .map_or_else(|| ".".to_owned(), |d| d.display().to_string()),
            checked,
            skipped: None,
            display,
            root: root.to_path_buf(),
        }
    }

    /// The same, the schema-level lints not run.
    pub fn skipped(mut self, reason: impl Into<String>, fails: bool) -> Self {
        self.skipped = Some(Skipped {
            reason: reason.into(),
            fails,
        });
        self
    }

    /// Whether the check of this crate failed.
    pub fn failed(&self) -> bool {
        self.checked.diagnostics.iter().any(Diagnostic::is_error)
            || self.skipped.as_ref().is_some_and(|s| s.fails)
    }
}

/// Every lint on the crate at `root`: the source-level ones, then, unless
/// they found errors (a crate that breaks them does not build: its build
/// script, where it has one, runs them), the schema-level ones over the
/// schemas `schemas` reads from the compiled crate. A crate whose schemas
/// cannot be read keeps its source-level diagnostics and says why the rest
/// did not run.
pub fn check_compiled(
    root: &Path,
    display: Option<PathBuf>,
    schemas: impl FnOnce() -> Result<dump::Schemas, String>,
) -> Outcome {
    let sources = check_sources_of(root);
    if sources.diagnostics.iter().any(Diagnostic::is_error) {
        return Outcome::new(root, display, sources).skipped(
            "fix the errors above first (the crate does not build with them)",
            false,
        );
    }
    match schemas() {
        Ok(schemas) => Outcome::new(root, display, check_all(root, &schemas)),
        Err(e) => Outcome::new(root, display, sources).skipped(e, true),
    }
}

/// The whole tool contract of the crate at `crate_root` (`cargo hermes
/// check-tools`): the source-level lints across the crates it builds on
/// (`foreign-tool-in-description`, `duplicate-tool-name` and the rest look
/// at their tools too), then the schema-level ones over the schemas of the
/// crate built through a throwaway dump crate. Prints the report; `true`
/// when it passed.
pub fn check_tools(crate_root: &Path, format: Format) -> bool {
    let outcome = check_compiled(crate_root, None, || dump::dump_crate(crate_root));
    let outcomes = [outcome];
    print(&outcomes, format);
    !outcomes.iter().any(Outcome::failed)
}

/// Prints the report of `outcomes` in `format`.
pub fn print(outcomes: &[Outcome], format: Format) {
    match format {
        Format::Text => print_text(outcomes),
        Format::Json => print_json(outcomes),
    }
}

fn print_text(outcomes: &[Outcome]) {
    let mut all: Vec<Diagnostic> = Vec::new();
    let mut tools = 0;
    let mut allowed = 0;
    for o in outcomes {
        let mut sources = Sources::new(&o.root);
        if let Some(display) = &o.display {
            sources = sources.display_root(display);
        }
        for (file, text) in &o.checked.sources {
            sources.insert(file, text.clone());
        }
        eprint!("{}", render_text(&o.checked.diagnostics, &mut sources));
        if let Some(skipped) = &o.skipped {
            let on = o
                .display
                .as_ref()
                .map(|d| format!("{}: ", d.display()))
                .unwrap_or_default();
            let level = if skipped.fails { "error" } else { "note" };
            eprintln!(
                "{level}: {on}schema-level lints not run: {}\n",
                skipped.reason
            );
        }
        all.extend(o.checked.diagnostics.iter().cloned());
        tools += o.checked.tools;
        allowed += o.checked.allowed;
    }
    let crates = if outcomes.len() == 1 {
        "1 crate".to_owned()
    } else {
        format!("{} crates", outcomes.len())
    };
    let tools = if tools == 1 {
        "1 tool".to_owned()
    } else {
        format!("{tools} tools")
    };
    let mut what = format!("check-tools ({tools} in {crates}");
    if allowed > 0 {
        what.push_str(&format!(", {allowed} allowed"));
    }
    what.push(')');
    eprintln!("{}", summary(&all, &what));
}

fn print_json(outcomes: &[Outcome]) {
    let crates: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            let mut one = serde_json::json!({
                "crate": o.name,
                "tools": o.checked.tools,
                "allowed": o.checked.allowed,
                "schema_level": o.skipped.is_none(),
                "diagnostics": o.checked.diagnostics.iter().map(to_json).collect::<Vec<_>>(),
            });
            if let Some(skipped) = &o.skipped {
                one["schema_level_skipped"] = serde_json::json!(skipped.reason);
            }
            one
        })
        .collect();
    let count = |error: bool| {
        outcomes
            .iter()
            .flat_map(|o| &o.checked.diagnostics)
            .filter(|d| d.is_error() == error)
            .count()
    };
    let doc = serde_json::json!({
        "crates": crates,
        "errors": count(true),
        "warnings": count(false),
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&doc).unwrap_or_else(|_| doc.to_string())
    );
}
