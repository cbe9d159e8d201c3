//! The sandbox every command runs in (docs/terminal.md#sandbox).
//!
//! The policy comes from the profile's `config.yaml` (`terminal.sandbox`,
//! `terminal.sandbox_network`, `terminal.sandbox_writable_roots`,
//! `terminal.sandbox_fallback`), read at call time ([`decide`]). A
//! sandboxed command is started as `HELPER __sandbox OPTIONS -- shell -c
//! SCRIPT`: the helper mode of the agent's own binary ([`helper`]) applies
//! the rules to itself and execs the shell, which inherits them. The agent
//! itself is never restricted.
//!
//! The helper is the `hermes-tools` binary, or an embedding agent's own
//! binary when its `main` calls [`sandbox_helper`] first thing (as it calls
//! `private_environment`); [`set_helper_program`] names another one.
//! Without one, and on a kernel without Landlock, a sandboxed mode refuses
//! to run commands, unless `terminal.sandbox_fallback: unsandboxed`.

mod denial;
pub mod helper;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

use hermes_runtime::config::{SandboxFallback, SandboxMode, SandboxNetwork};
use hermes_runtime::ToolContext;

use crate::child_env::ChildEnv;

pub use denial::explain as explain_denial;

/// The first argument that starts the helper mode.
pub const HELPER_ARG: &str = "__sandbox";
/// The approval key of a command re-run outside the sandbox.
pub const ESCALATION_KEY: &str = "running outside the sandbox";
/// Test-only: `1` makes the agent see a kernel without Landlock (read once).
pub const FORCE_NO_LANDLOCK_VAR: &str = "HERMES_TEST_NO_LANDLOCK";

static HOOKED: AtomicBool = AtomicBool::new(false);
static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// Call first thing in `main`, before anything else (before
/// `private_environment`, which re-executes the program): when this
/// process was started as the sandbox helper (`PROGRAM __sandbox ...`) it
/// applies the rules and execs the command, and never returns; otherwise
/// it returns at once, and this executable becomes the sandbox helper of
/// the commands it starts.
pub fn sandbox_helper() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(OsStr::new(HELPER_ARG)) {
        helper::run(args.collect());
    }
    HOOKED.store(true, Ordering::Relaxed);
}

/// Names the program that serves as the sandbox helper (a `hermes-tools`
/// binary, or any binary whose `main` calls [`sandbox_helper`]), for an
/// agent that cannot hook its own `main`. `false` when one was set already.
pub fn set_helper_program(path: impl Into<PathBuf>) -> bool {
    HELPER.set(path.into()).is_ok()
}

/// The helper program: the one set, else this executable when it called
/// [`sandbox_helper`], else a `hermes-tools` binary beside this
/// executable or one folder up (cargo's layout: tests and benchmarks of
/// the workspace run from `target/*/deps/`).
pub fn helper_program() -> Option<PathBuf> {
    static FOUND: LazyLock<Option<PathBuf>> = LazyLock::new(|| {
        let exe = std::env::current_exe().ok()?;
        if HOOKED.load(Ordering::Relaxed) {
            return Some(exe);
        }
        let dir = exe.parent()?;
        let found = [Some(dir), dir.parent()]
            .into_iter()
            .flatten()
            .map(|d| d.join("hermes-tools"))
            .find(|p| p.is_file());
        found
    });
    HELPER.get().cloned().or_else(|| FOUND.clone())
}

/// Whether this kernel enforces Landlock (probed once; the test knob
/// [`FORCE_NO_LANDLOCK_VAR`] says no).
pub fn landlock_available() -> bool {
    static AVAILABLE: LazyLock<bool> = LazyLock::new(|| {
        std::env::var(FORCE_NO_LANDLOCK_VAR).map_or(true, |v| v != "1")
            && helper::landlock_supported()
    });
    *AVAILABLE
}

/// What a sandboxed command may do: the policy of one call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Policy {
    pub mode: SandboxMode,
    pub network: SandboxNetwork,
    /// Writable roots (existing, with symlinks resolved).
    pub writable: Vec<PathBuf>,
    /// Never writable: (path, rule), from [`crate::protected`].
    pub protected: Vec<(PathBuf, String)>,
    helper: PathBuf,
}

/// Whether a command runs sandboxed.
#[derive(Debug, Clone)]
pub enum Decision {
    Sandboxed(Arc<Policy>),
    /// Not sandboxed: `full`, or the fallback (with a note for the model).
    Unsandboxed(Option<String>),
}

impl Decision {
    pub fn policy(&self) -> Option<Arc<Policy>> {
        match self {
            Decision::Sandboxed(p) => Some(p.clone()),
            Decision::Unsandboxed(_) => None,
        }
    }

    pub fn note(&self) -> Option<String> {
        match self {
            Decision::Sandboxed(_) => None,
            Decision::Unsandboxed(note) => note.clone(),
        }
    }
}

/// The workspace of a call: `terminal.cwd` of the profile's config.yaml,
/// else the caller's directory. Where a `cd` leads does not widen it.
pub fn workspace(ctx: &ToolContext) -> PathBuf {
    match &ctx.profile().config().terminal.cwd.value {
        Some(configured) => ctx.resolve(configured),
        None => ctx.cwd().to_path_buf(),
    }
}

/// The sandbox of a command of `ctx` with environment `env`; `Err` is the
/// refusal (a sandboxed mode that cannot be applied here).
pub fn decide(ctx: &ToolContext, env: &ChildEnv) -> Result<Decision, String> {
    let config = ctx.profile().config();
    let t = &config.terminal;
    let mode = t.sandbox.value;
    if mode == SandboxMode::Full {
        return Ok(Decision::Unsandboxed(None));
    }
    let missing = if !landlock_available() {
        Some("this kernel does not enforce Landlock".to_string())
    } else if helper_program().is_none() {
        Some(
            "no sandbox helper: the agent's binary must call hermes_procs::sandbox::sandbox_helper() \
             first in main (or hermes_procs::sandbox::set_helper_program)"
                .to_string(),
        )
    } else {
        None
    };
    if let Some(why) = missing {
        return match t.sandbox_fallback.value {
            SandboxFallback::Refuse => Err(format!(
                "the command was not run: terminal.sandbox is {} but {why}. Set \
                 terminal.sandbox_fallback: unsandboxed (or terminal.sandbox: full) in the \
                 profile's config.yaml to run commands without the sandbox",
                mode.as_str()
            )),
            SandboxFallback::Unsandboxed => Ok(Decision::Unsandboxed(Some(format!(
                "ran without the sandbox: {why} (terminal.sandbox_fallback: unsandboxed)"
            )))),
        };
    }
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    let mut writable: Vec<PathBuf> = Vec::new();
    if mode == SandboxMode::WorkspaceWrite {
        let mut roots = vec![workspace(ctx), PathBuf::from("/tmp")];
        if let Some(tmp) = env.get("TMPDIR") {
            roots.push(PathBuf::from(tmp));
        }
        roots.extend(t.sandbox_writable_roots.value.iter().cloned());
        for root in roots.iter().filter_map(|r| real(r)) {
            if !writable.contains(&root) {
                writable.push(root);
            }
        }
    }
    let protected: Vec<(PathBuf, String)> = crate::protected::write_protected(ctx.profile())
        .into_iter()
        .map(|p| (real(&p.path).unwrap_or(p.path), p.rule))
        .collect();
    // A root inside a protected path (a workspace in `/etc` or `~/.ssh`)
    // is no writable root: the protected path wins.
    writable.retain(|root| !protected.iter().any(|(p, _)| root.starts_with(p)));
    Ok(Decision::Sandboxed(Arc::new(Policy {
        mode,
        network: t.sandbox_network.value,
        writable,
        protected,
        helper: helper_program().unwrap_or_default(),
    })))
}

impl Policy {
    /// The helper's command line up to and including `--`: the shell and
    /// its arguments follow. `cgroup`: the file the helper joins the
    /// command's cgroup through; `own`: the command's (or resident
    /// shell's) own folder inside the private folder, which stays visible
    /// and writable while the rest of the private folder is hidden.
    pub fn helper_command(&self, cgroup: Option<&Path>, own: Option<&Path>) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![self.helper.clone().into(), HELPER_ARG.into()];
        argv.push("--net".into());
        argv.push(self.network.as_str().into());
        let mut writable = self.writable.clone();
        if let Some(own) = own {
            writable.push(own.to_path_buf());
        }
        for root in &writable {
            argv.push("--write".into());
            argv.push(root.clone().into());
        }
        for (path, _) in &self.protected {
            argv.push("--protect".into());
            argv.push(path.clone().into());
        }
        if let Some(file) = cgroup {
            argv.push("--cgroup".into());
            argv.push(file.into());
        }
        if let (Some(own), Some(private)) = (own, crate::base::private_dir()) {
            if let (Ok(rest), Some(name)) = (own.strip_prefix(private), own.file_name()) {
                if rest == Path::new(name) {
                    argv.push("--hide".into());
                    argv.push(private.into());
                    argv.push("--keep".into());
                    argv.push(name.into());
                }
            }
        }
        argv.push("--".into());
        argv
    }

    /// The rule that keeps `path` (absolute, as the command named it)
    /// from being written; `None` when the policy lets it be written.
    pub fn rule_for(&self, path: &Path) -> Option<String> {
        if let Some((p, rule)) = self.protected.iter().find(|(p, _)| path.starts_with(p)) {
            return Some(format!(
                "{} is protected ({rule}: {}); no sandboxed command may write it",
                path.display(),
                p.display()
            ));
        }
        if self.mode == SandboxMode::ReadOnly {
            return Some(format!(
                "terminal.sandbox is read-only: {} cannot be written",
                path.display()
            ));
        }
        if self.writable.iter().any(|root| path.starts_with(root)) {
            return None;
        }
        let roots: Vec<String> = self
            .writable
            .iter()
            .map(|r| r.display().to_string())
            .collect();
        Some(format!(
            "{} is outside the writable roots of terminal.sandbox workspace-write ({}; more \
             through terminal.sandbox_writable_roots)",
            path.display(),
            roots.join(", ")
        ))
    }
}
