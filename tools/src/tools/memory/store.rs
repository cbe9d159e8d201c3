//! The two memory stores of a profile, `MEMORY.md` (the agent's notes) and
//! `USER.md` (what it knows about the user), under `memories/` in the
//! profile's home. Entries are separated by a line holding `§`; each store
//! has a character budget for all its entries joined.
//!
//! Every change reads the file under an exclusive lock (a `.lock` file
//! beside it, so concurrent sessions do not lose each other's writes),
//! applies the change to the entries and writes the file atomically
//! (temporary file + rename), so a reader sees the old file or the new one.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// Between two entries in a file.
pub const ENTRY_DELIMITER: &str = "\n§\n";
/// Budget of the agent's notes, in characters.
pub const MEMORY_CHAR_LIMIT: usize = 2200;
/// Budget of the user profile, in characters.
pub const USER_CHAR_LIMIT: usize = 1375;

/// Which store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    Memory,
    User,
}

impl Store {
    pub fn name(self) -> &'static str {
        match self {
            Store::Memory => "memory",
            Store::User => "user",
        }
    }

    pub fn file(self, home: &Path) -> PathBuf {
        home.join("memories").join(match self {
            Store::Memory => "MEMORY.md",
            Store::User => "USER.md",
        })
    }

    pub fn limit(self) -> usize {
        match self {
            Store::Memory => MEMORY_CHAR_LIMIT,
            Store::User => USER_CHAR_LIMIT,
        }
    }
}

/// One change to a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Add(String),
    Replace { old_text: String, content: String },
    Remove { old_text: String },
}

/// Why a change was refused: the message, and whether the model should see
/// the current entries to decide what to consolidate.
#[derive(Debug)]
pub struct Refusal {
    pub message: String,
    pub show_entries: bool,
    pub matches: Vec<String>,
}

impl Refusal {
    fn plain(message: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
            show_entries: false,
            matches: Vec::new(),
        }
    }

    fn with_entries(message: impl Into<String>) -> Self {
        Refusal {
            show_entries: true,
            ..Refusal::plain(message)
        }
    }
}

/// Reads the entries of a store (none when the file is missing).
pub fn read(home: &Path, store: Store) -> Vec<String> {
    let Ok(raw) = fs::read_to_string(store.file(home)) else {
        return Vec::new();
    };
    let mut entries: Vec<String> = Vec::new();
    for e in raw.split(ENTRY_DELIMITER).map(str::trim) {
        if !e.is_empty() && !entries.iter().any(|x| x == e) {
            entries.push(e.to_string());
        }
    }
    entries
}

/// Characters of the entries joined as they are stored.
pub fn char_count(entries: &[String]) -> usize {
    entries.iter().map(|e| e.chars().count()).sum::<usize>()
        + ENTRY_DELIMITER.chars().count() * entries.len().saturating_sub(1)
}

/// Applies `ops` to a store, all or nothing, checking the budget on the
/// final result only. Returns a JSON answer for the model.
pub fn apply(home: &Path, store: Store, ops: &[Op], single: bool) -> std::io::Result<Value> {
    let path = store.file(home);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let lock = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path.with_extension("md.lock"))?;
    lock.lock()?;
    let entries = read(home, store);
    let answer = match plan(&entries, store, ops, single) {
        Ok((next, message)) => {
            if next != entries {
                write_atomic(&path, &next)?;
            }
            success(store, &next, message)
        }
        Err(refusal) => {
            let mut out = json!({"success": false, "error": refusal.message});
            if refusal.show_entries {
                out["current_entries"] = json!(entries);
                out["usage"] = json!(usage(store, &entries));
            }
            if !refusal.matches.is_empty() {
                out["matches"] = json!(refusal.matches);
            }
            out
        }
    };
    drop(lock);
    Ok(answer)
}

/// The entries after `ops`, or why not. `single` words the messages for a
/// lone change rather than a batch.
fn plan(
    entries: &[String],
    store: Store,
    ops: &[Op],
    single: bool,
) -> Result<(Vec<String>, &'static str), Refusal> {
    let mut working = entries.to_vec();
    let mut message = "Entries updated.";
    for (i, op) in ops.iter().enumerate() {
        let pos = if single {
            String::new()
        } else {
            format!("Operation {}: ", i + 1)
        };
        match op {
            Op::Add(content) => {
                let content = content.trim();
                if content.is_empty() {
                    return Err(Refusal::plain(format!("{pos}content cannot be empty.")));
                }
                if working.iter().any(|e| e == content) {
                    message = "Entry already exists (no duplicate added).";
                    continue;
                }
                working.push(content.to_string());
                message = "Entry added.";
            }
            Op::Replace { old_text, content } => {
                let content = content.trim();
                if content.is_empty() {
                    return Err(Refusal::plain(format!(
                        "{pos}content cannot be empty; use action=remove to delete an entry."
                    )));
                }
                let idx = find(&working, old_text, &pos)?;
                working[idx] = content.to_string();
                message = "Entry replaced.";
            }
            Op::Remove { old_text } => {
                let idx = find(&working, old_text, &pos)?;
                working.remove(idx);
                message = "Entry removed.";
            }
        }
    }
    if !single && ops.len() > 1 {
        message = "Batch applied.";
    }
    let total = char_count(&working);
    if total > store.limit() {
        return Err(Refusal::with_entries(format!(
            "The {} store would hold {total} of its {} characters. Make room in the same \
             call: remove stale entries or replace several with one shorter entry (see \
             current_entries), together with this change as one operations batch.",
            store.name(),
            store.limit()
        )));
    }
    Ok((working, message))
}

/// The one entry holding `old_text` (identical duplicates count as one).
fn find(entries: &[String], old_text: &str, pos: &str) -> Result<usize, Refusal> {
    let needle = old_text.trim();
    if needle.is_empty() {
        return Err(Refusal::with_entries(format!(
            "{pos}old_text is required: a short unique part of the entry to change \
             (see current_entries)."
        )));
    }
    let hits: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].contains(needle))
        .collect();
    match hits.as_slice() {
        [] => Err(Refusal::with_entries(format!(
            "{pos}no entry matched '{needle}'; use the exact text of one of current_entries."
        ))),
        [first, rest @ ..] if rest.iter().all(|&i| entries[i] == entries[*first]) => Ok(*first),
        _ => Err(Refusal {
            matches: hits.iter().map(|&i| preview(&entries[i])).collect(),
            ..Refusal::plain(format!(
                "{pos}'{needle}' matches several entries; give a longer, unique part."
            ))
        }),
    }
}

fn preview(entry: &str) -> String {
    if entry.chars().count() <= 80 {
        entry.to_string()
    } else {
        entry.chars().take(77).collect::<String>() + "..."
    }
}

fn usage(store: Store, entries: &[String]) -> String {
    let current = char_count(entries);
    let pct = (current * 100 / store.limit()).min(100);
    format!("{pct}% — {current}/{} chars", store.limit())
}

fn success(store: Store, entries: &[String], message: &str) -> Value {
    json!({
        "success": true,
        "done": true,
        "target": store.name(),
        "message": message,
        "usage": usage(store, entries),
        "entry_count": entries.len(),
        "note": "Saved. This update is complete; do not repeat it.",
    })
}

fn write_atomic(path: &Path, entries: &[String]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("memory"),
        std::process::id()
    ));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(entries.join(ENTRY_DELIMITER).as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Both stores rendered for a system prompt: a header with the usage, then
/// the entries; empty stores are left out. What an agent shows the model at
/// session start (the tool itself only writes).
pub fn snapshot(home: &Path) -> String {
    let mut blocks = Vec::new();
    for (store, title) in [
        (Store::Memory, "MEMORY (your personal notes)"),
        (Store::User, "USER PROFILE (who the user is)"),
    ] {
        let entries = read(home, store);
        if entries.is_empty() {
            continue;
        }
        let rule = "═".repeat(46);
        blocks.push(format!(
            "{rule}\n{title} [{}]\n{rule}\n{}",
            usage(store, &entries),
            entries.join(ENTRY_DELIMITER)
        ));
    }
    blocks.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn batch_is_checked_against_the_final_budget_only() {
        let big = "x".repeat(MEMORY_CHAR_LIMIT - 10);
        let entries = s(&[&big]);
        let add = Op::Add("y".repeat(50));
        assert!(plan(&entries, Store::Memory, std::slice::from_ref(&add), true).is_err());
        let remove = Op::Remove {
            old_text: "xxx".into(),
        };
        let (next, message) = plan(&entries, Store::Memory, &[remove, add], false)
            .unwrap_or_else(|r| panic!("{r:?}"));
        assert_eq!(next, vec!["y".repeat(50)]);
        assert_eq!(message, "Batch applied.");
    }

    #[test]
    fn matching_is_by_unique_substring() {
        let entries = s(&["likes tea", "likes coffee", "dup", "dup"]);
        let err = find(&entries, "likes", "").unwrap_err();
        assert_eq!(err.matches.len(), 2);
        assert_eq!(find(&entries, "coffee", "").ok(), Some(1));
        assert_eq!(
            find(&entries, "dup", "").ok(),
            Some(2),
            "identical duplicates are one"
        );
        assert!(find(&entries, "nothing", "").unwrap_err().show_entries);
    }

    #[test]
    fn char_count_includes_delimiters() {
        assert_eq!(char_count(&s(&["ab", "cd"])), 4 + 3);
        assert_eq!(char_count(&[]), 0);
    }
}
