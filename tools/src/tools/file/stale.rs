//! What each session last read, so a write to a file that changed since
//! can warn: the model's picture of the file is out of date (an edit from
//! outside, or another agent). The write still happens; the result
//! carries `_warning`.
//!
//! Sessions are told apart by the call's task id, else its session id.
//! Kept in memory for the process, at most [`MAX_TRACKED`] files (the
//! oldest record goes first).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

use hermes_runtime::ToolContext;

/// Files remembered over all sessions.
pub const MAX_TRACKED: usize = 10_000;

#[derive(Default)]
struct Reads {
    /// (session, real path) → (modification time when read, age stamp).
    seen: HashMap<(String, PathBuf), (Option<SystemTime>, u64)>,
    next: u64,
}

static READS: LazyLock<Mutex<Reads>> = LazyLock::new(Mutex::default);

fn session(ctx: &ToolContext) -> String {
    ctx.task_id()
        .or(ctx.session_id())
        .unwrap_or("default")
        .to_owned()
}

/// The real path of `path` as the file tools resolve it, when it exists.
fn real(ctx: &ToolContext, path: &str) -> Option<PathBuf> {
    std::fs::canonicalize(super::common::resolve(ctx.cwd(), path).ok()?).ok()
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn record(reads: &mut Reads, key: (String, PathBuf)) {
    let when = modified(&key.1);
    reads.next += 1;
    let stamp = reads.next;
    if reads.seen.len() >= MAX_TRACKED && !reads.seen.contains_key(&key) {
        if let Some(oldest) = reads
            .seen
            .iter()
            .min_by_key(|(_, (_, stamp))| *stamp)
            .map(|(k, _)| k.clone())
        {
            reads.seen.remove(&oldest);
        }
    }
    reads.seen.insert(key, (when, stamp));
}

fn lock() -> std::sync::MutexGuard<'static, Reads> {
    READS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Notes that this session read `path` as it is now.
pub fn note_read(ctx: &ToolContext, path: &str) {
    if let Some(real) = real(ctx, path) {
        record(&mut lock(), (session(ctx), real));
    }
}

/// The warning for writing `path`, when this session read it and it
/// changed since.
pub fn warning(ctx: &ToolContext, path: &str) -> Option<String> {
    let real = real(ctx, path)?;
    let (when, _) = *lock().seen.get(&(session(ctx), real.clone()))?;
    let now = modified(&real);
    (now.is_some() && now != when).then(|| {
        format!(
            "Warning: {path} changed after you last read it (edited outside this session, \
             or by another agent), so what you read may be out of date. Read it again \
             to check before writing it."
        )
    })
}

/// After this session wrote `path`: its own write is not a change to warn
/// about next time.
pub fn note_write(ctx: &ToolContext, path: &str) {
    let key = session(ctx);
    let mut reads = lock();
    if reads.seen.keys().any(|(s, _)| *s == key) {
        if let Some(real) = real(ctx, path) {
            record(&mut reads, (key, real));
        }
    }
}
