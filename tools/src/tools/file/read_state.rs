//! What each task has read, as the reference keeps it: a page read again
//! while its file is unchanged is answered with a short "unchanged" note
//! (the second time) and then refused, so a model stuck re-reading costs
//! few tokens; the same page read again and again while the file keeps
//! changing is warned about at the third read in a row and refused at the
//! fourth. The time each file was last read is kept too, for the tools
//! that write to warn when a file changed since (see [`last_read`]).
//!
//! Memory is bounded: at most [`MAX_TASKS`] tasks, each with at most
//! [`MAX_ENTRIES`] pages and files remembered.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::SystemTime;

use serde::Serialize;

/// Tasks remembered at once; past it, one is forgotten.
pub const MAX_TASKS: usize = 256;
/// Pages (and files) remembered per task; past it, the oldest goes.
pub const MAX_ENTRIES: usize = 1000;
/// The task of calls that name none.
const DEFAULT_TASK: &str = "default";

/// The answer to a read of an unchanged page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unchanged {
    pub status: &'static str,
    pub message: &'static str,
    pub path: String,
    pub dedup: bool,
    pub content_returned: bool,
}

/// A page: the real path, offset and limit.
type Key = (PathBuf, u64, u64);

#[derive(Debug, Default)]
struct TaskReads {
    /// Each page's file time when read, and the unchanged answers since.
    pages: HashMap<Key, (SystemTime, u32)>,
    order: VecDeque<Key>,
    /// The last page read (as given), and how many times in a row.
    last: Option<(String, u64, u64)>,
    in_a_row: u32,
    /// Each file's time when this task last read (or wrote) it.
    files: HashMap<PathBuf, SystemTime>,
}

static READS: LazyLock<Mutex<HashMap<String, TaskReads>>> = LazyLock::new(Mutex::default);

/// Runs `f` on the state of `task`, making room when needed.
fn with_task<T>(task: Option<&str>, f: impl FnOnce(&mut TaskReads) -> T) -> T {
    let mut all = READS.lock().unwrap_or_else(|p| p.into_inner());
    let task = task.unwrap_or(DEFAULT_TASK);
    if !all.contains_key(task) && all.len() >= MAX_TASKS {
        if let Some(victim) = all.keys().next().cloned() {
            all.remove(&victim);
        }
    }
    f(all.entry(task.to_owned()).or_default())
}

fn mtime(real: &Path) -> Option<SystemTime> {
    std::fs::metadata(real).and_then(|m| m.modified()).ok()
}

/// What to do before reading a page.
#[derive(Debug)]
pub enum Before {
    /// Read it.
    Read,
    /// Answer that it is unchanged.
    Unchanged(Unchanged),
    /// Refuse: the text says why.
    Refuse(String),
}

/// Called before reading `offset`/`limit` of the file at `real` (named
/// `given`) for `task`.
pub fn before_read(
    task: Option<&str>,
    real: &Path,
    given: &str,
    offset: u64,
    limit: u64,
) -> Before {
    let Some(now) = mtime(real) else {
        return Before::Read;
    };
    let key = (real.to_path_buf(), offset, limit);
    with_task(task, |reads| match reads.pages.get_mut(&key) {
        Some((seen, hits)) if *seen == now => {
            *hits += 1;
            if *hits >= 2 {
                Before::Refuse(format!(
                    "Refused: this is read {} of lines {offset}-{} of {given}, and the file \
                     has not changed since the first. Its content is in an earlier read_file \
                     result of this conversation; go on with the task using it",
                    *hits + 1,
                    offset.saturating_add(limit - 1),
                ))
            } else {
                Before::Unchanged(Unchanged {
                    status: "unchanged",
                    message: "The file has not changed since it was last read; the content \
                              of that earlier read_file result is still current, so use it \
                              instead of reading again.",
                    path: given.to_owned(),
                    dedup: true,
                    content_returned: false,
                })
            }
        }
        _ => Before::Read,
    })
}

/// Called after a page was read: remembers it, and answers a warning
/// (`Ok(Some)`) at the third read in a row of the same page, or a refusal
/// (`Err`) from the fourth.
pub fn after_read(
    task: Option<&str>,
    real: &Path,
    given: &str,
    offset: u64,
    limit: u64,
) -> Result<Option<String>, String> {
    let now = mtime(real);
    with_task(task, |reads| {
        let key = (real.to_path_buf(), offset, limit);
        if let Some(now) = now {
            if reads.pages.insert(key.clone(), (now, 0)).is_none() {
                reads.order.push_back(key);
                if reads.order.len() > MAX_ENTRIES {
                    if let Some(old) = reads.order.pop_front() {
                        reads.pages.remove(&old);
                    }
                }
            }
            note(reads, real, now);
        }
        let this = (given.to_owned(), offset, limit);
        if reads.last.as_ref() == Some(&this) {
            reads.in_a_row += 1;
        } else {
            reads.last = Some(this);
            reads.in_a_row = 1;
        }
        let n = reads.in_a_row;
        if n >= 4 {
            Err(format!(
                "Refused: this is read {n} in a row of the same lines of {given}. You already \
                 have them; stop reading this region and go on with the task"
            ))
        } else if n == 3 {
            Ok(Some(format!(
                "This is read {n} in a row of the same lines of {given}. Use what you already \
                 have; if you are going round in a loop, stop reading and write or answer"
            )))
        } else {
            Ok(None)
        }
    })
}

fn note(reads: &mut TaskReads, real: &Path, when: SystemTime) {
    if !reads.files.contains_key(real) && reads.files.len() >= MAX_ENTRIES {
        if let Some(victim) = reads.files.keys().next().cloned() {
            reads.files.remove(&victim);
        }
    }
    reads.files.insert(real.to_path_buf(), when);
}

/// The file time of `real` when `task` last read (or wrote) it.
pub fn last_read(task: Option<&str>, real: &Path) -> Option<SystemTime> {
    with_task(task, |reads| reads.files.get(real).copied())
}

/// The warning for writing `real` (shown to the model as `shown`) when
/// `task` read it and it changed since: the model's picture of the file is
/// out of date (an edit from outside, or another agent). The write still
/// happens; the result carries it as `_warning`.
pub fn stale_warning(task: Option<&str>, real: &Path, shown: &str) -> Option<String> {
    let then = last_read(task, real)?;
    (mtime(real)? != then).then(|| {
        format!(
            "Warning: {shown} changed after you last read it (edited outside this session, \
             or by another agent), so what you read may be out of date. Read it again \
             to check before writing it."
        )
    })
}

/// Records that `task` wrote `real`, so its next write does not warn.
pub fn note_write(task: Option<&str>, real: &Path) {
    if let Some(now) = mtime(real) {
        with_task(task, |reads| note(reads, real, now));
    }
}

/// Forgets what `task` (every task, for `None`) read: after the context
/// was compressed, an "unchanged" answer would point at content the model
/// no longer has.
pub fn forget_reads(task: Option<&str>) {
    let mut all = READS.lock().unwrap_or_else(|p| p.into_inner());
    match task {
        Some(task) => {
            all.remove(task);
        }
        None => all.clear(),
    }
}
