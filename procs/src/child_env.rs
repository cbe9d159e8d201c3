//! The one environment builder for every child process a tool starts.
//!
//! A child never sees a copy of the launching process's environment: one
//! process serves many profiles, and its own variables (the agent's keys,
//! another profile's secrets, `CARGO_*`, …) are none of a command's
//! business. [`ChildEnv::for_profile`] starts from a clean base computed
//! from the system — not from `std::env` — and adds the profile's own
//! secrets (its `.env`, read at call time); [`ChildEnv::command`] builds a
//! `std::process::Command` with `env_clear()` and exactly those variables.
//!
//! The base:
//!
//! | variable | value |
//! |---|---|
//! | `PATH` | [`DEFAULT_PATH`] |
//! | `HOME`, `USER`, `LOGNAME` | the account of the current user id, from the password database |
//! | `SHELL` | the shell commands run under ([`shell`]) |
//! | `LANG` | `C.UTF-8` |
//! | `TERM`, `NO_COLOR`, `PAGER`, `GIT_PAGER` | `dumb`, `1`, `cat`, `cat`: output a model can read, no pager waiting for a key |
//!
//! then every entry of the profile's `.env` (which may override any of the
//! above, `PATH` included), then `HERMES_HOME` = the profile's home.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use hermes_runtime::Profile;

/// `PATH` of the clean base.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The shell commands run under: `/bin/bash` where it exists, else `/bin/sh`.
pub fn shell() -> &'static str {
    static SHELL: std::sync::LazyLock<&'static str> = std::sync::LazyLock::new(|| {
        if Path::new("/bin/bash").exists() {
            "/bin/bash"
        } else {
            "/bin/sh"
        }
    });
    &SHELL
}

/// The executable file `name` in the first folder of [`DEFAULT_PATH`] that
/// has one: the system's program, whatever `PATH` a session or a profile
/// set.
pub fn system_program(name: &str) -> Option<std::path::PathBuf> {
    DEFAULT_PATH
        .split(':')
        .map(|dir| Path::new(dir).join(name))
        .find(|p| is_executable(p))
}

/// Whether `path` is (or links to) a file someone may execute.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The variables a child process of one profile runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildEnv {
    vars: BTreeMap<String, String>,
}

impl ChildEnv {
    /// The clean base alone, without any profile's secrets.
    pub fn base() -> Self {
        // Computed once: the account behind our user id does not change
        // while we run, and reading the password database is a file read.
        static BASE: std::sync::LazyLock<ChildEnv> =
            std::sync::LazyLock::new(ChildEnv::compute_base);
        BASE.clone()
    }

    fn compute_base() -> Self {
        let mut vars = BTreeMap::new();
        let mut set = |k: &str, v: &str| {
            vars.insert(k.to_string(), v.to_string());
        };
        set("PATH", DEFAULT_PATH);
        set("LANG", "C.UTF-8");
        set("TERM", "dumb");
        set("NO_COLOR", "1");
        set("PAGER", "cat");
        set("GIT_PAGER", "cat");
        set("SHELL", shell());
        if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
            set("HOME", &user.dir.to_string_lossy());
            set("USER", &user.name);
            set("LOGNAME", &user.name);
        } else {
            set("HOME", "/");
        }
        ChildEnv { vars }
    }

    /// No variable at all: for a process that passes the environment its
    /// children get itself (the resident shell, `procs::resident`).
    pub fn empty() -> Self {
        ChildEnv {
            vars: BTreeMap::new(),
        }
    }

    /// The base, then the variables of the agent's own environment the
    /// profile passes through (`terminal.env_passthrough` in its
    /// `config.yaml`), then the profile's own secrets, then `HERMES_HOME`.
    pub fn for_profile(profile: &Profile) -> Self {
        let mut env = ChildEnv::base();
        for name in &profile.config().terminal.env_passthrough.value {
            if let Some(value) = std::env::var_os(name) {
                env.vars
                    .insert(name.clone(), value.to_string_lossy().into_owned());
            }
        }
        for (name, value) in profile.secrets() {
            env.vars.insert(name, value);
        }
        env.vars.insert(
            "HERMES_HOME".to_string(),
            profile.home().to_string_lossy().into_owned(),
        );
        env
    }

    /// Sets one more variable.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Removes one variable.
    pub fn remove(&mut self, name: &str) -> &mut Self {
        self.vars.remove(name);
        self
    }

    /// A variable's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Every variable, sorted by name.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Clears `cmd`'s environment and gives it exactly these variables.
    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env_clear().envs(&self.vars)
    }

    /// A command for `program` with exactly these variables.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.apply(&mut cmd);
        cmd
    }

    /// `shell -c script` with exactly these variables, to be started on a
    /// pseudo-terminal (`pty-process`: a session of its own, the terminal
    /// as its controlling terminal and its stdin, stdout and stderr).
    pub fn pty_shell_command(&self, script: &str) -> pty_process::blocking::Command {
        self.pty_command(shell()).arg("-c").arg(script)
    }

    /// `program` with exactly these variables, to be started on a
    /// pseudo-terminal.
    pub fn pty_command(
        &self,
        program: impl AsRef<std::ffi::OsStr>,
    ) -> pty_process::blocking::Command {
        pty_process::blocking::Command::new(program)
            .env_clear()
            .envs(&self.vars)
    }

    /// `shell -c script` with exactly these variables.
    pub fn shell_command(&self, script: &str) -> Command {
        let mut cmd = self.command(shell());
        cmd.arg("-c").arg(script);
        cmd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_is_not_the_process_environment() {
        let env = ChildEnv::base();
        assert_eq!(env.get("PATH"), Some(DEFAULT_PATH));
        // Cargo sets these for every test process; none may leak.
        assert!(env.get("CARGO_PKG_NAME").is_none());
        assert!(env.get("CARGO_MANIFEST_DIR").is_none());
        let names: Vec<&str> = env.vars().map(|(k, _)| k).collect();
        for name in names {
            assert!(
                [
                    "PATH",
                    "LANG",
                    "TERM",
                    "NO_COLOR",
                    "PAGER",
                    "GIT_PAGER",
                    "SHELL",
                    "HOME",
                    "USER",
                    "LOGNAME"
                ]
                .contains(&name),
                "unexpected base variable {name}"
            );
        }
    }

    #[test]
    fn profile_secrets_are_added_and_may_override_the_base() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join(".env"),
            "API_TOKEN=abc\nPATH=/opt/x/bin:/usr/bin\nEMPTY=\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let env = ChildEnv::for_profile(&Profile::new(dir.path()));
        assert_eq!(env.get("API_TOKEN"), Some("abc"));
        assert_eq!(env.get("PATH"), Some("/opt/x/bin:/usr/bin"));
        assert_eq!(env.get("EMPTY"), None);
        assert_eq!(
            env.get("HERMES_HOME"),
            Some(dir.path().to_string_lossy().as_ref())
        );
    }
}
