//! Reading a tools crate's compiled schemas: `{tool name: parameters}`, as
//! the generated tables of the built crate hold them (what the schema-level
//! lints check and the coercion plans are rendered from).
//!
//! For any tools crate, [`dump_crate`] writes a throwaway crate into the
//! crate's target folder (`target/hermes-dump/<package>-<hash>/`: a path
//! dependency on the crate and a `main` that prints
//! `<crate>::generated::TABLES.parameters_by_name()`), builds it with the
//! user's cargo into the user's target folder (the crate's lock file and
//! `[profile]` copied, so the build shares what the crate's own build
//! compiled), and runs it. Nothing is written into the crate.
//!
//! This workspace's xtask builds its crates' `dump_parameters` examples
//! instead and reads them with the same [`executables`] and [`run_dump`].

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// `{tool name: parameters}` of one crate's tools.
pub type Schemas = BTreeMap<String, Value>;

/// The folder of the target folder the dump crates are written in.
pub const DUMP_DIR: &str = "hermes-dump";

pub use hermes_build_tools::bases::cargo_command;
use hermes_build_tools::bases::cargo_metadata;

/// What `cargo metadata` says of the crate at a folder.
#[derive(Debug, Clone)]
pub struct CrateInfo {
    /// The package name.
    pub package: String,
    /// The library target's name (`my_agent`), if the crate has one.
    pub lib: Option<String>,
    /// The crate's folder (canonical).
    pub root: PathBuf,
    /// The root of its workspace (the crate itself when it is its own):
    /// where its `Cargo.lock` and `[profile]` are.
    pub workspace_root: PathBuf,
    /// The target folder its builds go to.
    pub target_dir: PathBuf,
}

/// `cargo metadata --no-deps` of the crate at `crate_root`.
pub fn crate_info(crate_root: &Path) -> Result<CrateInfo, String> {
    let root = crate_root
        .canonicalize()
        .map_err(|e| format!("cannot read {}: {e}", crate_root.display()))?;
    let manifest = root.join("Cargo.toml");
    let meta = cargo_metadata(&manifest, true)?;
    let same_file = |p: &str| Path::new(p).canonicalize().is_ok_and(|p| p == manifest);
    let package = meta["packages"]
        .as_array()
        .and_then(|ps| {
            ps.iter()
                .find(|p| p["manifest_path"].as_str().is_some_and(same_file))
        })
        .ok_or_else(|| format!("{} declares no [package]", manifest.display()))?;
    let lib = package["targets"].as_array().and_then(|ts| {
        ts.iter()
            .find(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "lib" || k == "rlib"))
            })
            .and_then(|t| t["name"].as_str())
            .map(|n| n.replace('-', "_"))
    });
    let path = |key: &str| {
        meta[key]
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| format!("cargo metadata gave no {key}"))
    };
    Ok(CrateInfo {
        package: package["name"].as_str().unwrap_or_default().to_owned(),
        lib,
        workspace_root: path("workspace_root")?,
        target_dir: path("target_directory")?,
        root,
    })
}

/// Builds and runs the throwaway dump crate of the crate at `crate_root`:
/// its tools' compiled schemas. Cargo's own messages (errors of a crate
/// that does not build) go to stderr as they come.
pub fn dump_crate(crate_root: &Path) -> Result<Schemas, String> {
    let info = crate_info(crate_root)?;
    let Some(lib) = info.lib.clone() else {
        return Err(format!(
            "`{}` has no library target: the schemas are read from `{}::generated::TABLES` (declare `pub mod tools;` and `pub mod generated;` in src/lib.rs)",
            info.package,
            info.package.replace('-', "_")
        ));
    };
    let (dir, bin) = write_dump_crate(&info, &lib)?;
    eprintln!(
        "reading the compiled schemas of `{}` (cargo build of {})",
        info.package,
        dir.display()
    );
    let output = cargo_command()
        .args([
            "build",
            "--quiet",
            "--message-format=json-render-diagnostics",
        ])
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &info.target_dir)
        // The crate's folder: its `.cargo/config.toml` and toolchain apply.
        .current_dir(&info.root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{}` does not build with its generated registry (cargo's errors above); it must export `{lib}::generated::TABLES` (`pub mod tools;` and `pub mod generated;` in src/lib.rs)",
            info.package
        ));
    }
    let exe = executables(&output.stdout)
        .remove(&bin)
        .ok_or_else(|| format!("cargo built no `{bin}` in {}", dir.display()))?;
    run_dump(&exe, &info.root)
}

/// Writes (where it changed) the dump crate of `info` in its target folder:
/// its folder and the name of its binary. The folder and the binary are
/// named after the crate's path too, so two crates of one package name
/// sharing a target folder do not overwrite each other's.
fn write_dump_crate(info: &CrateInfo, lib: &str) -> Result<(PathBuf, String), String> {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    info.root.hash(&mut hasher);
    let hash = format!("{:016x}", hasher.finish());
    let dir = info
        .target_dir
        .join(DUMP_DIR)
        .join(format!("{}-{hash}", info.package));
    let bin = format!("hermes_dump_{hash}");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let workspace_manifest = std::fs::read_to_string(info.workspace_root.join("Cargo.toml"))
        .map_err(|e| format!("cannot read the workspace's Cargo.toml: {e}"))?;
    let manifest = format!(
        "# Written by `cargo hermes` to read the compiled schemas of `{package}`;\n\
         # not part of any repository, rewritten on every run.\n\
         [package]\nname = \"hermes-dump-{hash}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [[bin]]\nname = \"{bin}\"\npath = \"main.rs\"\n\n\
         [dependencies]\n{package} = {{ path = {path} }}\n\n\
         # Its own workspace, even inside the crate's folder.\n[workspace]\n\n{profiles}",
        package = info.package,
        path = toml_string(&info.root.display().to_string()),
        profiles = profile_sections(&workspace_manifest),
    );
    let main = format!(
        "// Written by `cargo hermes`: prints `{{tool name: parameters}}` of `{package}`.\n\
         fn main() {{\n    println!(\"{{}}\", ::{lib}::generated::TABLES.parameters_by_name());\n}}\n",
        package = info.package,
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest)?;
    write_if_changed(&dir.join("main.rs"), &main)?;
    // The crate's lock file, so the same versions are built (cargo then adds
    // the dump package to the copy). Copied again only when it changed.
    let lock = info.workspace_root.join("Cargo.lock");
    if let Ok(text) = std::fs::read_to_string(&lock) {
        let copied = dir.join("source.lock");
        if std::fs::read_to_string(&copied).ok().as_deref() != Some(text.as_str()) {
            write_if_changed(&dir.join("Cargo.lock"), &text)?;
            write_if_changed(&copied, &text)?;
        }
    }
    Ok((dir, bin))
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A TOML string of `s`: literal (`'...'`) when it can be, else basic.
fn toml_string(s: &str) -> String {
    if !s.contains('\'') && !s.chars().any(char::is_control) {
        return format!("'{s}'");
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `[profile...]` tables of a manifest, as written: the dump crate is
/// built with the crate's profiles, so its dependencies are the artifacts
/// the crate's own build made. A table runs from its header to the next
/// header.
fn profile_sections(manifest: &str) -> String {
    let mut out = String::new();
    let mut keep = false;
    for line in manifest.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            let header = trimmed.trim_start_matches('[').trim_start();
            keep = header.starts_with("profile.") || header.starts_with("profile]");
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The executables of a `cargo build --message-format=json...` output, by
/// target name.
pub fn executables(cargo_stdout: &[u8]) -> BTreeMap<String, PathBuf> {
    let mut found = BTreeMap::new();
    for line in String::from_utf8_lossy(cargo_stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let (true, Some(name), Some(exe)) = (
            message["reason"] == "compiler-artifact",
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) {
            found.insert(name.to_string(), PathBuf::from(exe));
        }
    }
    found
}

/// Runs a dump executable (in `cwd`) and reads the `{tool name:
/// parameters}` object it prints.
pub fn run_dump(exe: &Path, cwd: &Path) -> Result<Schemas, String> {
    let output = Command::new(exe)
        .current_dir(cwd)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed:\n{}",
            exe.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| {
        format!(
            "{} printed no JSON object of tool name → parameters: {e}",
            exe.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_sections_are_copied_whole_and_nothing_else() {
        let manifest = "[package]\nname = \"a\"\n\n[profile.dev]\ndebug = 1\n\n[dependencies]\nx = \"1\"\n[profile.dev.package.\"*\"]\ndebug = false\n[ profile.release ]\nlto = true\n[workspace]\n";
        assert_eq!(
            profile_sections(manifest),
            "[profile.dev]\ndebug = 1\n\n[profile.dev.package.\"*\"]\ndebug = false\n[ profile.release ]\nlto = true\n"
        );
    }

    #[test]
    fn toml_strings() {
        assert_eq!(toml_string("/a/b c"), "'/a/b c'");
        assert_eq!(toml_string("/it's"), "\"/it's\"");
        assert_eq!(toml_string("C:\\x'"), "\"C:\\\\x'\"");
    }
}
