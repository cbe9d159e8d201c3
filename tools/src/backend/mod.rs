//! Execution backends: the machine a session's commands and files are on.
//!
//! One table, [`BACKENDS`]: a row is a name (the value of
//! `terminal.backend` in the profile's `config.yaml`) and the function
//! that opens the backend for one session. `terminal`, `process` and the
//! file tools ask [`of`] for the session's backend and go through the
//! [`Backend`] trait; none asks which backend it is. Adding one is a new
//! file beside this one (a [`Backend`], or a `shell::Transport` when
//! it runs commands through a local client program as `ssh` and
//! `docker exec` do) and one row of [`BACKENDS`].
//!
//! A session's backend lives as long as the session: it is opened on the
//! session's first call, kept in a table keyed like the terminal sessions
//! (profile home, task or session id), opened again when the profile's
//! `terminal.backend` changes, and torn down by [`end`] (the `Session`
//! handle's cleanup), [`end_profile`] and [`shutdown`].

mod base;
mod container;
mod local;
mod remote;
pub(crate) mod shell;
mod ssh;

pub use base::{Backend, Files};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

use hermes_runtime::{Profile, ToolContext};

/// One row of [`BACKENDS`].
#[derive(Debug)]
pub struct Entry {
    /// The value of `terminal.backend` that selects it.
    pub name: &'static str,
    /// Opens it for the session of `ctx` (connects, starts a container):
    /// an error is the model's text, naming the backend and what to fix.
    pub open: fn(&ToolContext) -> Result<Arc<dyn Backend>, String>,
}

/// Every backend, by its `terminal.backend` name. `docker` speaks the
/// docker command line (docker or podman, `shell::docker_binary`).
pub static BACKENDS: &[Entry] = &[
    Entry {
        name: "local",
        open: local::open,
    },
    Entry {
        name: "ssh",
        open: ssh::open,
    },
    Entry {
        name: "docker",
        open: container::open,
    },
];

/// (profile home, session name), as terminal sessions are keyed.
type Key = (PathBuf, String);

static OPEN: LazyLock<Mutex<HashMap<Key, Arc<dyn Backend>>>> = LazyLock::new(Default::default);

fn open_backends() -> std::sync::MutexGuard<'static, HashMap<Key, Arc<dyn Backend>>> {
    OPEN.lock().unwrap_or_else(|e| e.into_inner())
}

fn key_of(ctx: &ToolContext) -> Key {
    let name = ctx.task_id().or(ctx.session_id()).unwrap_or_default();
    (ctx.profile().home().to_path_buf(), name.to_string())
}

/// The row named `name`, if there is one.
pub fn entry(name: &str) -> Option<&'static Entry> {
    BACKENDS.iter().find(|e| e.name == name)
}

/// The names of [`BACKENDS`], for messages.
pub fn names() -> Vec<&'static str> {
    BACKENDS.iter().map(|e| e.name).collect()
}

/// The backend the session of `ctx` runs on, opened on first use (or
/// again when `terminal.backend` changed).
pub fn of(ctx: &ToolContext) -> Result<Arc<dyn Backend>, String> {
    let config = ctx.profile().config();
    let wanted = config.terminal.backend.value.as_str();
    let key = key_of(ctx);
    let previous = {
        let mut all = open_backends();
        match all.get(&key) {
            Some(b) if b.name() == wanted => return Ok(b.clone()),
            Some(_) => all.remove(&key),
            None => None,
        }
    };
    if let Some(old) = previous {
        old.teardown();
    }
    let Some(row) = entry(wanted) else {
        return Err(format!(
            "terminal.backend '{wanted}' is not a backend of this agent (it has: {}); fix \
             terminal.backend in {}",
            names().join(", "),
            config.path.display()
        ));
    };
    let backend = (row.open)(ctx)?;
    // Opened outside the lock (it may connect); a racing call that opened
    // one first keeps its own, and this one is torn down.
    let mut all = open_backends();
    if let Some(existing) = all.get(&key).filter(|b| b.name() == wanted) {
        let existing = existing.clone();
        drop(all);
        backend.teardown();
        return Ok(existing);
    }
    all.insert(key, backend.clone());
    Ok(backend)
}

/// The backend the session of `ctx` has open, without opening one.
pub fn current(ctx: &ToolContext) -> Option<Arc<dyn Backend>> {
    open_backends().get(&key_of(ctx)).cloned()
}

/// Tears down the backend of the session of `ctx`, if one was opened.
pub fn end(ctx: &ToolContext) {
    let gone = open_backends().remove(&key_of(ctx));
    if let Some(b) = gone {
        b.teardown();
    }
}

/// Tears down every backend of `profile`'s sessions.
pub fn end_profile(profile: &Profile) {
    let gone: Vec<Arc<dyn Backend>> = {
        let mut all = open_backends();
        let keys: Vec<Key> = all
            .keys()
            .filter(|(home, _)| home == profile.home())
            .cloned()
            .collect();
        keys.iter().filter_map(|k| all.remove(k)).collect()
    };
    gone.iter().for_each(|b| b.teardown());
}

/// Tears down every open backend: at shutdown.
pub fn shutdown() {
    let gone: Vec<Arc<dyn Backend>> = open_backends().drain().map(|(_, b)| b).collect();
    gone.iter().for_each(|b| b.teardown());
}
