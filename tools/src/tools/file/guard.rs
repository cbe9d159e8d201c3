//! The file tools' guards: which files a tool may not read, and where it
//! may not write. One home for the rule: `read_file` and `search_files`
//! call [`check_read`] (or a [`Guard`] they keep for a walk), `write_file`,
//! `patch` (both modes) and any future tool that writes call
//! [`check_write`] before touching the disk.
//!
//! Both resolve the path first as the kernel will: `~` is the user's home
//! (`$HOME`), a relative path joins the working directory, symlinks are
//! followed (also through the folders of a file that does not exist yet)
//! and `..` is applied after them. The lists below are resolved the same
//! way, so neither a symlinked home nor a link in the path gets around them.
//!
//! Read block-list (the file holds secrets the model never needs):
//! - in the profile's home and in the Hermes root (the parent of
//!   `profiles/<name>`, or `~/.hermes` when the profile is under it):
//!   [`CREDENTIAL_STORES`], anything under `mcp-tokens/`, and the skills
//!   hub cache (`skills/.hub/`, a carrier for prompt injection);
//! - anywhere: environment files named as in [`ENV_FILE_NAMES`].
//!
//! Write deny-list: the paths of [`hermes_procs::protected::write_protected`]
//! (the profile's policy files, credentials and state, other profiles'
//! folders, the credential files of the user's homes, system folders;
//! one list, which the command sandbox uses too) and any other profile's
//! folder ([`hermes_procs::protected::other_profile`]); and, with
//! `HERMES_WRITE_SAFE_ROOT` set (folders separated by `:`; the process
//! environment, else the profile's `.env`), anything outside those folders.
//!
//! The read list is defence in depth, as in the reference: a command runs
//! as the same user. The write list is also what the command sandbox keeps
//! out of reach.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use hermes_runtime::paths::{expand_home, real_write_path};
use hermes_runtime::{Profile, ToolContext};

use super::fsguard::{kernel_read_rule, KernelRead};
use hermes_procs::protected::{
    hermes_root, other_profile, protecting, write_protected, Protected, CREDENTIAL_STORES,
};

/// Environment files (compared without case) never read, wherever they are.
pub const ENV_FILE_NAMES: &[&str] = &[
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.staging",
    ".envrc",
];
/// The system's secrets, never read (even where the reference reads
/// them): the file, or a folder and what is under it, and why.
pub const SYSTEM_SECRETS: &[(&str, &str)] = &[
    ("/etc/shadow", "it holds the system's password hashes"),
    (
        "/etc/shadow-",
        "it holds the system's password hashes (a backup)",
    ),
    (
        "/etc/gshadow",
        "it holds the system's group password hashes",
    ),
    (
        "/etc/gshadow-",
        "it holds the system's group password hashes (a backup)",
    ),
    (
        "/etc/security/opasswd",
        "it holds the system's old password hashes",
    ),
    (
        "/etc/master.passwd",
        "it holds the system's password hashes",
    ),
    ("/etc/sudoers", "it is the system's sudo policy"),
    ("/etc/sudoers.d", "it is the system's sudo policy"),
    (
        "/etc/ssl/private",
        "it holds the machine's private TLS keys",
    ),
];

/// Why `path` (absolute, `..` applied) is one of the system's secrets, if
/// it is: [`SYSTEM_SECRETS`], and the private SSH host keys
/// (`/etc/ssh/ssh_host_*key`, not their `.pub`).
fn system_secret(path: &Path) -> Option<&'static str> {
    if let Some(&(_, why)) = SYSTEM_SECRETS.iter().find(|(p, _)| path.starts_with(p)) {
        return Some(why);
    }
    let name = path.strip_prefix("/etc/ssh").ok()?.to_str()?;
    (name.starts_with("ssh_host_") && name.ends_with("key") && !name.contains('/'))
        .then_some("it is a private SSH host key of this machine")
}

/// The variable naming the only folders writes may land in.
pub const SAFE_ROOT_VAR: &str = "HERMES_WRITE_SAFE_ROOT";

/// The real path `path` (as the model gave it) reaches from `cwd`: `~`
/// expanded, symlinks followed, `..` applied after them.
fn real(cwd: &Path, path: &Path) -> PathBuf {
    let expanded = path.to_str().map_or(Cow::Borrowed(path), expand_home);
    let full = cwd.join(expanded);
    real_write_path(&full).unwrap_or_else(|_| lexical(&full))
}

/// `path` made absolute with `.` and `..` applied to the text alone, as
/// the reference's second look at a write target does.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The lists of one call, resolved once: [`Guard::read_error`] and
/// [`Guard::write_error`] then only compare paths, so a search can check
/// every file it meets.
#[derive(Debug, Clone)]
pub struct Guard {
    cwd: PathBuf,
    profile: Profile,
    /// The read block-list: exact files, and folders.
    read_files: Vec<PathBuf>,
    read_dirs: Vec<(PathBuf, &'static str)>,
    /// The write deny-list: `hermes_procs::protected`'s, listed at the first
    /// write check (reads never need it).
    protected: std::sync::OnceLock<Vec<Protected>>,
    /// `HERMES_WRITE_SAFE_ROOT`: its folders (real) and its text.
    safe_roots: Option<(Vec<PathBuf>, String)>,
}

impl Guard {
    /// The guard for calls made with `ctx`: its working directory and
    /// profile, and the user's home (`$HOME`).
    pub fn new(ctx: &ToolContext) -> Self {
        Self::with_cwd(ctx, ctx.cwd().to_path_buf())
    }

    /// The guard of another machine's paths (a remote backend's): the same
    /// lists, with relative paths joined to that machine's `cwd`. Paths
    /// come to it absolute and real as that machine resolved them.
    pub fn for_remote(ctx: &ToolContext, cwd: &str) -> Self {
        Self::with_cwd(ctx, PathBuf::from(cwd))
    }

    /// Why another machine's file may not be read: the kernel files and
    /// the block-list by name, on the path as given (absolute) and its
    /// real path there.
    pub fn remote_read_error(&self, given: &Path, real: &Path) -> Option<String> {
        for p in [given, real] {
            if let KernelRead::Refused(why) = kernel_read_rule(p) {
                return Some(format!("Refused to read {}: {why}", shown(given, real)));
            }
        }
        self.read_error(given, real)
    }

    fn with_cwd(ctx: &ToolContext, cwd: PathBuf) -> Self {
        let resolve = |p: &Path| real(&cwd, p);
        let profile = resolve(ctx.profile().home());
        let mut hermes_dirs = vec![profile.clone()];
        let root = hermes_root(ctx.profile().home()).map(|r| resolve(&r));
        if let Some(root) = root.filter(|r| *r != profile) {
            hermes_dirs.push(root);
        }
        let mut read_files = Vec::new();
        let mut read_dirs = Vec::new();
        for dir in &hermes_dirs {
            for name in CREDENTIAL_STORES {
                read_files.push(resolve(&dir.join(name)));
            }
            read_dirs.push((resolve(&dir.join("mcp-tokens")), "mcp"));
            read_dirs.push((resolve(&dir.join("skills/.hub")), "hub"));
        }
        let safe_roots = std::env::var(SAFE_ROOT_VAR)
            .ok()
            .or_else(|| ctx.profile().secret(SAFE_ROOT_VAR))
            .filter(|v| !v.is_empty())
            .map(|text| {
                let roots = text
                    .split(':')
                    .filter(|p| !p.is_empty())
                    .map(|p| resolve(Path::new(p)))
                    .collect();
                (roots, text)
            });
        Guard {
            cwd,
            profile: ctx.profile().clone(),
            read_files,
            read_dirs,
            protected: std::sync::OnceLock::new(),
            safe_roots,
        }
    }

    /// The real path of `path` as given by the model.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        real(&self.cwd, path)
    }

    /// Why the file at real path `real` may not be read, if it may not
    /// (`given` is how the model named it).
    pub fn read_error(&self, given: &Path, real: &Path) -> Option<String> {
        let shown = shown(given, real);
        // By name first, the path as given and where it leads.
        let lexical = lexical(
            &self
                .cwd
                .join(given.to_str().map_or(Cow::Borrowed(given), expand_home)),
        );
        for p in [lexical.as_path(), real] {
            if let Some(why) = system_secret(p) {
                return Some(format!(
                    "Refused to read {shown}: {why}. The file tools never read the system's \
                     secrets; if a task needs it, the user can look at it themselves"
                ));
            }
        }
        let reminder = "This guard is defence in depth, not a security boundary";
        if let Some((_, what)) = self.read_dirs.iter().find(|(dir, _)| real.starts_with(dir)) {
            return Some(if *what == "hub" {
                format!(
                    "Refused to read {shown}: it is in the skills hub cache of Hermes, whose \
                     files can carry prompt injection. Use skills_list or skill_view to look \
                     at skills"
                )
            } else {
                format!(
                    "Refused to read {shown}: it is in the MCP token store of Hermes, which \
                     holds OAuth tokens. {reminder}"
                )
            });
        }
        if self.read_files.iter().any(|f| f == real) {
            return Some(format!(
                "Refused to read {shown}: it is a credential store of Hermes (provider keys \
                 and tokens); the tools that need those credentials read them themselves. \
                 {reminder}"
            ));
        }
        let name = real.file_name()?.to_str()?.to_lowercase();
        ENV_FILE_NAMES.contains(&name.as_str()).then(|| {
            format!(
                "Refused to read {shown}: environment files like {name} hold secrets (API \
                 keys, passwords). To see which variables a project expects, read its \
                 .env.example (or similar) instead. {reminder}"
            )
        })
    }

    /// Why a write to real path `real` is refused, if it is (`given` is
    /// how the model named it; `action` says what the tool was doing).
    pub fn write_error(&self, given: &Path, real: &Path, action: &str) -> Option<String> {
        let shown = shown(given, real);
        let lexical = lexical(
            &self
                .cwd
                .join(given.to_str().map_or(Cow::Borrowed(given), expand_home)),
        );
        let rule = [real, lexical.as_path()].into_iter().find_map(|p| {
            protecting(
                self.protected
                    .get_or_init(|| write_protected(&self.profile)),
                p,
            )
            .map(|e| e.rule.clone())
            .or_else(|| other_profile(&self.profile, p))
        });
        if let Some(rule) = rule {
            return Some(format!(
                "Refused to {action} {shown}: {rule}. Nothing was written; this path is \
                 protected from every tool and command of the agent"
            ));
        }
        if let Some((roots, text)) = &self.safe_roots {
            if !roots.iter().any(|root| real.starts_with(root)) {
                return Some(format!(
                    "Refused to {action} {shown}: it is outside {SAFE_ROOT_VAR} ({text}), the \
                     only folders writes may land in. Nothing was written; write under one of \
                     them, or ask the user to change the variable"
                ));
            }
        }
        None
    }
}

/// How an error names the path: as given, and where it leads when that
/// differs.
fn shown(given: &Path, real: &Path) -> String {
    if given == real {
        format!("'{}'", given.display())
    } else {
        format!("'{}' (which is {})", given.display(), real.display())
    }
}

/// Checks that the file `path` (as the model gave it, relative to the
/// working directory of `ctx`) may be read; returns its real path, or the
/// reason it may not be read.
pub fn check_read(ctx: &ToolContext, path: &Path) -> Result<PathBuf, String> {
    let guard = Guard::new(ctx);
    let real = guard.resolve(path);
    // Kernel files by name, the path as given and where it leads: an entry
    // of a process that is gone, or a link that cannot be followed
    // (`/dev/stdout`), is refused for what it is, never "not found".
    let lexical = lexical(
        &guard
            .cwd
            .join(path.to_str().map_or(Cow::Borrowed(path), expand_home)),
    );
    for p in [lexical.as_path(), real.as_path()] {
        if let KernelRead::Refused(why) = kernel_read_rule(p) {
            return Err(format!("Refused to read {}: {why}", shown(path, &real)));
        }
    }
    match guard.read_error(path, &real) {
        Some(err) => Err(err),
        None => Ok(real),
    }
}

/// Checks that `path` (as the model gave it, relative to the working
/// directory of `ctx`) may be written; returns its real path (where the
/// write lands), or the reason it may not be written. `action` names what
/// the tool does ("write", "patch", "delete", "move").
pub fn check_write(ctx: &ToolContext, path: &Path, action: &str) -> Result<PathBuf, String> {
    let guard = Guard::new(ctx);
    let real = guard.resolve(path);
    match guard.write_error(path, &real, action) {
        Some(err) => Err(err),
        None => Ok(real),
    }
}
