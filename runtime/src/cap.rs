//! The result cap: a result longer than its cap (in characters of the JSON
//! text the model sees) is made shorter without breaking the document.
//!
//! A JSON object or array keeps its shape and its small fields
//! (`exit_code`, `next_offset`, `total_lines`, ...): the long text fields
//! are cut (the longest first, each marked with [`CUT_MARKER`]) and, where
//! cutting text is not enough, trailing items of long arrays are dropped.
//! An object says what was cut under [`CUT_KEY`]. Anything else (plain
//! text, a bare JSON string, a document whose small parts alone exceed the
//! cap) is wrapped: `{"truncated": "...", "result": "<first N characters>"}`.
//!
//! Nothing is lost, though: in dispatch ([`cap_or_store`]) a result over
//! its cap is first saved whole under the profile's home, in
//! [`RESULTS_DIR`], as text that `read_file` pages through; the model gets
//! a preview of [`PREVIEW_CHARS`] characters (cut as above) and, under
//! [`STORED_KEY`] and [`STORED_PATH_KEY`], where the rest is. The folder
//! is bounded ([`MAX_STORED_RESULTS`] files, [`MAX_STORED_TOTAL_BYTES`] in
//! all, the oldest removed first) and so is each file
//! ([`MAX_STORED_RESULT_BYTES`]). When the result cannot be saved, the
//! cut to the cap is what the model gets, as before.

use std::fs;
use std::io::Write;
use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::context::ToolContext;

/// The folder under the profile's home where results over their cap are kept.
pub const RESULTS_DIR: &str = "tool_results";
/// Characters of a stored result shown to the model in its place.
pub const PREVIEW_CHARS: usize = 1_500;
/// Bytes of one result kept at most (the rest is dropped, and the file says so).
pub const MAX_STORED_RESULT_BYTES: usize = 16 << 20;
/// Bytes kept in [`RESULTS_DIR`] over all its files.
pub const MAX_STORED_TOTAL_BYTES: u64 = 256 << 20;
/// Files kept in [`RESULTS_DIR`].
pub const MAX_STORED_RESULTS: usize = 500;
/// Entries of [`RESULTS_DIR`] looked at when making room.
const MAX_SCANNED: usize = 10_000;
/// The key of a cut result that says where the whole result is, and how
/// to read it.
pub const STORED_KEY: &str = "full_result";
/// The key of a cut result holding the stored file's path alone.
pub const STORED_PATH_KEY: &str = "full_result_path";

/// The key of an object result that says what the cap cut.
pub const CUT_KEY: &str = "result_cut";

/// Appended to a text field that was cut.
pub const CUT_MARKER: &str = " ... [cut]";

/// Characters kept free for the [`CUT_KEY`] note.
const NOTE_ROOM: usize = 400;

/// Rounds of cutting before falling back to the wrapper. Each round cuts
/// at least the excess of one field or array, so this is never reached by
/// a document with fewer long parts.
const MAX_ROUNDS: usize = 64;

/// Cuts a result longer than `cap` characters (see the module docs),
/// without keeping it: the cut alone, as dispatch gives it when the result
/// cannot be saved.
#[cfg(test)]
pub(crate) fn cap_result(result: String, cap: usize) -> String {
    // Fast path: byte length bounds the character count.
    if result.len() <= cap {
        return result;
    }
    cut_result(result, cap)
}

#[cfg(test)]
fn cut_result(result: String, cap: usize) -> String {
    let total = result.chars().count();
    if total <= cap {
        return result;
    }
    cut_to(
        &result,
        cap,
        total,
        &format!("over the {cap}-character result cap"),
    )
}

/// `result` (of `total` characters) cut to `cap`; `why` starts the note.
fn cut_to(result: &str, cap: usize, total: usize, why: &str) -> String {
    let trimmed = result.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(mut doc) = serde_json::from_str::<Value>(trimmed) {
            if let Some(cut) = shrink(&mut doc, cap, total, why) {
                return cut;
            }
        }
    }
    wrap(result, cap, total)
}

/// The dispatch cap: a result over `cap` characters is saved whole under
/// the profile's home and the model gets a preview and the path (see the
/// module docs); if it cannot be saved, it is cut to `cap`.
#[inline]
pub(crate) fn cap_or_store(result: String, cap: usize, tool: &str, ctx: &ToolContext) -> String {
    if result.len() <= cap {
        return result;
    }
    store_or_cut(result, cap, tool, ctx)
}

#[cold]
fn store_or_cut(result: String, cap: usize, tool: &str, ctx: &ToolContext) -> String {
    let total = result.chars().count();
    if total <= cap {
        return result;
    }
    let limit = format!("over the {cap}-character result cap");
    let told = format!("over the {cap}-character limit");
    store_with_preview(
        &result,
        total,
        PREVIEW_CHARS.min(cap),
        tool,
        ctx,
        &limit,
        &told,
    )
    .unwrap_or_else(|| cut_to(&result, cap, total, &limit))
}

/// A result of one turn's batch that the turn's budget (`budget`
/// characters for all its results) has no room for: saved whole, and a
/// preview and the path in its place, as for a result over its own cap.
/// `None` when it could not be saved (the caller keeps the result).
pub(crate) fn spill_for_turn(
    result: &str,
    budget: usize,
    tool: &str,
    ctx: &ToolContext,
) -> Option<String> {
    let total = result.chars().count();
    let limit = format!("over this turn's {budget}-character budget for all its results");
    store_with_preview(result, total, PREVIEW_CHARS, tool, ctx, &limit, &limit)
}

/// Saves `result` (of `total` characters) and answers a preview of
/// `preview_chars` with where the whole is; `None` when it cannot be saved.
/// `limit` says what the result is over, in the preview's note; `told` in
/// the text for the model.
fn store_with_preview(
    result: &str,
    total: usize,
    preview_chars: usize,
    tool: &str,
    ctx: &ToolContext,
    limit: &str,
    told: &str,
) -> Option<String> {
    let dir = ctx.profile().home().join(RESULTS_DIR);
    let saved = match store(&dir, result, total, tool, ctx.tool_call_id()) {
        Ok(saved) => saved,
        Err(e) => {
            tracing::warn!(tool, error = %e, "could not keep a result {limit}");
            return None;
        }
    };
    let preview = cut_to(
        result,
        preview_chars,
        total,
        &format!("a preview: the result is {limit}"),
    );
    let path = saved.path.to_string_lossy().into_owned();
    let mut text = format!(
        "This result was {total} characters, {told}, so only a \
         preview is shown. The whole of it is saved in {path}: read it with read_file, \
         using offset and limit to page through it."
    );
    if saved.dropped > 0 {
        text.push_str(&format!(
            " Only its first {MAX_STORED_RESULT_BYTES} bytes were saved ({} dropped).",
            saved.dropped
        ));
    }
    let mut doc: Value = match serde_json::from_str(&preview) {
        Ok(Value::Object(map)) => Value::Object(map),
        // `cut_to` answers with an object; anything else is wrapped whole.
        _ => serde_json::json!({ "result": preview }),
    };
    if let Value::Object(map) = &mut doc {
        map.insert(STORED_KEY.to_owned(), Value::String(text));
        map.insert(STORED_PATH_KEY.to_owned(), Value::String(path));
    }
    Some(doc.to_string())
}

/// Text collected up to [`MAX_STORED_RESULT_BYTES`]; what comes after is
/// counted, never held.
#[derive(Default)]
struct Capped {
    bytes: Vec<u8>,
    dropped: usize,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = MAX_STORED_RESULT_BYTES.saturating_sub(self.bytes.len());
        let take = buf.len().min(room);
        self.bytes.extend_from_slice(&buf[..take]);
        self.dropped += buf.len() - take;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capped {
    /// The text (a character cut at the bound is dropped whole) and the
    /// bytes left out.
    fn finish(mut self) -> (String, usize) {
        match String::from_utf8(self.bytes) {
            Ok(text) => (text, self.dropped),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                self.bytes = e.into_bytes();
                self.dropped += self.bytes.len() - valid;
                self.bytes.truncate(valid);
                (
                    String::from_utf8(self.bytes).unwrap_or_default(),
                    self.dropped,
                )
            }
        }
    }
}

/// A result saved by [`store`].
struct Saved {
    path: PathBuf,
    /// Bytes over [`MAX_STORED_RESULT_BYTES`] left out.
    dropped: usize,
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// `s` with anything but `[A-Za-z0-9_.-]` made `_`, at most `max` characters.
fn file_safe(s: &str, max: usize) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect::<String>()
        .trim_matches(|c| c == '.' || c == '_' || c == '-')
        .to_owned()
}

/// Saves `result` in `dir` as text `read_file` can page through: a JSON
/// object as one section per field (`## field`, then a text field's text
/// as it is, any other value as indented JSON), anything else as it is.
/// Makes room first (see the module docs).
fn store(
    dir: &FsPath,
    result: &str,
    total: usize,
    tool: &str,
    call: Option<&str>,
) -> std::io::Result<Saved> {
    fs::create_dir_all(dir)?;
    let mut body = Capped::default();
    let _ = writeln!(
        body,
        "# The whole result of the tool `{tool}`{}, {total} characters.",
        call.map(|c| format!(" (call {c})")).unwrap_or_default()
    );
    match serde_json::from_str::<Value>(result.trim_start()) {
        Ok(Value::Object(map)) => {
            let _ = body.write_all(b"# Its fields follow, each under a line `## <field>`.\n");
            for (key, value) in map {
                let _ = writeln!(body, "## {key}");
                let _ = match value {
                    Value::String(text) => body.write_all(text.as_bytes()),
                    other => serde_json::to_writer_pretty(&mut body, &other).map_err(Into::into),
                };
                let _ = body.write_all(b"\n");
            }
        }
        _ => {
            let _ = body.write_all(result.as_bytes());
        }
    }
    let (body, dropped) = body.finish();
    make_room(
        dir,
        body.len() as u64,
        MAX_STORED_RESULTS,
        MAX_STORED_TOTAL_BYTES,
    )?;
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let seq = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let mut name = format!(
        "{millis:015}-{}-{seq}-{}",
        std::process::id(),
        file_safe(tool, 60)
    );
    if let Some(call) = call.map(|c| file_safe(c, 60)).filter(|c| !c.is_empty()) {
        name.push('-');
        name.push_str(&call);
    }
    name.push_str(".txt");
    let path = dir.join(name);
    let mut file = fs::File::options()
        .write(true)
        .create_new(true)
        .open(&path)?;
    if let Err(e) = file.write_all(body.as_bytes()) {
        let _ = fs::remove_file(&path);
        return Err(e);
    }
    Ok(Saved { path, dropped })
}

/// Removes the oldest stored results until one more of `incoming` bytes
/// fits: fewer than `max_files` files, at most `max_bytes` in all. Only
/// files named as [`store`] names them are touched.
fn make_room(dir: &FsPath, incoming: u64, max_files: usize, max_bytes: u64) -> std::io::Result<()> {
    let mut kept: Vec<(String, u64)> = Vec::new();
    for entry in fs::read_dir(dir)?.take(MAX_SCANNED).flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let ours = name.ends_with(".txt")
            && name.len() > 16
            && name.as_bytes()[..15].iter().all(u8::is_ascii_digit);
        if !ours {
            continue;
        }
        if let Ok(meta) = entry.metadata() {
            if meta.is_file() {
                kept.push((name, meta.len()));
            }
        }
    }
    // The name starts with the time, zero-padded: oldest first.
    kept.sort();
    let mut total: u64 = kept.iter().map(|(_, len)| len).sum();
    let mut count = kept.len();
    for (name, len) in kept {
        if count < max_files && total + incoming <= max_bytes {
            break;
        }
        if fs::remove_file(dir.join(&name)).is_ok() {
            total -= len;
            count -= 1;
        }
    }
    Ok(())
}

/// `{"truncated": "...", "result": "<first cap characters of the text>"}`.
fn wrap(result: &str, cap: usize, total: usize) -> String {
    let cut: String = result.chars().take(cap).collect();
    serde_json::json!({
        "truncated": format!(
            "result cut to its first {cap} of {total} characters; {} characters dropped",
            total - cap
        ),
        "result": cut,
    })
    .to_string()
}

/// Where a part of the document is: keys and indices from the root.
type Path = Vec<Step>;

#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn show(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        out.push_str("(the result)");
    }
    out
}

fn at<'a>(doc: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    let mut cur = doc;
    for step in path {
        cur = match (step, cur) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k)?,
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// The longest text field (in characters) and the array of the most
/// serialized characters, with their sizes.
#[derive(Default)]
struct Largest {
    string: Option<(Path, usize)>,
    array: Option<(Path, usize)>,
}

fn survey(value: &Value, path: &mut Path, found: &mut Largest) {
    match value {
        Value::String(s) => {
            let len = s.chars().count();
            if found.string.as_ref().is_none_or(|(_, l)| len > *l) {
                found.string = Some((path.clone(), len));
            }
        }
        Value::Array(items) => {
            if items.len() > 1 {
                let size = json_chars(value);
                if found.array.as_ref().is_none_or(|(_, s)| size > *s) {
                    found.array = Some((path.clone(), size));
                }
            }
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                survey(item, path, found);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                path.push(Step::Key(k.clone()));
                survey(v, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Characters `c` takes inside a JSON string (serde_json's escaping).
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0c}' => 2,
        c if c < ' ' => 6,
        _ => 1,
    }
}

fn json_chars(value: &Value) -> usize {
    value.to_string().chars().count()
}

/// Cuts text fields and array tails of `doc` until it fits `cap` with its
/// note. `None`: it cannot be done by cutting (then the caller wraps).
fn shrink(doc: &mut Value, cap: usize, total: usize, why: &str) -> Option<String> {
    let budget = cap.checked_sub(NOTE_ROOM)?;
    let mut notes: Vec<String> = Vec::new();
    let mut size = total;
    for _ in 0..MAX_ROUNDS {
        if size <= budget {
            break;
        }
        let excess = size - budget;
        let mut found = Largest::default();
        survey(doc, &mut Vec::new(), &mut found);
        let string = found.string.filter(|(_, len)| *len > CUT_MARKER.len());
        let array = found.array;
        // Cut text when one field can absorb the whole excess, or when no
        // array is bigger than the longest text; else drop array items.
        let text_first = match (&string, &array) {
            (Some((_, len)), Some((_, arr))) => *len >= excess || len >= arr,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if text_first {
            let (path, len) = string?;
            let Some(Value::String(s)) = at(doc, &path) else {
                return None;
            };
            // Keep the prefix whose JSON text fits what is left of the field.
            let escaped: usize = s.chars().map(escaped_len).sum();
            let room = escaped.saturating_sub(excess + CUT_MARKER.len());
            let (mut used, mut end, mut keep) = (0usize, 0usize, 0usize);
            for (i, c) in s.char_indices() {
                used += escaped_len(c);
                if used > room {
                    break;
                }
                end = i + c.len_utf8();
                keep += 1;
            }
            s.truncate(end);
            s.push_str(CUT_MARKER);
            notes.push(format!("{}: {keep} of {len} characters", show(&path)));
        } else {
            let (path, _) = array?;
            let Some(Value::Array(items)) = at(doc, &path) else {
                return None;
            };
            let before = items.len();
            let mut removed = 0usize;
            while items.len() > 1 && removed < excess {
                if let Some(item) = items.pop() {
                    removed += json_chars(&item) + 1;
                }
            }
            notes.push(format!(
                "{}: {} of {before} items",
                show(&path),
                items.len()
            ));
        }
        size = json_chars(doc);
    }
    if size > budget {
        return None;
    }
    let mut note = format!("{why}, kept ");
    let mut shown = 0;
    for n in &notes {
        if note.len() + n.len() > NOTE_ROOM - 40 {
            break;
        }
        if shown > 0 {
            note.push_str("; ");
        }
        note.push_str(n);
        shown += 1;
    }
    if shown < notes.len() {
        note.push_str(&format!("; and {} more cuts", notes.len() - shown));
    }
    match doc {
        Value::Object(map) => {
            map.insert(CUT_KEY.to_string(), Value::String(note));
            Some(doc.to_string())
        }
        // An array keeps its shape inside the wrapper, as a document.
        other => Some(serde_json::json!({ "truncated": note, "result": other.take() }).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chars(s: &str) -> usize {
        s.chars().count()
    }

    #[test]
    fn an_object_keeps_its_small_fields_and_stays_within_the_cap() {
        let doc = json!({
            "content": "line\n\"quoted\"\n".repeat(20_000),
            "total_lines": 40_000,
            "next_offset": 501,
            "truncated": true,
        })
        .to_string();
        let out = cap_result(doc, 10_000);
        assert!(chars(&out) <= 10_000, "{}", chars(&out));
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["total_lines"], 40_000);
        assert_eq!(v["next_offset"], 501);
        assert_eq!(v["truncated"], true);
        let content = v["content"].as_str().unwrap();
        assert!(content.ends_with(CUT_MARKER));
        assert!(content.starts_with("line\n\"quoted\"\n"));
        assert!(v[CUT_KEY].as_str().unwrap().contains("content: "), "{v}");
    }

    #[test]
    fn long_arrays_lose_their_tail_not_their_head() {
        let matches: Vec<Value> = (0..2_000)
            .map(|i| json!({"path": format!("src/f{i}.rs"), "line": i, "content": "x".repeat(80)}))
            .collect();
        let doc = json!({"total_count": 2_000, "matches": matches}).to_string();
        let out = cap_result(doc, 20_000);
        assert!(chars(&out) <= 20_000);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["total_count"], 2_000);
        let kept = v["matches"].as_array().unwrap();
        assert!(kept.len() > 50 && kept.len() < 2_000, "{}", kept.len());
        assert_eq!(kept[0]["line"], 0);
        assert!(v[CUT_KEY].as_str().unwrap().contains("matches: "), "{v}");
    }

    #[test]
    fn plain_text_and_tiny_caps_are_wrapped() {
        let out = cap_result("plain text ".repeat(100), 50);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(chars(v["result"].as_str().unwrap()), 50);
        assert!(v["truncated"].as_str().unwrap().contains("dropped"));
        let out = cap_result(json!({"a": "é".repeat(100)}).to_string(), 7);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["result"], "{\"a\":\"é");
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hermes-cap-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn room_is_made_oldest_first_and_only_among_stored_results() {
        let dir = scratch("room");
        for i in 0..10u64 {
            fs::write(dir.join(format!("{i:015}-1-0-t.txt")), vec![b'x'; 100]).unwrap();
        }
        fs::write(dir.join("notes.txt"), "not ours").unwrap();
        // At most 5 files: the 6 oldest go, to leave room for one more.
        make_room(&dir, 10, 5, u64::MAX).unwrap();
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left.len(), 5, "{left:?}");
        assert_eq!(left[0], format!("{:015}-1-0-t.txt", 6));
        assert_eq!(left[4], "notes.txt");
        // At most 250 bytes: 150 more must fit, so only one file stays.
        make_room(&dir, 150, 100, 250).unwrap();
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 2);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_stored_object_is_text_by_field_and_a_huge_one_is_cut() {
        let dir = scratch("store");
        let doc = json!({"output": "line 1\nline 2\n", "exit_code": 3}).to_string();
        let saved = store(&dir, &doc, doc.chars().count(), "terminal", Some("call/1")).unwrap();
        let name = saved.path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.ends_with("-terminal-call_1.txt"), "{name}");
        let text = fs::read_to_string(&saved.path).unwrap();
        assert!(
            text.contains("## exit_code\n3\n## output\nline 1\nline 2\n\n"),
            "{text}"
        );
        let huge = "é".repeat(MAX_STORED_RESULT_BYTES);
        let saved = store(&dir, &huge, huge.chars().count(), "t", None).unwrap();
        assert!(saved.dropped > 0);
        assert!(fs::metadata(&saved.path).unwrap().len() <= MAX_STORED_RESULT_BYTES as u64);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn results_within_the_cap_are_untouched() {
        let doc = json!({"content": "x".repeat(100)}).to_string();
        assert_eq!(cap_result(doc.clone(), 1_000), doc);
    }
}
