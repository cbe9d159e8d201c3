//! The crates a tools crate builds on (`builds_on = ["hermes-tools"]` in
//! its `toolsets.toml`): their tools and toolsets, so the crate's table can
//! extend them and the lints can look across the composition.
//!
//! A base is found by its package name: a path dependency of the crate's
//! `Cargo.toml` directly, anything else through `cargo metadata`. Its tools
//! are discovered and its table read as for the crate itself (its own bases
//! included, so a chain of crates composes) by `crate::read_toolsets`, which
//! does the loading; this module finds the crates and summarises them.

use std::path::{Path, PathBuf};

use crate::discover::Discovery;
use crate::toolsets::{BaseNames, Table};

/// One crate the table builds on, with what the table may name of it.
#[derive(Debug, Clone)]
pub struct Base {
    /// The package name, as `builds_on` writes it.
    pub package: String,
    /// Its folder.
    pub root: PathBuf,
    /// Its tools (and those of its own bases).
    pub discovery: Discovery,
    /// Its toolset table, its declared members added.
    pub table: Table,
}

impl Base {
    /// Tool names of this base.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.discovery.tools().map(|(_, t)| t.tool.name.as_str())
    }

    /// Toolset names (declared toolsets and platform bundles) of this base.
    pub fn toolset_names(&self) -> impl Iterator<Item = String> + '_ {
        self.table
            .expanded_toolsets()
            .into_iter()
            .map(|t| t.name.name)
    }
}

/// The summary of a table's bases ([`BaseNames::of`]) is made here, beside
/// [`Base`]; the type lives with the table that holds it.
impl BaseNames {
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.toolsets.is_empty()
    }

    /// The summary of `bases`.
    pub fn of(bases: &[Base]) -> Self {
        let mut names = BaseNames::default();
        for b in bases {
            for (_, t) in b.discovery.tools() {
                names.tools.push((
                    t.tool.name.clone(),
                    t.tool.attr.toolset().to_string(),
                    b.package.clone(),
                ));
            }
            names.toolsets.extend(b.toolset_names());
            names
                .aliases
                .extend(b.table.aliases.iter().map(|a| a.alias.name.clone()));
            names
                .platforms
                .extend(b.table.platforms.iter().map(|p| p.name.name.clone()));
            // What the base itself builds on.
            let deeper = &b.table.base;
            names.tools.extend(deeper.tools.iter().cloned());
            names.toolsets.extend(deeper.toolsets.iter().cloned());
            names.aliases.extend(deeper.aliases.iter().cloned());
            names.platforms.extend(deeper.platforms.iter().cloned());
        }
        names.tools.sort();
        names.tools.dedup();
        for list in [
            &mut names.toolsets,
            &mut names.aliases,
            &mut names.platforms,
        ] {
            list.sort();
            list.dedup();
        }
        names
    }
}

/// The folder of package `name` as the crate at `crate_root` depends on it.
pub fn locate_package(crate_root: &Path, name: &str) -> Result<PathBuf, String> {
    if let Some(path) = path_dependency(crate_root, name) {
        return Ok(path);
    }
    let meta = cargo_metadata(&crate_root.join("Cargo.toml"), false)?;
    meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == name)
        .and_then(|p| p["manifest_path"].as_str())
        .and_then(|m| Path::new(m).parent().map(Path::to_path_buf))
        .ok_or_else(|| {
            format!("`builds_on` names `{name}`, which is not a package this crate depends on")
        })
}

/// The cargo that runs us (`cargo hermes` and `cargo xtask` are run by
/// cargo, which says which binary it is in `CARGO`), else `cargo`.
pub fn cargo() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// A command of [`cargo`] without the variables cargo sets for the crate
/// that runs us (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, … when a test or
/// `cargo run` starts us). Build scripts may watch them (ring's watches
/// `CARGO_MANIFEST_DIR`): a build with the caller's values would record
/// them, and the next plain build in the same target folder would compile
/// those crates again.
pub fn cargo_command() -> std::process::Command {
    let mut command = std::process::Command::new(cargo());
    for (key, _) in std::env::vars_os() {
        if key.to_str().is_some_and(is_crate_context) {
            command.env_remove(key);
        }
    }
    command
}

/// A variable cargo sets for a crate's own build, tests or run, not a
/// setting of cargo (`CARGO_HOME`, `CARGO_TARGET_DIR`, … stay).
fn is_crate_context(key: &str) -> bool {
    key.starts_with("CARGO_PKG_")
        || key.starts_with("CARGO_BIN_EXE_")
        || matches!(
            key,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
                | "CARGO_RUSTC_CURRENT_DIR"
        )
}

/// `cargo metadata` (`--no-deps` when `no_deps`) of the package whose
/// manifest is `manifest`, run in its folder so its `.cargo/config.toml`
/// and toolchain apply.
pub fn cargo_metadata(manifest: &Path, no_deps: bool) -> Result<serde_json::Value, String> {
    let mut command = cargo_command();
    command.args(["metadata", "--format-version", "1"]);
    if no_deps {
        command.arg("--no-deps");
    }
    if let Some(dir) = manifest.parent() {
        command.current_dir(dir);
    }
    let output = command
        .arg("--manifest-path")
        .arg(manifest)
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed on {}:\n{}",
            manifest.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))
}

/// `name = { path = "..." }` in `[dependencies]` of the crate's manifest,
/// or through `workspace = true` in its workspace's.
fn path_dependency(crate_root: &Path, name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(crate_root.join("Cargo.toml")).ok()?;
    let manifest: toml::Table = text.parse().ok()?;
    let dep = manifest.get("dependencies")?.get(name)?;
    if let Some(path) = dep.get("path").and_then(toml::Value::as_str) {
        return Some(crate_root.join(path));
    }
    if dep.get("workspace").and_then(toml::Value::as_bool) == Some(true) {
        for dir in crate_root.ancestors().skip(1) {
            let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
                continue;
            };
            let ws: toml::Table = text.parse().ok()?;
            if let Some(w) = ws.get("workspace") {
                let path = w.get("dependencies")?.get(name)?.get("path")?.as_str()?;
                return Some(dir.join(path));
            }
        }
    }
    None
}
