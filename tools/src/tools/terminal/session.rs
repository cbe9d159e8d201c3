//! Terminal sessions: calls with the same session share a working
//! directory and exported variables, as the reference's local terminal
//! does.
//!
//! A session is named by the call's task id, else its session id, else
//! it is the profile's default session; it belongs to the profile the
//! call runs under (the same id under another profile is another
//! session). A session remembers, in memory:
//!
//! - the working directory the last command ended in (`cd` persists);
//! - the exported variables that differ from the profile's clean
//!   environment ([`ChildEnv::for_profile`]): added or changed ones, and
//!   the ones it unset.
//!
//! Nothing else persists, as in the reference: plain shell variables,
//! functions, aliases and shell options (`set -e`, `shopt`) last one
//! call. A command that ends the shell itself (`exit`, `set -e` plus a
//! failure, a timeout) leaves the session as it was.
//!
//! How: the command runs as `eval '<command>'` followed by a trailer that
//! writes `pwd -P`, a NUL and the exported variables (bash's `export
//! -p`, else `env -0`) into the state file the spawner names in
//! `$__hermes_state` (in the command's or its resident shell's own folder
//! inside the private folder [`hermes_procs::private_dir`], removed at
//! shutdown: `Spawned::state_file`);
//! the tool reads it (at most [`MAX_STATE_BYTES`]), deletes it and keeps
//! the difference. Bounds: at most [`MAX_SESSIONS`] live sessions per
//! process (the least recently used is dropped); a session idle for
//! [`IDLE_SETTING`] seconds (default [`DEFAULT_IDLE`]) is dropped.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use hermes_runtime::{Profile, ToolContext};

use hermes_procs::child_env::ChildEnv;

/// Live sessions per process; past it the least recently used is dropped.
pub const MAX_SESSIONS: usize = 256;
/// A session unused this long is dropped, unless the profile sets
/// [`IDLE_SETTING`].
pub const DEFAULT_IDLE: Duration = Duration::from_secs(3600);
/// The profile setting (in its `.env`) for the idle expiry, in seconds.
pub const IDLE_SETTING: &str = "TERMINAL_SESSION_IDLE_SECONDS";
/// The largest state a command may leave (its working directory and
/// environment); a larger one is not kept, with a note.
pub const MAX_STATE_BYTES: usize = 256 * 1024;

/// The kernel's limit on one `NAME=VALUE` of a program's environment
/// (`MAX_ARG_STRLEN`): a session keeping a larger one could start nothing.
const MAX_VARIABLE_BYTES: usize = 128 * 1024;

/// Variables the shell maintains itself: never part of a session.
const SHELL_OWNED: &[&str] = &["_", "SHLVL", "PWD", "OLDPWD"];

/// (profile home, session name).
type Key = (PathBuf, String);

#[derive(Debug, Clone, Default)]
struct State {
    cwd: Option<PathBuf>,
    /// `Some(value)`: set (added or changed); `None`: unset.
    env: BTreeMap<String, Option<String>>,
}

#[derive(Debug)]
struct Session {
    state: State,
    used: Instant,
}

static SESSIONS: LazyLock<Mutex<HashMap<Key, Session>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn sessions() -> std::sync::MutexGuard<'static, HashMap<Key, Session>> {
    SESSIONS.lock().unwrap_or_else(|e| e.into_inner())
}

fn key_of(ctx: &ToolContext) -> Key {
    let name = ctx.task_id().or(ctx.session_id()).unwrap_or_default();
    (ctx.profile().home().to_path_buf(), name.to_string())
}

/// The name of the session of `ctx`, unique across profiles (resident
/// shells serve one session each).
pub fn name(ctx: &ToolContext) -> String {
    let (home, name) = key_of(ctx);
    format!("{}\0{name}", home.display())
}

/// The idle expiry of a profile's sessions.
pub fn idle_for(profile: &Profile) -> Duration {
    profile
        .secret(IDLE_SETTING)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map_or(DEFAULT_IDLE, Duration::from_secs)
}

/// What one call of a session starts from.
#[derive(Debug)]
pub struct Start {
    key: Key,
    /// The directory relative `workdir`s resolve against, and commands run
    /// in by default.
    pub cwd: PathBuf,
    /// The environment: the profile's, with the session's changes.
    pub env: ChildEnv,
    /// The profile's own environment, which changes are measured against.
    base: ChildEnv,
}

/// The session of `ctx` as the next command starts from it (a fresh one
/// when none is live).
pub fn start(ctx: &ToolContext) -> Start {
    let key = key_of(ctx);
    let idle = idle_for(ctx.profile());
    let state = {
        let mut all = sessions();
        let now = Instant::now();
        all.retain(|_, s| now.duration_since(s.used) < idle);
        all.get_mut(&key).map(|s| {
            s.used = now;
            s.state.clone()
        })
    }
    .unwrap_or_default();
    let base = ChildEnv::for_profile(ctx.profile());
    let mut env = base.clone();
    for (name, value) in &state.env {
        match value {
            Some(v) => env.set(name.clone(), v.clone()),
            None => env.remove(name),
        };
    }
    let cwd = state.cwd.filter(|d| d.is_dir()).unwrap_or_else(|| {
        // A new session starts in `terminal.cwd` of the profile's
        // config.yaml, else the caller's directory.
        match &ctx.profile().config().terminal.cwd.value {
            Some(configured) => ctx.resolve(configured),
            None => ctx.cwd().to_path_buf(),
        }
    });
    Start {
        key,
        cwd,
        env,
        base,
    }
}

/// Forgets every session and removes the state folder: at shutdown.
pub fn shutdown() {
    sessions().clear();
    if let Some(dir) = hermes_procs::private_dir() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Ends the session of `ctx`: its directory and variables are forgotten,
/// its idle resident shells end.
pub fn end(ctx: &ToolContext) {
    sessions().remove(&key_of(ctx));
    hermes_procs::resident::release_session(&name(ctx));
}

/// Ends every session of `profile`.
pub fn end_profile(profile: &Profile) {
    sessions().retain(|(home, _), _| home != profile.home());
}

/// The private folder of state files, once created (for tests and
/// diagnostics).
pub fn state_folder() -> Option<PathBuf> {
    hermes_procs::private_dir().map(Path::to_path_buf)
}

/// Live sessions (for tests and diagnostics).
pub fn live() -> usize {
    sessions().len()
}

/// One foreground command wrapped with its state trailer.
#[derive(Debug)]
pub struct Wrapped {
    pub script: String,
}

/// `command` wrapped so that its shell reports where it ended and what it
/// exported, into `"$__hermes_state"` (set by the spawner when it asked for
/// a state file: `SpawnOptions::state`; unset, the trailer writes nothing).
pub fn wrap(command: &str) -> Wrapped {
    let script = format!(
        "eval {}\n__hermes_status=$?\nif [ -n \"${{__hermes_state-}}\" ]; then {{ builtin pwd -P; builtin printf '\\0'; {}; }} > \"$__hermes_state\" 2>/dev/null; fi\nexit $__hermes_status\n",
        hermes_procs::shell_quote(command),
        dump_exported(),
    );
    Wrapped { script }
}

/// Removes a state file a command left (one that did not finish).
pub fn discard(state_file: Option<&Path>) {
    if let Some(f) = state_file {
        let _ = std::fs::remove_file(f);
    }
}

/// Whether the shell lists its exported variables with `export -p`
/// (bash: one builtin, read back by [`super::exported`]); else `env -0`
/// does (`NAME=VALUE` entries each ended by a NUL).
fn lists_with_export_p() -> bool {
    hermes_procs::child_env::shell().ends_with("bash")
}

/// Shell code that prints every exported variable.
fn dump_exported() -> &'static str {
    if lists_with_export_p() {
        "builtin export -p"
    } else {
        "command -p env -0"
    }
}

/// After a command that ran to its end: reads what its shell reported and
/// keeps it as the session's state. Returns a note for the model when the
/// state could not be kept.
pub fn finish(start: &Start, state_file: Option<&Path>) -> Option<String> {
    let file = state_file?;
    let read = read_capped(file);
    let _ = std::fs::remove_file(file);
    let bytes = match read {
        Ok(Some(bytes)) => bytes,
        // The shell ended before the trailer (`exit`): nothing changes.
        Err(_) => return None,
        Ok(None) => {
            return Some(format!(
                "the session's directory and variables were not kept: they exceed \
                 {MAX_STATE_BYTES} bytes"
            ))
        }
    };
    let _ = std::fs::remove_file(file);
    let (cwd, env) = parse_state(&bytes);
    if env.is_empty() {
        // The variables could not be listed (a shell without `${!v@a}`,
        // or `env` could not run: most likely one variable is larger
        // than the kernel passes to a program, 128 KiB).
        return Some(
            "the session's directory and variables were not kept: they could not be \
             read back"
                .to_string(),
        );
    }
    if env
        .iter()
        .any(|(k, v)| k.len() + v.len() + 1 >= MAX_VARIABLE_BYTES)
    {
        return Some(format!(
            "the session's directory and variables were not kept: a variable of \
             {MAX_VARIABLE_BYTES} bytes or more cannot be passed to the next command"
        ));
    }
    let previous_cwd = sessions().get(&start.key).and_then(|s| s.state.cwd.clone());
    let mut state = State {
        // A directory that is gone (or unreadable) keeps the previous one.
        cwd: cwd.filter(|d| d.is_dir()).or(previous_cwd),
        env: BTreeMap::new(),
    };
    for (name, value) in &env {
        if SHELL_OWNED.contains(&name.as_str()) {
            continue;
        }
        if start.base.get(name) != Some(value.as_str()) {
            state.env.insert(name.clone(), Some(value.clone()));
        }
    }
    for (name, _) in start.base.vars() {
        if !env.contains_key(name) && !SHELL_OWNED.contains(&name) {
            state.env.insert(name.to_string(), None);
        }
    }
    store(start.key.clone(), state);
    None
}

fn store(key: Key, state: State) {
    let mut all = sessions();
    if !all.contains_key(&key) && all.len() >= MAX_SESSIONS {
        if let Some(oldest) = all
            .iter()
            .min_by_key(|(_, s)| s.used)
            .map(|(k, _)| k.clone())
        {
            all.remove(&oldest);
        }
    }
    all.insert(
        key,
        Session {
            state,
            used: Instant::now(),
        },
    );
}

/// The file's bytes; `Ok(None)` when it is larger than [`MAX_STATE_BYTES`].
fn read_capped(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    let cap = u64::try_from(MAX_STATE_BYTES).unwrap_or(u64::MAX);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() <= MAX_STATE_BYTES).then_some(bytes))
}

/// `pwd`, NUL, then the variables as [`dump_exported`] lists them.
fn parse_state(bytes: &[u8]) -> (Option<PathBuf>, BTreeMap<String, String>) {
    let (first, rest) = match bytes.iter().position(|b| *b == 0) {
        Some(at) => (&bytes[..at], &bytes[at + 1..]),
        None => (bytes, &[][..]),
    };
    let cwd = Some(
        String::from_utf8_lossy(first)
            .trim_end_matches('\n')
            .to_string(),
    )
    .filter(|c| !c.is_empty())
    .map(PathBuf::from);
    if lists_with_export_p() {
        let env = super::exported::parse(&String::from_utf8_lossy(rest)).unwrap_or_default();
        return (cwd, env);
    }
    (cwd, env_entries(rest))
}

/// `NAME=VALUE` entries each ended by a NUL.
fn env_entries(bytes: &[u8]) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for entry in bytes.split(|b| *b == 0) {
        let entry = String::from_utf8_lossy(entry);
        if let Some((name, value)) = entry.split_once('=') {
            if !name.is_empty() {
                env.insert(name.to_string(), value.to_string());
            }
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_parses_and_quotes_round_trip() {
        let env = env_entries(b"A=1\0B=x=y\nz\0");
        assert_eq!(env["A"], "1");
        assert_eq!(env["B"], "x=y\nz");
        let (cwd, _) = parse_state(b"/tmp\n\0");
        assert_eq!(cwd, Some(PathBuf::from("/tmp")));
        assert_eq!(parse_state(b""), (None, BTreeMap::new()));
        assert_eq!(parse_state(b"\0A=1\0").0, None);
    }
}
