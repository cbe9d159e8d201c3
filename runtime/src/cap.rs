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

use serde_json::Value;

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

/// Cuts a result longer than `cap` characters (see the module docs).
#[inline]
pub(crate) fn cap_result(result: String, cap: usize) -> String {
    // Fast path: byte length bounds the character count.
    if result.len() <= cap {
        return result;
    }
    cut_result(result, cap)
}

#[cold]
fn cut_result(result: String, cap: usize) -> String {
    let total = result.chars().count();
    if total <= cap {
        return result;
    }
    let trimmed = result.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(mut doc) = serde_json::from_str::<Value>(trimmed) {
            if let Some(cut) = shrink(&mut doc, cap, total) {
                return cut;
            }
        }
    }
    wrap(&result, cap, total)
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
fn shrink(doc: &mut Value, cap: usize, total: usize) -> Option<String> {
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
    let mut note = format!("over the {cap}-character result cap, kept ");
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

    #[test]
    fn results_within_the_cap_are_untouched() {
        let doc = json!({"content": "x".repeat(100)}).to_string();
        assert_eq!(cap_result(doc.clone(), 1_000), doc);
    }
}
